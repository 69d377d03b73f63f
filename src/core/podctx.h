/*
 * podctx.h — a pod in its context: the one place that decides the fields of
 * hr_pod the pod's own spec cannot tell (design §4).
 *
 * Whether a pod is managed depends on more than the pod: its namespace
 * (labels, excludedNamespaces, the controller's own namespace), its node
 * (excludedNodeSelector, the node's OS), its direct owner (excludedOwners),
 * the LimitRanges of its namespace (design §3.4) and the resize history
 * (back-off, design §7). Every reader that turns a pod into a plan — the
 * controller's node snapshot, the offline planner, `explain`, `node` — and
 * the admission webhook, for a pod being created (no node, no history yet),
 * gathers those facts from wherever it keeps objects and hands them here,
 * so the rules are written once. Pure: no I/O, no allocation; the pointers
 * are only read during the call.
 */
#ifndef HR_CORE_PODCTX_H
#define HR_CORE_PODCTX_H

#include <stdbool.h>

#include "config.h"
#include "pod.h"
#include "quota.h"
#include "selector.h"

typedef struct hr_pod_ctx {
    const hr_config *cfg;         /* required: the config in force */
    const char *own_ns;           /* the controller's namespace (never
                                    managed); NULL: none */
    const char *ns;               /* required: the pod's namespace */
    const hr_labels *ns_labels;   /* NULL: the Namespace object is unknown,
                                    read as "no labels" (fail closed: only a
                                    selector that selects everything selects
                                    it) */
    const hr_labels *node_labels; /* NULL: the Node object is unknown, and an
                                    unknown node is never node-excluded */
    bool node_windows;            /* node label kubernetes.io/os=windows */
    bool node_pod_resize;         /* the node and the API server accept a
                                    resize of pod-level resources (§2.13) */
    const char *owner_kind;       /* the direct owner; NULL: none */
    const char *owner_group;      /* "" or NULL: the core group */
    const char *owner_name;
    hr_limit_bounds limits;   /* folded over the namespace's LimitRanges */
    const hr_ns_quota *quota; /* its limits.cpu quota (design §2.3, the quota cap); NULL: none */
    bool in_backoff;          /* a recent resize was refused (design §7) */
    uint32_t ns_weight;       /* the namespace's TenantFair weight when the
                               caller keeps it parsed (the cache), with
                               ns_weight_invalid; 0: read it from ns_labels
                               (hr_tenant_weight) */
    bool ns_weight_invalid;
    size_t group_size;      /* the members of the pod's group (design §2.10) the
                          caller's index counts; 0: unknown, read as small */
    int64_t now_s;          /* the wall clock, Unix seconds, for the startup
                          grace (design §2.12); 0: unknown, no grace */
    const char *vpa_writer; /* the VerticalPodAutoscaler that writes the CPU limit
                               of a container of the pod the policy manages
                               (hr_vpa_writes_pod: its writer name), NULL: none;
                               the pod's own foreign writer, when it has one,
                               wins (design §4, foreign-writer) */
} hr_pod_ctx;

/* The context fields of hr_pod filled from cx (the tenant is the value of
 * cfg->tenant_label on the namespace, else the namespace cx->ns; the weight
 * the namespace's); the tenant may point into cx->ns_labels. Everything else is the bare pod's. The returned copy shares bare's container array. */
hr_pod hr_pod_in_context(const hr_pod *bare, const hr_pod_ctx *cx);

#endif
