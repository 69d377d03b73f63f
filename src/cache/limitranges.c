/*
 * limitranges.c — the LimitRange store: per object, its CPU bounds folded
 * over spec.limits[] (the decoder does the folding; design §3.4), as rows
 * of a small table (store.c writes the put, delete and sweep of rows).
 *
 * Why every node gets dirty on a change: a LimitRange bounds every pod of
 * its namespace, and those pods may sit on any node; LimitRanges change
 * rarely, so recomputing everything is cheaper than an index.
 */
#include "cache/limitranges.h"

#include <stddef.h>
#include <string.h>

#include "cache/store.h"

_Static_assert(offsetof(clr, bounds) == sizeof(crow), "a row's payload follows its header");

hr_status hr_clrs_put(hr_cache *c, const hr_klimitrange *l, hr_err *err)
{
    return hr_crows_put(c, HR_CK_LIMITRANGE, &l->meta, &l->bounds, sizeof l->bounds, err);
}

hr_limit_bounds hr_clrs_bounds(const hr_cache *c, const char *ns)
{
    hr_limit_bounds b = HR_LIMIT_BOUNDS_NONE;
    uint32_t id = hr_intern_find(&c->str, ns, strlen(ns));
    if (!id)
        return b;
    for (uint32_t i = 0; i < c->lrs.n; i++) {
        const clr *l = (const clr *)row_at(&c->lrs, i);
        if (l->h.ns == id)
            hr_limit_bounds_merge(&b, &l->bounds);
    }
    return b;
}

size_t hr_clrs_count(const hr_cache *c)
{
    return c->lrs.n;
}
