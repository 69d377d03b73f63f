/*
 * test_buildinfo.c — `headroom version`'s layouts (util/buildinfo.h): six
 * lines of text, or one JSON object with exactly the six fields, every value
 * a string, quoted however odd; the platform as Go and OCI name it; the
 * same fields as /metrics' headroom_build_info labels.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>
#include <yyjson.h>

#include "util/buildinfo.h"

static const hr_buildinfo dev = {
    .version = "0.1.0-dev.3+g0123456789ab.dirty",
    .commit = "0123456789abcdef0123456789abcdef01234567",
    .tree_state = "dirty",
    .build_date = "2026-12-04T22:16:14Z",
    .build = "RelWithDebInfo",
    .platform = "linux/amd64",
};

static void text(void **state)
{
    (void)state;
    hr_buf b;
    hr_buf_init(&b, 0);
    hr_buildinfo_text(&b, &dev);
    assert_false(hr_buf_failed(&b));
    assert_string_equal(hr_buf_str(&b), "headroom 0.1.0-dev.3+g0123456789ab.dirty\n"
                                        "commit 0123456789abcdef0123456789abcdef01234567\n"
                                        "tree dirty\n"
                                        "built 2026-12-04T22:16:14Z\n"
                                        "build RelWithDebInfo\n"
                                        "platform linux/amd64\n");
    hr_buf_free(&b);
}

static void json(void **state)
{
    (void)state;
    hr_buf b;
    hr_buf_init(&b, 0);
    hr_buildinfo_json(&b, &dev);
    assert_string_equal(hr_buf_str(&b),
                        "{\"version\":\"0.1.0-dev.3+g0123456789ab.dirty\","
                        "\"commit\":\"0123456789abcdef0123456789abcdef01234567\","
                        "\"treeState\":\"dirty\",\"buildDate\":\"2026-12-04T22:16:14Z\","
                        "\"build\":\"RelWithDebInfo\",\"platform\":\"linux/amd64\"}\n");
    hr_buf_free(&b);
}

/* Whatever a field holds, the object parses and gives it back; a missing one is "unknown". */
static void json_quotes_anything(void **state)
{
    (void)state;
    const hr_buildinfo odd = {
        .version = "1.2.3\"x\\y\n",
        .commit = NULL,
        .tree_state = "clean",
        .build_date = "unknown",
        .build = "Debug+asan+ubsan",
        .platform = "linux/arm64",
    };
    hr_buf b;
    hr_buf_init(&b, 0);
    hr_buildinfo_json(&b, &odd);
    yyjson_doc *d = yyjson_read(hr_buf_str(&b), b.len, 0);
    assert_non_null(d);
    yyjson_val *root = yyjson_doc_get_root(d);
    assert_true(yyjson_is_obj(root));
    assert_int_equal(yyjson_obj_size(root), 6);
    assert_string_equal(yyjson_get_str(yyjson_obj_get(root, "version")), "1.2.3\"x\\y\n");
    assert_string_equal(yyjson_get_str(yyjson_obj_get(root, "commit")), "unknown");
    assert_string_equal(yyjson_get_str(yyjson_obj_get(root, "treeState")), "clean");
    assert_string_equal(yyjson_get_str(yyjson_obj_get(root, "buildDate")), "unknown");
    assert_string_equal(yyjson_get_str(yyjson_obj_get(root, "build")), "Debug+asan+ubsan");
    assert_string_equal(yyjson_get_str(yyjson_obj_get(root, "platform")), "linux/arm64");
    yyjson_doc_free(d);
    hr_buf_free(&b);
}

/* /metrics' headroom_build_info: one series, value 1, the same six fields as labels, any odd
 * value escaped as the text format wants it. */
static void metric(void **state)
{
    (void)state;
    hr_buf b;
    hr_buf_init(&b, 0);
    hr_buildinfo_metric(&b, &dev);
    assert_false(hr_buf_failed(&b));
    const char *s = hr_buf_str(&b);
    assert_non_null(strstr(s, "# TYPE headroom_build_info gauge\n"));
    assert_non_null(strstr(s, "\nheadroom_build_info{version=\"0.1.0-dev.3+g0123456789ab.dirty\","
                              "commit=\"0123456789abcdef0123456789abcdef01234567\","
                              "tree_state=\"dirty\",build_date=\"2026-12-04T22:16:14Z\","
                              "build=\"RelWithDebInfo\",platform=\"linux/amd64\"} 1\n"));
    hr_buf_reset(&b);
    const hr_buildinfo odd = {.version = "1.2.3\"x\\y\n"};
    hr_buildinfo_render((void *)&odd, &b);
    assert_non_null(strstr(hr_buf_str(&b), "{version=\"1.2.3\\\"x\\\\y\\n\",commit=\"unknown\","));
    hr_buf_free(&b);
}

static void platform(void **state)
{
    (void)state;
    const char *p = hr_buildinfo_platform();
#if defined(__linux__) && defined(__x86_64__)
    assert_string_equal(p, "linux/amd64");
#elif defined(__linux__) && defined(__aarch64__)
    assert_string_equal(p, "linux/arm64");
#else
    assert_non_null(p);
#endif
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(text),
        cmocka_unit_test(json),
        cmocka_unit_test(json_quotes_anything),
        cmocka_unit_test(metric),
        cmocka_unit_test(platform),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
