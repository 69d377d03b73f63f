/*
 * pbobj.h — the protobuf envelopes around the objects: the 4-byte magic
 * "k8s\0" and runtime.Unknown of every response body, the watch event of
 * every frame of a watch stream, the items of a List, and a Status (an
 * error's body, an ERROR event's object). Every slice it hands out points
 * into the caller's bytes (pb.h says how the protobuf decoders work).
 */
#ifndef HR_KUBE_DECODE_PBOBJ_H
#define HR_KUBE_DECODE_PBOBJ_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "kube/decode/pbwire.h"
#include "util/err.h"

/* The magic every protobuf body starts with. */
#define HR_PB_MAGIC "k8s\0"
#define HR_PB_MAGIC_LEN 4

/* One object out of its envelope. */
typedef struct hr_pbobj {
    const uint8_t *raw; /* the object's message (Pod, Node, PodList, Status, ...) */
    size_t len;
    const uint8_t *api_version, *kind; /* typeMeta ("" when absent) */
    size_t api_version_len, kind_len;
} hr_pbobj;

/* buf: "k8s\0" + runtime.Unknown{typeMeta 1 {apiVersion 1, kind 2},
 * raw 2, contentEncoding 3, contentType 4}. Refused: another magic, a
 * malformed Unknown, a contentEncoding (nothing is compressed in there by
 * any server we know) or a contentType other than protobuf. */
HR_MUST_CHECK hr_status hr_pb_unwrap(const uint8_t *buf, size_t len, hr_pbobj *out, hr_err *err);

/* One frame of a watch stream (application/vnd.kubernetes.protobuf;
 * stream=watch), without its 4-byte big-endian length: a
 * metav1.WatchEvent{type 1, object 2 = RawExtension{raw 1}}, whose raw is
 * itself an envelope (hr_pb_unwrap), unwrapped into obj. */
typedef struct hr_pbevent {
    const uint8_t *type; /* "ADDED", "MODIFIED", "DELETED", "BOOKMARK", "ERROR" */
    size_t type_len;
    hr_pbobj obj;
} hr_pbevent;

HR_MUST_CHECK hr_status hr_pb_watch_event(const uint8_t *buf, size_t len, hr_pbevent *out,
                                          hr_err *err);

/* A List (PodList, NodeList, ...: metadata 1 = ListMeta{resourceVersion 2,
 * continue 3}, items 2). hr_pb_list_open reads its metadata;
 * hr_pb_list_next hands out one item's message at a time (false at the
 * end or on error, *err set then). */
typedef struct hr_pblist {
    hr_pbr rest;
    const uint8_t *resource_version, *cont;
    size_t resource_version_len, cont_len;
} hr_pblist;

HR_MUST_CHECK hr_status hr_pb_list_open(const uint8_t *raw, size_t len, hr_pblist *out,
                                        hr_err *err);
bool hr_pb_list_next(hr_pblist *l, const uint8_t **item, size_t *len, hr_status *st, hr_err *err);

/* A metav1.Status: code 6, reason 4, message 3 (slices "" when absent). */
typedef struct hr_pbstatus {
    int32_t code;
    const uint8_t *reason, *message;
    size_t reason_len, message_len;
} hr_pbstatus;

HR_MUST_CHECK hr_status hr_pb_status(const uint8_t *raw, size_t len, hr_pbstatus *out, hr_err *err);

/* An object's metadata.namespace ("" when absent) and .name, in place, for
 * naming what a decoder refused or what a DELETED event removes; false
 * when malformed or the name is missing or empty. */
bool hr_pb_key(const uint8_t *raw, size_t len, const uint8_t **ns, size_t *ns_len,
               const uint8_t **name, size_t *name_len);

/* What a watch reads of any object's metadata, in place ("" when
 * absent): uid (5), resourceVersion (6), and with annotations whether
 * annotations (12) hold k8s.io/initial-events-end: "true" (the bookmark
 * that ends a streaming list's initial events). The walk stops at the
 * first field past those (the API server writes fields in field order),
 * so a field repeated after that is not seen. False when malformed. */
typedef struct hr_pbwmeta {
    const uint8_t *rv, *uid;
    size_t rv_len, uid_len;
    bool initial_events_end;
} hr_pbwmeta;

bool hr_pb_watch_meta(const uint8_t *raw, size_t len, bool annotations, hr_pbwmeta *out);

#endif
