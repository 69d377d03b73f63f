/*
 * group.h — one ceiling for a group (design §2.10): the members of a group
 * share the ratio of limit to request that its tightest member would get
 * on its own node.
 *
 * A synchronous distributed job goes as fast as its slowest worker, and
 * workers on differently booked nodes get different ceilings under §2.2.
 * Pods marked kube-headroom.dev/group-uniform are grouped (by their
 * controlling owner, or by a kube-headroom.dev/group label); each member
 * is first planned on its own node as usual (its "own target" t_i), then
 *
 *   ρ   = min over members of t_i / r_i          (the binding member b)
 *   T_i = min(t_i, the largest grid point from g_i at or below ⌊r_i·ρ⌋)
 *         (g_i itself when ⌊r_i·ρ⌋ is below it)
 *
 * so every member has the same ratio to its request up to one quantum,
 * never less than its request, never more than it would get alone (its
 * caps hold). Hysteresis is on the group's value, not per pod: the value
 * in force H is the smallest current limit/request ratio among members
 * that have a limit, and the group moves only when its new value leaves
 * the deadband around H; while it holds, only a member without a limit,
 * or one above its group target beyond the shrink band, is written.
 *
 * Ratios are kept as exact fractions (numerator/denominator in
 * millicores) and compared in 128 bits, so a group of one is exactly the
 * policy of §2 (same target, limits and verdict). Pure: no allocation,
 * no I/O; the answer does not depend on the order of the members (ties of
 * the binding member go to the smallest namespace/name).
 */
#ifndef HR_CORE_GROUP_H
#define HR_CORE_GROUP_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "config.h"
#include "gates.h"
#include "pod.h"
#include "policy.h"

/* The key of a pod's group, or false when it is in none. A pod is in a
 * group when group_uniform (the kube-headroom.dev/group-uniform label or
 * annotation is "true") and it has a group label value (non-empty: the
 * key is "label:" + value) or a controlling owner with a uid (the key is
 * "owner:" + uid). The namespace is part of the key (a group never spans
 * namespaces): ns + "/" + the rest, written into buf (NUL-terminated;
 * false when it does not fit). */
bool hr_group_key(const char *ns, bool group_uniform, const char *group_label,
                  const char *owner_uid, bool owner_controller, char *buf, size_t cap);

/* "true" exactly (a keyword, like the mode label: anything else is off). */
bool hr_group_uniform_value(const char *v);

typedef struct hr_group_member {
    const hr_pod *pod;  /* in context: its containers for the grid and the split */
    int64_t request;    /* r_i > 0, hr_pod_managed_cpu */
    int64_t own_target; /* t_i: the target before the split on its own node
                           (hr_pod_target with its plan's share) */
    int64_t current;    /* hr_pod_current_limit (0: some container has none) */
    const char *ns, *name;
    const hr_config *cfg; /* its node's settings (hr_config_for_node: its pool's
                             overrides); NULL: the c of hr_group_plan */
} hr_group_member;

typedef struct hr_group_member_out {
    int64_t target; /* T_i, before the split */
    int64_t total;  /* after the split and the QoS guard: the pod's target */
    bool write;
    bool guarded;
} hr_group_member_out;

typedef struct hr_group_result {
    size_t binding;               /* the member whose own ratio is ρ */
    int64_t ratio_num, ratio_den; /* ρ = t_b / r_b */
    bool held_known;              /* some member has a limit */
    int64_t held_num, held_den;   /* H = current_k / r_k, the smallest */
    bool moves;                   /* the group's value leaves the deadband */
    int64_t ratio_milli;          /* ⌊1000·ρ⌋, for reports */
} hr_group_result;

/* The group's value in force H (the smallest current limit / request among
 * members that have a limit), folded one member at a time: *known false
 * before the first. A member without a limit (current <= 0) or a request
 * is skipped. hr_group_plan and the webhook's birth value both fold it
 * here. */
void hr_group_held_fold(int64_t current, int64_t request, bool *known, int64_t *num, int64_t *den);

/* T_i for one member at the ratio num/den (den > 0, num ≥ den). */
int64_t hr_group_target(const hr_config *c, const hr_pod *p, int64_t request, int64_t own_target,
                        int64_t num, int64_t den);

/* Plan a group of n ≥ 1 members. Each member's target, grid, split and
 * write verdict follow its own node's settings (m[i].cfg, else c: members
 * may sit in different node pools, design §2.11); the group's deadband is
 * the binding member's. limits[i] receives member i's container
 * limits (one slot per container of m[i].pod, HR_NONE for those the policy
 * leaves alone), out[i] its target and verdict. */
void hr_group_plan(const hr_config *c, const hr_group_member *m, size_t n, int64_t *const *limits,
                   hr_group_member_out *out, hr_group_result *res);

/* One member as the planners hold it after hr_plan_node: its pod, its
 * plan and container limits (rewritten in place by hr_group_apply: target,
 * write, qos_guarded, gate, and the node plan's n_write), its node. */
typedef struct hr_group_slot {
    const hr_pod *pod;     /* in context */
    hr_pod_plan *plan;     /* HR_MANAGED, planned (gate not NODE_UNKNOWN) */
    int64_t *limits;       /* its container slots */
    hr_node_plan *np;      /* its node's plan */
    const hr_node *node;   /* its node, for the gates */
    const char *ns, *name; /* for the tie of the binding member */
    int64_t own_target;    /* out: t_i */
    const hr_config *cfg;  /* its node's settings (NULL: the c of hr_group_apply) */
} hr_group_slot;

/* Plan the group of s[0..n) and write the answer back into each slot's
 * plan. m, o and lp are scratch of n entries each. */
void hr_group_apply(const hr_config *c, hr_group_slot *s, size_t n, hr_group_member *m,
                    hr_group_member_out *o, int64_t **lp, hr_group_result *res);

#endif
