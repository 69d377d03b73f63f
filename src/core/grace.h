/*
 * grace.h — the startup grace (design §2.12): a pod that opted in keeps the
 * limit it was born with until it is Ready, or for spec.startupGrace.seconds
 * from its start, whichever comes first; then it converges to its
 * slack-based ceiling. Requests are never touched.
 *
 * The one home of the decision: the decoders only read the facts (the
 * opt-in label or annotation, the Ready condition, status.startTime), the
 * context builder (hr_pod_in_context) asks here, and the policy
 * (hr_plan_node) holds the pod's limit while hr_pod.in_grace is set.
 * Pure: no I/O, no allocation.
 */
#ifndef HR_CORE_GRACE_H
#define HR_CORE_GRACE_H

#include <stdint.h>

#include "config.h"
#include "pod.h"
#include "selector.h"

/* The longest grace spec.startupGrace.seconds may set (the CRD's maximum). */
#define HR_GRACE_SECONDS_MAX 86400

/* What kube-headroom.dev/startup-grace says (on a pod: label or
 * annotation, the annotation wins; on a namespace: label). */
typedef enum hr_grace_opt {
    HR_GRACE_UNSET = 0, /* absent: the namespace decides */
    HR_GRACE_ON,        /* "true" */
    HR_GRACE_OFF,       /* any other value: fail closed, no grace */
} hr_grace_opt;

/* The value of the label or annotation (NULL: absent). */
hr_grace_opt hr_grace_opt_parse(const char *value);

/* When the pod's grace ends, in Unix seconds; HR_NONE when it is not in
 * grace at now_s: the config leaves the grace off (startup_grace_s 0), the
 * pod does not opt in (its own value, else its namespace's label in
 * ns_labels, NULL: no labels), it is Ready, or start + seconds has passed.
 * A pod without a start time yet (the kubelet has not acknowledged it) is
 * in grace for the whole duration from now_s. now_s <= 0 (unknown) gives
 * HR_NONE. */
int64_t hr_grace_until(const hr_config *c, const hr_pod *p, const hr_labels *ns_labels,
                       int64_t now_s);

/* When the grace of a pod in context ends (its in_grace and the start
 * hr_pod_in_context set), Unix seconds; HR_NONE when it is not in grace. */
int64_t hr_grace_end(const hr_config *c, const hr_pod *p);

#endif
