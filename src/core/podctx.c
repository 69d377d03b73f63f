/*
 * podctx.c — the context fields of a pod, decided once (podctx.h).
 */
#include "podctx.h"

#include "eligibility.h"
#include "grace.h"
#include "tenant.h"

hr_pod hr_pod_in_context(const hr_pod *bare, const hr_pod_ctx *cx)
{
    const hr_config *cfg = cx->cfg;
    hr_pod p = *bare;
    /* hr_selector_matches reads NULL labels as no labels. */
    p.ns_state = (uint8_t)hr_namespace_state(cfg, cx->ns, cx->ns_labels, cx->own_ns);
    p.node_excluded =
        cx->node_labels != NULL && hr_selector_matches(&cfg->excluded_nodes, cx->node_labels);
    p.node_windows = cx->node_windows;
    p.pod_resize = cx->node_pod_resize;
    p.owner_excluded = hr_owner_excluded(cfg, cx->owner_kind, cx->owner_group, cx->owner_name);
    p.limits = cx->limits;
    p.in_backoff = cx->in_backoff;
    /* Another writer of its CPU limit (design §4, rule 20): a field manager
     * that resized it, else a VerticalPodAutoscaler that writes it. */
    if (p.foreign_writer == NULL)
        p.foreign_writer = cx->vpa_writer;
    /* The quota cap: the pod's share of its namespace's limits.cpu quota. */
    p.quota_cap =
        hr_quota_pod_cap(cfg, cx->quota, hr_pod_managed_cpu(&p), hr_pod_current_limit(&p));
    p.quota_on = p.quota_cap != HR_NONE;
    /* A group above the maximum is refused whole (design §2.10): its cost
     * grows with its members times their nodes. */
    p.group_too_large = p.group != NULL && cx->group_size > (size_t)cfg->max_group_size;
    /* The tenant of design §2.9: the namespace's tenant label, else the
     * namespace; the weight comes parsed (the cache keeps it so) or from
     * the labels, by one parser. */
    p.tenant = hr_tenant_of(cfg->tenant_label, cx->ns, cx->ns_labels, &p.tenant_by_label);
    p.tenant_weight_invalid = cx->ns_weight_invalid;
    p.tenant_weight = cx->ns_weight;
    if (p.tenant_weight == 0)
        p.tenant_weight = hr_tenant_weight(cx->ns_labels, &p.tenant_weight_invalid);
    /* The startup grace (design §2.12): decided once, in grace.c. */
    int64_t until = hr_grace_until(cfg, &p, cx->ns_labels, cx->now_s);
    p.in_grace = until != HR_NONE;
    if (p.in_grace)
        p.start_s = (uint32_t)(until - cfg->startup_grace_s);
    return p;
}
