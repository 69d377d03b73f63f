/*
 * vpa.h — a VerticalPodAutoscaler (autoscaling.k8s.io/v1), reduced to
 * whether and where it writes CPU limits (design §4, foreign-writer).
 */
#ifndef HR_KUBE_DECODE_VPA_H
#define HR_KUBE_DECODE_VPA_H

#include "core/vpa.h"
#include "kube/decode/common.h"
#include "util/arena.h"
#include "util/err.h"

/* At most this many spec.resourcePolicy.containerPolicies (a pod has at
 * most a few dozen containers; more is refused as hostile). */
#define HR_KVPA_MAX_POLICIES 1024

typedef struct hr_kvpa {
    hr_kmeta meta;
    hr_vpa vpa; /* writer, target_name and exceptions in the arena */
} hr_kvpa;

HR_MUST_CHECK hr_status hr_decode_vpa(yyjson_val *obj, hr_arena *a, hr_kvpa *out, hr_err *err);

#endif
