/*
 * sink.c — objects from the watch into the compact cache (sink.h): each
 * one through its kind's decoder (kube/decode/), the result into the
 * cache. It reads no JSON itself: every field it needs, down to an
 * object's key and a pod's resize verdict, comes from a decoder, so there
 * is one place where the shape of a Kubernetes object is known.
 *
 * Objects come as JSON or, for the built-in kinds when the watch asked
 * for it and the server sent it, as protobuf (design §5 "Wire format"): an hr_sobj holds
 * either, and each step below reads it with the decoder of its encoding
 * (kube/decode/pb.h for protobuf), so what lands in the cache is the same
 * byte for byte. The HeadroomConfig and the VerticalPodAutoscaler (CRDs)
 * have no protobuf: their sinks take JSON only.
 *
 * The scratch arena is freed after every object: decoding a pod takes a
 * few hundred bytes, and nothing of it may outlive the call (the cache
 * copies what it keeps into its own packed form).
 *
 * An object that cannot be decoded is never silently dropped (design
 * §15): a pod is kept as an undecodable record (its node's booking is then
 * unknown), a Node becomes an unknown node, a ResourceQuota counts as one
 * that bounds limits.cpu, and a Namespace, LimitRange, VPA or
 * HeadroomConfig keeps its last good version. Each such object is reported once: the
 * first failure returns the decoder's message (naming the field) with what
 * was kept, for the watch to log, and counts headroom_decode_errors_total;
 * later failures of the same object (namespace/name/uid) are quiet until
 * it decodes, is deleted, or vanishes in a relist.
 */
#include "cache/sink.h"

#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/names.h"
#include "kube/decode/pb.h"
#include "kube/write/status_note.h"
#include "util/strmap.h"

struct hr_csink {
    hr_cache *c;
    hr_ckind kind;
    hr_arena a;
    hr_strmap bad;  /* "ns/name/uid" of objects reported undecodable -> relist round */
    uint64_t round; /* relist round, for sweeping bad */
    atomic_uint_fast64_t decode_errors;
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
    case HR_CK_VPA: return "/apis/autoscaling.k8s.io/v1/verticalpodautoscalers";
    default: return NULL;
    }
}

const char *hr_ckind_query(hr_ckind k)
{
    /* Only the singleton matters; other names are ignored anyway. */
    return k == HR_CK_CONFIG ? "fieldSelector=metadata.name%3D" HR_CONFIG_NAME : NULL;
}

bool hr_ckind_optional(hr_ckind k)
{
    return k == HR_CK_VPA;
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
    hr_strmap_init(&s->bad);
    atomic_init(&s->decode_errors, 0);
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
    hr_strmap_free(&s->bad);
    free(s);
}

uint64_t hr_csink_decode_errors(const hr_csink *s)
{
    return s ? atomic_load(&((hr_csink *)s)->decode_errors) : 0;
}

/* An object as it came: JSON (json set) or a protobuf message. */
typedef struct hr_sobj {
    yyjson_val *json;
    const uint8_t *pb;
    size_t pb_len;
} hr_sobj;

/* metadata.namespace and .name as NUL-terminated strings in the arena. */
static bool obj_key(hr_csink *s, const hr_sobj *o, const char **ns, const char **name)
{
    if (o->json)
        return hr_decode_key(o->json, &s->a, ns, name);
    const uint8_t *n, *m;
    size_t nl, ml;
    if (!hr_pb_key(o->pb, o->pb_len, &n, &nl, &m, &ml))
        return false;
    *ns = hr_arena_strndup(&s->a, (const char *)n, nl);
    *name = hr_arena_strndup(&s->a, (const char *)m, ml);
    return *ns && *name && strlen(*ns) == nl && strlen(*name) == ml;
}

/* metadata.uid and .resourceVersion, in place ("" when absent). */
static void obj_uid_rv(const hr_sobj *o, const char **uid, size_t *uid_len, const char **rv,
                       size_t *rv_len)
{
    *uid = *rv = "";
    *uid_len = *rv_len = 0;
    if (o->json) {
        yyjson_val *m = yyjson_obj_get(o->json, "metadata");
        yyjson_val *u = yyjson_obj_get(m, "uid"), *r = yyjson_obj_get(m, "resourceVersion");
        if (yyjson_is_str(u)) {
            *uid = yyjson_get_str(u);
            *uid_len = yyjson_get_len(u);
        }
        if (yyjson_is_str(r)) {
            *rv = yyjson_get_str(r);
            *rv_len = yyjson_get_len(r);
        }
        return;
    }
    hr_pbwmeta m;
    if (hr_pb_watch_meta(o->pb, o->pb_len, false, &m)) {
        *uid = (const char *)m.uid;
        *uid_len = m.uid_len;
        *rv = (const char *)m.rv;
        *rv_len = m.rv_len;
    }
}

/* What the cache keeps of a pod's status beside the pod. */
static hr_cpod_status pod_status(const hr_kpod_status *ks)
{
    return (hr_cpod_status){(uint8_t)ks->resize, ks->resizing,
                            hr_status_note_hash(ks->status_note, ks->status_note_len),
                            hr_status_note_mark(ks->status_note, ks->status_note_len)};
}

/* Protobuf into the cache, one decoder per kind (the JSON twin is
 * decode_put). */
static hr_status decode_put_pb(hr_csink *s, const hr_sobj *o, bool *decoded, hr_err *err)
{
    hr_status st;
    *decoded = false;
    switch (s->kind) {
    case HR_CK_POD: {
        hr_kpod p;
        hr_kpod_status ks;
        if ((st = hr_pbdecode_pod(o->pb, o->pb_len, &s->a, &p, &ks, err)))
            return st;
        *decoded = true;
        hr_cpod_status ps = pod_status(&ks);
        return hr_cache_put_pod(s->c, &p, &ps, err);
    }
    case HR_CK_NODE: {
        hr_knode n;
        if ((st = hr_pbdecode_node(o->pb, o->pb_len, &s->a, &n, err)))
            return st;
        *decoded = true;
        return hr_cache_put_node(s->c, &n, err);
    }
    case HR_CK_NAMESPACE: {
        hr_knamespace n;
        if ((st = hr_pbdecode_namespace(o->pb, o->pb_len, &s->a, &n, err)))
            return st;
        *decoded = true;
        return hr_cache_put_namespace(s->c, &n, err);
    }
    case HR_CK_LIMITRANGE: {
        hr_klimitrange l;
        if ((st = hr_pbdecode_limitrange(o->pb, o->pb_len, &s->a, &l, err)))
            return st;
        *decoded = true;
        return hr_cache_put_limitrange(s->c, &l, err);
    }
    case HR_CK_QUOTA: {
        hr_kquota q;
        if ((st = hr_pbdecode_resourcequota(o->pb, o->pb_len, &s->a, &q, err)))
            return st;
        *decoded = true;
        return hr_cache_put_quota(s->c, &q, err);
    }
    default:
        /* The watch never asks for protobuf of these (hr_csink_wsink). */
        return hr_err_set(err, HR_E_INPUT, "%s: no protobuf decoder", hr_ckind_str(s->kind));
    }
}

/* Decode obj and put it in the cache. *decoded tells a decoder's refusal
 * (false) from the cache's (true). */
static hr_status decode_put(hr_csink *s, const hr_sobj *o, bool *decoded, hr_err *err)
{
    if (!o->json)
        return decode_put_pb(s, o, decoded, err);
    yyjson_val *obj = o->json;
    hr_status st;
    *decoded = false;
    switch (s->kind) {
    case HR_CK_POD: {
        hr_kpod p;
        if ((st = hr_decode_pod(obj, &s->a, &p, err)))
            return st;
        *decoded = true;
        hr_kpod_status ks;
        hr_decode_pod_status(obj, &ks);
        hr_cpod_status ps = pod_status(&ks);
        return hr_cache_put_pod(s->c, &p, &ps, err);
    }
    case HR_CK_NODE: {
        hr_knode n;
        if ((st = hr_decode_node(obj, &s->a, &n, err)))
            return st;
        *decoded = true;
        return hr_cache_put_node(s->c, &n, err);
    }
    case HR_CK_NAMESPACE: {
        hr_knamespace n;
        if ((st = hr_decode_namespace(obj, &s->a, &n, err)))
            return st;
        *decoded = true;
        return hr_cache_put_namespace(s->c, &n, err);
    }
    case HR_CK_LIMITRANGE: {
        hr_klimitrange l;
        if ((st = hr_decode_limitrange(obj, &s->a, &l, err)))
            return st;
        *decoded = true;
        return hr_cache_put_limitrange(s->c, &l, err);
    }
    case HR_CK_QUOTA: {
        hr_kquota q;
        if ((st = hr_decode_resourcequota(obj, &s->a, &q, err)))
            return st;
        *decoded = true;
        return hr_cache_put_quota(s->c, &q, err);
    }
    case HR_CK_VPA: {
        hr_kvpa v;
        if ((st = hr_decode_vpa(obj, &s->a, &v, err)))
            return st;
        *decoded = true;
        return hr_cache_put_vpa(s->c, &v, err);
    }
    case HR_CK_CONFIG: {
        /* Its status first, whatever the spec says: a refused spec is when
         * the status has most to tell. A status we cannot read counts as
         * none (the writer then rewrites it whole). */
        const char *cns, *cname;
        if (obj_key(s, o, &cns, &cname) && strcmp(cname, HR_CONFIG_NAME) == 0) {
            hr_kcfg_status cs;
            hr_err serr;
            if (hr_decode_config_status(obj, &s->a, &cs, &serr) != HR_OK) {
                cs = (hr_kcfg_status){.generation = hr_decode_generation(obj, -1),
                                      .observed_generation = -1,
                                      .managed_pods = -1,
                                      .managed_nodes = -1};
            }
            if ((st = hr_cache_put_config_status(s->c, &cs, err))) {
                *decoded = true; /* the cache's refusal, not the decoder's */
                return st;
            }
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
            if (obj_key(s, o, &ns, &name) && strcmp(name, HR_CONFIG_NAME) == 0)
                hr_cache_config_invalid(s->c, err->msg);
            return st;
        }
        *decoded = true;
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

/* The key an object is reported under: namespace/name/uid (a recreated
 * object is a new one). NULL when it has no name or the arena is full. */
static const char *bad_key(hr_csink *s, const hr_sobj *o)
{
    const char *ns, *name, *uid, *rv;
    size_t ul, rvl;
    if (!obj_key(s, o, &ns, &name))
        return NULL;
    obj_uid_rv(o, &uid, &ul, &rv, &rvl);
    size_t nl = strlen(ns), ml = strlen(name);
    char *k = hr_arena_alloc(&s->a, nl + ml + ul + 3);
    if (!k)
        return NULL;
    memcpy(k, ns, nl);
    k[nl] = '/';
    memcpy(k + nl + 1, name, ml);
    k[nl + 1 + ml] = '/';
    if (ul)
        memcpy(k + nl + ml + 2, uid, ul);
    k[nl + ml + 2 + ul] = '\0';
    return k;
}

/* It decoded, or it is gone: a later failure is news again. */
static void bad_forget(hr_csink *s, const hr_sobj *o)
{
    if (s->bad.n == 0)
        return;
    const char *k = bad_key(s, o);
    if (k)
        hr_strmap_del(&s->bad, k, NULL);
}

/* Keep what can be kept of an object the decoder refused (the header
 * comment says what, per kind); *what receives a few words saying so. */
static hr_status keep_undecodable(hr_csink *s, const hr_sobj *o, const char *why, const char **what,
                                  hr_err *err)
{
    const char *ns, *name, *uid, *rv;
    size_t ul, rvl;
    if (!obj_key(s, o, &ns, &name)) {
        *what = "not kept: it has no name";
        return HR_OK;
    }
    obj_uid_rv(o, &uid, &ul, &rv, &rvl);
    const char *rvs = hr_arena_strndup(&s->a, rv, rvl);
    if (!rvs)
        return hr_err_set(err, HR_E_NOMEM, "%s %s/%s: out of memory", hr_ckind_str(s->kind), ns,
                          name);
    switch (s->kind) {
    case HR_CK_POD: {
        hr_kpod p;
        bool kept = o->json ? hr_decode_pod_undecodable(o->json, &s->a, why, &p)
                            : hr_pbdecode_pod_undecodable(o->pb, o->pb_len, &s->a, why, &p);
        if (!kept)
            return hr_err_set(err, HR_E_NOMEM, "pod %s/%s: out of memory", ns, name);
        p.meta.ns = ns; /* the key, as every other kind is kept under */
        p.meta.name = name;
        *what = p.node_unreadable ? "kept as undecodable; its node cannot be read: no CPU limit "
                                    "increase on any node until it decodes or is deleted"
                : p.node_name     ? "kept as undecodable: no CPU limit increase on its node until "
                                    "it decodes or is deleted (booking-unknown)"
                                  : "kept as undecodable (not bound to a node)";
        return hr_cache_put_pod(s->c, &p, NULL, err);
    }
    case HR_CK_NODE:
        *what = "kept as an unknown node: no CPU limit write on it until it decodes "
                "(node-unknown)";
        return hr_cache_put_node_undecodable(s->c, name, rvs, err);
    case HR_CK_QUOTA: {
        /* Fail closed: a quota we cannot read may bound limits.cpu. */
        hr_kquota q = {.meta = {.ns = ns, .name = name, .uid = "", .resource_version = rvs},
                       .limits_cpu = true,
                       .hard_cpu = 0,
                       .used_cpu = 0}; /* no room: the quota cap keeps every pod's total */
        *what = "counted as bounding limits.cpu";
        return hr_cache_put_quota(s->c, &q, err);
    }
    default:
        /* Namespaces, LimitRanges, VPAs, the HeadroomConfig: the last good
         * version stays (none: as if not seen), also through a relist. */
        *what = "the last version decoded stays in force";
        hr_cache_touch(s->c, s->kind, ns, name);
        return HR_OK;
    }
}

static hr_status undecodable(hr_csink *s, const hr_sobj *o, hr_err *err)
{
    char why[HR_ERR_MSG_MAX];
    snprintf(why, sizeof why, "%s", err->msg);
    const char *what = "";
    hr_err kerr;
    hr_err_clear(&kerr);
    hr_status kst = keep_undecodable(s, o, why, &what, &kerr);
    const char *k = bad_key(s, o);
    uint64_t *seen = k ? hr_strmap_get(&s->bad, k) : NULL;
    if (seen) {
        *seen = s->round; /* still there: not swept at the end of a relist */
        hr_err_clear(err);
        return kst == HR_OK ? HR_OK : hr_err_set(err, kst, "%s", kerr.msg);
    }
    /* First failure of this object: count it, and hand the message back
     * for the watch to log once. Without a key it cannot be remembered:
     * reported every time (the API server never serves such an object). */
    atomic_fetch_add(&s->decode_errors, 1);
    if (k && !hr_strmap_put(&s->bad, k, s->round))
        k = NULL; /* out of memory: reported again next time, no harm */
    if (kst != HR_OK)
        return hr_err_set(err, kst, "%s; not kept: %s", why, kerr.msg);
    return hr_err_set(err, HR_E_INPUT, "%s; %s", why, what);
}

static hr_status upsert(hr_csink *s, const hr_sobj *o, hr_err *err)
{
    bool decoded;
    hr_status st = decode_put(s, o, &decoded, err);
    if (st != HR_OK && !decoded) {
        st = undecodable(s, o, err);
    } else if (st != HR_OK) {
        /* Decoded but the cache refused it (out of memory): what the
         * cache had stays, through a relist too. */
        const char *ns, *name;
        if (obj_key(s, o, &ns, &name))
            hr_cache_touch(s->c, s->kind, ns, name);
    } else {
        bad_forget(s, o);
    }
    scratch_done(s);
    return st;
}

static hr_status sink_upsert(void *ud, yyjson_val *obj, hr_err *err)
{
    hr_sobj o = {obj, NULL, 0};
    return upsert(ud, &o, err);
}

static hr_status sink_upsert_pb(void *ud, const uint8_t *raw, size_t len, hr_err *err)
{
    hr_sobj o = {NULL, raw, len};
    return upsert(ud, &o, err);
}

static hr_status sink_remove_obj(hr_csink *s, const hr_sobj *o, hr_err *err)
{
    const char *ns, *name;
    hr_status st = HR_OK;
    bad_forget(s, o);
    if (obj_key(s, o, &ns, &name))
        hr_cache_del(s->c, s->kind, ns, name);
    else
        st =
            hr_err_set(err, HR_E_INPUT, "%s: deleted object without a name", hr_ckind_str(s->kind));
    scratch_done(s);
    return st;
}

static hr_status sink_remove(void *ud, yyjson_val *obj, hr_err *err)
{
    hr_sobj o = {obj, NULL, 0};
    return sink_remove_obj(ud, &o, err);
}

static hr_status sink_remove_pb(void *ud, const uint8_t *raw, size_t len, hr_err *err)
{
    hr_sobj o = {NULL, raw, len};
    return sink_remove_obj(ud, &o, err);
}

static void sink_relist_begin(void *ud)
{
    hr_csink *s = ud;
    s->round++;
    hr_cache_relist_begin(s->c, s->kind);
}

static void sink_relist_end(void *ud, bool complete)
{
    hr_csink *s = ud;
    hr_cache_relist_end(s->c, s->kind, complete);
    if (!complete)
        return;
    /* What the list did not show is gone: forget it. Deleting while
     * iterating is safe with this map (a tombstone, no rehash on delete);
     * the key is copied first because the delete frees the map's own. */
    size_t i = 0;
    const char *k;
    uint64_t v;
    while (hr_strmap_next(&s->bad, &i, &k, &v)) {
        const char *copy = v != s->round ? hr_arena_strdup(&s->a, k) : NULL;
        if (copy)
            hr_strmap_del(&s->bad, copy, NULL);
    }
    scratch_done(s);
}

hr_wsink hr_csink_wsink(hr_csink *s)
{
    /* The HeadroomConfig and the VPA are custom resources: no protobuf
     * exists for them. */
    bool pb = s->kind != HR_CK_CONFIG && s->kind != HR_CK_VPA;
    return (hr_wsink){s,
                      sink_relist_begin,
                      sink_upsert,
                      sink_remove,
                      sink_relist_end,
                      pb ? sink_upsert_pb : NULL,
                      pb ? sink_remove_pb : NULL};
}
