/*
 * pbmeta.h — what the protobuf decoders share (pb.h says how they work):
 * field errors, strings, map entries, and an object's ObjectMeta into the
 * same hr_kmeta the JSON decoders give. For the decoders only.
 */
#ifndef HR_KUBE_DECODE_PBMETA_H
#define HR_KUBE_DECODE_PBMETA_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "kube/decode/common.h"
#include "kube/decode/pbwire.h"
#include "util/err.h"

/* "malformed protobuf" at p (a bad tag, length or varint, or a field of
 * the wrong wire type). */
HR_MUST_CHECK hr_status hr_pbfail(const hr_kctx *c, const hr_jpath *p);

/* The same for a field of wire type wt where want was expected. */
HR_MUST_CHECK hr_status hr_pbfail_wt(const hr_kctx *c, const hr_jpath *p, const char *want,
                                     hr_pbwt wt);

/* The value of a length-delimited field (string, bytes, message) whose
 * tag was just read with wire type wt; fails at p on another wire type.
 * Inline: they run for every field of every object. */
HR_MUST_CHECK static inline hr_status hr_pb_bytes_at(const hr_kctx *c, const hr_jpath *p, hr_pbr *r,
                                                     hr_pbwt wt, const uint8_t **s, size_t *len)
{
    *s = r->p;
    *len = 0;
    if (wt != HR_PB_LEN)
        return hr_pbfail_wt(c, p, "length-delimited", wt);
    return hr_pb_len(r, s, len) ? HR_OK : hr_pbfail(c, p);
}

HR_MUST_CHECK static inline hr_status hr_pb_sub_at(const hr_kctx *c, const hr_jpath *p, hr_pbr *r,
                                                   hr_pbwt wt, hr_pbr *sub)
{
    const uint8_t *s = NULL;
    size_t n = 0;
    hr_status st = hr_pb_bytes_at(c, p, r, wt, &s, &n);
    if (st == HR_OK)
        *sub = hr_pbr_of(s, n);
    return st;
}

/* Skip one field of wire type wt, failing at p when it is malformed. */
HR_MUST_CHECK static inline hr_status hr_pb_skip_at(const hr_kctx *c, const hr_jpath *p, hr_pbr *r,
                                                    hr_pbwt wt)
{
    return hr_pb_skip(r, wt) ? HR_OK : hr_pbfail(c, p);
}

/* The same, copied into c's arena as a C string. */
HR_MUST_CHECK hr_status hr_pb_str_at(const hr_kctx *c, const hr_jpath *p, hr_pbr *r, hr_pbwt wt,
                                     const char **out);
/* A varint field (bool, int32, int64) of wire type wt. */
HR_MUST_CHECK hr_status hr_pb_varint_at(const hr_kctx *c, const hr_jpath *p, hr_pbr *r, hr_pbwt wt,
                                        uint64_t *out);

/* One entry of a map<string, string> (key = 1, value = 2) or
 * map<string, Quantity> (value = 2 is a Quantity{string = 1}), read from
 * the entry's bytes; both slices in place ("" when absent). False when
 * malformed. */
bool hr_pb_map_entry(hr_pbr e, bool quantity, const uint8_t **k, size_t *kl, const uint8_t **v,
                     size_t *vl);

/* The entry of map<string, Quantity> e named key, parsed as kind into
 * *out (HR_NONE when not there; the last entry wins, as in a Go map). The
 * map is the repeated field `field` of message m; p names the map. */
HR_MUST_CHECK hr_status hr_pb_quantity_in(const hr_kctx *c, const hr_jpath *p, hr_pbr m,
                                          uint32_t field, const char *key, hr_qkind kind,
                                          int64_t *out);

/* metadata (ObjectMeta, the bytes of field 1 of every object): name
 * (required), namespace (required when namespaced), uid,
 * resourceVersion, labels, as hr_decode_meta reads them. Sets c->ns and
 * c->name as soon as known. present: the object had a metadata field.
 * pod_part (may be NULL): the bytes that hold every deletionTimestamp (9),
 * annotations (12), ownerReferences (13) and managedFields (17) field, for
 * the pod decoder to read without walking the rest again (may hold other
 * fields too). */
HR_MUST_CHECK hr_status hr_pb_meta(hr_kctx *c, hr_pbr meta, bool present, bool namespaced,
                                   hr_kmeta *m, hr_pbr *pod_part);

/* The top-level fields 1 (metadata), 2 (spec), 3 (status) of an object
 * (Pod, Node, Namespace, LimitRange, ResourceQuota all number them so),
 * each the last of its kind; *has_* tell which were there. */
HR_MUST_CHECK hr_status hr_pb_object(const hr_kctx *c, hr_pbr obj, hr_pbr parts[3], bool has[3]);

#endif
