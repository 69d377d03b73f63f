/*
 * limitrange.h — a LimitRange folded into the core's hr_limit_bounds.
 */
#ifndef HR_KUBE_DECODE_LIMITRANGE_H
#define HR_KUBE_DECODE_LIMITRANGE_H

#include "core/pod.h"
#include "kube/decode/common.h"
#include "util/arena.h"
#include "util/err.h"

typedef struct hr_klimitrange {
    hr_kmeta meta;
    hr_limit_bounds bounds; /* folded over spec.limits[] (tightest wins) */
} hr_klimitrange;

HR_MUST_CHECK hr_status hr_decode_limitrange(yyjson_val *obj, hr_arena *a, hr_klimitrange *out,
                                             hr_err *err);

#endif
