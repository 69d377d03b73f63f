/*
 * watch.h — list + watch of one Kubernetes resource, kept in sync forever.
 *
 * The informer half of design §5: a streaming list (a watch with
 * sendInitialEvents=true&resourceVersionMatch=NotOlderThan and no
 * resourceVersion: the server's current state as ADDED events, ended by a
 * bookmark annotated k8s.io/initial-events-end, then the changes on the
 * same stream), or, when the server refuses that (422, or 400) or the
 * caller asks for it, a paginated list (limit=500, continue) followed by a
 * watch from the list's resourceVersion. Watches ask for bookmarks and a
 * jittered timeoutSeconds, are resumed from the last resourceVersion seen
 * after every disconnect, and a fresh list is made when the server says
 * 410 Gone (as an HTTP status or as an ERROR event). Every watch line is
 * parsed on its own as it arrives, so memory stays bounded by one object,
 * never by a stream or a list.
 *
 * The watch does not know what it watches: objects go to a sink as yyjson
 * values, or as protobuf messages when the watch asks for protobuf and the
 * response's Content-Type says it came (design §5; the sink's *_pb
 * callbacks), valid only during the call. With hr_watch_opts.protobuf
 * every request accepts application/vnd.kubernetes.protobuf first and
 * JSON as the fallback; a 406 Not Acceptable makes this resource ask for
 * JSON only from then on (remembered as a refused streaming list is). In
 * protobuf a watch stream is frames (kube/transport/framesplit.h), each a
 * WatchEvent whose object is an envelope (kube/decode/pbobj.h, the one
 * header of decode the watch reads: events, lists and Status, never the
 * objects themselves). The sink (the cache) decodes what it
 * needs and drops the JSON. A relist is framed by relist_begin/relist_end so
 * the sink can delete, and report, whatever vanished while the watch was
 * broken — a reconcile by difference rather than a wipe-and-reload, so
 * nothing is reported twice and nothing is lost. A streaming list is framed
 * the same way: relist_begin before the request, relist_end(true) at the
 * initial-events-end bookmark, relist_end(false) when the stream ends
 * before it.
 *
 * One hr_watch per resource; it runs on the calling thread (hr_watch_run)
 * or on its own (hr_watch_start). The transport is a pair of functions so
 * the state machine can be driven by tests; hr_watch_transport_kclient()
 * (kube/watch/watch_http.h) binds it to the real client
 * (kube/transport/client.h).
 *
 * Subsystem watch (src/kube/watch/: watch, watch_http): reads only, on the
 * transport (kube/transport/); it neither writes nor decodes (the sink
 * does), so it depends on no other subsystem of kube.
 */
#ifndef HR_KUBE_WATCH_H
#define HR_KUBE_WATCH_H

#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <yyjson.h>

#include "kube/transport/client.h"
#include "util/buf.h"
#include "util/err.h"
#include "util/log.h"

/* What the watch hands over. Callbacks run on the watch's thread, one at a
 * time. obj is the object (a list item or a watch event's object). A
 * non-OK status from upsert/remove means "malformed": the watch logs the
 * message (which names the object, and says what the sink kept of it) and
 * goes on. */
typedef struct hr_wsink {
    void *ud;
    void (*relist_begin)(void *ud);
    hr_status (*upsert)(void *ud, yyjson_val *obj, hr_err *err);
    hr_status (*remove)(void *ud, yyjson_val *obj, hr_err *err);
    /* complete: every page arrived (false when the relist was abandoned,
     * in which case the sink must not delete what it did not see). */
    void (*relist_end)(void *ud, bool complete);
    /* The same for an object in protobuf: raw is its message (a Pod, a
     * Node, ...: runtime.Unknown's raw, kube/decode/pbobj.h). NULL: this
     * sink reads JSON only, and the watch asks for nothing else. */
    hr_status (*upsert_pb)(void *ud, const uint8_t *raw, size_t len, hr_err *err);
    hr_status (*remove_pb)(void *ud, const uint8_t *raw, size_t len, hr_err *err);
} hr_wsink;

/* The two requests a watch makes. do_get: one GET with the whole body in
 * resp. stream: a streaming GET with a line callback (client.h's
 * semantics). Both fill res->status (0 when no response arrived). */
typedef struct hr_wtransport {
    void *ud;
    hr_status (*do_get)(void *ud, const char *path, hr_buf *resp, hr_kresult *res, hr_err *err);
    hr_status (*stream)(void *ud, const char *path, long timeout_s, hr_kline_fn on_line,
                        void *line_ud, const atomic_bool *stop, hr_kresult *res, hr_err *err);
    /* Jittered back-off (kube/transport/backoff.h's hr_kbackoff_ms); NULL: a built-in one
     * with the same shape, seeded by hr_watch_opts.seed. */
    long (*backoff_ms)(int attempt, long base_ms, long max_ms, long retry_after_ms);
    /* The lines stream hands over are private, writable copies followed by
     * at least YYJSON_PADDING_SIZE zero bytes (linesplit.h guarantees it),
     * so they can be parsed in place, saving a copy of every event. */
    bool lines_writable;
    /* Wake the transport's running streams so they look at their stop
     * flags now (hr_kclient_wake_streams); NULL: the transport polls them. */
    void (*wake)(void *ud);
    /* The two requests with an Accept of their own (client.h's
     * HR_KACCEPT_PROTOBUF, HR_KACCEPT_PROTOBUF_WATCH); res->protobuf says
     * what came, and a protobuf stream's frames go to on_frame
     * (hr_kclient_stream_as). NULL: the transport speaks JSON only. */
    hr_status (*get_as)(void *ud, const char *path, const char *accept, hr_buf *resp,
                        hr_kresult *res, hr_err *err);
    hr_status (*stream_as)(void *ud, const char *path, const char *accept, long timeout_s,
                           hr_kline_fn on_line, hr_kline_fn on_frame, void *line_ud,
                           const atomic_bool *stop, hr_kresult *res, hr_err *err);
} hr_wtransport;

typedef struct hr_watch_opts {
    const char *resource; /* for logs and metrics: "pods" */
    const char *path;     /* collection path: "/api/v1/pods" */
    const char *query; /* extra query, e.g. "fieldSelector=metadata.name%3Dcluster"; may be NULL */
    hr_wsink sink;
    hr_wtransport transport;
    int page_limit;        /* <= 0: 500 */
    int timeout_min_s;     /* watch timeoutSeconds drawn from [min, max]; <= 0: 240 */
    int timeout_max_s;     /* <= 0: 2 × min */
    long backoff_base_ms;  /* <= 0: 500 */
    long backoff_max_ms;   /* <= 0: 30000 */
    size_t max_page_bytes; /* <= 0: 256 MiB; a larger list page is an error */
    hr_log_sink log;       /* NULL: logfmt lines on stderr */
    void *log_ud;
    uint64_t seed; /* jitter; 0: a random seed (util/prng.h) */
    /* A stream with no line (bookmarks included) for this long is dropped
     * and resumed from the last resourceVersion (design §5); <= 0: 90000 (the API server bookmarks about every 60 s). */
    long idle_timeout_ms;
    /* true: every list is paginated GETs, never a streaming list (the
     * user's --streaming-lists=false). false: lists stream, and fall back
     * to pages when the server refuses. */
    bool paged_lists;
    /* true: ask for protobuf (the user's --protobuf, default on; needs the
     * sink's *_pb and the transport's *_as, else JSON). A 406 turns it off
     * for this resource. */
    bool protobuf;
    /* Called from the watch's thread each time a complete list has made it synced (stats.synced
     * set first), so a reader waiting for the sync need not poll for it (design §5: idle means
     * idle; a missing CRD never syncs). NULL: none. */
    void (*on_synced)(void *ud);
    void *on_synced_ud;
    /* > 0: the resource may not be served at all, and may come and go (a custom resource whose
     * CRD is installed or removed while we run: design §4's VerticalPodAutoscalers). A 404 to
     * a list (or a 403: the identity may not read it) then means "none exist": whatever the
     * sink held is swept by a complete, empty relist, the resource counts as synced
     * (stats.absent), and the list is asked again every absent_poll_ms until it is served. A
     * kind that was served is asked once more, absent_poll_ms later, before it is taken as
     * absent. A 404 to a watch lists again. <= 0: a 404 is a failure like any other, retried
     * with back-off, and the resource never syncs without it. */
    long absent_poll_ms;
} hr_watch_opts;

/* Counters, readable from any thread (metrics). */
typedef struct hr_watch_stats {
    uint64_t events;     /* watch events handled (bookmarks included) */
    uint64_t listed;     /* objects received from list pages or as initial events */
    uint64_t relists;    /* lists started after the first */
    uint64_t malformed;  /* objects or lines skipped */
    uint64_t reconnects; /* watch streams opened after the first */
    uint64_t errors;     /* failed requests */
    uint64_t streamed;   /* lists completed by streaming (initial-events-end seen) */
    uint64_t stream_cut; /* streaming lists the server ended cleanly before that
                          * bookmark (one it closed as too slow to read, or one
                          * shutting down): each made again by pages, once */
    bool synced;         /* the first list completed */
    bool paged;          /* lists are paginated GETs: asked for, or streaming refused */
    bool protobuf;       /* requests ask for protobuf (false when off, or after a 406) */
    uint64_t pb_objects; /* objects (events and list items) received in protobuf */
    bool absent;         /* the last list found the resource not served (absent_poll_ms) */
} hr_watch_stats;

typedef struct hr_watch hr_watch;

HR_MUST_CHECK hr_status hr_watch_new(const hr_watch_opts *o, hr_watch **out, hr_err *err);
/* Joins the thread first when one was started. */
void hr_watch_free(hr_watch *w);

/* List, then watch, until *stop becomes true. Returns HR_OK on stop;
 * failures are retried with back-off, never returned. */
HR_MUST_CHECK hr_status hr_watch_run(hr_watch *w, const atomic_bool *stop);

/* hr_watch_run on a thread of its own. */
HR_MUST_CHECK hr_status hr_watch_start(hr_watch *w, const atomic_bool *stop, hr_err *err);
void hr_watch_join(hr_watch *w);

/* The stop flag given to hr_watch_start (or hr_watch_run) was set: wake
 * the watch's sleeps (the idle watchdog, the back-off between attempts)
 * and its stream, so it ends now. Nothing in a watch polls the flag on a
 * timer: whoever sets it calls this after. Thread-safe; w may be NULL. */
void hr_watch_wake(hr_watch *w);

void hr_watch_get_stats(hr_watch *w, hr_watch_stats *out);

/* The resourceVersion a resumed watch would start from ("" before a list). */
void hr_watch_get_rv(hr_watch *w, char *dst, size_t cap);

#endif
