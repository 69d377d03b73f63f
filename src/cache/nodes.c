/*
 * nodes.c — the node store: one record per node in a slot table found by
 * interned name (cache_int.h), with its labels, allocatable CPU, the
 * conditions the gates read, and the head of its pod list.
 *
 * A node can be known before the Node object is: a pod bound to it makes a
 * placeholder (present false), so the per-node index never waits for the
 * node watch. A Node object that cannot be decoded becomes such an unknown
 * node too, marked undecodable and kept until it decodes or is deleted. A placeholder nobody points to any more is collected when the
 * change feed is drained (feed.c). Heartbeats that move only condition
 * timestamps change nothing kept and report nothing.
 */
#include "cache/nodes.h"

#include <stdlib.h>
#include <string.h>

#include "cache/feed.h"
#include "cache/store.h"

uint32_t hr_cnodes_slot(hr_cache *c, uint32_t name)
{
    uint32_t i = hr_u32map_get(&c->nodes.by_name, name);
    if (i != NIL) {
        hr_intern_unref(&c->str, name);
        return i;
    }
    i = hr_cslots_take(&c->nodes, sizeof(cnode), name);
    if (i == NIL) {
        hr_intern_unref(&c->str, name);
        return NIL;
    }
    *node_at(c, i) = (cnode){name, NIL, 0, 0, 0, 0, NULL, 0, 0, 0};
    return i;
}

uint32_t hr_cnodes_find(const hr_cache *c, const char *name)
{
    uint32_t id = name ? hr_intern_find(&c->str, name, strlen(name)) : 0;
    return id ? hr_u32map_get(&c->nodes.by_name, id) : NIL;
}

void hr_cnodes_gc(hr_cache *c, uint32_t i)
{
    cnode *n = node_at(c, i);
    if (!n->name || (n->flags & (NF_PRESENT | NF_DIRTY | NF_UNDECODABLE)) || n->n_pods)
        return;
    uint32_t name = n->name;
    free(n->labels);
    hr_cslots_give(&c->nodes, sizeof(cnode), i);
    hr_intern_unref(&c->str, name);
}

static void node_clear(hr_cache *c, cnode *n)
{
    hr_cstore_labels_free(c, n->labels, n->n_labels);
    n->labels = NULL;
    n->n_labels = 0;
    n->flags &= NF_DIRTY;
    n->allocatable = 0;
    n->rv = 0;
}

/* The slot of node NAME, made when new: what put and undecodable share. */
static hr_status node_slot_named(hr_cache *c, const char *name, uint32_t *out, hr_err *err)
{
    uint32_t id = hr_cstore_intern(c, name);
    if (!id)
        return hr_err_set(err, HR_E_INPUT, "node without a name");
    if (id == UINT32_MAX)
        return hr_err_set(err, HR_E_NOMEM, "node %s: out of memory", name);
    *out = hr_cnodes_slot(c, id);
    if (*out == NIL)
        return hr_err_set(err, HR_E_NOMEM, "node %s: out of memory", name);
    return HR_OK;
}

hr_status hr_cnodes_put(hr_cache *c, const hr_knode *k, hr_err *err)
{
    const char *name = k->meta.name;
    uint32_t i;
    hr_status st = node_slot_named(c, name, &i, err);
    if (st != HR_OK)
        return st;
    cnode *n = node_at(c, i);
    const char **kv;
    if (hr_cstore_labels(c, &k->meta.labels, &kv) != 0)
        return hr_err_set(err, HR_E_NOMEM, "node %s: out of memory", name);
    uint16_t flags = NF_PRESENT;
    flags |= k->has_allocatable ? NF_HAS_ALLOC : 0;
    flags |= k->ready ? NF_READY : 0;
    flags |= k->node.disk_pressure ? NF_DISK : 0;
    flags |= k->node.pid_pressure ? NF_PID : 0;
    flags |= k->windows ? NF_WINDOWS : 0;
    flags |= k->pod_resize ? NF_POD_RESIZE : 0;
    bool was = (n->flags & NF_PRESENT) != 0;
    n->rv = hr_cstore_parse_rv(k->meta.resource_version);
    n->mark = c->epoch[HR_CK_NODE];
    if (was && (n->flags & ~NF_DIRTY) == flags && n->allocatable == k->node.allocatable &&
        hr_cstore_labels_equal(n->labels, n->n_labels, kv, k->meta.labels.n)) {
        /* Heartbeats: conditions' timestamps moved, nothing we keep. */
        hr_cstore_labels_free(c, kv, k->meta.labels.n);
        return HR_OK;
    }
    hr_cstore_labels_free(c, n->labels, n->n_labels);
    n->labels = kv;
    n->n_labels = k->meta.labels.n;
    n->flags = (uint16_t)((n->flags & NF_DIRTY) | flags);
    n->allocatable = k->node.allocatable;
    hr_cfeed_mark(c, i);
    hr_cstore_report(c, HR_CK_NODE, was ? HR_CC_UPDATED : HR_CC_ADDED, "", name);
    return HR_OK;
}

hr_status hr_cnodes_undecodable(hr_cache *c, const char *name, const char *rv, hr_err *err)
{
    uint32_t i;
    hr_status st = node_slot_named(c, name, &i, err);
    if (st != HR_OK)
        return st;
    cnode *n = node_at(c, i);
    n->mark = c->epoch[HR_CK_NODE];
    n->rv = hr_cstore_parse_rv(rv);
    if (n->flags & NF_UNDECODABLE)
        return HR_OK; /* still unreadable: nothing new */
    /* What we knew of it no longer holds: the node is unknown (no write in
     * either direction, design §6) until it decodes or is deleted. */
    bool was = (n->flags & NF_PRESENT) != 0;
    node_clear(c, n);
    n->rv = hr_cstore_parse_rv(rv);
    n->flags |= NF_UNDECODABLE;
    hr_cfeed_mark(c, i);
    hr_cstore_report(c, HR_CK_NODE, was ? HR_CC_UPDATED : HR_CC_ADDED, "", name);
    return HR_OK;
}

static void node_delete(hr_cache *c, uint32_t i)
{
    cnode *n = node_at(c, i);
    if (!(n->flags & (NF_PRESENT | NF_UNDECODABLE)))
        return;
    node_clear(c, n);
    hr_cfeed_mark(c, i);
    hr_cstore_report(c, HR_CK_NODE, HR_CC_DELETED, "", hr_intern_str(&c->str, n->name));
}

/* ---------------------------------------------------------- readers */

static void fill_node_view(const hr_cache *c, uint32_t i, hr_cnode_view *v)
{
    const cnode *n = node_at(c, i);
    memset(v, 0, sizeof *v);
    v->name = hr_intern_str(&c->str, n->name);
    v->present = (n->flags & NF_PRESENT) != 0;
    v->undecodable = (n->flags & NF_UNDECODABLE) != 0;
    v->node.allocatable = n->allocatable;
    v->node.known = v->present;
    v->node.disk_pressure = (n->flags & NF_DISK) != 0;
    v->node.pid_pressure = (n->flags & NF_PID) != 0;
    v->has_allocatable = (n->flags & NF_HAS_ALLOC) != 0;
    v->ready = (n->flags & NF_READY) != 0;
    v->windows = (n->flags & NF_WINDOWS) != 0;
    v->pod_resize = (n->flags & NF_POD_RESIZE) != 0 && c->server_pod_resize;
    v->rv = n->rv;
    v->labels = (hr_labels){(const char *const *)n->labels, n->n_labels};
    v->n_pods = n->n_pods;
}

bool hr_cnodes_get(const hr_cache *c, const char *name, hr_cnode_view *out)
{
    uint32_t i = hr_cnodes_find(c, name);
    if (i == NIL)
        return false;
    fill_node_view(c, i, out);
    return true;
}

bool hr_cnodes_next(const hr_cache *c, uint32_t *iter, hr_cnode_view *out)
{
    for (uint32_t i = *iter; i < c->nodes.used; i++) {
        if (node_at(c, i)->name) {
            fill_node_view(c, i, out);
            *iter = i + 1;
            return true;
        }
    }
    *iter = c->nodes.used;
    return false;
}

void hr_cnodes_mark_settings(hr_cache *c, const hr_config *old, const hr_config *new)
{
    for (uint32_t i = 0; i < c->nodes.used; i++) {
        const cnode *n = node_at(c, i);
        if (!n->name)
            continue;
        /* A placeholder has no labels: the top level, as nodesnap reads it. */
        hr_labels l = {(const char *const *)n->labels, n->n_labels};
        const hr_labels *lp = (n->flags & NF_PRESENT) ? &l : NULL;
        hr_config a, b;
        (void)hr_config_for_node(old, lp, &a);
        (void)hr_config_for_node(new, lp, &b);
        if (!hr_config_node_same(&a, &b))
            hr_cfeed_mark(c, i);
    }
}

void hr_cnodes_pool_counts(const hr_cache *c, const hr_config *cfg, int64_t *counts)
{
    for (uint32_t p = 0; p < cfg->n_pools; p++)
        counts[p] = 0;
    for (uint32_t i = 0; i < c->nodes.used; i++) {
        const cnode *n = node_at(c, i);
        if (!n->name || !(n->flags & NF_PRESENT))
            continue;
        hr_labels l = {(const char *const *)n->labels, n->n_labels};
        int p = hr_config_pool_index(cfg, &l);
        if (p >= 0)
            counts[p]++;
    }
}

/* ---------------------------------------------------------- the store */

static uint32_t nodes_find(const hr_cache *c, hr_ckind k, const char *ns, const char *name)
{
    (void)k, (void)ns;
    return hr_cnodes_find(c, name);
}

static uint32_t nodes_end(const hr_cache *c, hr_ckind k)
{
    (void)k;
    return c->nodes.used;
}

/* Placeholders are not objects of the node watch: a relist never sweeps
 * them (they go when their last pod does). */
static uint32_t *nodes_mark(hr_cache *c, hr_ckind k, uint32_t i)
{
    (void)k;
    cnode *n = node_at(c, i);
    return n->name && (n->flags & (NF_PRESENT | NF_UNDECODABLE)) ? &n->mark : NULL;
}

static bool nodes_remove(hr_cache *c, hr_ckind k, uint32_t i)
{
    (void)k;
    node_delete(c, i);
    return false;
}

const cstore hr_cnodes_store = {nodes_find, nodes_end, nodes_mark, nodes_remove};
