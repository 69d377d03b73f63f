/*
 * test_gates.c — design §6 capacity and pressure gates, alone and as
 * hr_plan_node reports them per pod.
 *
 * The asymmetry is the point: a decrease frees capacity and must pass under
 * any condition (pressure, an unreadable node), while an increase passes
 * only on a node known to be healthy and with room. A gate that blocked a
 * decrease would keep a pressured node pressured.
 */
#include <inttypes.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "core/config.h"
#include "core/gates.h"
#include "core/policy.h"
#include "hr_check.h"
#include "hr_fixture.h"

static void expect_gate(const char *label, hr_node n, int64_t cur, int64_t tgt, int64_t total,
                        hr_gate want)
{
    hr_gate g = hr_gate_check(&n, cur, tgt, total);
    if (g != want)
        fail_msg("%s: current %" PRId64 " target %" PRId64 " total %" PRId64 ": got %s, want %s",
                 label, cur, tgt, total, hr_gate_str(g), hr_gate_str(want));
}

static void test_gate_names(void **state)
{
    (void)state;
    /* These are the metric's reason label values (design §6). */
    assert_string_equal(hr_gate_str(HR_GATE_PASS), "pass");
    assert_string_equal(hr_gate_str(HR_GATE_PRESSURE), "pressure");
    assert_string_equal(hr_gate_str(HR_GATE_UNAVAILABLE), "unavailable");
    assert_string_equal(hr_gate_str(HR_GATE_ALLOCATABLE), "allocatable");
    assert_string_equal(hr_gate_str(HR_GATE_NODE_UNKNOWN), "node-unknown");
}

static void test_healthy_node(void **state)
{
    (void)state;
    hr_node n = mknode(16000);
    expect_gate("increase", n, 1000, 2000, 2000, HR_GATE_PASS);
    expect_gate("decrease", n, 2000, 1000, 1000, HR_GATE_PASS);
    expect_gate("unchanged", n, 2000, 2000, 2000, HR_GATE_PASS);
    expect_gate("increase to exactly allocatable", n, 1000, 16000, 16000, HR_GATE_PASS);
}

static void test_disk_pressure(void **state)
{
    (void)state;
    hr_node n = mknode(16000);
    n.disk_pressure = true;
    expect_gate("increase under DiskPressure", n, 1000, 2000, 2000, HR_GATE_PRESSURE);
    expect_gate("decrease under DiskPressure", n, 2000, 1000, 1000, HR_GATE_PASS);
    expect_gate("unchanged under DiskPressure", n, 2000, 2000, 2000, HR_GATE_PASS);
}

static void test_pid_pressure(void **state)
{
    (void)state;
    hr_node n = mknode(16000);
    n.pid_pressure = true;
    expect_gate("increase under PIDPressure", n, 1000, 2000, 2000, HR_GATE_PRESSURE);
    expect_gate("decrease under PIDPressure", n, 2000, 1000, 1000, HR_GATE_PASS);
    n.disk_pressure = true;
    expect_gate("increase under both", n, 1000, 2000, 2000, HR_GATE_PRESSURE);
    expect_gate("decrease under both", n, 2000, 1000, 1000, HR_GATE_PASS);
}

/* MemoryPressure does not block CPU changes (design §6); hr_node has no field
 * for it, so there is nothing a caller could pass to block on it — the
 * compile-time shape is the test. */

static void test_unknown_node(void **state)
{
    (void)state;
    hr_node n = mknode(16000);
    n.known = false;
    expect_gate("increase on an unreadable node", n, 1000, 2000, 2000, HR_GATE_UNAVAILABLE);
    expect_gate("decrease on an unreadable node", n, 2000, 1000, 1000, HR_GATE_PASS);
    /* Nothing about the node is known, allocatable included. */
    n.allocatable = 0;
    expect_gate("increase, unknown and zero allocatable", n, 1000, 2000, 2000, HR_GATE_UNAVAILABLE);
    expect_gate("decrease, unknown and zero allocatable", n, 2000, 1000, 1000, HR_GATE_PASS);
}

static void test_allocatable(void **state)
{
    (void)state;
    hr_node n = mknode(4000);
    expect_gate("raise beyond allocatable", n, 1000, 2000, 4001, HR_GATE_ALLOCATABLE);
    expect_gate("raise to allocatable", n, 1000, 2000, 4000, HR_GATE_PASS);
    /* A pod already above allocatable may still come down. */
    expect_gate("lower, still above allocatable", n, 8000, 6000, 6000, HR_GATE_PASS);
}

static void test_no_limit_yet_is_a_decrease(void **state)
{
    (void)state;
    /* current 0: some container has no limit, i.e. an unbounded ceiling;
     * any limit written lowers it. */
    hr_node n = mknode(16000);
    expect_gate("healthy", n, 0, 5000, 5000, HR_GATE_PASS);
    n.disk_pressure = true;
    expect_gate("DiskPressure", n, 0, 5000, 5000, HR_GATE_PASS);
    n.disk_pressure = false;
    n.pid_pressure = true;
    expect_gate("PIDPressure", n, 0, 5000, 5000, HR_GATE_PASS);
    n = mknode(16000);
    n.known = false;
    expect_gate("unknown node", n, 0, 5000, 5000, HR_GATE_PASS);
    n = mknode(4000);
    expect_gate("total above allocatable", n, 0, 5000, 5000, HR_GATE_PASS);
}

/* ---- through hr_plan_node ---------------------------------------------- */

static plan_result R;

/* Three pods on a 16-core node, floor 0: 500/1500/6000 -> 1000/3000/12000
 * (the §5.1 example). Pod 0 has no limit (write, counts as a decrease),
 * pod 1 is at 1500 (grow to 3000: an increase), pod 2 at 14000 (shrink to
 * 12000: a decrease). */
static hr_container p0[] = {APP(500)};
static hr_container p1[] = {CTR(HR_CTR_APP, 1500, 1500, HR_NONE, HR_NONE)};
static hr_container p2[] = {CTR(HR_CTR_APP, 6000, 14000, HR_NONE, HR_NONE)};

static void plan3(hr_node n)
{
    hr_config c;
    hr_config_defaults(&c);
    c.min_burst_floor = 0;
    hr_pod pods[] = {MKPOD(p0), MKPOD(p1), MKPOD(p2)};
    run_plan(&R, &c, &n, pods, 3);
    CHECK_I64("target 0", R.out[0].target, 1000);
    CHECK_I64("target 1", R.out[1].target, 3000);
    CHECK_I64("target 2", R.out[2].target, 12000);
    for (int i = 0; i < 3; i++)
        CHECK_TRUE("every pod is written", R.out[i].write);
}

static void test_plan_gates_healthy(void **state)
{
    (void)state;
    plan3(mknode(16000));
    for (int i = 0; i < 3; i++)
        CHECK_I64("healthy: pass", R.out[i].gate, HR_GATE_PASS);
}

static void test_plan_gates_pressure(void **state)
{
    (void)state;
    hr_node n = mknode(16000);
    n.disk_pressure = true;
    plan3(n);
    CHECK_I64("no limit yet: pass", R.out[0].gate, HR_GATE_PASS);
    CHECK_I64("increase: pressure", R.out[1].gate, HR_GATE_PRESSURE);
    CHECK_I64("decrease: pass", R.out[2].gate, HR_GATE_PASS);
    n = mknode(16000);
    n.pid_pressure = true;
    plan3(n);
    CHECK_I64("PID: increase", R.out[1].gate, HR_GATE_PRESSURE);
    CHECK_I64("PID: decrease", R.out[2].gate, HR_GATE_PASS);
}

static void test_plan_gates_unknown(void **state)
{
    (void)state;
    /* design §6: with the Node unknown its allocatable is unknown too, and a
     * plan with A = 0 would turn every burst into a "decrease". So nothing
     * is planned: every managed pod is held as node-unknown, target none,
     * no write, whichever direction it would have gone. */
    hr_config c;
    hr_config_defaults(&c);
    c.min_burst_floor = 0;
    hr_pod pods[] = {MKPOD(p0), MKPOD(p1), MKPOD(p2)};
    hr_node n = mknode(16000);
    n.known = false;
    run_plan(&R, &c, &n, pods, 3);
    for (int i = 0; i < 3; i++) {
        CHECK_I64("unknown: node-unknown", R.out[i].gate, HR_GATE_NODE_UNKNOWN);
        CHECK_I64("unknown: no target", R.out[i].target, HR_NONE);
        CHECK_TRUE("unknown: no write", !R.out[i].write);
    }
    CHECK_I64("unknown: nothing to write", R.np.n_write, 0);
}

static void test_booking_unknown(void **state)
{
    (void)state;
    /* design §6: a node whose booking is unknown (a pod on it could not be
     * decoded) holds increases only; decreases and first limits go. */
    hr_node n = mknode(16000);
    n.booking_unknown = true;
    expect_gate("increase", n, 1000, 2000, 2000, HR_GATE_BOOKING_UNKNOWN);
    expect_gate("decrease", n, 2000, 1000, 1000, HR_GATE_PASS);
    expect_gate("no limit yet", n, 0, 1000, 1000, HR_GATE_PASS);
    assert_string_equal(hr_gate_str(HR_GATE_BOOKING_UNKNOWN), "booking-unknown");
}

static void test_plan_gates_undecodable_pod(void **state)
{
    (void)state;
    /* An undecodable pod on the node: it is not managed, books nothing it
     * can prove (so the other targets are those of plan3), and every
     * increase on the node is held; the decrease and the first limit go. */
    hr_config c;
    hr_config_defaults(&c);
    c.min_burst_floor = 0;
    hr_pod bad = hr_pod_init();
    bad.undecodable = true;
    hr_pod pods[] = {MKPOD(p0), MKPOD(p1), MKPOD(p2), bad};
    hr_node n = mknode(16000);
    run_plan(&R, &c, &n, pods, 4);
    CHECK_TRUE("booking unknown", R.np.booking_unknown);
    CHECK_I64("one undecodable pod", R.np.n_undecodable, 1);
    CHECK_I64("it is not managed", R.out[3].reason, HR_R_UNDECODABLE);
    CHECK_TRUE("and not written", !R.out[3].write);
    CHECK_I64("target 1 as without it", R.out[1].target, 3000);
    CHECK_I64("no limit yet: pass", R.out[0].gate, HR_GATE_PASS);
    CHECK_I64("increase: held", R.out[1].gate, HR_GATE_BOOKING_UNKNOWN);
    CHECK_I64("decrease: pass", R.out[2].gate, HR_GATE_PASS);

    /* A pod that may be on any node (its nodeName cannot be read): the
     * caller marks the node, with no undecodable pod in the list. */
    n.booking_unknown = true;
    run_plan(&R, &c, &n, pods, 3);
    CHECK_TRUE("marked: booking unknown", R.np.booking_unknown);
    CHECK_I64("marked: no undecodable pod here", R.np.n_undecodable, 0);
    CHECK_I64("marked: increase held", R.out[1].gate, HR_GATE_BOOKING_UNKNOWN);
    CHECK_I64("marked: decrease passes", R.out[2].gate, HR_GATE_PASS);

    /* Without either, the same increase passes. */
    n.booking_unknown = false;
    run_plan(&R, &c, &n, pods, 3);
    CHECK_TRUE("clean: booking known", !R.np.booking_unknown);
    CHECK_I64("clean: increase passes", R.out[1].gate, HR_GATE_PASS);
}

static void test_plan_gate_only_for_writes(void **state)
{
    (void)state;
    /* A pod whose target is within the deadband is not written, and its
     * gate stays PASS even on a pressured node ("for a write ... else
     * PASS"). 2800 -> 3000 is +7.1%, under the 10% grow band. */
    hr_config c;
    hr_config_defaults(&c);
    c.min_burst_floor = 0;
    hr_container q1[] = {CTR(HR_CTR_APP, 1500, 2800, HR_NONE, HR_NONE)};
    hr_pod pods[] = {MKPOD(p0), MKPOD(q1), MKPOD(p2)};
    hr_node n = mknode(16000);
    n.disk_pressure = true;
    run_plan(&R, &c, &n, pods, 3);
    CHECK_I64("target", R.out[1].target, 3000);
    CHECK_TRUE("no write", !R.out[1].write);
    CHECK_I64("no write: pass", R.out[1].gate, HR_GATE_PASS);
}

static void test_plan_gate_allocatable(void **state)
{
    (void)state;
    /* The pod's whole limit includes containers the policy does not touch:
     * a sidecar with an explicit 0 request and an 8000 limit, plus an app
     * container of 1000 (limit 1000 now). Alone on 16000 with the default
     * 10x cap the app's target is 10000; the pod would total 18000 > 16000:
     * never raised. Its neighbour pod is unaffected. */
    hr_config c;
    hr_config_defaults(&c);
    hr_container big[] = {CTR(HR_CTR_SIDECAR, 0, 8000, HR_NONE, HR_NONE),
                          CTR(HR_CTR_APP, 1000, 1000, HR_NONE, HR_NONE)};
    hr_pod p = MKPOD(big);
    hr_node n = mknode(16000);
    run_plan(&R, &c, &n, &p, 1);
    CHECK_I64("target", R.out[0].target, 10000);
    CHECK_I64("sidecar untouched", LIM(&R, 0, 0), HR_NONE);
    CHECK_TRUE("write", R.out[0].write);
    CHECK_I64("gate", R.out[0].gate, HR_GATE_ALLOCATABLE);

    /* With a 6000 sidecar limit it fits exactly (16000): pass. */
    big[0].cpu_lim = 6000;
    run_plan(&R, &c, &n, &p, 1);
    CHECK_I64("fits exactly", R.out[0].gate, HR_GATE_PASS);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_gate_names),
        cmocka_unit_test(test_healthy_node),
        cmocka_unit_test(test_disk_pressure),
        cmocka_unit_test(test_pid_pressure),
        cmocka_unit_test(test_unknown_node),
        cmocka_unit_test(test_allocatable),
        cmocka_unit_test(test_no_limit_yet_is_a_decrease),
        cmocka_unit_test(test_plan_gates_healthy),
        cmocka_unit_test(test_plan_gates_pressure),
        cmocka_unit_test(test_plan_gates_unknown),
        cmocka_unit_test(test_booking_unknown),
        cmocka_unit_test(test_plan_gates_undecodable_pod),
        cmocka_unit_test(test_plan_gate_only_for_writes),
        cmocka_unit_test(test_plan_gate_allocatable),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
