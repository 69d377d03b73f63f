/*
 * admission.c — design §8 for one pod: the webhook's decision and its
 * birth-limit arithmetic (see admission.h for the rules).
 *
 * Integer millicores throughout; products go through 128 bits and saturate,
 * so a request or annotation a user can type never wraps around. The pod
 * budget is shared pro-rata with floor division and each limit is rounded
 * to the quantum grid without crossing its share, so the limits given never
 * sum above it (unless the floor at the request lifts one).
 */
#include "core/admission.h"
#include "core/policy.h"
#include "core/wide.h"

uint32_t hr_birth_limits(const hr_config *cfg, const hr_pod *p, int64_t room, int64_t *lim)
{
    const hr_limit_bounds *lb = &p->limits;
    int64_t mult = cfg->initial_multiplier_milli;
    if (cfg->max_multiplier_milli > 0 && cfg->max_multiplier_milli < mult)
        mult = cfg->max_multiplier_milli;
    if (mult < 1000)
        mult = 1000; /* the floor at the request would win anyway */

    /* A budget for the whole pod: max-cpu, a LimitRange's Pod max and the
     * room a limits.cpu quota leaves (a pod whose limits exceed it is
     * refused at creation) bound the sum of the limits, and limits already
     * set are part of it. */
    int64_t budget = HR_NONE;
    if (p->max_cpu != HR_NONE)
        budget = p->max_cpu;
    if (lb->pod_max != HR_NONE)
        budget = budget == HR_NONE ? lb->pod_max : hr_min64(budget, lb->pod_max);
    if (room != HR_NONE) {
        room = hr_max64(room, 0);
        budget = budget == HR_NONE ? room : hr_min64(budget, room);
    }
    int64_t sum_new_req = 0;
    uint32_t n = 0;
    for (uint32_t k = 0; k < p->n_ctr; k++) {
        const hr_container *c = &p->ctr[k];
        lim[k] = HR_NONE;
        if (!hr_ctr_resizable(c))
            continue;
        if (c->cpu_lim != HR_NONE) {
            if (budget != HR_NONE)
                budget -= hr_min64(c->cpu_lim, budget);
            continue;
        }
        if (c->cpu_req <= 0)
            continue;
        lim[k] = hr_muldiv64(c->cpu_req, mult, 1000);
        sum_new_req += c->cpu_req; /* each <= 2^63/1000: no overflow */
        n++;
    }
    if (n == 0)
        return 0;
    int64_t sum_lim = 0;
    for (uint32_t k = 0; k < p->n_ctr; k++)
        if (lim[k] != HR_NONE)
            sum_lim = hr_sadd64(sum_lim, lim[k]);
    int64_t q = cfg->quantum > 0 ? cfg->quantum : 1;
    for (uint32_t k = 0; k < p->n_ctr; k++) {
        if (lim[k] == HR_NONE)
            continue;
        int64_t r = p->ctr[k].cpu_req;
        /* The caps: a pro-rata share of the budget (floor division keeps
         * the sum within it) and the LimitRange container bounds. */
        int64_t cap = INT64_MAX;
        if (budget != HR_NONE && sum_lim > budget)
            cap = hr_muldiv64(r, budget, sum_new_req);
        if (lb->ctr_max != HR_NONE)
            cap = hr_min64(cap, lb->ctr_max);
        if (lb->ctr_ratio_milli != HR_NONE)
            cap = hr_min64(cap, hr_muldiv64(r, lb->ctr_ratio_milli, 1000));
        /* On the grid as in design §2.4: nearest, never above a cap, never
         * below the request; a cap below the first grid point at or above
         * the request leaves the request (a limit below it is invalid). */
        int64_t g = hr_quantize(lim[k], hr_grid_ceil(r, q), cap, q);
        lim[k] = g == HR_NONE ? r : g;
    }
    return n;
}

hr_birth hr_admit_pod(const hr_config *cfg, const hr_pod *p, int64_t room, int64_t *lim)
{
    hr_birth b = {HR_BIRTH_INELIGIBLE, HR_MANAGED, HR_QOS_BURSTABLE, HR_QOS_BURSTABLE, 0, HR_NONE};
    b.qos_before = b.qos_after = hr_pod_qos(p, NULL);
    b.reason = hr_pod_birth_eligibility(p);
    if (b.reason != HR_MANAGED || hr_pod_level(p)) {
        for (uint32_t k = 0; k < p->n_ctr; k++)
            lim[k] = HR_NONE;
    }
    if (b.reason != HR_MANAGED)
        return b;
    if (hr_pod_level(p)) {
        /* Design §2.13: the pod-level limit, by the same rules as one
         * container's, on the pod-level resources; containers get none. */
        hr_container one;
        hr_pod v = hr_pod_level_view(p, &one);
        b.n_limits = hr_birth_limits(cfg, &v, room, &b.pod_limit);
        if (b.n_limits == 0) {
            b.verdict = HR_BIRTH_NOTHING_DUE;
            return b;
        }
        b.qos_after = hr_pod_qos(&v, &b.pod_limit);
        b.verdict = b.qos_after == b.qos_before ? HR_BIRTH_LIMITS : HR_BIRTH_QOS_CHANGE;
        return b;
    }
    b.n_limits = hr_birth_limits(cfg, p, room, lim);
    if (b.n_limits == 0) {
        b.verdict = HR_BIRTH_NOTHING_DUE;
        return b;
    }
    b.qos_after = hr_pod_qos(p, lim);
    b.verdict = b.qos_after == b.qos_before ? HR_BIRTH_LIMITS : HR_BIRTH_QOS_CHANGE;
    return b;
}
