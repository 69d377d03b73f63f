/*
 * test_bars.c — the picture of a node (plan/bars.h) from figures, and the
 * terminal decisions it is drawn under (util/term.h): eighths at the
 * request's end, ASCII rounding, the '>' of a value past allocatable, the
 * width, the locale and TERM rules.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "core/policy.h"
#include "plan/bars.h"
#include "util/term.h"

/* The bar of pod row k (0 the node's) of a drawing: the text between
 * the label column and the figures. */
static void bar_of(const char *text, int k, int label_w, int cols, char *out, size_t cap)
{
    const char *l = text;
    for (int i = 0; i < 2 + k; i++) /* the header and the scale line, then the rows */
        l = strchr(l, '\n') + 1;
    const char *start = l + 2 + label_w + 2, *end = start;
    /* cols characters: a UTF-8 character is 1 or 3 bytes here. */
    for (int c = 0; c < cols; c++)
        end += ((unsigned char)*end >= 0x80) ? 3 : 1;
    size_t n = (size_t)(end - start) < cap - 1 ? (size_t)(end - start) : cap - 1;
    memcpy(out, start, n);
    out[n] = '\0';
}

static const hr_bars_pod one_pod[] = {{"ns", "pod", true, 1000, 0, 2500}};

static void ascii_rounds_to_columns(void **state)
{
    (void)state;
    hr_bars_node n = {"n1", 9000, 1000, 8000, one_pod, 1};
    hr_bars_style s = {false, 80}; /* bar 80 - 2 - 6 - 2 - 25 = 45 columns, 200m each */
    hr_buf b;
    hr_buf_init(&b, 0);
    hr_bars_draw(&n, &s, &b);
    char bar[512];
    bar_of(hr_buf_str(&b), 1, 6, 45, bar, sizeof bar);
    /* request 1000m = 5 columns, target 2500m = 12.5 (a column is drawn when its middle is
     * passed: 7 of =), request + slack 9000m = all 45 (33 of .) */
    assert_string_equal(bar, "#####=======.................................");
    bar_of(hr_buf_str(&b), 0, 6, 45, bar, sizeof bar);
    assert_string_equal(bar, "#####........................................");
    hr_buf_free(&b);
}

static void unicode_draws_eighths(void **state)
{
    (void)state;
    static const hr_bars_pod pods[] = {{"ns", "pod", true, 1125, 0, 2250}};
    hr_bars_node n = {"n1", 9000, 1125, 1875, pods, 1};
    hr_bars_style s = {true, 80}; /* 45 columns of 200m: 1125m = 5 5/8 columns */
    hr_buf b;
    hr_buf_init(&b, 0);
    hr_bars_draw(&n, &s, &b);
    char bar[512];
    bar_of(hr_buf_str(&b), 1, 6, 45, bar, sizeof bar);
    /* █×5, ▋ (5/8), ▓ to 2250m (11.25: columns 6..10), ░ to 3000m (15: 11..14), blank */
    assert_string_equal(bar, "█████▋▓▓▓▓▓░░░░                              ");
    hr_buf_free(&b);
}

static void past_allocatable_ends_in_gt(void **state)
{
    (void)state;
    static const hr_bars_pod pods[] = {{"ns", "pod", true, 4000, 12000, HR_NONE}};
    hr_bars_node n = {"n1", 9000, 10000, -1000, pods, 1};
    hr_bars_style s = {false, 80};
    hr_buf b;
    hr_buf_init(&b, 0);
    hr_bars_draw(&n, &s, &b);
    char bar[512];
    bar_of(hr_buf_str(&b), 0, 6, 45, bar, sizeof bar); /* over-booked: all booked, cut */
    assert_string_equal(bar, "############################################>");
    bar_of(hr_buf_str(&b), 1, 6, 45, bar, sizeof bar); /* a limit above allocatable */
    assert_string_equal(bar, "####################========================>");
    assert_non_null(strstr(hr_buf_str(&b), "4000m  12000m       -\n"));
    hr_buf_free(&b);
}

static void width_follows_columns(void **state)
{
    (void)state;
    hr_bars_node n = {"n1", 9000, 1000, 8000, one_pod, 1};
    for (int w = 60; w <= 200; w += 35) {
        hr_bars_style s = {false, w};
        hr_buf b;
        hr_buf_init(&b, 0);
        hr_bars_draw(&n, &s, &b);
        const char *row = strstr(hr_buf_str(&b), "  ns/pod");
        assert_non_null(row);
        assert_int_equal((int)(strchr(row, '\n') - row), w);
        hr_buf_free(&b);
    }
}

static void unknown_pod_has_no_bar(void **state)
{
    (void)state;
    static const hr_bars_pod pods[] = {{"ns", "bad", false, 0, 0, HR_NONE}};
    hr_bars_node n = {"n1", 9000, 0, 9000, pods, 1};
    hr_bars_style s = {false, 80};
    hr_buf b;
    hr_buf_init(&b, 0);
    hr_bars_draw(&n, &s, &b);
    assert_non_null(strstr(hr_buf_str(&b), "      ?       ?       -\n"));
    hr_buf_free(&b);
}

static void term_rules(void **state)
{
    (void)state;
    assert_true(hr_term_utf8(NULL, NULL, "en_US.UTF-8", "xterm-256color"));
    assert_true(hr_term_utf8(NULL, NULL, "C.utf8", "screen"));
    assert_false(hr_term_utf8("C", NULL, "en_US.UTF-8", "xterm")); /* LC_ALL first */
    assert_true(hr_term_utf8("", "C.UTF-8", "C", "xterm"));        /* empty is unset */
    assert_false(hr_term_utf8(NULL, NULL, "C.UTF-8", "dumb"));
    assert_false(hr_term_utf8(NULL, NULL, "C.UTF-8", NULL));
    assert_false(hr_term_utf8(NULL, NULL, NULL, "xterm"));
    assert_false(hr_term_utf8(NULL, NULL, "POSIX", "xterm"));
    assert_int_equal(hr_term_columns("132", 100), 132);
    assert_int_equal(hr_term_columns(NULL, 100), 100);
    assert_int_equal(hr_term_columns("wide", 0), 80);
    assert_int_equal(hr_term_columns("0", 0), 80);
    assert_int_equal(hr_term_columns("99999", 90), 90);
    assert_int_equal(hr_term_columns(NULL, 0), 80);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(ascii_rounds_to_columns),     cmocka_unit_test(unicode_draws_eighths),
        cmocka_unit_test(past_allocatable_ends_in_gt), cmocka_unit_test(width_follows_columns),
        cmocka_unit_test(unknown_pod_has_no_bar),      cmocka_unit_test(term_rules),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
