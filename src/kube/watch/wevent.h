/*
 * wevent.h — one watch event, read from either encoding into the same
 * shape: a JSON line (yyjson, already parsed by the watch) or a protobuf
 * frame (a WatchEvent, kube/decode/pbobj.h). The watch (watch.c) handles
 * the result the same way whatever it came in: that is why the two
 * readers live apart from it, and why the state machine has one event
 * handler, not two.
 *
 * Nothing is copied: every pointer is into the caller's line or frame (or
 * its yyjson document) and valid while that lives.
 *
 * Subsystem watch (watch.h); reads the protobuf envelopes with
 * kube/decode/pbobj.h, the one header of decode it uses (events, Lists,
 * Status — never an object's own fields, which are the sink's).
 */
#ifndef HR_KUBE_WEVENT_H
#define HR_KUBE_WEVENT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <yyjson.h>

#include "util/err.h"

/* The longest resourceVersion taken (a longer one counts as absent). */
#define HR_WEVENT_RV_MAX 128

typedef enum { HR_EV_UPSERT, HR_EV_DELETE, HR_EV_BOOKMARK, HR_EV_ERROR, HR_EV_UNKNOWN } hr_evtype;

typedef struct hr_wevent {
    hr_evtype type;       /* ADDED and MODIFIED are both HR_EV_UPSERT */
    const char *type_str; /* as sent, for the log of an unknown type */
    size_t type_len;
    yyjson_val *json;  /* the object in JSON; NULL: in protobuf (pb) */
    const uint8_t *pb; /* the object's message (runtime.Unknown's raw) */
    size_t pb_len;
    const char *rv; /* metadata.resourceVersion; NULL when absent or not sane */
    size_t rv_len;
    bool initial_end; /* annotated k8s.io/initial-events-end: "true" */
    int64_t code;     /* HR_EV_ERROR: the Status's code and message ("" when none) */
    const char *msg;
    size_t msg_len;
} hr_wevent;

/* root: a parsed JSON watch line. False when it is not an event (no
 * string type, no object). */
bool hr_wevent_json(yyjson_val *root, hr_wevent *out);

/* frame: one frame of a protobuf watch stream, without its length.
 * HR_E_INPUT when it is not a WatchEvent with an envelope inside. */
HR_MUST_CHECK hr_status hr_wevent_pb(const uint8_t *frame, size_t len, hr_wevent *out, hr_err *err);

#endif
