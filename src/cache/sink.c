/*
 * sink.c — JSON objects from the watch into the compact cache (sink.h).
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
    case HR_CK_POD:
        return "/api/v1/pods";
    case HR_CK_NODE:
        return "/api/v1/nodes";
    case HR_CK_NAMESPACE:
        return "/api/v1/namespaces";
    case HR_CK_LIMITRANGE:
        return "/api/v1/limitranges";
    case HR_CK_CONFIG:
        return "/apis/" HR_GROUP "/" HR_VERSION "/headroomconfigs";
    case HR_CK_QUOTA:
        return "/api/v1/resourcequotas";
    default:
        return NULL;
    }
}

const char *hr_ckind_query(hr_ckind k)
{
    /* Only the singleton matters; other names are ignored anyway. */
    return k == HR_CK_CONFIG ? "fieldSelector=metadata.name%3D" HR_CONFIG_NAME
                             : NULL;
}

hr_status hr_csink_new(hr_cache *c, hr_ckind kind, hr_csink **out,
                       hr_err *err)
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
static bool obj_key(hr_csink *s, yyjson_val *obj, const char **ns,
                    const char **name)
{
    yyjson_val *m = yyjson_obj_get(obj, "metadata");
    yyjson_val *n = yyjson_obj_get(m, "name");
    yyjson_val *x = yyjson_obj_get(m, "namespace");
    if (!yyjson_is_str(n) || !yyjson_get_len(n))
        return false;
    *name = hr_arena_strndup(&s->a, yyjson_get_str(n), yyjson_get_len(n));
    *ns = yyjson_is_str(x)
              ? hr_arena_strndup(&s->a, yyjson_get_str(x), yyjson_get_len(x))
              : "";
    return *name && *ns;
}

/* The kubelet's resize verdict, which the pod decoder leaves out. */
static hr_cpod_status pod_status(yyjson_val *obj)
{
    hr_cpod_status st = {HR_RS_NONE, false, 0};
    yyjson_val *note = yyjson_obj_get(
        yyjson_obj_get(yyjson_obj_get(obj, "metadata"), "annotations"), HR_ANN_STATUS);
    if (yyjson_is_str(note))
        st.status_hash = hr_status_note_hash(yyjson_get_str(note), yyjson_get_len(note));
    yyjson_val *conds =
        yyjson_obj_get(yyjson_obj_get(obj, "status"), "conditions");
    size_t i, max;
    yyjson_val *e;
    yyjson_arr_foreach(conds, i, max, e) {
        yyjson_val *t = yyjson_obj_get(e, "type");
        if (yyjson_equals_str(t, "PodResizePending")) {
            yyjson_val *r = yyjson_obj_get(e, "reason");
            if (yyjson_equals_str(r, "Infeasible"))
                st.resize = HR_RS_INFEASIBLE;
            else if (yyjson_equals_str(r, "Deferred"))
                st.resize = HR_RS_DEFERRED;
        } else if (yyjson_equals_str(t, "PodResizeInProgress")) {
            st.resizing = true;
        }
    }
    return st;
}

static hr_status decode_put(hr_csink *s, yyjson_val *obj, hr_err *err)
{
    hr_status st;
    switch (s->kind) {
    case HR_CK_POD: {
        hr_kpod p;
        if ((st = hr_decode_pod(obj, &s->a, &p, err)))
            return st;
        hr_cpod_status ps = pod_status(obj);
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
                yyjson_val *g = yyjson_obj_get(yyjson_obj_get(obj, "metadata"), "generation");
                cs = (hr_kcfg_status){.generation = yyjson_is_int(g) ? yyjson_get_sint(g) : -1,
                                      .observed_generation = -1, .managed_pods = -1,
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
            if (obj_key(s, obj, &ns, &name) &&
                strcmp(name, HR_CONFIG_NAME) == 0)
                hr_cache_config_invalid(s->c, err->msg);
            return st;
        }
        yyjson_val *g = yyjson_obj_get(yyjson_obj_get(obj, "metadata"),
                                       "generation");
        int64_t gen = yyjson_is_int(g) ? yyjson_get_sint(g) : 0;
        return hr_cache_put_config(s->c, &k, gen, &ca, err);
    }
    default:
        return hr_err_set(err, HR_E_INPUT, "sink: unknown kind");
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
        st = hr_err_set(err, HR_E_INPUT, "%s: deleted object without a name",
                        hr_ckind_str(s->kind));
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
    return (hr_wsink){s, sink_relist_begin, sink_upsert, sink_remove,
                      sink_relist_end};
}
