/*
 * test_nodequeue.c — the debounced node queue: a burst computes once, the
 * first event of a burst is not delayed past one period, a node is never
 * handed to two workers, and events during a run are not lost; real
 * workers blocked in hr_nodequeue_wait miss no node and are not all woken
 * by every change.
 */
#include <pthread.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <cmocka.h>

#include "controller/nodequeue.h"
#include "util/clock.h"

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

/* A refused write's back-off (hr_nodequeue_hold): an event during the run
 * or after it does not bring the node back sooner (design §7). */
static void hold_outlasts_events(void **state)
{
    (void)state;
    hr_nodequeue *q = mk();
    assert_int_equal(hr_nodequeue_add(q, "n1", 0, 0), HR_OK);
    assert_string_equal(hr_nodequeue_pop(q, 0, NULL), "n1");
    hr_nodequeue_hold(q, "n1", 3000);                              /* Retry-After: 3 s */
    assert_int_equal(hr_nodequeue_add(q, "n1", 100, 2000), HR_OK); /* dirty, due 2100 */
    hr_nodequeue_done(q, "n1", 200, 3000, 1000);
    assert_null(hr_nodequeue_pop(q, 2100, NULL)); /* the event alone would run it here */
    assert_int_equal(hr_nodequeue_add(q, "n1", 2200, 0), HR_OK); /* another, while waiting */
    int64_t next = 0;
    assert_null(hr_nodequeue_pop(q, 2999, &next));
    assert_int_equal(next, 3000);
    assert_string_equal(hr_nodequeue_pop(q, 3000, NULL), "n1");
    hr_nodequeue_done(q, "n1", 3000, -1, 0);
    /* Idle again: the hold went with the entry; a new event runs at its time. */
    assert_int_equal(hr_nodequeue_add(q, "n1", 3100, 0), HR_OK);
    assert_string_equal(hr_nodequeue_pop(q, 3100, NULL), "n1");
    hr_nodequeue_done(q, "n1", 3100, -1, 0);
    hr_nodequeue_free(q);
}

enum { W_WORKERS = 8, W_NODES = 200, W_RUNS = 2 * W_NODES };

typedef struct wctx {
    hr_nodequeue *q;
    atomic_int runs;
    atomic_int seen[W_NODES];
} wctx;

/* A controller worker with instant reconciles: each node asks for one more
 * run 3 ms after its first (a requeue, as after a rate-limited write). */
static void *w_worker(void *ud)
{
    wctx *w = ud;
    for (;;) {
        const char *n = hr_nodequeue_wait(w->q);
        if (n == NULL)
            return NULL;
        int i = atoi(n + 1);
        int seen = atomic_fetch_add(&w->seen[i], 1);
        atomic_fetch_add(&w->runs, 1);
        hr_nodequeue_done(w->q, n, hr_mono_ms(), seen == 0 ? 3 : -1, 0);
    }
}

/* Eight workers wait; 200 nodes arrive debounced (5-11 ms), one a
 * millisecond, and each runs twice. Every run happens, none twice at once
 * (the counts), and the waking stays near two per run (the timer's, and
 * the hand-over of its place). Waking every waiter on every change made
 * it about one per worker per add and per due time: over 3,000 here. */
static void waiting_workers_miss_nothing(void **state)
{
    (void)state;
    static wctx w;
    memset(&w, 0, sizeof w);
    w.q = mk();
    pthread_t th[W_WORKERS];
    for (int i = 0; i < W_WORKERS; i++)
        assert_int_equal(pthread_create(&th[i], NULL, w_worker, &w), 0);
    char name[16];
    for (int i = 0; i < W_NODES; i++) {
        snprintf(name, sizeof name, "n%d", i);
        assert_int_equal(hr_nodequeue_add(w.q, name, hr_mono_ms(), 5 + i % 7), HR_OK);
        hr_mono_sleep_ms(1);
    }
    int64_t t0 = hr_mono_ms();
    while (atomic_load(&w.runs) < W_RUNS && hr_mono_ms() - t0 < 20000) {
        hr_mono_sleep_ms(2);
    }
    uint64_t wakeups = hr_nodequeue_wakeups(w.q);
    hr_nodequeue_shutdown(w.q);
    for (int i = 0; i < W_WORKERS; i++)
        assert_int_equal(pthread_join(th[i], NULL), 0);
    print_message("%d runs, %llu wakeups\n", atomic_load(&w.runs), (unsigned long long)wakeups);
    assert_int_equal(atomic_load(&w.runs), W_RUNS);
    for (int i = 0; i < W_NODES; i++)
        assert_int_equal(atomic_load(&w.seen[i]), 2);
    /* At most one per change (200 adds, 200 requeues), one per hand-over
     * and one per deadline that found its node taken: 3 a run at worst by
     * this count, 4 a margin for a miscount; the broadcasts made about 8. */
    assert_true(wakeups <= 4 * W_RUNS);
    assert_int_equal(hr_nodequeue_entries(w.q), 0);
    hr_nodequeue_free(w.q);
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
        cmocka_unit_test(hold_outlasts_events),
        cmocka_unit_test(waiting_workers_miss_nothing),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
