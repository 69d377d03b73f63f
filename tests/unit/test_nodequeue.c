/*
 * test_nodequeue.c — the debounced node queue: a burst computes once, the
 * first event of a burst is not delayed past one period, a node is never
 * handed to two workers, and events during a run are not lost.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <cmocka.h>

#include "controller/nodequeue.h"

static hr_nodequeue *mk(void)
{
    hr_nodequeue *q = NULL;
    hr_err err;
    assert_int_equal(hr_nodequeue_new(&q, &err), HR_OK);
    return q;
}

static void burst_collapses(void **state)
{
    (void)state;
    hr_nodequeue *q = mk();
    for (int i = 0; i < 50; i++)
        assert_int_equal(hr_nodequeue_add(q, "n1", 1000 + i, 2000), HR_OK);
    int64_t next = 0;
    assert_null(hr_nodequeue_pop(q, 2999, &next));
    assert_int_equal(next, 3000); /* the first event's deadline holds */
    const char *n = hr_nodequeue_pop(q, 3000, &next);
    assert_non_null(n);
    assert_string_equal(n, "n1");
    assert_int_equal(next, -1);
    assert_null(hr_nodequeue_pop(q, 99999, NULL)); /* computed once */
    hr_nodequeue_done(q, "n1", 3001, -1, 2000);
    assert_null(hr_nodequeue_pop(q, 99999, NULL));
    hr_nodequeue_free(q);
}

static void earliest_first(void **state)
{
    (void)state;
    hr_nodequeue *q = mk();
    assert_int_equal(hr_nodequeue_add(q, "late", 0, 500), HR_OK);
    assert_int_equal(hr_nodequeue_add(q, "early", 0, 100), HR_OK);
    assert_int_equal(hr_nodequeue_add(q, "mid", 0, 300), HR_OK);
    assert_string_equal(hr_nodequeue_pop(q, 1000, NULL), "early");
    assert_string_equal(hr_nodequeue_pop(q, 1000, NULL), "mid");
    assert_string_equal(hr_nodequeue_pop(q, 1000, NULL), "late");
    hr_nodequeue_free(q);
}

static void add_while_running_is_not_lost(void **state)
{
    (void)state;
    hr_nodequeue *q = mk();
    assert_int_equal(hr_nodequeue_add(q, "n1", 0, 0), HR_OK);
    assert_string_equal(hr_nodequeue_pop(q, 0, NULL), "n1");
    assert_int_equal(hr_nodequeue_add(q, "n1", 10, 0), HR_OK); /* event mid-run */
    assert_null(hr_nodequeue_pop(q, 20, NULL));                /* never two workers on one node */
    hr_nodequeue_done(q, "n1", 50, -1, 2000);
    assert_null(hr_nodequeue_pop(q, 2049, NULL));
    assert_string_equal(hr_nodequeue_pop(q, 2050, NULL), "n1");
    hr_nodequeue_free(q);
}

static void requeue_after_failure(void **state)
{
    (void)state;
    hr_nodequeue *q = mk();
    assert_int_equal(hr_nodequeue_add(q, "n1", 0, 0), HR_OK);
    assert_non_null(hr_nodequeue_pop(q, 0, NULL));
    hr_nodequeue_done(q, "n1", 100, 700, 2000); /* rate-limited: come back */
    assert_null(hr_nodequeue_pop(q, 799, NULL));
    assert_string_equal(hr_nodequeue_pop(q, 800, NULL), "n1");
    hr_nodequeue_free(q);
}

static void many_nodes_grow(void **state)
{
    (void)state;
    hr_nodequeue *q = mk();
    char name[32];
    for (int i = 0; i < 5000; i++) {
        snprintf(name, sizeof name, "node-%d", i);
        assert_int_equal(hr_nodequeue_add(q, name, 0, 5000 - i), HR_OK);
    }
    assert_int_equal(hr_nodequeue_len(q), 5000);
    assert_string_equal(hr_nodequeue_pop(q, 10000, NULL), "node-4999");
    int got = 1;
    while (hr_nodequeue_pop(q, 10000, NULL) != NULL)
        got++;
    assert_int_equal(got, 5000);
    hr_nodequeue_free(q);
}

/* Churn: nodes that come and go leave nothing behind once done, and the
 * removal keeps every other entry reachable. */
static void idle_nodes_are_freed(void **state)
{
    (void)state;
    hr_nodequeue *q = mk();
    char name[32];
    for (int round = 0; round < 3; round++) {
        for (int i = 0; i < 500; i++) {
            snprintf(name, sizeof name, "n%d-%d", round, i);
            assert_int_equal(hr_nodequeue_add(q, name, 0, i % 7), HR_OK);
        }
        assert_int_equal(hr_nodequeue_entries(q), 500);
        for (int i = 0; i < 500; i++) {
            const char *n = hr_nodequeue_pop(q, 100, NULL);
            assert_non_null(n);
            char copy[32];
            snprintf(copy, sizeof copy, "%s", n);
            hr_nodequeue_done(q, copy, 100, -1, 0);
            assert_int_equal(hr_nodequeue_entries(q), 499 - (size_t)i);
        }
        assert_null(hr_nodequeue_pop(q, 1000, NULL));
        assert_int_equal(hr_nodequeue_entries(q), 0);
        assert_int_equal(hr_nodequeue_len(q), 0);
    }
    hr_nodequeue_free(q);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(burst_collapses),
        cmocka_unit_test(earliest_first),
        cmocka_unit_test(add_while_running_is_not_lost),
        cmocka_unit_test(requeue_after_failure),
        cmocka_unit_test(many_nodes_grow),
        cmocka_unit_test(idle_nodes_are_freed),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
