/*
 * planner.h — the offline planner: design §2 applied to every node of a
 * snapshot, with optional what-if request overrides.
 *
 * For each node the pods bound to it are given their surroundings (the
 * namespace state under the config, owner and node exclusion, the node's
 * OS, the namespace's LimitRange bounds) and handed to hr_plan_node. Nodes
 * come out sorted by name, pods by namespace/name.
 *
 * Decisions (documented in docs/planner.md):
 * - A pod bound to a node that is not in the dump is listed on a node of
 *   that name marked unknown (allocatable 0, known=false); its managed
 *   pods are not planned: gate HR_GATE_NODE_UNKNOWN, no target, no write
 *   (design §6).
 * - An undecodable pod (hr_snapshot.bad) is listed on its node with reason
 *   undecodable and makes every increase there held (booking-unknown); one
 *   whose nodeName cannot be read holds every node's. An undecodable Node is
 *   an unknown node (undecodable names why). Design §6, §15.
 * - Pods not bound to any node are not planned; they are counted
 *   (n_unbound) and the table says so. Terminal pods are not listed.
 * - --set-request scales the pod's managed containers' CPU requests
 *   pro-rata so that they sum exactly to the asked total (the rounding
 *   remainder goes to the first containers); a pod with no CPU request anywhere can be given one only
 *   when it has a single app/sidecar container.
 */
#ifndef HR_PLAN_PLANNER_H
#define HR_PLAN_PLANNER_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "core/group.h"
#include "core/policy.h"
#include "plan/snapshot.h"
#include "util/arena.h"
#include "util/err.h"

typedef struct hr_set_request {
    const char *ns;
    const char *name;
    int64_t cpu_milli; /* the pod's new total managed CPU request */
} hr_set_request;

/* Parse "NS/POD=CPU" (CPU a Kubernetes quantity, > 0). The strings point
 * into arg's copy in the arena. HR_E_INPUT with a message on bad syntax. */
HR_MUST_CHECK hr_status hr_set_request_parse(const char *arg, hr_arena *a, hr_set_request *out,
                                             hr_err *err);

typedef struct hr_plan_node_out {
    const char *name;
    const hr_knode *kn;      /* NULL when the node is not in the dump */
    bool unknown;            /* == (kn == NULL) */
    const char *undecodable; /* the Node is in the dump but could not be
                                decoded: the decoder's message; else NULL */
    hr_node node;            /* as given to the policy */
    hr_config cfg;           /* the node's settings: hr_config_for_node */
    const char *pool;        /* the spec.nodePools entry that applied, NULL:
                                the top level (and for a node not in the dump) */
    hr_node_plan np;
    int64_t factor_milli; /* hr_node_factor_milli */
    size_t n_pods;        /* non-terminal pods bound here */
    const hr_kpod **src;  /* n_pods: the decoded objects */
    hr_pod *pods;         /* n_pods: core views with context filled */
    hr_pod_plan *plans;   /* n_pods */
    int64_t *ctr_limits;  /* per-container limits hr_plan_node wrote */
    /* Groups (design §2.10): per pod, the index of its group in
     * hr_plan.groups (-1: none) and its own target t_i (HR_NONE: none). */
    int32_t *group;
    int64_t *own_target;
} hr_plan_node_out;

/* One group of the snapshot (design §2.10): its members' plans above are
 * already the group's. */
typedef struct hr_plan_group {
    const char *key;
    size_t n_members;
    hr_group_result res;
    const char *binding_ns, *binding_name, *binding_node; /* the member whose node binds */
    int64_t binding_request, binding_own;                 /* its r_b and t_b */
} hr_plan_group;

typedef struct hr_plan {
    const hr_config *cfg;
    hr_plan_node_out *nodes;
    size_t n_nodes;
    size_t n_unbound;           /* non-terminal pods with no nodeName */
    size_t n_terminal;          /* Succeeded/Failed pods (not listed) */
    const hr_snapshot_bad *bad; /* objects that could not be decoded */
    size_t n_bad;
    size_t n_pods_nowhere; /* undecodable pods whose node cannot be read */
    hr_plan_group *groups; /* sorted by key */
    size_t n_groups;
} hr_plan;

/* Plan the whole snapshot into a (allocations live in it). Every set
 * request must name a pod of the snapshot, bound and not terminal. */
HR_MUST_CHECK hr_status hr_plan_build(const hr_snapshot *s, const hr_set_request *sets,
                                      size_t n_sets, hr_arena *a, hr_plan *out, hr_err *err);

const hr_plan_node_out *hr_plan_find_node(const hr_plan *p, const char *name);

#endif
