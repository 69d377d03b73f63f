/*
 * feed.c — the change feed: the set of nodes whose plan may have changed
 * since the controller last looked (design §5's enqueue rules).
 *
 * Why a set of nodes and not a log of events: the controller plans a node
 * at a time, so ten changes on one node are one piece of work. A node is
 * in the set once (NF_DIRTY), in the order it became dirty; when even the
 * set cannot grow, or a change touches every pod (a LimitRange, the
 * config), the cache remembers "all nodes" instead. Draining also collects
 * the placeholder nodes nobody points to any more.
 */
#include "cache/feed.h"

#include <stdlib.h>

#include "cache/nodes.h"

void hr_cfeed_all(hr_cache *c)
{
    c->all_dirty = true;
    c->world_version = ++c->clock;
}

uint64_t hr_cfeed_version(const hr_cache *c, uint32_t node)
{
    uint64_t v = node != NIL ? node_at(c, node)->version : 0;
    return v > c->world_version ? v : c->world_version;
}

void hr_cfeed_mark(hr_cache *c, uint32_t node)
{
    if (node == NIL)
        return;
    cnode *n = node_at(c, node);
    n->version = ++c->clock;
    if (n->flags & NF_DIRTY)
        return;
    if (c->n_dirty >= c->dirty_cap) {
        uint32_t nc = c->dirty_cap ? c->dirty_cap * 2 : 64;
        uint32_t *d = realloc(c->dirty, (size_t)nc * sizeof *d);
        if (!d) {
            /* Cannot remember this one node: remember everything. */
            hr_cfeed_all(c);
            return;
        }
        c->dirty = d;
        c->dirty_cap = nc;
    }
    n->flags |= NF_DIRTY;
    c->dirty[c->n_dirty++] = node;
    if (c->kick)
        c->kick(c->kick_ud);
}

size_t hr_cfeed_dirty_count(const hr_cache *c)
{
    if (!c->all_dirty)
        return c->n_dirty;
    size_t n = 0;
    for (uint32_t i = 0; i < c->nodes.used; i++)
        n += node_at(c, i)->name != 0;
    return n;
}

size_t hr_cfeed_drain(hr_cache *c, void (*fn)(void *ud, const char *node), void *ud)
{
    size_t n = 0;
    if (c->all_dirty) {
        for (uint32_t i = 0; i < c->nodes.used; i++) {
            cnode *d = node_at(c, i);
            if (!d->name)
                continue;
            if (fn)
                fn(ud, hr_intern_str(&c->str, d->name));
            d->flags &= (uint16_t)~NF_DIRTY;
            n++;
        }
    } else {
        for (uint32_t k = 0; k < c->n_dirty; k++) {
            cnode *d = node_at(c, c->dirty[k]);
            if (fn)
                fn(ud, hr_intern_str(&c->str, d->name));
            d->flags &= (uint16_t)~NF_DIRTY;
            n++;
        }
    }
    for (uint32_t k = 0; k < c->n_dirty; k++)
        hr_cnodes_gc(c, c->dirty[k]);
    if (c->all_dirty)
        for (uint32_t i = 0; i < c->nodes.used; i++)
            hr_cnodes_gc(c, i);
    c->n_dirty = 0;
    c->all_dirty = false;
    return n;
}
