/*
 * groups.c — the groups of design §2.10 in the reconcile (groups.h).
 */
#include "groups.h"

#include <stdlib.h>
#include <string.h>

#include "controller/backoff.h"
#include "util/strmap.h"

/* Another member's node, snapshotted and planned: its snapshot and views
 * are read only (they may be the memo's, shared); its plans, limits and
 * node plan are this reconcile's own copies, which hr_group_apply writes. */
typedef struct other_node {
    const hr_nodesnap *s;
    const hr_pod *views;
    hr_pod_plan *plans;
    int64_t *limits;
    hr_node_plan np;
    hr_memo_node *held; /* the entry it came from (the memo's or its own),
                           given back when the group is done */
} other_node;

static bool eligible(const hr_pod *p, const hr_pod_plan *pp, const char *key)
{
    return p->group != NULL && strcmp(p->group, key) == 0 && pp->reason == HR_MANAGED &&
           pp->gate != HR_GATE_NODE_UNKNOWN && pp->request > 0;
}

/* The names of the nodes, other than self, where the group has members:
 * one pass over the members under the cache lock, duplicates dropped by a
 * map (the group is at most spec.maxGroupSize, but a node list built by
 * comparing every name with every other was O(members x nodes)). */
static hr_status member_nodes(hr_groups *g, const char *key, const char *self, const char ***out,
                              uint64_t **versions, size_t *n_out, hr_err *err)
{
    *out = NULL;
    *versions = NULL;
    *n_out = 0;
    hr_cpod_scratch *scratch = malloc(sizeof *scratch);
    uint32_t *ids = NULL;
    hr_strmap seen;
    hr_strmap_init(&seen);
    if (scratch == NULL)
        return hr_err_set(err, HR_E_NOMEM, "group %s: out of memory", key);
    hr_status st = HR_OK;
    hr_cache_lock(g->cache);
    size_t cap = 64, n;
    for (;;) {
        uint32_t *more = realloc(ids, cap * sizeof *ids);
        if (more == NULL) {
            st = hr_err_set(err, HR_E_NOMEM, "group %s: out of memory", key);
            goto out;
        }
        ids = more;
        n = hr_cache_group_pods(g->cache, key, ids, cap);
        if (n <= cap)
            break;
        cap = n;
    }
    const char **names = hr_arena_calloc(g->a, n ? n : 1, sizeof *names);
    uint64_t *vers = hr_arena_calloc(g->a, n ? n : 1, sizeof *vers);
    if (names == NULL || vers == NULL) {
        st = hr_err_set(err, HR_E_NOMEM, "group %s: out of memory", key);
        goto out;
    }
    size_t k = 0;
    for (size_t i = 0; i < n; i++) {
        hr_cpod_view v;
        if (!hr_cache_pod_at(g->cache, ids[i], &v, scratch) || v.node == NULL ||
            strcmp(v.node, self) == 0 || hr_strmap_get(&seen, v.node) != NULL)
            continue;
        names[k] = hr_arena_strdup(g->a, v.node);
        if (names[k] == NULL || !hr_strmap_put(&seen, v.node, k)) {
            st = hr_err_set(err, HR_E_NOMEM, "group %s: out of memory", key);
            goto out;
        }
        /* Read in the same hold as the member list: a memo entry with
         * this version is the node as it is now (nodememo.h). */
        vers[k] = hr_cache_node_version(g->cache, v.node);
        k++;
    }
    *out = names;
    *versions = vers;
    *n_out = k;
out:
    hr_cache_unlock(g->cache);
    hr_strmap_free(&seen);
    free(ids);
    free(scratch);
    return st;
}

/* Snapshot node name into e's arena and plan it. */
static hr_status plan_into(hr_groups *g, const char *name, hr_memo_node *e, hr_err *err)
{
    hr_status st = hr_nodesnap_take(g->cache, name, g->opts, &e->a, &e->s, err);
    if (st != HR_OK)
        return st;
    size_t n = e->s.node.n;
    e->n_ctr = 0;
    for (size_t i = 0; i < n; i++)
        e->n_ctr += e->s.node.pods[i].pod.n_ctr;
    e->views = hr_arena_calloc(&e->a, n ? n : 1, sizeof *e->views);
    e->plans = hr_arena_calloc(&e->a, n ? n : 1, sizeof *e->plans);
    e->limits = hr_arena_calloc(&e->a, e->n_ctr ? e->n_ctr : 1, sizeof *e->limits);
    if (e->views == NULL || e->plans == NULL || e->limits == NULL)
        return hr_err_set(err, HR_E_NOMEM, "node %s: out of memory", name);
    for (size_t i = 0; i < n; i++)
        e->views[i] = e->s.node.pods[i].pod;
    /* The member's own node under its own settings (its pool's, design
     * §2.11: the group's nodes may sit in different pools). */
    e->np = hr_plan_node(&e->s.cfg, &e->s.node.node, e->views, n, e->plans, e->limits);
    return HR_OK;
}

/* Another member's node: the memo's plan when it still holds (the node's
 * version unchanged, nodememo.h), else planned now (and kept when there is
 * a memo). The plans, limits and node plan are copied into the reconcile's
 * arena: hr_group_apply rewrites them, and an entry is read only. */
static hr_status plan_other(hr_groups *g, const char *name, uint64_t version, other_node *o,
                            hr_err *err)
{
    *o = (other_node){0};
    uint64_t changes = g->opts->backoff != NULL ? hr_backoff_changes(g->opts->backoff) : 0;
    hr_memo_node *e =
        g->memo != NULL ? hr_nodememo_get(g->memo, name, version, changes, g->opts->now_ms) : NULL;
    if (e == NULL) {
        /* The count is read before the snapshot: a park between the two
         * makes the entry look older than it is, never newer. */
        if ((e = hr_nodememo_entry()) == NULL)
            return hr_err_set(err, HR_E_NOMEM, "node %s: out of memory", name);
        e->backoff_changes = changes;
        e->planned_ms = g->opts->now_ms;
        hr_status st = plan_into(g, name, e, err);
        if (st != HR_OK) {
            hr_nodememo_release(NULL, e);
            return st;
        }
        if (g->memo != NULL)
            hr_nodememo_put(g->memo, e);
        g->planned++;
    }
    o->held = e;
    o->s = &e->s;
    o->views = e->views;
    o->np = e->np;
    size_t n = e->s.node.n;
    o->plans = hr_arena_alloc(g->a, (n ? n : 1) * sizeof *o->plans);
    o->limits = hr_arena_alloc(g->a, (e->n_ctr ? e->n_ctr : 1) * sizeof *o->limits);
    if (o->plans == NULL || o->limits == NULL)
        return hr_err_set(err, HR_E_NOMEM, "node %s: out of memory", name);
    memcpy(o->plans, e->plans, n * sizeof *o->plans);
    memcpy(o->limits, e->limits, e->n_ctr * sizeof *o->limits);
    return HR_OK;
}

static void release_others(hr_groups *g, other_node *on, size_t n)
{
    for (size_t k = 0; k < n; k++)
        hr_nodememo_release(g->memo, on[k].held);
}

/* One group with a member on rn: plan it and write this node's members. */
static hr_status plan_group(hr_groups *g, const char *key, const hr_rnode *rn, hr_reconcile *r,
                            const char **names, size_t n_names, other_node *on, hr_err *err)
{
    size_t cap = 0;
    for (size_t i = 0; i < rn->n; i++)
        cap += eligible(&rn->pods[i].pod, &r->pods[i], key);
    for (size_t k = 0; k < n_names; k++)
        for (size_t i = 0; i < on[k].s->node.n; i++)
            cap += eligible(&on[k].views[i], &on[k].plans[i], key);
    hr_group_slot *slots = hr_arena_calloc(g->a, cap ? cap : 1, sizeof *slots);
    size_t *self_idx = hr_arena_calloc(g->a, cap ? cap : 1, sizeof *self_idx);
    const char **slot_node = hr_arena_calloc(g->a, cap ? cap : 1, sizeof *slot_node);
    size_t *slot_k = hr_arena_calloc(g->a, cap ? cap : 1, sizeof *slot_k);
    bool *queued = hr_arena_calloc(g->a, n_names ? n_names : 1, sizeof *queued);
    hr_group_member *m = hr_arena_calloc(g->a, cap ? cap : 1, sizeof *m);
    hr_group_member_out *o = hr_arena_calloc(g->a, cap ? cap : 1, sizeof *o);
    int64_t **lp = hr_arena_calloc(g->a, cap ? cap : 1, sizeof *lp);
    if (!slots || !self_idx || !slot_node || !slot_k || !queued || !m || !o || !lp)
        return hr_err_set(err, HR_E_NOMEM, "group %s: out of memory", key);
    size_t n = 0;
    for (size_t i = 0; i < rn->n; i++) {
        const hr_rpod *rp = &rn->pods[i];
        if (!eligible(&rp->pod, &r->pods[i], key))
            continue;
        self_idx[n] = i;
        slot_node[n] = NULL; /* this node */
        slots[n++] = (hr_group_slot){&rp->pod, &r->pods[i], &r->limits[r->pods[i].ctr_off],
                                     &r->plan, &rn->node,   rp->ns,
                                     rp->name, HR_NONE,     g->cfg};
    }
    for (size_t k = 0; k < n_names; k++) {
        other_node *x = &on[k];
        for (size_t i = 0; i < x->s->node.n; i++) {
            const hr_rpod *rp = &x->s->node.pods[i];
            if (!eligible(&x->views[i], &x->plans[i], key))
                continue;
            slot_node[n] = names[k];
            slot_k[n] = k;
            slots[n++] =
                (hr_group_slot){&x->views[i], &x->plans[i],     &x->limits[x->plans[i].ctr_off],
                                &x->np,       &x->s->node.node, rp->ns,
                                rp->name,     HR_NONE,          &x->s->cfg};
        }
    }
    hr_group_info *gi = &g->info[g->n_info];
    *gi = (hr_group_info){key, n, {0}, NULL, NULL, NULL};
    hr_group_apply(g->cfg, slots, n, m, o, lp, &gi->res);
    /* Copies: another node's names belong to its memo entry, given back
     * when this group is done. */
    gi->binding_ns = hr_arena_strdup(g->a, slots[gi->res.binding].ns);
    gi->binding_name = hr_arena_strdup(g->a, slots[gi->res.binding].name);
    if (gi->binding_ns == NULL || gi->binding_name == NULL)
        return hr_err_set(err, HR_E_NOMEM, "group %s: out of memory", key);
    gi->binding_node = slot_node[gi->res.binding] ? slot_node[gi->res.binding] : rn->name;
    for (size_t j = 0; j < n; j++) {
        if (slot_node[j] == NULL) {
            g->pod_group[self_idx[j]] = (int32_t)g->n_info;
            g->own_target[self_idx[j]] = slots[j].own_target;
        } else if (slots[j].plan->write && !queued[slot_k[j]]) {
            queued[slot_k[j]] = true;
            g->requeue[g->n_requeue++] = slot_node[j];
        }
    }
    g->n_info++;
    return HR_OK;
}

static hr_status one_group(hr_groups *g, const char *key, const hr_rnode *rn, hr_reconcile *r,
                           hr_err *err)
{
    const char **names;
    uint64_t *versions;
    size_t n_names;
    hr_status st = member_nodes(g, key, rn->name, &names, &versions, &n_names, err);
    if (st != HR_OK)
        return st;
    other_node *on = hr_arena_calloc(g->a, n_names ? n_names : 1, sizeof *on);
    if (on == NULL)
        return hr_err_set(err, HR_E_NOMEM, "group %s: out of memory", key);
    size_t k = 0;
    for (; k < n_names && st == HR_OK; k++)
        st = plan_other(g, names[k], versions[k], &on[k], err);
    if (st == HR_OK)
        st = plan_group(g, key, rn, r, names, n_names, on, err);
    release_others(g, on, k);
    return st;
}

hr_status hr_groups_apply(void *ud, const hr_rnode *rn, hr_reconcile *r, hr_err *err)
{
    hr_groups *g = ud;
    g->n_requeue = 0;
    g->n_info = 0;
    size_t n = rn->n ? rn->n : 1;
    g->pod_group = hr_arena_calloc(g->a, n, sizeof *g->pod_group);
    g->own_target = hr_arena_calloc(g->a, n, sizeof *g->own_target);
    g->info = hr_arena_calloc(g->a, n, sizeof *g->info);
    /* Every other member's node at most once per group: bounded by the
     * group's members, which the index counts; grown per group below. */
    g->requeue = NULL;
    if (!g->pod_group || !g->own_target || !g->info)
        return hr_err_set(err, HR_E_NOMEM, "node %s: out of memory", rn->name);
    for (size_t i = 0; i < rn->n; i++) {
        g->pod_group[i] = -1;
        g->own_target[i] = HR_NONE;
    }
    size_t room = 0;
    for (size_t i = 0; i < rn->n; i++) {
        const char *key = rn->pods[i].pod.group;
        if (key == NULL || !eligible(&rn->pods[i].pod, &r->pods[i], key) || g->pod_group[i] >= 0)
            continue;
        /* Room for every node of this group in the requeue list. */
        hr_cache_lock(g->cache);
        size_t members = hr_cache_group_pods(g->cache, key, NULL, 0);
        hr_cache_unlock(g->cache);
        const char **more = hr_arena_calloc(g->a, room + members + 1, sizeof *more);
        if (more == NULL)
            return hr_err_set(err, HR_E_NOMEM, "node %s: out of memory", rn->name);
        if (g->n_requeue)
            memcpy(more, g->requeue, g->n_requeue * sizeof *more);
        g->requeue = more;
        room += members + 1;
        hr_status st = one_group(g, key, rn, r, err);
        if (st != HR_OK)
            return st;
    }
    return HR_OK;
}
