/*
 * test_throttle.c — the least request that would have avoided a throttle
 * (core/throttle.h, design §9.7): hand-computed cases, then properties on
 * random nodes against the policy itself.
 *
 * The properties take random nodes (A, the others' managed and unmanaged
 * requests, the pod's request r, maxMultiplier) and a demand D, find r' =
 * hr_throttle_request_for, then plan the pod asking r' with the policy
 * (hr_pod_target, design §2.2–§2.3, the small-pod floor off and a 1m
 * quantum, so the two speak of the same ceiling): its target reaches D; and
 * asking r' − 1 it does not (r' is the least), unless r' is 1. HR_SEED
 * replays a run.
 */
#include <inttypes.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

#include <cmocka.h>

#include "core/config.h"
#include "core/pod.h"
#include "core/policy.h"
#include "core/throttle.h"
#include "hr_fixture.h"
#include "hr_prop.h"

#define CASES 20000

/* A burner asking 50m (maxMultiplier 10) on a node with S 1400m, M 250m
 * with it: its share 50 · (250 + 1400) / 250 = 330m. Wanting 1 core it
 * needed r' with r' · 1650 / (200 + r') ≥ 1000 → r' ≥ 307.7: 308 (1000.4;
 * 307 gives 999.1), and 308 × 10 is no bound. On a roomy node (S 10000m) the
 * cap binds instead: 50 × 10 = 500m, and 100m (× 10 = 1000) is the answer. */
static void test_cases(void **state)
{
    (void)state;
    hr_throttle_node n = {.slack = 1400,
                          .managed = 250,
                          .allocatable = 2000,
                          .request = 50,
                          .max_multiplier_milli = 10000};
    assert_int_equal(hr_throttle_ceiling(&n, 50), 330);
    assert_int_equal(hr_throttle_request_for(&n, 1000), 308);
    assert_true(hr_throttle_ceiling(&n, 308) >= 1000);
    assert_true(hr_throttle_ceiling(&n, 307) < 1000);
    hr_throttle_node roomy = {.slack = 10000,
                              .managed = 250,
                              .allocatable = 16000,
                              .request = 50,
                              .max_multiplier_milli = 10000};
    assert_int_equal(hr_throttle_ceiling(&roomy, 50), 500);
    assert_int_equal(hr_throttle_request_for(&roomy, 1000), 100);
    /* A node with no slack left: only the request itself gives it. */
    hr_throttle_node full = {.slack = 0,
                             .managed = 1300,
                             .allocatable = 2000,
                             .request = 100,
                             .max_multiplier_milli = 10000};
    assert_int_equal(hr_throttle_ceiling(&full, 100), 100);
    assert_int_equal(hr_throttle_request_for(&full, 1000), 1000);
    /* A cap a request does not move (max-cpu): the request is the answer. */
    n.fixed_cap = true;
    assert_int_equal(hr_throttle_request_for(&n, 1000), 1000);
    /* It wanted less than its request gives (330m): no more than it asks. */
    n.fixed_cap = false;
    assert_true(hr_throttle_request_for(&n, 300) <= 50);
    assert_int_equal(hr_throttle_request_for(&n, 1), 1);
}

/* The policy's ceiling of one container of request req on a node of
 * allocatable A where `others` is booked by other managed pods and
 * `unmanaged` by pods it does not manage. */
static int64_t policy_ceiling(const hr_config *c, int64_t A, int64_t others, int64_t unmanaged,
                              int64_t req)
{
    hr_container ctr = {req, HR_NONE, HR_NONE, HR_NONE, HR_CTR_APP, false};
    hr_pod p = mkpod(&ctr, 1);
    int64_t managed = others + req, slack = A - unmanaged - managed;
    return hr_pod_target(c, A, slack, managed, 2, &p, req, NULL);
}

static void least(void)
{
    hr_config c;
    hr_config_defaults(&c);
    c.min_burst_floor = 0;
    c.quantum = 1;
    int no_slack = 0, capped = 0;
    for (int k = 0; k < CASES; k++) {
        hr_prop_start("least", k);
        int64_t A = between(500, 64000);
        int64_t unmanaged = below(A);
        int64_t others = between(1, A);
        int64_t r = between(1, 4000);
        c.max_multiplier_milli = chance(20) ? 0 : between(1000, 20000);
        int64_t managed = others + r, slack = A - unmanaged - managed;
        hr_throttle_node n = {slack, managed, A, r, c.max_multiplier_milli, false};
        int64_t D = between(1, 2 * A);
        int64_t need = hr_throttle_request_for(&n, D);
        if (need < 1 || need > D)
            PFAIL("r' = %" PRId64 " outside [1, %" PRId64 "]", need, D);
        int64_t got = policy_ceiling(&c, A, others, unmanaged, need);
        if (got != hr_throttle_ceiling(&n, need))
            PFAIL("A %" PRId64 " S %" PRId64 " M %" PRId64 " r %" PRId64 ": at r' %" PRId64
                  " the policy gives %" PRId64 ", throttle.h %" PRId64,
                  A, slack, managed, r, need, got, hr_throttle_ceiling(&n, need));
        if (got < D)
            PFAIL("r' %" PRId64 " gives %" PRId64 " < wanted %" PRId64, need, got, D);
        if (need > 1 && policy_ceiling(&c, A, others, unmanaged, need - 1) >= D)
            PFAIL("r' %" PRId64 " is not the least: %" PRId64 " gives %" PRId64, need, need - 1,
                  policy_ceiling(&c, A, others, unmanaged, need - 1));
        no_slack += slack - (need - r) <= 0;
        capped += c.max_multiplier_milli > 0 && got == need * c.max_multiplier_milli / 1000;
    }
    if (no_slack < 100 || capped < 100)
        fail_msg("generator too tame: %d without slack, %d at maxMultiplier (seed %" PRIu64 ")",
                 no_slack, capped, g_seed);
}
PROP(least)

int main(void)
{
    g_seed = hr_prop_seed_from_env();
    printf("throttle properties: seed %" PRIu64 " (replay with HR_SEED=%" PRIu64 ")\n", g_seed,
           g_seed);
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_cases),
        cmocka_unit_test(test_least),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
