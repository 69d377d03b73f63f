/*
 * test_tenant_props.c — property tests of the TenantFair policy (design
 * §2.9) on random nodes.
 *
 * The tables in test_tenant_table.c pin known answers; these check, on
 * 10,000 random nodes each (0–110 pods over up to six namespaces of random
 * weights, managed and unmanaged, random requests, knobs and max-cpu caps),
 * that every answer hangs together: requests are never undercut and the
 * shares are ⌊S·w_t/W⌋; within a tenant, splitting a pod changes nothing
 * for others; a tenant cannot raise its share by adding pods or requests;
 * adding a pod never raises another pod's target; S ≤ 0 gives the
 * requests; one namespace alone is Proportional; the answer does not depend
 * on the order of the pods. The generator is seeded from HR_SEED (or the
 * clock); the seed is printed at start and in every failure, and
 * HR_SEED=<seed> replays the exact run.
 *
 * The per-container split and the QoS guard are Proportional's code, held
 * by test_policy_props.c; pods here have one container and no memory
 * limits, so a target is that container's limit.
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
#include "core/pod.h"
#include "core/policy.h"
#include "core/wide.h"
#include "hr_check.h"
#include "hr_prop.h"

#define CASES 10000
#define MAXP 116 /* 110 pods plus the pieces a split or an added pod bring */
#define NS_MAX 6

static const char *const NS[NS_MAX] = {"team-a", "team-b", "team-c", "team-d", "team-e", "team-f"};

typedef struct gen_node {
    hr_config c;
    hr_node node;
    size_t n;
    uint32_t weight[NS_MAX]; /* each namespace's weight, the same on all its pods */
    hr_pod pods[MAXP];
    hr_container ctr[MAXP]; /* pods[i].ctr == &ctr[i] */
} gen_node;

typedef struct result {
    hr_node_plan np;
    hr_pod_plan out[MAXP];
    int64_t lim[MAXP];
} result;

static gen_node G, H;
static result RA, RB;

static int64_t rand_req(int64_t scale)
{
    if (chance(20))
        return 10 * between(1, scale / 10);
    int bits = (int)between(0, 14);
    int64_t v = between(1, INT64_C(1) << bits);
    return v > scale ? scale : v;
}

static void rand_pod(gen_node *g, size_t i, int n_ns, int64_t scale)
{
    hr_container *ct = &g->ctr[i];
    *ct = (hr_container){rand_req(scale), HR_NONE, HR_NONE, HR_NONE, HR_CTR_APP, false};
    if (chance(30))
        ct->cpu_lim = ct->cpu_req + rand_req(3 * scale);
    hr_pod p = hr_pod_init();
    p.ctr = ct;
    p.n_ctr = 1;
    int k = (int)below(n_ns);
    p.tenant = NS[k];
    p.tenant_weight = g->weight[k];
    if (chance(10))
        p.opted_out = true; /* books, is no tenant */
    if (chance(4))
        p.phase = HR_PHASE_SUCCEEDED;
    if (chance(10))
        p.max_cpu = rand_req(4 * scale);
    g->pods[i] = p;
}

static void rand_node(gen_node *g, bool floor)
{
    hr_config_defaults(&g->c);
    g->c.policy = HR_POLICY_TENANT_FAIR;
    static const int64_t quanta[] = {1, 5, 10, 10, 25, 100};
    g->c.quantum = quanta[below(6)];
    g->c.grow_percent = (int)below(101);
    g->c.shrink_percent = (int)below(101);
    g->c.min_burst_floor = !floor ? 0 : chance(50) ? 1000 : below(4000);
    g->c.max_multiplier_milli = chance(30) ? 0 : chance(50) ? 10000 : between(1000, 100000);
    static const int64_t scales[] = {100, 1000, 4000, 16000};
    int64_t scale = scales[below(4)];
    int n_ns = (int)between(1, NS_MAX);
    for (int k = 0; k < NS_MAX; k++)
        g->weight[k] = chance(60) ? 1 : (uint32_t)between(1, chance(90) ? 10 : 1000000);
    g->node = (hr_node){chance(60) ? 1000 * between(1, 128) : between(0, 200000), true, false,
                        false, false};
    g->n = (size_t)below(111);
    for (size_t i = 0; i < g->n; i++)
        rand_pod(g, i, n_ns, scale);
}

static void copy_node(gen_node *dst, const gen_node *src)
{
    memcpy(dst, src, sizeof *dst);
    for (size_t i = 0; i < dst->n; i++)
        dst->pods[i].ctr = &dst->ctr[i];
}

static void run(const gen_node *g, result *r)
{
    r->np = hr_plan_node(&g->c, &g->node, g->pods, g->n, r->out, r->lim);
}

static bool managed(const gen_node *g, size_t i)
{
    const hr_pod *p = &g->pods[i];
    return !p->opted_out && !hr_pod_terminal(p);
}

/* Independent restatement of design §3.1 for these pods, and of §2.9's W. */
static int64_t slack_of(const gen_node *g)
{
    int64_t booked = 0;
    for (size_t i = 0; i < g->n; i++)
        if (!hr_pod_terminal(&g->pods[i]))
            booked += g->ctr[i].cpu_req;
    return g->node.allocatable - booked;
}

static uint64_t weights_present(const gen_node *g)
{
    uint64_t w = 0;
    for (int k = 0; k < NS_MAX; k++)
        for (size_t i = 0; i < g->n; i++)
            if (managed(g, i) && g->pods[i].tenant == NS[k]) {
                w += g->weight[k];
                break;
            }
    return w;
}

static int ns_index(const char *t)
{
    for (int k = 0; k < NS_MAX; k++)
        if (t == NS[k])
            return k;
    return -1;
}

static int64_t grid_up(int64_t v, int64_t q)
{
    return v % q == 0 ? v : (v / q + 1) * q;
}

/* A managed pod's cap of design §2.3 (items 1–3, never below r). */
static int64_t cap_of(const gen_node *g, size_t i)
{
    int64_t r = g->ctr[i].cpu_req;
    int64_t cap = hr_max64(g->node.allocatable, r);
    if (g->c.max_multiplier_milli > 0)
        cap = hr_min64(cap, (int64_t)((hr_i128)r * g->c.max_multiplier_milli / 1000));
    if (g->pods[i].max_cpu != HR_NONE)
        cap = hr_min64(cap, g->pods[i].max_cpu);
    return hr_max64(cap, r);
}

/* ---- properties -------------------------------------------------------- */

/* Requests are never undercut, caps are kept, and each tenant's share is
 * ⌊S·w_t/W⌋ over the namespaces with managed pods here. */
static void prop_bounds(void)
{
    for (int k = 0; k < CASES; k++) {
        hr_prop_start("bounds", k);
        rand_node(&G, chance(70));
        run(&G, &RA);
        int64_t S = slack_of(&G);
        uint64_t W = weights_present(&G);
        if (RA.np.slack != S || RA.np.weight_total != W)
            PFAIL("S %" PRId64 " (want %" PRId64 "), W %" PRIu64 " (want %" PRIu64 ")", RA.np.slack,
                  S, RA.np.weight_total, W);
        for (size_t i = 0; i < G.n; i++) {
            const hr_pod_plan *pp = &RA.out[i];
            if (!managed(&G, i)) {
                if (pp->target != HR_NONE)
                    PFAIL("pod %zu unmanaged has target %" PRId64, i, pp->target);
                continue;
            }
            int64_t r = G.ctr[i].cpu_req;
            if (pp->target < r)
                PFAIL("pod %zu: target %" PRId64 " under its request %" PRId64, i, pp->target, r);
            if (pp->target > cap_of(&G, i))
                PFAIL("pod %zu: target %" PRId64 " over its cap %" PRId64, i, pp->target,
                      cap_of(&G, i));
            int t = ns_index(G.pods[i].tenant);
            int64_t want = S > 0 ? (int64_t)((hr_u128)S * G.weight[t] / W) : 0;
            if (pp->share != want || pp->weight != G.weight[t])
                PFAIL("pod %zu of %s: share %" PRId64 " weight %u, want %" PRId64 " and %u", i,
                      NS[t], pp->share, pp->weight, want, G.weight[t]);
        }
    }
}

/* Splitting a pod of tenant t in two with the same total request: every
 * pod of every other tenant keeps its target exactly (floors and caps
 * included); with no floor, so do the other pods of t. */
static void prop_split(void)
{
    int done = 0;
    for (int k = 0; done < CASES; k++) {
        hr_prop_start("split", k);
        bool floor = chance(50);
        rand_node(&G, floor);
        size_t cand[MAXP], nc = 0;
        for (size_t i = 0; i < G.n; i++)
            if (managed(&G, i) && G.ctr[i].cpu_req >= 2 && G.n < MAXP - 1)
                cand[nc++] = i;
        if (nc == 0)
            continue;
        done++;
        size_t s = cand[below((int64_t)nc)];
        run(&G, &RA);
        copy_node(&H, &G);
        int64_t r = G.ctr[s].cpu_req, r1 = between(1, r - 1);
        H.ctr[s].cpu_req = r1;
        H.ctr[H.n] = G.ctr[s];
        H.ctr[H.n].cpu_req = r - r1;
        H.pods[H.n] = G.pods[s];
        H.pods[H.n].ctr = &H.ctr[H.n];
        H.n++;
        run(&H, &RB);
        for (size_t i = 0; i < G.n; i++) {
            if (i == s || !managed(&G, i))
                continue;
            bool same_tenant = G.pods[i].tenant == G.pods[s].tenant;
            if (same_tenant && floor)
                continue;
            if (RB.out[i].target != RA.out[i].target)
                PFAIL("split of pod %zu (%" PRId64 " → %" PRId64 " + %" PRId64
                      ") moved pod %zu (%s tenant) %" PRId64 " → %" PRId64,
                      s, r, r1, r - r1, i, same_tenant ? "same" : "other", RA.out[i].target,
                      RB.out[i].target);
        }
    }
}

/* A tenant cannot raise its share by adding a pod or raising a request on
 * the node: its S_t never rises, every other tenant's share changes only by
 * the booking (⌊(S − Δ)·w_u/W⌋), and no pod of another tenant gains. */
static void prop_no_gain(void)
{
    int done = 0;
    for (int k = 0; done < CASES; k++) {
        hr_prop_start("no-gain", k);
        rand_node(&G, chance(70));
        size_t t_pod = MAXP;
        for (size_t i = 0; i < G.n; i++)
            if (managed(&G, i) && (t_pod == MAXP || chance(30)))
                t_pod = i;
        if (t_pod == MAXP || G.n >= MAXP - 1)
            continue;
        done++;
        run(&G, &RA);
        copy_node(&H, &G);
        int64_t delta;
        if (chance(50)) { /* one more pod in the same namespace */
            H.ctr[H.n] =
                (hr_container){between(1, 4000), HR_NONE, HR_NONE, HR_NONE, HR_CTR_APP, false};
            H.pods[H.n] = G.pods[t_pod];
            H.pods[H.n].ctr = &H.ctr[H.n];
            H.pods[H.n].max_cpu = HR_NONE;
            delta = H.ctr[H.n].cpu_req;
            H.n++;
        } else { /* a bigger request on one of its pods */
            delta = between(1, 4000);
            H.ctr[t_pod].cpu_req += delta;
        }
        run(&H, &RB);
        const char *t = G.pods[t_pod].tenant;
        uint64_t W = RA.np.weight_total;
        if (RB.np.weight_total != W)
            PFAIL("W moved %" PRIu64 " → %" PRIu64 " though no namespace came", W,
                  RB.np.weight_total);
        int64_t S2 = RA.np.slack - delta;
        for (size_t i = 0; i < G.n; i++) {
            if (!managed(&G, i))
                continue;
            if (G.pods[i].tenant == t) {
                if (RB.out[i].share > RA.out[i].share)
                    PFAIL("tenant %s raised its share %" PRId64 " → %" PRId64 " (Δ %" PRId64 ")", t,
                          RA.out[i].share, RB.out[i].share, delta);
                continue;
            }
            int64_t want = S2 > 0 ? (int64_t)((hr_u128)S2 * RA.out[i].weight / W) : 0;
            if (RB.out[i].share != want)
                PFAIL("tenant %s's share %" PRId64 " → %" PRId64 ", want %" PRId64,
                      G.pods[i].tenant, RA.out[i].share, RB.out[i].share, want);
            if (RB.out[i].target > RA.out[i].target)
                PFAIL("pod %zu of %s gained %" PRId64 " → %" PRId64 " from %s's growth", i,
                      G.pods[i].tenant, RA.out[i].target, RB.out[i].target, t);
        }
    }
}

/* Adding a pod — any namespace, new or not, managed or not — never raises
 * another pod's target. */
static void prop_monotone(void)
{
    int done = 0;
    for (int k = 0; done < CASES; k++) {
        hr_prop_start("monotone", k);
        rand_node(&G, chance(70));
        if (G.n >= MAXP - 1)
            continue;
        done++;
        run(&G, &RA);
        copy_node(&H, &G);
        rand_pod(&H, H.n, NS_MAX, chance(50) ? 1000 : 16000);
        H.pods[H.n].tenant_weight = H.weight[ns_index(H.pods[H.n].tenant)];
        H.n++;
        run(&H, &RB);
        for (size_t i = 0; i < G.n; i++)
            if (managed(&G, i) && RB.out[i].target > RA.out[i].target)
                PFAIL("adding a pod (%s, %" PRId64 "m) raised pod %zu (%s): %" PRId64 " → %" PRId64,
                      H.pods[H.n - 1].tenant, H.ctr[H.n - 1].cpu_req, i, G.pods[i].tenant,
                      RA.out[i].target, RB.out[i].target);
    }
}

/* S ≤ 0: every target is the request on the grid (the request itself where
 * a cap leaves no grid point above it). */
static void prop_no_slack(void)
{
    int done = 0;
    for (int k = 0; done < CASES; k++) {
        hr_prop_start("no-slack", k);
        rand_node(&G, chance(70));
        int64_t booked = G.node.allocatable - slack_of(&G);
        G.node.allocatable = between(0, booked);
        if (G.n == 0)
            continue;
        done++;
        run(&G, &RA);
        if (RA.np.slack > 0)
            PFAIL("slack %" PRId64 " > 0", RA.np.slack);
        for (size_t i = 0; i < G.n; i++) {
            if (!managed(&G, i))
                continue;
            int64_t r = G.ctr[i].cpu_req, g = grid_up(r, G.c.quantum);
            int64_t want = cap_of(&G, i) < g ? r : g;
            if (RA.out[i].target != want || RA.out[i].share != 0)
                PFAIL("pod %zu: target %" PRId64 " share %" PRId64 ", want %" PRId64 " and 0", i,
                      RA.out[i].target, RA.out[i].share, want);
        }
    }
}

/* One namespace alone is Proportional, whatever its weight; and the answer
 * does not depend on the order of the pods, nor on a second run. */
static void prop_determinism(void)
{
    for (int k = 0; k < CASES; k++) {
        hr_prop_start("determinism", k);
        rand_node(&G, chance(70));
        run(&G, &RA);
        copy_node(&H, &G);
        /* a random permutation (Fisher–Yates), containers moved along */
        size_t perm[MAXP];
        for (size_t i = 0; i < G.n; i++)
            perm[i] = i;
        for (size_t i = G.n; i > 1; i--) {
            size_t j = (size_t)below((int64_t)i);
            size_t x = perm[i - 1];
            perm[i - 1] = perm[j];
            perm[j] = x;
        }
        for (size_t i = 0; i < G.n; i++) {
            H.ctr[i] = G.ctr[perm[i]];
            H.pods[i] = G.pods[perm[i]];
            H.pods[i].ctr = &H.ctr[i];
        }
        run(&H, &RB);
        for (size_t i = 0; i < G.n; i++) {
            const hr_pod_plan *a = &RA.out[perm[i]], *b = &RB.out[i];
            if (a->target != b->target || a->write != b->write || a->share != b->share ||
                a->weight != b->weight)
                PFAIL("pod %zu moved to %zu: target %" PRId64 " → %" PRId64, perm[i], i, a->target,
                      b->target);
        }
        run(&G, &RB);
        for (size_t i = 0; i < G.n; i++)
            if (RA.out[i].target != RB.out[i].target || RA.out[i].write != RB.out[i].write ||
                RA.out[i].share != RB.out[i].share || RA.out[i].tenant != RB.out[i].tenant)
                PFAIL("a second run differs at pod %zu", i);

        /* Every pod in one namespace: the same as Proportional. */
        for (size_t i = 0; i < G.n; i++) {
            H.ctr[i] = G.ctr[i];
            H.pods[i] = G.pods[i];
            H.pods[i].ctr = &H.ctr[i];
            H.pods[i].tenant = NS[0];
            H.pods[i].tenant_weight = G.weight[0];
        }
        run(&H, &RA);
        H.c.policy = HR_POLICY_PROPORTIONAL;
        run(&H, &RB);
        for (size_t i = 0; i < G.n; i++)
            if (RA.out[i].target != RB.out[i].target)
                PFAIL("one namespace: pod %zu TenantFair %" PRId64 ", Proportional %" PRId64, i,
                      RA.out[i].target, RB.out[i].target);
    }
}

PROP(prop_bounds)
PROP(prop_split)
PROP(prop_no_gain)
PROP(prop_monotone)
PROP(prop_no_slack)
PROP(prop_determinism)

int main(void)
{
    g_seed = hr_prop_seed_from_env();
    printf("tenant properties: seed %" PRIu64 " (replay with HR_SEED=%" PRIu64 ")\n", g_seed,
           g_seed);
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_prop_bounds),   cmocka_unit_test(test_prop_split),
        cmocka_unit_test(test_prop_no_gain),  cmocka_unit_test(test_prop_monotone),
        cmocka_unit_test(test_prop_no_slack), cmocka_unit_test(test_prop_determinism),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
