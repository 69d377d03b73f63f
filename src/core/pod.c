/*
 * pod.c — design §3 accounting on a pod view: booked request, managed
 * request, current limit, and the QoS class the API server would compute.
 */
#include "pod.h"

#include "wide.h"

/* Quantities are validated non-negative at decode time; HR_NONE is -1, so
 * this is "the value, or 0 when unset". */
static int64_t val(int64_t q)
{
    return q > 0 ? q : 0;
}

void hr_limit_bounds_merge(hr_limit_bounds *b, const hr_limit_bounds *more)
{
    if (more->ctr_max != HR_NONE)
        b->ctr_max = b->ctr_max == HR_NONE ? more->ctr_max : hr_min64(b->ctr_max, more->ctr_max);
    if (more->ctr_ratio_milli != HR_NONE)
        b->ctr_ratio_milli = b->ctr_ratio_milli == HR_NONE
                                 ? more->ctr_ratio_milli
                                 : hr_min64(b->ctr_ratio_milli, more->ctr_ratio_milli);
    if (more->pod_max != HR_NONE)
        b->pod_max = b->pod_max == HR_NONE ? more->pod_max : hr_min64(b->pod_max, more->pod_max);
}

hr_pod hr_pod_init(void)
{
    hr_pod p = {0};
    p.overhead_cpu = HR_NONE;
    p.pod_cpu_req = HR_NONE;
    p.pod_cpu_lim = HR_NONE;
    p.phase = HR_PHASE_RUNNING;
    p.bound = true;
    p.status_resources = true;
    p.max_cpu = HR_NONE;
    p.ns_state = HR_NS_MANAGED;
    p.limits = HR_LIMIT_BOUNDS_NONE;
    p.tenant_weight = 1;
    return p;
}

hr_pod hr_pod_level_view(const hr_pod *p, hr_container *one)
{
    /* The memory figures only tell the QoS class (hr_pod_qos): a fixed
     * pod-level memory reads as a memory limit equal to its request. */
    *one = (hr_container){.cpu_req = p->pod_cpu_req,
                          .cpu_lim = p->pod_cpu_lim,
                          .mem_req = p->pod_mem_fixed ? 1 : HR_NONE,
                          .mem_lim = p->pod_mem_fixed ? 1 : HR_NONE,
                          .kind = HR_CTR_APP};
    hr_pod v = *p;
    v.ctr = one;
    v.n_ctr = 1;
    v.pod_resources = false; /* the view is an ordinary pod */
    v.pod_cpu_req = HR_NONE;
    v.pod_cpu_lim = HR_NONE;
    v.limits.ctr_max = HR_NONE;
    v.limits.ctr_ratio_milli = HR_NONE;
    return v;
}

bool hr_pod_terminal(const hr_pod *p)
{
    return p->phase == HR_PHASE_SUCCEEDED || p->phase == HR_PHASE_FAILED;
}

bool hr_pod_unbounded_quantity(const hr_pod *p)
{
    if (p->pod_cpu_lim == HR_UNBOUNDED)
        return true;
    for (uint32_t i = 0; i < p->n_ctr; i++) {
        const hr_container *c = &p->ctr[i];
        if (c->cpu_lim == HR_UNBOUNDED || c->mem_req == HR_UNBOUNDED || c->mem_lim == HR_UNBOUNDED)
            return true;
    }
    return false;
}

int64_t hr_pod_booked_cpu(const hr_pod *p)
{
    if (hr_pod_terminal(p))
        return 0;
    int64_t overhead = val(p->overhead_cpu);
    if (p->pod_cpu_req != HR_NONE)
        return hr_sadd64(val(p->pod_cpu_req), overhead);

    /* The scheduler's rule: app containers and sidecars run together; each
     * classic init container runs alone beside the sidecars started before
     * it. The pod books the larger of the two. */
    int64_t steady = 0, sidecars = 0, init_peak = 0;
    for (uint32_t i = 0; i < p->n_ctr; i++) {
        const hr_container *c = &p->ctr[i];
        int64_t r = val(c->cpu_req);
        switch (c->kind) {
        case HR_CTR_APP: steady = hr_sadd64(steady, r); break;
        case HR_CTR_SIDECAR:
            steady = hr_sadd64(steady, r);
            sidecars = hr_sadd64(sidecars, r);
            init_peak = hr_max64(init_peak, sidecars);
            break;
        default: init_peak = hr_max64(init_peak, hr_sadd64(r, sidecars)); break;
        }
    }
    return hr_sadd64(hr_max64(steady, init_peak), overhead);
}

int64_t hr_pod_managed_cpu(const hr_pod *p)
{
    if (hr_pod_level(p))
        return p->pod_cpu_req;
    int64_t m = 0;
    for (uint32_t i = 0; i < p->n_ctr; i++)
        if (hr_ctr_managed(&p->ctr[i]))
            m = hr_sadd64(m, p->ctr[i].cpu_req);
    return m;
}

int64_t hr_pod_current_limit(const hr_pod *p)
{
    if (hr_pod_level(p))
        return p->pod_cpu_lim > 0 && p->pod_cpu_lim != HR_UNBOUNDED ? p->pod_cpu_lim : 0;
    int64_t sum = 0;
    for (uint32_t i = 0; i < p->n_ctr; i++) {
        const hr_container *c = &p->ctr[i];
        if (!hr_ctr_managed(c))
            continue;
        if (c->cpu_lim <= 0)
            return 0;
        sum = hr_sadd64(sum, c->cpu_lim);
    }
    return sum;
}

/* Mirrors the API server's GetPodQOS: per resource, requests and limits are
 * summed over all containers (init ones included) counting only positive
 * values; Guaranteed needs both cpu and memory limits on every container
 * and equal sums; nothing at all is BestEffort. */
hr_qos hr_pod_qos(const hr_pod *p, const int64_t *cpu_lim_override)
{
    /* With pod-level resources the API server takes the class from them
     * alone (KEP-2837); the containers' limits do not count. */
    if (hr_pod_level(p)) {
        hr_container one;
        hr_pod v = hr_pod_level_view(p, &one);
        return hr_pod_qos(&v, NULL);
    }
    int64_t req_cpu = 0, req_mem = 0, lim_cpu = 0, lim_mem = 0;
    bool has_req_cpu = false, has_req_mem = false, has_lim_cpu = false, has_lim_mem = false;
    bool guaranteed = true;

    for (uint32_t i = 0; i < p->n_ctr; i++) {
        const hr_container *c = &p->ctr[i];
        int64_t cl = c->cpu_lim;
        if (cpu_lim_override != NULL && cpu_lim_override[i] != HR_NONE)
            cl = cpu_lim_override[i];
        if (c->cpu_req > 0) {
            req_cpu = hr_sadd64(req_cpu, c->cpu_req);
            has_req_cpu = true;
        }
        if (c->mem_req > 0) {
            req_mem = hr_sadd64(req_mem, c->mem_req);
            has_req_mem = true;
        }
        bool lc = cl > 0, lm = c->mem_lim > 0;
        if (lc) {
            lim_cpu = hr_sadd64(lim_cpu, cl);
            has_lim_cpu = true;
        }
        if (lm) {
            lim_mem = hr_sadd64(lim_mem, c->mem_lim);
            has_lim_mem = true;
        }
        if (!lc || !lm)
            guaranteed = false;
        /* Not Guaranteed, and not BestEffort since something is set: the
         * rest of the containers cannot change the answer. */
        if (!guaranteed && (has_req_cpu || has_req_mem || has_lim_cpu || has_lim_mem))
            return HR_QOS_BURSTABLE;
    }
    if (!has_req_cpu && !has_req_mem && !has_lim_cpu && !has_lim_mem)
        return HR_QOS_BEST_EFFORT;
    if (guaranteed) {
        if (has_req_cpu && lim_cpu != req_cpu)
            guaranteed = false;
        if (has_req_mem && lim_mem != req_mem)
            guaranteed = false;
        /* requests and limits must name the same resources */
        if (has_req_cpu != has_lim_cpu || has_req_mem != has_lim_mem)
            guaranteed = false;
    }
    return guaranteed ? HR_QOS_GUARANTEED : HR_QOS_BURSTABLE;
}

const char *hr_qos_str(hr_qos q)
{
    switch (q) {
    case HR_QOS_BEST_EFFORT: return "BestEffort";
    case HR_QOS_BURSTABLE: return "Burstable";
    case HR_QOS_GUARANTEED: return "Guaranteed";
    }
    return "Unknown";
}
