/*
 * resourcequota.h — a ResourceQuota, reduced to its limits.cpu.
 */
#ifndef HR_KUBE_DECODE_RESOURCEQUOTA_H
#define HR_KUBE_DECODE_RESOURCEQUOTA_H

#include <stdbool.h>

#include "kube/decode/common.h"
#include "util/arena.h"
#include "util/err.h"

/* A ResourceQuota, reduced to what matters to us: whether it bounds
 * limits.cpu in its namespace, and how much of it is used (a raise that
 * would cross it is refused with 403, design §7; the quota cap of design
 * §2.3 keeps raises inside it). */
typedef struct hr_kquota {
    hr_kmeta meta;
    bool limits_cpu;  /* spec.hard has limits.cpu */
    int64_t hard_cpu; /* spec.hard limits.cpu, millicores; HR_NONE: absent */
    int64_t used_cpu; /* status.used limits.cpu; HR_NONE: not counted yet */
} hr_kquota;

HR_MUST_CHECK hr_status hr_decode_resourcequota(yyjson_val *obj, hr_arena *a, hr_kquota *out,
                                                hr_err *err);

#endif
