/*
 * test_group.c — one ceiling for a group (design §2.10): hand-computed
 * tables, then properties on 10,000 random groups each.
 *
 * The tables derive each expected value in the comment next to it from
 * §2.10's formulas: the four-member group of §2.10's worked example (the
 * e2e and the golden use the same nodes), members of different requests, the
 * deadband on the group's value, and the key. The properties check, on
 * random groups whose members are planned on random nodes by
 * hr_plan_node: a member is never below its request nor above what it
 * would get alone; every member is at the group's ratio within one
 * quantum; the answer does not depend on the order of the members;
 * adding a member never raises another; a group of one is exactly the
 * policy of §2 (target, limits, verdict). HR_SEED replays a run (the seed
 * is printed).
 */
#include <inttypes.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <cmocka.h>

#include "core/config.h"
#include "core/group.h"
#include "core/pod.h"
#include "core/policy.h"
#include "core/wide.h"
#include "hr_check.h"
#include "hr_fixture.h"
#include "hr_prop.h"

/* ------------------------------------------------------------- tables */

/* One member planned alone on a node of allocatable A where `booked`
 * other CPU is already booked by unmanaged pods: its own target. */
static int64_t own_target(const hr_config *c, int64_t A, int64_t booked, const hr_pod *p)
{
    int64_t r = hr_pod_managed_cpu(p);
    return hr_pod_target(c, A, A - booked - r, r, 1, p, r, NULL);
}

typedef struct group {
    hr_container ctr[8];
    hr_pod pods[8];
    hr_group_member m[8];
    hr_group_member_out out[8];
    int64_t lim[8];
    int64_t *limp[8];
    hr_group_result res;
} group;

static group GG;

static void member(group *g, size_t i, const hr_config *c, int64_t req, int64_t A, int64_t booked,
                   int64_t current, const char *name)
{
    g->ctr[i] =
        (hr_container){req, current > 0 ? current : HR_NONE, HR_NONE, HR_NONE, HR_CTR_APP, false};
    g->pods[i] = mkpod(&g->ctr[i], 1);
    g->m[i] = (hr_group_member){
        &g->pods[i], req, own_target(c, A, booked, &g->pods[i]), current > 0 ? current : 0, "ml",
        name,        NULL};
    g->limp[i] = &g->lim[i];
}

/* Design §2.10's worked example: four members of 2000m on 16-core nodes booked 0, 2, 4
 * and 6 cores by others. Alone: S = 16000 − B − 2000, t = 2000 + S capped
 * at r·10 = 20000 and A = 16000: 16000 (ratio 8), 14000 (7), 12000 (6),
 * 10000 (5). The group: ρ = 5 (worker-3), every member 10000m. A 8000m
 * neighbour on worker-0's node: S = 6000, t = 8000, ρ = 4: all 8000m. */
static void test_worked_example(void **state)
{
    (void)state;
    hr_config c;
    hr_config_defaults(&c);
    static const int64_t booked[4] = {0, 2000, 4000, 6000};
    static const char *const names[4] = {"worker-0", "worker-1", "worker-2", "worker-3"};
    static const int64_t alone[4] = {16000, 14000, 12000, 10000};
    for (size_t i = 0; i < 4; i++) {
        member(&GG, i, &c, 2000, 16000, booked[i], 0, names[i]);
        assert_int_equal(GG.m[i].own_target, alone[i]);
    }
    hr_group_plan(&c, GG.m, 4, GG.limp, GG.out, &GG.res);
    assert_int_equal(GG.res.binding, 3);
    assert_int_equal(GG.res.ratio_milli, 5000);
    assert_false(GG.res.held_known);
    assert_true(GG.res.moves);
    for (size_t i = 0; i < 4; i++) {
        assert_int_equal(GG.out[i].target, 10000);
        assert_int_equal(GG.out[i].total, 10000);
        assert_int_equal(GG.lim[i], 10000);
        assert_true(GG.out[i].write);
    }
    /* Written: every member has 10000m. Nothing changed: nothing moves. */
    for (size_t i = 0; i < 4; i++)
        member(&GG, i, &c, 2000, 16000, booked[i], 10000, names[i]);
    hr_group_plan(&c, GG.m, 4, GG.limp, GG.out, &GG.res);
    assert_false(GG.res.moves);
    for (size_t i = 0; i < 4; i++)
        assert_false(GG.out[i].write);
    /* The neighbour on worker-0's node. */
    member(&GG, 0, &c, 2000, 16000, 8000, 10000, names[0]);
    assert_int_equal(GG.m[0].own_target, 8000);
    hr_group_plan(&c, GG.m, 4, GG.limp, GG.out, &GG.res);
    assert_int_equal(GG.res.binding, 0);
    assert_int_equal(GG.res.ratio_milli, 4000);
    assert_true(GG.res.moves); /* 10000 → 8000 is 20%, beyond the 5% shrink band */
    for (size_t i = 0; i < 4; i++) {
        assert_int_equal(GG.out[i].total, 8000);
        assert_true(GG.out[i].write);
    }
}

/* Different requests, the same ratio: 500m, 1000m, 3330m on 16-core nodes
 * booked 2000 by others. Alone: 500m: S = 13500, raw 14000, cap 5000 →
 * 5000 (10); 1000m: cap 10000 (10); 3330m: S = 10670, raw 14000 (≈4.2).
 * ρ = 14000/3330; 500m: ⌊500·14000/3330⌋ = 2102 → 2100; 1000m: 4204 →
 * 4200; 3330m: its own 14000. */
static void test_ratio_to_request(void **state)
{
    (void)state;
    hr_config c;
    hr_config_defaults(&c);
    member(&GG, 0, &c, 500, 16000, 2000, 0, "a");
    member(&GG, 1, &c, 1000, 16000, 2000, 0, "b");
    member(&GG, 2, &c, 3330, 16000, 2000, 0, "c");
    assert_int_equal(GG.m[0].own_target, 5000);
    assert_int_equal(GG.m[1].own_target, 10000);
    assert_int_equal(GG.m[2].own_target, 14000);
    hr_group_plan(&c, GG.m, 3, GG.limp, GG.out, &GG.res);
    assert_int_equal(GG.res.binding, 2);
    assert_int_equal(GG.out[0].total, 2100);
    assert_int_equal(GG.out[1].total, 4200);
    assert_int_equal(GG.out[2].total, 14000);
}

/* The deadband is on the group's value: members at 10000m (ratio 5) and a
 * node that moves one member's own ratio to 4.9 (t = 9800): 2% below, inside
 * the 5% shrink band, so nothing is written, though that member's own
 * target moved. A new member with no limit yet is written at ρ. */
static void test_group_deadband(void **state)
{
    (void)state;
    hr_config c;
    hr_config_defaults(&c);
    member(&GG, 0, &c, 2000, 16000, 4200, 10000, "a"); /* S = 9800: t = 11800 */
    member(&GG, 1, &c, 2000, 16000, 6200, 10000, "b"); /* S = 7800: t = 9800 */
    member(&GG, 2, &c, 2000, 16000, 0, 0, "c");        /* new, no limit */
    hr_group_plan(&c, GG.m, 3, GG.limp, GG.out, &GG.res);
    assert_int_equal(GG.res.binding, 1);
    assert_false(GG.res.moves);
    assert_false(GG.out[0].write);
    assert_false(GG.out[1].write);
    assert_true(GG.out[2].write);
    assert_int_equal(GG.out[2].total, 9800);
    /* 6% lower (t = 9400): beyond the band, the whole group moves. */
    member(&GG, 1, &c, 2000, 16000, 6600, 10000, "b");
    hr_group_plan(&c, GG.m, 3, GG.limp, GG.out, &GG.res);
    assert_true(GG.res.moves);
    for (size_t i = 0; i < 3; i++) {
        assert_int_equal(GG.out[i].total, 9400);
        assert_true(GG.out[i].write);
    }
}

/* Members in different node pools (design §2.11): each member's grid is
 * its own node's. a (top level, quantum 10m): 2000m on a 16-core node
 * booked 6000 by others, alone 10000 (ratio 5, binding). b, in a pool with
 * quantum 1000m: 1300m on an empty node (alone 13000 on its grid); at
 * ρ = 5, 6500 falls to 6000 on its own grid of whole cores (6500 stays on
 * the top level's 10m grid). */
static void test_members_in_pools(void **state)
{
    (void)state;
    hr_config top, pool;
    hr_config_defaults(&top);
    hr_config_defaults(&pool);
    pool.quantum = 1000;
    member(&GG, 0, &top, 2000, 16000, 6000, 0, "a");
    member(&GG, 1, &pool, 1300, 16000, 0, 0, "b");
    GG.m[1].cfg = &pool;
    assert_int_equal(GG.m[0].own_target, 10000);
    hr_group_plan(&top, GG.m, 2, GG.limp, GG.out, &GG.res);
    assert_int_equal(GG.res.binding, 0);
    assert_int_equal(GG.out[0].total, 10000);
    assert_int_equal(GG.out[1].total, 6000);
    GG.m[1].cfg = NULL;
}

static void test_key(void **state)
{
    (void)state;
    char buf[128];
    assert_true(hr_group_key("ml", true, NULL, "u-1", true, buf, sizeof buf));
    assert_string_equal(buf, "ml/owner:u-1");
    assert_true(hr_group_key("ml", true, "train-a", "u-1", true, buf, sizeof buf));
    assert_string_equal(buf, "ml/label:train-a");
    assert_true(hr_group_key("ml", true, "", "u-1", true, buf, sizeof buf));
    assert_string_equal(buf, "ml/owner:u-1");
    assert_false(hr_group_key("ml", false, "train-a", "u-1", true, buf, sizeof buf));
    assert_false(
        hr_group_key("ml", true, NULL, "u-1", false, buf, sizeof buf)); /* not controller */
    assert_false(hr_group_key("ml", true, NULL, NULL, true, buf, sizeof buf));
    assert_false(hr_group_key("ml", true, "train-a", NULL, false, buf, 8)); /* does not fit */
    assert_true(hr_group_uniform_value("true"));
    assert_false(hr_group_uniform_value("True"));
    assert_false(hr_group_uniform_value("yes"));
    assert_false(hr_group_uniform_value(NULL));
}

/* --------------------------------------------------------- properties */

#define CASES 10000
#define MAXM 12
#define FILL 6

static const char *const NAMES[MAXM] = {"p0", "p1", "p2", "p3", "p4",  "p5",
                                        "p6", "p7", "p8", "p9", "p10", "p11"};

/* A member and its own node: the member is pod 0 of FILL + 1 pods. */
typedef struct rmember {
    hr_container ctr[2 + FILL];
    hr_pod pods[1 + FILL];
    size_t n_pods;
    hr_node node;
    hr_node_plan np;
    hr_pod_plan pp[1 + FILL];
    int64_t plim[2 + FILL];
} rmember;

typedef struct rgroup {
    hr_config c;
    size_t n;
    rmember mem[MAXM];
    hr_group_member m[MAXM];
    hr_group_member_out out[MAXM];
    int64_t lim[MAXM][2];
    int64_t *limp[MAXM];
    hr_group_result res;
} rgroup;

static rgroup RG, RH;

static int64_t rand_req(void)
{
    if (below(4) == 0)
        return 10 * between(1, 400);
    return between(1, 1 << (int)between(3, 13));
}

/* Plan member k on a random node; its current limit random (0: none). */
static void rand_member(rgroup *g, size_t k)
{
    rmember *rm = &g->mem[k];
    size_t nc = (size_t)between(1, 2), ci = 0;
    int64_t cur = below(3) == 0 ? 0 : 1;
    for (size_t j = 0; j < nc; j++) {
        int64_t r = rand_req();
        rm->ctr[ci++] = (hr_container){
            r, cur ? r + below(4 * r + 100) : HR_NONE, HR_NONE, HR_NONE, HR_CTR_APP, false};
    }
    rm->pods[0] = mkpod(rm->ctr, (uint32_t)nc);
    if (below(10) == 0)
        rm->pods[0].max_cpu = rand_req();
    rm->n_pods = 1 + (size_t)below(FILL + 1);
    for (size_t i = 1; i < rm->n_pods; i++) {
        rm->ctr[ci] = (hr_container){rand_req(), HR_NONE, HR_NONE, HR_NONE, HR_CTR_APP, false};
        rm->pods[i] = mkpod(&rm->ctr[ci++], 1);
        if (below(2) == 0)
            rm->pods[i].opted_out = true;
    }
    rm->node = mknode(below(3) == 0 ? between(0, 40000) : 1000 * between(1, 64));
    rm->np = hr_plan_node(&g->c, &rm->node, rm->pods, rm->n_pods, rm->pp, rm->plim);
    const hr_pod_plan *pp = &rm->pp[0];
    int64_t own = hr_pod_target(&g->c, rm->node.allocatable, pp->share, pp->share_managed,
                                pp->share_n, &rm->pods[0], pp->request, NULL);
    g->m[k] = (hr_group_member){&rm->pods[0], pp->request, own, pp->current, "ns", NAMES[k], NULL};
    g->limp[k] = g->lim[k];
}

static void rand_group(rgroup *g, size_t n)
{
    hr_config_defaults(&g->c);
    static const int64_t quanta[] = {1, 5, 10, 10, 25, 100};
    g->c.quantum = quanta[below(6)];
    g->c.grow_percent = (int)below(101);
    g->c.shrink_percent = (int)below(101);
    g->c.min_burst_floor = below(2) ? 1000 : below(3000);
    g->c.max_multiplier_milli = below(4) == 0 ? 0 : between(1000, 20000);
    g->n = n;
    for (size_t k = 0; k < n; k++)
        rand_member(g, k);
}

static void plan(rgroup *g)
{
    hr_group_plan(&g->c, g->m, g->n, g->limp, g->out, &g->res);
}

/* Re-point a copy's pointers into itself. */
static void copy_group(rgroup *dst, const rgroup *src)
{
    memcpy(dst, src, sizeof *dst);
    for (size_t k = 0; k < MAXM; k++) {
        rmember *rm = &dst->mem[k];
        size_t ci = rm->pods[0].n_ctr;
        rm->pods[0].ctr = rm->ctr;
        for (size_t i = 1; i < rm->n_pods; i++)
            rm->pods[i].ctr = &rm->ctr[ci++];
        dst->limp[k] = dst->lim[k];
    }
}

static void prop_bounds(void)
{
    for (int k = 0; k < CASES; k++) {
        hr_prop_start("bounds", k);
        rand_group(&RG, (size_t)between(1, MAXM));
        plan(&RG);
        int64_t q = RG.c.quantum;
        const hr_group_member *b = &RG.m[RG.res.binding];
        for (size_t i = 0; i < RG.n; i++) {
            const hr_group_member *m = &RG.m[i];
            int64_t t = RG.out[i].target;
            if (t < m->request || RG.out[i].total < m->request)
                PFAIL("member %zu below its request: %" PRId64 " < %" PRId64, i, t, m->request);
            if (t > m->own_target)
                PFAIL("member %zu above its own target: %" PRId64 " > %" PRId64, i, t,
                      m->own_target);
            /* The group's ratio to within one quantum: r_i·ρ − q < T_i ≤ r_i·ρ
             * unless its own target or its grid floor is in the way. */
            int64_t v = (int64_t)((hr_i128)m->request * b->own_target / b->request);
            int64_t g = hr_pod_grid_floor(&RG.c, m->pod, m->request);
            if (t != m->own_target && t > g && (t > v || t + q <= v))
                PFAIL("member %zu off the ratio: %" PRId64 " for r·ρ = %" PRId64, i, t, v);
            /* ρ is the smallest own ratio. */
            if ((hr_i128)m->own_target * b->request < (hr_i128)b->own_target * m->request)
                PFAIL("member %zu has a smaller own ratio than the binding one", i);
        }
    }
}

static void prop_determinism(void)
{
    for (int k = 0; k < CASES; k++) {
        hr_prop_start("determinism", k);
        rand_group(&RG, (size_t)between(2, MAXM));
        plan(&RG);
        copy_group(&RH, &RG);
        /* Shuffle RH's members (Fisher–Yates over the member records). */
        for (size_t i = RH.n - 1; i > 0; i--) {
            size_t j = (size_t)below((int64_t)i + 1);
            hr_group_member t = RH.m[i];
            RH.m[i] = RH.m[j];
            RH.m[j] = t;
        }
        plan(&RH);
        if (strcmp(RG.m[RG.res.binding].name, RH.m[RH.res.binding].name) != 0)
            PFAIL("binding member %s, shuffled %s", RG.m[RG.res.binding].name,
                  RH.m[RH.res.binding].name);
        for (size_t i = 0; i < RH.n; i++) {
            size_t o = 0;
            while (strcmp(RG.m[o].name, RH.m[i].name) != 0)
                o++;
            if (RG.out[o].total != RH.out[i].total || RG.out[o].write != RH.out[i].write)
                PFAIL("member %s: %" PRId64 "/%d, shuffled %" PRId64 "/%d", RH.m[i].name,
                      RG.out[o].total, RG.out[o].write, RH.out[i].total, RH.out[i].write);
        }
    }
}

static void prop_monotone(void)
{
    for (int k = 0; k < CASES; k++) {
        hr_prop_start("monotone", k);
        rand_group(&RG, (size_t)between(1, MAXM - 1));
        plan(&RG);
        copy_group(&RH, &RG);
        rand_member(&RH, RH.n);
        RH.n++;
        plan(&RH);
        for (size_t i = 0; i + 1 < RH.n; i++)
            if (RH.out[i].target > RG.out[i].target)
                PFAIL("member %zu raised by a new member: %" PRId64 " → %" PRId64, i,
                      RG.out[i].target, RH.out[i].target);
    }
}

static void prop_single(void)
{
    for (int k = 0; k < CASES; k++) {
        hr_prop_start("single", k);
        rand_group(&RG, 1);
        plan(&RG);
        const hr_pod_plan *pp = &RG.mem[0].pp[0];
        if (pp->reason != HR_MANAGED)
            continue;
        if (RG.out[0].total != pp->target || RG.out[0].write != pp->write)
            PFAIL("alone %" PRId64 "/%d, the policy %" PRId64 "/%d", RG.out[0].total,
                  RG.out[0].write, pp->target, pp->write);
        for (uint32_t c = 0; c < RG.mem[0].pods[0].n_ctr; c++)
            if (RG.lim[0][c] != RG.mem[0].plim[pp->ctr_off + c])
                PFAIL("container %u: %" PRId64 ", the policy %" PRId64, c, RG.lim[0][c],
                      RG.mem[0].plim[pp->ctr_off + c]);
    }
}

PROP(prop_bounds)
PROP(prop_determinism)
PROP(prop_monotone)
PROP(prop_single)

int main(void)
{
    g_seed = hr_prop_seed_from_env();
    printf("group properties: seed %" PRIu64 " (replay with HR_SEED=%" PRIu64 ")\n", g_seed,
           g_seed);
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_worked_example),   cmocka_unit_test(test_ratio_to_request),
        cmocka_unit_test(test_group_deadband),   cmocka_unit_test(test_key),
        cmocka_unit_test(test_members_in_pools), cmocka_unit_test(test_prop_bounds),
        cmocka_unit_test(test_prop_determinism), cmocka_unit_test(test_prop_monotone),
        cmocka_unit_test(test_prop_single),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
