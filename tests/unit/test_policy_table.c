/*
 * test_policy_table.c — hand-computed tables for the proportional policy
 * (design §2), the accounting it stands on (design §3) and the node factor.
 *
 * Each expected value is derived in the comment next to it from design §2's
 * formula, never read back from the code: these tables are the reference a
 * reviewer checks by hand, and the property tests only say the answers hang
 * together. Requests off the quantum grid are pinned in the quantum section
 * (design §2.4: the target is rounded, never the burst).
 */
#include <inttypes.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "core/config.h"
#include "core/pod.h"
#include "core/policy.h"
#include "hr_check.h"
#include "hr_fixture.h"

static hr_config defaults(void)
{
    hr_config c;
    hr_config_defaults(&c);
    return c;
}

static plan_result R; /* big: keep it off the stack */

/* ---- design §2 worked examples (design §2.7) ---------------------- */

static void test_worked_example_no_floor(void **state)
{
    (void)state;
    /* A = 16000; three managed pods 500/1500/6000 and nothing else:
     * R = M = 8000, S = 8000, factor 1 + S/M = 2, so targets 1000/3000/12000.
     * Caps: 10x request is above each; A = 16000 is above each. */
    hr_config c = defaults();
    c.min_burst_floor = 0;
    hr_container a[] = {APP(500)}, b[] = {APP(1500)}, d[] = {APP(6000)};
    hr_pod pods[] = {MKPOD(a), MKPOD(b), MKPOD(d)};
    hr_node n = mknode(16000);
    run_plan(&R, &c, &n, pods, 3);

    CHECK_I64("A", R.np.allocatable, 16000);
    CHECK_I64("R", R.np.booked, 8000);
    CHECK_I64("S", R.np.slack, 8000);
    CHECK_I64("M", R.np.managed, 8000);
    CHECK_I64("N", R.np.n_managed, 3);
    CHECK_I64("pods counted", R.np.n_pods, 3);
    CHECK_I64("factor", hr_node_factor_milli(&R.np), 2000);

    const int64_t want[] = {1000, 3000, 12000}, req[] = {500, 1500, 6000};
    for (int i = 0; i < 3; i++) {
        CHECK_I64("reason", R.out[i].reason, HR_MANAGED);
        CHECK_I64("request", R.out[i].request, req[i]);
        CHECK_I64("booked", R.out[i].booked, req[i]);
        CHECK_I64("target", R.out[i].target, want[i]);
        CHECK_I64("container limit", LIM(&R, i, 0), want[i]);
        /* No limit yet: current is 0 and a write is always due. */
        CHECK_I64("current", R.out[i].current, 0);
        CHECK_TRUE("write", R.out[i].write);
        CHECK_TRUE("not guarded", !R.out[i].qos_guarded);
    }
    CHECK_I64("writes", R.np.n_write, 3);
}

static void test_worked_example_default_floor(void **state)
{
    (void)state;
    /* Same node, default floor 1000: floor term = min(1000, S/N = 2666) =
     * 1000. 500-pod: max(500, 1000) = 1000 -> 1500 (the floor lifts it above
     * its proportional 1000). 1500-pod: max(1500, 1000) -> 3000. 6000-pod:
     * max(6000, 1000) -> 12000. Caps 5000/15000/60000 do not bind. */
    hr_config c = defaults();
    CHECK_I64("default floor", c.min_burst_floor, 1000);
    hr_container a[] = {APP(500)}, b[] = {APP(1500)}, d[] = {APP(6000)};
    hr_pod pods[] = {MKPOD(a), MKPOD(b), MKPOD(d)};
    hr_node n = mknode(16000);
    run_plan(&R, &c, &n, pods, 3);
    CHECK_I64("500m pod", R.out[0].target, 1500);
    CHECK_I64("1500m pod", R.out[1].target, 3000);
    CHECK_I64("6000m pod", R.out[2].target, 12000);
}

static void test_floor_design_5_2(void **state)
{
    (void)state;
    /* A = 16000; managed 200 and 7000: R = M = 7200, S = 8800, N = 2.
     * 200-pod: proportional 8800*200/7200 = 244.4, floor min(1000, 4400) =
     * 1000 -> 1200; cap 10x = 2000 does not bind.
     * 7000-pod: 8800*7000/7200 = 8555.56 -> 15555.56 -> nearest 10m = 15560;
     * caps 70000 and A = 16000 do not bind. */
    hr_config c = defaults();
    hr_container a[] = {APP(200)}, b[] = {APP(7000)};
    hr_pod pods[] = {MKPOD(a), MKPOD(b)};
    hr_node n = mknode(16000);
    run_plan(&R, &c, &n, pods, 2);
    CHECK_I64("S", R.np.slack, 8800);
    CHECK_I64("200m pod", R.out[0].target, 1200);
    CHECK_I64("7000m pod", R.out[1].target, 15560);
    /* factor 1 + 8800/7200 = 2.2222 */
    CHECK_I64("factor", hr_node_factor_milli(&R.np), 2222);

    /* 10m instead: R = M = 7010, S = 8990. 10-pod: floor 1000 -> 1010, but
     * maxMultiplier caps it at 10*10 = 100 (caps win over the floor).
     * 7000-pod: 8990*7000/7010 = 8977.18 -> 15977.18 -> nearest 10m = 15980
     * (below A = 16000). */
    hr_container a2[] = {APP(10)};
    pods[0] = MKPOD(a2);
    run_plan(&R, &c, &n, pods, 2);
    CHECK_I64("S", R.np.slack, 8990);
    CHECK_I64("10m pod", R.out[0].target, 100);
    CHECK_I64("7000m pod", R.out[1].target, 15980);
    /* factor 1 + 8990/7010 = 2.28245 -> 2282 */
    CHECK_I64("factor", hr_node_factor_milli(&R.np), 2282);
}

static void test_pod_target_direct(void **state)
{
    (void)state;
    /* The exposed piece gives the same numbers as the plan, and names its
     * binding upper bound: min(r*mult, max(A, r), maxCpu, pod LR). */
    hr_config c = defaults();
    hr_container a[] = {APP(500)};
    hr_pod p = MKPOD(a);
    int64_t cap = -5;
    CHECK_I64("5.1 500m pod", hr_pod_target(&c, 16000, 8000, 8000, 3, &p, 500, &cap), 1500);
    CHECK_I64("cap = 10x", cap, 5000);
    CHECK_I64("no cap_out is fine", hr_pod_target(&c, 16000, 8000, 8000, 3, &p, 500, NULL), 1500);

    p.max_cpu = 1300;
    CHECK_I64("max-cpu binds", hr_pod_target(&c, 16000, 8000, 8000, 3, &p, 500, &cap), 1300);
    CHECK_I64("cap = max-cpu", cap, 1300);

    /* Allocatable cap, observable only with mult 0: slack handed in larger
     * than the node (pure function, arbitrary inputs) must still stop at A. */
    hr_config c0 = defaults();
    c0.max_multiplier_milli = 0;
    c0.min_burst_floor = 0;
    hr_container b[] = {APP(1000)};
    hr_pod q = MKPOD(b);
    CHECK_I64("allocatable binds", hr_pod_target(&c0, 16000, 20000, 1000, 1, &q, 1000, &cap),
              16000);
    CHECK_I64("cap = A", cap, 16000);

    /* A' = max(A, r): a request above allocatable is never cut below r. */
    CHECK_I64("r > A", hr_pod_target(&c0, 500, -500, 1000, 1, &q, 1000, &cap), 1000);
    CHECK_I64("cap = max(A, r)", cap, 1000);

    /* S <= 0 or M = 0: target is the request. */
    CHECK_I64("S = 0", hr_pod_target(&c, 16000, 0, 1000, 1, &q, 1000, NULL), 1000);
    CHECK_I64("S < 0", hr_pod_target(&c, 16000, -3000, 1000, 1, &q, 1000, NULL), 1000);
    CHECK_I64("M = 0", hr_pod_target(&c, 16000, 5000, 0, 0, &q, 1000, NULL), 1000);
}

/* ---- S <= 0 ------------------------------------------------------------ */

static void test_overbooked_targets_are_requests(void **state)
{
    (void)state;
    /* A = 4000; an opted-out pod books 3000 (it still counts in R) and
     * managed pods ask 1000 and 500: R = 4500, S = -500 -> targets 1000, 500.
     * No memory settings, so writing limit == request keeps them Burstable
     * and the QoS guard has nothing to do. */
    hr_config c = defaults();
    hr_container u[] = {APP(3000)}, a[] = {APP(1000)}, b[] = {APP(500)};
    hr_pod pods[] = {MKPOD(u), MKPOD(a), MKPOD(b)};
    pods[0].opted_out = true;
    hr_node n = mknode(4000);
    run_plan(&R, &c, &n, pods, 3);
    CHECK_I64("opted out", R.out[0].reason, HR_R_OPTED_OUT);
    CHECK_I64("opted-out target", R.out[0].target, HR_NONE);
    CHECK_I64("opted-out ctr untouched", LIM(&R, 0, 0), HR_NONE);
    CHECK_TRUE("opted-out not written", !R.out[0].write);
    CHECK_I64("R counts the opted-out pod", R.np.booked, 4500);
    CHECK_I64("S", R.np.slack, -500);
    CHECK_I64("M", R.np.managed, 1500);
    CHECK_I64("N", R.np.n_managed, 2);
    CHECK_I64("1000m pod", R.out[1].target, 1000);
    CHECK_I64("500m pod", R.out[2].target, 500);
    CHECK_I64("factor", hr_node_factor_milli(&R.np), 1000);

    /* Exactly full: S = 0 also means target = request. */
    n = mknode(4500);
    run_plan(&R, &c, &n, pods, 3);
    CHECK_I64("S", R.np.slack, 0);
    CHECK_I64("1000m pod, S=0", R.out[1].target, 1000);
    CHECK_I64("500m pod, S=0", R.out[2].target, 500);

    /* One millicore of slack is not S <= 0: targets may rise, by at most
     * that millicore before the quantum, so nearest-10m gives the request. */
    n = mknode(4501);
    run_plan(&R, &c, &n, pods, 3);
    CHECK_I64("1000m pod, S=1", R.out[1].target, 1000);
}

/* ---- caps in order ------------------------------------------------------ */

static int64_t lone_target(const hr_config *c, const hr_pod *p)
{
    hr_node n = mknode(16000);
    run_plan(&R, c, &n, p, 1);
    if (R.out[0].reason != HR_MANAGED)
        fail_msg("pod unexpectedly unmanaged: %s", hr_reason_str(R.out[0].reason));
    return R.out[0].target;
}

static void test_cap_multiplier(void **state)
{
    (void)state;
    /* One 1000m pod alone on 16000: S = 15000, burst 15000 -> 16000, which
     * 10x caps at 10000. */
    hr_config c = defaults();
    hr_container a[] = {APP(1000)};
    hr_pod p = MKPOD(a);
    CHECK_I64("10x", lone_target(&c, &p), 10000);
    c.max_multiplier_milli = 1500;
    CHECK_I64("1.5x", lone_target(&c, &p), 1500);
    c.max_multiplier_milli = 1234; /* cap 1234; bursts in 10m: 230 -> 1230 */
    CHECK_I64("1.234x, never above the cap", lone_target(&c, &p), 1230);
    c.max_multiplier_milli = 1000; /* cap = request */
    CHECK_I64("1x", lone_target(&c, &p), 1000);
}

static void test_multiplier_zero_disables(void **state)
{
    (void)state;
    /* A 100m pod alone on 16000: S = 15900 -> 16000 uncapped (A binds
     * exactly), 1000 with the default 10x. */
    hr_config c = defaults();
    hr_container a[] = {APP(100)};
    hr_pod p = MKPOD(a);
    CHECK_I64("default 10x", lone_target(&c, &p), 1000);
    c.max_multiplier_milli = 0;
    CHECK_I64("0 disables", lone_target(&c, &p), 16000);
}

static void test_cap_max_cpu_annotation(void **state)
{
    (void)state;
    hr_config c = defaults();
    hr_container a[] = {APP(1000)};
    hr_pod p = MKPOD(a);
    p.max_cpu = 2500;
    CHECK_I64("max-cpu 2500", lone_target(&c, &p), 2500);
    p.max_cpu = 2505; /* nearest 10m would be 2510, above the cap */
    CHECK_I64("max-cpu 2505", lone_target(&c, &p), 2500);
    p.max_cpu = 12000; /* the 10x cap (10000) is tighter */
    CHECK_I64("max-cpu above 10x", lone_target(&c, &p), 10000);
    c.max_multiplier_milli = 0;
    CHECK_I64("max-cpu with mult 0", lone_target(&c, &p), 12000);
    p.max_cpu = 40000; /* A = 16000 is tighter */
    CHECK_I64("max-cpu above A", lone_target(&c, &p), 16000);
    /* An annotation below the request cannot push the limit under it. */
    p.max_cpu = 200;
    CHECK_I64("max-cpu below request", lone_target(&c, &p), 1000);
}

static void test_cap_limitrange(void **state)
{
    (void)state;
    hr_config c = defaults();

    /* Container max.cpu 3000 on one 1000m container (10x would be 10000). */
    hr_container a[] = {APP(1000)};
    hr_pod p = MKPOD(a);
    p.limits = HR_LIMIT_BOUNDS_NONE;
    p.limits.ctr_max = 3000;
    CHECK_I64("container max", lone_target(&c, &p), 3000);
    CHECK_I64("container max, slot", LIM(&R, 0, 0), 3000);
    p.limits.ctr_max = 2995; /* bursts move in 10m steps: 1990 -> 2990 */
    CHECK_I64("container max 2995", lone_target(&c, &p), 2990);

    /* maxLimitRequestRatio 2.0: limit <= 2 x request. */
    p.limits = HR_LIMIT_BOUNDS_NONE;
    p.limits.ctr_ratio_milli = 2000;
    CHECK_I64("ratio 2", lone_target(&c, &p), 2000);

    /* Pod max.cpu bounds the pod total. */
    hr_container two[] = {APP(500), APP(500)};
    hr_pod q = MKPOD(two);
    q.limits = HR_LIMIT_BOUNDS_NONE;
    q.limits.pod_max = 1800;
    CHECK_I64("pod max", lone_target(&c, &q), 1800);
    CHECK_I64("pod max, ctr 0", LIM(&R, 0, 0), 900);
    CHECK_I64("pod max, ctr 1", LIM(&R, 0, 1), 900);

    /* Container max applies to each container: 2 x 1200. (Uncapped the pod
     * would get 10x = 10000.) */
    q.limits = HR_LIMIT_BOUNDS_NONE;
    q.limits.ctr_max = 1200;
    CHECK_I64("container max per container", lone_target(&c, &q), 2400);
    CHECK_I64("ctr 0", LIM(&R, 0, 0), 1200);
    CHECK_I64("ctr 1", LIM(&R, 0, 1), 1200);

    /* Ratio 1.5 on 400 + 600 -> each at its own bound 600 + 900. */
    hr_container uneven[] = {APP(400), APP(600)};
    hr_pod u = MKPOD(uneven);
    u.limits = HR_LIMIT_BOUNDS_NONE;
    u.limits.ctr_ratio_milli = 1500;
    CHECK_I64("ratio per container", lone_target(&c, &u), 1500);
    CHECK_I64("ratio ctr 0", LIM(&R, 0, 0), 600);
    CHECK_I64("ratio ctr 1", LIM(&R, 0, 1), 900);

    /* Tightest of several: container max 5000 but pod max 3000. */
    p.limits = HR_LIMIT_BOUNDS_NONE;
    p.limits.ctr_max = 5000;
    p.limits.pod_max = 3000;
    CHECK_I64("pod max under container max", lone_target(&c, &p), 3000);

    /* LimitRange and max-cpu together: the smallest wins (2000). */
    p.max_cpu = 2000;
    CHECK_I64("max-cpu under LR", lone_target(&c, &p), 2000);
}

static void test_limit_bounds_merge(void **state)
{
    (void)state;
    hr_limit_bounds b = HR_LIMIT_BOUNDS_NONE;
    hr_limit_bounds x = {4000, HR_NONE, 8000};
    hr_limit_bounds_merge(&b, &x);
    CHECK_I64("ctr_max from NONE", b.ctr_max, 4000);
    CHECK_I64("ratio stays NONE", b.ctr_ratio_milli, HR_NONE);
    CHECK_I64("pod_max from NONE", b.pod_max, 8000);
    hr_limit_bounds y = {6000, 3000, 2000};
    hr_limit_bounds_merge(&b, &y);
    CHECK_I64("ctr_max keeps smaller", b.ctr_max, 4000);
    CHECK_I64("ratio from NONE", b.ctr_ratio_milli, 3000);
    CHECK_I64("pod_max takes smaller", b.pod_max, 2000);
    hr_limit_bounds none = HR_LIMIT_BOUNDS_NONE;
    hr_limit_bounds_merge(&b, &none);
    CHECK_I64("NONE never loosens ctr_max", b.ctr_max, 4000);
    CHECK_I64("NONE never loosens ratio", b.ctr_ratio_milli, 3000);
    CHECK_I64("NONE never loosens pod_max", b.pod_max, 2000);
}

static void test_limitrange_split_monotone(void **state)
{
    (void)state;
    /* design §2 monotonicity where a container LimitRange clips the split.
     * Pod X: containers 10/110/110 (r = 230), Container max.cpu 110 (so
     * only the 10m container has room: the pod can reach at most
     * 110 + 110 + 110 = 330). Floor 0, no multiplier, quantum 10.
     * Alone on A = 430: S = 200, burst 200 -> 430, capped at 330.
     * Adding a managed 100m pod: S = 100, M = 330, burst 100*230/330 = 69.7
     * -> 70 -> 300. Less slack must not give X more: its target with the
     * neighbour may not exceed its target alone, whatever the split. (The
     * only container that can take burst is the 10m one; alone it should
     * get at least as much as with less slack.) */
    hr_config c = defaults();
    c.min_burst_floor = 0;
    c.max_multiplier_milli = 0;
    hr_container x[] = {APP(10), APP(110), APP(110)};
    hr_container y[] = {APP(100)};
    hr_pod pods[] = {MKPOD(x), MKPOD(y)};
    pods[0].limits.ctr_max = 110;
    hr_node n = mknode(430);
    run_plan(&R, &c, &n, pods, 1);
    int64_t alone = R.out[0].target;
    CHECK_TRUE("alone: within the LimitRange", LIM(&R, 0, 1) == 110 && LIM(&R, 0, 2) == 110);
    run_plan(&R, &c, &n, pods, 2);
    int64_t with = R.out[0].target;
    if (with > alone)
        fail_msg("adding a 100m pod raised X's target %" PRId64 " -> %" PRId64 " (limits %" PRId64
                 "/%" PRId64 "/%" PRId64 ")",
                 alone, with, LIM(&R, 0, 0), LIM(&R, 0, 1), LIM(&R, 0, 2));
    /* Burst the clipped containers cannot hold goes to the one with room
     * (the pod-level target is within every bound): alone 100m of burst ->
     * 110/110/110 = 330; beside the 100m pod 70m -> 80/110/110 = 300. */
    CHECK_I64("alone", alone, 330);
    CHECK_I64("with the neighbour, 10m container", LIM(&R, 0, 0), 80);
    CHECK_I64("with the neighbour", with, 300);
}

/* ---- quantum ------------------------------------------------------------ */

static void test_quantum_nearest(void **state)
{
    (void)state;
    /* quantum 100, floor 0, A = 10000, managed 1000 and 2000 (M = 3000).
     * An opted-out pod books 3050: S = 3950. Bursts 1316.7 -> 1300 (down)
     * and 2633.3 -> 2600 (down): targets 2300 and 4600. */
    hr_config c = defaults();
    c.quantum = 100;
    c.min_burst_floor = 0;
    hr_container u[] = {APP(3050)}, a[] = {APP(1000)}, b[] = {APP(2000)};
    hr_pod pods[] = {MKPOD(u), MKPOD(a), MKPOD(b)};
    pods[0].opted_out = true;
    hr_node n = mknode(10000);
    run_plan(&R, &c, &n, pods, 3);
    CHECK_I64("S", R.np.slack, 3950);
    CHECK_I64("1000m pod rounds down", R.out[1].target, 2300);
    CHECK_I64("2000m pod rounds down", R.out[2].target, 4600);

    /* Opted-out pod books 2900: S = 4100. Bursts 1366.7 -> 1400 (up) and
     * 2733.3 -> 2700 (down): 2400 and 4700. */
    hr_container u2[] = {APP(2900)};
    pods[0] = MKPOD(u2);
    pods[0].opted_out = true;
    run_plan(&R, &c, &n, pods, 3);
    CHECK_I64("1000m pod rounds up", R.out[1].target, 2400);
    CHECK_I64("2000m pod rounds down", R.out[2].target, 4700);
}

static void test_quantum_never_above_cap_or_below_request(void **state)
{
    (void)state;
    hr_config c = defaults();
    c.quantum = 100;
    /* max-cpu 2450 on a 1000m pod alone: nearest would be 2500 (above the
     * cap), so 2400. */
    hr_container a[] = {APP(1000)};
    hr_pod p = MKPOD(a);
    p.max_cpu = 2450;
    CHECK_I64("below max-cpu", lone_target(&c, &p), 2400);

    /* 1.25x on 200m: cap 250; nearest step above 200 is 300 > cap -> 200. */
    hr_container b[] = {APP(200)};
    hr_pod q = MKPOD(b);
    c.max_multiplier_milli = 1250;
    CHECK_I64("cap leaves less than a quantum", lone_target(&c, &q), 200);

    /* Tiny slack: 1000m pod on A = 1020 -> 1020 rounds to 1000, never 900. */
    c = defaults();
    c.quantum = 100;
    hr_node n = mknode(1020);
    p.max_cpu = HR_NONE;
    run_plan(&R, &c, &n, &p, 1);
    CHECK_I64("tiny slack", R.out[0].target, 1000);

    /* A request that is not a multiple of the quantum is never rounded
     * below it: 1050m alone on A = 1060 (quantum 100) has raw target
     * 1050 + 10 = 1060; the first grid point at or above the request is
     * 1100, above the cap A' = max(1060, 1050) = 1060, so the request wins
     * over the grid: 1050. On A = 1200 the cap allows 1100: 1100. */
    hr_container d[] = {APP(1050)};
    hr_pod r = MKPOD(d);
    n = mknode(1060);
    run_plan(&R, &c, &n, &r, 1);
    CHECK_I64("1050m, cap 1060 below the grid point 1100", R.out[0].target, 1050);
    n = mknode(1200);
    run_plan(&R, &c, &n, &r, 1);
    CHECK_I64("1050m, raw 1200 capped by A to 1200 -> 1200", R.out[0].target, 1200);
    c.max_multiplier_milli = 1100; /* cap 1155: raw 1155 -> nearest 1200 > cap -> 1100 */
    run_plan(&R, &c, &n, &r, 1);
    CHECK_I64("1050m, cap 1155 -> down to 1100", R.out[0].target, 1100);
}

/* Off-grid requests (design §2.4): the burst used to be
 * rounded, so a request off the 10m grid gave a limit off it. Each pod
 * alone with floor 0 and no multiplier, S = burst and M = r, so
 * raw = r + burst exactly; old = what rounding the burst gave. */
static void test_quantum_target_on_grid(void **state)
{
    (void)state;
    hr_config c = defaults();
    c.min_burst_floor = 0;
    c.max_multiplier_milli = 0;
    static const struct {
        int64_t r, burst, old, want;
    } rows[] = {
        {333, 660, 993, 990},        /* 993 -> nearest 990 */
        {383, 490, 873, 870},        /* 873 -> 870 */
        {505, 10, 515, 520},         /* 515: half rounds up -> 520 */
        {755, 490, 1245, 1250},      /* 1245 -> 1250 */
        {1583, 6080, 7663, 7660},    /* 7663 -> 7660 */
        {1655, 10, 1665, 1670},      /* 1665 -> 1670 */
        {1855, 10730, 12585, 12590}, /* 12585 -> 12590 */
        {5, 0, 5, 10},               /* no burst: up to the first grid point */
        {5, 3, 5, 10},               /* 8 -> 10 */
        {5, 6, 15, 10},              /* 11 -> 10, still >= request */
    };
    for (size_t k = 0; k < sizeof rows / sizeof rows[0]; k++) {
        hr_container a[] = {APP(rows[k].r)};
        hr_pod p = MKPOD(a);
        int64_t t = hr_pod_target(&c, 64000, rows[k].burst, rows[k].r, 1, &p, rows[k].r, NULL);
        if (t != rows[k].want)
            fail_msg("request %" PRId64 "m, burst %" PRId64 "m: target %" PRId64 "m, want %" PRId64
                     "m (burst rounding gave %" PRId64 "m)",
                     rows[k].r, rows[k].burst, t, rows[k].want, rows[k].old);
        int64_t lim[1] = {-1};
        CHECK_I64("split of one container", hr_split_target(&c, &p, rows[k].r, t, lim, NULL), t);
        CHECK_I64("container limit = target", lim[0], t);
    }

    /* A 5m pod on a full node (A = 1000, an opted-out pod books 2000):
     * S < 0, raw target = request = 5, written limit 10. */
    c = defaults();
    hr_container u[] = {APP(2000)}, a[] = {APP(5)};
    hr_pod pods[] = {MKPOD(u), MKPOD(a)};
    pods[0].opted_out = true;
    hr_node n = mknode(1000);
    run_plan(&R, &c, &n, pods, 2);
    CHECK_I64("S", R.np.slack, -1005);
    CHECK_I64("5m pod on a full node: target", R.out[1].target, 10);
    CHECK_I64("5m pod on a full node: limit", LIM(&R, 1, 0), 10);
    CHECK_TRUE("not guarded", !R.out[1].qos_guarded);

    /* A cap in the way rounds down: 333m, raw 333 + 665 = 998 would be
     * 1000, but max-cpu 995 -> 990. */
    hr_container b[] = {APP(333)};
    hr_pod q = MKPOD(b);
    q.max_cpu = 995;
    int64_t cap = 0;
    CHECK_I64("max-cpu 995", hr_pod_target(&c, 64000, 665, 333, 1, &q, 333, &cap), 990);
    CHECK_I64("cap", cap, 995);
}

/* A cap below the first grid point at or above the request: the request
 * wins over the grid (a limit below it is invalid, one above the cap is
 * refused or unwanted), so the limit is the request, off the grid. This is
 * the only way a limit leaves the grid (design §2.4). */
static void test_quantum_request_wins_over_grid(void **state)
{
    (void)state;
    hr_config c = defaults();
    hr_container a[] = {APP(333)};
    hr_pod p = MKPOD(a);
    p.max_cpu = 335; /* first grid point 340 > 335 */
    CHECK_I64("max-cpu 335 on 333m", lone_target(&c, &p), 333);
    CHECK_I64("limit", LIM(&R, 0, 0), 333);
    p.max_cpu = 340; /* 340 fits */
    CHECK_I64("max-cpu 340 on 333m", lone_target(&c, &p), 340);

    /* LimitRange Pod max and Container max alike. */
    p.max_cpu = HR_NONE;
    p.limits.pod_max = 339;
    CHECK_I64("LimitRange pod max 339", lone_target(&c, &p), 333);
    p.limits.pod_max = HR_NONE;
    p.limits.ctr_max = 339;
    CHECK_I64("LimitRange container max 339", lone_target(&c, &p), 333);
    p.limits.ctr_max = 345; /* container ceiling on the grid: 340 */
    CHECK_I64("LimitRange container max 345", lone_target(&c, &p), 340);

    /* request × maxMultiplier: 1.01 × 333 = 336 < 340. */
    p.limits.ctr_max = HR_NONE;
    c.max_multiplier_milli = 1010;
    CHECK_I64("maxMultiplier 1.01", lone_target(&c, &p), 333);

    /* Two containers of 5m on a full node need 10m each (20m); max-cpu 15m
     * leaves no room for both on the grid: both stay at 5m. With max-cpu
     * 20m both get 10m. */
    c = defaults();
    hr_container u[] = {APP(2000)}, two[] = {SIDECAR(5), APP(5)};
    hr_pod pods[] = {MKPOD(u), MKPOD(two)};
    pods[0].opted_out = true;
    pods[1].max_cpu = 15;
    hr_node n = mknode(1000);
    run_plan(&R, &c, &n, pods, 2);
    CHECK_I64("5m + 5m under max-cpu 15m: target", R.out[1].target, 10);
    CHECK_I64("sidecar at its request", LIM(&R, 1, 0), 5);
    CHECK_I64("app at its request", LIM(&R, 1, 1), 5);
    pods[1].max_cpu = 20;
    run_plan(&R, &c, &n, pods, 2);
    CHECK_I64("5m + 5m under max-cpu 20m: target", R.out[1].target, 20);
    CHECK_I64("sidecar on the grid", LIM(&R, 1, 0), 10);
    CHECK_I64("app on the grid", LIM(&R, 1, 1), 10);

    /* The QoS guard where the request wins: both containers pinned
     * (memory limit = request) would be Guaranteed at 5m/5m, so the first
     * of the largest is lifted to its next grid point, 10m: 15m. */
    hr_container pin[] = {CTR(HR_CTR_SIDECAR, 5, HR_NONE, GiB, GiB),
                          CTR(HR_CTR_APP, 5, HR_NONE, GiB, GiB)};
    pods[1] = MKPOD(pin);
    pods[1].max_cpu = 15;
    run_plan(&R, &c, &n, pods, 2);
    CHECK_TRUE("guarded", R.out[1].qos_guarded);
    CHECK_I64("guarded target", R.out[1].target, 15);
    CHECK_I64("lifted to the grid", LIM(&R, 1, 0), 10);
    CHECK_I64("other at its request", LIM(&R, 1, 1), 5);
}

static void test_split_off_grid_requests(void **state)
{
    (void)state;
    /* Sidecar 333 + app 667 (r = 1000) alone on A = 2000, floor 0, mult 0:
     * S = 1000, target 2000. Each container starts at its first grid point
     * (340, 670: 1010) and the 990 left is shared pro-rata in quanta:
     * 329.67 -> 320 and 660.33 -> 660, the last 10 to the one furthest
     * below its share (the sidecar, 9.67 short): 340 + 330 = 670 and
     * 670 + 660 = 1330. */
    hr_config c = defaults();
    c.min_burst_floor = 0;
    c.max_multiplier_milli = 0;
    hr_container cs[] = {SIDECAR(333), APP(667)};
    hr_pod p = MKPOD(cs);
    hr_node n = mknode(2000);
    run_plan(&R, &c, &n, &p, 1);
    CHECK_I64("target", R.out[0].target, 2000);
    CHECK_I64("sidecar", LIM(&R, 0, 0), 670);
    CHECK_I64("app", LIM(&R, 0, 1), 1330);

    /* No slack (A = 1500, an opted-out pod books 600: S = -100): each at
     * its first grid point, 340 + 670. */
    hr_container uc[] = {APP(600)};
    hr_pod two[] = {p, MKPOD(uc)};
    two[1].opted_out = true;
    n = mknode(1500);
    run_plan(&R, &c, &n, two, 2);
    CHECK_I64("no slack: target", R.out[0].target, 1010);
    CHECK_I64("no slack: sidecar", LIM(&R, 0, 0), 340);
    CHECK_I64("no slack: app", LIM(&R, 0, 1), 670);

    /* A container whose LimitRange bound is below its first grid point
     * stays at its request, the other still on the grid: ratio 1.01
     * bounds the sidecar at 336 (< 340) and the app at 673 (-> 670). */
    p.limits.ctr_ratio_milli = 1010;
    n = mknode(2000);
    run_plan(&R, &c, &n, &p, 1);
    CHECK_I64("ratio: sidecar at its request", LIM(&R, 0, 0), 333);
    CHECK_I64("ratio: app at its grid ceiling", LIM(&R, 0, 1), 670);
    CHECK_I64("ratio: target", R.out[0].target, 1003);
}

/* The guard needs no lift when the grid already keeps the limit off the
 * request: 1005m pinned (memory limit = request) on a full node (A = 4000,
 * an opted-out pod books 3500) is written 1010, Burstable as it is. On
 * A = 1000 the cap A' = max(1000, 1005) = 1005 is below 1010: the request
 * wins, 1005 would be Guaranteed, and the guard lifts it to 1010. */
static void test_qos_guard_off_grid_request(void **state)
{
    (void)state;
    hr_config c = defaults();
    hr_container g[] = {CTR(HR_CTR_APP, 1005, HR_NONE, GiB, GiB)};
    hr_container u[] = {APP(3500)};
    hr_pod pods[] = {MKPOD(g), MKPOD(u)};
    pods[1].opted_out = true;
    hr_node n = mknode(1000);
    run_plan(&R, &c, &n, pods, 2);
    CHECK_I64("A = 1000: guarded target", R.out[0].target, 1010);
    CHECK_TRUE("A = 1000: guarded", R.out[0].qos_guarded);
    n = mknode(4000);
    run_plan(&R, &c, &n, pods, 2);
    CHECK_I64("target", R.out[0].target, 1010);
    CHECK_TRUE("not guarded", !R.out[0].qos_guarded);
    CHECK_I64("stays Burstable", hr_pod_qos(&pods[0], &LIM(&R, 0, 0)), HR_QOS_BURSTABLE);
}

/* ---- per-container split ------------------------------------------------ */

static void test_split_pro_rata(void **state)
{
    (void)state;
    /* Sidecar 100 + app 300 (r = 400), an init container of 200 (not
     * resizable, booked but never written), an app container with no CPU
     * request and one with an explicit 0 request (never touched).
     * Alone on A = 4000, floor 0, mult 0: S = 3600, target 4000; pro-rata
     * the sidecar gets 100 + 900 = 1000, the app 300 + 2700 = 3000. */
    hr_config c = defaults();
    c.min_burst_floor = 0;
    c.max_multiplier_milli = 0;
    hr_container cs[] = {
        INIT(200),
        SIDECAR(100),
        APP(300),
        CTR(HR_CTR_APP, HR_NONE, HR_NONE, GiB, HR_NONE),
        CTR(HR_CTR_APP, 0, 500, HR_NONE, HR_NONE),
    };
    hr_pod p = MKPOD(cs);
    hr_node n = mknode(4000);
    run_plan(&R, &c, &n, &p, 1);
    CHECK_I64("request", R.out[0].request, 400);
    CHECK_I64("booked = max(400, 200 + 0)", R.out[0].booked, 400);
    CHECK_I64("target", R.out[0].target, 4000);
    CHECK_I64("init untouched", LIM(&R, 0, 0), HR_NONE);
    CHECK_I64("sidecar", LIM(&R, 0, 1), 1000);
    CHECK_I64("app", LIM(&R, 0, 2), 3000);
    CHECK_I64("no-request container untouched", LIM(&R, 0, 3), HR_NONE);
    CHECK_I64("zero-request container untouched", LIM(&R, 0, 4), HR_NONE);
}

static void test_split_rounding(void **state)
{
    (void)state;
    /* Sidecar 100 + app 200 alone on A = 1300 (floor 0, mult 0): S = 1000,
     * target 1300. Burst shares 333.3 and 666.7 must become 10m multiples
     * that still add up to the target, each within one quantum of its
     * exact share. */
    hr_config c = defaults();
    c.min_burst_floor = 0;
    c.max_multiplier_milli = 0;
    hr_container cs[] = {SIDECAR(100), APP(200)};
    hr_pod p = MKPOD(cs);
    hr_node n = mknode(1300);
    run_plan(&R, &c, &n, &p, 1);
    CHECK_I64("target", R.out[0].target, 1300);
    int64_t b0 = LIM(&R, 0, 0) - 100, b1 = LIM(&R, 0, 1) - 200;
    CHECK_I64("sum", b0 + b1, 1000);
    CHECK_TRUE("sidecar burst in 10m steps", b0 % 10 == 0);
    CHECK_TRUE("app burst in 10m steps", b1 % 10 == 0);
    CHECK_TRUE("sidecar near 333.3", b0 * 3 > 1000 - 30 && b0 * 3 < 1000 + 30);
    CHECK_TRUE("app near 666.7", b1 * 3 > 2000 - 30 && b1 * 3 < 2000 + 30);

    /* The piece on its own. */
    int64_t lim[2] = {-1, -1};
    bool g = true;
    CHECK_I64("hr_split_target total", hr_split_target(&c, &p, 300, 1300, lim, &g), 1300);
    CHECK_I64("hr_split_target sum", lim[0] + lim[1], 1300);
    CHECK_TRUE("not guarded", !g);
}

/* ---- QoS guard ---------------------------------------------------------- */

static void test_qos_guard_single(void **state)
{
    (void)state;
    /* One container, memory limit == request; over-booked node (A = 1000,
     * an opted-out pod books 500 -> S = -500): target = request = 1000, and
     * writing limit 1000 would make the pod Guaranteed. The guard keeps the
     * limit one quantum above: 1010. */
    hr_config c = defaults();
    hr_container g[] = {CTR(HR_CTR_APP, 1000, HR_NONE, GiB, GiB)};
    hr_container u[] = {APP(500)};
    hr_pod pods[] = {MKPOD(g), MKPOD(u)};
    pods[1].opted_out = true;
    CHECK_I64("Burstable before", hr_pod_qos(&pods[0], NULL), HR_QOS_BURSTABLE);
    hr_node n = mknode(1000);
    run_plan(&R, &c, &n, pods, 2);
    CHECK_I64("S", R.np.slack, -500);
    CHECK_I64("target", R.out[0].target, 1010);
    CHECK_I64("container", LIM(&R, 0, 0), 1010);
    CHECK_TRUE("guarded", R.out[0].qos_guarded);
    CHECK_I64("stays Burstable", hr_pod_qos(&pods[0], &LIM(&R, 0, 0)), HR_QOS_BURSTABLE);
    CHECK_I64("would be Guaranteed without the guard", hr_pod_qos(&pods[0], &(int64_t){1000}),
              HR_QOS_GUARANTEED);

    /* Already written (limit 1010): nothing to do — no churn. */
    hr_container g2[] = {CTR(HR_CTR_APP, 1000, 1010, GiB, GiB)};
    pods[0] = MKPOD(g2);
    run_plan(&R, &c, &n, pods, 2);
    CHECK_I64("current", R.out[0].current, 1010);
    CHECK_I64("target again", R.out[0].target, 1010);
    CHECK_TRUE("no write", !R.out[0].write);
}

static void test_qos_guard_two_containers(void **state)
{
    (void)state;
    /* Two containers with memory limit == request, over-booked: exactly one
     * of them is lifted by one quantum (here 25m), the other stays at its
     * request. */
    hr_config c = defaults();
    c.quantum = 25;
    hr_container g[] = {CTR(HR_CTR_SIDECAR, 700, HR_NONE, GiB / 2, GiB / 2),
                        CTR(HR_CTR_APP, 300, HR_NONE, GiB, GiB)};
    hr_pod p = MKPOD(g);
    hr_node n = mknode(900); /* R = 1000 > A */
    run_plan(&R, &c, &n, &p, 1);
    CHECK_I64("target", R.out[0].target, 1025);
    int64_t d0 = LIM(&R, 0, 0) - 700, d1 = LIM(&R, 0, 1) - 300;
    CHECK_TRUE("one container lifted by one quantum",
               (d0 == 25 && d1 == 0) || (d0 == 0 && d1 == 25));
    CHECK_TRUE("guarded", R.out[0].qos_guarded);
    CHECK_I64("stays Burstable", hr_pod_qos(&p, &LIM(&R, 0, 0)), HR_QOS_BURSTABLE);
}

static void test_qos_guard_not_needed(void **state)
{
    (void)state;
    hr_config c = defaults();
    hr_node n = mknode(900);
    /* Memory limit above request: limit == request on CPU keeps Burstable. */
    hr_container a[] = {CTR(HR_CTR_APP, 1000, HR_NONE, GiB, 2 * GiB)};
    hr_pod p = MKPOD(a);
    run_plan(&R, &c, &n, &p, 1);
    CHECK_I64("mem lim > req", R.out[0].target, 1000);
    CHECK_TRUE("not guarded", !R.out[0].qos_guarded);

    /* A second container with no resources at all keeps the pod Burstable
     * whatever the first one gets (every container must be pinned for
     * Guaranteed). */
    hr_container b[] = {CTR(HR_CTR_APP, 1000, HR_NONE, GiB, GiB),
                        CTR(HR_CTR_APP, HR_NONE, HR_NONE, HR_NONE, HR_NONE)};
    hr_pod q = MKPOD(b);
    run_plan(&R, &c, &n, &q, 1);
    CHECK_I64("unpinned neighbour container", R.out[0].target, 1000);
    CHECK_TRUE("not guarded", !R.out[0].qos_guarded);

    /* An init container without limits: Kubernetes' QoS counts init
     * containers too, so the pod cannot turn Guaranteed. */
    hr_container d[] = {INIT(100), CTR(HR_CTR_APP, 1000, HR_NONE, GiB, GiB)};
    hr_pod r = MKPOD(d);
    run_plan(&R, &c, &n, &r, 1);
    CHECK_I64("unpinned init container", R.out[0].target, 1000);
    CHECK_TRUE("not guarded", !R.out[0].qos_guarded);

    /* With slack the burst itself keeps limit > request. */
    hr_node big = mknode(16000);
    hr_container e[] = {CTR(HR_CTR_APP, 1000, HR_NONE, GiB, GiB)};
    hr_pod s = MKPOD(e);
    run_plan(&R, &c, &big, &s, 1);
    CHECK_I64("slack", R.out[0].target, 10000);
    CHECK_TRUE("not guarded", !R.out[0].qos_guarded);
}

static void test_pod_qos(void **state)
{
    (void)state;
    hr_container be[] = {CTR(HR_CTR_APP, HR_NONE, HR_NONE, HR_NONE, HR_NONE)};
    hr_pod p = MKPOD(be);
    CHECK_I64("no resources", hr_pod_qos(&p, NULL), HR_QOS_BEST_EFFORT);
    hr_container bu[] = {APP(100)};
    p = MKPOD(bu);
    CHECK_I64("cpu request only", hr_pod_qos(&p, NULL), HR_QOS_BURSTABLE);
    hr_container mo[] = {CTR(HR_CTR_APP, HR_NONE, HR_NONE, GiB, HR_NONE)};
    p = MKPOD(mo);
    CHECK_I64("memory request only", hr_pod_qos(&p, NULL), HR_QOS_BURSTABLE);
    hr_container gu[] = {CTR(HR_CTR_APP, 500, 500, GiB, GiB),
                         CTR(HR_CTR_SIDECAR, 100, 100, GiB, GiB)};
    p = MKPOD(gu);
    CHECK_I64("all pinned", hr_pod_qos(&p, NULL), HR_QOS_GUARANTEED);
    int64_t ov[2] = {HR_NONE, 200};
    CHECK_I64("override lifts one", hr_pod_qos(&p, ov), HR_QOS_BURSTABLE);
    int64_t keep[2] = {HR_NONE, HR_NONE};
    CHECK_I64("HR_NONE keeps own", hr_pod_qos(&p, keep), HR_QOS_GUARANTEED);
    hr_container cpu_only[] = {CTR(HR_CTR_APP, 500, 500, HR_NONE, HR_NONE)};
    p = MKPOD(cpu_only);
    CHECK_I64("cpu pinned, no memory", hr_pod_qos(&p, NULL), HR_QOS_BURSTABLE);
    CHECK_TRUE("qos names",
               strcmp(hr_qos_str(HR_QOS_BURSTABLE), hr_qos_str(HR_QOS_GUARANTEED)) != 0);
}

/* ---- hysteresis --------------------------------------------------------- */

static void test_hysteresis(void **state)
{
    (void)state;
    hr_config c = defaults();
    CHECK_I64("grow default", c.grow_percent, 10);
    CHECK_I64("shrink default", c.shrink_percent, 5);
    CHECK_TRUE("no limit yet: write", hr_should_write(&c, 0, 1000));
    CHECK_TRUE("no limit yet, tiny target: write", hr_should_write(&c, 0, 1));
    CHECK_TRUE("equal: no", !hr_should_write(&c, 1000, 1000));
    CHECK_TRUE("grow 9%: no", !hr_should_write(&c, 1000, 1090));
    CHECK_TRUE("grow 9.9%: no", !hr_should_write(&c, 1000, 1099));
    CHECK_TRUE("grow 10%: yes", hr_should_write(&c, 1000, 1100));
    CHECK_TRUE("grow 100%: yes", hr_should_write(&c, 1000, 2000));
    CHECK_TRUE("shrink 4%: no", !hr_should_write(&c, 1000, 960));
    CHECK_TRUE("shrink 4.9%: no", !hr_should_write(&c, 1000, 951));
    CHECK_TRUE("shrink 5%: yes", hr_should_write(&c, 1000, 950));
    CHECK_TRUE("shrink 90%: yes", hr_should_write(&c, 1000, 100));
    /* Exact arithmetic, no truncated percentages: 10% of 333 is 33.3, so
     * +33 (9.9%) stays and +34 goes; 5% of 333 is 16.65: -16 stays, -17 goes. */
    CHECK_TRUE("333 -> 366: no", !hr_should_write(&c, 333, 366));
    CHECK_TRUE("333 -> 367: yes", hr_should_write(&c, 333, 367));
    CHECK_TRUE("333 -> 317: no", !hr_should_write(&c, 333, 317));
    CHECK_TRUE("333 -> 316: yes", hr_should_write(&c, 333, 316));
    /* Large values do not overflow the comparison. */
    CHECK_TRUE("huge grow 9%", !hr_should_write(&c, INT64_C(1) << 60,
                                                (INT64_C(1) << 60) + (INT64_C(1) << 60) / 100 * 9));
    CHECK_TRUE(
        "huge grow 11%",
        hr_should_write(&c, INT64_C(1) << 60, (INT64_C(1) << 60) + (INT64_C(1) << 60) / 100 * 11));

    c.grow_percent = 50;
    c.shrink_percent = 20;
    CHECK_TRUE("grow 49.9% of 50: no", !hr_should_write(&c, 1000, 1499));
    CHECK_TRUE("grow 50% of 50: yes", hr_should_write(&c, 1000, 1500));
    CHECK_TRUE("shrink 19.9% of 20: no", !hr_should_write(&c, 1000, 801));
    CHECK_TRUE("shrink 20% of 20: yes", hr_should_write(&c, 1000, 800));

    /* With no deadband any change is written, and no change still is not
     * (design §5: a steady state makes zero writes). */
    c.grow_percent = 0;
    c.shrink_percent = 0;
    CHECK_TRUE("deadband 0, +1: yes", hr_should_write(&c, 1000, 1001));
    CHECK_TRUE("deadband 0, -1: yes", hr_should_write(&c, 1000, 999));
    CHECK_TRUE("deadband 0, equal: no", !hr_should_write(&c, 1000, 1000));
}

static void test_plan_write_verdicts(void **state)
{
    (void)state;
    /* §5.1 node again (floor 0 -> 1000/3000/12000) with current limits:
     * 1000 -> equal, 2800 -> 3000 is +7.1% (stays), 13000 -> 12000 is -7.7%
     * (goes). A pod where one managed container has no limit: current 0,
     * always written. */
    hr_config c = defaults();
    c.min_burst_floor = 0;
    hr_container a[] = {CTR(HR_CTR_APP, 500, 1000, HR_NONE, HR_NONE)};
    hr_container b[] = {CTR(HR_CTR_APP, 1500, 2800, HR_NONE, HR_NONE)};
    hr_container d[] = {CTR(HR_CTR_APP, 3000, 6000, HR_NONE, HR_NONE),
                        CTR(HR_CTR_APP, 3000, 7000, HR_NONE, HR_NONE)};
    hr_pod pods[] = {MKPOD(a), MKPOD(b), MKPOD(d)};
    hr_node n = mknode(16000);
    run_plan(&R, &c, &n, pods, 3);
    CHECK_I64("current a", R.out[0].current, 1000);
    CHECK_I64("current b", R.out[1].current, 2800);
    CHECK_I64("current d", R.out[2].current, 13000);
    CHECK_I64("target a", R.out[0].target, 1000);
    CHECK_I64("target b", R.out[1].target, 3000);
    CHECK_I64("target d", R.out[2].target, 12000);
    CHECK_TRUE("a equal: no write", !R.out[0].write);
    CHECK_TRUE("b +7.1%: no write", !R.out[1].write);
    CHECK_TRUE("d -7.7%: write", R.out[2].write);
    CHECK_I64("n_write", R.np.n_write, 1);
    CHECK_I64("d split evenly", LIM(&R, 2, 0), 6000);
    CHECK_I64("d split evenly", LIM(&R, 2, 1), 6000);

    hr_container e[] = {CTR(HR_CTR_APP, 3000, 6000, HR_NONE, HR_NONE),
                        CTR(HR_CTR_APP, 3000, HR_NONE, HR_NONE, HR_NONE)};
    pods[2] = MKPOD(e);
    run_plan(&R, &c, &n, pods, 3);
    CHECK_I64("one container unlimited: current 0", R.out[2].current, 0);
    CHECK_TRUE("one container unlimited: write", R.out[2].write);
}

/* ---- design §3.1 booked request ------------------------------------------- */

static int64_t booked_of(hr_pod p)
{
    return hr_pod_booked_cpu(&p);
}

static void test_booked_request(void **state)
{
    (void)state;
    hr_container apps[] = {APP(100), APP(200)};
    CHECK_I64("apps sum", booked_of(MKPOD(apps)), 300);

    hr_container sc[] = {SIDECAR(50), APP(100), APP(200)};
    CHECK_I64("sidecar adds", booked_of(MKPOD(sc)), 350);

    hr_container big_init[] = {INIT(1000), APP(100), APP(200)};
    CHECK_I64("init dominates", booked_of(MKPOD(big_init)), 1000);

    hr_container small_init[] = {INIT(250), APP(100), APP(200)};
    CHECK_I64("apps dominate", booked_of(MKPOD(small_init)), 300);

    /* Sidecar 200, init 500, sidecar 300, app 100: steady state 600;
     * the init runs beside the sidecar started before it: 500 + 200 = 700.
     * (Counting the later sidecar would give 1000, ignoring sidecars 600.) */
    hr_container order[] = {SIDECAR(200), INIT(500), SIDECAR(300), APP(100)};
    CHECK_I64("sidecars before the init", booked_of(MKPOD(order)), 700);

    /* Two inits: 400 (no sidecar yet) and 600 (+300 sidecar) -> 900. */
    hr_container two_inits[] = {INIT(400), SIDECAR(300), INIT(600), APP(100)};
    CHECK_I64("max over inits", booked_of(MKPOD(two_inits)), 900);

    hr_container none[] = {CTR(HR_CTR_APP, HR_NONE, HR_NONE, GiB, GiB), APP(300), INIT(HR_NONE)};
    CHECK_I64("unset requests count 0", booked_of(MKPOD(none)), 300);

    hr_pod ov = MKPOD(apps);
    ov.overhead_cpu = 250;
    CHECK_I64("overhead", booked_of(ov), 550);
    hr_pod ovi = MKPOD(big_init);
    ovi.overhead_cpu = 250;
    CHECK_I64("overhead on the init max", booked_of(ovi), 1250);

    hr_pod pl = MKPOD(apps);
    pl.pod_resources = true;
    pl.pod_cpu_req = 2000;
    CHECK_I64("pod-level request", booked_of(pl), 2000);
    pl.overhead_cpu = 100;
    CHECK_I64("pod-level request + overhead", booked_of(pl), 2100);
    hr_pod pm = MKPOD(apps);
    pm.pod_resources = true; /* pod-level resources without a cpu request */
    CHECK_I64("pod-level without cpu", booked_of(pm), 300);

    hr_pod t = MKPOD(apps);
    t.phase = HR_PHASE_SUCCEEDED;
    CHECK_I64("succeeded", booked_of(t), 0);
    CHECK_TRUE("succeeded is terminal", hr_pod_terminal(&t));
    t.phase = HR_PHASE_FAILED;
    CHECK_I64("failed", booked_of(t), 0);
    CHECK_TRUE("failed is terminal", hr_pod_terminal(&t));
    t.phase = HR_PHASE_PENDING;
    CHECK_I64("pending counts", booked_of(t), 300);
    CHECK_TRUE("pending is not terminal", !hr_pod_terminal(&t));
    t.phase = HR_PHASE_UNKNOWN;
    CHECK_I64("unknown counts", booked_of(t), 300);
}

static void test_managed_request_and_current(void **state)
{
    (void)state;
    hr_container cs[] = {INIT(500), SIDECAR(100), APP(300), APP(HR_NONE), APP(0)};
    hr_pod p = MKPOD(cs);
    CHECK_I64("managed request", hr_pod_managed_cpu(&p), 400);

    hr_container lim[] = {CTR(HR_CTR_SIDECAR, 100, 200, HR_NONE, HR_NONE),
                          CTR(HR_CTR_APP, 300, 600, HR_NONE, HR_NONE),
                          CTR(HR_CTR_APP, 0, 5000, HR_NONE, HR_NONE),
                          CTR(HR_CTR_INIT, 100, 900, HR_NONE, HR_NONE)};
    p = MKPOD(lim);
    CHECK_I64("current over managed containers only", hr_pod_current_limit(&p), 800);
    hr_container unl[] = {CTR(HR_CTR_SIDECAR, 100, 200, HR_NONE, HR_NONE), APP(300)};
    p = MKPOD(unl);
    CHECK_I64("any managed container unlimited", hr_pod_current_limit(&p), 0);
}

static void test_plan_accounting(void **state)
{
    (void)state;
    /* What R counts on a node: a terminal pod does not; an ineligible
     * (opted-out) pod and a deleting one do — the core has no deletion
     * flag: the caller passes pods until they are gone, and a pod passed is
     * counted. Sidecar/init/overhead accounting flows into R. */
    hr_config c = defaults();
    hr_container done[] = {APP(8000)};
    hr_container opt[] = {APP(1000)};
    hr_container cplx[] = {SIDECAR(200), INIT(500), APP(100)}; /* booked 700, r = 300 */
    hr_pod pods[] = {MKPOD(done), MKPOD(opt), MKPOD(cplx)};
    pods[0].phase = HR_PHASE_SUCCEEDED;
    pods[1].opted_out = true;
    pods[2].overhead_cpu = 50; /* booked 750 */
    hr_node n = mknode(4000);
    run_plan(&R, &c, &n, pods, 3);
    CHECK_I64("terminal reason", R.out[0].reason, HR_R_TERMINAL);
    CHECK_I64("terminal booked", R.out[0].booked, 0);
    CHECK_I64("terminal target", R.out[0].target, HR_NONE);
    CHECK_I64("opted-out booked", R.out[1].booked, 1000);
    /* "0 when none": whether an unmanaged pod reports 0 or its would-be
     * request is left open by policy.h; it must not be anything else. */
    CHECK_TRUE("opted-out request", R.out[1].request == 0 || R.out[1].request == 1000);
    CHECK_I64("complex booked", R.out[2].booked, 750);
    CHECK_I64("complex request", R.out[2].request, 300);
    CHECK_I64("R", R.np.booked, 1750);
    CHECK_I64("S", R.np.slack, 2250);
    CHECK_I64("M", R.np.managed, 300);
    CHECK_I64("N", R.np.n_managed, 1);
    CHECK_I64("pods counted", R.np.n_pods, 2);
    /* Lone managed pod: 300 + 2250 = 2550 uncapped, 10x = 3000 does not
     * bind; split 200/100 pro-rata: 200 + 1500 = 1700, 100 + 750 = 850. */
    CHECK_I64("target", R.out[2].target, 2550);
    CHECK_I64("sidecar", LIM(&R, 2, 0), 1700);
    CHECK_I64("init untouched", LIM(&R, 2, 1), HR_NONE);
    CHECK_I64("app", LIM(&R, 2, 2), 850);
}

/* ---- factor --------------------------------------------------------------- */

static void test_node_factor(void **state)
{
    (void)state;
    hr_node_plan np = {0};
    np.allocatable = 16000;
    np.booked = 8000;
    np.slack = 8000;
    np.managed = 8000;
    np.n_managed = 3;
    CHECK_I64("1 + 8/8", hr_node_factor_milli(&np), 2000);
    np.slack = 2;
    np.managed = 3;
    CHECK_I64("1 + 2/3 rounds to nearest", hr_node_factor_milli(&np), 1667);
    np.slack = 1;
    CHECK_I64("1 + 1/3", hr_node_factor_milli(&np), 1333);
    np.slack = 0;
    CHECK_I64("S = 0", hr_node_factor_milli(&np), 1000);
    np.slack = -4000;
    CHECK_I64("S < 0", hr_node_factor_milli(&np), 1000);
    np.slack = 8000;
    np.managed = 0;
    np.n_managed = 0;
    CHECK_I64("M = 0", hr_node_factor_milli(&np), 1000);
    np.slack = INT64_C(1) << 50;
    np.managed = 1;
    np.n_managed = 1;
    CHECK_I64("huge, no overflow", hr_node_factor_milli(&np), ((INT64_C(1) << 50) + 1) * 1000);
}

static void test_config_defaults(void **state)
{
    (void)state;
    hr_config c = defaults();
    CHECK_TRUE("no config: not present", !c.present);
    CHECK_TRUE("no config: dry run", c.dry_run);
    CHECK_I64("floor", c.min_burst_floor, 1000);
    CHECK_I64("multiplier", c.max_multiplier_milli, 10000);
    CHECK_I64("quantum", c.quantum, 10);
    CHECK_I64("debounce", c.debounce_ms, 2000);
    CHECK_I64("pps", c.per_node_pps, 10);
    CHECK_I64("qps", c.client_qps, 50);
    CHECK_I64("burst", c.client_burst, 100);
    CHECK_TRUE("webhook", c.webhook_enabled);
    CHECK_I64("initial multiplier", c.initial_multiplier_milli, 2000);
    CHECK_TRUE("defaults valid", hr_config_validate(&c) == NULL);

    hr_config b = c;
    b.grow_percent = 101;
    CHECK_TRUE("grow 101 invalid", hr_config_validate(&b) != NULL);
    b = c;
    b.shrink_percent = -1;
    CHECK_TRUE("shrink -1 invalid", hr_config_validate(&b) != NULL);
    b = c;
    b.max_multiplier_milli = 100001;
    CHECK_TRUE("multiplier > 100 invalid", hr_config_validate(&b) != NULL);
    b.max_multiplier_milli = 100000;
    CHECK_TRUE("multiplier 100 valid", hr_config_validate(&b) == NULL);
    b = c;
    b.initial_multiplier_milli = 100001;
    CHECK_TRUE("initial multiplier > 100 invalid", hr_config_validate(&b) != NULL);
    b = c;
    b.per_node_pps = 0;
    CHECK_TRUE("pps 0 invalid", hr_config_validate(&b) != NULL);
    b = c;
    b.client_qps = 0;
    CHECK_TRUE("qps 0 invalid", hr_config_validate(&b) != NULL);
    b = c;
    b.client_burst = 0;
    CHECK_TRUE("burst 0 invalid", hr_config_validate(&b) != NULL);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_worked_example_no_floor),
        cmocka_unit_test(test_worked_example_default_floor),
        cmocka_unit_test(test_floor_design_5_2),
        cmocka_unit_test(test_pod_target_direct),
        cmocka_unit_test(test_overbooked_targets_are_requests),
        cmocka_unit_test(test_cap_multiplier),
        cmocka_unit_test(test_multiplier_zero_disables),
        cmocka_unit_test(test_cap_max_cpu_annotation),
        cmocka_unit_test(test_cap_limitrange),
        cmocka_unit_test(test_limit_bounds_merge),
        cmocka_unit_test(test_limitrange_split_monotone),
        cmocka_unit_test(test_quantum_nearest),
        cmocka_unit_test(test_quantum_never_above_cap_or_below_request),
        cmocka_unit_test(test_quantum_target_on_grid),
        cmocka_unit_test(test_quantum_request_wins_over_grid),
        cmocka_unit_test(test_split_off_grid_requests),
        cmocka_unit_test(test_qos_guard_off_grid_request),
        cmocka_unit_test(test_split_pro_rata),
        cmocka_unit_test(test_split_rounding),
        cmocka_unit_test(test_qos_guard_single),
        cmocka_unit_test(test_qos_guard_two_containers),
        cmocka_unit_test(test_qos_guard_not_needed),
        cmocka_unit_test(test_pod_qos),
        cmocka_unit_test(test_hysteresis),
        cmocka_unit_test(test_plan_write_verdicts),
        cmocka_unit_test(test_booked_request),
        cmocka_unit_test(test_managed_request_and_current),
        cmocka_unit_test(test_plan_accounting),
        cmocka_unit_test(test_node_factor),
        cmocka_unit_test(test_config_defaults),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
