/*
 * resourcequota.h — a ResourceQuota, reduced to one bit.
 */
#ifndef HR_KUBE_DECODE_RESOURCEQUOTA_H
#define HR_KUBE_DECODE_RESOURCEQUOTA_H

#include <stdbool.h>

#include "kube/decode/common.h"
#include "util/arena.h"
#include "util/err.h"

/* A ResourceQuota, reduced to the one thing that matters to us: whether it
 * bounds limits.cpu in its namespace (then every raise there that would
 * cross the quota is refused with 403, design §7, §12). */
typedef struct hr_kquota {
    hr_kmeta meta;
    bool limits_cpu; /* spec.hard has limits.cpu */
} hr_kquota;

HR_MUST_CHECK hr_status hr_decode_resourcequota(yyjson_val *obj, hr_arena *a, hr_kquota *out,
                                                hr_err *err);

#endif
