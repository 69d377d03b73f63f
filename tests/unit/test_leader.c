/*
 * test_leader.c — the leader election's pure rules (design §10): when a
 * successful renewal counts as gaining leadership (every node is queued
 * then), including a renewal that came back after the renew deadline had
 * lapsed while the flag stayed up; that "leading" is the flag AND the
 * clock, with the bound every request of a leader ends by; and when a
 * follower may take a Lease held by someone else (a standby that saw the
 * holder renew before a just-started replica that did not).
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include "controller/leader.h"
#include "util/clock.h"

static void gain_edges(void **state)
{
    (void)state;
    /* Not leading before (flag down), a fresh renewal: gained. */
    assert_true(hr_leader_gained(false, 0, 10000, 100));
    /* Leading, renewed in time: no new term, nothing to queue. */
    assert_false(hr_leader_gained(true, 10000, 12000, 2000));
    /* The flag stayed up but the renew deadline lapsed (now 10500 >= 10000)
     * before this slow renewal came back: work was skipped meanwhile, so
     * this is a gain and every node is queued again. */
    assert_true(hr_leader_gained(true, 10000, 20000, 10500));
    /* Exactly at the deadline counts as lapsed. */
    assert_true(hr_leader_gained(true, 10000, 20000, 10000));
    /* A renewal so slow that its own term is already over: not leading
     * yet, so no gain now (the next renewal in time will be one). */
    assert_false(hr_leader_gained(true, 10000, 10400, 10500));
    assert_false(hr_leader_gained(false, 0, 50, 100));
}

static void take_over_rules(void **state)
{
    (void)state;
    /* No holder (released at shutdown): at once. */
    assert_true(hr_leader_may_take(false, 0, 15000, 0));
    /* A standby that saw the holder renew: after one lease unchanged. */
    assert_false(hr_leader_may_take(true, 14999, 15000, 2));
    assert_true(hr_leader_may_take(true, 15000, 15000, 2));
    /* A replica that only ever saw one version of the holder's record —
     * e.g. the crashed leader's own restarted container, started after
     * the last renewal — waits half a lease more, so the standby, whose
     * clock started at most a retry period before, goes first. */
    assert_false(hr_leader_may_take(true, 15000, 15000, 1));
    assert_false(hr_leader_may_take(true, 22499, 15000, 1));
    assert_true(hr_leader_may_take(true, 22500, 15000, 1));
}

static void no_election_is_unbounded(void **state)
{
    (void)state;
    assert_true(hr_leader_until_ms(NULL) == HR_KUNTIL_NONE);
    assert_true(hr_leader_leading(NULL));
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(gain_edges),
        cmocka_unit_test(take_over_rules),
        cmocka_unit_test(no_election_is_unbounded),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
