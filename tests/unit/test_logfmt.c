/*
 * test_logfmt.c — logfmt fragments become JSON objects with the same pairs;
 * anything that is not logfmt is kept whole, never dropped or mangled.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>
#include <yyjson.h>

#include "util/logfmt.h"

static void pairs_become_fields(void **state)
{
    (void)state;
    hr_buf b;
    hr_buf_init(&b, 0);
    hr_log_json(&b, "2026-11-30T09:00:00.000Z", "info",
                "msg=\"limit applied\" pod=team-a/web-0 from=0m to=2000m note=\"say \\\"hi\\\"\"");
    assert_string_equal(
        hr_buf_str(&b),
        "{\"time\":\"2026-11-30T09:00:00.000Z\",\"level\":\"info\",\"msg\":\"limit applied\","
        "\"pod\":\"team-a/web-0\",\"from\":\"0m\",\"to\":\"2000m\",\"note\":\"say \\\"hi\\\"\"}\n");
    yyjson_doc *d = yyjson_read(hr_buf_str(&b), b.len, 0);
    assert_non_null(d);
    yyjson_doc_free(d);
    hr_buf_free(&b);
}

static void not_logfmt_is_kept_whole(void **state)
{
    (void)state;
    const char *odd[] = {"plain words here", "msg=\"unterminated", "=x", "", "a=b c"};
    const char *want[] = {"\"msg\":\"plain words here\"", "\"msg\":\"msg=\\\"unterminated\"",
                          "\"msg\":\"=x\"", "\"msg\":\"\"", "\"msg\":\"a=b c\""};
    for (size_t i = 0; i < sizeof odd / sizeof odd[0]; i++) {
        hr_buf b;
        hr_buf_init(&b, 0);
        hr_log_json(&b, "t", "warn", odd[i]);
        yyjson_doc *d = yyjson_read(hr_buf_str(&b), b.len, 0);
        assert_non_null(d);
        yyjson_doc_free(d);
        assert_non_null(strstr(hr_buf_str(&b), want[i]));
        hr_buf_free(&b);
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(pairs_become_fields),
        cmocka_unit_test(not_logfmt_is_kept_whole),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
