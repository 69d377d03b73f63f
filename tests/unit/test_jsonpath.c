/*
 * test_jsonpath.c — -o jsonpath and -o custom-columns (plan/jsonpath.h,
 * plan/columns.h) print what the real kubectl prints.
 *
 * The expected outputs are kubectl's own, recorded by
 * tests/golden/kubectl/record.py (jsonpath by `kubectl label --local`, no
 * server; custom-columns by `kubectl get` from a real API server), and kept
 * current by tests/e2e/e2e_kubectl_output.sh. Every recorded case is run
 * here: the same template or spec on the same object, the same bytes out, or
 * the same error message when kubectl refuses. HR_KUBECTL_GOLDEN is the
 * folder (tests/CMakeLists.txt sets it).
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>
#include <yyjson.h>

#include "plan/columns.h"
#include "plan/jpvalue.h"
#include "plan/jsonpath.h"
#include "plan/tabw.h"

static yyjson_doc *read_doc(const char *name)
{
    const char *dir = getenv("HR_KUBECTL_GOLDEN");
    assert_non_null(dir);
    char path[1024];
    snprintf(path, sizeof path, "%s/%s", dir, name);
    yyjson_read_err e;
    yyjson_doc *d = yyjson_read_file(path, YYJSON_READ_NUMBER_AS_RAW, NULL, &e);
    if (!d)
        fail_msg("%s: %s", path, e.msg);
    return d;
}

/* The recorded cases: one JSON object a line. */
typedef void (*case_fn)(yyjson_val *root, const char *c, int rc, const char *out, const char *err,
                        int *failures);

static int each_case(const char *name, yyjson_val *root, case_fn fn)
{
    const char *dir = getenv("HR_KUBECTL_GOLDEN");
    char path[1024];
    snprintf(path, sizeof path, "%s/%s", dir, name);
    FILE *f = fopen(path, "r");
    if (!f)
        fail_msg("%s: cannot open", path);
    char *line = NULL;
    size_t cap = 0;
    int n = 0, failures = 0;
    while (getline(&line, &cap, f) > 0) {
        yyjson_doc *d = yyjson_read(line, strlen(line), 0);
        assert_non_null(d);
        yyjson_val *r = yyjson_doc_get_root(d);
        fn(root, yyjson_get_str(yyjson_obj_get(r, "case")),
           (int)yyjson_get_int(yyjson_obj_get(r, "rc")), yyjson_get_str(yyjson_obj_get(r, "out")),
           yyjson_get_str(yyjson_obj_get(r, "err")), &failures);
        yyjson_doc_free(d);
        n++;
    }
    free(line);
    fclose(f);
    if (failures)
        fail_msg("%s: %d of %d cases differ from kubectl", name, failures, n);
    return n;
}

static void jsonpath_case(yyjson_val *root, const char *c, int rc, const char *want,
                          const char *want_err, int *failures)
{
    bool allow = c[0] != '!';
    const char *tmpl = allow ? c : c + 1;
    hr_jsonpath *jp = NULL;
    hr_err err;
    hr_err_clear(&err);
    hr_buf out;
    hr_buf_init(&out, 0);
    hr_status st = hr_jsonpath_parse(tmpl, &jp, &err);
    if (!st)
        st = hr_jsonpath_print(jp, root, allow, &out, &err);
    hr_jsonpath_free(jp);
    bool ok = rc == 0 ? st == HR_OK && strcmp(hr_buf_str(&out), want) == 0
                      : st != HR_OK && strcmp(err.msg, want_err) == 0;
    if (!ok) {
        (*failures)++;
        print_message("case %s\n  kubectl: rc %d [%s] [%s]\n  ours:    st %d [%s] [%s]\n", c, rc,
                      want, want_err, st, hr_buf_str(&out), st ? err.msg : "");
    }
    hr_buf_free(&out);
}

static void columns_case(yyjson_val *root, const char *c, int rc, const char *want,
                         const char *want_err, int *failures)
{
    hr_columns *cols = NULL;
    hr_err err;
    hr_err_clear(&err);
    hr_buf out;
    hr_buf_init(&out, 0);
    hr_status st = hr_columns_parse(c, &cols, &err);
    if (!st)
        st = hr_columns_print(cols, root, false, &out, &err);
    hr_columns_free(cols);
    /* kubectl names the flag's value before a spec error; ours is the
     * spec's error alone (the command names -o) */
    bool ok = rc == 0 ? st == HR_OK && strcmp(hr_buf_str(&out), want) == 0
                      : st != HR_OK && strstr(want_err, err.msg) != NULL;
    if (!ok) {
        (*failures)++;
        print_message("case %s\n  kubectl: rc %d [%s] [%s]\n  ours:    st %d [%s] [%s]\n", c, rc,
                      want, want_err, st, hr_buf_str(&out), st ? err.msg : "");
    }
    hr_buf_free(&out);
}

static void jsonpath_like_kubectl(void **state)
{
    (void)state;
    yyjson_doc *d = read_doc("object.json");
    assert_true(each_case("jsonpath.recorded.json", yyjson_doc_get_root(d), jsonpath_case) > 80);
    yyjson_doc_free(d);
}

/* An index past int64 is refused, as Go's Atoi refuses it; the largest one
 * taken (18 digits) is out of range, not an overflow (fuzz_jsonpath found
 * [N] with N at LONG_MAX overflowing N + 1). */
static void huge_index(void **state)
{
    (void)state;
    yyjson_doc *d = read_doc("object.json");
    static const char *const tmpl[] = {
        "{.d.o.a[1111111111111111111111111111111111111111]}",
        "{.d.o.a[9223372036854775807]}",
        "{.d.o.a[-9223372036854775808:]}",
        "{.d.o.a[999999999999999999]}",
        "{.d.o.a[1:999999999999999999]}",
    };
    for (size_t i = 0; i < sizeof tmpl / sizeof *tmpl; i++) {
        hr_jsonpath *jp = NULL;
        hr_err err;
        hr_err_clear(&err);
        hr_buf out;
        hr_buf_init(&out, 0);
        hr_status st = hr_jsonpath_parse(tmpl[i], &jp, &err);
        if (!st)
            st = hr_jsonpath_print(jp, yyjson_doc_get_root(d), true, &out, &err);
        hr_jsonpath_free(jp);
        hr_buf_free(&out);
        if (i < 3)
            assert_int_not_equal(st, HR_OK); /* refused: more than 18 digits */
        else if (i == 3)
            assert_int_not_equal(st, HR_OK); /* out of range, said so */
    }
    yyjson_doc_free(d);
}

/* Unions and `..` over repeated values multiply: a template that asks for
 * eight copies six times over is refused with the budget's message, not
 * evaluated into 16 M values (fuzz_jsonpath found such templates running
 * past its 10 s limit, and memory growing past 2 GB, before the budget
 * counted what a step makes as well as what it reads). */
static void multiplying_template(void **state)
{
    (void)state;
    static const char doc[] = "[[[[[[1,2],[3,4]],[[5,6],[7,8]]],[[[1,2],[3,4]],[[5,6],[7,8]]]],"
                              "[[[[1,2],[3,4]],[[5,6],[7,8]]],[[[1,2],[3,4]],[[5,6],[7,8]]]]],"
                              "[[[[[1,2],[3,4]],[[5,6],[7,8]]],[[[1,2],[3,4]],[[5,6],[7,8]]]],"
                              "[[[[1,2],[3,4]],[[5,6],[7,8]]],[[[1,2],[3,4]],[[5,6],[7,8]]]]]]";
#define U8 "[*,*,*,*,*,*,*,*]"
    static const char *const tmpl[] = {U8 U8 U8 U8 U8 U8 "..", U8 U8 U8 U8 U8 U8 U8};
#undef U8
    yyjson_doc *d = yyjson_read(doc, sizeof doc - 1, 0);
    assert_non_null(d);
    for (size_t i = 0; i < sizeof tmpl / sizeof *tmpl; i++) {
        char t[256];
        snprintf(t, sizeof t, "{%s}", tmpl[i]);
        hr_jsonpath *jp = NULL;
        hr_err err;
        hr_err_clear(&err);
        hr_buf out;
        hr_buf_init(&out, 1 << 20);
        assert_int_equal(hr_jsonpath_parse(t, &jp, &err), HR_OK);
        assert_int_not_equal(hr_jsonpath_print(jp, yyjson_doc_get_root(d), true, &out, &err),
                             HR_OK);
        assert_non_null(strstr(err.msg, "the template visits more than 10000000 values"));
        hr_jsonpath_free(jp);
        hr_buf_free(&out);
    }
    yyjson_doc_free(d);
}

static void columns_like_kubectl(void **state)
{
    (void)state;
    yyjson_doc *d = read_doc("columns.json");
    assert_true(each_case("columns.recorded.json", yyjson_doc_get_root(d), columns_case) > 8);
    yyjson_doc_free(d);
}

/* --no-headers drops the header row, nothing else. */
static void columns_no_headers(void **state)
{
    (void)state;
    yyjson_doc *d = read_doc("columns.json");
    hr_columns *cols = NULL;
    hr_err err;
    hr_buf a, b;
    hr_buf_init(&a, 0);
    hr_buf_init(&b, 0);
    assert_int_equal(hr_columns_parse("N:.name,V:.v", &cols, &err), HR_OK);
    assert_int_equal(hr_columns_print(cols, yyjson_doc_get_root(d), false, &a, &err), HR_OK);
    assert_int_equal(hr_columns_print(cols, yyjson_doc_get_root(d), true, &b, &err), HR_OK);
    const char *nl = strchr(hr_buf_str(&a), '\n');
    assert_non_null(nl);
    assert_string_equal(nl + 1, hr_buf_str(&b));
    hr_columns_free(cols);
    hr_buf_free(&a);
    hr_buf_free(&b);
    yyjson_doc_free(d);
}

/* Go's float text, beyond what the recorded object holds. */
static void go_floats(void **state)
{
    (void)state;
    static const struct {
        const char *json, *text, *json_out;
    } cases[] = {
        {"0.1", "0.1", "0.1"},
        {"100000.0", "100000", "100000"},
        {"1000000.0", "1e+06", "1000000"},
        {"1234567.5", "1.2345675e+06", "1234567.5"},
        {"0.00001", "1e-05", "0.00001"},
        {"0.000001", "1e-06", "0.000001"},
        {"0.0000001", "1e-07", "1e-7"},
        {"1e21", "1e+21", "1e+21"},
        {"1e20", "1e+20", "100000000000000000000"},
        {"-2.5e-10", "-2.5e-10", "-2.5e-10"},
        {"9223372036854775807", "9223372036854775807", "9223372036854775807"},
        {"9223372036854775808", "9.223372036854776e+18", "9223372036854776000"},
        {"-0.0", "-0", "-0"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        yyjson_doc *d =
            yyjson_read(cases[i].json, strlen(cases[i].json), YYJSON_READ_NUMBER_AS_RAW);
        assert_non_null(d);
        hr_buf t, j;
        hr_buf_init(&t, 0);
        hr_buf_init(&j, 0);
        hr_jpvalue_text(yyjson_doc_get_root(d), &t);
        hr_jpvalue_json(yyjson_doc_get_root(d), &j);
        if (strcmp(hr_buf_str(&t), cases[i].text) || strcmp(hr_buf_str(&j), cases[i].json_out))
            fail_msg("%s: text %s (want %s), json %s (want %s)", cases[i].json, hr_buf_str(&t),
                     cases[i].text, hr_buf_str(&j), cases[i].json_out);
        hr_buf_free(&t);
        hr_buf_free(&j);
        yyjson_doc_free(d);
    }
}

/* kubectl's table layout: columns at least 6 wide, 3 spaces of padding,
 * the last one not padded, widths in characters. */
static void tabwriter(void **state)
{
    (void)state;
    hr_tabw t;
    hr_tabw_init(&t, 3);
    const char *cells[] = {"A", "LONGER-THAN-TEN", "Z", "été", "b", "end"};
    for (size_t i = 0; i < 6; i++)
        hr_tabw_cells(&t, cells[i]);
    hr_buf out;
    hr_buf_init(&out, 0);
    assert_true(hr_tabw_write(&t, &out));
    assert_string_equal(hr_buf_str(&out), "A     LONGER-THAN-TEN   Z\n"
                                          "été   b                 end\n");
    hr_buf_free(&out);
    hr_tabw_free(&t);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(jsonpath_like_kubectl),
        cmocka_unit_test(huge_index),
        cmocka_unit_test(multiplying_template),
        cmocka_unit_test(columns_like_kubectl),
        cmocka_unit_test(columns_no_headers),
        cmocka_unit_test(go_floats),
        cmocka_unit_test(tabwriter),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
