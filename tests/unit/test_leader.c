/*
 * test_leader.c — the leader election's pure rules (design §10): when a
 * successful renewal counts as gaining leadership (every node is queued
 * then), including a renewal that came back after the renew deadline had
 * lapsed while the flag stayed up; and that "leading" is the flag AND the
 * clock, with the bound every request of a leader ends by.
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
        cmocka_unit_test(no_election_is_unbounded),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
