/*
 * events.h — creating Events (events.k8s.io/v1) about the objects the
 * controller acts on.
 *
 * Events are how `kubectl describe pod` users learn that a limit changed
 * or why it did not (design §1 reasons CPULimitAdjusted, ResizeInfeasible,
 * ResizeForbidden, ResizeSkipped). Deduplication ("one per pod and
 * reason") is the caller's policy; this only writes one Event, through the
 * client's write limiter.
 */
#ifndef HR_KUBE_EVENTS_H
#define HR_KUBE_EVENTS_H

#include <stdint.h>

#include "kube/transport/client.h"
#include "util/buf.h"
#include "util/err.h"

typedef struct hr_kevent {
    /* The object the event is about ("regarding"); the event is created in
     * its namespace. */
    const char *ns;
    const char *kind;        /* "Pod" */
    const char *api_version; /* "v1" */
    const char *name;
    const char *uid;              /* NULL: omitted */
    const char *resource_version; /* NULL: omitted */
    const char *type;             /* "Normal" or "Warning" */
    const char *reason;           /* "CPULimitAdjusted", ... (≤ 128 bytes) */
    const char *action;           /* "Resizing" (≤ 128 bytes) */
    const char *note;             /* human text; cut to 1 KiB at a UTF-8 boundary */
    const char *controller;       /* reportingController, e.g. "kube-headroom.dev/headroom" */
    const char *instance;         /* reportingInstance, e.g. the controller's pod name */
    /* The Accept of the POST (NULL: application/json): its answer, the
     * Event, is not read; HR_KACCEPT_PROTOBUF costs the API server less. */
    const char *accept;
} hr_kevent;

/* The Event JSON for e at time now_us (µs since the epoch). The name is
 * "<object>.<hex time>", as client-go's recorder makes it. */
HR_MUST_CHECK hr_status hr_kevent_json(const hr_kevent *e, int64_t now_us, hr_buf *out,
                                       hr_err *err);

/* POST /apis/events.k8s.io/v1/namespaces/<ns>/events. */
HR_MUST_CHECK hr_status hr_kevent_create(hr_kclient *c, const hr_kevent *e, hr_kresult *res,
                                         hr_err *err);

#endif
