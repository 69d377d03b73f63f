/*
 * writes.h — the bytes of every write the controller makes.
 *
 * Three documents leave the controller for a managed pod whose limit
 * changes, and each must name only what it means to change:
 *
 *  - the server-side-apply body for pods/NAME/resize (field manager
 *    "headroom"): only the containers whose CPU limit we set, and only
 *    resources.limits.cpu in each — so requests, memory and every other
 *    field stay with their owners (design §5);
 *  - the merge patch that sets the kube-headroom.dev/status annotation
 *    (the resize subresource drops metadata, so it is a second write);
 *  - the CPULimitAdjusted event text ("1500m → 3000m (factor 2.00, slack
 *    8/16 cores)").
 *
 * Pure string building: no I/O, no clock (the caller passes the time).
 */
#ifndef HR_CONTROLLER_WRITES_H
#define HR_CONTROLLER_WRITES_H

#include <stdbool.h>
#include <stdint.h>

#include "core/policy.h"
#include "util/buf.h"

/* JSON (a subset of YAML, so valid as application/apply-patch+yaml).
 * limits has one slot per container of p (HR_NONE = not ours); names are
 * the container names, parallel to p->ctr. */
void hr_resize_apply_body(hr_buf *b, const char *ns, const char *name, const hr_pod *p,
                          const char *const *ctr_names, const int64_t *limits);

/* The same for a pod managed at pod level (design §2.13): only
 * spec.resources.limits.cpu, the pod-level limit. */
void hr_pod_level_apply_body(hr_buf *b, const char *ns, const char *name, int64_t limit);

/* The status annotation value (design §9.1): the node's figures, then the
 * pod's own (its request, floor, burst, target and the split the resize
 * writes, the cap that binds and every bound that applies), the gate that
 * holds its write, e.g.
 * {"factor":"2.00","slack":"8000m","managedRequests":"8000m","nodePods":14,
 *  "allocatable":"16000m","booked":"8000m","managedPods":3,"request":"1000m",
 *  "floor":"1000m","burst":"1000m","targetLimit":"2000m","limits":{"app":"2000m"},
 *  "cap":"none","caps":{"multiplier":"10000m","allocatable":"16000m"},
 *  "computedAt":"2026-11-30T08:00:00Z","policy":"proportional-v1","dryRun":false}
 * Every figure comes from the core (policy.h), as `explain` and `plan`
 * take them. At most HR_STATUS_MAX_LIMITS containers are listed in
 * "limits" ("limitsOmitted": the rest), so the value stays under 4 KiB. A
 * pod managed at pod level (§2.13) has "podLimit":"2000m" in place of
 * "limits". */
#define HR_STATUS_MAX_LIMITS 32

typedef struct hr_status_in {
    const hr_config *cfg;
    const hr_node_plan *np;
    const hr_pod *pod;            /* the pod as planned */
    const hr_pod_plan *pp;        /* its plan: pp->target is the total written */
    const char *const *ctr_names; /* parallel to pod->ctr */
    const int64_t *limits;        /* per container, parallel to pod->ctr; HR_NONE: not ours */
    const char *reason;           /* the gate holding the write (docs/reasons.md); NULL: none */
    /* booking-unknown: floor, burst, targetLimit, limits and cap are left
     * out (the slack they come from is only an upper bound) */
    bool target_unknown;
    bool dry_run;
    int64_t unix_s; /* the computation time (computedAt) */
} hr_status_in;

void hr_status_annotation(hr_buf *b, const hr_status_in *in);

/* The merge patch carrying that annotation: {"metadata":{"annotations":{…}}}. */
void hr_status_patch(hr_buf *b, const char *annotation_value);

/* The CPULimitAdjusted message for a pod going from current to target. */
void hr_event_message(hr_buf *b, int64_t current, int64_t target, const hr_node_plan *np);

/* Do two status annotations say the same, ignoring computedAt? The
 * controller writes the annotation only when the numbers change, so a
 * steady state stays free of writes. */
bool hr_status_same(const char *a, const char *b);

#endif
