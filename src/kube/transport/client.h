/*
 * client.h — the Kubernetes API client: connections, requests, streams.
 *
 * Subsystem transport (src/kube/transport/: client, kstatus, limiter,
 * backoff, linesplit): how a request travels — credentials attached, paced
 * by the write limiter, errors carrying the server's Status, a stream cut
 * into lines, retries spaced by jittered back-off. It builds on config
 * (kube/config/) and knows no object's shape; list/watch (kube/watch/) and
 * the writes (kube/write/) build on exactly this API, as do the layers
 * above kube for their one-off reads.
 *
 * One hr_kclient per process. It holds the resolved connection settings
 * (server, CA, client certificate and key in memory, bearer token or token
 * file or exec plugin), a libcurl share handle (TLS sessions, DNS), one
 * multiplexed connection for every request (mux.h) and the client-side
 * write limiter (QPS/burst). Every function is safe to call from several
 * threads at once: each call uses its own easy handle, so a watch per
 * resource can run on its own thread (on its own connection) while writes
 * go out on others, as HTTP/2 streams of the one request connection.
 *
 * An abandoned request's connection is closed with a TCP reset. A
 * request that fails in transport (above all a timeout against a stalled
 * server) resets the request connection: every request socket carries
 * SO_LINGER {1, 0}, so the close is abortive — unsent bytes are discarded
 * and the server's HTTP/2 connection ends, which makes the API server
 * cancel what it had not yet run of it (measured: docs/design.md §10). The
 * requests still on it fail in transport too ("the connection was reset:
 * another request on it failed"); the next request opens a new one. A
 * request ended by its caller's stop flag is not a transport failure: it
 * ends alone, and the connection stays.
 *
 * Errors are hr_err values (util/err.h). For an HTTP error the status code
 * is in hr_kresult.status and the server's Status.message is in the error
 * message; a transport failure (connect, TLS, timeout) has status 0.
 * The hr_status of an HTTP error is HR_E_NOTFOUND for 404, HR_E_INPUT for
 * other 4xx except 429, HR_E_IO for 429, 5xx and transport failures; a
 * response that does not fit the caller's hr_buf limit is HR_E_LIMIT.
 * A 401 makes the client refresh rotating credentials (token file, exec
 * plugin) and repeat the request once.
 */
#ifndef HR_KUBE_CLIENT_H
#define HR_KUBE_CLIENT_H

#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "kube/config/kubeconfig.h"
#include "util/buf.h"
#include "util/err.h"

typedef struct hr_kclient hr_kclient;

/* Told of every request the client sends (design §9.3,
 * headroom_api_requests_total): verb its Kubernetes verb (kverb.h), code
 * the HTTP status of its answer or 0 when none came (a transport failure,
 * a timeout), ns how long it took — for a stream, until its response
 * headers, and it is told then, not when the stream ends (or at its
 * failure when none came). Each attempt counts: a 401 repeated with fresh
 * credentials is two requests; one refused before it is sent (limiter,
 * write lease) is none. Called on the requesting thread, from many threads
 * at once: it must be thread-safe and must not make requests. */
typedef void (*hr_krequest_fn)(void *ud, const char *verb, long code, uint64_t ns);

/* Where the connection settings come from (kubectl's rules):
 * kubeconfig (NULL: $KUBECONFIG, colon-separated and merged, else
 * ~/.kube/config), context (NULL: current-context), the flags over them
 * (--server, --token, --as...: hr_koverrides); when neither a
 * kubeconfig file nor $KUBECONFIG exists and KUBERNETES_SERVICE_HOST is set,
 * in-cluster config (service-account token re-read periodically). */
typedef struct hr_kclient_opts {
    const char *kubeconfig;
    const char *context;
    hr_koverrides ov;          /* kubectl's other connection flags (kubeconfig.h); {0}: none */
    double qps;                /* write limiter; <= 0: 50 */
    int burst;                 /* <= 0: 100 */
    long timeout_ms;           /* per non-watch request; <= 0: 30000 */
    const char *user_agent;    /* NULL: "headroom/<version>" */
    hr_krequest_fn on_request; /* NULL: none; fixed for the client's life */
    void *on_request_ud;
} hr_kclient_opts;

HR_MUST_CHECK hr_status hr_kclient_new(const hr_kclient_opts *o, hr_kclient **out, hr_err *err);

/* The same from settings resolved already (kube/config/kubeconfig.h: a kubeconfig
 * held in a Secret, or tests pointing in-cluster config at another
 * directory). o->kubeconfig and o->context are ignored. The client takes
 * cfg over, also on failure (it is freed then). */
struct hr_kubeconfig;
HR_MUST_CHECK hr_status hr_kclient_new_from_config(struct hr_kubeconfig *cfg,
                                                   const hr_kclient_opts *o, hr_kclient **out,
                                                   hr_err *err);
void hr_kclient_free(hr_kclient *c);

/* The API server URL, e.g. "https://127.0.0.1:16443" (for messages). */
const char *hr_kclient_server(const hr_kclient *c);

/* The context's namespace ("default" when unset; the pod's own namespace
 * in-cluster): the default for -n. */
const char *hr_kclient_namespace(const hr_kclient *c);

/* Where the settings came from, e.g. "kubeconfig /a:/b" or "in-cluster
 * config" (for messages). */
const char *hr_kclient_origin(const hr_kclient *c);

/* Change the write limiter live (HeadroomConfig rateLimits.clientQPS and
 * clientBurst; design §11): the next write is paced by the new values
 * (limiter.h: writes already waiting keep their turn). Safe to call while
 * other threads make requests, and with any of the caller's locks held:
 * it takes only the limiter's own mutex, a leaf that no request holds
 * while it sleeps or does I/O. The controller calls it, once per change
 * (controller.h). qps <= 0: 50, burst <= 0: 100. */
void hr_kclient_set_rate(hr_kclient *c, double qps, int burst);

/* Shutdown (design §10): while on, a write waiting for the limiter — or
 * about to — gives up within 10 ms, sends nothing and returns
 * HR_E_CANCELED; writes that need no wait and unlimited requests (the
 * Lease release) go on. Safe from any thread. The controller turns it on
 * when it stops (and off when it starts). */
void hr_kclient_abandon_writes(hr_kclient *c, bool on);

/* The write lease (design §10): who may write, and until when. fn(ud)
 * returns the monotonic millisecond (util/clock.h, hr_mono_ms) until which
 * this process may have a write in flight — HR_KUNTIL_NONE for no bound, a
 * time at or before now for "may not write". Every write (any method but
 * GET through hr_kclient_do) asks it immediately before it is sent — after
 * the limiter wait, and again before a 401 repeat — and is refused with
 * HR_E_EXPIRED (nothing sent) when the time has come, or else sent with its
 * timeout cut to end by then (hr_kclient_timeout_ms). Reads and
 * hr_kclient_do_unlimited (the Lease itself) are not asked. fn NULL: no
 * lease (the default). Safe from any thread; fn must be, too, and must stay
 * callable until it is replaced (the controller installs the leader's at
 * start and removes it once its writers are joined). */
#define HR_KUNTIL_NONE INT64_MAX
typedef int64_t (*hr_kuntil_fn)(void *ud);
void hr_kclient_set_write_lease(hr_kclient *c, hr_kuntil_fn fn, void *ud);

/* The timeout of a request that must end by until_ms (monotonic ms;
 * HR_KUNTIL_NONE: no bound) when it starts at now_ms and may take
 * timeout_ms: the smaller of the two, and 0 when until_ms is not after now
 * (the request must not be sent). Pure. */
long hr_kclient_timeout_ms(long timeout_ms, int64_t until_ms, int64_t now_ms);

/* The write limiter's rate and burst in force. */
void hr_kclient_get_rate(hr_kclient *c, double *qps, int *burst);

typedef struct hr_kresult {
    long status;         /* HTTP status, 0 when no response arrived */
    long retry_after_ms; /* from Retry-After on 429/503, else 0 */
    /* The response's Content-Type was application/vnd.kubernetes.protobuf
     * (a body, or with ;stream=watch a stream of frames): what decides the
     * decoder, whatever was asked for. */
    bool protobuf;
} hr_kresult;

/* The Accept of a request for protobuf (design §5), as client-go's
 * AcceptContentTypes "application/vnd.kubernetes.protobuf,application/json"
 * but with the fallback's lower preference said as a q: a server without
 * protobuf for the kind (a CRD, an aggregated API) answers JSON, and the
 * response's Content-Type (hr_kresult.protobuf) says which came. Without
 * one of these every request accepts application/json only. */
#define HR_KACCEPT_PROTOBUF "application/vnd.kubernetes.protobuf, application/json;q=0.9"
#define HR_KACCEPT_PROTOBUF_WATCH \
    "application/vnd.kubernetes.protobuf;stream=watch, application/json;q=0.9"

/* Counters since hr_kclient_new (for metrics and tests): responses
 * received, how many came over HTTP/2, how many needed a new connection
 * (the rest reused a warm one), and how often the write limiter was
 * changed. */
typedef struct hr_kclient_stats {
    uint64_t responses;
    uint64_t http2;
    uint64_t new_connections;
    uint64_t rate_sets; /* hr_kclient_set_rate calls */
} hr_kclient_stats;
void hr_kclient_get_stats(const hr_kclient *c, hr_kclient_stats *out);

/* One request. path is absolute with its query ("/api/v1/pods?limit=500").
 * body may be NULL. The response body is appended to resp (may be NULL).
 * Returns HR_OK for 2xx; otherwise an error whose message carries the
 * server's Status message, with res->status set. Writes (any method but
 * GET) first take a token from the limiter, waiting for it (HR_E_CANCELED:
 * abandoned on shutdown, see hr_kclient_abandon_writes). No retries
 * here: callers decide (see hr_kbackoff). */
HR_MUST_CHECK hr_status hr_kclient_do(hr_kclient *c, const char *method, const char *path,
                                      const char *content_type, const void *body, size_t body_len,
                                      hr_buf *resp, hr_kresult *res, hr_err *err);

/* As hr_kclient_do, but the request must end by until_ms (monotonic ms,
 * hr_mono_ms; HR_KUNTIL_NONE: no bound): its timeout is cut to end then, and
 * when that time has come nothing is sent (HR_E_EXPIRED). A write is also
 * bounded by the write lease. For a leader's reads (the live Node read
 * before an increase, design §6), which must not outlive its lease. With
 * its own Accept (NULL: application/json; HR_KACCEPT_PROTOBUF for a
 * built-in kind, whose answer is then a protobuf body — res->protobuf says
 * which came): a write's answer is the whole object, which protobuf costs
 * the API server and us less to encode and read. */
HR_MUST_CHECK hr_status hr_kclient_do_as(hr_kclient *c, int64_t until_ms, const char *method,
                                         const char *path, const char *accept,
                                         const char *content_type, const void *body,
                                         size_t body_len, hr_buf *resp, hr_kresult *res,
                                         hr_err *err);

/* As hr_kclient_do, but never waits on the write limiter: for
 * leader-election renewals, which must not queue behind a burst of
 * resizes (a renewal that comes late loses the lease). */
HR_MUST_CHECK hr_status hr_kclient_do_unlimited(hr_kclient *c, const char *method, const char *path,
                                                const char *content_type, const void *body,
                                                size_t body_len, hr_buf *resp, hr_kresult *res,
                                                hr_err *err);

/* As hr_kclient_do_unlimited, but the request must end by until_ms (as
 * hr_kclient_do_as; HR_E_EXPIRED when that time has come), and is
 * aborted — within about a second, libcurl's progress interval while
 * nothing arrives — once *stop (NULL: never) turns true: for the token
 * reviews of the secured /metrics, which have a short deadline and must
 * not hold up a shutdown. */
HR_MUST_CHECK hr_status hr_kclient_do_unlimited_until(hr_kclient *c, int64_t until_ms,
                                                      const atomic_bool *stop, const char *method,
                                                      const char *path, const char *content_type,
                                                      const void *body, size_t body_len,
                                                      hr_buf *resp, hr_kresult *res, hr_err *err);

/* A GET as hr_kclient_do, with its own Accept (NULL: application/json;
 * HR_KACCEPT_PROTOBUF) — res->protobuf says what the body is. */
HR_MUST_CHECK hr_status hr_kclient_get_as(hr_kclient *c, const char *path, const char *accept,
                                          hr_buf *resp, hr_kresult *res, hr_err *err);

/* A streaming GET (a watch): every complete line of the body is handed to
 * on_line as it arrives — never buffered whole. The line is a private copy,
 * line[len] == '\0' followed by at least 8 more zero bytes (enough for
 * yyjson's in-place parsing; the callback may modify the bytes, they are
 * reused after it returns); '\r' before '\n' is removed, empty lines are
 * skipped, a line over 16 MiB ends the stream with HR_E_LIMIT, and a last
 * line without '\n' is delivered when the server ends the body cleanly. on_line returning non-zero
 * stops the stream (HR_OK is returned). *stop, when non-NULL, is polled at
 * least every 500 ms and ends the stream when it becomes true (shutdown);
 * it is a C11 atomic, set from another thread with atomic_store.
 * timeout_s bounds the whole stream (0: none) — callers also pass the
 * server-side timeoutSeconds in the query. A stream cut mid-line drops the
 * partial line and returns an HR_E_IO error; a stream that breaks after its
 * 200 (API server killed, connection reset) returns HR_E_IO with
 * res->status still 200, while a failure before any response has 0. */
typedef int (*hr_kline_fn)(void *ud, const char *line, size_t len);
HR_MUST_CHECK hr_status hr_kclient_stream(hr_kclient *c, const char *path, long timeout_s,
                                          hr_kline_fn on_line, void *ud, const atomic_bool *stop,
                                          hr_kresult *res, hr_err *err);

/* The same with its own Accept (NULL: application/json;
 * HR_KACCEPT_PROTOBUF_WATCH). When the response is protobuf
 * (res->protobuf), the body is cut into frames instead of lines
 * (framesplit.h: a 4-byte big-endian length, then a WatchEvent; a frame
 * over 16 MiB ends the stream with HR_E_LIMIT) and each goes to on_frame,
 * padded like a line; on_frame NULL: such a response is an error
 * (HR_E_INPUT), nothing delivered. */
HR_MUST_CHECK hr_status hr_kclient_stream_as(hr_kclient *c, const char *path, const char *accept,
                                             long timeout_s, hr_kline_fn on_line,
                                             hr_kline_fn on_frame, void *ud,
                                             const atomic_bool *stop, hr_kresult *res, hr_err *err);

/* Urgent writes (resizes) outstanding, for the write limiter's priority
 * (limiter.h): +n when they are decided, -n when they are answered or
 * dropped; returns the count after. */
int64_t hr_kclient_urgent_writes(hr_kclient *c, int64_t delta);

/* A write that yields to the urgent ones (a status annotation, an event)
 * asks to go (hr_klimiter_yield_claim, half the burst kept): 0 — go now
 * (then take its tokens as any write); otherwise ns until asking again.
 * While urgent writes are outstanding only the yielding writers' minimum
 * share passes. */
int64_t hr_kclient_yield_claim_ns(hr_kclient *c);

/* Wake every stream of this client now running (curl_multi_wakeup): each
 * looks at its stop flag at once. Thread-safe. */
void hr_kclient_wake_streams(hr_kclient *c);

/* woken = true: whoever sets a stream's stop flag calls
 * hr_kclient_wake_streams after it (the informers do), so the client's
 * streams stop polling the flag every 200 ms and sleep until data or a
 * wake (a 5-minute poll stays as a safety net). Default false: *stop is
 * polled as documented above. */
void hr_kclient_streams_woken(hr_kclient *c, bool woken);

/* Jittered back-off (kube/transport/backoff.h's hr_kbackoff_ms) on the
 * client's own generator (hr_kbackoff_ms uses one per thread, since it has
 * no client to keep one in). */
long hr_kclient_backoff_ms(hr_kclient *c, int attempt, long base_ms, long max_ms,
                           long retry_after_ms);

#endif
