/*
 * test_quota_props.c — property tests of the quota cap (design §2.3, "The
 * quota cap"; src/core/quota.c) on random namespaces spread over random
 * nodes, planned node by node as the controller plans them.
 *
 * A namespace with a ResourceQuota on limits.cpu: managed pods (one to three
 * app containers, a CPU limit each), unmanaged ones (opted out, holding
 * their limits), other namespaces' pods on the same nodes, and a quota whose
 * hard and used are drawn around what the pods hold. The namespace's sums
 * (M, C) are re-stated here, not taken from a caller. Properties, each on
 * CASES random namespaces:
 *
 *   fits      the namespace's limits after every write — Σ targets of the
 *             managed pods plus what the others hold — stay within
 *             hard − reserve whenever the quota leaves room for the requests
 *             (T ≥ M), and never exceed max(T, M) in total;
 *   request   no managed pod's target is below its request, and none is
 *             above its quota cap unless the cap is the request;
 *   frees     quota freed by another pod (used down) never lowers a target;
 *   stable    after the targets are written (used and C move together), the
 *             plan is the same: the quota's own accounting does not chase
 *             our writes.
 *
 * HR_SEED=<seed> replays a run (hr_prop.h).
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
#include "core/eligibility.h"
#include "core/pod.h"
#include "core/podctx.h"
#include "core/policy.h"
#include "core/quota.h"
#include "core/wide.h"
#include "hr_prop.h"

#define CASES 10000
#define MAXN 5  /* nodes */
#define MAXP 48 /* pods over all nodes */
#define MAXC 3

typedef struct gen {
    hr_config c;
    size_t n_nodes;
    hr_node nodes[MAXN];
    size_t n;
    hr_pod bare[MAXP];
    hr_container ctrs[MAXP][MAXC];
    size_t node_of[MAXP];
    bool in_ns[MAXP];  /* in the quota's namespace */
    int64_t hard;      /* the quota */
    int64_t used_more; /* used beyond what the cached pods hold (pending pods) */
} gen;

static void gen_case(gen *g)
{
    memset(g, 0, sizeof *g);
    hr_config_defaults(&g->c);
    g->c.ns_selector = (hr_selector){true, NULL, 0}; /* {}: every namespace */
    g->c.quota_reserve_percent = chance(20) ? 0 : (int)between(0, 40);
    g->c.min_burst_floor = chance(50) ? 1000 : between(0, 2000);
    g->c.max_multiplier_milli = chance(20) ? 0 : between(1000, 20000);
    g->c.quantum = chance(70) ? 10 : between(1, 100);
    g->n_nodes = (size_t)between(1, MAXN);
    for (size_t k = 0; k < g->n_nodes; k++)
        g->nodes[k] = (hr_node){.allocatable = between(4000, 96000), .known = true};
    g->n = (size_t)between(1, MAXP);
    for (size_t i = 0; i < g->n; i++) {
        hr_container *cs = g->ctrs[i];
        uint32_t nc = (uint32_t)between(1, MAXC);
        for (uint32_t k = 0; k < nc; k++) {
            int64_t r = chance(10) ? 5 * between(1, 20) : between(10, 4000);
            cs[k] = (hr_container){.cpu_req = r,
                                   .cpu_lim = r + (chance(50) ? 0 : between(0, r / 2)),
                                   .mem_req = HR_NONE,
                                   .mem_lim = HR_NONE,
                                   .kind = HR_CTR_APP};
        }
        hr_pod p = hr_pod_init();
        p.ctr = cs;
        p.n_ctr = nc;
        p.opted_out = chance(15);
        g->bare[i] = p;
        g->node_of[i] = (size_t)below((int64_t)g->n_nodes);
        g->in_ns[i] = chance(75);
    }
    g->used_more = chance(50) ? 0 : between(0, 4000);
}

/* What the namespace's pods hold now (every container's limit). */
static int64_t ns_held(const gen *g, const int64_t *lim_override)
{
    int64_t s = 0;
    for (size_t i = 0; i < g->n; i++)
        if (g->in_ns[i]) {
            const hr_pod *p = &g->bare[i];
            int64_t own = 0;
            for (uint32_t k = 0; k < p->n_ctr; k++)
                own += p->ctr[k].cpu_lim;
            s += lim_override != NULL && lim_override[i] != HR_NONE ? lim_override[i] : own;
        }
    return s;
}

typedef struct result {
    hr_ns_quota q;
    int64_t target[MAXP]; /* HR_NONE: not a managed pod of the namespace */
    int64_t cap[MAXP];
    int64_t request[MAXP];
    bool binds; /* the quota cap is some pod's cap */
} result;

/* The namespace's quota as a caller gathers it (re-stated: the managed
 * pods are the ones eligibility says are), then every node planned. */
static hr_pod in_ctx(const gen *g, size_t i, const hr_ns_quota *q)
{
    hr_pod_ctx cx = {.cfg = &g->c,
                     .ns = g->in_ns[i] ? "quota" : "other",
                     .limits = HR_LIMIT_BOUNDS_NONE,
                     .ns_weight = 1};
    cx.quota = g->in_ns[i] ? q : NULL;
    return hr_pod_in_context(&g->bare[i], &cx);
}

static int n_managed_cases, n_binding_cases; /* the generator reaches the cap */

static void plan_all(const gen *g, int64_t used, result *out)
{
    hr_ns_quota q = {.on = false};
    hr_ns_quota_fold(&q, g->hard, used);
    q.held = ns_held(g, NULL);
    for (size_t i = 0; i < g->n; i++) {
        hr_pod p = in_ctx(g, i, NULL);
        if (!g->in_ns[i] || hr_pod_eligibility(&p) != HR_MANAGED)
            continue;
        q.managed += hr_pod_managed_cpu(&p);
        q.current += hr_pod_current_limit(&p);
    }
    for (size_t i = 0; i < g->n; i++) {
        hr_pod p = in_ctx(g, i, NULL);
        if (g->in_ns[i] && hr_pod_eligibility(&p) == HR_MANAGED &&
            hr_quota_below_share(&g->c, &q, hr_pod_managed_cpu(&p), hr_pod_current_limit(&p)))
            q.raising += hr_pod_managed_cpu(&p);
    }
    out->q = q;
    out->binds = false;
    for (size_t k = 0; k < g->n_nodes; k++) {
        hr_pod pods[MAXP];
        size_t idx[MAXP], n = 0;
        for (size_t i = 0; i < g->n; i++) {
            if (g->node_of[i] != k)
                continue;
            pods[n] = in_ctx(g, i, &q);
            idx[n++] = i;
        }
        hr_pod_plan plans[MAXP];
        int64_t lims[MAXP * MAXC];
        hr_plan_node(&g->c, &g->nodes[k], pods, n, plans, lims);
        for (size_t j = 0; j < n; j++) {
            hr_pod_caps caps;
            hr_pod_caps_of(&g->c, g->nodes[k].allocatable, &pods[j], plans[j].request, &caps);
            out->binds |=
                g->in_ns[idx[j]] && plans[j].reason == HR_MANAGED && caps.kind == HR_CAP_QUOTA;
            size_t i = idx[j];
            bool ours = g->in_ns[i] && plans[j].reason == HR_MANAGED;
            out->target[i] = ours ? plans[j].target : HR_NONE;
            out->cap[i] = ours ? pods[j].quota_cap : HR_NONE;
            out->request[i] = plans[j].request;
        }
    }
}

static void draw_quota(gen *g)
{
    int64_t held = ns_held(g, NULL);
    int64_t used = held + g->used_more;
    /* Tight, roomy or already over: all three happen. */
    int64_t roll = below(100);
    g->hard = roll < 40   ? used + between(0, 2000)
              : roll < 80 ? used + between(0, 2 * held + 1)
                          : hr_max64(1, used - between(0, 2000));
}

static void prop_fits(void)
{
    for (int k = 0; k < CASES; k++) {
        hr_prop_start("fits", k);
        gen g;
        gen_case(&g);
        draw_quota(&g);
        int64_t used = ns_held(&g, NULL) + g.used_more;
        result r;
        plan_all(&g, used, &r);
        int64_t t = hr_quota_budget(&g.c, &r.q);
        int64_t sum = 0, raised = 0;
        for (size_t i = 0; i < g.n; i++)
            if (r.target[i] != HR_NONE) {
                sum += r.target[i];
                raised += hr_max64(0, r.target[i] - hr_pod_current_limit(&g.bare[i]));
            }
        int64_t after = used - r.q.current + sum;
        /* The way there: the raises alone, sent before any decrease, fit what
         * is free now (when the requests themselves fit). */
        int64_t f = hr_quota_free(&g.c, &r.q);
        bool floors_fit = true;
        for (size_t i = 0; i < g.n; i++)
            if (r.target[i] != HR_NONE && hr_pod_current_limit(&g.bare[i]) < r.request[i])
                floors_fit = false;
        if (floors_fit && raised > hr_max64(f, 0) + (int64_t)g.n * g.c.quantum)
            PFAIL("raises %" PRId64 " > free %" PRId64, raised, f);
        int64_t reserve = hr_quota_reserve(&g.c, g.hard);
        n_managed_cases += r.q.managed > 0;
        n_binding_cases += r.binds;
        if (sum > hr_max64(t, r.q.managed))
            PFAIL("Σ targets %" PRId64 " > max(T %" PRId64 ", M %" PRId64 ")", sum, t, r.q.managed);
        if (t >= r.q.managed && f >= 0 && after > g.hard - reserve)
            PFAIL("used after the writes %" PRId64 " > hard %" PRId64 " − reserve %" PRId64, after,
                  g.hard, reserve);
    }
    /* A generator that never reaches the cap would prove nothing. */
    printf("fits: %d cases with managed pods, %d where the quota cap binds\n", n_managed_cases,
           n_binding_cases);
    assert_true(n_managed_cases > CASES / 2);
    assert_true(n_binding_cases > CASES / 4);
}
PROP(prop_fits)

static void prop_request(void)
{
    for (int k = 0; k < CASES; k++) {
        hr_prop_start("request", k);
        gen g;
        gen_case(&g);
        draw_quota(&g);
        result r;
        plan_all(&g, ns_held(&g, NULL) + g.used_more, &r);
        for (size_t i = 0; i < g.n; i++) {
            if (r.target[i] == HR_NONE)
                continue;
            if (r.cap[i] < r.request[i])
                PFAIL("pod %zu: quota cap %" PRId64 " below its request %" PRId64, i, r.cap[i],
                      r.request[i]);
            if (r.target[i] < r.request[i])
                PFAIL("pod %zu: target %" PRId64 " below its request %" PRId64, i, r.target[i],
                      r.request[i]);
            if (r.target[i] > r.cap[i])
                PFAIL("pod %zu: target %" PRId64 " above its quota cap %" PRId64, i, r.target[i],
                      r.cap[i]);
        }
    }
}
PROP(prop_request)

static void prop_frees(void)
{
    for (int k = 0; k < CASES; k++) {
        hr_prop_start("frees", k);
        gen g;
        gen_case(&g);
        draw_quota(&g);
        int64_t used = ns_held(&g, NULL) + g.used_more;
        result before, after;
        plan_all(&g, used, &before);
        /* Another pod leaves or shrinks: used goes down. */
        plan_all(&g, used - between(0, used), &after);
        for (size_t i = 0; i < g.n; i++)
            if (before.target[i] != HR_NONE && after.target[i] < before.target[i])
                PFAIL("pod %zu: freed quota lowered its target %" PRId64 " -> %" PRId64, i,
                      before.target[i], after.target[i]);
    }
}
PROP(prop_frees)

static void prop_stable(void)
{
    for (int k = 0; k < CASES; k++) {
        hr_prop_start("stable", k);
        gen g;
        gen_case(&g);
        /* Single-container pods: the target is the container's limit. */
        for (size_t i = 0; i < g.n; i++)
            g.bare[i].n_ctr = 1;
        draw_quota(&g);
        int64_t used = ns_held(&g, NULL) + g.used_more;
        result prev, r;
        plan_all(&g, used, &prev);
        /* Write every target, round after round: the pods' limits and the
         * quota's used move together, as the API server's admission counts
         * them. A target never goes back down (no write war with our own
         * writes), and the plan settles. */
        int round = 0;
        for (; round < 64; round++) {
            bool moved = false;
            for (size_t i = 0; i < g.n; i++)
                if (prev.target[i] != HR_NONE && prev.target[i] != g.ctrs[i][0].cpu_lim) {
                    used += prev.target[i] - g.ctrs[i][0].cpu_lim;
                    g.ctrs[i][0].cpu_lim = prev.target[i];
                    moved = true;
                }
            if (!moved)
                break;
            if (used > g.hard - hr_quota_reserve(&g.c, g.hard) &&
                hr_quota_free(&g.c, &prev.q) >= 0 &&
                hr_quota_budget(&g.c, &prev.q) >= prev.q.managed)
                PFAIL("round %d: used %" PRId64 " over hard − reserve", round, used);
            plan_all(&g, used, &r);
            for (size_t i = 0; i < g.n; i++)
                if (round > 0 && r.target[i] != HR_NONE && r.target[i] < prev.target[i] &&
                    prev.target[i] > hr_quota_budget(&g.c, &r.q))
                    PFAIL("round %d, pod %zu: our own writes lowered its target %" PRId64
                          " -> %" PRId64,
                          round, i, prev.target[i], r.target[i]);
            prev = r;
        }
        if (round == 64)
            PFAIL("the plan did not settle in 64 rounds of our own writes");
    }
}
PROP(prop_stable)

static void test_table(void **state)
{
    (void)state;
    hr_config c;
    hr_config_defaults(&c);
    c.quota_reserve_percent = 10;
    /* hard 10, used 6 of which 4 are ours: T = 10 − 6 + 4 − 1 = 7 over M 2. */
    hr_ns_quota q = {.on = false};
    hr_ns_quota_fold(&q, 10000, 6000);
    q.managed = 2000;
    q.current = 4000;
    q.held = 6000;
    assert_int_equal(hr_quota_reserve(&c, 10000), 1000);
    assert_int_equal(hr_quota_budget(&c, &q), 7000);
    assert_int_equal(hr_quota_free(&c, &q), 3000);
    /* Shares 1750m and 5250m; the way there: at most 3000m · r/M_up more now
     * (M_up: the requests of the pods below their share; all of them here). */
    q.raising = 2000;
    assert_int_equal(hr_quota_pod_cap(&c, &q, 500, 1000), 1750);
    assert_int_equal(hr_quota_pod_cap(&c, &q, 1500, 3000), 5250);
    assert_int_equal(hr_quota_pod_cap(&c, &q, 1500, 1500), 3750);
    /* used ahead of H (a pod admitted, not cached yet): the larger counts. */
    hr_ns_quota ahead = q;
    ahead.used = 9000;
    assert_int_equal(hr_quota_pod_cap(&c, &ahead, 1500, 1500), 1500);
    /* The reserve rounds up; none without a quota. */
    assert_int_equal(hr_quota_reserve(&c, 10001), 1001);
    assert_int_equal(hr_quota_pod_cap(&c, NULL, 500, 1000), HR_NONE);
    /* No room at all: the request wins. */
    hr_ns_quota full = q;
    full.held = 20000;
    assert_int_equal(hr_quota_pod_cap(&c, &full, 500, 1000), 500);
    /* used not counted yet reads as full: no raise. */
    hr_ns_quota unknown = q;
    unknown.used = HR_NONE;
    assert_int_equal(hr_quota_free(&c, &unknown), -1000);
    assert_int_equal(hr_quota_pod_cap(&c, &unknown, 500, 1000), 1000);
    /* The least room wins among several quotas. */
    hr_ns_quota_fold(&q, 50000, 1000);
    assert_int_equal(q.hard, 10000);
    hr_ns_quota_fold(&q, 8000, 7000);
    assert_int_equal(q.hard, 8000);
    assert_int_equal(q.used, 7000);
    /* A pod being born may hold hard − used (no reserve: it is what the
     * reserve is for); none counted yet or none left: 0; no quota: none. */
    assert_int_equal(hr_quota_birth_room(&q), 1000);
    assert_int_equal(hr_quota_birth_room(&unknown), 0);
    hr_ns_quota over = {.on = false};
    hr_ns_quota_fold(&over, 4000, 5000);
    assert_int_equal(hr_quota_birth_room(&over), 0);
    hr_ns_quota off = {.on = false};
    assert_int_equal(hr_quota_birth_room(&off), HR_NONE);
}

int main(void)
{
    g_seed = hr_prop_seed_from_env();
    printf("quota properties: seed %" PRIu64 " (replay with HR_SEED=%" PRIu64 ")\n", g_seed,
           g_seed);
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_table),        cmocka_unit_test(test_prop_fits),
        cmocka_unit_test(test_prop_request), cmocka_unit_test(test_prop_frees),
        cmocka_unit_test(test_prop_stable),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
