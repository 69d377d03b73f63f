/*
 * cache.c — the cache object itself: creation and teardown, the lock, the
 * observer and the change counters, and the cache's own memory accounting.
 *
 * What the cache is and why it is small: cache.h. How it is laid out and
 * cut into files: cache_int.h. Each kind's records live in their own file
 * (pods.c, nodes.c, namespaces.c, limitranges.c, quotas.c, config.c); the
 * machinery they share in store.c; the change feed in feed.c.
 */
#include <stdlib.h>
#include <string.h>

#include "cache/cache_int.h"

const char *hr_ckind_str(hr_ckind k)
{
    static const char *n[] = {"pods", "nodes", "namespaces", "limitranges",
                              "headroomconfigs", "resourcequotas"};
    return (unsigned)k < HR_CK_COUNT_ ? n[k] : "?";
}

void hr_cache_report(hr_cache *c, hr_ckind k, hr_cchange what, const char *ns,
                     const char *name)
{
    c->changes[k]++;
    if (c->obs)
        c->obs(c->obs_ud, k, what, ns, name);
}

hr_status hr_cache_new(hr_cache **out, hr_err *err)
{
    *out = NULL;
    hr_cache *c = calloc(1, sizeof *c);
    if (!c)
        return hr_err_set(err, HR_E_NOMEM, "cache: out of memory");
    if (pthread_mutex_init(&c->mu, NULL) != 0) {
        free(c);
        return hr_err_set(err, HR_E_NOMEM, "cache: mutex");
    }
    hr_intern_init(&c->str);
    c->pod_free = NIL;
    c->lrs = (crows){.size = sizeof(clr), .what = "limitrange",
                     .dirties_all = true}; /* bounds touch every pod */
    /* Quotas change no plan (the policy does not read them): no node is
     * made dirty, only the change is reported. */
    c->quotas = (crows){.size = sizeof(cquota), .what = "resourcequota"};
    hr_ccfg_init(c);
    for (int k = 0; k < HR_CK_COUNT_; k++)
        c->epoch[k] = 1;
    *out = c;
    return HR_OK;
}

void hr_cache_free(hr_cache *c)
{
    if (!c)
        return;
    hr_cpods_free(c);
    for (uint32_t i = 0; i < c->nodes.used; i++)
        free(node_at(c, i)->labels);
    hr_cslots_free(&c->nodes);
    free(c->dirty);
    for (uint32_t i = 0; i < c->nss.used; i++)
        free(ns_at(c, i)->labels);
    hr_cslots_free(&c->nss);
    hr_crows_free(&c->lrs);
    hr_crows_free(&c->quotas);
    hr_ccfg_free(c);
    hr_cenc_free(&c->enc);
    hr_intern_free(&c->str);
    pthread_mutex_destroy(&c->mu);
    free(c);
}

void hr_cache_set_observer(hr_cache *c, hr_cache_observer fn, void *ud)
{
    pthread_mutex_lock(&c->mu);
    c->obs = fn;
    c->obs_ud = ud;
    pthread_mutex_unlock(&c->mu);
}

void hr_cache_lock(hr_cache *c)
{
    pthread_mutex_lock(&c->mu);
}

void hr_cache_unlock(hr_cache *c)
{
    pthread_mutex_unlock(&c->mu);
}

void hr_cache_get_stats(const hr_cache *c, hr_cache_stats *o)
{
    memset(o, 0, sizeof *o);
    o->pods = c->n_pods;
    for (uint32_t i = 0; i < c->nodes.used; i++) {
        const cnode *n = node_at(c, i);
        if (!n->name)
            continue;
        if (n->flags & NF_PRESENT)
            o->nodes++;
        else
            o->node_placeholders++;
    }
    o->namespaces = c->nss.by_name.n;
    o->limitranges = c->lrs.n;
    o->quotas = c->quotas.n;
    o->strings = c->str.live;
    o->string_bytes = c->str.bytes;
    o->pod_bytes = (size_t)c->pods_cap * sizeof(cpod) +
                   (size_t)c->chunks_cap * sizeof(cpod *) +
                   (size_t)c->n_pbuckets * sizeof(uint32_t) + c->blob_bytes;
    size_t label_bytes = 0;
    for (uint32_t i = 0; i < c->nodes.used; i++)
        label_bytes += (size_t)node_at(c, i)->n_labels * 2 * sizeof(char *);
    for (uint32_t i = 0; i < c->nss.used; i++)
        label_bytes += (size_t)ns_at(c, i)->n_labels * 2 * sizeof(char *);
    o->bytes = sizeof *c + o->pod_bytes + o->string_bytes + label_bytes +
               (size_t)c->nodes.cap * (sizeof(cnode) + 4) +
               (size_t)c->nss.cap * (sizeof(cns) + 4) +
               (size_t)c->lrs.cap * c->lrs.size + (size_t)c->quotas.cap * c->quotas.size +
               hr_u32map_bytes(&c->ns_pods) + hr_u32map_bytes(&c->nodes.by_name) +
               hr_u32map_bytes(&c->nss.by_name) + (size_t)c->dirty_cap * 4 + c->enc.cap +
               hr_arena_bytes(&c->cfg_arena) + hr_arena_bytes(&c->cfgst_arena);
    memcpy(o->changes, c->changes, sizeof o->changes);
}
