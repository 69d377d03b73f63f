/*
 * namespaces.c — the namespace store: name and labels, in a slot table
 * found by interned name (cache_int.h).
 *
 * Labels are all a namespace brings (the config's namespace selector reads
 * them), and a change to them can turn every pod in it managed or not, so
 * it dirties every node holding one of its pods (its TenantFair weight,
 * design §2.9, is one of them: kept parsed beside the labels, in the slot's
 * padding). The pod store counts pods per namespace, so a namespace
 * without pods costs no scan.
 */
#include "cache/namespaces.h"

#include <string.h>

#include "cache/feed.h"
#include "cache/store.h"
#include "core/tenant.h"

#define WEIGHT_INVALID 0x80000000u

/* The weight label, parsed once here rather than at every reconcile. */
static uint32_t packed_weight(const hr_labels *l)
{
    bool invalid;
    uint32_t w = hr_tenant_weight(l, &invalid);
    return w | (invalid ? WEIGHT_INVALID : 0);
}

/* A namespace's labels decide whether its pods are managed: every node
 * with one of its pods must look again. */
static void dirty_ns_nodes(hr_cache *c, uint32_t nsid)
{
    if (hr_u32map_get(&c->ns_pods, nsid) == NIL)
        return;
    for (uint32_t i = 0; i < c->pods_used; i++)
        if ((*PA(c, i)).ns == nsid)
            hr_cfeed_mark(c, (*PA(c, i)).node);
}

hr_status hr_cnss_put(hr_cache *c, const hr_knamespace *k, hr_err *err)
{
    const char *name = k->meta.name;
    uint32_t id = hr_cstore_intern(c, name);
    if (!id)
        return hr_err_set(err, HR_E_INPUT, "namespace without a name");
    if (id == UINT32_MAX)
        return hr_err_set(err, HR_E_NOMEM, "namespace %s: out of memory", name);
    const char **kv;
    if (hr_cstore_labels(c, &k->meta.labels, &kv) != 0) {
        hr_intern_unref(&c->str, id);
        return hr_err_set(err, HR_E_NOMEM, "namespace %s: out of memory", name);
    }
    uint32_t i = hr_u32map_get(&c->nss.by_name, id);
    if (i != NIL) {
        cns *n = ns_at(c, i);
        hr_intern_unref(&c->str, id);
        n->rv = hr_cstore_parse_rv(k->meta.resource_version);
        n->mark = c->epoch[HR_CK_NAMESPACE];
        if (hr_cstore_labels_equal(n->labels, n->n_labels, kv, k->meta.labels.n)) {
            hr_cstore_labels_free(c, kv, k->meta.labels.n);
            return HR_OK;
        }
        hr_cstore_labels_free(c, n->labels, n->n_labels);
        n->labels = kv;
        n->n_labels = k->meta.labels.n;
        n->weight = packed_weight(&k->meta.labels);
        dirty_ns_nodes(c, id);
        hr_cstore_report(c, HR_CK_NAMESPACE, HR_CC_UPDATED, "", name);
        return HR_OK;
    }
    i = hr_cslots_take(&c->nss, sizeof(cns), id);
    if (i == NIL) {
        hr_cstore_labels_free(c, kv, k->meta.labels.n);
        hr_intern_unref(&c->str, id);
        return hr_err_set(err, HR_E_NOMEM, "namespace %s: out of memory", name);
    }
    *ns_at(c, i) = (cns){id,
                         c->epoch[HR_CK_NAMESPACE],
                         k->meta.labels.n,
                         packed_weight(&k->meta.labels),
                         kv,
                         hr_cstore_parse_rv(k->meta.resource_version)};
    dirty_ns_nodes(c, id);
    hr_cstore_report(c, HR_CK_NAMESPACE, HR_CC_ADDED, "", name);
    return HR_OK;
}

static void ns_delete(hr_cache *c, uint32_t i)
{
    cns *n = ns_at(c, i);
    uint32_t id = n->name;
    dirty_ns_nodes(c, id);
    hr_cstore_report(c, HR_CK_NAMESPACE, HR_CC_DELETED, "", hr_intern_str(&c->str, id));
    hr_cstore_labels_free(c, n->labels, n->n_labels);
    hr_cslots_give(&c->nss, sizeof(cns), i);
    hr_intern_unref(&c->str, id);
}

/* ---------------------------------------------------------- readers */

static void fill_ns_view(const hr_cache *c, uint32_t i, hr_cns_view *v)
{
    const cns *n = ns_at(c, i);
    v->name = hr_intern_str(&c->str, n->name);
    v->rv = n->rv;
    v->labels = (hr_labels){(const char *const *)n->labels, n->n_labels};
    v->weight = n->weight & ~WEIGHT_INVALID;
    v->weight_invalid = (n->weight & WEIGHT_INVALID) != 0;
}

static uint32_t nss_find(const hr_cache *c, hr_ckind k, const char *ns, const char *name);

bool hr_cnss_get(const hr_cache *c, const char *name, hr_cns_view *out)
{
    uint32_t i = nss_find(c, HR_CK_NAMESPACE, "", name);
    if (i == NIL)
        return false;
    fill_ns_view(c, i, out);
    return true;
}

bool hr_cnss_next(const hr_cache *c, uint32_t *iter, hr_cns_view *out)
{
    for (uint32_t i = *iter; i < c->nss.used; i++) {
        if (ns_at(c, i)->name) {
            fill_ns_view(c, i, out);
            *iter = i + 1;
            return true;
        }
    }
    *iter = c->nss.used;
    return false;
}

/* ---------------------------------------------------------- the store */

static uint32_t nss_find(const hr_cache *c, hr_ckind k, const char *ns, const char *name)
{
    (void)k, (void)ns;
    uint32_t id = hr_intern_find(&c->str, name, strlen(name));
    return id ? hr_u32map_get(&c->nss.by_name, id) : NIL;
}

static uint32_t nss_end(const hr_cache *c, hr_ckind k)
{
    (void)k;
    return c->nss.used;
}

static uint32_t *nss_mark(hr_cache *c, hr_ckind k, uint32_t i)
{
    (void)k;
    cns *n = ns_at(c, i);
    return n->name ? &n->mark : NULL;
}

static bool nss_remove(hr_cache *c, hr_ckind k, uint32_t i)
{
    (void)k;
    ns_delete(c, i);
    return false;
}

const cstore hr_cnss_store = {nss_find, nss_end, nss_mark, nss_remove};
