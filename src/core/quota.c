/*
 * quota.c — the quota cap (quota.h).
 */
#include "quota.h"

#include "pod.h"
#include "wide.h"

/* hard − used, not counted yet reading as no room. */
static hr_i128 room_of(int64_t hard, int64_t used)
{
    return (hr_i128)hard - (used == HR_NONE ? hard : used);
}

void hr_ns_quota_fold(hr_ns_quota *q, int64_t hard, int64_t used)
{
    if (q->on && room_of(q->hard, q->used) <= room_of(hard, used))
        return;
    q->on = true;
    q->hard = hard;
    q->used = used;
}

int64_t hr_quota_birth_room(const hr_ns_quota *q)
{
    if (!q->on)
        return HR_NONE;
    hr_i128 r = room_of(q->hard, q->used);
    return r <= 0 ? 0 : r > INT64_MAX ? INT64_MAX : (int64_t)r;
}

int64_t hr_pod_quota_limit(const hr_pod *p)
{
    if (hr_pod_terminal(p))
        return 0;
    int64_t sum = 0, init = 0;
    for (uint32_t i = 0; i < p->n_ctr; i++) {
        int64_t l = p->ctr[i].cpu_lim;
        if (l == HR_NONE || l == HR_UNBOUNDED || l < 0)
            continue;
        if (p->ctr[i].kind == HR_CTR_INIT)
            init = hr_max64(init, l);
        else
            sum = hr_sadd64(sum, l);
    }
    return hr_sadd64(hr_max64(sum, init), p->overhead_cpu > 0 ? p->overhead_cpu : 0);
}

int64_t hr_quota_reserve(const hr_config *c, int64_t hard)
{
    int pct = c->quota_reserve_percent;
    if (hard <= 0 || pct <= 0)
        return 0;
    /* Rounded up: the reserve is never smaller than asked. */
    hr_i128 v = ((hr_i128)hard * pct + 99) / 100;
    return v > INT64_MAX ? INT64_MAX : (int64_t)v;
}

static int64_t sat(hr_i128 t)
{
    if (t > INT64_MAX)
        return INT64_MAX;
    if (t < -INT64_MAX)
        return -INT64_MAX;
    return (int64_t)t;
}

int64_t hr_quota_budget(const hr_config *c, const hr_ns_quota *q)
{
    return sat((hr_i128)q->hard - hr_quota_reserve(c, q->hard) - ((hr_i128)q->held - q->current));
}

int64_t hr_quota_free(const hr_config *c, const hr_ns_quota *q)
{
    /* used not counted yet reads as full. */
    int64_t used = q->used == HR_NONE ? q->hard : q->used;
    return sat((hr_i128)q->hard - hr_quota_reserve(c, q->hard) - hr_max64(used, q->held));
}

static int64_t share_of(const hr_config *c, const hr_ns_quota *q, int64_t request)
{
    /* M ≥ r when the pod is one of the managed pods it sums; a smaller M
     * (a caller's race) is read as r, never as a larger share. */
    int64_t t = hr_quota_budget(c, q);
    return t <= 0 ? 0 : hr_muldiv64(t, request, hr_max64(q->managed, request));
}

bool hr_quota_below_share(const hr_config *c, const hr_ns_quota *q, int64_t request,
                          int64_t current)
{
    return request > 0 && hr_max64(current, 0) < share_of(c, q, request);
}

int64_t hr_quota_pod_cap(const hr_config *c, const hr_ns_quota *q, int64_t request, int64_t current)
{
    if (q == NULL || !q->on || request <= 0)
        return HR_NONE;
    int64_t share = share_of(c, q, request);
    int64_t f = hr_quota_free(c, q);
    int64_t step = f <= 0 ? 0 : hr_muldiv64(f, request, hr_max64(q->raising, request));
    return hr_max64(request, hr_min64(share, hr_sadd64(hr_max64(current, 0), step)));
}
