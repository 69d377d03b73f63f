/*
 * groups.c — the group index (groups.h).
 */
#include "cache/groups.h"

#include <stdlib.h>
#include <string.h>

#include "cache/feed.h"

/* The slot of group gid, NIL when it has none. */
static uint32_t slot_of(const hr_cache *c, uint32_t gid)
{
    return hr_u32map_get(&c->groups.by_key, gid);
}

int hr_cgroups_add(hr_cache *c, uint32_t gid, uint32_t pi)
{
    if (gid == 0)
        return 0;
    cgroups *g = &c->groups;
    uint32_t s = slot_of(c, gid);
    if (s == NIL) {
        if (g->free_n > 0) {
            s = g->free[--g->free_n];
        } else {
            if (g->used == g->cap) {
                uint32_t nc = g->cap ? g->cap * 2 : 16;
                cgroup *ng = realloc(g->recs, (size_t)nc * sizeof *ng);
                if (ng == NULL)
                    return -1;
                g->recs = ng;
                uint32_t *nf = realloc(g->free, (size_t)nc * sizeof *nf);
                if (nf == NULL)
                    return -1;
                g->free = nf;
                g->cap = nc;
            }
            s = g->used++;
        }
        g->recs[s] = (cgroup){gid, 0, 0, NULL};
        if (hr_u32map_put(&g->by_key, gid, s) != 0) {
            g->free[g->free_n++] = s;
            return -1;
        }
        g->n++;
    }
    cgroup *r = &g->recs[s];
    if (r->n == r->cap) {
        uint32_t nc = r->cap ? r->cap * 2 : 4;
        uint32_t *np = realloc(r->pods, (size_t)nc * sizeof *np);
        if (np == NULL) {
            if (r->n == 0)
                hr_cgroups_del(c, gid, pi);
            return -1;
        }
        r->pods = np;
        r->cap = nc;
    }
    r->pods[r->n++] = pi;
    hr_cgroups_mark(c, gid);
    return 0;
}

void hr_cgroups_del(hr_cache *c, uint32_t gid, uint32_t pi)
{
    if (gid == 0)
        return;
    cgroups *g = &c->groups;
    uint32_t s = slot_of(c, gid);
    if (s == NIL)
        return;
    cgroup *r = &g->recs[s];
    for (uint32_t k = 0; k < r->n; k++)
        if (r->pods[k] == pi) {
            r->pods[k] = r->pods[--r->n];
            break;
        }
    if (r->n > 0) {
        hr_cgroups_mark(c, gid);
        return;
    }
    free(r->pods);
    *r = (cgroup){0, 0, 0, NULL};
    hr_u32map_del(&g->by_key, gid);
    g->free[g->free_n++] = s;
    g->n--;
}

void hr_cgroups_mark(hr_cache *c, uint32_t gid)
{
    uint32_t s = slot_of(c, gid);
    if (s == NIL)
        return;
    const cgroup *r = &c->groups.recs[s];
    for (uint32_t k = 0; k < r->n; k++)
        hr_cfeed_mark(c, (*PA(c, r->pods[k])).node);
}

void hr_cgroups_free(hr_cache *c)
{
    cgroups *g = &c->groups;
    for (uint32_t s = 0; s < g->used; s++)
        free(g->recs[s].pods);
    free(g->recs);
    free(g->free);
    hr_u32map_free(&g->by_key);
    *g = (cgroups){0};
}

size_t hr_cgroups_bytes(const hr_cache *c)
{
    const cgroups *g = &c->groups;
    size_t b = (size_t)g->cap * (sizeof *g->recs + sizeof *g->free) + hr_u32map_bytes(&g->by_key);
    for (uint32_t s = 0; s < g->used; s++)
        b += (size_t)g->recs[s].cap * sizeof *g->recs[s].pods;
    return b;
}

size_t hr_cgroups_pods(const hr_cache *c, const char *key, uint32_t *ids, size_t cap)
{
    uint32_t gid = hr_intern_find(&c->str, key, strlen(key));
    uint32_t s = gid ? slot_of(c, gid) : NIL;
    if (s == NIL)
        return 0;
    const cgroup *r = &c->groups.recs[s];
    for (uint32_t k = 0; k < r->n && k < cap; k++)
        ids[k] = r->pods[k];
    return r->n;
}

size_t hr_cgroups_count(const hr_cache *c)
{
    return c->groups.n;
}
