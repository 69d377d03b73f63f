/*
 * cache.c — the cache's API: every entry point cache.h declares, the
 * object's creation and teardown, and its own memory accounting.
 *
 * Why every entry point is here: the locking contract of cache.h (writers
 * take the lock themselves, readers run between hr_cache_lock and
 * hr_cache_unlock) is then kept in one file, and the files behind it are
 * free of locking: each writer here takes the lock and calls the work of
 * its kind, each reader only forwards.
 *
 * What the cache is and why it is small: cache.h. How it is laid out and
 * cut into files: cache_int.h. Each kind's records live in their own file
 * (pods.c, nodes.c, namespaces.c, limitranges.c, quotas.c, vpas.c, cfgstore.c); the
 * machinery they share in store.c; the change feed in feed.c.
 */
#include "cache/cache.h"

#include <stdlib.h>
#include <string.h>

#include "cache/cache_int.h"
#include "cache/cfgstore.h"
#include "cache/feed.h"
#include "cache/groups.h"
#include "cache/limitranges.h"
#include "cache/namespaces.h"
#include "cache/nodes.h"
#include "cache/pods.h"
#include "cache/quotas.h"
#include "cache/store.h"
#include "cache/vpas.h"

const char *hr_ckind_str(hr_ckind k)
{
    static const char *n[] = {"pods",
                              "nodes",
                              "namespaces",
                              "limitranges",
                              "headroomconfigs",
                              "resourcequotas",
                              "verticalpodautoscalers"};
    return (unsigned)k < HR_CK_COUNT_ ? n[k] : "?";
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
    c->lrs = (crows){.size = sizeof(clr),
                     .what = "limitrange",
                     .dirties_all = true}; /* bounds touch every pod */
    /* A quota's limits.cpu bounds its namespace's pods on any node (the
     * quota cap, design §2.3). */
    c->quotas = (crows){.size = sizeof(cquota), .what = "resourcequota", .dirties_all = true};
    /* A VPA's pods may sit on any node (design §4, foreign-writer). */
    c->vpas = (crows){.size = sizeof(cvpa),
                      .what = "verticalpodautoscaler",
                      .dirties_all = true,
                      .release = hr_cvpas_release};
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
    hr_crows_free(&c->vpas); /* its strings go with the intern table */
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

void hr_cache_set_kick(hr_cache *c, void (*fn)(void *ud), void *ud)
{
    pthread_mutex_lock(&c->mu);
    c->kick = fn;
    c->kick_ud = ud;
    pthread_mutex_unlock(&c->mu);
}

void hr_cache_set_server_pod_resize(hr_cache *c, bool on)
{
    pthread_mutex_lock(&c->mu);
    c->server_pod_resize = on;
    /* Every node's view changes with it: plan them all again. */
    hr_cfeed_all(c);
    pthread_mutex_unlock(&c->mu);
}

void hr_cache_ring(hr_cache *c)
{
    pthread_mutex_lock(&c->mu);
    if (c->kick)
        c->kick(c->kick_ud);
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

/* ------------------------------------------------------------ writers */

hr_status hr_cache_put_pod(hr_cache *c, const hr_kpod *p, const hr_cpod_status *s, hr_err *err)
{
    pthread_mutex_lock(&c->mu);
    hr_status st = hr_cpods_put(c, p, s, err);
    pthread_mutex_unlock(&c->mu);
    return st;
}

hr_status hr_cache_put_node(hr_cache *c, const hr_knode *n, hr_err *err)
{
    pthread_mutex_lock(&c->mu);
    hr_status st = hr_cnodes_put(c, n, err);
    pthread_mutex_unlock(&c->mu);
    return st;
}

hr_status hr_cache_put_namespace(hr_cache *c, const hr_knamespace *n, hr_err *err)
{
    pthread_mutex_lock(&c->mu);
    hr_status st = hr_cnss_put(c, n, err);
    pthread_mutex_unlock(&c->mu);
    return st;
}

hr_status hr_cache_put_limitrange(hr_cache *c, const hr_klimitrange *l, hr_err *err)
{
    pthread_mutex_lock(&c->mu);
    hr_status st = hr_clrs_put(c, l, err);
    pthread_mutex_unlock(&c->mu);
    return st;
}

hr_status hr_cache_put_config(hr_cache *c, const hr_kconfig *k, int64_t generation, hr_arena *a,
                              hr_err *err)
{
    (void)err;
    pthread_mutex_lock(&c->mu);
    bool taken = hr_ccfg_put(c, k, generation, a);
    pthread_mutex_unlock(&c->mu);
    if (!taken)
        hr_arena_free(a);
    return HR_OK;
}

void hr_cache_config_invalid(hr_cache *c, const char *msg)
{
    pthread_mutex_lock(&c->mu);
    hr_ccfg_invalid(c, msg);
    pthread_mutex_unlock(&c->mu);
}

hr_status hr_cache_put_config_status(hr_cache *c, const hr_kcfg_status *s, hr_err *err)
{
    /* Copied into a fresh arena, swapped in only when whole. */
    hr_arena a;
    hr_kcfg_status t;
    hr_status st = hr_ccfg_copy_status(s, &a, &t, err);
    if (st != HR_OK)
        return st;
    pthread_mutex_lock(&c->mu);
    hr_ccfg_set_status(c, &a, &t);
    if (c->kick) /* the status writer compares against it */
        c->kick(c->kick_ud);
    pthread_mutex_unlock(&c->mu);
    return HR_OK;
}

hr_status hr_cache_put_quota(hr_cache *c, const hr_kquota *q, hr_err *err)
{
    pthread_mutex_lock(&c->mu);
    hr_status st = hr_cquotas_put(c, q, err);
    pthread_mutex_unlock(&c->mu);
    return st;
}

hr_status hr_cache_put_vpa(hr_cache *c, const hr_kvpa *v, hr_err *err)
{
    pthread_mutex_lock(&c->mu);
    hr_status st = hr_cvpas_put(c, v, err);
    pthread_mutex_unlock(&c->mu);
    return st;
}

hr_status hr_cache_put_node_undecodable(hr_cache *c, const char *name, const char *rv, hr_err *err)
{
    pthread_mutex_lock(&c->mu);
    hr_status st = hr_cnodes_undecodable(c, name, rv ? rv : "", err);
    pthread_mutex_unlock(&c->mu);
    return st;
}

void hr_cache_del(hr_cache *c, hr_ckind kind, const char *ns, const char *name)
{
    pthread_mutex_lock(&c->mu);
    hr_cstore_del(c, kind, ns ? ns : "", name ? name : "");
    pthread_mutex_unlock(&c->mu);
}

void hr_cache_touch(hr_cache *c, hr_ckind kind, const char *ns, const char *name)
{
    if (!name)
        return;
    pthread_mutex_lock(&c->mu);
    hr_cstore_touch(c, kind, ns ? ns : "", name);
    pthread_mutex_unlock(&c->mu);
}

void hr_cache_relist_begin(hr_cache *c, hr_ckind kind)
{
    pthread_mutex_lock(&c->mu);
    hr_cstore_relist_begin(c, kind);
    pthread_mutex_unlock(&c->mu);
}

size_t hr_cache_relist_end(hr_cache *c, hr_ckind kind, bool complete)
{
    if (!complete)
        return 0;
    pthread_mutex_lock(&c->mu);
    size_t n = hr_cstore_relist_end(c, kind);
    pthread_mutex_unlock(&c->mu);
    return n;
}

/* ---------------------------------------------- readers (lock held) */

bool hr_cache_pod_get(const hr_cache *c, const char *ns, const char *name, hr_cpod_view *out,
                      hr_cpod_scratch *s)
{
    return hr_cpods_get(c, ns, name, out, s);
}

bool hr_cache_pod_uid(const hr_cache *c, const char *ns, const char *name, uint8_t uid[16])
{
    return hr_cpods_uid(c, ns, name, uid);
}

bool hr_cache_pod_at(const hr_cache *c, uint32_t id, hr_cpod_view *out, hr_cpod_scratch *s)
{
    return hr_cpods_at(c, id, out, s);
}

size_t hr_cache_node_pods(const hr_cache *c, const char *node, uint32_t *ids, size_t cap)
{
    return hr_cpods_of_node(c, node, ids, cap);
}

bool hr_cache_pod_next(const hr_cache *c, uint32_t *iter, hr_cpod_view *out, hr_cpod_scratch *s)
{
    return hr_cpods_next(c, iter, out, s);
}

bool hr_cache_node_get(const hr_cache *c, const char *name, hr_cnode_view *out)
{
    return hr_cnodes_get(c, name, out);
}

bool hr_cache_node_next(const hr_cache *c, uint32_t *iter, hr_cnode_view *out)
{
    return hr_cnodes_next(c, iter, out);
}

uint32_t hr_cache_pods_nowhere(const hr_cache *c)
{
    return c->n_pods_nowhere;
}

uint64_t hr_cache_node_version(const hr_cache *c, const char *name)
{
    return hr_cfeed_version(c, hr_cnodes_find(c, name));
}

uint64_t hr_cache_removals(const hr_cache *c)
{
    return c->removals;
}

bool hr_cache_ns_get(const hr_cache *c, const char *name, hr_cns_view *out)
{
    return hr_cnss_get(c, name, out);
}

bool hr_cache_ns_next(const hr_cache *c, uint32_t *iter, hr_cns_view *out)
{
    return hr_cnss_next(c, iter, out);
}

hr_limit_bounds hr_cache_ns_bounds(const hr_cache *c, const char *ns)
{
    return hr_clrs_bounds(c, ns);
}

size_t hr_cache_limitrange_count(const hr_cache *c)
{
    return hr_clrs_count(c);
}

const hr_config *hr_cache_config(const hr_cache *c, const char **invalid)
{
    return hr_ccfg_get(c, invalid);
}

void hr_cache_pool_counts(const hr_cache *c, int64_t *counts)
{
    hr_cnodes_pool_counts(c, hr_ccfg_get(c, NULL), counts);
}

bool hr_cache_config_object(const hr_cache *c, int64_t *gen_in_force, const hr_kcfg_status **status)
{
    return hr_ccfg_object(c, gen_in_force, status);
}

void hr_cache_ns_quota(const hr_cache *c, const char *ns, hr_ns_quota *out)
{
    hr_cquotas_ns(c, ns, out);
}

const char *hr_cache_vpa_writer(const hr_cache *c, const hr_cpod_view *v)
{
    return hr_cvpas_writer(c, v);
}

const char *hr_cache_vpa_writer_of(const hr_cache *c, const char *ns, const hr_vpa_owner *owner,
                                   const hr_pod *pod, const char *const *names)
{
    return hr_cvpas_writer_of(c, ns, owner, pod, names);
}

size_t hr_cache_vpa_count(const hr_cache *c)
{
    return c->vpas.n;
}

size_t hr_cache_quota_namespaces(const hr_cache *c, const char **out, size_t cap)
{
    return hr_cquotas_namespaces(c, out, cap);
}

hr_status hr_cache_managed_quota_ns(const hr_cache *c, const char *own_ns, const char ***out,
                                    size_t *n, hr_err *err)
{
    return hr_cquotas_managed(c, own_ns, out, n, err);
}

size_t hr_cache_drain(hr_cache *c, void (*fn)(void *ud, const char *node), void *ud)
{
    return hr_cfeed_drain(c, fn, ud);
}

size_t hr_cache_dirty_count(const hr_cache *c)
{
    return hr_cfeed_dirty_count(c);
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
    o->vpas = c->vpas.n;
    o->strings = c->str.live;
    o->string_bytes = c->str.bytes;
    o->pod_bytes = (size_t)c->pods_cap * sizeof(cpod) + (size_t)c->chunks_cap * sizeof(cpod *) +
                   (size_t)c->n_pbuckets * sizeof(uint32_t) + c->blob_bytes;
    size_t label_bytes = 0;
    for (uint32_t i = 0; i < c->nodes.used; i++)
        label_bytes += (size_t)node_at(c, i)->n_labels * 2 * sizeof(char *);
    for (uint32_t i = 0; i < c->nss.used; i++)
        label_bytes += (size_t)ns_at(c, i)->n_labels * 2 * sizeof(char *);
    o->bytes = sizeof *c + o->pod_bytes + o->string_bytes + label_bytes +
               (size_t)c->nodes.cap * (sizeof(cnode) + 4) + (size_t)c->nss.cap * (sizeof(cns) + 4) +
               (size_t)c->lrs.cap * c->lrs.size + (size_t)c->quotas.cap * c->quotas.size +
               (size_t)c->vpas.cap * c->vpas.size + hr_u32map_bytes(&c->ns_pods) +
               hr_cgroups_bytes(c) + hr_u32map_bytes(&c->nodes.by_name) +
               hr_u32map_bytes(&c->nss.by_name) + (size_t)c->dirty_cap * 4 + c->enc.cap +
               hr_arena_bytes(&c->cfg_arena) + hr_arena_bytes(&c->cfgst_arena);
    memcpy(o->changes, c->changes, sizeof o->changes);
}

size_t hr_cache_group_pods(const hr_cache *c, const char *key, uint32_t *ids, size_t cap)
{
    return hr_cgroups_pods(c, key, ids, cap);
}

size_t hr_cache_n_groups(const hr_cache *c)
{
    return hr_cgroups_count(c);
}
