/*
 * throttle.h — what a throttled pod would have needed (design §9.7): the
 * least request whose ceiling, by the policy on the node as it was, reaches
 * the CPU the pod wanted.
 *
 * The node as it was is what the controller exported then: its slack S and
 * managed request M (this pod's request r among them), its allocatable A,
 * and maxMultiplier. A pod asking r' instead of r books r' − r more: the
 * slack falls by that much and the managed request rises by it, so its
 * proportional ceiling (design §2.2, without the small-pod floor, which only
 * helps) is
 *
 *   c(r') = r' · (M + S) / (M − r + r')     while S − (r' − r) > 0
 *   c(r') = r'                              once the node has no slack left
 *
 * then within r'·maxMultiplier and A' = max(A, r'). c grows with r' and
 * c(D) ≥ D, so the least r' with c(r') ≥ D is found by bisection in
 * [1, D]. A cap that a bigger request does not move (max-cpu, a LimitRange
 * or quota, design §2.3) leaves only the request itself: r' = D.
 *
 * Integer millicores, products in 128 bits (wide.h); pure: no allocation, no I/O.
 */
#ifndef HR_CORE_THROTTLE_H
#define HR_CORE_THROTTLE_H

#include <stdbool.h>
#include <stdint.h>

/* The node and the pod as they were when it was throttled. */
typedef struct hr_throttle_node {
    int64_t slack;   /* S, may be negative */
    int64_t managed; /* M, with the pod's own request */
    int64_t allocatable;
    int64_t request;              /* r, the pod's managed request */
    int64_t max_multiplier_milli; /* x1000; 0: no such cap */
    bool fixed_cap; /* a cap no request moves held the pod (max-cpu, LimitRange, quota) */
} hr_throttle_node;

/* c(r') above, in millicores (r' ≥ 0). */
int64_t hr_throttle_ceiling(const hr_throttle_node *n, int64_t request);

/* The least request r' ≥ 1 with c(r') ≥ demand (both in millicores; demand
 * ≥ 1). Never above demand: a request is always its own floor. */
int64_t hr_throttle_request_for(const hr_throttle_node *n, int64_t demand);

#endif
