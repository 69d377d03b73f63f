/*
 * live.c — paginated one-shot lists, into the cache or into a List.
 */
#include "live.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <yyjson.h>

#include "cache/sink.h"
#include "kube/kversion.h"

#define PAGE_LIMIT 500
#define MAX_PAGE_BYTES (512u << 20)

hr_status hr_live_client(const hr_kclient_opts *conn, long timeout_ms, hr_kclient **out,
                         hr_err *err)
{
    hr_kclient_opts o = *conn;
    o.timeout_ms = timeout_ms;
    return hr_kclient_new(&o, out, err);
}

hr_status hr_live_get(hr_kclient *k, const char *path, hr_buf *out, hr_err *err)
{
    hr_kresult res = {0};
    return hr_kclient_do(k, "GET", path, NULL, NULL, 0, out, &res, err);
}

void hr_live_server_pod_resize(hr_kclient *k, bool *on, char *version, hr_err *err)
{
    *on = false;
    hr_err_clear(err);
    if (version != NULL)
        version[0] = '\0';
    hr_buf b;
    hr_buf_init(&b, 0);
    if (hr_live_get(k, "/version", &b, err) == HR_OK) {
        yyjson_doc *d = yyjson_read(hr_buf_str(&b), b.len, 0);
        yyjson_val *r = yyjson_doc_get_root(d);
        const char *mj = yyjson_get_str(yyjson_obj_get(r, "major"));
        const char *mn = yyjson_get_str(yyjson_obj_get(r, "minor"));
        if (mj != NULL && mn != NULL) {
            *on = hr_kversion_pod_resize(mj, mn);
            if (version != NULL)
                snprintf(version, 32, "%s.%s", mj, mn);
        } else {
            HR_IGNORE(hr_err_set(err, HR_E_INPUT, "GET /version: no major and minor"));
        }
        yyjson_doc_free(d);
    }
    hr_buf_free(&b);
}

typedef hr_status (*item_fn)(void *ud, yyjson_val *item, hr_err *err);

/* How a kind may be missing: not at all, 404 (the HeadroomConfig CRD not
 * installed), or 404 and 403 too (ResourceQuotas an identity may not list:
 * then no quota cap is known, and a warning says so). */
enum { REQUIRED = 0, OPTIONAL = 1, OPTIONAL_FORBIDDEN = 2 };

/* Every item of a (paginated) list, in order. A 404 on an optional kind is
 * an empty list. */
static hr_status each_item(hr_kclient *k, const char *path, const char *query, int optional,
                           item_fn fn, void *ud, hr_err *err)
{
    char cont[4096] = "";
    hr_buf page;
    hr_buf_init(&page, MAX_PAGE_BYTES);
    hr_status st = HR_OK;
    do {
        char url[8192];
        snprintf(url, sizeof url, "%s?limit=%d%s%s%s%s", path, PAGE_LIMIT, query ? "&" : "",
                 query ? query : "", cont[0] ? "&continue=" : "", cont);
        hr_buf_reset(&page);
        hr_kresult res = {0};
        st = hr_kclient_do(k, "GET", url, NULL, NULL, 0, &page, &res, err);
        if (st != HR_OK) {
            if (optional && res.status == 404) {
                hr_err_clear(err);
                st = HR_OK;
            } else if (optional == OPTIONAL_FORBIDDEN && res.status == 403) {
                fprintf(stderr,
                        "warning: %s: forbidden: no ResourceQuota is read, so no quota "
                        "cap applies\n",
                        path);
                hr_err_clear(err);
                st = HR_OK;
            }
            break;
        }
        yyjson_doc *d = yyjson_read(hr_buf_str(&page), page.len, 0);
        if (d == NULL) {
            st = hr_err_set(err, HR_E_INPUT, "%s: the API server's list is not JSON", path);
            break;
        }
        yyjson_val *root = yyjson_doc_get_root(d);
        yyjson_val *items = yyjson_obj_get(root, "items");
        size_t i, max;
        yyjson_val *it;
        yyjson_arr_foreach(items, i, max, it)
        {
            st = fn(ud, it, err);
            if (st != HR_OK)
                break;
        }
        const char *c = yyjson_get_str(yyjson_ptr_get(root, "/metadata/continue"));
        if (c != NULL && strlen(c) < sizeof cont) {
            /* The token is URL-safe base64 already; keep it as it is. */
            snprintf(cont, sizeof cont, "%s", c);
        } else {
            cont[0] = '\0';
        }
        yyjson_doc_free(d);
    } while (st == HR_OK && cont[0] != '\0');
    hr_buf_free(&page);
    return st;
}

typedef struct kind_list {
    hr_ckind kind;
    const char *path;
    char query[600];
    int optional;
} kind_list;

/* The HeadroomConfig's CRD (its defaults without it) and the optional
 * kinds' (hr_ckind_optional) may not be installed; an identity may not be
 * allowed to list ResourceQuotas. */
static int optional_kind(hr_ckind k)
{
    return k == HR_CK_CONFIG || hr_ckind_optional(k) ? OPTIONAL
           : k == HR_CK_QUOTA                        ? OPTIONAL_FORBIDDEN
                                                     : REQUIRED;
}

/* What to read, pods narrowed to one node when asked. */
static size_t plan_lists(const char *node, kind_list *l)
{
    size_t n = 0;
    hr_ckind kinds[] = {HR_CK_NODE,  HR_CK_NAMESPACE, HR_CK_LIMITRANGE, HR_CK_CONFIG,
                        HR_CK_QUOTA, HR_CK_VPA,       HR_CK_POD};
    for (size_t i = 0; i < sizeof kinds / sizeof kinds[0]; i++) {
        kind_list *e = &l[n++];
        e->kind = kinds[i];
        e->path = hr_ckind_path(kinds[i]);
        e->optional = optional_kind(kinds[i]);
        const char *q = hr_ckind_query(kinds[i]);
        e->query[0] = '\0';
        if (q != NULL)
            snprintf(e->query, sizeof e->query, "%s", q);
        if (node != NULL && kinds[i] == HR_CK_POD)
            snprintf(e->query, sizeof e->query, "fieldSelector=spec.nodeName%%3D%s", node);
        if (node != NULL && kinds[i] == HR_CK_NODE)
            snprintf(e->query, sizeof e->query, "fieldSelector=metadata.name%%3D%s", node);
    }
    return n;
}

static hr_status to_sink(void *ud, yyjson_val *item, hr_err *err)
{
    hr_wsink *ws = ud;
    hr_status st = ws->upsert(ws->ud, item, err);
    if (st == HR_E_INPUT) {
        /* A malformed object is reported (the message says what the
         * cache kept of it), as the watch does. */
        fprintf(stderr, "warning: not decoded: %s\n", err->msg);
        hr_err_clear(err);
        return HR_OK;
    }
    return st;
}

hr_status hr_live_each(hr_kclient *k, const char *path, const char *query, bool optional,
                       hr_status (*fn)(void *ud, yyjson_val *item, hr_err *err), void *ud,
                       hr_err *err)
{
    return each_item(k, path, query, optional, fn, ud, err);
}

hr_status hr_live_load_kind(hr_kclient *k, hr_cache *c, hr_ckind kind, hr_err *err)
{
    hr_csink *s = NULL;
    hr_status st = hr_csink_new(c, kind, &s, err);
    if (st != HR_OK)
        return st;
    hr_wsink ws = hr_csink_wsink(s);
    st = each_item(k, hr_ckind_path(kind), hr_ckind_query(kind), optional_kind(kind), to_sink, &ws,
                   err);
    hr_csink_free(s);
    return st;
}

/* The pods of every namespace with a limits.cpu quota, on every node: the
 * quota cap of a pod is its share of its namespace's managed request
 * (design §2.3), so a read narrowed to one node needs them too. */
static hr_status load_quota_pods(hr_kclient *k, hr_cache *c, hr_err *err)
{
    hr_cache_lock(c);
    size_t n = hr_cache_quota_namespaces(c, NULL, 0);
    const char **ns = calloc(n ? n : 1, sizeof *ns);
    char **names = calloc(n ? n : 1, sizeof *names);
    hr_status st = ns && names ? HR_OK : hr_err_set(err, HR_E_NOMEM, "out of memory");
    if (st == HR_OK)
        n = hr_cache_quota_namespaces(c, ns, n);
    for (size_t i = 0; st == HR_OK && i < n; i++)
        if ((names[i] = strdup(ns[i])) == NULL)
            st = hr_err_set(err, HR_E_NOMEM, "out of memory");
    hr_cache_unlock(c);
    for (size_t i = 0; st == HR_OK && i < n; i++) {
        char path[512];
        snprintf(path, sizeof path, "/api/v1/namespaces/%s/pods", names[i]);
        hr_csink *s = NULL;
        if ((st = hr_csink_new(c, HR_CK_POD, &s, err)) != HR_OK)
            break;
        hr_wsink ws = hr_csink_wsink(s);
        st = each_item(k, path, NULL, REQUIRED, to_sink, &ws, err);
        hr_csink_free(s);
    }
    for (size_t i = 0; names && i < n; i++)
        free(names[i]);
    free(names);
    free(ns);
    return st;
}

hr_status hr_live_load(hr_kclient *k, hr_cache *c, const char *node, hr_err *err)
{
    kind_list l[8];
    size_t n = plan_lists(node, l);
    for (size_t i = 0; i < n; i++) {
        hr_csink *s = NULL;
        hr_status st = hr_csink_new(c, l[i].kind, &s, err);
        if (st != HR_OK)
            return st;
        hr_wsink ws = hr_csink_wsink(s);
        st = each_item(k, l[i].path, l[i].query[0] ? l[i].query : NULL, l[i].optional, to_sink, &ws,
                       err);
        hr_csink_free(s);
        if (st != HR_OK)
            return st;
    }
    return node != NULL ? load_quota_pods(k, c, err) : HR_OK;
}

typedef struct dump_ctx {
    hr_buf *out;
    bool first;
    const char *kind; /* items of a list carry no kind: put it back */
    const char *api_version;
    char **quota_ns; /* namespaces of the ResourceQuotas on limits.cpu seen */
    size_t n_quota_ns;
} dump_ctx;

/* Remember the namespace of a ResourceQuota on limits.cpu (once). */
static hr_status note_quota(dump_ctx *d, yyjson_val *item, hr_err *err)
{
    const char *ns = yyjson_get_str(yyjson_ptr_get(item, "/metadata/namespace"));
    if (ns == NULL || yyjson_ptr_get(item, "/spec/hard/limits.cpu") == NULL)
        return HR_OK;
    for (size_t i = 0; i < d->n_quota_ns; i++)
        if (!strcmp(d->quota_ns[i], ns))
            return HR_OK;
    char **more = realloc(d->quota_ns, (d->n_quota_ns + 1) * sizeof *more);
    if (more == NULL)
        return hr_err_set(err, HR_E_NOMEM, "out of memory");
    d->quota_ns = more;
    if ((d->quota_ns[d->n_quota_ns] = strdup(ns)) == NULL)
        return hr_err_set(err, HR_E_NOMEM, "out of memory");
    d->n_quota_ns++;
    return HR_OK;
}

static hr_status to_list(void *ud, yyjson_val *item, hr_err *err)
{
    dump_ctx *d = ud;
    if (!strcmp(d->kind, "ResourceQuota")) {
        hr_status st = note_quota(d, item, err);
        if (st != HR_OK)
            return st;
    }
    yyjson_mut_doc *m = yyjson_mut_doc_new(NULL);
    if (m == NULL)
        return hr_err_set(err, HR_E_NOMEM, "out of memory");
    yyjson_mut_val *v = yyjson_val_mut_copy(m, item);
    if (v != NULL && yyjson_is_obj(item)) {
        if (yyjson_obj_get(item, "kind") == NULL)
            yyjson_mut_obj_add_str(m, v, "kind", d->kind);
        if (yyjson_obj_get(item, "apiVersion") == NULL)
            yyjson_mut_obj_add_str(m, v, "apiVersion", d->api_version);
    }
    size_t len = 0;
    char *js = v ? yyjson_mut_val_write(v, 0, &len) : NULL;
    yyjson_mut_doc_free(m);
    if (js == NULL)
        return hr_err_set(err, HR_E_NOMEM, "out of memory");
    if (!d->first)
        hr_buf_putc(d->out, ',');
    d->first = false;
    hr_buf_append(d->out, js, len);
    free(js);
    return hr_buf_failed(d->out) ? hr_err_set(err, HR_E_NOMEM, "out of memory") : HR_OK;
}

hr_status hr_live_dump(hr_kclient *k, const char *node, hr_buf *out, hr_err *err)
{
    static const char *const kinds[] = {"Node",
                                        "Namespace",
                                        "LimitRange",
                                        "HeadroomConfig",
                                        "ResourceQuota",
                                        "VerticalPodAutoscaler",
                                        "Pod"};
    static const char *const versions[] = {
        "v1", "v1", "v1", "kube-headroom.dev/v1alpha1", "v1", "autoscaling.k8s.io/v1", "v1"};
    kind_list l[8];
    size_t n = plan_lists(node, l);
    hr_buf_puts(out, "{\"apiVersion\":\"v1\",\"kind\":\"List\",\"items\":[");
    dump_ctx d = {out, true, NULL, NULL, NULL, 0};
    hr_status st = HR_OK;
    for (size_t i = 0; st == HR_OK && i < n; i++) {
        d.kind = kinds[i];
        d.api_version = versions[i];
        st = each_item(k, l[i].path, l[i].query[0] ? l[i].query : NULL, l[i].optional, to_list, &d,
                       err);
    }
    /* Narrowed to one node: the other pods of the namespaces with a quota
     * on limits.cpu too, for their share (design §2.3, the quota cap). */
    d.kind = "Pod";
    d.api_version = "v1";
    for (size_t i = 0; st == HR_OK && node != NULL && i < d.n_quota_ns; i++) {
        char path[512], query[600];
        snprintf(path, sizeof path, "/api/v1/namespaces/%s/pods", d.quota_ns[i]);
        snprintf(query, sizeof query, "fieldSelector=spec.nodeName%%21%%3D%s", node);
        st = each_item(k, path, query, REQUIRED, to_list, &d, err);
    }
    for (size_t i = 0; i < d.n_quota_ns; i++)
        free(d.quota_ns[i]);
    free(d.quota_ns);
    if (st != HR_OK)
        return st;
    hr_buf_puts(out, "]}");
    return hr_buf_failed(out) ? hr_err_set(err, HR_E_NOMEM, "out of memory") : HR_OK;
}

hr_status hr_live_load_list(hr_cache *c, yyjson_val *root, hr_err *err)
{
    static const struct {
        const char *kind;
        hr_ckind ck;
    } kinds[] = {{"Node", HR_CK_NODE},
                 {"Namespace", HR_CK_NAMESPACE},
                 {"LimitRange", HR_CK_LIMITRANGE},
                 {"HeadroomConfig", HR_CK_CONFIG},
                 {"ResourceQuota", HR_CK_QUOTA},
                 {"VerticalPodAutoscaler", HR_CK_VPA},
                 {"Pod", HR_CK_POD}};
    yyjson_val *items = yyjson_obj_get(root, "items");
    if (!yyjson_is_arr(items))
        return hr_err_set(err, HR_E_INPUT, "not a List: no items array");
    hr_status st = HR_OK;
    for (size_t k = 0; st == HR_OK && k < sizeof kinds / sizeof kinds[0]; k++) {
        hr_csink *s = NULL;
        st = hr_csink_new(c, kinds[k].ck, &s, err);
        if (st != HR_OK)
            break;
        hr_wsink ws = hr_csink_wsink(s);
        size_t i, max;
        yyjson_val *it;
        yyjson_arr_foreach(items, i, max, it)
        {
            const char *kind = yyjson_get_str(yyjson_obj_get(it, "kind"));
            if (kind != NULL && strcmp(kind, kinds[k].kind) == 0 &&
                (st = to_sink(&ws, it, err)) != HR_OK)
                break;
        }
        hr_csink_free(s);
    }
    return st;
}
