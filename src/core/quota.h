/*
 * quota.h — the quota cap (design §2.3, cap 6, "The quota cap"): a namespace's
 * ResourceQuota on limits.cpu shared among its managed pods.
 *
 * A namespace whose ResourceQuota bounds limits.cpu gives its managed pods,
 * together, at most
 *
 *   T = hard − reserve − (H − C)
 *
 * where H is what the namespace's pods hold (Σ of their CPU limits, from
 * the same snapshot as C, the managed pods' current limits: H − C is what
 * everything else holds), and reserve = ⌈hard · quotaReservePercent / 100⌉
 * is kept for rollout surge pods. T is shared in proportion to requests,
 * the same formula as the slack share: ⌊T · r_i / M⌋, M the managed request
 * of the namespace over every node. Each node's pods of the namespace get
 * the node's share of the namespace's managed request, a node's plan stays
 * local, and the shares sum to at most T.
 *
 * The way there must fit too: a raise planned on one node may be sent
 * before a decrease planned on another. So a raise takes at most the pod's
 * share of what is free now,
 *
 *   F = hard − reserve − max(used, H)
 *
 * (used, the quota's status.used, and H may each be ahead of the other: the
 * larger is taken), and the quota cap is max(r_i, min(⌊T·r_i/M⌋, c_i +
 * ⌊max(F, 0)·r_i/M_up⌋)), c_i the pod's current limit and M_up the request
 * of the managed pods below their share. The raises of one plan sum to at
 * most F; as decreases land, F grows and the pods converge to their shares.
 * Pure: no I/O, no allocation.
 */
#ifndef HR_CORE_QUOTA_H
#define HR_CORE_QUOTA_H

#include <stdbool.h>
#include <stdint.h>

#include "config.h"
#include "pod.h"

/* One namespace's limits.cpu quota, as the caller gathered it. With several
 * quotas on limits.cpu the one with the least room (hard − used) is given. */
typedef struct hr_ns_quota {
    bool on;         /* a ResourceQuota bounds limits.cpu in the namespace */
    int64_t hard;    /* its spec.hard limits.cpu, millicores */
    int64_t used;    /* its status.used limits.cpu; HR_NONE: not counted yet
                        (read as hard: no room) */
    int64_t managed; /* M: Σ managed request of the namespace's managed pods */
    int64_t current; /* C: Σ their current limits (managed containers) */
    int64_t held;    /* H: Σ CPU limits of every pod of the namespace (C included) */
    int64_t raising; /* Σ request of the managed pods below their share
                        (hr_quota_below_share): F is divided among them */
} hr_ns_quota;

/* Fold one more limits.cpu quota of the namespace (hard; used, HR_NONE:
 * not counted yet) into q: the one with the least room (hard − used) wins. */
void hr_ns_quota_fold(hr_ns_quota *q, int64_t hard, int64_t used);

/* What a ResourceQuota counts of the pod's limits.cpu: Σ of its app and
 * sidecar containers' limits or its largest init container's, whichever is
 * more, plus the overhead; 0 for a terminal pod (a limit not set counts 0). */
int64_t hr_pod_quota_limit(const hr_pod *p);

/* The reserve kept for surge pods: ⌈hard · quotaReservePercent / 100⌉. */
int64_t hr_quota_reserve(const hr_config *c, int64_t hard);

/* Design §8: what a pod being created may hold in CPU limits before the
 * API server refuses it, hard − used (not counted yet: 0; no reserve: a
 * pod being born is what the reserve is kept for); HR_NONE when q is off.
 * The webhook's birth limits share it (hr_limit_bounds.quota_room). */
int64_t hr_quota_birth_room(const hr_ns_quota *q);

/* T above: the most the managed pods' limits may add up to (may be below
 * M, or negative: then every quota cap is the pod's request). */
int64_t hr_quota_budget(const hr_config *c, const hr_ns_quota *q);

/* F above: what is free for raises now (may be negative). */
int64_t hr_quota_free(const hr_config *c, const hr_ns_quota *q);

/* Is a managed pod (request, current limit) below its share ⌊T·r/M⌋?
 * The callers sum the requests of those into q->raising. */
bool hr_quota_below_share(const hr_config *c, const hr_ns_quota *q, int64_t request,
                          int64_t current);

/* Pod i's quota cap: max(r, min(⌊T·r/M⌋, current + ⌊max(F, 0)·r/M⌋)),
 * current its managed containers' limit (0: none); HR_NONE when q is off
 * or r ≤ 0. */
int64_t hr_quota_pod_cap(const hr_config *c, const hr_ns_quota *q, int64_t request,
                         int64_t current);

#endif
