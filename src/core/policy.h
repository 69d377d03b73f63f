/*
 * policy.h — the policies for one node (design §2): Proportional, and
 * TenantFair (design §2.9), chosen by the config's spec.policy.
 *
 *   S = A − R, M = Σ managed requests, N = managed pods
 *   burst_i  = max(S·r_i/M, min(floor, S/N))      when S > 0 and M > 0
 *   (TenantFair: S_t = ⌊S·w_t/W⌋ of the pod's tenant t in place of S,
 *   and that tenant's M_t and N_t, over all its namespaces, in place of M
 *   and N)
 *   target_i = r_i + burst_i, then the caps in order, then the quantum
 *   (the target on the grid, never below the request, never above a cap),
 *   then the per-container split, then the QoS guard, then hysteresis.
 *
 * Integer millicores throughout (products are taken in 128 bits), so the
 * result is exact, deterministic and independent of pod order. The whole
 * computation runs in memory the caller provides: no allocation, no I/O.
 */
#ifndef HR_CORE_POLICY_H
#define HR_CORE_POLICY_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "config.h"
#include "eligibility.h"
#include "gates.h"
#include "pod.h"

typedef struct hr_pod_plan {
    hr_reason reason; /* HR_MANAGED or why not */
    int64_t booked;   /* design §3.1 (0 for terminal pods) */
    int64_t request;  /* design §3.2 managed request, 0 when none */
    int64_t current;  /* current limit over managed containers, 0 if any is unset */
    int64_t target;   /* total target after split and guard; HR_NONE if unmanaged */
    bool write;       /* hysteresis verdict */
    bool qos_guarded; /* the QoS guard lifted one container */
    bool pod_level;   /* design §2.13: target is the pod-level limits.cpu to
                         write; no container limit is (all HR_NONE) */
    bool grace;       /* in its startup grace (design §2.12): the target
                         holds its current limit, within the caps */
    hr_gate gate;     /* for a write: may it go (cached node)? else PASS;
                         HR_GATE_NODE_UNKNOWN for a managed pod on an unknown
                         node: target HR_NONE, write false, never written */
    uint32_t ctr_off; /* this pod's first slot in the container-limit array */
    /* What the burst of a managed pod on a known node is a share of (design
     * §2.2, §2.9): the slack, the requests and the pods it is divided by —
     * S, M, N under Proportional; its tenant's S_t, M_t, N_t under
     * TenantFair. 0 for the others. */
    int64_t share;         /* S or S_t */
    int64_t share_managed; /* M or M_t */
    uint32_t share_n;      /* N or N_t */
    uint32_t weight;       /* TenantFair: the tenant's weight w_t; else 1 */
    uint32_t tenant;       /* TenantFair: index of the tenant's first managed
                              pod on the node (its pods share it); else the
                              pod's own index */
} hr_pod_plan;

typedef struct hr_node_plan {
    int64_t allocatable;    /* A */
    int64_t booked;         /* R */
    int64_t slack;          /* S, may be negative */
    int64_t managed;        /* M */
    uint32_t n_managed;     /* N */
    uint32_t n_pods;        /* non-terminal pods counted in R */
    uint32_t n_write;       /* pods whose hysteresis verdict is "write" */
    uint32_t n_undecodable; /* pods that could not be decoded (their booking is
                               unknown: R is a lower bound) */
    bool booking_unknown;   /* node->booking_unknown or n_undecodable > 0:
                               every increase is held, HR_GATE_BOOKING_UNKNOWN */
    uint8_t policy;         /* hr_policy the plan was made under */
    uint32_t n_tenants;     /* TenantFair: tenants with managed pods here */
    uint64_t weight_total;  /* TenantFair: W, the sum of their weights */
} hr_node_plan;

/* The node factor F = 1 + S/M as x1000 fixed point (1000 when S ≤ 0 or M = 0),
 * rounded to nearest: the "factor" of the status annotation and metrics. */
int64_t hr_node_factor_milli(const hr_node_plan *np);

/* Plan one node. pods[0..n) are every pod bound to the node (terminal ones
 * are accepted and ignored). An undecodable pod (hr_pod.undecodable) books
 * nothing it can prove and is never managed, but makes the node's booking
 * unknown: every increase on the node is held (HR_GATE_BOOKING_UNKNOWN,
 * design §6); decreases still go. out[i] receives pod i's plan; ctr_limits must
 * hold Σ pods[i].n_ctr slots and receives, per container, the CPU limit to
 * write (HR_NONE for containers the policy leaves alone), starting at
 * out[i].ctr_off. */
hr_node_plan hr_plan_node(const hr_config *c, const hr_node *node, const hr_pod *pods, size_t n,
                          hr_pod_plan *out, int64_t *ctr_limits);

/* The pieces, exposed for tests, for `explain` and for the webhook. */

/* A tenant's slack S_t = ⌊S·w/W⌋ (design §2.9); 0 when S ≤ 0 or W = 0. */
int64_t hr_tenant_slack(int64_t slack, uint64_t weight, uint64_t weight_total);

/* The quantum grid (design §2.4). hr_grid_ceil: the first multiple of q
 * (q >= 1) at or above v >= 0, HR_NONE when it does not fit in int64.
 * hr_quantize: the point of lo, lo + q, lo + 2q, … nearest to min(v, cap)
 * (half rounds up), stepping down one q when that would cross cap; HR_NONE when
 * lo is HR_NONE or above cap (no grid point fits: the caller's request
 * wins over the grid). */
int64_t hr_grid_ceil(int64_t v, int64_t q);
int64_t hr_quantize(int64_t v, int64_t lo, int64_t cap, int64_t q);

/* CPU limits of the pod's resizable containers the policy does not touch
 * (what the gates add to a target, design §6). */
int64_t hr_pod_unmanaged_limits(const hr_pod *p);

/* The pod's grid floor g_i (design §2.4): Σ over its managed containers of
 * the first grid point at or above each request (for a bare request not
 * their sum, the first grid point at or above it). */
int64_t hr_pod_grid_floor(const hr_config *c, const hr_pod *p, int64_t request);

/* The caps of design §2.3, each bound as computed (HR_NONE when it does
 * not apply), the cap itself and which bound it is. */
typedef enum hr_cap_kind {
    HR_CAP_MULTIPLIER = 0, /* r × maxMultiplier */
    HR_CAP_ALLOCATABLE,    /* A' = max(A, r) */
    HR_CAP_MAX_CPU,        /* the max-cpu annotation */
    HR_CAP_LR_POD,         /* LimitRange Pod max.cpu − limits not ours */
    HR_CAP_LR_CONTAINER,   /* Σ LimitRange Container bounds */
    HR_CAP_QUOTA,          /* the pod's share of a limits.cpu ResourceQuota */
    HR_CAP_REQUEST,        /* every bound is below r: the request wins */
    HR_CAP_COUNT_
} hr_cap_kind;

typedef struct hr_pod_caps {
    int64_t bound[HR_CAP_REQUEST]; /* per hr_cap_kind (may be below r, even negative) */
    bool on[HR_CAP_REQUEST];       /* whether that bound applies */
    int64_t cap;                   /* max(min of the bounds, r) */
    hr_cap_kind kind;              /* the bound that is the cap (the first in §2.3 order on a tie),
                         HR_CAP_REQUEST when r is above all of them */
} hr_pod_caps;

void hr_pod_caps_of(const hr_config *c, int64_t allocatable, const hr_pod *p, int64_t request,
                    hr_pod_caps *out);

/* "maxMultiplier", "allocatable", "max-cpu", "LimitRange Pod max",
 * "LimitRange Container bounds", "ResourceQuota share", "request" (for
 * explain and plan). */
const char *hr_cap_str(hr_cap_kind k);

/* The floor of design §2.2 as applied: min(minBurstFloor, S/N) when pods
 * burst (S > 0, M > 0, N > 0), else 0. */
int64_t hr_pod_floor(const hr_config *c, int64_t slack, int64_t managed, uint32_t n_managed);

/* The cap that binds (design §9.1's "cap"): the bound r + burst (raw)
 * meets or passes; when every bound is below r, the least of them;
 * HR_CAP_COUNT_ when r + burst stays below every bound ("none"). *limit
 * (may be NULL) receives its value, HR_NONE for none. */
hr_cap_kind hr_cap_binding(const hr_pod_caps *caps, int64_t raw, int64_t *limit);

/* The status annotation's and the JSON's word for a cap: "multiplier",
 * "allocatable", "max-cpu", "limitrange" (either LimitRange bound), "quota", and
 * "none" for HR_CAP_COUNT_. */
const char *hr_cap_key(hr_cap_kind k);

/* raw_i = r_i + burst_i of design §2.2, before the caps and the quantum. */
int64_t hr_pod_raw(const hr_config *c, int64_t slack, int64_t managed, uint32_t n_managed,
                   int64_t request);

/* target_i before the split: burst, caps, quantum. cap_out (may be NULL)
 * receives hr_pod_caps_of's cap. */
int64_t hr_pod_target(const hr_config *c, int64_t allocatable, int64_t slack, int64_t managed,
                      uint32_t n_managed, const hr_pod *p, int64_t request, int64_t *cap_out);

/* Split a pod target over its managed containers pro-rata to requests, each
 * container's limit on the grid (from its first grid point at or above its
 * request) and within its LimitRange bounds; then apply the QoS guard. Writes one slot per container into
 * limits; returns the total. *guarded tells whether the guard acted. */
int64_t hr_split_target(const hr_config *c, const hr_pod *p, int64_t request, int64_t target,
                        int64_t *limits, bool *guarded);

/* design §2 hysteresis: should target replace current? current 0 means some
 * managed container has no limit yet: always write. */
bool hr_should_write(const hr_config *c, int64_t current, int64_t target);

#endif
