/*
 * test_tenant_table.c — hand-computed tables for the TenantFair policy
 * (design §2.9) and the namespace weight label it reads.
 *
 * Each expected value is derived in the comment next to it from design
 * §2.9's formulas, never read back from the code. The worked example
 * of §2.9: 16 cores, one namespace with five pods and one with
 * one; then with weights; then where the floor binds and where the
 * tenant's share bounds it.
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
#include "core/podctx.h"
#include "core/policy.h"
#include "core/tenant.h"
#include "hr_check.h"
#include "hr_fixture.h"

static hr_config tenant_fair(void)
{
    hr_config c;
    hr_config_defaults(&c);
    c.policy = HR_POLICY_TENANT_FAIR;
    return c;
}

static plan_result R; /* big: keep it off the stack */

static hr_pod in_ns(hr_pod p, const char *ns, uint32_t weight)
{
    p.tenant = ns;
    p.tenant_weight = weight;
    return p;
}

static void check_targets(const char *what, const int64_t *want, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        char label[96];
        snprintf(label, sizeof label, "%s: pod %zu target", what, i);
        CHECK_I64(label, R.out[i].target, want[i]);
        CHECK_I64(label, LIM(&R, i, 0), want[i]);
    }
}

/* Five 1000m pods of team-a (M_a = 5000) and one 1000m pod of team-b (M_b =
 * 1000) on 16 cores: R = 6000, S = 10000. */
static size_t five_and_one(hr_pod *pods, hr_container *ctr, uint32_t wb)
{
    for (size_t i = 0; i < 6; i++) {
        ctr[i] = (hr_container)APP(1000);
        pods[i] = in_ns(mkpod(&ctr[i], 1), i < 5 ? "team-a" : "team-b", i < 5 ? 1 : wb);
    }
    return 6;
}

static void test_five_and_one_equal(void **state)
{
    (void)state;
    hr_config c = tenant_fair();
    hr_container ctr[6];
    hr_pod pods[6];
    hr_node n = mknode(16000);
    /* W = 2: S_a = S_b = ⌊10000 · 1/2⌋ = 5000.
     * team-a: burst = max(5000 · 1000/5000, min(1000, 5000/5)) = max(1000, 1000)
     *   = 1000 → 2000 each.
     * team-b: burst = max(5000 · 1000/1000, min(1000, 5000)) = 5000 → 6000.
     * Caps: 10 × request = 10000 ≥ each; A = 16000. Quantum 10m: on the grid.
     * (Proportional gives all six 1000 + 10000/6 = 2666.7 → 2670.) */
    run_plan(&R, &c, &n, pods, five_and_one(pods, ctr, 1));
    CHECK_I64("S", R.np.slack, 10000);
    CHECK_I64("tenants", R.np.n_tenants, 2);
    CHECK_I64("W", R.np.weight_total, 2);
    const int64_t want[] = {2000, 2000, 2000, 2000, 2000, 6000};
    check_targets("equal weights", want, 6);
    for (size_t i = 0; i < 6; i++) {
        CHECK_I64("share", R.out[i].share, 5000);
        CHECK_I64("share managed", R.out[i].share_managed, i < 5 ? 5000 : 1000);
        CHECK_I64("share n", R.out[i].share_n, i < 5 ? 5 : 1);
        CHECK_I64("weight", R.out[i].weight, 1);
        CHECK_I64("tenant head", R.out[i].tenant, i < 5 ? 0 : 5);
    }
    /* The same node under Proportional, for contrast (design §2.2). */
    c.policy = HR_POLICY_PROPORTIONAL;
    run_plan(&R, &c, &n, pods, 6);
    const int64_t prop[] = {2670, 2670, 2670, 2670, 2670, 2670};
    check_targets("proportional", prop, 6);
}

static void test_five_and_one_weighted(void **state)
{
    (void)state;
    hr_config c = tenant_fair();
    hr_container ctr[6];
    hr_pod pods[6];
    hr_node n = mknode(16000);
    /* team-b has weight 3: W = 4, S_a = ⌊10000/4⌋ = 2500, S_b = ⌊30000/4⌋ = 7500.
     * team-a: max(2500 · 1000/5000 = 500, min(1000, 2500/5 = 500)) = 500 → 1500.
     * team-b: max(7500, min(1000, 7500)) = 7500 → 8500 (10 × r = 10000 above). */
    run_plan(&R, &c, &n, pods, five_and_one(pods, ctr, 3));
    CHECK_I64("W", R.np.weight_total, 4);
    const int64_t want[] = {1500, 1500, 1500, 1500, 1500, 8500};
    check_targets("team-b weight 3", want, 6);
    CHECK_I64("S_a", R.out[0].share, 2500);
    CHECK_I64("S_b", R.out[5].share, 7500);
    CHECK_I64("w_b", R.out[5].weight, 3);

    /* The order of the pods does not matter: team-b first. */
    hr_pod rev[6];
    for (size_t i = 0; i < 6; i++)
        rev[i] = pods[5 - i];
    run_plan(&R, &c, &n, rev, 6);
    const int64_t want_rev[] = {8500, 1500, 1500, 1500, 1500, 1500};
    check_targets("reversed", want_rev, 6);
}

static void test_floor_within_share(void **state)
{
    (void)state;
    hr_config c = tenant_fair();
    c.max_multiplier_milli = 0; /* no 10× cap, so the floor shows */
    hr_node n = mknode(16000);

    /* team-a: two 10m pods and one 980m pod (M_a = 1000, N_a = 3); team-b:
     * one 5000m pod. R = 6000, S = 10000, S_a = S_b = 5000.
     * team-a's floor: min(minBurstFloor 1000, S_a/N_a = 1666) = 1000.
     *   10m pods: max(5000 · 10/1000 = 50, 1000) = 1000 → 1010 (the floor binds).
     *   980m pod: max(4900, 1000) = 4900 → 5880.
     * team-b: max(5000, min(1000, 5000)) = 5000 → 10000. */
    hr_container a1[] = {APP(10)}, a2[] = {APP(10)}, a3[] = {APP(980)}, b1[] = {APP(5000)};
    hr_pod pods[] = {in_ns(MKPOD(a1), "team-a", 1), in_ns(MKPOD(a2), "team-a", 1),
                     in_ns(MKPOD(a3), "team-a", 1), in_ns(MKPOD(b1), "team-b", 1)};
    run_plan(&R, &c, &n, pods, 4);
    const int64_t want[] = {1010, 1010, 5880, 10000};
    check_targets("floor binds", want, 4);

    /* team-a brings ten 10m pods instead (M_a = 100, N_a = 10); team-b one
     * 5900m pod. R = 6000, S = 10000, S_a = S_b = 5000.
     * team-a's floor is cut by its share: min(1000, 5000/10 = 500) = 500;
     *   proportional 5000 · 10/100 = 500: burst 500 → 510 each (Σ bursts 5000 = S_a).
     * team-b: 5900 + 5000 = 10900.
     * Under Proportional the floor is min(1000, S/N = 10000/11 = 909): each 10m
     * pod 919 → 920, so ten pods take 9090 of burst, nearly the whole node's
     * slack beside team-b's proportional 9833 (5900 → 15733 → 15730). */
    hr_container ctr[11];
    hr_pod many[11];
    for (size_t i = 0; i < 10; i++) {
        ctr[i] = (hr_container)APP(10);
        many[i] = in_ns(mkpod(&ctr[i], 1), "team-a", 1);
    }
    ctr[10] = (hr_container)APP(5900);
    many[10] = in_ns(mkpod(&ctr[10], 1), "team-b", 1);
    run_plan(&R, &c, &n, many, 11);
    int64_t want_many[11];
    for (size_t i = 0; i < 10; i++)
        want_many[i] = 510;
    want_many[10] = 10900;
    check_targets("floor within the share", want_many, 11);

    c.policy = HR_POLICY_PROPORTIONAL;
    run_plan(&R, &c, &n, many, 11);
    for (size_t i = 0; i < 10; i++)
        want_many[i] = 920;
    want_many[10] = 15730;
    check_targets("proportional farms the floor", want_many, 11);
}

static void test_one_namespace_is_proportional(void **state)
{
    (void)state;
    /* design §2.7's node in one namespace, whatever its weight: W = w_t, S_t = S,
     * M_t = M, N_t = N, so TenantFair is Proportional: 500/1500/6000 on 16
     * cores → 1000/3000/12000 (floor 0) and 1500/3000/12000 (floor 1000). */
    hr_config c = tenant_fair();
    c.min_burst_floor = 0;
    hr_container a[] = {APP(500)}, b[] = {APP(1500)}, d[] = {APP(6000)};
    hr_pod pods[] = {in_ns(MKPOD(a), "solo", 7), in_ns(MKPOD(b), "solo", 7),
                     in_ns(MKPOD(d), "solo", 7)};
    hr_node n = mknode(16000);
    run_plan(&R, &c, &n, pods, 3);
    const int64_t want[] = {1000, 3000, 12000};
    check_targets("floor 0", want, 3);
    c.min_burst_floor = 1000;
    run_plan(&R, &c, &n, pods, 3);
    const int64_t want_floor[] = {1500, 3000, 12000};
    check_targets("floor 1000", want_floor, 3);
}

static void test_no_slack(void **state)
{
    (void)state;
    /* 4 cores, team-a 3000m + team-b 1500m: S = −500 ≤ 0, every share 0,
     * targets = requests. */
    hr_config c = tenant_fair();
    hr_container a[] = {APP(3000)}, b[] = {APP(1500)};
    hr_pod pods[] = {in_ns(MKPOD(a), "team-a", 1), in_ns(MKPOD(b), "team-b", 5)};
    hr_node n = mknode(4000);
    run_plan(&R, &c, &n, pods, 2);
    const int64_t want[] = {3000, 1500};
    check_targets("over-booked", want, 2);
    CHECK_I64("share a", R.out[0].share, 0);
    CHECK_I64("share b", R.out[1].share, 0);
}

static void test_unmanaged_books_but_is_no_tenant(void **state)
{
    (void)state;
    /* team-a 1000m managed; team-c 2000m opted out (books, gets nothing, is
     * no tenant); 8 cores: R = 3000, S = 5000, W = 1 (team-c has no managed
     * pod), S_a = 5000 → team-a 6000. */
    hr_config c = tenant_fair();
    hr_container a[] = {APP(1000)}, x[] = {APP(2000)};
    hr_pod pods[] = {in_ns(MKPOD(a), "team-a", 1), in_ns(MKPOD(x), "team-c", 1)};
    pods[1].opted_out = true;
    hr_node n = mknode(8000);
    run_plan(&R, &c, &n, pods, 2);
    CHECK_I64("tenants", R.np.n_tenants, 1);
    CHECK_I64("team-a", R.out[0].target, 6000);
    CHECK_I64("team-c", R.out[1].target, HR_NONE);
}

static void test_weight_label(void **state)
{
    (void)state;
    struct {
        const char *v;
        uint32_t want;
        bool invalid;
    } rows[] = {
        {NULL, 1, false},
        {"1", 1, false},
        {"3", 3, false},
        {"007", 7, false},
        {"1000000", 1000000, false},
        {"1000001", 1, true},
        {"0", 1, true},
        {"", 1, true},
        {"-2", 1, true},
        {"+2", 1, true},
        {"2.5", 1, true},
        {" 2", 1, true},
        {"2 ", 1, true},
        {"1e3", 1, true},
        {"high", 1, true},
        {"99999999999999999999999", 1, true},
    };
    for (size_t i = 0; i < sizeof rows / sizeof rows[0]; i++) {
        bool invalid = !rows[i].invalid;
        uint32_t w = hr_tenant_weight_parse(rows[i].v, &invalid);
        char label[96];
        snprintf(label, sizeof label, "weight of \"%s\"", rows[i].v ? rows[i].v : "(none)");
        CHECK_I64(label, w, rows[i].want);
        CHECK_I64(label, invalid, rows[i].invalid);
    }

    /* Through the pod-in-context builder: the namespace is the tenant, its
     * label the weight; an invalid label reads as 1 and says so. */
    hr_config c = tenant_fair();
    const char *kv[] = {"kube-headroom.dev/mode", "managed", "kube-headroom.dev/weight", "4"};
    hr_labels l = {kv, 2};
    hr_container ct[] = {APP(100)};
    hr_pod bare = MKPOD(ct);
    hr_pod_ctx cx = {.cfg = &c, .ns = "team-a", .ns_labels = &l, .limits = HR_LIMIT_BOUNDS_NONE};
    hr_pod p = hr_pod_in_context(&bare, &cx);
    CHECK_TRUE("tenant", p.tenant != NULL && strcmp(p.tenant, "team-a") == 0);
    CHECK_I64("weight", p.tenant_weight, 4);
    CHECK_TRUE("valid", !p.tenant_weight_invalid);
    kv[3] = "lots";
    p = hr_pod_in_context(&bare, &cx);
    CHECK_I64("invalid weight", p.tenant_weight, 1);
    CHECK_TRUE("invalid reported", p.tenant_weight_invalid);
    /* A weight kept parsed by the caller (the cache) wins over the labels. */
    cx.ns_weight = 9;
    p = hr_pod_in_context(&bare, &cx);
    CHECK_I64("parsed weight", p.tenant_weight, 9);
    CHECK_TRUE("parsed valid", !p.tenant_weight_invalid);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_five_and_one_equal),
        cmocka_unit_test(test_five_and_one_weighted),
        cmocka_unit_test(test_floor_within_share),
        cmocka_unit_test(test_one_namespace_is_proportional),
        cmocka_unit_test(test_no_slack),
        cmocka_unit_test(test_unmanaged_books_but_is_no_tenant),
        cmocka_unit_test(test_weight_label),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
