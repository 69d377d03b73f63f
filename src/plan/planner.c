/*
 * planner.c — group a snapshot's pods by node and run the policy on each.
 *
 * The pods are copied into per-node arrays of hr_pod (the core wants them
 * contiguous) with their context filled in from the other objects of the
 * dump; the decoded hr_kpod stays untouched so one snapshot can be planned
 * several times (with and without --set-request).
 */
#include "plan/planner.h"

#include <stdlib.h>
#include <string.h>

#include "core/eligibility.h"
#include "core/podctx.h"
#include "core/quantity.h"
#include "core/selector.h"
#include "core/wide.h"
#include "util/strmap.h"

hr_status hr_set_request_parse(const char *arg, hr_arena *a, hr_set_request *out, hr_err *err)
{
    const char *slash = strchr(arg, '/');
    const char *eq = strchr(arg, '=');
    char q[80];
    hr_err_quote(q, sizeof q, arg, strlen(arg), 64);
    if (!slash || !eq || eq < slash || slash == arg || eq == slash + 1 || !eq[1])
        return hr_err_set(err, HR_E_INPUT,
                          "--set-request \"%s\": expected NAMESPACE/POD=CPU, "
                          "e.g. team-a/web-1=500m",
                          q);
    int64_t cpu;
    hr_qerr qe = hr_cpu_parse_milli(eq + 1, strlen(eq + 1), &cpu);
    if (qe != HR_Q_OK)
        return hr_err_set(err, HR_E_INPUT, "--set-request \"%s\": CPU: %s", q, hr_qerr_str(qe));
    if (cpu <= 0)
        return hr_err_set(err, HR_E_INPUT, "--set-request \"%s\": CPU must be more than 0", q);
    out->ns = hr_arena_strndup(a, arg, (size_t)(slash - arg));
    out->name = hr_arena_strndup(a, slash + 1, (size_t)(eq - slash - 1));
    if (!out->ns || !out->name)
        return hr_err_set(err, HR_E_NOMEM, "out of memory");
    out->cpu_milli = cpu;
    return HR_OK;
}

/* A what-if override resolved to a pod and its rewritten containers. */
typedef struct override {
    const hr_kpod *kp;
    hr_container *ctr;
} override;

static hr_status make_override(const hr_snapshot *s, const hr_set_request *r, hr_arena *a,
                               override *ov, hr_err *err)
{
    char qn[72], qp[72];
    hr_err_quote(qn, sizeof qn, r->ns, strlen(r->ns), 63);
    hr_err_quote(qp, sizeof qp, r->name, strlen(r->name), 63);
    const hr_kpod *kp = hr_snapshot_pod(s, r->ns, r->name);
    if (!kp)
        return hr_err_set(err, HR_E_NOTFOUND, "--set-request %s/%s: no such pod in the dump", qn,
                          qp);
    if (!kp->node_name)
        return hr_err_set(err, HR_E_INPUT,
                          "--set-request %s/%s: the pod is not bound to a "
                          "node, so it gets no limit to plan",
                          qn, qp);
    if (hr_pod_terminal(&kp->pod))
        return hr_err_set(err, HR_E_INPUT,
                          "--set-request %s/%s: the pod has finished "
                          "(Succeeded or Failed)",
                          qn, qp);
    const hr_pod *p = &kp->pod;
    if (p->undecodable)
        return hr_err_set(err, HR_E_INPUT,
                          "--set-request %s/%s: the pod could not be decoded, so it has no "
                          "requests to change",
                          qn, qp);
    if (p->n_ctr == 0) /* the decoder refuses such pods; stay safe anyway */
        return hr_err_set(err, HR_E_INPUT, "--set-request %s/%s: the pod has no containers", qn,
                          qp);
    hr_container *ctr = hr_arena_alloc(a, p->n_ctr * sizeof *ctr);
    if (!ctr)
        return hr_err_set(err, HR_E_NOMEM, "out of memory");
    memcpy(ctr, p->ctr, p->n_ctr * sizeof *ctr);
    int64_t total = hr_pod_managed_cpu(p);
    if (total <= 0) {
        /* Nothing to scale: only unambiguous with one resizable container. */
        uint32_t only = UINT32_MAX, n_res = 0;
        for (uint32_t k = 0; k < p->n_ctr; k++)
            if (hr_ctr_resizable(&ctr[k])) {
                only = k;
                n_res++;
            }
        if (n_res != 1)
            return hr_err_set(err, HR_E_INPUT,
                              "--set-request %s/%s: no container requests "
                              "CPU and %u could take the request; which one "
                              "is ambiguous",
                              qn, qp, n_res);
        ctr[only].cpu_req = r->cpu_milli;
    } else {
        /* Pro-rata, rounded down; the few millicores left (fewer than the
         * containers) go one each to the first ones, so the shares sum
         * exactly to the asked total. */
        int64_t given = 0;
        for (uint32_t k = 0; k < p->n_ctr; k++) {
            if (!hr_ctr_managed(&ctr[k]))
                continue;
            int64_t share = hr_muldiv64(r->cpu_milli, ctr[k].cpu_req, total);
            ctr[k].cpu_req = share;
            given += share;
        }
        for (uint32_t k = 0; given < r->cpu_milli; k = (k + 1) % p->n_ctr) {
            if (hr_ctr_managed(&p->ctr[k])) {
                ctr[k].cpu_req++;
                given++;
            }
        }
    }
    ov->kp = kp;
    ov->ctr = ctr;
    return HR_OK;
}

/* Sort key for grouping: node name, then namespace/name. */
static int cmp_bound(const void *x, const void *y)
{
    const hr_kpod *a = *(const hr_kpod *const *)x;
    const hr_kpod *b = *(const hr_kpod *const *)y;
    int c = strcmp(a->node_name, b->node_name);
    if (!c)
        c = strcmp(a->meta.ns, b->meta.ns);
    return c ? c : strcmp(a->meta.name, b->meta.name);
}

/* The core view of one pod with everything around it filled in. A dump
 * carries no resize history (no back-off) and no controller namespace. */
static hr_pod pod_in_context(const hr_snapshot *s, const hr_kpod *kp, const hr_knode *kn,
                             const override *ovs, size_t n_ovs, const hr_strmap *group_sizes,
                             const hr_ns_quota *quota)
{
    static const hr_labels no_labels = {NULL, 0};
    hr_pod bare = kp->pod;
    for (size_t i = 0; i < n_ovs; i++)
        if (ovs[i].kp == kp)
            bare.ctr = ovs[i].ctr;
    const hr_knamespace *ns = hr_snapshot_namespace(s, kp->meta.ns);
    /* A node the dump does not hold is judged on no labels (not as
     * "unknown"): an excludedNodeSelector that matches a node without
     * labels excludes it. The controller's snapshot does the opposite for
     * a Node it has not seen; kept as it was, see hr_pod_ctx. */
    hr_pod_ctx cx = {
        .cfg = &s->cfg,
        .own_ns = NULL,
        .ns = kp->meta.ns,
        .ns_labels = ns ? &ns->meta.labels : NULL,
        .node_labels = kn ? &kn->meta.labels : &no_labels,
        .node_windows = kn && kn->windows,
        .node_pod_resize = kn && kn->pod_resize && !s->no_pod_resize,
        .owner_kind = kp->owner.kind,
        .owner_group = kp->owner.api_group,
        .owner_name = kp->owner.name,
        .limits = hr_snapshot_bounds(s, kp->meta.ns),
        .in_backoff = false,
        .now_s = s->now_unix,
    };
    const uint64_t *size = kp->pod.group ? hr_strmap_get(group_sizes, kp->pod.group) : NULL;
    cx.group_size = size ? (size_t)*size : 0;
    cx.quota = quota;
    return hr_pod_in_context(&bare, &cx);
}

/* The namespaces of the dump with a limits.cpu quota (design §2.3, the
 * quota cap), each with the managed request and current limits of its
 * managed pods on every node. */
typedef struct pquotas {
    const char **ns;
    hr_ns_quota *q;
    size_t n;
} pquotas;

static const hr_ns_quota *quota_of(const pquotas *pq, const char *ns)
{
    for (size_t i = 0; i < pq->n; i++)
        if (!strcmp(pq->ns[i], ns))
            return &pq->q[i];
    return NULL;
}

static hr_status gather_quotas(const hr_snapshot *s, const override *ovs, size_t n_ovs,
                               const hr_strmap *group_sizes, hr_arena *a, pquotas *out, hr_err *err)
{
    *out = (pquotas){0};
    if (s->n_quotas == 0)
        return HR_OK;
    out->ns = hr_arena_calloc(a, s->n_quotas, sizeof *out->ns);
    out->q = hr_arena_calloc(a, s->n_quotas, sizeof *out->q);
    if (!out->ns || !out->q)
        return hr_err_set(err, HR_E_NOMEM, "out of memory");
    for (size_t i = 0; i < s->n_quotas; i++) {
        const char *ns = s->quotas[i].meta.ns;
        if (!s->quotas[i].limits_cpu || quota_of(out, ns) != NULL)
            continue;
        hr_ns_quota *q = &out->q[out->n];
        out->ns[out->n++] = ns;
        hr_snapshot_quota(s, ns, q);
        for (size_t k = 0; k < s->n_pods; k++) {
            const hr_kpod *kp = &s->pods[k];
            if (strcmp(kp->meta.ns, ns) != 0)
                continue;
            q->held = hr_sadd64(q->held, hr_pod_quota_limit(&kp->pod));
            if (kp->node_unreadable)
                continue;
            const hr_knode *kn = kp->node_name ? hr_snapshot_node(s, kp->node_name) : NULL;
            hr_pod p = pod_in_context(s, kp, kn, ovs, n_ovs, group_sizes, NULL);
            if (hr_pod_eligibility(&p) != HR_MANAGED)
                continue;
            q->managed = hr_sadd64(q->managed, hr_pod_managed_cpu(&p));
            q->current = hr_sadd64(q->current, hr_pod_current_limit(&p));
        }
        /* Which of them are below their share: they divide what is free. */
        for (size_t k = 0; k < s->n_pods; k++) {
            const hr_kpod *kp = &s->pods[k];
            if (strcmp(kp->meta.ns, ns) != 0 || kp->node_unreadable)
                continue;
            const hr_knode *kn = kp->node_name ? hr_snapshot_node(s, kp->node_name) : NULL;
            hr_pod p = pod_in_context(s, kp, kn, ovs, n_ovs, group_sizes, NULL);
            if (hr_pod_eligibility(&p) == HR_MANAGED &&
                hr_quota_below_share(&s->cfg, q, hr_pod_managed_cpu(&p), hr_pod_current_limit(&p)))
                q->raising = hr_sadd64(q->raising, hr_pod_managed_cpu(&p));
        }
    }
    return HR_OK;
}

static hr_status plan_one(const hr_snapshot *s, hr_plan_node_out *no, const char *name,
                          const hr_knode *kn, const hr_kpod *const *pods, size_t n,
                          const override *ovs, size_t n_ovs, const hr_strmap *group_sizes,
                          const pquotas *pq, hr_arena *a, hr_err *err)
{
    no->name = name;
    no->kn = kn;
    no->unknown = kn == NULL;
    no->node = kn ? kn->node : (hr_node){0};
    /* An undecodable pod whose node cannot be read may be on this one. */
    no->node.booking_unknown = s->n_pods_nowhere > 0;
    for (size_t i = 0; !kn && name && i < s->n_bad; i++)
        if (!strcmp(s->bad[i].kind, "node") && !strcmp(s->bad[i].name, name))
            no->undecodable = s->bad[i].msg;
    no->n_pods = n;
    size_t cap = n ? n : 1;
    no->src = hr_arena_alloc(a, cap * sizeof *no->src);
    no->pods = hr_arena_alloc(a, cap * sizeof *no->pods);
    no->plans = hr_arena_alloc(a, cap * sizeof *no->plans);
    size_t n_ctr = 0;
    for (size_t i = 0; i < n; i++)
        n_ctr += pods[i]->pod.n_ctr;
    no->ctr_limits = hr_arena_alloc(a, (n_ctr ? n_ctr : 1) * sizeof *no->ctr_limits);
    if (!no->src || !no->pods || !no->plans || !no->ctr_limits)
        return hr_err_set(err, HR_E_NOMEM, "out of memory planning node %s", name);
    for (size_t i = 0; i < n; i++) {
        no->src[i] = pods[i];
        no->pods[i] =
            pod_in_context(s, pods[i], kn, ovs, n_ovs, group_sizes, quota_of(pq, pods[i]->meta.ns));
    }
    no->group = hr_arena_alloc(a, cap * sizeof *no->group);
    no->own_target = hr_arena_alloc(a, cap * sizeof *no->own_target);
    if (!no->group || !no->own_target)
        return hr_err_set(err, HR_E_NOMEM, "out of memory planning node %s", name);
    for (size_t i = 0; i < n; i++) {
        no->group[i] = -1;
        no->own_target[i] = HR_NONE;
    }
    /* The node's settings, by the one rule (design §2.11). */
    const hr_node_pool *pool = hr_config_for_node(&s->cfg, kn ? &kn->meta.labels : NULL, &no->cfg);
    no->pool = pool != NULL ? pool->name : NULL;
    no->np = hr_plan_node(&no->cfg, &no->node, no->pods, n, no->plans, no->ctr_limits);
    no->factor_milli = hr_node_factor_milli(&no->np);
    return HR_OK;
}

/* A group member: where its plan lives. */
typedef struct gslot {
    hr_plan_node_out *no;
    size_t i;
} gslot;

static int cmp_gslot(const void *x, const void *y)
{
    const gslot *a = x, *b = y;
    int c = strcmp(a->no->pods[a->i].group, b->no->pods[b->i].group);
    if (!c)
        c = strcmp(a->no->src[a->i]->meta.name, b->no->src[b->i]->meta.name);
    return c;
}

/* Design §2.10: every planned managed pod with a group key joins its
 * group; each group is planned over its members' node plans. */
static hr_status plan_groups(const hr_snapshot *s, hr_plan *out, hr_arena *a, hr_err *err)
{
    size_t n = 0;
    for (size_t k = 0; k < out->n_nodes; k++)
        for (size_t i = 0; i < out->nodes[k].n_pods; i++)
            n += out->nodes[k].pods[i].group != NULL;
    if (n == 0)
        return HR_OK;
    gslot *gs = hr_arena_calloc(a, n, sizeof *gs);
    hr_group_slot *slots = hr_arena_calloc(a, n, sizeof *slots);
    hr_group_member *m = hr_arena_calloc(a, n, sizeof *m);
    hr_group_member_out *o = hr_arena_calloc(a, n, sizeof *o);
    int64_t **lp = hr_arena_calloc(a, n, sizeof *lp);
    out->groups = hr_arena_calloc(a, n, sizeof *out->groups);
    if (!gs || !slots || !m || !o || !lp || !out->groups)
        return hr_err_set(err, HR_E_NOMEM, "out of memory planning groups");
    size_t ng = 0;
    for (size_t k = 0; k < out->n_nodes; k++) {
        hr_plan_node_out *no = &out->nodes[k];
        for (size_t i = 0; i < no->n_pods; i++) {
            const hr_pod_plan *pp = &no->plans[i];
            if (no->pods[i].group != NULL && pp->reason == HR_MANAGED &&
                pp->gate != HR_GATE_NODE_UNKNOWN && pp->request > 0)
                gs[ng++] = (gslot){no, i};
        }
    }
    qsort(gs, ng, sizeof *gs, cmp_gslot);
    for (size_t lo = 0; lo < ng;) {
        size_t hi = lo + 1;
        while (hi < ng && !strcmp(gs[hi].no->pods[gs[hi].i].group, gs[lo].no->pods[gs[lo].i].group))
            hi++;
        for (size_t j = lo; j < hi; j++) {
            hr_plan_node_out *no = gs[j].no;
            size_t i = gs[j].i;
            slots[j - lo] = (hr_group_slot){&no->pods[i],
                                            &no->plans[i],
                                            &no->ctr_limits[no->plans[i].ctr_off],
                                            &no->np,
                                            &no->node,
                                            no->src[i]->meta.ns,
                                            no->src[i]->meta.name,
                                            HR_NONE,
                                            &no->cfg};
        }
        hr_plan_group *g = &out->groups[out->n_groups];
        g->key = gs[lo].no->pods[gs[lo].i].group;
        g->n_members = hi - lo;
        hr_group_apply(&s->cfg, slots, hi - lo, m, o, lp, &g->res);
        const gslot *b = &gs[lo + g->res.binding];
        g->binding_ns = b->no->src[b->i]->meta.ns;
        g->binding_name = b->no->src[b->i]->meta.name;
        g->binding_node = b->no->name;
        g->binding_request = g->res.ratio_den;
        g->binding_own = g->res.ratio_num;
        for (size_t j = lo; j < hi; j++) {
            gs[j].no->group[gs[j].i] = (int32_t)out->n_groups;
            gs[j].no->own_target[gs[j].i] = slots[j - lo].own_target;
        }
        out->n_groups++;
        lo = hi;
    }
    return HR_OK;
}

hr_status hr_plan_build(const hr_snapshot *s, const hr_set_request *sets, size_t n_sets,
                        hr_arena *a, hr_plan *out, hr_err *err)
{
    memset(out, 0, sizeof *out);
    out->cfg = &s->cfg;
    out->bad = s->bad;
    out->n_bad = s->n_bad;
    out->n_pods_nowhere = s->n_pods_nowhere;
    hr_status st;
    override *ovs = hr_arena_calloc(a, n_sets ? n_sets : 1, sizeof *ovs);
    if (!ovs)
        return hr_err_set(err, HR_E_NOMEM, "out of memory");
    for (size_t i = 0; i < n_sets; i++)
        if ((st = make_override(s, &sets[i], a, &ovs[i], err)))
            return st;

    const hr_kpod **bound = hr_arena_alloc(a, (s->n_pods ? s->n_pods : 1) * sizeof *bound);
    if (!bound)
        return hr_err_set(err, HR_E_NOMEM, "out of memory");
    size_t nb = 0;
    for (size_t i = 0; i < s->n_pods; i++) {
        const hr_kpod *kp = &s->pods[i];
        if (hr_pod_terminal(&kp->pod))
            out->n_terminal++;
        else if (kp->node_unreadable)
            continue; /* bound, but where is unknown: listed in out->bad */
        else if (!kp->node_name)
            out->n_unbound++;
        else
            bound[nb++] = kp;
    }
    if (nb)
        qsort(bound, nb, sizeof *bound, cmp_bound);
    /* Each group's members, as the controller's group index counts them
     * (every pod not terminal, bound or not): spec.maxGroupSize refuses a
     * larger group whole (design §2.10). */
    hr_strmap group_sizes;
    hr_strmap_init(&group_sizes);
    for (size_t i = 0; i < s->n_pods; i++) {
        const hr_kpod *kp = &s->pods[i];
        if (kp->pod.group == NULL || hr_pod_terminal(&kp->pod))
            continue;
        uint64_t *v = hr_strmap_get(&group_sizes, kp->pod.group);
        if (v != NULL) {
            (*v)++;
        } else if (!hr_strmap_put(&group_sizes, kp->pod.group, 1)) {
            hr_strmap_free(&group_sizes);
            return hr_err_set(err, HR_E_NOMEM, "out of memory");
        }
    }

    pquotas pq;
    if ((st = gather_quotas(s, ovs, n_sets, &group_sizes, a, &pq, err))) {
        hr_strmap_free(&group_sizes);
        return st;
    }
    /* Nodes = dump nodes ∪ node names pods refer to; both lists sorted. */
    size_t n_groups = 0;
    for (size_t i = 0; i < nb; i++)
        if (i == 0 || strcmp(bound[i - 1]->node_name, bound[i]->node_name) != 0)
            n_groups++;
    size_t max_nodes = s->n_nodes + n_groups;
    out->nodes = hr_arena_calloc(a, max_nodes ? max_nodes : 1, sizeof *out->nodes);
    if (!out->nodes)
        return hr_err_set(err, HR_E_NOMEM, "out of memory");
    size_t ni = 0, pi = 0;
    while (ni < s->n_nodes || pi < nb) {
        const hr_knode *kn = ni < s->n_nodes ? &s->nodes[ni] : NULL;
        const char *pod_node = pi < nb ? bound[pi]->node_name : NULL;
        int c = !kn ? 1 : pi >= nb ? -1 : strcmp(kn->meta.name, pod_node);
        const char *name = c <= 0 ? kn->meta.name : pod_node;
        size_t first = pi;
        if (c >= 0)
            while (pi < nb && !strcmp(bound[pi]->node_name, name))
                pi++;
        if (c <= 0)
            ni++;
        if ((st = plan_one(s, &out->nodes[out->n_nodes++], name, c <= 0 ? kn : NULL, bound + first,
                           pi - first, ovs, n_sets, &group_sizes, &pq, a, err))) {
            hr_strmap_free(&group_sizes);
            return st;
        }
    }
    hr_strmap_free(&group_sizes);
    return plan_groups(s, out, a, err);
}

const hr_plan_node_out *hr_plan_find_node(const hr_plan *p, const char *name)
{
    for (size_t i = 0; i < p->n_nodes; i++)
        if (!strcmp(p->nodes[i].name, name))
            return &p->nodes[i];
    return NULL;
}
