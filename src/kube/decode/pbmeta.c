/*
 * pbmeta.c — the protobuf decoders' shared readings (pbmeta.h): typed
 * fields with errors that name the field, map entries, ObjectMeta.
 *
 * Field numbers are Kubernetes' (k8s.io/apimachinery meta/v1
 * generated.proto): ObjectMeta name 1, namespace 3, uid 5,
 * resourceVersion 6, labels 11 (map<string, string>: key 1, value 2);
 * resource.Quantity is a message with its text as field 1.
 */
#include "kube/decode/pbmeta.h"

#include <string.h>

enum { META_NAME = 1, META_NAMESPACE = 3, META_UID = 5, META_RV = 6, META_LABELS = 11 };

hr_status hr_pbfail(const hr_kctx *c, const hr_jpath *p)
{
    return hr_kfail(c, p, HR_E_INPUT, "malformed protobuf");
}

hr_status hr_pbfail_wt(const hr_kctx *c, const hr_jpath *p, const char *want, hr_pbwt wt)
{
    return hr_kfail(c, p, HR_E_INPUT, "expected a %s field, got wire type %d", want, (int)wt);
}

hr_status hr_pb_str_at(const hr_kctx *c, const hr_jpath *p, hr_pbr *r, hr_pbwt wt, const char **out)
{
    const uint8_t *s = NULL;
    size_t n = 0;
    hr_status st = hr_pb_bytes_at(c, p, r, wt, &s, &n);
    if (st)
        return st;
    char *copy = hr_arena_strndup(c->a, (const char *)s, n);
    if (!copy)
        return hr_knomem(c);
    *out = copy;
    return HR_OK;
}

hr_status hr_pb_varint_at(const hr_kctx *c, const hr_jpath *p, hr_pbr *r, hr_pbwt wt, uint64_t *out)
{
    if (wt != HR_PB_VARINT)
        return hr_pbfail_wt(c, p, "varint", wt);
    if (!hr_pb_varint(r, out))
        return hr_pbfail(c, p);
    return HR_OK;
}

bool hr_pb_map_entry(hr_pbr e, bool quantity, const uint8_t **k, size_t *kl, const uint8_t **v,
                     size_t *vl)
{
    static const uint8_t empty[1];
    *k = *v = empty;
    *kl = *vl = 0;
    while (hr_pbr_more(&e)) {
        uint32_t f;
        hr_pbwt wt;
        if (!hr_pb_tag(&e, &f, &wt))
            return false;
        if ((f == 1 || f == 2) && wt == HR_PB_LEN) {
            const uint8_t *s;
            size_t n;
            if (!hr_pb_len(&e, &s, &n))
                return false;
            if (f == 1) {
                *k = s;
                *kl = n;
            } else if (!quantity) {
                *v = s;
                *vl = n;
            } else {
                /* Quantity{string = 1}: its last text. */
                hr_pbr q = hr_pbr_of(s, n);
                *v = empty;
                *vl = 0;
                while (hr_pbr_more(&q)) {
                    uint32_t qf;
                    hr_pbwt qwt;
                    if (!hr_pb_tag(&q, &qf, &qwt))
                        return false;
                    if (qf == 1 && qwt == HR_PB_LEN) {
                        if (!hr_pb_len(&q, v, vl))
                            return false;
                    } else if (!hr_pb_skip(&q, qwt)) {
                        return false;
                    }
                }
            }
        } else if (f == 1 || f == 2 || !hr_pb_skip(&e, wt)) {
            return false; /* a key or value not length-delimited, or malformed */
        }
    }
    return true;
}

hr_status hr_pb_quantity_in(const hr_kctx *c, const hr_jpath *p, hr_pbr m, uint32_t field,
                            const char *key, hr_qkind kind, int64_t *out)
{
    *out = HR_NONE;
    const uint8_t *qs = NULL;
    size_t ql = 0;
    hr_status st;
    while (hr_pbr_more(&m)) {
        uint32_t f;
        hr_pbwt wt;
        if (!hr_pb_tag(&m, &f, &wt))
            return hr_pbfail(c, p);
        if (f != field) {
            if ((st = hr_pb_skip_at(c, p, &m, wt)))
                return st;
            continue;
        }
        hr_pbr e;
        if ((st = hr_pb_sub_at(c, p, &m, wt, &e)))
            return st;
        const uint8_t *k, *v;
        size_t kl, vl;
        if (!hr_pb_map_entry(e, true, &k, &kl, &v, &vl))
            return hr_pbfail(c, p);
        if (hr_pb_eq(k, kl, key)) {
            qs = v;
            ql = vl;
        }
    }
    if (!qs)
        return HR_OK;
    hr_jpath pk = HR_JP_KEY(p, key);
    return hr_kquantity(c, &pk, (const char *)qs, ql, kind, out);
}

static hr_status meta_labels(const hr_kctx *c, hr_pbr meta, uint32_t n, hr_labels *out)
{
    hr_jpath pm = HR_JP_KEY(NULL, "metadata");
    hr_jpath pl = HR_JP_KEY(&pm, "labels");
    const char **kv = hr_arena_alloc(c->a, 2 * (size_t)n * sizeof *kv);
    if (!kv)
        return hr_knomem(c);
    uint32_t i = 0;
    while (hr_pbr_more(&meta) && i < n) {
        uint32_t f;
        hr_pbwt wt;
        if (!hr_pb_tag(&meta, &f, &wt))
            return hr_pbfail(c, &pm);
        if (f != META_LABELS) {
            if (!hr_pb_skip(&meta, wt))
                return hr_pbfail(c, &pm);
            continue;
        }
        hr_pbr e;
        const uint8_t *k, *v;
        size_t kl, vl;
        if (!hr_pb_sub(&meta, &e) || !hr_pb_map_entry(e, false, &k, &kl, &v, &vl))
            return hr_pbfail(c, &pl);
        /* A key sent twice is kept twice, as the JSON decoder keeps a
         * key written twice (the server never sends either). */
        kv[2 * i] = hr_arena_strndup(c->a, (const char *)k, kl);
        kv[2 * i + 1] = hr_arena_strndup(c->a, (const char *)v, vl);
        if (!kv[2 * i] || !kv[2 * i + 1])
            return hr_knomem(c);
        i++;
    }
    *out = (hr_labels){kv, i};
    return HR_OK;
}

/* Widen [*from, *to) to cover [a, b). */
static void cover(const uint8_t **from, const uint8_t **to, const uint8_t *a, const uint8_t *b)
{
    if (!*from || a < *from)
        *from = a;
    if (!*to || b > *to)
        *to = b;
}

hr_status hr_pb_meta(hr_kctx *c, hr_pbr meta, bool present, bool namespaced, hr_kmeta *m,
                     hr_pbr *pod_part)
{
    m->ns = "";
    m->name = "";
    m->uid = "";
    m->resource_version = "";
    m->labels = (hr_labels){NULL, 0};
    hr_jpath pm = HR_JP_KEY(NULL, "metadata");
    if (!present)
        return hr_kfail(c, &pm, HR_E_INPUT, "missing");
    const uint8_t *name = NULL, *ns = NULL, *uid = NULL, *rv = NULL;
    size_t name_l = 0, ns_l = 0, uid_l = 0, rv_l = 0;
    uint32_t n_labels = 0;
    hr_pbr r = meta;
    hr_status st;
    const uint8_t *lab_from = NULL, *lab_to = NULL, *pod_from = NULL, *pod_to = NULL;
    while (hr_pbr_more(&r)) {
        uint32_t f;
        hr_pbwt wt;
        const uint8_t *at = r.p;
        if (!hr_pb_tag(&r, &f, &wt))
            return hr_pbfail(c, &pm);
        const uint8_t **s = NULL;
        size_t *l = NULL;
        const char *what = NULL;
        switch (f) {
        case META_NAME: s = &name, l = &name_l, what = "name"; break;
        case META_NAMESPACE: s = &ns, l = &ns_l, what = "namespace"; break;
        case META_UID: s = &uid, l = &uid_l, what = "uid"; break;
        case META_RV: s = &rv, l = &rv_l, what = "resourceVersion"; break;
        case META_LABELS:
            if (n_labels == UINT32_MAX / 2) {
                hr_jpath pl = HR_JP_KEY(&pm, "labels");
                return hr_kfail(c, &pl, HR_E_INPUT, "too many entries");
            }
            n_labels++;
            what = "labels";
            break;
        default: break;
        }
        hr_jpath pf = HR_JP_KEY(&pm, what ? what : "?");
        if (s) {
            if ((st = hr_pb_bytes_at(c, &pf, &r, wt, s, l)))
                return st;
        } else if (what && wt != HR_PB_LEN) {
            return hr_pbfail(c, &pf);
        } else if ((st = hr_pb_skip_at(c, &pf, &r, wt))) {
            return st;
        }
        if (f == META_LABELS)
            cover(&lab_from, &lab_to, at, r.p);
        else if (f == 9 || f == 12 || f == 13 || f == 17)
            cover(&pod_from, &pod_to, at, r.p);
    }
    if (pod_part)
        *pod_part =
            pod_from ? hr_pbr_of(pod_from, (size_t)(pod_to - pod_from)) : hr_pbr_of(NULL, 0);
    hr_jpath pns = HR_JP_KEY(&pm, "namespace");
    hr_jpath pname = HR_JP_KEY(&pm, "name");
    if (ns && !(m->ns = hr_arena_strndup(c->a, (const char *)ns, ns_l)))
        return hr_knomem(c);
    c->ns = m->ns;
    if (!name || name_l == 0 || !name[0])
        return hr_kfail(c, &pname, HR_E_INPUT, "missing");
    char *nm = hr_arena_strndup(c->a, (const char *)name, name_l);
    if (!nm)
        return hr_knomem(c);
    m->name = nm;
    c->name = nm;
    if (namespaced && !m->ns[0])
        return hr_kfail(c, &pns, HR_E_INPUT, "missing");
    if ((uid && !(m->uid = hr_arena_strndup(c->a, (const char *)uid, uid_l))) ||
        (rv && !(m->resource_version = hr_arena_strndup(c->a, (const char *)rv, rv_l))))
        return hr_knomem(c);
    /* The labels again, for their text: only the bytes they span (not
     * the managedFields after them). */
    return n_labels ? meta_labels(c, hr_pbr_of(lab_from, (size_t)(lab_to - lab_from)), n_labels,
                                  &m->labels)
                    : HR_OK;
}

hr_status hr_pb_object(const hr_kctx *c, hr_pbr obj, hr_pbr parts[3], bool has[3])
{
    static const char *const names[3] = {"metadata", "spec", "status"};
    for (int i = 0; i < 3; i++) {
        parts[i] = hr_pbr_of(NULL, 0);
        has[i] = false;
    }
    hr_status st;
    while (hr_pbr_more(&obj)) {
        uint32_t f;
        hr_pbwt wt;
        if (!hr_pb_tag(&obj, &f, &wt))
            return hr_pbfail(c, NULL);
        if (f >= 1 && f <= 3) {
            hr_jpath p = HR_JP_KEY(NULL, names[f - 1]);
            if ((st = hr_pb_sub_at(c, &p, &obj, wt, &parts[f - 1])))
                return st;
            has[f - 1] = true;
        } else if ((st = hr_pb_skip_at(c, NULL, &obj, wt))) {
            return st;
        }
    }
    return HR_OK;
}
