/*
 * throttle.c — the least request that would have avoided a throttle
 * (throttle.h, design §9.7).
 */
#include "throttle.h"

#include "wide.h"

int64_t hr_throttle_ceiling(const hr_throttle_node *n, int64_t request)
{
    if (request <= 0)
        return 0;
    if (n->fixed_cap)
        return request; /* the cap holds whatever the request; the request wins over it */
    int64_t c = request;
    int64_t slack = n->slack - (request - n->request);
    int64_t managed = n->managed - n->request + request;
    if (slack > 0 && managed > 0)
        c = hr_muldiv64(request, managed + slack, managed);
    if (n->max_multiplier_milli > 0)
        c = hr_min64(c, hr_muldiv64(request, n->max_multiplier_milli, 1000));
    c = hr_min64(c, hr_max64(n->allocatable, request));
    return hr_max64(c, request);
}

int64_t hr_throttle_request_for(const hr_throttle_node *n, int64_t demand)
{
    if (demand <= 1)
        return 1;
    int64_t lo = 1, hi = demand; /* c(hi) ≥ hi = demand */
    while (lo < hi) {
        int64_t mid = lo + (hi - lo) / 2;
        if (hr_throttle_ceiling(n, mid) >= demand)
            hi = mid;
        else
            lo = mid + 1;
    }
    return lo;
}
