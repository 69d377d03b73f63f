/*
 * store.c — the machinery every kind of the cache shares, written once.
 *
 * Each of the seven kinds (pods, nodes, namespaces, LimitRanges,
 * ResourceQuotas, VerticalPodAutoscalers, the config) is a store: a cstore (cache_int.h) that finds
 * an object by (namespace, name), tells the relist mark of a slot and
 * removes a slot. Over those four operations this file implements, for
 * every kind alike:
 *  - delete (a missing object is not an error);
 *  - touch: "seen in this relist, keep what you have";
 *  - relist by difference: relist_begin opens an epoch, every put and
 *    touch marks its object with it, relist_end removes what is unmarked.
 * and it holds what the records share: change reports, resourceVersion and
 * uid parsing, interned label sets, the slot table (nodes, namespaces) and
 * the row table (LimitRanges, ResourceQuotas and VPAs, whose whole put is
 * written here: they differ only in their payload, whether a change
 * dirties every node and what a payload holds).
 *
 * Everything here runs with the cache lock held: cache.c, where every
 * entry point of cache.h is, takes it.
 *
 * Why here and not per kind: the sweep, the delete and the touch were six
 * copies of one switch, and a seventh kind would have been a seventh copy.
 */
#include "cache/store.h"

#include <stdlib.h>
#include <string.h>

#include "cache/cfgstore.h"
#include "cache/feed.h"
#include "cache/namespaces.h"
#include "cache/nodes.h"
#include "cache/pods.h"

/* ---------------------------------------------------------- changes */

void hr_cstore_report(hr_cache *c, hr_ckind k, hr_cchange what, const char *ns, const char *name)
{
    c->changes[k]++;
    if (what == HR_CC_DELETED)
        c->removals++;
    if (c->obs)
        c->obs(c->obs_ud, k, what, ns, name);
    if (c->kick)
        c->kick(c->kick_ud);
}

/* ---------------------------------------------------------- metadata */

uint64_t hr_cstore_parse_rv(const char *s)
{
    /* etcd-backed API servers hand out decimal revisions, and since
     * Kubernetes 1.35 they are documented as comparable integers; anything
     * else reads as 0 ("unknown, never newer"). */
    uint64_t v = 0;
    if (!s || !*s)
        return 0;
    for (; *s; s++) {
        if (*s < '0' || *s > '9' || v > (UINT64_MAX - 9) / 10)
            return 0;
        v = v * 10 + (uint64_t)(*s - '0');
    }
    return v;
}

static int hexval(char ch)
{
    if (ch >= '0' && ch <= '9')
        return ch - '0';
    if (ch >= 'a' && ch <= 'f')
        return ch - 'a' + 10;
    if (ch >= 'A' && ch <= 'F')
        return ch - 'A' + 10;
    return -1;
}

void hr_cstore_parse_uid(const char *s, uint8_t out[16])
{
    uint8_t u[16];
    size_t k = 0;
    memset(out, 0, 16);
    if (!s || strlen(s) != 36)
        return;
    for (size_t i = 0; i < 36;) {
        if (i == 8 || i == 13 || i == 18 || i == 23) {
            if (s[i] != '-')
                return;
            i++;
            continue;
        }
        int h = hexval(s[i]), l = hexval(s[i + 1]);
        if (h < 0 || l < 0)
            return;
        u[k++] = (uint8_t)(h << 4 | l);
        i += 2;
    }
    memcpy(out, u, 16);
}

uint32_t hr_cstore_intern(hr_cache *c, const char *s)
{
    return s ? hr_intern_get(&c->str, s, strlen(s)) : 0;
}

/* ---------------------------------------------------------- labels */

int hr_cstore_labels(hr_cache *c, const hr_labels *l, const char ***out)
{
    *out = NULL;
    if (!l->n)
        return 0;
    const char **kv = malloc((size_t)l->n * 2 * sizeof *kv);
    if (!kv)
        return -1;
    for (uint32_t i = 0; i < 2 * l->n; i++) {
        const char *s = l->kv[i] ? l->kv[i] : "";
        uint32_t id = hr_intern_get(&c->str, s, strlen(s));
        if (id == UINT32_MAX) {
            for (uint32_t j = 0; j < i; j++)
                hr_intern_unref(&c->str, hr_intern_id_of(kv[j]));
            free(kv);
            return -1;
        }
        kv[i] = hr_intern_str(&c->str, id);
    }
    *out = kv;
    return 0;
}

void hr_cstore_labels_free(hr_cache *c, const char **kv, uint32_t n)
{
    if (!kv)
        return;
    for (uint32_t i = 0; i < 2 * n; i++)
        hr_intern_unref(&c->str, hr_intern_id_of(kv[i]));
    free(kv);
}

bool hr_cstore_labels_equal(const char **a, uint32_t na, const char **b, uint32_t nb)
{
    if (na != nb)
        return false;
    /* Interned: equal strings are the same pointer. */
    return na == 0 || memcmp(a, b, (size_t)na * 2 * sizeof *a) == 0;
}

/* ---------------------------------------------------------- slot tables */

uint32_t hr_cslots_take(cslots *t, size_t size, uint32_t name)
{
    uint32_t i;
    if (t->free_n) {
        i = t->free[--t->free_n];
    } else {
        if (t->used >= t->cap) {
            uint32_t nc = t->cap ? t->cap * 2 : 64;
            void *p = realloc(t->recs, (size_t)nc * size);
            uint32_t *f = realloc(t->free, (size_t)nc * sizeof *f);
            if (p)
                t->recs = p;
            if (f)
                t->free = f;
            if (!p || !f)
                return NIL;
            t->cap = nc;
        }
        i = t->used++;
    }
    if (hr_u32map_put(&t->by_name, name, i) != 0) {
        t->free[t->free_n++] = i;
        return NIL;
    }
    return i;
}

void hr_cslots_give(cslots *t, size_t size, uint32_t i)
{
    uint8_t *r = (uint8_t *)t->recs + (size_t)i * size;
    uint32_t name;
    memcpy(&name, r, sizeof name); /* every record starts with its name */
    hr_u32map_del(&t->by_name, name);
    memset(r, 0, size);
    t->free[t->free_n++] = i; /* cap ≥ slots, so it fits */
}

void hr_cslots_free(cslots *t)
{
    free(t->recs);
    free(t->free);
    hr_u32map_free(&t->by_name);
    memset(t, 0, sizeof *t);
}

/* ---------------------------------------------------------- row tables */

crows *hr_crows_of(hr_cache *c, hr_ckind k)
{
    return k == HR_CK_LIMITRANGE ? &c->lrs : k == HR_CK_QUOTA ? &c->quotas : &c->vpas;
}

static uint32_t rows_find_id(const crows *t, uint32_t ns, const char *name)
{
    for (uint32_t i = 0; i < t->n; i++) {
        const crow *r = row_at(t, i);
        if (r->ns == ns && strcmp(r->name, name) == 0)
            return i;
    }
    return NIL;
}

hr_status hr_crows_put(hr_cache *c, hr_ckind k, const hr_kmeta *m, const void *payload, size_t len,
                       hr_err *err)
{
    crows *t = hr_crows_of(c, k);
    const char *what = t->what;
    const char *ns = m->ns, *name = m->name;
    if (!ns[0] || !name[0])
        return hr_err_set(err, HR_E_INPUT, "%s without namespace or name", what);
    uint32_t nsid = hr_cstore_intern(c, ns);
    if (nsid == UINT32_MAX)
        return hr_err_set(err, HR_E_NOMEM, "%s %s/%s: out of memory", what, ns, name);
    uint32_t i = rows_find_id(t, nsid, name);
    if (i != NIL) {
        crow *r = row_at(t, i);
        hr_intern_unref(&c->str, nsid);
        r->rv = hr_cstore_parse_rv(m->resource_version);
        r->mark = c->epoch[k];
        if (memcmp(r + 1, payload, len) == 0) {
            if (t->release)
                t->release(c, payload); /* the row holds its own */
            return HR_OK;
        }
        if (t->release)
            t->release(c, r + 1);
        memcpy(r + 1, payload, len);
        if (t->dirties_all)
            hr_cfeed_all(c);
        hr_cstore_report(c, k, HR_CC_UPDATED, ns, name);
        return HR_OK;
    }
    if (t->n >= t->cap) {
        uint32_t nc = t->cap ? t->cap * 2 : 16;
        uint8_t *p = realloc(t->rows, (size_t)nc * t->size);
        if (!p) {
            hr_intern_unref(&c->str, nsid);
            if (t->release)
                t->release(c, payload);
            return hr_err_set(err, HR_E_NOMEM, "%s %s/%s: out of memory", what, ns, name);
        }
        t->rows = p;
        t->cap = nc;
    }
    char *nm = strdup(name);
    if (!nm) {
        hr_intern_unref(&c->str, nsid);
        if (t->release)
            t->release(c, payload);
        return hr_err_set(err, HR_E_NOMEM, "%s %s/%s: out of memory", what, ns, name);
    }
    crow *r = row_at(t, t->n++);
    memset(r, 0, t->size);
    *r = (crow){nsid, c->epoch[k], nm, hr_cstore_parse_rv(m->resource_version)};
    memcpy(r + 1, payload, len);
    if (t->dirties_all)
        hr_cfeed_all(c);
    hr_cstore_report(c, k, HR_CC_ADDED, ns, name);
    return HR_OK;
}

void hr_crows_free(crows *t)
{
    for (uint32_t i = 0; i < t->n; i++)
        free(row_at(t, i)->name);
    free(t->rows);
    t->rows = NULL;
    t->n = t->cap = 0;
}

static uint32_t rows_find(const hr_cache *c, hr_ckind k, const char *ns, const char *name)
{
    uint32_t id = hr_intern_find(&c->str, ns, strlen(ns));
    return id ? rows_find_id(hr_crows_of((hr_cache *)c, k), id, name) : NIL;
}

static uint32_t rows_end(const hr_cache *c, hr_ckind k)
{
    return hr_crows_of((hr_cache *)c, k)->n;
}

static uint32_t *rows_mark(hr_cache *c, hr_ckind k, uint32_t i)
{
    return &row_at(hr_crows_of(c, k), i)->mark;
}

/* Moves the last row into slot i: the sweep looks at i again. */
static bool rows_remove(hr_cache *c, hr_ckind k, uint32_t i)
{
    crows *t = hr_crows_of(c, k);
    crow *r = row_at(t, i);
    hr_cstore_report(c, k, HR_CC_DELETED, hr_intern_str(&c->str, r->ns), r->name);
    hr_intern_unref(&c->str, r->ns);
    if (t->release)
        t->release(c, r + 1);
    free(r->name);
    memmove(r, row_at(t, --t->n), t->size);
    if (t->dirties_all)
        hr_cfeed_all(c);
    return true;
}

static const cstore rows_store = {rows_find, rows_end, rows_mark, rows_remove};

/* ---------------------------------------------------------- every kind */

static const cstore *store_of(hr_ckind k)
{
    switch (k) {
    case HR_CK_POD: return &hr_cpods_store;
    case HR_CK_NODE: return &hr_cnodes_store;
    case HR_CK_NAMESPACE: return &hr_cnss_store;
    case HR_CK_LIMITRANGE:
    case HR_CK_QUOTA:
    case HR_CK_VPA: return &rows_store;
    case HR_CK_CONFIG: return &hr_ccfg_store;
    default: return NULL;
    }
}

void hr_cstore_del(hr_cache *c, hr_ckind kind, const char *ns, const char *name)
{
    const cstore *s = store_of(kind);
    uint32_t i = s ? s->find(c, kind, ns, name) : NIL;
    if (i != NIL)
        s->remove(c, kind, i);
}

void hr_cstore_touch(hr_cache *c, hr_ckind kind, const char *ns, const char *name)
{
    const cstore *s = store_of(kind);
    uint32_t i = s ? s->find(c, kind, ns, name) : NIL;
    uint32_t *m = i != NIL ? s->mark(c, kind, i) : NULL;
    if (m)
        *m = c->epoch[kind];
}

void hr_cstore_relist_begin(hr_cache *c, hr_ckind kind)
{
    c->epoch[kind]++;
    if (!c->epoch[kind])
        c->epoch[kind] = 1;
}

size_t hr_cstore_relist_end(hr_cache *c, hr_ckind kind)
{
    const cstore *s = store_of(kind);
    size_t n = 0;
    uint32_t e = c->epoch[kind];
    for (uint32_t i = 0; s && i < s->end(c, kind);) {
        uint32_t *m = s->mark(c, kind, i);
        if (m && *m != e) {
            n++;
            if (s->remove(c, kind, i))
                continue; /* another object moved into i */
        }
        i++;
    }
    return n;
}
