/*
 * test_backoff.c — parked pods stay parked for the period, then come back;
 * forgetting and pruning remove exactly what they should. Writes refused
 * with 429/5xx/timeouts retry after a jittered, exponentially growing,
 * capped wait (design §7), not a flat second.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include <cmocka.h>

#include "controller/backoff.h"
#include "controller/executor.h"
#include "kube/transport/kstatus.h"
#include "util/prng.h"

static void park_expire_forget(void **state)
{
    (void)state;
    hr_backoff *b = NULL;
    hr_err err;
    assert_int_equal(hr_backoff_new(&b, &err), HR_OK);
    const char *why = NULL;
    assert_false(hr_backoff_active(b, "a", "p", 0, &why));
    assert_int_equal(hr_backoff_park(b, "a", "p", "n1", 1000, HR_BACKOFF_PERIOD_MS, "quota-denied"),
                     HR_OK);
    assert_true(hr_backoff_active(b, "a", "p", 60999, &why));
    assert_string_equal(why, "quota-denied");
    assert_false(hr_backoff_active(b, "a", "p", 61000, NULL));
    /* a/p is not a/pp nor a-p/… */
    assert_false(hr_backoff_active(b, "a", "pp", 2000, NULL));
    assert_false(hr_backoff_active(b, "a/p", "", 2000, NULL));
    assert_int_equal(hr_backoff_park(b, "b", "q", NULL, 1000, 5000, "infeasible"), HR_OK);
    assert_int_equal(hr_backoff_prune(b, 6000, NULL, NULL), 1);
    assert_false(hr_backoff_active(b, "b", "q", 2000, NULL));
    hr_backoff_forget(b, "a", "p");
    assert_false(hr_backoff_active(b, "a", "p", 2000, NULL));
    for (int i = 0; i < 100; i++) {
        char n[16];
        snprintf(n, sizeof n, "p%d", i);
        assert_int_equal(hr_backoff_park(b, "ns", n, NULL, 0, 1000 + i, "invalid"), HR_OK);
    }
    assert_int_equal(hr_backoff_prune(b, 1050, NULL, NULL), 49); /* until 1051..1099 remain */
    hr_backoff_free(b);
}

typedef struct seen {
    char nodes[8][16];
    int n;
} seen;

static void on_expired(void *ud, const char *node)
{
    seen *s = ud;
    if (s->n < 8)
        snprintf(s->nodes[s->n++], sizeof s->nodes[0], "%s", node);
}

/* A back-off that ends names its pod's node, once, so the node is looked at
 * again then (design §7): not at the next event, which may never come. */
static void expiry_names_the_node(void **state)
{
    (void)state;
    hr_backoff *b = NULL;
    hr_err err;
    assert_int_equal(hr_backoff_new(&b, &err), HR_OK);
    assert_int_equal(hr_backoff_park(b, "a", "p", "n1", 0, 1000, "invalid"), HR_OK);
    assert_int_equal(hr_backoff_park(b, "a", "q", "n2", 0, 5000, "quota-denied"), HR_OK);
    assert_int_equal(hr_backoff_park(b, "a", "r", NULL, 0, 1000, "infeasible"), HR_OK);
    /* Parked again on another node: the last one counts. */
    assert_int_equal(hr_backoff_park(b, "a", "p", "n3", 0, 1000, "invalid"), HR_OK);
    seen s = {.n = 0};
    assert_int_equal(hr_backoff_prune(b, 999, on_expired, &s), 3);
    assert_int_equal(s.n, 0);
    assert_int_equal(hr_backoff_prune(b, 1000, on_expired, &s), 1);
    assert_int_equal(s.n, 1); /* r had no node: dropped without a call */
    assert_string_equal(s.nodes[0], "n3");
    assert_int_equal(hr_backoff_prune(b, 1000, on_expired, &s), 1);
    assert_int_equal(s.n, 1); /* once */
    assert_int_equal(hr_backoff_prune(b, 5000, on_expired, &s), 0);
    assert_int_equal(s.n, 2);
    assert_string_equal(s.nodes[1], "n2");
    hr_backoff_free(b);
}

/* Nominal wait after `fails` refusals in a row: 1 s doubling to 30 s. */
static long nominal(int fails)
{
    long d = HR_WRITE_RETRY_BASE_MS;
    for (int i = 0; i < fails && d < HR_WRITE_RETRY_MAX_MS; i++)
        d *= 2;
    return d > HR_WRITE_RETRY_MAX_MS ? HR_WRITE_RETRY_MAX_MS : d;
}

static void write_retry_grows_jittered_capped(void **state)
{
    (void)state;
    hr_prng r;
    hr_prng_seed(&r, 11);
    double prev_mean = 0;
    for (int fails = 0; fails < 12; fails++) {
        long lo = 1L << 40, hi = 0;
        double sum = 0;
        for (int k = 0; k < 2000; k++) {
            long d = hr_exec_retry_ms(&r, fails, 0);
            lo = d < lo ? d : lo;
            hi = d > hi ? d : hi;
            sum += (double)d;
        }
        double mean = sum / 2000;
        /* Jitter within [0.5, 1.5) of the nominal wait, and really spread. */
        assert_true(lo >= nominal(fails) / 2);
        assert_true(hi < nominal(fails) * 3 / 2);
        assert_true(hi - lo > nominal(fails) / 2);
        /* Growth: the first is about the old flat second, then it doubles
         * (on average) until the cap... */
        if (fails == 0)
            assert_true(mean > 900 && mean < 1100);
        else if (nominal(fails) < HR_WRITE_RETRY_MAX_MS)
            assert_true(mean > prev_mean * 1.8 && mean < prev_mean * 2.2);
        prev_mean = mean;
        /* ...and the cap holds however long the outage: never 45 s or more. */
        assert_true(hi < 45000);
    }
    assert_true(nominal(5) == HR_WRITE_RETRY_MAX_MS); /* 1, 2, 4, 8, 16, then 30 s */
    /* Deterministic for a seed. */
    hr_prng a, b;
    hr_prng_seed(&a, 5);
    hr_prng_seed(&b, 5);
    for (int i = 0; i < 20; i++)
        assert_int_equal(hr_exec_retry_ms(&a, i, 0), hr_exec_retry_ms(&b, i, 0));
    /* The server's Retry-After wins when longer, never when shorter; what
     * the transport hands over is already at most HR_KRETRY_AFTER_MAX_S. */
    assert_int_equal(hr_exec_retry_ms(&r, 0, HR_KRETRY_AFTER_MAX_S * 1000),
                     HR_KRETRY_AFTER_MAX_S * 1000);
    assert_true(hr_exec_retry_ms(&r, 6, 2000) >= 15000);
}

/* The executor counts refusals in a row: each wait is drawn from the next
 * step, up to the cap (an accepted write resets the count; hr_execute). */
static void executor_backs_off_writes(void **state)
{
    (void)state;
    hr_executor_opts o = {0};
    hr_executor *e = NULL;
    hr_err err = {0};
    assert_int_equal(hr_executor_new(&o, &e, &err), HR_OK);
    for (int fails = 0; fails < 10; fails++) {
        long d = hr_executor_write_refused(e, 0);
        assert_true(d >= nominal(fails) / 2 && d < nominal(fails) * 3 / 2);
    }
    assert_int_equal(hr_executor_write_refused(e, 50000), 50000); /* Retry-After, when longer */
    hr_executor_free(e);
}

int main(void)
{
    const struct CMUnitTest tests[] = {cmocka_unit_test(park_expire_forget),
                                       cmocka_unit_test(expiry_names_the_node),
                                       cmocka_unit_test(write_retry_grows_jittered_capped),
                                       cmocka_unit_test(executor_backs_off_writes)};
    return cmocka_run_group_tests(tests, NULL, NULL);
}
