/*
 * nodesnap.c — copy one node and its pods out of the cache (nodesnap.h).
 */
#include "nodesnap.h"

#include <stdlib.h>
#include <string.h>

#include "core/eligibility.h"
#include "core/podctx.h"
#include "core/wide.h"

/* The namespaces of one snapshot that have a limits.cpu quota, each
 * gathered once (design §2.3, the quota cap). */
typedef struct nsq {
    const char *ns; /* interned: the cache's pointer */
    hr_ns_quota q;
} nsq;

typedef struct quotas {
    nsq *v;
    size_t n, cap;
    hr_cpod_scratch *scratch; /* for the scan; allocated at the first quota */
    int64_t (*rc)[2];         /* the scan's managed pods: request, current */
    size_t n_rc, cap_rc;
} quotas;

/* The context the core cannot know from the pod alone. A placeholder node
 * (known only from its pods) has no labels to judge: not excluded. Refused
 * resizes park the pod (the executor fills the table, from the API
 * server's answers and from Infeasible in the pod's status; after a restart
 * or a new term the controller parks the Infeasible pods before the first
 * plan, controller.c). ns is the namespace string the pod keeps (its
 * tenant); *nsv receives the namespace. */
static hr_pod_ctx ctx_of(const hr_cache *c, const hr_cnode_view *nv, const hr_config *cfg,
                         const hr_nodesnap_opts *o, const hr_cpod_view *v, const char *ns,
                         hr_cns_view *nsv)
{
    bool have_ns = hr_cache_ns_get(c, v->ns, nsv);
    return (hr_pod_ctx){
        .cfg = cfg,
        .own_ns = o->own_ns,
        .ns = ns,
        .ns_labels = have_ns ? &nsv->labels : NULL,
        .node_labels = nv != NULL && nv->present ? &nv->labels : NULL,
        .node_windows = nv != NULL && nv->windows,
        .node_pod_resize = nv != NULL && nv->pod_resize,
        .owner_kind = v->owner_kind,
        .owner_group = v->owner_group,
        .owner_name = v->owner_name,
        .limits = hr_cache_ns_bounds(c, v->ns),
        .in_backoff =
            o->backoff != NULL && hr_backoff_active(o->backoff, v->ns, v->name, o->now_ms, NULL),
        .ns_weight = have_ns ? nsv->weight : 1,
        .ns_weight_invalid = have_ns && nsv->weight_invalid,
        .group_size = v->pod.group != NULL ? hr_cache_group_pods(c, v->pod.group, NULL, 0) : 0,
        .now_s = o->now_unix,
        .vpa_writer = hr_cache_vpa_writer(c, v),
    };
}

/* The quota of ns (NULL: no limits.cpu quota there): the cache's tightest
 * one, and the managed request and current limits of the namespace's
 * managed pods on every node, judged by the rules every plan uses. One
 * scan of the cached pods per namespace and snapshot. */
static hr_status ns_quota(const hr_cache *c, const hr_config *cfg, const hr_nodesnap_opts *o,
                          const char *ns, quotas *qs, const hr_ns_quota **out, hr_err *err)
{
    *out = NULL;
    for (size_t i = 0; i < qs->n; i++)
        if (qs->v[i].ns == ns) {
            *out = qs->v[i].q.on ? &qs->v[i].q : NULL;
            return HR_OK;
        }
    if (qs->n == qs->cap) {
        size_t nc = qs->cap ? qs->cap * 2 : 8;
        nsq *more = realloc(qs->v, nc * sizeof *more);
        if (more == NULL)
            return hr_err_set(err, HR_E_NOMEM, "snapshot: out of memory");
        qs->v = more;
        qs->cap = nc;
    }
    nsq *e = &qs->v[qs->n++];
    e->ns = ns;
    hr_cache_ns_quota(c, ns, &e->q);
    if (!e->q.on)
        return HR_OK;
    if (qs->scratch == NULL && (qs->scratch = malloc(sizeof *qs->scratch)) == NULL)
        return hr_err_set(err, HR_E_NOMEM, "snapshot: out of memory");
    uint32_t it = 0;
    hr_cpod_view v;
    while (hr_cache_pod_next(c, &it, &v, qs->scratch)) {
        if (v.ns != ns && strcmp(v.ns, ns) != 0)
            continue;
        e->q.held = hr_sadd64(e->q.held, hr_pod_quota_limit(&v.pod));
        hr_cnode_view nv;
        bool have_node = v.node != NULL && hr_cache_node_get(c, v.node, &nv);
        hr_cns_view nsv;
        hr_pod_ctx cx = ctx_of(c, have_node ? &nv : NULL, cfg, o, &v, v.ns, &nsv);
        hr_pod p = hr_pod_in_context(&v.pod, &cx);
        if (hr_pod_eligibility(&p) != HR_MANAGED)
            continue;
        int64_t r = hr_pod_managed_cpu(&p), cur = hr_pod_current_limit(&p);
        e->q.managed = hr_sadd64(e->q.managed, r);
        e->q.current = hr_sadd64(e->q.current, cur);
        if (qs->n_rc == qs->cap_rc) {
            size_t nc = qs->cap_rc ? qs->cap_rc * 2 : 64;
            int64_t(*more)[2] = realloc(qs->rc, nc * sizeof *more);
            if (more == NULL)
                return hr_err_set(err, HR_E_NOMEM, "snapshot: out of memory");
            qs->rc = more;
            qs->cap_rc = nc;
        }
        qs->rc[qs->n_rc][0] = r;
        qs->rc[qs->n_rc++][1] = cur;
    }
    /* Which of them are below their share: they divide what is free. */
    for (size_t i = 0; i < qs->n_rc; i++)
        if (hr_quota_below_share(cfg, &e->q, qs->rc[i][0], qs->rc[i][1]))
            e->q.raising = hr_sadd64(e->q.raising, qs->rc[i][0]);
    qs->n_rc = 0;
    *out = &e->q;
    return HR_OK;
}

/* Pods of one node, gathered in a first pass under the lock. Nodes hold at
 * most a few hundred pods; the id array grows if a node holds more. */
static hr_status copy_pod(hr_arena *a, const hr_cache *c, const hr_cnode_view *nv,
                          const hr_config *cfg, const hr_nodesnap_opts *o, const hr_cpod_view *v,
                          quotas *qs, hr_rpod *rp, hr_err *err)
{
    memset(rp, 0, sizeof *rp);
    rp->ns = hr_arena_strdup(a, v->ns);
    rp->name = hr_arena_strdup(a, v->name);
    hr_container *ctr = hr_arena_calloc(a, v->pod.n_ctr ? v->pod.n_ctr : 1, sizeof *ctr);
    const char **names = hr_arena_calloc(a, v->pod.n_ctr ? v->pod.n_ctr : 1, sizeof *names);
    if (rp->ns == NULL || rp->name == NULL || ctr == NULL || names == NULL)
        return hr_err_set(err, HR_E_NOMEM, "snapshot: out of memory");
    for (uint32_t i = 0; i < v->pod.n_ctr; i++) {
        ctr[i] = v->pod.ctr[i];
        names[i] = hr_arena_strdup(a, v->ctr_names[i] ? v->ctr_names[i] : "");
        if (names[i] == NULL)
            return hr_err_set(err, HR_E_NOMEM, "snapshot: out of memory");
    }
    rp->pod = v->pod;
    rp->pod.ctr = ctr;
    rp->ctr_names = names;
    rp->resize = v->resize;
    rp->status_hash = v->status_hash;
    rp->status_mark = v->status_mark;

    /* The context the core cannot know from the pod alone. A placeholder
     * node (known only from its pods) has no labels to judge: not excluded.
     * Refused resizes park the pod (the executor fills the table, from
     * the API server's answers and from Infeasible in the pod's status;
     * after a restart or a new term the controller parks the Infeasible
     * pods before the first plan, controller.c). */
    hr_cns_view nsv;
    hr_pod_ctx cx = ctx_of(c, nv, cfg, o, v, rp->ns, &nsv);
    hr_status st = ns_quota(c, cfg, o, v->ns, qs, &cx.quota, err);
    if (st != HR_OK)
        return st;
    rp->pod = hr_pod_in_context(&rp->pod, &cx);
    /* A tenant named by a label points into the cache: the snapshot keeps
     * its own (design §2.9). */
    if (rp->pod.tenant_by_label && (rp->pod.tenant = hr_arena_strdup(a, rp->pod.tenant)) == NULL)
        return hr_err_set(err, HR_E_NOMEM, "snapshot: out of memory");
    /* The group key points into the cache: the snapshot keeps its own. */
    if (v->pod.group != NULL && (rp->pod.group = hr_arena_strdup(a, v->pod.group)) == NULL)
        return hr_err_set(err, HR_E_NOMEM, "snapshot: out of memory");
    /* So does the foreign writer's name (design §4). */
    if (rp->pod.foreign_writer != NULL &&
        (rp->pod.foreign_writer = hr_arena_strdup(a, rp->pod.foreign_writer)) == NULL)
        return hr_err_set(err, HR_E_NOMEM, "snapshot: out of memory");
    return HR_OK;
}

hr_status hr_nodesnap_take(hr_cache *c, const char *name, const hr_nodesnap_opts *o, hr_arena *a,
                           hr_nodesnap *out, hr_err *err)
{
    memset(out, 0, sizeof *out);
    hr_cpod_scratch *scratch = malloc(sizeof *scratch);
    if (scratch == NULL)
        return hr_err_set(err, HR_E_NOMEM, "snapshot: out of memory");

    hr_status st = HR_OK;
    hr_cache_lock(c);
    const hr_config *cfg = hr_cache_config(c, &out->cfg_invalid);
    if (out->cfg_invalid != NULL)
        out->cfg_invalid = hr_arena_strdup(a, out->cfg_invalid);
    hr_config_effective(cfg, o->dry_run, &out->cfg);
    /* The tenant label (design §2.9) outlives the lock: explain names it. */
    const char *tlabel = out->cfg.tenant_label;
    out->cfg.tenant_label = NULL;
    if (tlabel != NULL && (out->cfg.tenant_label = hr_arena_strdup(a, tlabel)) == NULL) {
        hr_cache_unlock(c);
        free(scratch);
        return hr_err_set(err, HR_E_NOMEM, "snapshot: out of memory");
    }

    hr_cnode_view nv;
    bool have_node = hr_cache_node_get(c, name, &nv);
    out->node_present = have_node && nv.present;
    out->node_undecodable = have_node && nv.undecodable;
    out->node.name = hr_arena_strdup(a, name);
    /* The node's settings (design §2.11): its pool's overrides, by the one
     * rule; an unknown node has no labels and gets the top level. */
    const hr_node_pool *pool =
        hr_config_for_node(&out->cfg, out->node_present ? &nv.labels : NULL, &out->cfg);
    out->pool = pool != NULL ? hr_arena_strdup(a, pool->name) : NULL;
    out->n_pools = out->cfg.n_pools;
    if (out->node_present)
        out->node.node = nv.node;
    else
        out->node.node = (hr_node){0};
    /* A pod whose node cannot be read may be on this one (design §6). The
     * node's own undecodable pods are in its list: hr_plan_node sees them. */
    out->pods_nowhere = hr_cache_pods_nowhere(c);
    out->version = hr_cache_node_version(c, name);
    out->node.node.booking_unknown = out->pods_nowhere > 0;

    size_t cap = 256, n;
    uint32_t *ids = NULL;
    quotas qs = {0};
    for (;;) {
        uint32_t *more = realloc(ids, cap * sizeof *ids);
        if (more == NULL) {
            st = hr_err_set(err, HR_E_NOMEM, "snapshot: out of memory");
            goto out;
        }
        ids = more;
        n = hr_cache_node_pods(c, name, ids, cap);
        if (n <= cap)
            break;
        cap = n;
    }
    hr_rpod *pods = hr_arena_calloc(a, n ? n : 1, sizeof *pods);
    out->pod_rv = hr_arena_calloc(a, n ? n : 1, sizeof *out->pod_rv);
    out->pod_uid = hr_arena_calloc(a, n ? n : 1, sizeof *out->pod_uid);
    if (pods == NULL || out->pod_rv == NULL || out->pod_uid == NULL || out->node.name == NULL ||
        (pool != NULL && out->pool == NULL)) {
        st = hr_err_set(err, HR_E_NOMEM, "snapshot: out of memory");
        goto out;
    }
    size_t k = 0;
    for (size_t i = 0; i < n; i++) {
        hr_cpod_view v;
        if (!hr_cache_pod_at(c, ids[i], &v, scratch))
            continue;
        st = copy_pod(a, c, have_node ? &nv : NULL, cfg, o, &v, &qs, &pods[k], err);
        if (st != HR_OK)
            goto out;
        out->pod_rv[k] = v.rv;
        memcpy(out->pod_uid[k], v.uid, 16);
        k++;
    }
    out->node.pods = pods;
    out->node.n = k;
out:
    /* Selectors and lists point into the cache: the reconcile needs only
     * the scalar settings, so nothing dangling leaves the lock. */
    out->cfg.ns_selector = (hr_selector){0};
    out->cfg.excluded_nodes = (hr_selector){0};
    out->cfg.excluded_ns = NULL;
    out->cfg.n_excluded_ns = 0;
    out->cfg.excluded_owners = NULL;
    out->cfg.n_excluded_owners = 0;
    out->cfg.pools = NULL;
    out->cfg.n_pools = 0;
    hr_cache_unlock(c);
    free(ids);
    free(scratch);
    free(qs.v);
    free(qs.scratch);
    free(qs.rc);
    return st;
}
