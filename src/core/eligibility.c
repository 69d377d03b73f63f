/*
 * eligibility.c — design §4, one rule per line, first failure wins.
 *
 * The order matters only for which reason is reported: structural facts a
 * user cannot change (bound, terminal) come first, then the operator's
 * choices (namespace, opt-out), then what the API server would refuse.
 * The controller and the admission webhook run the same list (the webhook
 * without the rules a pod being created cannot meet yet), so a pod is
 * given a birth limit exactly when the controller would manage it.
 */
#include "eligibility.h"

#include <string.h>

static const char *const reason_names[HR_R_COUNT_] = {
    [HR_MANAGED] = "managed",
    [HR_R_NOT_BOUND] = "not-bound",
    [HR_R_TERMINAL] = "terminal",
    [HR_R_NS_NOT_SELECTED] = "namespace-not-selected",
    [HR_R_NS_EXCLUDED] = "namespace-excluded",
    [HR_R_OPTED_OUT] = "opted-out",
    [HR_R_UNBOUNDED_QUANTITY] = "quantity-out-of-range",
    [HR_R_BEST_EFFORT] = "qos-besteffort",
    [HR_R_GUARANTEED] = "qos-guaranteed",
    [HR_R_NO_CPU_REQUEST] = "no-cpu-request",
    [HR_R_RESTART_POLICY] = "resize-restarts-container",
    [HR_R_MIRROR] = "static-pod",
    [HR_R_WINDOWS] = "windows",
    [HR_R_POD_RESOURCES] = "pod-level-resources",
    [HR_R_NODE_EXCLUDED] = "node-excluded",
    [HR_R_OWNER_EXCLUDED] = "owner-excluded",
    [HR_R_GROUP_TOO_LARGE] = "group-too-large",
    [HR_R_NO_STATUS_RESOURCES] = "resize-unsupported-by-node",
    [HR_R_BACKOFF] = "backoff",
    [HR_R_BAD_MAX_CPU] = "invalid-max-cpu",
    [HR_R_UNDECODABLE] = "undecodable",
    [HR_R_FOREIGN_WRITER] = "foreign-writer",
};

const char *hr_reason_str(hr_reason r)
{
    if ((unsigned)r >= HR_R_COUNT_)
        return "unknown";
    return reason_names[r];
}

/* The rules, in order. At birth (a pod being created, design §8) the rules
 * about the pod's life on a node are skipped: it is not bound or terminal
 * yet, has no node to be excluded, no kubelet status to prove a resize and
 * no resize history. Windows is skipped too: it is refused because its
 * kubelet cannot resize in place, and a birth limit needs no resize (the
 * webhook has never refused it). Every other rule is the same line for the
 * controller and the webhook, so they give the same reason. */
static hr_reason rules(const hr_pod *p, bool birth)
{
    /* Rule 0: nothing else about a pod we could not read can be judged. */
    if (p->undecodable)
        return HR_R_UNDECODABLE;
    if (!birth && !p->bound)
        return HR_R_NOT_BOUND;
    if (!birth && hr_pod_terminal(p))
        return HR_R_TERMINAL;
    if (p->ns_state == HR_NS_EXCLUDED)
        return HR_R_NS_EXCLUDED;
    if (p->ns_state != HR_NS_MANAGED)
        return HR_R_NS_NOT_SELECTED;
    if (p->opted_out)
        return HR_R_OPTED_OUT;
    /* A limit or memory quantity we could not read: the pod books its CPU
     * requests, but its QoS class and its limits are unknown (design §15). */
    if (hr_pod_unbounded_quantity(p))
        return HR_R_UNBOUNDED_QUANTITY;

    hr_qos q = hr_pod_qos(p, NULL);
    if (q == HR_QOS_BEST_EFFORT)
        return HR_R_BEST_EFFORT;
    if (q == HR_QOS_GUARANTEED)
        return HR_R_GUARANTEED;

    bool any = false;
    for (uint32_t i = 0; i < p->n_ctr; i++) {
        const hr_container *c = &p->ctr[i];
        if (!hr_ctr_resizable(c))
            continue;
        /* A RestartContainer policy on any resizable container disqualifies
         * the pod: a limit change must never restart anything. */
        if (c->cpu_restart)
            return HR_R_RESTART_POLICY;
        if (c->cpu_req > 0)
            any = true;
    }
    /* A pod-level pod's request is its pod-level one (design §2.13). */
    if (!any && !hr_pod_level(p))
        return HR_R_NO_CPU_REQUEST;

    if (p->mirror)
        return HR_R_MIRROR;
    if (!birth && (p->windows || p->node_windows))
        return HR_R_WINDOWS;
    /* Pod-level resources (design §2.13): managed through the pod-level
     * CPU limit where the node and the API server accept its resize; any
     * other pod-level pod (no pod-level CPU request, or no such resize)
     * keeps its limits. */
    if (p->pod_resources && !(hr_pod_level(p) && p->pod_resize))
        return HR_R_POD_RESOURCES;
    if (!birth && p->node_excluded)
        return HR_R_NODE_EXCLUDED;
    if (p->owner_excluded)
        return HR_R_OWNER_EXCLUDED;
    /* At birth the webhook cannot count a group reliably (its members are
     * still being created): a birth limit is the pod's own, as for a group
     * not yet seen. */
    if (!birth && p->group_too_large)
        return HR_R_GROUP_TOO_LARGE;
    if (!birth && p->phase == HR_PHASE_RUNNING && !p->status_resources)
        return HR_R_NO_STATUS_RESOURCES;
    if (p->max_cpu_invalid)
        return HR_R_BAD_MAX_CPU;
    if (!birth && p->in_backoff)
        return HR_R_BACKOFF;
    /* Another writer of a limit we would write (design §4): yield, never
     * fight. Last, so the reasons above keep their order. */
    if (p->foreign_writer != NULL)
        return HR_R_FOREIGN_WRITER;
    return HR_MANAGED;
}

hr_reason hr_pod_eligibility(const hr_pod *p)
{
    return rules(p, false);
}

hr_reason hr_pod_birth_eligibility(const hr_pod *p)
{
    return rules(p, true);
}

bool hr_namespace_excluded(const hr_config *c, const char *ns, const char *own_ns)
{
    if (own_ns != NULL && strcmp(ns, own_ns) == 0)
        return true;
    for (uint32_t i = 0; i < c->n_excluded_ns; i++)
        if (strcmp(c->excluded_ns[i], ns) == 0)
            return true;
    return false;
}

hr_ns_state hr_namespace_state(const hr_config *c, const char *ns, const hr_labels *labels,
                               const char *own_ns)
{
    if (hr_namespace_excluded(c, ns, own_ns))
        return HR_NS_EXCLUDED;
    return hr_selector_matches(&c->ns_selector, labels) ? HR_NS_MANAGED : HR_NS_NOT_SELECTED;
}

bool hr_owner_excluded(const hr_config *c, const char *kind, const char *api_group,
                       const char *name)
{
    if (kind == NULL)
        return false;
    for (uint32_t i = 0; i < c->n_excluded_owners; i++) {
        const hr_owner_ref *o = &c->excluded_owners[i];
        if (o->kind == NULL || strcmp(o->kind, kind) != 0)
            continue;
        if (o->api_group != NULL && strcmp(o->api_group, api_group ? api_group : "") != 0)
            continue;
        if (o->name != NULL && o->name[0] != '\0' && (name == NULL || strcmp(o->name, name) != 0))
            continue;
        return true;
    }
    return false;
}
