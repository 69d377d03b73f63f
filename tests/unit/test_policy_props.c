/*
 * test_policy_props.c — property tests of the node policy (design §2) on
 * random nodes.
 *
 * The tables in test_policy_table.c pin known answers; these check that
 * every answer on any node hangs together: bounds, no gain from splitting a
 * pod, monotonicity, the over-booked case, determinism and order
 * independence, and the per-container split. Each property runs on at least
 * 10,000 random nodes (0-110 pods, random mixes of managed and unmanaged,
 * multi-container, random knobs). The generator is seeded from HR_SEED (or
 * the clock); the seed is printed at start and in every failure, and
 * HR_SEED=<seed> replays the exact run.
 *
 * Accounting (R, M, N, booked, request, current) is checked against an
 * independent re-statement of design §3 written here, not against the core.
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
#include "core/eligibility.h"
#include "core/gates.h"
#include "core/pod.h"
#include "core/policy.h"
#include "core/wide.h"
#include "hr_check.h"
#include "hr_prop.h"

#define CASES 10000
#define MAXP 128 /* 110 pods plus the pieces a split or an added pod bring */
#define MAXC 6
#define POISON INT64_C(-777)

/* ---- seeded generator ---------------------------------------------------- */

static uint64_t next_u64(void)
{
    return hr_prng_next(&rng);
}

/* Log-uniform in [1, max]: small requests (10m sidecars) are as common as
 * large ones, which is where the floor and the caps interact. */
static int64_t log_uniform(int64_t max)
{
    int bits = 0;
    while ((INT64_C(1) << bits) < max)
        bits++;
    int64_t hi = INT64_C(1) << below(bits + 1);
    int64_t v = between(hi / 2 > 0 ? hi / 2 : 1, hi);
    return v > max ? max : v;
}

/* ---- a random node ------------------------------------------------------- */

typedef struct gen_node {
    hr_config c;
    hr_node node;
    size_t n;
    hr_pod pods[MAXP];
    hr_container ctrs[MAXP][MAXC]; /* pods[i].ctr == ctrs[i] always */
} gen_node;

typedef struct gen_opts {
    bool caps;      /* max-cpu annotations and LimitRanges on some pods */
    bool unmanaged; /* pods that are ineligible for every reason there is */
    bool guard;     /* memory limit == request on some containers */
    int64_t max_req;
} gen_opts;

static int64_t rand_req(const gen_opts *o)
{
    if (chance(15))
        return 50 * between(1, o->max_req / 50 > 1 ? o->max_req / 50 : 1);
    return log_uniform(o->max_req);
}

static void rand_container(hr_container *c, uint8_t kind, const gen_opts *o)
{
    c->kind = kind;
    c->cpu_restart = false;
    int64_t roll = below(100);
    if (roll < 6)
        c->cpu_req = HR_NONE;
    else if (roll < 9)
        c->cpu_req = 0;
    else
        c->cpu_req = rand_req(o);
    if (chance(50))
        c->cpu_lim = HR_NONE;
    else
        c->cpu_lim = (c->cpu_req > 0 ? c->cpu_req : 0) + log_uniform(3 * o->max_req);
    roll = below(100);
    if (roll < 35) {
        c->mem_req = c->mem_lim = HR_NONE;
    } else if (roll < 70 || !o->guard) {
        c->mem_req = between(1, 1 << 20) * 4096;
        c->mem_lim = chance(50) ? HR_NONE : c->mem_req + between(1, 1 << 20) * 4096;
    } else {
        c->mem_req = c->mem_lim = between(1, 1 << 20) * 4096;
    }
}

static void rand_pod(gen_node *g, size_t i, const gen_opts *o)
{
    hr_container *cs = g->ctrs[i];
    uint32_t n = 0;
    /* Init containers (sidecars among them) first, then apps: pod.h's order. */
    if (chance(15))
        rand_container(&cs[n++], HR_CTR_INIT, o);
    if (chance(25))
        rand_container(&cs[n++], HR_CTR_SIDECAR, o);
    if (chance(10))
        rand_container(&cs[n++], HR_CTR_INIT, o);
    uint32_t apps = (uint32_t)between(1, 3);
    for (uint32_t k = 0; k < apps && n < MAXC; k++)
        rand_container(&cs[n++], HR_CTR_APP, o);

    hr_pod p = hr_pod_init();
    p.ctr = cs;
    p.n_ctr = n;
    p.status_resources = true;
    if (chance(10))
        p.overhead_cpu = between(1, 500);
    int64_t roll = below(100);
    p.phase = roll < 85   ? HR_PHASE_RUNNING
              : roll < 93 ? HR_PHASE_PENDING
              : roll < 96 ? HR_PHASE_SUCCEEDED
              : roll < 98 ? HR_PHASE_FAILED
                          : HR_PHASE_UNKNOWN;

    if (o->unmanaged && chance(30)) {
        switch (below(14)) {
        case 0: p.opted_out = true; break;
        case 1: p.ns_state = HR_NS_NOT_SELECTED; break;
        case 2: p.ns_state = HR_NS_EXCLUDED; break;
        case 3: /* Guaranteed */
            for (uint32_t k = 0; k < n; k++) {
                if (cs[k].cpu_req <= 0)
                    cs[k].cpu_req = rand_req(o);
                cs[k].cpu_lim = cs[k].cpu_req;
                if (cs[k].mem_req == HR_NONE)
                    cs[k].mem_req = 1 << 26;
                cs[k].mem_lim = cs[k].mem_req;
            }
            break;
        case 4: /* BestEffort */
            for (uint32_t k = 0; k < n; k++)
                cs[k].cpu_req = cs[k].cpu_lim = cs[k].mem_req = cs[k].mem_lim = HR_NONE;
            break;
        case 5: cs[n - 1].cpu_restart = true; break;
        case 6: p.mirror = true; break;
        case 7: p.windows = true; break;
        case 8:
            p.pod_resources = true;
            p.pod_cpu_req = chance(70) ? rand_req(o) : HR_NONE;
            break;
        case 9: p.owner_excluded = true; break;
        case 10: p.status_resources = false; break;
        case 11: p.in_backoff = true; break;
        case 12: p.max_cpu_invalid = true; break;
        default:
            if (chance(50))
                p.node_windows = true;
            else
                p.node_excluded = true;
            break;
        }
    }

    if (o->caps) {
        int64_t sum = 0, maxc = 0;
        for (uint32_t k = 0; k < n; k++)
            if (hr_ctr_managed(&cs[k])) {
                sum += cs[k].cpu_req;
                if (cs[k].cpu_req > maxc)
                    maxc = cs[k].cpu_req;
            }
        if (chance(15))
            p.max_cpu = log_uniform(4 * o->max_req); /* may be below r */
        /* A LimitRange the pod was admitted under: its requests fit. */
        if (chance(20)) {
            if (chance(50))
                p.limits.ctr_max = maxc + log_uniform(4 * o->max_req) - 1;
            if (chance(50))
                p.limits.ctr_ratio_milli = 1000 + below(5000);
            if (chance(40))
                p.limits.pod_max = sum + log_uniform(8 * o->max_req) - 1;
        }
    }
    g->pods[i] = p;
}

static void rand_config(hr_config *c, bool caps)
{
    hr_config_defaults(c);
    static const int64_t quanta[] = {1, 5, 10, 10, 10, 25, 100};
    c->quantum = quanta[below(7)];
    c->grow_percent = (int)below(101);
    c->shrink_percent = (int)below(101);
    if (!caps) {
        c->min_burst_floor = 0;
        c->max_multiplier_milli = 0;
        return;
    }
    int64_t roll = below(4);
    c->min_burst_floor = roll == 0 ? 0 : roll == 1 ? 1000 : below(4000);
    roll = below(4);
    c->max_multiplier_milli = roll == 0 ? 0 : roll == 1 ? 10000 : between(1000, 100000);
}

static void rand_node(gen_node *g, gen_opts *o, bool caps)
{
    static const int64_t scales[] = {100, 1000, 4000, 16000};
    o->max_req = scales[below(4)];
    rand_config(&g->c, caps);
    g->node = (hr_node){0, true, chance(5), chance(5), false};
    g->node.allocatable = chance(60) ? 1000 * between(1, 128) : between(0, 200000);
    g->n = (size_t)below(111);
    for (size_t i = 0; i < g->n; i++)
        rand_pod(g, i, o);
}

static void copy_node(gen_node *dst, const gen_node *src)
{
    memcpy(dst, src, sizeof *dst);
    for (size_t i = 0; i < dst->n; i++)
        dst->pods[i].ctr = dst->ctrs[i];
}

/* ---- design §3 restated ----------------------------------------------------- */

static int64_t req0(int64_t v)
{
    return v > 0 ? v : 0;
}

static int64_t oracle_booked(const hr_pod *p)
{
    if (p->phase == HR_PHASE_SUCCEEDED || p->phase == HR_PHASE_FAILED)
        return 0;
    int64_t over = req0(p->overhead_cpu);
    if (p->pod_cpu_req != HR_NONE)
        return p->pod_cpu_req + over;
    int64_t steady = 0, init_max = 0, sidecars = 0;
    for (uint32_t k = 0; k < p->n_ctr; k++) {
        const hr_container *c = &p->ctr[k];
        if (c->kind == HR_CTR_INIT) {
            int64_t v = req0(c->cpu_req) + sidecars;
            if (v > init_max)
                init_max = v;
        } else {
            steady += req0(c->cpu_req);
            if (c->kind == HR_CTR_SIDECAR)
                sidecars += req0(c->cpu_req);
        }
    }
    return (steady > init_max ? steady : init_max) + over;
}

static int64_t oracle_request(const hr_pod *p)
{
    int64_t r = 0;
    for (uint32_t k = 0; k < p->n_ctr; k++)
        if (hr_ctr_managed(&p->ctr[k]))
            r += p->ctr[k].cpu_req;
    return r;
}

static int64_t oracle_current(const hr_pod *p)
{
    int64_t s = 0;
    for (uint32_t k = 0; k < p->n_ctr; k++) {
        const hr_container *c = &p->ctr[k];
        if (!hr_ctr_managed(c))
            continue;
        if (c->cpu_lim == HR_NONE)
            return 0;
        s += c->cpu_lim;
    }
    return s;
}

/* A container's LimitRange ceiling (INT64_MAX when none), floored: a limit
 * above req * ratio is rejected by the API server. */
static int64_t ctr_bound(const hr_pod *p, const hr_container *c)
{
    int64_t b = INT64_MAX;
    if (p->limits.ctr_max != HR_NONE)
        b = p->limits.ctr_max;
    if (p->limits.ctr_ratio_milli != HR_NONE)
        b = hr_min64(b, (int64_t)((hr_i128)c->cpu_req * p->limits.ctr_ratio_milli / 1000));
    return b;
}

/* min(A', caps) of property (a), never below r (a limit below the request
 * is not a limit the API server takes). */
static int64_t pod_cap(const hr_config *c, int64_t A, const hr_pod *p, int64_t r)
{
    int64_t cap = hr_max64(A, r);
    if (c->max_multiplier_milli > 0)
        cap = hr_min64(cap, (int64_t)((hr_i128)r * c->max_multiplier_milli / 1000));
    if (p->max_cpu != HR_NONE)
        cap = hr_min64(cap, p->max_cpu);
    if (p->limits.pod_max != HR_NONE)
        cap = hr_min64(cap, p->limits.pod_max);
    if (p->limits.ctr_max != HR_NONE || p->limits.ctr_ratio_milli != HR_NONE) {
        int64_t sum = 0;
        for (uint32_t k = 0; k < p->n_ctr; k++)
            if (hr_ctr_managed(&p->ctr[k]))
                sum += hr_max64(ctr_bound(p, &p->ctr[k]), p->ctr[k].cpu_req);
        cap = hr_min64(cap, sum);
    }
    return hr_max64(cap, r);
}

/* design §2.4, restated: the first multiple of q at or above v (v small
 * here: the absurd-magnitude test does not use it). */
static int64_t grid_up(int64_t v, int64_t q)
{
    return v % q == 0 ? v : (v / q + 1) * q;
}

/* A managed container's least limit on the grid: its first grid point at
 * or above its request, or the request itself when its LimitRange bound
 * leaves no grid point at or above the request (the request wins). */
static int64_t grid_lo(const hr_pod *p, const hr_container *ct, int64_t q)
{
    int64_t g = grid_up(ct->cpu_req, q);
    return ctr_bound(p, ct) < g ? ct->cpu_req : g;
}

/* True when the pod's own caps (design §2.3 items 1–4, and never below the
 * request) leave no room for every managed container at its grid_lo: then
 * the request wins over the grid and every container stays at its
 * request. */
static bool pod_request_wins(const hr_config *c, int64_t A, const hr_pod *p, int64_t r)
{
    int64_t q = c->quantum;
    int64_t cap = hr_max64(A, r);
    if (c->max_multiplier_milli > 0)
        cap = hr_min64(cap, (int64_t)((hr_i128)r * c->max_multiplier_milli / 1000));
    if (p->max_cpu != HR_NONE)
        cap = hr_min64(cap, p->max_cpu);
    if (p->limits.pod_max != HR_NONE) {
        int64_t spent = 0;
        for (uint32_t k = 0; k < p->n_ctr; k++)
            if (hr_ctr_resizable(&p->ctr[k]) && !hr_ctr_managed(&p->ctr[k]) &&
                p->ctr[k].cpu_lim > 0)
                spent += p->ctr[k].cpu_lim;
        cap = hr_min64(cap, p->limits.pod_max - spent);
    }
    cap = hr_max64(cap, r);
    int64_t lo = 0;
    for (uint32_t k = 0; k < p->n_ctr; k++)
        if (hr_ctr_managed(&p->ctr[k]))
            lo += grid_lo(p, &p->ctr[k], q);
    return cap < lo;
}

/* Σ grid_lo over the managed containers: the target of a pod with no
 * slack, when the request does not win. */
static int64_t pod_grid_lo(const hr_pod *p, int64_t q)
{
    int64_t lo = 0;
    for (uint32_t k = 0; k < p->n_ctr; k++)
        if (hr_ctr_managed(&p->ctr[k]))
            lo += grid_lo(p, &p->ctr[k], q);
    return lo;
}

/* How often the request-wins exception wrote a limit off the grid, and
 * for which reason: the generator must reach both. */
static long g_offgrid_pod, g_offgrid_ctr, g_ctr_checked;

/* ---- running and checking a plan ----------------------------------------- */

typedef struct result {
    hr_node_plan np;
    hr_pod_plan out[MAXP];
    int64_t lim[MAXP * MAXC];
} result;

static void plan(const gen_node *g, result *r)
{
    for (size_t i = 0; i < MAXP * MAXC; i++)
        r->lim[i] = POISON;
    r->np = hr_plan_node(&g->c, &g->node, g->pods, g->n, r->out, r->lim);
}

static void dump_pod(const hr_pod *p, const hr_pod_plan *pp, const int64_t *lim)
{
    printf("  pod: phase %d booked %" PRId64 " request %" PRId64 " current %" PRId64
           " target %" PRId64 " reason %s guarded %d max_cpu %" PRId64 " lr {%" PRId64 ",%" PRId64
           ",%" PRId64 "} overhead %" PRId64 " podreq %" PRId64 "\n",
           (int)p->phase, pp->booked, pp->request, pp->current, pp->target,
           hr_reason_str(pp->reason), (int)pp->qos_guarded, p->max_cpu, p->limits.ctr_max,
           p->limits.ctr_ratio_milli, p->limits.pod_max, p->overhead_cpu, p->pod_cpu_req);
    for (uint32_t k = 0; k < p->n_ctr; k++) {
        const hr_container *c = &p->ctr[k];
        printf("    ctr kind %d cpu %" PRId64 "/%" PRId64 " mem %" PRId64 "/%" PRId64
               " restart %d -> %" PRId64 "\n",
               (int)c->kind, c->cpu_req, c->cpu_lim, c->mem_req, c->mem_lim, (int)c->cpu_restart,
               lim[pp->ctr_off + k]);
    }
}

static void dump_node(const gen_node *g, const result *r)
{
    printf("node: A %" PRId64 " known %d disk %d pid %d; floor %" PRId64 " mult %" PRId64
           " quantum %" PRId64 " grow %d shrink %d; R %" PRId64 " S %" PRId64 " M %" PRId64
           " N %u\n",
           g->node.allocatable, (int)g->node.known, (int)g->node.disk_pressure,
           (int)g->node.pid_pressure, g->c.min_burst_floor, g->c.max_multiplier_milli, g->c.quantum,
           g->c.grow_percent, g->c.shrink_percent, r->np.booked, r->np.slack, r->np.managed,
           r->np.n_managed);
}

/* Everything that must hold on any plan: accounting against the oracle,
 * bounds (property a), the split, the guard, hysteresis and the gate. */
static void check_plan(const gen_node *g, const result *r)
{
    const hr_config *c = &g->c;
    int64_t A = g->node.known ? g->node.allocatable : r->np.allocatable;
    int64_t R = 0, M = 0;
    uint32_t N = 0, npods = 0, nwrite = 0, total_ctr = 0;
    static unsigned char seen[MAXP * MAXC];
    memset(seen, 0, sizeof seen);
    for (size_t i = 0; i < g->n; i++)
        total_ctr += g->pods[i].n_ctr;

    for (size_t i = 0; i < g->n; i++) {
        const hr_pod *p = &g->pods[i];
        const hr_pod_plan *pp = &r->out[i];
        if (pp->ctr_off + p->n_ctr > total_ctr)
            PFAIL("pod %zu: ctr_off %u out of range", i, pp->ctr_off);
        for (uint32_t k = 0; k < p->n_ctr; k++) {
            if (seen[pp->ctr_off + k]++)
                PFAIL("pod %zu: container slot %u shared", i, pp->ctr_off + k);
            if (r->lim[pp->ctr_off + k] == POISON)
                PFAIL("pod %zu: container %u slot never written", i, k);
        }
        hr_reason want_reason = hr_pod_eligibility(p);
        if (pp->reason != want_reason)
            PFAIL("pod %zu: plan reason %s, hr_pod_eligibility %s", i, hr_reason_str(pp->reason),
                  hr_reason_str(want_reason));
        int64_t b = oracle_booked(p);
        if (pp->booked != b) {
            dump_pod(p, pp, r->lim);
            PFAIL("pod %zu: booked %" PRId64 ", design §3.1 gives %" PRId64, i, pp->booked, b);
        }
        if (!hr_pod_terminal(p)) {
            R += b;
            npods++;
        }

        if (pp->reason != HR_MANAGED) {
            if (pp->target != HR_NONE)
                PFAIL("pod %zu (%s): target %" PRId64 ", want HR_NONE", i,
                      hr_reason_str(pp->reason), pp->target);
            if (pp->write)
                PFAIL("pod %zu (%s): written", i, hr_reason_str(pp->reason));
            for (uint32_t k = 0; k < p->n_ctr; k++)
                if (r->lim[pp->ctr_off + k] != HR_NONE)
                    PFAIL("pod %zu (%s): container %u touched", i, hr_reason_str(pp->reason), k);
            continue;
        }

        int64_t rq = oracle_request(p);
        M += rq;
        N++;
        if (pp->request != rq)
            PFAIL("pod %zu: request %" PRId64 ", design §3.2 gives %" PRId64, i, pp->request, rq);
        if (pp->current != oracle_current(p))
            PFAIL("pod %zu: current %" PRId64 ", want %" PRId64, i, pp->current, oracle_current(p));

        /* (a) r <= target <= min(A', caps), one quantum over only by the guard. */
        int64_t cap = pod_cap(c, A, p, rq);
        int64_t q = c->quantum;
        if (pp->target < rq) {
            dump_node(g, r);
            dump_pod(p, pp, r->lim);
            PFAIL("pod %zu: target %" PRId64 " below request %" PRId64, i, pp->target, rq);
        }
        if (pp->target > cap + (pp->qos_guarded ? q : 0)) {
            dump_node(g, r);
            dump_pod(p, pp, r->lim);
            PFAIL("pod %zu: target %" PRId64 " above cap %" PRId64 " (guarded %d, quantum %" PRId64
                  ")",
                  i, pp->target, cap, (int)pp->qos_guarded, q);
        }
        /* The guard lifts a pod that would sit at exactly its request, by
         * lifting one container to its next grid point: at most one
         * quantum. */
        if (pp->qos_guarded && (pp->target <= rq || pp->target > rq + q)) {
            dump_node(g, r);
            dump_pod(p, pp, r->lim);
            PFAIL("pod %zu: guarded but target %" PRId64
                  " not within one quantum above request %" PRId64,
                  i, pp->target, rq);
        }

        /* The split: managed containers get >= request, on the quantum
         * grid (design §2.4), within their LimitRange bound (guard aside),
         * summing to the target; every other container is left alone. The
         * one exception to the grid: a cap below the first grid point
         * leaves a container at exactly its request. */
        bool pod_wins = pod_request_wins(c, A, p, rq);
        int64_t sum = 0, lifted = 0;
        for (uint32_t k = 0; k < p->n_ctr; k++) {
            const hr_container *ct = &p->ctr[k];
            int64_t l = r->lim[pp->ctr_off + k];
            if (!hr_ctr_managed(ct)) {
                if (l != HR_NONE) {
                    dump_pod(p, pp, r->lim);
                    PFAIL("pod %zu: unmanaged container %u written %" PRId64, i, k, l);
                }
                continue;
            }
            if (l < ct->cpu_req) {
                dump_pod(p, pp, r->lim);
                PFAIL("pod %zu: container %u limit %" PRId64 " below request %" PRId64, i, k, l,
                      ct->cpu_req);
            }
            bool ctr_wins = grid_lo(p, ct, q) != grid_up(ct->cpu_req, q);
            g_ctr_checked++;
            bool guard_lift = pp->qos_guarded && l == ct->cpu_req - ct->cpu_req % q + q;
            if (l % q != 0) {
                if (l != ct->cpu_req || !(pod_wins || ctr_wins)) {
                    dump_node(g, r);
                    dump_pod(p, pp, r->lim);
                    PFAIL("pod %zu: container %u limit %" PRId64 " (request %" PRId64
                          ") not a multiple of the quantum %" PRId64,
                          i, k, l, ct->cpu_req, q);
                }
                if (pod_wins)
                    g_offgrid_pod++;
                else
                    g_offgrid_ctr++;
            }
            /* ... and the exception is narrow: where the request wins, the
             * limit is exactly the request. */
            if ((pod_wins || ctr_wins) && l != ct->cpu_req && !guard_lift) {
                dump_node(g, r);
                dump_pod(p, pp, r->lim);
                PFAIL("pod %zu: container %u: a cap below the grid (pod %d, container %d) but "
                      "limit %" PRId64 " != request %" PRId64,
                      i, k, (int)pod_wins, (int)ctr_wins, l, ct->cpu_req);
            }
            int64_t cb = hr_max64(ctr_bound(p, ct), ct->cpu_req);
            if (l > cb) {
                if (guard_lift && !lifted)
                    lifted = 1;
                else {
                    dump_node(g, r);
                    dump_pod(p, pp, r->lim);
                    PFAIL("pod %zu: container %u limit %" PRId64
                          " above its LimitRange bound %" PRId64,
                          i, k, l, cb);
                }
            }
            sum += l;
        }
        if (sum != pp->target) {
            dump_pod(p, pp, r->lim);
            PFAIL("pod %zu: containers sum to %" PRId64 ", target %" PRId64, i, sum, pp->target);
        }
        if (hr_pod_qos(p, &r->lim[pp->ctr_off]) != HR_QOS_BURSTABLE) {
            dump_node(g, r);
            dump_pod(p, pp, r->lim);
            PFAIL("pod %zu: the planned limits make the pod %s", i,
                  hr_qos_str(hr_pod_qos(p, &r->lim[pp->ctr_off])));
        }

        if (pp->write != hr_should_write(c, pp->current, pp->target))
            PFAIL("pod %zu: write verdict differs from hr_should_write", i);
        if (pp->write)
            nwrite++;
        /* The gate, where the pod's whole limit is the target (every
         * container managed), must be hr_gate_check's verdict. */
        bool all_managed = true;
        for (uint32_t k = 0; k < p->n_ctr; k++)
            all_managed &= hr_ctr_managed(&p->ctr[k]);
        if (!pp->write && pp->gate != HR_GATE_PASS)
            PFAIL("pod %zu: gate %s without a write", i, hr_gate_str(pp->gate));
        if (pp->write && all_managed) {
            hr_gate want = hr_gate_check(&g->node, pp->current, pp->target, pp->target);
            if (pp->gate != want)
                PFAIL("pod %zu: gate %s, hr_gate_check says %s", i, hr_gate_str(pp->gate),
                      hr_gate_str(want));
        }
        if (pp->gate != HR_GATE_PASS && pp->current > 0 && pp->target <= pp->current)
            PFAIL("pod %zu: a decrease (%" PRId64 " -> %" PRId64 ") was gated %s", i, pp->current,
                  pp->target, hr_gate_str(pp->gate));
    }

    if (r->np.allocatable != A)
        PFAIL("A %" PRId64 ", want %" PRId64, r->np.allocatable, A);
    if (r->np.booked != R) {
        dump_node(g, r);
        PFAIL("R %" PRId64 ", design §3.1 gives %" PRId64, r->np.booked, R);
    }
    if (r->np.slack != A - R)
        PFAIL("S %" PRId64 ", want A - R = %" PRId64, r->np.slack, A - R);
    if (r->np.managed != M)
        PFAIL("M %" PRId64 ", want %" PRId64, r->np.managed, M);
    if (r->np.n_managed != N)
        PFAIL("N %u, want %u", r->np.n_managed, N);
    if (r->np.n_pods != npods)
        PFAIL("n_pods %u, want %u", r->np.n_pods, npods);
    if (r->np.n_write != nwrite)
        PFAIL("n_write %u, want %u", r->np.n_write, nwrite);
    int64_t f = hr_node_factor_milli(&r->np);
    if ((r->np.slack <= 0 || M == 0) ? f != 1000 : f < 1000)
        PFAIL("factor %" PRId64 " with S %" PRId64 " M %" PRId64, f, r->np.slack, M);
}

static gen_node G1, G2; /* large: static, not on the stack */
static result R1, R2, R3;

static void passed(const char *prop, int n)
{
    printf("property %s: %d cases passed (seed %" PRIu64 ")\n", prop, n, g_seed);
}

/* ---- (a) bounds, accounting, split, guard on any node ---------------------- */

static void test_prop_bounds(void **state)
{
    (void)state;
    gen_opts o = {true, true, true, 0};
    int managed_seen = 0, guarded_seen = 0;
    for (int k = 0; k < CASES; k++) {
        hr_prop_start("a-bounds", k);
        rand_node(&G1, &o, true);
        plan(&G1, &R1);
        check_plan(&G1, &R1);
        for (size_t i = 0; i < G1.n; i++) {
            managed_seen += R1.out[i].reason == HR_MANAGED;
            guarded_seen += R1.out[i].qos_guarded;
        }
    }
    /* A generator that never produced the interesting cases would pass
     * vacuously. */
    if (managed_seen < CASES || guarded_seen < 100 || g_offgrid_pod < 10 || g_offgrid_ctr < 10)
        fail_msg("generator too tame: %d managed pods, %d guarded, %ld/%ld limits off the grid "
                 "where the request wins (pod/container cap) (seed %" PRIu64 ")",
                 managed_seen, guarded_seen, g_offgrid_pod, g_offgrid_ctr, g_seed);
    printf("property a: of %ld container limits, %ld/%ld left at an off-grid request by a cap "
           "below the grid (pod/container)\n",
           g_ctr_checked, g_offgrid_pod, g_offgrid_ctr);
    passed("a (r <= target <= min(A', caps), split, accounting)", CASES);
}

/* ---- (b) no gain from splitting ------------------------------------------- */

static void test_prop_split(void **state)
{
    (void)state;
    gen_opts o = {false, true, true, 0};
    int done = 0, attempts = 0;
    while (done < CASES) {
        hr_prop_start("b-split", attempts++);
        if (attempts > 20 * CASES)
            fail_msg("split: could not build enough cases (seed %" PRIu64 ")", g_seed);
        rand_node(&G1, &o, false);
        /* Neither floor nor cap may bind: floor 0, no multiplier, no
         * max-cpu, no LimitRange; the allocatable cap cannot bind since
         * r(1 + S/M) <= M + S <= A. Quantum 1 makes the sum tight. */
        G1.c.quantum = chance(50) ? 1 : 10;
        if (G1.n + 5 > MAXP || G1.n > 105)
            G1.n = 100;
        /* The pod to split: one container, a request of at least k, no
         * memory pinning (the guard would add its quantum to pieces). */
        int kpieces = (int)between(2, 5);
        size_t v = G1.n++;
        hr_container *cv = G1.ctrs[v];
        cv[0] = (hr_container){
            between(kpieces, 4 * o.max_req), HR_NONE, HR_NONE, HR_NONE, HR_CTR_APP, false};
        if (chance(50))
            cv[0].cpu_lim = cv[0].cpu_req + below(o.max_req);
        G1.pods[v] = hr_pod_init();
        G1.pods[v].ctr = cv;
        G1.pods[v].n_ctr = 1;
        G1.pods[v].status_resources = true;
        plan(&G1, &R1);
        check_plan(&G1, &R1);
        if (R1.out[v].reason != HR_MANAGED)
            fail_msg("split victim not managed: %s", hr_reason_str(R1.out[v].reason));

        /* Split its request into kpieces positive parts, in place + appended. */
        copy_node(&G2, &G1);
        int64_t total = cv[0].cpu_req, left = total;
        size_t idx[5];
        for (int j = 0; j < kpieces; j++) {
            size_t at = j == 0 ? v : G2.n++;
            idx[j] = at;
            int64_t part = j == kpieces - 1 ? left : between(1, left - (kpieces - 1 - j));
            left -= part;
            G2.ctrs[at][0] = (hr_container){part, HR_NONE, HR_NONE, HR_NONE, HR_CTR_APP, false};
            G2.pods[at] = G1.pods[v];
            G2.pods[at].ctr = G2.ctrs[at];
        }
        plan(&G2, &R2);
        check_plan(&G2, &R2);
        if (R2.np.booked != R1.np.booked || R2.np.managed != R1.np.managed)
            PFAIL("split changed R or M (%" PRId64 "/%" PRId64 " -> %" PRId64 "/%" PRId64 ")",
                  R1.np.booked, R1.np.managed, R2.np.booked, R2.np.managed);
        for (size_t i = 0; i < G1.n; i++) {
            if (i == v)
                continue;
            if (R2.out[i].target != R1.out[i].target) {
                dump_node(&G1, &R1);
                dump_pod(&G1.pods[i], &R1.out[i], R1.lim);
                PFAIL("splitting pod %zu into %d changed pod %zu's target %" PRId64 " -> %" PRId64,
                      v, kpieces, i, R1.out[i].target, R2.out[i].target);
            }
        }
        int64_t sum = 0;
        for (int j = 0; j < kpieces; j++)
            sum += R2.out[idx[j]].target;
        int64_t diff = sum - R1.out[v].target;
        if (diff < 0)
            diff = -diff;
        if (diff > kpieces * G1.c.quantum) {
            dump_node(&G1, &R1);
            PFAIL("pod of %" PRId64 "m -> target %" PRId64 "; %d pieces sum to %" PRId64
                  " (more than %d quanta of %" PRId64 " apart)",
                  total, R1.out[v].target, kpieces, sum, kpieces, G1.c.quantum);
        }
        done++;
    }
    passed("b (splitting a pod changes no other target; pieces sum within k quanta)", done);
}

/* ---- (c) monotonicity ------------------------------------------------------ */

static void test_prop_monotone(void **state)
{
    (void)state;
    gen_opts o = {true, true, true, 0};
    for (int k = 0; k < CASES; k++) {
        hr_prop_start("c-monotone", k);
        rand_node(&G1, &o, true);
        if (G1.n >= MAXP - 1)
            G1.n = MAXP - 2;
        plan(&G1, &R1);
        copy_node(&G2, &G1);
        /* One more pod, anywhere in the list, managed or not. */
        size_t at = (size_t)below((int64_t)G2.n + 1);
        rand_pod(&G2, G2.n, &o);
        hr_pod added = G2.pods[G2.n];
        hr_container added_c[MAXC];
        memcpy(added_c, G2.ctrs[G2.n], sizeof added_c);
        for (size_t i = G2.n; i > at; i--) {
            memcpy(G2.ctrs[i], G2.ctrs[i - 1], sizeof G2.ctrs[i]);
            G2.pods[i] = G2.pods[i - 1];
            G2.pods[i].ctr = G2.ctrs[i];
        }
        memcpy(G2.ctrs[at], added_c, sizeof added_c);
        G2.pods[at] = added;
        G2.pods[at].ctr = G2.ctrs[at];
        G2.n++;
        plan(&G2, &R2);
        check_plan(&G2, &R2);
        for (size_t i = 0; i < G1.n; i++) {
            size_t j = i < at ? i : i + 1;
            if (R1.out[i].reason != R2.out[j].reason)
                PFAIL("adding a pod changed pod %zu's eligibility", i);
            if (R1.out[i].reason != HR_MANAGED)
                continue;
            if (R2.out[j].target > R1.out[i].target) {
                dump_node(&G1, &R1);
                dump_pod(&G1.pods[i], &R1.out[i], R1.lim);
                dump_node(&G2, &R2);
                dump_pod(&G2.pods[j], &R2.out[j], R2.lim);
                dump_pod(&G2.pods[at], &R2.out[at], R2.lim);
                PFAIL("adding a pod (booked %" PRId64 ", %s) raised pod %zu's target %" PRId64
                      " -> %" PRId64,
                      R2.out[at].booked, hr_reason_str(R2.out[at].reason), i, R1.out[i].target,
                      R2.out[j].target);
            }
        }
    }
    passed("c (adding a pod never raises another pod's target)", CASES);
}

/* ---- (d) over-booked nodes -------------------------------------------------- */

static void test_prop_overbooked(void **state)
{
    (void)state;
    gen_opts o = {true, true, true, 0};
    int done = 0;
    for (int k = 0; k < CASES; k++) {
        hr_prop_start("d-overbooked", k);
        rand_node(&G1, &o, true);
        int64_t R = 0;
        for (size_t i = 0; i < G1.n; i++)
            R += oracle_booked(&G1.pods[i]);
        /* Allocatable at or below what is booked: S <= 0. */
        G1.node.allocatable = chance(20) ? R : between(0, R);
        plan(&G1, &R1);
        check_plan(&G1, &R1);
        if (R1.np.slack > 0)
            PFAIL("S %" PRId64 " > 0 with A %" PRId64 " <= R %" PRId64, R1.np.slack,
                  G1.node.allocatable, R);
        for (size_t i = 0; i < G1.n; i++) {
            const hr_pod_plan *pp = &R1.out[i];
            if (pp->reason != HR_MANAGED)
                continue;
            /* No slack: every container at its first grid point at or
             * above its request, or at its request where a cap below the
             * grid makes the request win; the guard adds at most one
             * quantum to a pod left at its request. */
            const hr_pod *p = &G1.pods[i];
            int64_t q = G1.c.quantum;
            int64_t want = pod_request_wins(&G1.c, R1.np.allocatable, p, pp->request)
                               ? pp->request
                               : pod_grid_lo(p, q);
            bool ok = pp->qos_guarded
                          ? want == pp->request && pp->target > want && pp->target <= want + q
                          : pp->target == want;
            if (!ok) {
                dump_node(&G1, &R1);
                dump_pod(p, pp, R1.lim);
                PFAIL("S <= 0 but pod %zu target %" PRId64 " != %" PRId64 " (request %" PRId64
                      ", guarded %d)",
                      i, pp->target, want, pp->request, (int)pp->qos_guarded);
            }
        }
        done++;
    }
    passed("d (S <= 0 => target = first grid point(s) at or above the request, guard aside)", done);
}

/* ---- (e) determinism and order independence ---------------------------------- */

static void same_pod(size_t i, size_t j, const hr_pod *p, const result *a, const result *b,
                     const char *what)
{
    const hr_pod_plan *x = &a->out[i], *y = &b->out[j];
    if (x->reason != y->reason || x->booked != y->booked || x->request != y->request ||
        x->current != y->current || x->target != y->target || x->write != y->write ||
        x->qos_guarded != y->qos_guarded || x->gate != y->gate)
        PFAIL("%s: pod %zu planned differently (target %" PRId64 " vs %" PRId64 ")", what, i,
              x->target, y->target);
    for (uint32_t k = 0; k < p->n_ctr; k++)
        if (a->lim[x->ctr_off + k] != b->lim[y->ctr_off + k])
            PFAIL("%s: pod %zu container %u limit %" PRId64 " vs %" PRId64, what, i, k,
                  a->lim[x->ctr_off + k], b->lim[y->ctr_off + k]);
}

static void test_prop_deterministic(void **state)
{
    (void)state;
    gen_opts o = {true, true, true, 0};
    static hr_pod shuffled[MAXP];
    static size_t perm[MAXP];
    for (int k = 0; k < CASES; k++) {
        hr_prop_start("e-determinism", k);
        rand_node(&G1, &o, true);
        plan(&G1, &R1);
        plan(&G1, &R2);
        for (size_t i = 0; i < G1.n; i++)
            same_pod(i, i, &G1.pods[i], &R1, &R2, "same input twice");
        if (memcmp(&R1.np, &R2.np, sizeof R1.np) != 0)
            PFAIL("same input twice: node plan differs");

        for (size_t i = 0; i < G1.n; i++)
            perm[i] = i;
        for (size_t i = G1.n; i > 1; i--) {
            size_t j = (size_t)below((int64_t)i);
            size_t t = perm[i - 1];
            perm[i - 1] = perm[j];
            perm[j] = t;
        }
        for (size_t i = 0; i < G1.n; i++)
            shuffled[i] = G1.pods[perm[i]];
        for (size_t i = 0; i < MAXP * MAXC; i++)
            R3.lim[i] = POISON;
        R3.np = hr_plan_node(&G1.c, &G1.node, shuffled, G1.n, R3.out, R3.lim);
        for (size_t i = 0; i < G1.n; i++)
            same_pod(perm[i], i, &G1.pods[perm[i]], &R1, &R3, "shuffled pods");
        if (R1.np.booked != R3.np.booked || R1.np.slack != R3.np.slack ||
            R1.np.managed != R3.np.managed || R1.np.n_managed != R3.np.n_managed ||
            R1.np.n_pods != R3.np.n_pods || R1.np.n_write != R3.np.n_write)
            PFAIL("shuffled pods: node plan differs");
    }
    passed("e (determinism; independent of pod order)", CASES);
}

/* ---- absurd magnitudes: no overflow, no nonsense ------------------------------ */

/* Log-uniform over the whole int64 range. */
static int64_t huge(void)
{
    int bits = (int)below(64);
    return bits == 0 ? 0 : (int64_t)(next_u64() >> (64 - bits));
}

static void test_prop_absurd(void **state)
{
    (void)state;
    /* Requests, limits, allocatable, caps and the quantum anywhere in
     * int64: the core promises 128-bit products and saturation, so under
     * UBSan (the sanitizer build) any wrap is a failure, and the basic
     * bounds must still hold. Accounting sums may saturate, so only
     * per-pod facts are checked. */
    for (int k = 0; k < CASES; k++) {
        hr_prop_start("f-absurd", k);
        hr_config_defaults(&G1.c);
        G1.c.quantum = chance(50) ? 1 + below(1000) : 1 + huge() % (INT64_C(1) << 40);
        G1.c.min_burst_floor = huge();
        G1.c.max_multiplier_milli = chance(30) ? 0 : 1000 + below(99001);
        G1.c.grow_percent = (int)below(101);
        G1.c.shrink_percent = (int)below(101);
        G1.node = (hr_node){huge(), true, false, false, false};
        G1.n = (size_t)below(21);
        for (size_t i = 0; i < G1.n; i++) {
            hr_container *cs = G1.ctrs[i];
            uint32_t n = (uint32_t)between(1, MAXC);
            for (uint32_t j = 0; j < n; j++) {
                uint8_t kind = j + 1 == n ? HR_CTR_APP : (uint8_t)below(3);
                int64_t rq = chance(10) ? HR_NONE : huge();
                int64_t base = rq > 0 ? rq : 0;
                int64_t lm =
                    chance(50) ? HR_NONE : base + huge() % (INT64_MAX - base + (base == 0 ? 0 : 1));
                int64_t mq = chance(50) ? HR_NONE : huge();
                cs[j] = (hr_container){rq, lm, mq, chance(50) ? mq : HR_NONE, kind, false};
            }
            hr_pod p = hr_pod_init();
            p.ctr = cs;
            p.n_ctr = n;
            if (chance(20))
                p.overhead_cpu = huge();
            if (chance(20))
                p.max_cpu = huge();
            if (chance(20))
                p.limits = (hr_limit_bounds){huge(), chance(50) ? HR_NONE : 1000 + huge() % 1000000,
                                             huge()};
            G1.pods[i] = p;
        }
        plan(&G1, &R1);
        for (size_t i = 0; i < G1.n; i++) {
            const hr_pod *p = &G1.pods[i];
            const hr_pod_plan *pp = &R1.out[i];
            if (pp->reason != HR_MANAGED) {
                if (pp->target != HR_NONE)
                    PFAIL("pod %zu unmanaged with target %" PRId64, i, pp->target);
                continue;
            }
            if (pp->target < pp->request) {
                dump_node(&G1, &R1);
                dump_pod(p, pp, R1.lim);
                PFAIL("pod %zu: target %" PRId64 " < request %" PRId64, i, pp->target, pp->request);
            }
            hr_i128 sum = 0;
            for (uint32_t j = 0; j < p->n_ctr; j++) {
                int64_t l = R1.lim[pp->ctr_off + j];
                if (!hr_ctr_managed(&p->ctr[j])) {
                    if (l != HR_NONE)
                        PFAIL("pod %zu: container %u touched", i, j);
                    continue;
                }
                if (l < p->ctr[j].cpu_req) {
                    dump_node(&G1, &R1);
                    dump_pod(p, pp, R1.lim);
                    PFAIL("pod %zu: container %u limit %" PRId64 " < request %" PRId64, i, j, l,
                          p->ctr[j].cpu_req);
                }
                sum += l;
            }
            if (pp->target != INT64_MAX && sum != pp->target) {
                dump_node(&G1, &R1);
                dump_pod(p, pp, R1.lim);
                PFAIL("pod %zu: containers sum to %.0f, target %" PRId64, i, (double)sum,
                      pp->target);
            }
        }
    }
    passed("f (absurd magnitudes: no overflow, bounds hold)", CASES);
}

int main(void)
{
    g_seed = hr_prop_seed_from_env();
    printf("policy properties: seed %" PRIu64 " (replay with HR_SEED=%" PRIu64 ")\n", g_seed,
           g_seed);
    fflush(stdout);
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_prop_bounds),        cmocka_unit_test(test_prop_split),
        cmocka_unit_test(test_prop_monotone),      cmocka_unit_test(test_prop_overbooked),
        cmocka_unit_test(test_prop_deterministic), cmocka_unit_test(test_prop_absurd),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
