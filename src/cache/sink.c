/*
 * sink.c — objects from the watch into the compact cache (sink.h): each
 * one through its kind's decoder (kube/decode/), the result into the
 * cache. It reads no JSON itself: every field it needs, down to an
 * object's key and a pod's resize verdict, comes from a decoder, so there
 * is one place where the shape of a Kubernetes object is known.
 *
 * The scratch arena is freed after every object: decoding a pod takes a
 * few hundred bytes, and nothing of it may outlive the call (the cache
 * copies what it keeps into its own packed form).
 */
#include "cache/sink.h"

#include <stdlib.h>
#include <string.h>

#include "core/names.h"
#include "kube/write/status_note.h"

struct hr_csink {
    hr_cache *c;
    hr_ckind kind;
    hr_arena a;
};

const char *hr_ckind_path(hr_ckind k)
{
    switch (k) {
    case HR_CK_POD: return "/api/v1/pods";
    case HR_CK_NODE: return "/api/v1/nodes";
    case HR_CK_NAMESPACE: return "/api/v1/namespaces";
    case HR_CK_LIMITRANGE: return "/api/v1/limitranges";
    case HR_CK_CONFIG: return "/apis/" HR_GROUP "/" HR_VERSION "/headroomconfigs";
    case HR_CK_QUOTA: return "/api/v1/resourcequotas";
    default: return NULL;
    }
}

const char *hr_ckind_query(hr_ckind k)
{
    /* Only the singleton matters; other names are ignored anyway. */
    return k == HR_CK_CONFIG ? "fieldSelector=metadata.name%3D" HR_CONFIG_NAME : NULL;
}

hr_status hr_csink_new(hr_cache *c, hr_ckind kind, hr_csink **out, hr_err *err)
{
    *out = NULL;
    if ((unsigned)kind >= HR_CK_COUNT_)
        return hr_err_set(err, HR_E_INPUT, "sink: unknown kind");
    hr_csink *s = calloc(1, sizeof *s);
    if (!s)
        return hr_err_set(err, HR_E_NOMEM, "sink: out of memory");
    s->c = c;
    s->kind = kind;
    /* One chunk holds a typical pod's decoded view; a hostile object is
     * bounded by the decoder's own limits and this cap. */
    hr_arena_init(&s->a, 16384);
    hr_arena_set_limit(&s->a, (size_t)64 << 20);
    *out = s;
    return HR_OK;
}

void hr_csink_free(hr_csink *s)
{
    if (!s)
        return;
    hr_arena_free(&s->a);
    free(s);
}

/* metadata.namespace and .name as NUL-terminated strings in the arena. */
static bool obj_key(hr_csink *s, yyjson_val *obj, const char **ns, const char **name)
{
    return hr_decode_key(obj, &s->a, ns, name);
}

static hr_status decode_put(hr_csink *s, yyjson_val *obj, hr_err *err)
{
    hr_status st;
    switch (s->kind) {
    case HR_CK_POD: {
        hr_kpod p;
        if ((st = hr_decode_pod(obj, &s->a, &p, err)))
            return st;
        hr_kpod_status ks;
        hr_decode_pod_status(obj, &ks);
        hr_cpod_status ps = {(uint8_t)ks.resize, ks.resizing,
                             hr_status_note_hash(ks.status_note, ks.status_note_len)};
        return hr_cache_put_pod(s->c, &p, &ps, err);
    }
    case HR_CK_NODE: {
        hr_knode n;
        if ((st = hr_decode_node(obj, &s->a, &n, err)))
            return st;
        return hr_cache_put_node(s->c, &n, err);
    }
    case HR_CK_NAMESPACE: {
        hr_knamespace n;
        if ((st = hr_decode_namespace(obj, &s->a, &n, err)))
            return st;
        return hr_cache_put_namespace(s->c, &n, err);
    }
    case HR_CK_LIMITRANGE: {
        hr_klimitrange l;
        if ((st = hr_decode_limitrange(obj, &s->a, &l, err)))
            return st;
        return hr_cache_put_limitrange(s->c, &l, err);
    }
    case HR_CK_QUOTA: {
        hr_kquota q;
        if ((st = hr_decode_resourcequota(obj, &s->a, &q, err)))
            return st;
        return hr_cache_put_quota(s->c, &q, err);
    }
    case HR_CK_CONFIG: {
        /* Its status first, whatever the spec says: a refused spec is when
         * the status has most to tell. A status we cannot read counts as
         * none (the writer then rewrites it whole). */
        const char *cns, *cname;
        if (obj_key(s, obj, &cns, &cname) && strcmp(cname, HR_CONFIG_NAME) == 0) {
            hr_kcfg_status cs;
            hr_err serr;
            if (hr_decode_config_status(obj, &s->a, &cs, &serr) != HR_OK) {
                cs = (hr_kcfg_status){.generation = hr_decode_generation(obj, -1),
                                      .observed_generation = -1,
                                      .managed_pods = -1,
                                      .managed_nodes = -1};
            }
            if ((st = hr_cache_put_config_status(s->c, &cs, err)))
                return st;
        }
        /* The config's pointers must outlive this call: its own arena,
         * handed over to the cache. */
        hr_arena ca;
        hr_arena_init(&ca, 4096);
        hr_arena_set_limit(&ca, (size_t)16 << 20);
        hr_kconfig k;
        st = hr_decode_config(obj, &ca, &k, err);
        if (st) {
            hr_arena_free(&ca);
            const char *ns, *name;
            if (obj_key(s, obj, &ns, &name) && strcmp(name, HR_CONFIG_NAME) == 0)
                hr_cache_config_invalid(s->c, err->msg);
            return st;
        }
        return hr_cache_put_config(s->c, &k, hr_decode_generation(obj, 0), &ca, err);
    }
    default: return hr_err_set(err, HR_E_INPUT, "sink: unknown kind");
    }
}

/* Nothing decoded outlives its call, but giving the scratch back after
 * every object costs a malloc/free pair per event; letting a few hundred
 * objects share it first does not (bounded: at most SCRATCH_KEEP bytes
 * stay held between events). */
#define SCRATCH_KEEP ((size_t)256 << 10)

static void scratch_done(hr_csink *s)
{
    if (hr_arena_bytes(&s->a) > SCRATCH_KEEP)
        hr_arena_free(&s->a);
}

static hr_status sink_upsert(void *ud, yyjson_val *obj, hr_err *err)
{
    hr_csink *s = ud;
    hr_status st = decode_put(s, obj, err);
    if (st != HR_OK) {
        const char *ns, *name;
        if (obj_key(s, obj, &ns, &name))
            hr_cache_touch(s->c, s->kind, ns, name);
    }
    scratch_done(s);
    return st;
}

static hr_status sink_remove(void *ud, yyjson_val *obj, hr_err *err)
{
    hr_csink *s = ud;
    const char *ns, *name;
    hr_status st = HR_OK;
    if (obj_key(s, obj, &ns, &name))
        hr_cache_del(s->c, s->kind, ns, name);
    else
        st =
            hr_err_set(err, HR_E_INPUT, "%s: deleted object without a name", hr_ckind_str(s->kind));
    scratch_done(s);
    return st;
}

static void sink_relist_begin(void *ud)
{
    hr_csink *s = ud;
    hr_cache_relist_begin(s->c, s->kind);
}

static void sink_relist_end(void *ud, bool complete)
{
    hr_csink *s = ud;
    hr_cache_relist_end(s->c, s->kind, complete);
}

hr_wsink hr_csink_wsink(hr_csink *s)
{
    return (hr_wsink){s, sink_relist_begin, sink_upsert, sink_remove, sink_relist_end};
}
