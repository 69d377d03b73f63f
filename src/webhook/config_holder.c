/*
 * config_holder.c — immutable, reference-counted config snapshots behind a
 * read-write lock (see config_holder.h for why).
 *
 * The deep copy is what makes a snapshot independent: an hr_config points
 * into whoever decoded it (a watch event's arena), and that memory is gone
 * long before the last admission request using the config has finished.
 */
#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>

#include "util/arena.h"
#include "webhook/config_holder.h"

struct hr_cfg_snapshot {
    atomic_uint_fast32_t refs;
    uint64_t version;
    hr_config cfg;
    hr_arena arena; /* everything cfg points to */
};

struct hr_cfg_holder {
    pthread_rwlock_t lock;
    hr_cfg_snapshot *cur;
    uint64_t next_version;
};

const hr_config *hr_cfg_snapshot_config(const hr_cfg_snapshot *s)
{
    return &s->cfg;
}

uint64_t hr_cfg_snapshot_version(const hr_cfg_snapshot *s)
{
    return s->version;
}

/* A copy of s in a; NULL stays NULL. *ok turns false when out of memory. */
static const char *dup_str(hr_arena *a, const char *s, int *ok)
{
    if (s == NULL)
        return NULL;
    char *d = hr_arena_strdup(a, s);
    if (d == NULL)
        *ok = 0;
    return d;
}

static hr_selector dup_selector(hr_arena *a, const hr_selector *s, int *ok)
{
    hr_selector out = {s->set, NULL, 0};
    if (s->n == 0 || s->req == NULL)
        return out;
    hr_requirement *req = hr_arena_calloc(a, s->n, sizeof *req);
    if (req == NULL) {
        *ok = 0;
        return out;
    }
    for (uint32_t i = 0; i < s->n; i++) {
        const hr_requirement *r = &s->req[i];
        req[i].key = dup_str(a, r->key, ok);
        req[i].op = r->op;
        req[i].n_values = r->n_values;
        if (r->n_values > 0 && r->values != NULL) {
            const char **v = hr_arena_calloc(a, r->n_values, sizeof *v);
            if (v == NULL) {
                *ok = 0;
                return out;
            }
            for (uint32_t k = 0; k < r->n_values; k++)
                v[k] = dup_str(a, r->values[k], ok);
            req[i].values = v;
        } else {
            req[i].n_values = 0;
        }
    }
    out.req = req;
    out.n = s->n;
    return out;
}

static hr_cfg_snapshot *snapshot_new(const hr_config *c)
{
    hr_cfg_snapshot *s = calloc(1, sizeof *s);
    if (s == NULL)
        return NULL;
    atomic_init(&s->refs, 1);
    hr_arena_init(&s->arena, 4096);
    int ok = 1;
    s->cfg = *c;
    s->cfg.ns_selector = dup_selector(&s->arena, &c->ns_selector, &ok);
    s->cfg.excluded_nodes = dup_selector(&s->arena, &c->excluded_nodes, &ok);
    s->cfg.excluded_ns = NULL;
    s->cfg.n_excluded_ns = 0;
    if (c->n_excluded_ns > 0 && c->excluded_ns != NULL) {
        const char **ns = hr_arena_calloc(&s->arena, c->n_excluded_ns, sizeof *ns);
        if (ns == NULL) {
            ok = 0;
        } else {
            for (uint32_t i = 0; i < c->n_excluded_ns; i++)
                ns[i] = dup_str(&s->arena, c->excluded_ns[i], &ok);
            s->cfg.excluded_ns = ns;
            s->cfg.n_excluded_ns = c->n_excluded_ns;
        }
    }
    s->cfg.excluded_owners = NULL;
    s->cfg.n_excluded_owners = 0;
    if (c->n_excluded_owners > 0 && c->excluded_owners != NULL) {
        hr_owner_ref *o = hr_arena_calloc(&s->arena, c->n_excluded_owners, sizeof *o);
        if (o == NULL) {
            ok = 0;
        } else {
            for (uint32_t i = 0; i < c->n_excluded_owners; i++) {
                o[i].kind = dup_str(&s->arena, c->excluded_owners[i].kind, &ok);
                o[i].api_group = dup_str(&s->arena, c->excluded_owners[i].api_group, &ok);
                o[i].name = dup_str(&s->arena, c->excluded_owners[i].name, &ok);
            }
            s->cfg.excluded_owners = o;
            s->cfg.n_excluded_owners = c->n_excluded_owners;
        }
    }
    /* The tenant label (design §2.9): hr_pod_in_context reads it. */
    s->cfg.tenant_label = dup_str(&s->arena, c->tenant_label, &ok);
    /* The pools too (design §2.11): hr_config_for_node reads them. */
    s->cfg.pools = NULL;
    s->cfg.n_pools = 0;
    if (c->n_pools > 0 && c->pools != NULL) {
        hr_node_pool *p = hr_arena_calloc(&s->arena, c->n_pools, sizeof *p);
        if (p == NULL) {
            ok = 0;
        } else {
            for (uint32_t i = 0; i < c->n_pools; i++) {
                p[i] = c->pools[i];
                p[i].name = dup_str(&s->arena, c->pools[i].name, &ok);
                p[i].selector = dup_selector(&s->arena, &c->pools[i].selector, &ok);
            }
            s->cfg.pools = p;
            s->cfg.n_pools = c->n_pools;
        }
    }
    if (!ok) {
        hr_arena_free(&s->arena);
        free(s);
        return NULL;
    }
    return s;
}

void hr_cfg_snapshot_release(hr_cfg_snapshot *s)
{
    if (s == NULL)
        return;
    if (atomic_fetch_sub(&s->refs, 1) == 1) {
        hr_arena_free(&s->arena);
        free(s);
    }
}

hr_status hr_cfg_holder_new(const hr_config *initial, hr_cfg_holder **out, hr_err *err)
{
    *out = NULL;
    hr_cfg_holder *h = calloc(1, sizeof *h);
    if (h == NULL)
        return hr_err_set(err, HR_E_NOMEM, "config holder: out of memory");
    if (pthread_rwlock_init(&h->lock, NULL) != 0) {
        free(h);
        return hr_err_set(err, HR_E_NOMEM, "config holder: cannot create lock");
    }
    h->cur = snapshot_new(initial);
    if (h->cur == NULL) {
        pthread_rwlock_destroy(&h->lock);
        free(h);
        return hr_err_set(err, HR_E_NOMEM, "config holder: out of memory");
    }
    h->cur->version = 1;
    h->next_version = 2;
    *out = h;
    return HR_OK;
}

void hr_cfg_holder_free(hr_cfg_holder *h)
{
    if (h == NULL)
        return;
    hr_cfg_snapshot_release(h->cur);
    pthread_rwlock_destroy(&h->lock);
    free(h);
}

hr_status hr_cfg_holder_set(hr_cfg_holder *h, const hr_config *c, hr_err *err)
{
    /* The copy is made outside the lock: readers never wait for malloc. */
    hr_cfg_snapshot *s = snapshot_new(c);
    if (s == NULL)
        return hr_err_set(err, HR_E_NOMEM, "config holder: out of memory");
    pthread_rwlock_wrlock(&h->lock);
    hr_cfg_snapshot *old = h->cur;
    s->version = h->next_version++;
    h->cur = s;
    pthread_rwlock_unlock(&h->lock);
    hr_cfg_snapshot_release(old);
    return HR_OK;
}

hr_cfg_snapshot *hr_cfg_holder_get(hr_cfg_holder *h)
{
    pthread_rwlock_rdlock(&h->lock);
    hr_cfg_snapshot *s = h->cur;
    atomic_fetch_add(&s->refs, 1);
    pthread_rwlock_unlock(&h->lock);
    return s;
}
