/*
 * admission.h — what the mutating webhook decides for a pod at its birth
 * (design §8), as pure functions over the core's pod view: whether the pod
 * is given CPU limits, which containers, how much, and every reason not to.
 *
 * Why here and not in the webhook: the decision is policy. The eligibility
 * is the controller's own list (hr_pod_birth_eligibility, eligibility.h),
 * so a pod is born with a limit exactly when the controller would manage
 * it, and the arithmetic sits beside the rest of the core's. The webhook
 * layer only reads the AdmissionReview into an hr_pod (with its context:
 * namespace state, owner exclusion, LimitRange bounds) and writes the
 * JSONPatch for what this returns.
 *
 * Like the rest of the core: no I/O, no JSON, no allocation (the caller
 * gives room for one limit per container), nothing kept between calls.
 */
#ifndef HR_CORE_ADMISSION_H
#define HR_CORE_ADMISSION_H

#include <stdint.h>

#include "config.h"
#include "eligibility.h"
#include "pod.h"

typedef enum hr_birth_verdict {
    HR_BIRTH_LIMITS = 0,  /* n_limits containers get a CPU limit */
    HR_BIRTH_INELIGIBLE,  /* reason names the first rule the pod fails */
    HR_BIRTH_NOTHING_DUE, /* eligible, but no resizable container has a
                              CPU request and no CPU limit */
    HR_BIRTH_QOS_CHANGE,  /* eligible, but the limits would change the
                              pod's QoS class (qos_before -> qos_after) */
} hr_birth_verdict;

typedef struct hr_birth {
    hr_birth_verdict verdict;
    hr_reason reason;  /* HR_MANAGED unless HR_BIRTH_INELIGIBLE */
    hr_qos qos_before; /* the pod's class as created */
    hr_qos qos_after;  /* with the limits (= qos_before unless QOS_CHANGE) */
    uint32_t n_limits; /* limits due (LIMITS and QOS_CHANGE), else 0 */
    int64_t pod_limit; /* design §2.13: a pod-level pod's pod-level CPU
                          limit to set (n_limits is then 1 and every lim[k]
                          HR_NONE); HR_NONE otherwise */
} hr_birth;

/* The birth limits: lim[k] (p->n_ctr entries) is the new CPU limit of
 * container k, or HR_NONE when it gets none. Only resizable containers (app
 * containers and sidecars) with a CPU request > 0 and no CPU limit get one:
 *   limit  = request × min(initialMultiplier, maxMultiplier)  (max 0: no cap)
 *   budget = min(p->max_cpu, LimitRange Pod max, room) − CPU limits
 *            already set; room is what the namespace's limits.cpu quota
 *            leaves (hr_quota_birth_room: a pod whose limits exceed it is
 *            refused at creation), HR_NONE without one
 *            when the limits exceed it, each is request × budget / Σ requests
 *   limit ≤ LimitRange Container max and request × maxLimitRequestRatio
 *   limit ≥ request (a limit below it is invalid)
 * Returns how many containers get one. Eligibility is not looked at. */
uint32_t hr_birth_limits(const hr_config *cfg, const hr_pod *p, int64_t room, int64_t *lim);

/* The whole decision for a pod being created, in order: eligibility at
 * birth, the limits, the QoS guard (a limit must not move the pod out of
 * Burstable). room and lim as for hr_birth_limits; written for every verdict (all
 * HR_NONE when the pod is ineligible). A pod-level pod (hr_pod_level,
 * design §2.13) gets the same arithmetic on its pod-level resources
 * (hr_pod_level_view): pod_limit, when it has no pod-level CPU limit. */
hr_birth hr_admit_pod(const hr_config *cfg, const hr_pod *p, int64_t room, int64_t *lim);

#endif
