/*
 * pbobj.c — the envelopes of the protobuf encoding (pbobj.h), checked
 * against the API server's bytes: a GET's body is "k8s\0" followed by a
 * runtime.Unknown whose raw is the object; a watch stream is frames of a
 * 4-byte big-endian length and a WatchEvent whose object's raw is again
 * "k8s\0" + Unknown (k8s.io/apimachinery runtime and meta/v1
 * generated.proto: Unknown typeMeta 1, raw 2, contentEncoding 3,
 * contentType 4; TypeMeta apiVersion 1, kind 2; WatchEvent type 1,
 * object 2; RawExtension raw 1; ListMeta resourceVersion 2, continue 3;
 * Status message 3, reason 4, code 6).
 */
#include "kube/decode/pbobj.h"

#include <string.h>

static const uint8_t empty[1];

static hr_status bad(hr_err *err, const char *what)
{
    return hr_err_set(err, HR_E_INPUT, "protobuf: %s", what);
}

/* Walk message r: for each field in 1..8 of wire type LEN, its bytes to
 * s[f-1]/l[f-1] (the last one wins); varints of those fields to v[f-1]
 * (when v is not NULL); everything else skipped. False when malformed or
 * a field in 1..8 has an unexpected wire type. */
static bool fields(hr_pbr r, uint32_t want_len, uint32_t want_varint, const uint8_t **s, size_t *l,
                   uint64_t *v)
{
    while (hr_pbr_more(&r)) {
        uint32_t f;
        hr_pbwt wt;
        if (!hr_pb_tag(&r, &f, &wt))
            return false;
        bool is_len = f <= 8 && (want_len >> f & 1);
        bool is_var = f <= 8 && (want_varint >> f & 1);
        if (is_len) {
            if (wt != HR_PB_LEN || !hr_pb_len(&r, &s[f - 1], &l[f - 1]))
                return false;
        } else if (is_var) {
            if (wt != HR_PB_VARINT || !hr_pb_varint(&r, &v[f - 1]))
                return false;
        } else if (!hr_pb_skip(&r, wt)) {
            return false;
        }
    }
    return true;
}

#define BIT(f) (1u << (f))

hr_status hr_pb_unwrap(const uint8_t *buf, size_t len, hr_pbobj *out, hr_err *err)
{
    *out = (hr_pbobj){empty, 0, empty, empty, 0, 0};
    if (len < HR_PB_MAGIC_LEN || memcmp(buf, HR_PB_MAGIC, HR_PB_MAGIC_LEN) != 0)
        return bad(err, "not a protobuf object (no k8s\\0 magic)");
    const uint8_t *s[8] = {empty, empty, empty, empty, empty, empty, empty, empty};
    size_t l[8] = {0};
    hr_pbr r = hr_pbr_of(buf + HR_PB_MAGIC_LEN, len - HR_PB_MAGIC_LEN);
    if (!fields(r, BIT(1) | BIT(2) | BIT(3) | BIT(4), 0, s, l, NULL))
        return bad(err, "malformed runtime.Unknown");
    if (l[2])
        return bad(err, "compressed object (contentEncoding set): not supported");
    if (l[3] && !hr_pb_eq(s[3], l[3], "application/vnd.kubernetes.protobuf"))
        return bad(err, "object of another content type inside runtime.Unknown");
    const uint8_t *t[8] = {empty, empty, empty, empty, empty, empty, empty, empty};
    size_t tl[8] = {0};
    if (!fields(hr_pbr_of(s[0], l[0]), BIT(1) | BIT(2), 0, t, tl, NULL))
        return bad(err, "malformed typeMeta");
    *out = (hr_pbobj){s[1], l[1], t[0], t[1], tl[0], tl[1]};
    return HR_OK;
}

hr_status hr_pb_watch_event(const uint8_t *buf, size_t len, hr_pbevent *out, hr_err *err)
{
    *out = (hr_pbevent){empty, 0, {empty, 0, empty, empty, 0, 0}};
    const uint8_t *s[8] = {empty, empty, empty, empty, empty, empty, empty, empty};
    size_t l[8] = {0};
    if (!fields(hr_pbr_of(buf, len), BIT(1) | BIT(2), 0, s, l, NULL))
        return bad(err, "malformed watch event");
    if (!l[0])
        return bad(err, "watch event without a type");
    const uint8_t *x[8] = {empty, empty, empty, empty, empty, empty, empty, empty};
    size_t xl[8] = {0};
    if (!fields(hr_pbr_of(s[1], l[1]), BIT(1), 0, x, xl, NULL))
        return bad(err, "malformed watch event object (RawExtension)");
    out->type = s[0];
    out->type_len = l[0];
    return hr_pb_unwrap(x[0], xl[0], &out->obj, err);
}

hr_status hr_pb_list_open(const uint8_t *raw, size_t len, hr_pblist *out, hr_err *err)
{
    *out = (hr_pblist){hr_pbr_of(raw, len), empty, empty, 0, 0};
    const uint8_t *s[8] = {empty, empty, empty, empty, empty, empty, empty, empty};
    size_t l[8] = {0};
    hr_pbr r = hr_pbr_of(raw, len);
    /* One look at the whole list (items skipped by their length) for its
     * metadata, wherever it is. */
    if (!fields(r, BIT(1), 0, s, l, NULL))
        return bad(err, "malformed list");
    const uint8_t *m[8] = {empty, empty, empty, empty, empty, empty, empty, empty};
    size_t ml[8] = {0};
    if (!fields(hr_pbr_of(s[0], l[0]), BIT(2) | BIT(3), 0, m, ml, NULL))
        return bad(err, "malformed list metadata");
    out->resource_version = m[1];
    out->resource_version_len = ml[1];
    out->cont = m[2];
    out->cont_len = ml[2];
    return HR_OK;
}

bool hr_pb_list_next(hr_pblist *l, const uint8_t **item, size_t *len, hr_status *st, hr_err *err)
{
    *st = HR_OK;
    while (hr_pbr_more(&l->rest)) {
        uint32_t f;
        hr_pbwt wt;
        if (!hr_pb_tag(&l->rest, &f, &wt)) {
            *st = bad(err, "malformed list");
            return false;
        }
        if (f == 2) {
            if (wt != HR_PB_LEN || !hr_pb_len(&l->rest, item, len)) {
                *st = bad(err, "malformed list item");
                return false;
            }
            return true;
        }
        if (!hr_pb_skip(&l->rest, wt)) {
            *st = bad(err, "malformed list");
            return false;
        }
    }
    return false;
}

hr_status hr_pb_status(const uint8_t *raw, size_t len, hr_pbstatus *out, hr_err *err)
{
    *out = (hr_pbstatus){0, empty, empty, 0, 0};
    const uint8_t *s[8] = {empty, empty, empty, empty, empty, empty, empty, empty};
    size_t l[8] = {0};
    uint64_t v[8] = {0};
    if (!fields(hr_pbr_of(raw, len), BIT(3) | BIT(4), BIT(6), s, l, v))
        return bad(err, "malformed Status");
    /* int32 travels as a 64-bit varint, sign-extended. */
    out->code = (int32_t)(uint32_t)v[5];
    out->message = s[2];
    out->message_len = l[2];
    out->reason = s[3];
    out->reason_len = l[3];
    return HR_OK;
}

bool hr_pb_key(const uint8_t *raw, size_t len, const uint8_t **ns, size_t *ns_len,
               const uint8_t **name, size_t *name_len)
{
    const uint8_t *s[8] = {empty, empty, empty, empty, empty, empty, empty, empty};
    size_t l[8] = {0};
    if (!fields(hr_pbr_of(raw, len), BIT(1), 0, s, l, NULL))
        return false;
    const uint8_t *m[8] = {empty, empty, empty, empty, empty, empty, empty, empty};
    size_t ml[8] = {0};
    if (!fields(hr_pbr_of(s[0], l[0]), BIT(1) | BIT(3), 0, m, ml, NULL) || ml[0] == 0)
        return false;
    *name = m[0];
    *name_len = ml[0];
    *ns = m[2];
    *ns_len = ml[2];
    return true;
}

/* One entry of annotations (map<string, string>: key 1, value 2) is
 * k8s.io/initial-events-end: "true". */
static bool initial_end_entry(const uint8_t *e, size_t n, bool *malformed)
{
    const uint8_t *s[8] = {empty, empty, empty, empty, empty, empty, empty, empty};
    size_t l[8] = {0};
    if (!fields(hr_pbr_of(e, n), BIT(1) | BIT(2), 0, s, l, NULL)) {
        *malformed = true;
        return false;
    }
    return hr_pb_eq(s[0], l[0], "k8s.io/initial-events-end") && hr_pb_eq(s[1], l[1], "true");
}

bool hr_pb_watch_meta(const uint8_t *raw, size_t len, bool annotations, hr_pbwmeta *out)
{
    *out = (hr_pbwmeta){empty, empty, 0, 0, false};
    const uint8_t *s[8] = {empty, empty, empty, empty, empty, empty, empty, empty};
    size_t l[8] = {0};
    if (!fields(hr_pbr_of(raw, len), BIT(1), 0, s, l, NULL))
        return false;
    /* ObjectMeta: uid 5, resourceVersion 6 (the last wins), annotations
     * 12; the rest skipped by its length. The API server writes a
     * message's fields in field order, so the walk ends at the first field
     * past the last one wanted: managedFields (17), the bulk of most
     * objects' metadata, is not even skipped. */
    uint32_t last = annotations ? 12 : 6;
    hr_pbr r = hr_pbr_of(s[0], l[0]);
    bool malformed = false;
    while (hr_pbr_more(&r)) {
        uint32_t f;
        hr_pbwt wt;
        const uint8_t *v;
        size_t vl;
        if (!hr_pb_tag(&r, &f, &wt))
            return false;
        if (f > last)
            break;
        if (f == 5 || f == 6 || f == 12) {
            if (wt != HR_PB_LEN || !hr_pb_len(&r, &v, &vl))
                return false;
            if (f == 5) {
                out->uid = v;
                out->uid_len = vl;
            } else if (f == 6) {
                out->rv = v;
                out->rv_len = vl;
            } else if (initial_end_entry(v, vl, &malformed)) {
                out->initial_events_end = true;
            }
            if (malformed)
                return false;
        } else if (!hr_pb_skip(&r, wt)) {
            return false;
        }
    }
    return true;
}
