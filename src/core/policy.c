/*
 * policy.c — design §2 for one node, without allocation.
 *
 * Two passes over the node's pods: the first sums what is booked (R) and
 * what is managed (M, N) — under TenantFair (design §2.9) also each
 * namespace's share, kept in the plan of its first pod, so no memory is
 * needed beyond the caller's; the second computes each managed pod's target,
 * splits it over containers, applies the QoS guard and hysteresis, and asks
 * the gates whether a write could go. All arithmetic is integer millicores;
 * products go through 128 bits so even absurd inputs cannot overflow.
 */
#include "policy.h"

#include <string.h>

#include "wide.h"

/* The quantum grid: q, and for the planner's hot loop the multiplier of
 * Lemire, Kaser and Kurz's "direct remainder" (Software: Practice and
 * Experience, 2019): for 32-bit v and q, with m = 2^64 / q rounded up,
 * v % q = ((m * v mod 2^64) * q) >> 64 exactly — two multiplications
 * instead of a 64-bit division, the costliest instruction of a node's plan
 * (a dozen per pod). Values outside 32 bits, and grids built without it
 * (the public one-shot functions, where working m out would cost the very
 * division it saves), take the % as before: the same remainder either way. */
typedef struct grid {
    int64_t q;
    bool fast; /* 1 <= q <= UINT32_MAX and m is set */
    uint64_t m;
} grid;

static grid grid_plain(int64_t q)
{
    return (grid){q, false, 0};
}

static grid grid_fast(int64_t q)
{
    grid g = {q, q >= 1 && q <= (int64_t)UINT32_MAX, 0};
    if (g.fast)
        g.m = UINT64_MAX / (uint64_t)q + 1; /* wraps to 0 for q = 1: v % 1 = 0 */
    return g;
}

static int64_t mod_g(int64_t v, const grid *g)
{
    if (g->fast && v >= 0 && v <= (int64_t)UINT32_MAX) {
        uint64_t low = g->m * (uint64_t)v;
        return (int64_t)(((hr_u128)low * (uint64_t)g->q) >> 64);
    }
    return v % g->q;
}

/* The last multiple of q at or below v, for v >= 0. */
static int64_t floor_g(int64_t v, const grid *g)
{
    return v - mod_g(v, g);
}

static int64_t grid_ceil(int64_t v, const grid *g)
{
    int64_t f = floor_g(v, g);
    if (f == v)
        return v;
    return f <= INT64_MAX - g->q ? f + g->q : HR_NONE;
}

static int64_t quantize(int64_t v, int64_t lo, int64_t cap, const grid *g)
{
    int64_t q = g->q;
    if (lo == HR_NONE || lo > cap)
        return HR_NONE;
    int64_t d = hr_min64(v, cap) - lo;
    int64_t k = 0;
    if (d > 0) {
        k = floor_g(d, g);
        if (d - k >= q - (d - k) && k <= INT64_MAX - q)
            k += q; /* half rounds up */
    }
    if (k > cap - lo)
        k -= q; /* lo <= cap, so k stays >= 0 */
    return lo + k;
}

int64_t hr_node_factor_milli(const hr_node_plan *np)
{
    if (np->slack <= 0 || np->managed <= 0)
        return 1000;
    hr_i128 f = ((hr_i128)np->slack * 1000 * 2 + np->managed) / ((hr_i128)np->managed * 2);
    f += 1000;
    return f > INT64_MAX ? INT64_MAX : (int64_t)f;
}

int64_t hr_grid_ceil(int64_t v, int64_t q)
{
    grid g = grid_plain(q);
    return grid_ceil(v, &g);
}

int64_t hr_quantize(int64_t v, int64_t lo, int64_t cap, int64_t q)
{
    grid g = grid_plain(q);
    return quantize(v, lo, cap, &g);
}

/* A managed container's LimitRange ceiling; INT64_MAX when unbounded. */
static int64_t ctr_bound(const hr_pod *p, const hr_container *c)
{
    int64_t cap = INT64_MAX;
    if (p->limits.ctr_max != HR_NONE)
        cap = p->limits.ctr_max;
    if (p->limits.ctr_ratio_milli != HR_NONE)
        cap = hr_min64(cap, hr_muldiv64(c->cpu_req, p->limits.ctr_ratio_milli, 1000));
    return cap;
}

/* Where a managed container's limit may lie on the grid (design §2.4,
 * §3.4): from its first grid point at or above its request (*lo) to the
 * last grid point at or under its LimitRange bound (*hi, INT64_MAX when
 * unbounded). When the bound leaves no grid point at or above the request
 * the request wins over the grid: *lo = *hi = request. */
static void ctr_span(const hr_pod *p, const hr_container *c, const grid *gr, int64_t *lo,
                     int64_t *hi)
{
    int64_t g = grid_ceil(c->cpu_req, gr);
    int64_t b = ctr_bound(p, c);
    if (g == HR_NONE || b < g) {
        *lo = *hi = c->cpu_req;
        return;
    }
    *lo = g;
    *hi = b == INT64_MAX ? INT64_MAX : floor_g(b, gr);
}

/* Each managed container's span (ctr_span), worked out once per pod and
 * shared by the target, its caps and the split, instead of once per look:
 * the water-filling asks for them in every round. A pod with more
 * containers than SPAN_CACHED (none that Kubernetes users write) has them
 * worked out on every look, with the same results. */
#define SPAN_CACHED 16

typedef struct spans {
    const hr_pod *p;
    grid g;
    bool cached;
    int64_t lo[SPAN_CACHED], hi[SPAN_CACHED]; /* managed containers only */
} spans;

static void spans_init(spans *sp, const hr_pod *p, const grid *g)
{
    sp->p = p;
    sp->g = *g;
    sp->cached = p->n_ctr <= SPAN_CACHED;
    if (!sp->cached)
        return;
    for (uint32_t i = 0; i < p->n_ctr; i++)
        if (hr_ctr_managed(&p->ctr[i]))
            ctr_span(p, &p->ctr[i], g, &sp->lo[i], &sp->hi[i]);
}

/* Managed container i's *lo and *hi (ctr_span). */
static int64_t span_lo(const spans *sp, uint32_t i)
{
    if (sp->cached)
        return sp->lo[i];
    int64_t lo, hi;
    ctr_span(sp->p, &sp->p->ctr[i], &sp->g, &lo, &hi);
    return lo;
}

static int64_t span_hi(const spans *sp, uint32_t i)
{
    if (sp->cached)
        return sp->hi[i];
    int64_t lo, hi;
    ctr_span(sp->p, &sp->p->ctr[i], &sp->g, &lo, &hi);
    return hi;
}

/* How much managed container i may take above its *lo; INT64_MAX when
 * unbounded. */
static int64_t span_room(const spans *sp, uint32_t i)
{
    int64_t hi = span_hi(sp, i);
    return hi == INT64_MAX ? INT64_MAX : hi - span_lo(sp, i);
}

/* Σ over managed containers of their *hi: the most the split can place in
 * the pod, so the pod-level cap never promises what the containers cannot
 * hold. INT64_MAX when nothing bounds. */
static int64_t container_caps_total(const spans *sp)
{
    const hr_pod *p = sp->p;
    if (p->limits.ctr_max == HR_NONE && p->limits.ctr_ratio_milli == HR_NONE)
        return INT64_MAX;
    int64_t sum = 0;
    for (uint32_t i = 0; i < p->n_ctr; i++)
        if (hr_ctr_managed(&p->ctr[i]))
            sum = hr_sadd64(sum, span_hi(sp, i));
    return sum;
}

/* The least pod target that keeps every managed container on the grid:
 * Σ of their *lo. A caller's request that is not the sum of the managed
 * containers' (a bare piece under test) is taken as one container. */
static int64_t grid_floor(const spans *sp, int64_t request)
{
    const hr_pod *p = sp->p;
    int64_t sum_req = 0, sum_lo = 0;
    for (uint32_t i = 0; i < p->n_ctr; i++) {
        const hr_container *c = &p->ctr[i];
        if (hr_ctr_managed(c)) {
            sum_req = hr_sadd64(sum_req, c->cpu_req);
            sum_lo = hr_sadd64(sum_lo, span_lo(sp, i));
        }
    }
    if (sum_req != request || sum_lo == INT64_MAX)
        return grid_ceil(request, &sp->g);
    return sum_lo;
}

/* CPU limits of resizable containers the policy does not touch. */
static int64_t unmanaged_limits(const hr_pod *p)
{
    int64_t sum = 0;
    for (uint32_t i = 0; i < p->n_ctr; i++) {
        const hr_container *c = &p->ctr[i];
        if (hr_ctr_resizable(c) && !hr_ctr_managed(c) && c->cpu_lim > 0)
            sum = hr_sadd64(sum, c->cpu_lim);
    }
    return sum;
}

/* The per-node part of design §2.2's burst, worked out once per node:
 * whether pods burst at all (slack, something managed) and the floor
 * min(minBurstFloor, S / N). */
typedef struct burst_share {
    bool on;
    int64_t slack, managed, floor;
} burst_share;

static burst_share burst_of(const hr_config *c, int64_t slack, int64_t managed, uint32_t n_managed)
{
    burst_share b = {slack > 0 && managed > 0 && n_managed > 0, slack, managed, 0};
    if (b.on)
        b.floor = hr_min64(c->min_burst_floor, slack / (int64_t)n_managed);
    return b;
}

static int64_t pod_raw(const burst_share *b, int64_t request)
{
    int64_t burst = 0;
    if (b->on)
        burst = hr_max64(hr_muldiv64(b->slack, request, b->managed), b->floor);
    return hr_sadd64(request, burst);
}

int64_t hr_pod_floor(const hr_config *c, int64_t slack, int64_t managed, uint32_t n_managed)
{
    return burst_of(c, slack, managed, n_managed).floor;
}

int64_t hr_pod_raw(const hr_config *c, int64_t slack, int64_t managed, uint32_t n_managed,
                   int64_t request)
{
    burst_share b = burst_of(c, slack, managed, n_managed);
    return pod_raw(&b, request);
}

/* hr_pod_caps_of on the pod's spans, with unmanaged_limits(p) given. */
static void caps_of(const hr_config *c, int64_t allocatable, const spans *sp, int64_t unmanaged,
                    int64_t request, hr_pod_caps *out)
{
    const hr_pod *p = sp->p;
    int64_t r = request;
    int64_t *b = out->bound;
    bool *on = out->on;
    on[HR_CAP_MULTIPLIER] = c->max_multiplier_milli > 0;
    b[HR_CAP_MULTIPLIER] =
        on[HR_CAP_MULTIPLIER] ? hr_muldiv64(r, c->max_multiplier_milli, 1000) : 0;
    on[HR_CAP_ALLOCATABLE] = true;
    b[HR_CAP_ALLOCATABLE] = hr_max64(allocatable, r);
    on[HR_CAP_MAX_CPU] = p->max_cpu != HR_NONE;
    b[HR_CAP_MAX_CPU] = on[HR_CAP_MAX_CPU] ? p->max_cpu : 0;
    on[HR_CAP_LR_POD] = p->limits.pod_max != HR_NONE;
    b[HR_CAP_LR_POD] = on[HR_CAP_LR_POD] ? p->limits.pod_max - unmanaged : 0;
    int64_t ct = container_caps_total(sp);
    on[HR_CAP_LR_CONTAINER] = ct != INT64_MAX;
    b[HR_CAP_LR_CONTAINER] = on[HR_CAP_LR_CONTAINER] ? ct : 0;
    on[HR_CAP_QUOTA] = p->quota_on;
    b[HR_CAP_QUOTA] = p->quota_on ? p->quota_cap : 0;
    int64_t cap = INT64_MAX;
    hr_cap_kind kind = HR_CAP_ALLOCATABLE; /* always applies */
    for (int k = 0; k < HR_CAP_REQUEST; k++)
        if (on[k] && b[k] < cap) {
            cap = b[k];
            kind = (hr_cap_kind)k;
        }
    /* A limit below the request is invalid: no cap may push under r. */
    if (cap < r) {
        cap = r;
        kind = HR_CAP_REQUEST;
    }
    out->cap = cap;
    out->kind = kind;
}

static int64_t quantum(const hr_config *c)
{
    return c->quantum > 0 ? c->quantum : 1;
}

/* The policy sees a pod-level pod as its pod-level resources (design
 * §2.13): p itself, or its view in *v (over *one). */
static const hr_pod *level_view(const hr_pod *p, hr_pod *v, hr_container *one)
{
    if (!hr_pod_level(p))
        return p;
    *v = hr_pod_level_view(p, one);
    return v;
}

void hr_pod_caps_of(const hr_config *c, int64_t allocatable, const hr_pod *p, int64_t request,
                    hr_pod_caps *out)
{
    hr_container one;
    hr_pod view;
    p = level_view(p, &view, &one);
    spans sp;
    grid g = grid_plain(quantum(c));
    spans_init(&sp, p, &g);
    caps_of(c, allocatable, &sp, unmanaged_limits(p), request, out);
}

const char *hr_cap_str(hr_cap_kind k)
{
    switch (k) {
    case HR_CAP_MULTIPLIER: return "maxMultiplier";
    case HR_CAP_ALLOCATABLE: return "allocatable";
    case HR_CAP_MAX_CPU: return "max-cpu";
    case HR_CAP_LR_POD: return "LimitRange Pod max";
    case HR_CAP_LR_CONTAINER: return "LimitRange Container bounds";
    case HR_CAP_QUOTA: return "ResourceQuota share";
    case HR_CAP_REQUEST: return "request";
    default: return "?";
    }
}

const char *hr_cap_key(hr_cap_kind k)
{
    switch (k) {
    case HR_CAP_MULTIPLIER: return "multiplier";
    case HR_CAP_ALLOCATABLE: return "allocatable";
    case HR_CAP_MAX_CPU: return "max-cpu";
    case HR_CAP_LR_POD:
    case HR_CAP_LR_CONTAINER: return "limitrange";
    case HR_CAP_QUOTA: return "quota";
    default: return "none";
    }
}

hr_cap_kind hr_cap_binding(const hr_pod_caps *caps, int64_t raw, int64_t *limit)
{
    hr_cap_kind k = caps->kind;
    int64_t v = caps->cap;
    if (k == HR_CAP_REQUEST) {
        k = HR_CAP_COUNT_;
        for (int i = 0; i < HR_CAP_REQUEST; i++)
            if (caps->on[i] && (k == HR_CAP_COUNT_ || caps->bound[i] < v)) {
                v = caps->bound[i];
                k = (hr_cap_kind)i;
            }
    } else if (raw < caps->cap) {
        k = HR_CAP_COUNT_;
    }
    if (limit != NULL)
        *limit = k == HR_CAP_COUNT_ ? HR_NONE : v;
    return k;
}

/* hr_pod_target from the raw target, on the pod's spans. */
static int64_t pod_target(const hr_config *c, int64_t allocatable, int64_t raw, const spans *sp,
                          int64_t unmanaged, int64_t request, int64_t *cap_out)
{
    int64_t r = request;
    /* Caps, in the order of design §2.3; they always win over the floor. */
    hr_pod_caps caps;
    caps_of(c, allocatable, sp, unmanaged, r, &caps);
    int64_t cap = caps.cap;
    int64_t t = hr_min64(raw, cap);

    /* Quantize the target (design §2.4): the nearest point of the grid at
     * or above the grid floor, stepping down when rounding would cross the
     * cap. A cap below the grid floor leaves no grid point between the
     * request and the cap: the request wins over the grid. */
    int64_t tq = quantize(t, grid_floor(sp, r), cap, &sp->g);
    if (cap_out != NULL)
        *cap_out = cap;
    return tq == HR_NONE ? r : tq;
}

int64_t hr_pod_target(const hr_config *c, int64_t allocatable, int64_t slack, int64_t managed,
                      uint32_t n_managed, const hr_pod *p, int64_t request, int64_t *cap_out)
{
    hr_container one;
    hr_pod view;
    p = level_view(p, &view, &one);
    spans sp;
    grid g = grid_plain(quantum(c));
    spans_init(&sp, p, &g);
    int64_t raw = hr_pod_raw(c, slack, managed, n_managed, request);
    return pod_target(c, allocatable, raw, &sp, unmanaged_limits(p), request, cap_out);
}

/* The burst above the floors, placed in quanta over the managed
 * containers of a pod with more than one (hr_split_target). */
static void split_burst(const spans *sp, int64_t request, int64_t burst, int64_t *limits)
{
    const hr_pod *p = sp->p;
    const grid *g = &sp->g;
    int64_t q = g->q;
    /* Water-filling in quanta: share the burst above the floors pro-rata
     * to requests among the containers that still have room under their
     * LimitRange bounds, again and again until it is placed or nobody has
     * room. A share a bound cuts goes to the others, so the pod gets its
     * whole target and the pod total stays monotone in the node's slack. */
    int64_t placed = 0;
    for (uint32_t round = 0; round <= p->n_ctr; round++) {
        int64_t pool = burst - placed;
        if (pool < q)
            break;
        int64_t open_req = 0;
        for (uint32_t i = 0; i < p->n_ctr; i++)
            if (limits[i] != HR_NONE && limits[i] - span_lo(sp, i) < span_room(sp, i))
                open_req = hr_sadd64(open_req, p->ctr[i].cpu_req);
        if (open_req == 0)
            break;
        int64_t added = 0;
        for (uint32_t i = 0; i < p->n_ctr; i++) {
            if (limits[i] == HR_NONE)
                continue;
            int64_t have = limits[i] - span_lo(sp, i);
            int64_t room = span_room(sp, i) - have;
            if (room <= 0)
                continue;
            int64_t add =
                hr_min64(floor_g(hr_muldiv64(pool, p->ctr[i].cpu_req, open_req), g), room);
            limits[i] += add;
            added += add;
        }
        placed += added;
        if (added == 0)
            break;
    }
    /* Fewer than one quantum per open container is left: hand the quanta
     * to the containers furthest below their exact share (first in spec
     * order on ties). */
    while (burst - placed >= q) {
        int best = -1;
        int64_t best_gap = INT64_MIN;
        for (uint32_t i = 0; i < p->n_ctr; i++) {
            if (limits[i] == HR_NONE)
                continue;
            int64_t have = limits[i] - span_lo(sp, i);
            if (have + q > span_room(sp, i))
                continue;
            int64_t gap = hr_muldiv64(burst, p->ctr[i].cpu_req, request) - have;
            if (gap > best_gap) {
                best_gap = gap;
                best = (int)i;
            }
        }
        if (best < 0)
            break;
        limits[best] += q;
        placed += q;
    }
}

/* hr_split_target on the pod's spans. */
static int64_t split_target(const spans *sp, int64_t request, int64_t target, int64_t *limits,
                            bool *guarded)
{
    const hr_pod *p = sp->p;
    const grid *g = &sp->g;
    int64_t q = g->q;
    if (guarded != NULL)
        *guarded = false;

    /* Every managed container starts at its grid floor (design §2.4): its
     * first grid point at or above its request. A target below the sum of
     * the floors is the request-wins case of hr_pod_target: every
     * container stays at its request. */
    int64_t base = 0;
    uint32_t n_set = 0, only = 0;
    for (uint32_t i = 0; i < p->n_ctr; i++) {
        limits[i] = HR_NONE;
        if (hr_ctr_managed(&p->ctr[i]) && request > 0) {
            limits[i] = span_lo(sp, i);
            base = hr_sadd64(base, limits[i]);
            n_set++;
            only = i;
        }
    }
    if (target < base)
        for (uint32_t i = 0; i < p->n_ctr; i++)
            if (limits[i] != HR_NONE)
                limits[i] = p->ctr[i].cpu_req;
    int64_t burst = target > base ? target - base : 0;

    /* One managed container (most pods): the water-filling below comes
     * down to its floor plus the burst floored to the grid, cut at its room
     * — the same limit, without the rounds. */
    if (n_set == 1) {
        if (burst >= q)
            limits[only] += hr_min64(floor_g(burst, g), span_room(sp, only));
    } else {
        split_burst(sp, request, burst, limits);
    }

    /* QoS guard (design §3.3): the API server refuses a resize that would
     * turn the pod Guaranteed; lift the largest container to the next grid
     * point above its request (one quantum up for a request on the grid). */
    if (hr_pod_qos(p, limits) == HR_QOS_GUARANTEED) {
        int best = -1;
        for (uint32_t i = 0; i < p->n_ctr; i++)
            if (limits[i] != HR_NONE && (best < 0 || p->ctr[i].cpu_req > p->ctr[best].cpu_req))
                best = (int)i;
        if (best >= 0) {
            limits[best] = hr_sadd64(floor_g(p->ctr[best].cpu_req, g), q);
            if (guarded != NULL)
                *guarded = true;
        }
    }

    int64_t total = 0;
    for (uint32_t i = 0; i < p->n_ctr; i++)
        if (limits[i] != HR_NONE)
            total = hr_sadd64(total, limits[i]);
    return total;
}

int64_t hr_pod_unmanaged_limits(const hr_pod *p)
{
    return hr_pod_level(p) ? 0 : unmanaged_limits(p);
}

int64_t hr_pod_grid_floor(const hr_config *c, const hr_pod *p, int64_t request)
{
    hr_container one;
    hr_pod view;
    p = level_view(p, &view, &one);
    spans sp;
    grid g = grid_plain(quantum(c));
    spans_init(&sp, p, &g);
    return grid_floor(&sp, request);
}

int64_t hr_split_target(const hr_config *c, const hr_pod *p, int64_t request, int64_t target,
                        int64_t *limits, bool *guarded)
{
    spans sp;
    grid g = grid_plain(quantum(c));
    if (hr_pod_level(p)) {
        /* design §2.13: one pod-level limit; no container is written. */
        hr_container one;
        hr_pod v;
        int64_t one_lim;
        for (uint32_t i = 0; i < p->n_ctr; i++)
            limits[i] = HR_NONE;
        spans_init(&sp, level_view(p, &v, &one), &g);
        return split_target(&sp, request, target, &one_lim, guarded);
    }
    spans_init(&sp, p, &g);
    return split_target(&sp, request, target, limits, guarded);
}

bool hr_should_write(const hr_config *c, int64_t current, int64_t target)
{
    if (current <= 0)
        return true;
    if (target == current)
        return false;
    if (target > current)
        return (hr_i128)(target - current) * 100 >= (hr_i128)c->grow_percent * current;
    return (hr_i128)(current - target) * 100 >= (hr_i128)c->shrink_percent * current;
}

int64_t hr_tenant_slack(int64_t slack, uint64_t weight, uint64_t weight_total)
{
    if (slack <= 0 || weight_total == 0)
        return 0;
    return (int64_t)((hr_u128)(uint64_t)slack * weight / weight_total);
}

static bool same_tenant(const hr_pod *a, const hr_pod *b)
{
    if (a->tenant_by_label != b->tenant_by_label)
        return false;
    if (a->tenant == b->tenant)
        return true;
    return a->tenant != NULL && b->tenant != NULL && strcmp(a->tenant, b->tenant) == 0;
}

/* Design §2.9: group the managed pods by tenant (each pod's plan names the
 * first managed pod of its tenant, whose plan sums the tenant's M_t and N_t
 * over all its namespaces and keeps the least weight any of its pods
 * carries, so neither the order of the pods nor how the tenant spreads
 * them over namespaces can matter), then give each tenant its ⌊S·w_t/W⌋. */
static void tenant_shares(const hr_pod *pods, size_t n, hr_node_plan *np, hr_pod_plan *out)
{
    for (size_t i = 0; i < n; i++) {
        hr_pod_plan *pp = &out[i];
        if (pp->reason != HR_MANAGED)
            continue;
        uint32_t w = pods[i].tenant_weight ? pods[i].tenant_weight : 1;
        size_t h = i;
        for (size_t j = 0; j < i; j++)
            if (out[j].reason == HR_MANAGED && out[j].tenant == j &&
                same_tenant(&pods[j], &pods[i])) {
                h = j;
                break;
            }
        pp->tenant = (uint32_t)h;
        hr_pod_plan *head = &out[h];
        if (h == i) {
            np->n_tenants++;
            head->weight = w;
        } else if (w < head->weight) {
            head->weight = w;
        }
        head->share_managed = hr_sadd64(head->share_managed, pp->request);
        head->share_n++;
    }
    np->weight_total = 0;
    for (size_t i = 0; i < n; i++)
        if (out[i].reason == HR_MANAGED && out[i].tenant == i)
            np->weight_total += out[i].weight;
    for (size_t i = 0; i < n; i++)
        if (out[i].reason == HR_MANAGED && out[i].tenant == i)
            out[i].share = hr_tenant_slack(np->slack, out[i].weight, np->weight_total);
}

hr_node_plan hr_plan_node(const hr_config *c, const hr_node *node, const hr_pod *pods, size_t n,
                          hr_pod_plan *out, int64_t *ctr_limits)
{
    hr_node_plan np = {0};
    np.allocatable = node != NULL && node->known ? node->allocatable : 0;

    uint32_t off = 0;
    for (size_t i = 0; i < n; i++) {
        const hr_pod *p = &pods[i];
        hr_pod_plan *pp = &out[i];
        *pp = (hr_pod_plan){0};
        pp->ctr_off = off;
        off += p->n_ctr;
        pp->reason = hr_pod_eligibility(p);
        pp->booked = hr_pod_booked_cpu(p);
        pp->request = hr_pod_managed_cpu(p);
        pp->current = hr_pod_current_limit(p);
        pp->target = HR_NONE;
        pp->gate = HR_GATE_PASS;
        pp->tenant = (uint32_t)i;
        if (!hr_pod_terminal(p)) {
            np.booked = hr_sadd64(np.booked, pp->booked);
            np.n_pods++;
            if (p->undecodable)
                np.n_undecodable++;
        }
        if (pp->reason == HR_MANAGED) {
            np.managed = hr_sadd64(np.managed, pp->request);
            np.n_managed++;
        }
    }
    np.slack = hr_sadd64(np.allocatable, -np.booked);
    /* Design §6: with a pod we could not read, R is only a lower bound, so
     * the slack may be smaller than it looks. Increases wait; decreases
     * (which only free capacity) go. */
    np.booking_unknown = (node != NULL && node->booking_unknown) || np.n_undecodable > 0;
    hr_node gnode = node != NULL ? *node : (hr_node){0};
    gnode.booking_unknown = np.booking_unknown;
    bool tenant_fair = c->policy == HR_POLICY_TENANT_FAIR;
    np.policy = tenant_fair ? HR_POLICY_TENANT_FAIR : HR_POLICY_PROPORTIONAL;
    if (tenant_fair)
        tenant_shares(pods, n, &np, out);
    burst_share share = burst_of(c, np.slack, np.managed, np.n_managed);
    grid g = grid_fast(quantum(c)); /* one division here saves a dozen per pod */

    for (size_t i = 0; i < n; i++) {
        const hr_pod *p = &pods[i];
        hr_pod_plan *pp = &out[i];
        int64_t *lim = &ctr_limits[pp->ctr_off];
        if (pp->reason != HR_MANAGED) {
            for (uint32_t k = 0; k < p->n_ctr; k++)
                lim[k] = HR_NONE;
            continue;
        }
        if (node == NULL || !node->known) {
            /* Design §6: with the Node unknown, A is unknown too, and a plan
             * with A = 0 would turn every burst into a "decrease". The pod is
             * not planned and gets no write in either direction. */
            for (uint32_t k = 0; k < p->n_ctr; k++)
                lim[k] = HR_NONE;
            pp->gate = HR_GATE_NODE_UNKNOWN;
            continue;
        }
        /* What the burst is a share of: the node's, or the tenant's. */
        burst_share b = share;
        if (tenant_fair) {
            const hr_pod_plan *head = &out[pp->tenant];
            pp->share = head->share;
            pp->share_managed = head->share_managed;
            pp->share_n = head->share_n;
            pp->weight = head->weight;
            b = burst_of(c, pp->share, pp->share_managed, pp->share_n);
        } else {
            pp->share = np.slack;
            pp->share_managed = np.managed;
            pp->share_n = np.n_managed;
            pp->weight = 1;
        }
        /* hr_pod_target and hr_split_target, sharing the pod's spans. A
         * pod-level pod (design §2.13) is planned as its pod-level
         * resources: one member, the pod-level request its weight, the
         * pod-level limit its target; its containers keep theirs. */
        int64_t one_lim = HR_NONE;
        for (uint32_t k = 0; k < p->n_ctr; k++)
            lim[k] = HR_NONE;
        pp->pod_level = hr_pod_level(p);
        hr_container one;
        hr_pod view;
        const hr_pod *pv = level_view(p, &view, &one);
        int64_t *vlim = pp->pod_level ? &one_lim : lim;
        spans sp;
        spans_init(&sp, pv, &g);
        int64_t unmanaged = unmanaged_limits(pv);
        int64_t raw = pod_raw(&b, pp->request);
        /* Design §2.12: in its startup grace the pod's own limit stands in
         * for r + burst. Within its caps it is kept as it is (no grid, no
         * write); above them the caps, the quantum, the split and the
         * deadband apply as to any target, so the limit it keeps is never
         * above allocatable or r × maxMultiplier. Its request is booked and
         * counted in M and N as any managed pod's. */
        int64_t cap = 0;
        if (p->in_grace && pp->current > 0) {
            raw = pp->current;
            pp->grace = true;
        }
        int64_t t = pod_target(c, np.allocatable, raw, &sp, unmanaged, pp->request, &cap);
        if (pp->grace && pp->current <= cap) {
            for (uint32_t k = 0; k < pv->n_ctr; k++)
                vlim[k] = hr_ctr_managed(&pv->ctr[k]) ? pv->ctr[k].cpu_lim : HR_NONE;
            pp->target = pp->current;
            continue;
        }
        pp->target = split_target(&sp, pp->request, t, vlim, &pp->qos_guarded);
        pp->write = hr_should_write(c, pp->current, pp->target);
        if (pp->write) {
            np.n_write++;
            pp->gate =
                hr_gate_check(&gnode, pp->current, pp->target, hr_sadd64(pp->target, unmanaged));
        }
    }
    return np;
}
