/*
 * test_grace.c — the startup grace (design §2.12): who is in it and until
 * when (core/grace.h, through hr_pod_in_context), and what the policy does
 * with a pod in it (hr_plan_node), as a table and as properties on random
 * nodes.
 *
 * The properties, each on CASES random nodes (HR_SEED replays a run):
 *   - kept: a pod in grace whose limit is within its caps keeps it as it
 *     is, container by container, and nothing is written;
 *   - bounded: a pod in grace is never planned above its caps (allocatable,
 *     r × maxMultiplier, …); a birth limit above them comes down to them
 *     (within the grid), never lower; it never gets an increase;
 *   - neighbours: putting pods in grace changes no other pod's plan and not
 *     the node's figures (their requests are booked and counted in M and N
 *     as before), and no request of any pod.
 */
#include <inttypes.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <cmocka.h>

#include "core/grace.h"
#include "core/names.h"
#include "core/podctx.h"
#include "core/policy.h"
#include "core/wide.h"
#include "hr_check.h"
#include "hr_prop.h"

#define CASES 10000
#define MAXP 40
#define MAXC 3
#define NOW INT64_C(1800000000)

static const char *const managed_kv[] = {HR_LABEL_MODE, HR_MODE_MANAGED};
static const hr_labels managed_ns = {managed_kv, 1};
static const char *const grace_kv[] = {HR_LABEL_MODE, HR_MODE_MANAGED, HR_LABEL_GRACE, "true"};
static const hr_labels grace_ns = {grace_kv, 2};

static hr_config grace_config(int64_t seconds)
{
    hr_config c;
    hr_config_defaults(&c);
    c.startup_grace_s = seconds;
    return c;
}

static void opt_values(void **state)
{
    (void)state;
    CHECK_I64("absent", hr_grace_opt_parse(NULL), HR_GRACE_UNSET);
    CHECK_I64("true", hr_grace_opt_parse("true"), HR_GRACE_ON);
    CHECK_I64("false", hr_grace_opt_parse("false"), HR_GRACE_OFF);
    CHECK_I64("True (not the word)", hr_grace_opt_parse("True"), HR_GRACE_OFF);
    CHECK_I64("empty", hr_grace_opt_parse(""), HR_GRACE_OFF);
}

static void until_rules(void **state)
{
    (void)state;
    hr_config c = grace_config(120);
    hr_pod p = hr_pod_init();
    p.grace_opt = HR_GRACE_ON;
    p.start_s = NOW - 20;
    CHECK_I64("opted in, not Ready: start + seconds", hr_grace_until(&c, &p, NULL, NOW),
              NOW - 20 + 120);
    CHECK_I64("the last second", hr_grace_until(&c, &p, NULL, NOW + 99), NOW + 100);
    CHECK_I64("the duration is over", hr_grace_until(&c, &p, NULL, NOW + 100), HR_NONE);
    p.ready = true;
    CHECK_I64("Ready ends it", hr_grace_until(&c, &p, NULL, NOW), HR_NONE);
    p.ready = false;
    p.start_s = 0;
    CHECK_I64("no start time yet: from now", hr_grace_until(&c, &p, NULL, NOW), NOW + 120);
    p.start_s = NOW + 50;
    CHECK_I64("a start time ahead of the clock: from now", hr_grace_until(&c, &p, NULL, NOW),
              NOW + 120);
    p.start_s = NOW - 20;
    CHECK_I64("the clock unknown", hr_grace_until(&c, &p, NULL, 0), HR_NONE);
    hr_config off = grace_config(0);
    CHECK_I64("the config leaves it off", hr_grace_until(&off, &p, &grace_ns, NOW), HR_NONE);

    p.grace_opt = HR_GRACE_UNSET;
    CHECK_I64("not opted in", hr_grace_until(&c, &p, &managed_ns, NOW), HR_NONE);
    CHECK_I64("no namespace labels", hr_grace_until(&c, &p, NULL, NOW), HR_NONE);
    CHECK_I64("the namespace opts in", hr_grace_until(&c, &p, &grace_ns, NOW), NOW + 100);
    p.grace_opt = HR_GRACE_OFF;
    CHECK_I64("the pod opts out of its namespace's grace", hr_grace_until(&c, &p, &grace_ns, NOW),
              HR_NONE);
}

static void in_context(void **state)
{
    (void)state;
    hr_config c = grace_config(60);
    hr_pod bare = hr_pod_init();
    bare.start_s = NOW - 10;
    hr_pod_ctx cx = {.cfg = &c,
                     .ns = "team-a",
                     .ns_labels = &grace_ns,
                     .limits = HR_LIMIT_BOUNDS_NONE,
                     .now_s = NOW};
    hr_pod p = hr_pod_in_context(&bare, &cx);
    CHECK_I64("the namespace's grace", hr_grace_end(&c, &p), NOW + 50);
    CHECK_TRUE("in grace", p.in_grace);
    bare.start_s = 0;
    p = hr_pod_in_context(&bare, &cx);
    CHECK_I64("no start time: from now, and the end stays put", hr_grace_end(&c, &p), NOW + 60);
    cx.now_s = NOW + 5;
    p = hr_pod_in_context(&p, &cx);
    CHECK_I64("... as the clock moves", hr_grace_end(&c, &p), NOW + 60);
    bare.start_s = NOW - 10;
    cx.now_s = 0;
    CHECK_I64("no clock: no grace", hr_grace_end(&c, (p = hr_pod_in_context(&bare, &cx), &p)),
              HR_NONE);
    cx.now_s = NOW;
    cx.ns_labels = &managed_ns;
    p = hr_pod_in_context(&bare, &cx);
    CHECK_TRUE("not opted in", !p.in_grace && hr_grace_end(&c, &p) == HR_NONE);
}

/* One pod, one container, 500m request, born at 2000m (initialMultiplier
 * 4), on a node with little slack: the slack ceiling is far below. */
static void table(void **state)
{
    (void)state;
    hr_config c = grace_config(60);
    hr_node node = {4000, true, false, false, false};
    hr_container ctr[2] = {{500, 2000, HR_NONE, HR_NONE, HR_CTR_APP, false},
                           {3000, 3500, HR_NONE, HR_NONE, HR_CTR_APP, false}};
    hr_pod pods[2] = {hr_pod_init(), hr_pod_init()};
    pods[0].ctr = &ctr[0];
    pods[0].n_ctr = 1;
    pods[1].ctr = &ctr[1];
    pods[1].n_ctr = 1;
    hr_pod_plan out[2];
    int64_t lim[2];
    hr_plan_node(&c, &node, pods, 2, out, lim);
    /* S = 500m, N = 2: the floor min(1000m, 250m) beats 500·500/3500 */
    CHECK_I64("no grace: the slack ceiling", out[0].target, 750);
    CHECK_TRUE("no grace: written", out[0].write && !out[0].grace);
    int64_t other = out[1].target;

    pods[0].in_grace = true;
    hr_plan_node(&c, &node, pods, 2, out, lim);
    CHECK_TRUE("in grace", out[0].grace);
    CHECK_I64("in grace: the birth limit is kept", out[0].target, 2000);
    CHECK_TRUE("in grace: nothing written", !out[0].write);
    CHECK_I64("the neighbour's ceiling does not move", out[1].target, other);
    CHECK_I64("its request is untouched", ctr[0].cpu_req, 500);

    /* maxMultiplier 3: 1500m, below the birth limit: the grace holds the cap. */
    c.max_multiplier_milli = 3000;
    hr_plan_node(&c, &node, pods, 2, out, lim);
    CHECK_I64("in grace, above r × maxMultiplier: the cap", out[0].target, 1500);
    CHECK_TRUE("in grace, above the cap: written down", out[0].write);
    c.max_multiplier_milli = 10000;

    /* Allocatable 1800m: the birth limit is above it. */
    node.allocatable = 1800;
    hr_plan_node(&c, &node, pods, 2, out, lim);
    CHECK_I64("in grace, above allocatable: allocatable", out[0].target, 1800);

    /* No limit to keep: the grace has nothing to hold. */
    node.allocatable = 4000;
    ctr[0].cpu_lim = HR_NONE;
    hr_plan_node(&c, &node, pods, 2, out, lim);
    CHECK_TRUE("no birth limit: not holding", !out[0].grace);
    CHECK_I64("no birth limit: the slack ceiling", out[0].target, 750);
}

/* ---- properties ------------------------------------------------------------ */

typedef struct gen {
    hr_config c;
    hr_node node;
    size_t n;
    hr_pod pods[MAXP];
    hr_container ctrs[MAXP][MAXC];
} gen;

static void rand_node(gen *g)
{
    hr_config_defaults(&g->c);
    g->c.startup_grace_s = 60;
    static const int64_t quanta[] = {1, 5, 10, 10, 25, 100};
    g->c.quantum = quanta[below(6)];
    g->c.grow_percent = (int)below(30);
    g->c.shrink_percent = (int)below(30);
    g->c.max_multiplier_milli = chance(25) ? 0 : between(1000, 20000);
    g->c.min_burst_floor = chance(50) ? 1000 : below(3000);
    g->node = (hr_node){1000 * between(1, 64), true, false, false, false};
    g->n = (size_t)between(1, MAXP);
    for (size_t i = 0; i < g->n; i++) {
        uint32_t k = (uint32_t)between(1, MAXC);
        for (uint32_t j = 0; j < k; j++) {
            int64_t r = between(1, 4000);
            int64_t l = chance(15) ? HR_NONE : r + between(0, 8 * r);
            g->ctrs[i][j] = (hr_container){r, l, HR_NONE, HR_NONE, HR_CTR_APP, false};
        }
        hr_pod p = hr_pod_init();
        p.ctr = g->ctrs[i];
        p.n_ctr = k;
        if (chance(10))
            p.opted_out = true;
        if (chance(10))
            p.max_cpu = between(1, 16000);
        g->pods[i] = p;
    }
}

typedef struct result {
    hr_node_plan np;
    hr_pod_plan pp[MAXP];
    int64_t lim[MAXP * MAXC];
} result;

static void plan(const gen *g, const hr_pod *pods, result *r)
{
    r->np = hr_plan_node(&g->c, &g->node, pods, g->n, r->pp, r->lim);
}

static void prop_grace(void)
{
    static gen g;
    static result base, with;
    static hr_pod graced[MAXP];
    for (int k = 0; k < CASES; k++) {
        hr_prop_start("grace", k);
        rand_node(&g);
        plan(&g, g.pods, &base);
        memcpy(graced, g.pods, sizeof graced);
        bool in[MAXP];
        for (size_t i = 0; i < g.n; i++) {
            in[i] = chance(40);
            if (in[i])
                graced[i].in_grace = true;
        }
        plan(&g, graced, &with);
        if (with.np.booked != base.np.booked || with.np.managed != base.np.managed ||
            with.np.n_managed != base.np.n_managed || with.np.slack != base.np.slack)
            PFAIL("the node's figures moved: R %" PRId64 "/%" PRId64 ", M %" PRId64 "/%" PRId64,
                  with.np.booked, base.np.booked, with.np.managed, base.np.managed);
        for (size_t i = 0; i < g.n; i++) {
            const hr_pod *p = &g.pods[i];
            const hr_pod_plan *a = &base.pp[i], *b = &with.pp[i];
            for (uint32_t j = 0; j < p->n_ctr; j++)
                if (g.ctrs[i][j].cpu_req != graced[i].ctr[j].cpu_req)
                    PFAIL("pod %zu: a request moved", i);
            bool holding = in[i] && a->reason == HR_MANAGED && a->current > 0;
            if (b->grace != holding)
                PFAIL("pod %zu: grace %d, expected %d", i, b->grace, holding);
            if (!holding) {
                if (a->target != b->target || a->write != b->write ||
                    memcmp(&base.lim[a->ctr_off], &with.lim[b->ctr_off],
                           p->n_ctr * sizeof base.lim[0]) != 0)
                    PFAIL("pod %zu (not holding): target %" PRId64 " → %" PRId64, i, a->target,
                          b->target);
                continue;
            }
            hr_pod_caps caps;
            hr_pod_caps_of(&g.c, g.node.allocatable, p, b->request, &caps);
            int64_t slack_q = g.c.quantum * ((int64_t)p->n_ctr + 1);
            if (b->write && b->target > b->current && !b->qos_guarded)
                PFAIL("pod %zu: an increase in grace, %" PRId64 " → %" PRId64, i, b->current,
                      b->target);
            if (!b->qos_guarded && b->target > caps.cap)
                PFAIL("pod %zu: target %" PRId64 " above the cap %" PRId64 " (%s)", i, b->target,
                      caps.cap, hr_cap_str(caps.kind));
            if (caps.on[HR_CAP_MULTIPLIER] && !b->qos_guarded &&
                b->target > hr_max64(caps.bound[HR_CAP_MULTIPLIER], b->request))
                PFAIL("pod %zu: target %" PRId64 " above r × maxMultiplier %" PRId64, i, b->target,
                      caps.bound[HR_CAP_MULTIPLIER]);
            if (b->target > hr_max64(g.node.allocatable, b->request) && !b->qos_guarded)
                PFAIL("pod %zu: target %" PRId64 " above allocatable", i, b->target);
            /* Within its caps, the birth limit is kept as it is: the
             * target is it, container by container, and nothing is written. */
            if (b->current <= caps.cap) {
                if (b->target != b->current || b->write)
                    PFAIL("pod %zu: limit %" PRId64 " within the cap %" PRId64
                          " not kept: target %" PRId64 ", write %d",
                          i, b->current, caps.cap, b->target, b->write);
                for (uint32_t j = 0; j < p->n_ctr; j++)
                    if (with.lim[b->ctr_off + j] != p->ctr[j].cpu_lim)
                        PFAIL("pod %zu container %u: limit not kept", i, j);
            } else if (b->target < caps.cap - slack_q && !b->qos_guarded) {
                PFAIL("pod %zu: limit %" PRId64 " above the cap %" PRId64
                      " taken below it: target %" PRId64,
                      i, b->current, caps.cap, b->target);
            }
        }
    }
}

PROP(prop_grace)

int main(void)
{
    g_seed = hr_prop_seed_from_env();
    printf("test_grace: seed %" PRIu64 "\n", g_seed);
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(opt_values),      cmocka_unit_test(until_rules),
        cmocka_unit_test(in_context),      cmocka_unit_test(table),
        cmocka_unit_test(test_prop_grace),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
