/*
 * client.c — the Kubernetes API client on libcurl (the contract is
 * kube/transport/client.h).
 *
 * Connections. Every request runs on an easy handle taken from a small
 * pool and given back afterwards, on the client's one multi handle
 * (mux.h): concurrent requests are HTTP/2 streams on one warm TLS
 * connection, driven by whichever caller waits, not a connection per
 * thread. A CURLSH share adds the TLS session cache and the DNS cache
 * across all handles, so even a new connection (a stream's, or the
 * requests' after a reset) resumes a session instead of a full handshake.
 * The connection cache is deliberately NOT put in the share: libcurl
 * documents sharing it between concurrently running threads as
 * unsupported (https://github.com/curl/curl/issues/4915), and this client
 * runs a watch per thread.
 *
 * Streams (watches) run on a private multi handle instead of
 * curl_easy_perform, registered in the client's streams (streams.h) so a
 * stop can wake them: the loop looks at the caller's stop flag on every
 * wake, and polls it every 200 ms only when the client's stoppers do not
 * promise a wake (hr_kclient_streams_woken); the xferinfo callback
 * aborts the transfer as soon as it sees the flag while data flows.
 *
 * A request that fails in transport resets the requests' connection
 * (hr_kmux_reset), and request sockets are made with SO_LINGER {1, 0}: the
 * connection ends with a TCP reset, so a stalled server that wakes up
 * cancels the request rather than running it (design §10, measured there);
 * the requests that shared it fail in transport too, and are retried as
 * such. A request ended by its own stop flag resets nothing. The write
 * lease (client.h) is asked right before each write attempt.
 *
 * Credentials come from kube/config/cred.h per request; a 401 lets it refresh a
 * rotating token or rerun an exec plugin, and the request is repeated once.
 * The CA, client certificates and keys reach libcurl as the paths of
 * sealed memory files (tls.h: libcurl 7.88 with GnuTLS takes no in-memory
 * ones), never as files on disk.
 */
#include "kube/transport/client.h"

#include <curl/curl.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/socket.h>
#include <time.h>

#include "kube/config/cred.h"
#include "kube/config/kubeconfig.h"
#include "kube/transport/backoff.h"
#include "kube/transport/baseurl.h"
#include "kube/transport/curlproc.h"
#include "kube/transport/framesplit.h"
#include "kube/transport/headers.h"
#include "kube/transport/kstatus.h"
#include "kube/transport/kverb.h"
#include "kube/transport/limiter.h"
#include "kube/transport/linesplit.h"
#include "kube/transport/mux.h"
#include "kube/transport/streams.h"
#include "kube/transport/tls.h"
#include "util/clock.h"

/* HR_VERSION_STRING for the User-Agent: generated at every build from
 * scripts/release/version.sh (cmake/hr_version.cmake). */
#include "hr_version.h"

#define ERR_BODY_MAX (64 * 1024)
#define CONNECT_TIMEOUT_MS 10000L
#define UPLOAD_BUFFER 16384L /* curl's minimum (CURLOPT_UPLOAD_BUFFERSIZE) */
#define STREAM_POLL_MS 200
/* With hr_kclient_streams_woken: a safety net only (streams.h). */
#define STREAM_WOKEN_POLL_MS 300000

struct hr_kclient {
    hr_kubeconfig *cfg;
    hr_kcred cred;
    hr_ktls tls; /* the CA's memory file */
    bool cred_ok, lim_ok, rand_ok;
    int n_locks;
    CURLSH *share;
    pthread_mutex_t locks[CURL_LOCK_DATA_LAST];
    hr_klimiter lim;
    pthread_mutex_t rand_mu;
    hr_prng rand;
    char *ua;
    long timeout_ms;
    char *base;                    /* URL prefix requests are made against */
    struct curl_slist *connect_to; /* tls-server-name: real address */
    _Atomic uint64_t n_responses, n_http2, n_connects, n_rate_sets;
    hr_kstop abandon; /* hr_kclient_abandon_writes: limiter waits give up */
    bool abandon_ok;
    pthread_mutex_t lease_mu; /* guards lease_fn and lease_ud (a leaf) */
    bool lease_ok;
    hr_kuntil_fn lease_fn; /* hr_kclient_set_write_lease; NULL: none */
    void *lease_ud;
    hr_krequest_fn on_request; /* every request sent (client.h), on_request_ud; NULL: none */
    void *on_request_ud;
    hr_kstreams streams; /* the running streams, for hr_kclient_wake_streams */
    bool streams_ok;
    hr_kmux mux; /* every request's connection */
    bool mux_ok;
};

/* -------------------------------------------------------------- lifecycle */

static hr_status curl_fail(hr_err *err, const char *what, CURLcode rc)
{
    return hr_err_set(err, rc == CURLE_OUT_OF_MEMORY ? HR_E_NOMEM : HR_E_IO, "libcurl: %s: %s",
                      what, curl_easy_strerror(rc));
}

hr_status hr_kclient_new(const hr_kclient_opts *o, hr_kclient **out, hr_err *err)
{
    hr_kubeconfig_opts ko = {.kubeconfig = o ? o->kubeconfig : NULL,
                             .context = o ? o->context : NULL};
    if (o)
        ko.ov = o->ov;
    hr_kubeconfig *cfg = NULL;
    *out = NULL;
    hr_status st = hr_kubeconfig_load(&ko, &cfg, err);
    if (st)
        return st;
    return hr_kclient_new_from_config(cfg, o, out, err);
}

hr_status hr_kclient_new_from_config(hr_kubeconfig *cfg, const hr_kclient_opts *o, hr_kclient **out,
                                     hr_err *err)
{
    static const hr_kclient_opts none = {0};
    if (!o)
        o = &none;
    *out = NULL;
    hr_status gst = hr_kcurl_global_init(err); /* once per process (curlproc.h) */
    if (gst != HR_OK) {
        hr_kubeconfig_free(cfg);
        return gst;
    }
    hr_kclient *c = calloc(1, sizeof *c);
    if (!c) {
        hr_kubeconfig_free(cfg);
        return hr_err_set(err, HR_E_NOMEM, "client: out of memory");
    }
    c->cfg = cfg;
    hr_status st;
    if ((st = hr_kcred_init(&c->cred, c->cfg, err)))
        goto fail;
    c->cred_ok = true;
    if ((st = hr_ktls_init(&c->tls, c->cfg, err)))
        goto fail;
    if (hr_klimiter_init(&c->lim, o->qps, o->burst, hr_mono_ns()) != 0) {
        st = hr_err_set(err, HR_E_NOMEM, "client: cannot create a mutex");
        goto fail;
    }
    c->lim_ok = true;
    if (hr_kstop_init(&c->abandon) != 0) {
        st = hr_err_set(err, HR_E_NOMEM, "client: cannot create a mutex");
        goto fail;
    }
    c->abandon_ok = true;
    if (pthread_mutex_init(&c->rand_mu, NULL) != 0) {
        st = hr_err_set(err, HR_E_NOMEM, "client: cannot create a mutex");
        goto fail;
    }
    c->rand_ok = true;
    if (pthread_mutex_init(&c->lease_mu, NULL) != 0) {
        st = hr_err_set(err, HR_E_NOMEM, "client: cannot create a mutex");
        goto fail;
    }
    c->lease_ok = true;
    if (hr_kstreams_init(&c->streams) != 0) {
        st = hr_err_set(err, HR_E_NOMEM, "client: cannot create a mutex");
        goto fail;
    }
    c->streams_ok = true;
    if (hr_kmux_init(&c->mux) != 0) {
        st = hr_err_set(err, HR_E_NOMEM, "client: cannot create the requests' multi handle");
        goto fail;
    }
    c->mux_ok = true;
    hr_prng_seed_random(&c->rand);
    for (; c->n_locks < CURL_LOCK_DATA_LAST; c->n_locks++)
        if (pthread_mutex_init(&c->locks[c->n_locks], NULL) != 0) {
            st = hr_err_set(err, HR_E_NOMEM, "client: cannot create a mutex");
            goto fail;
        }
    c->timeout_ms = o->timeout_ms > 0 ? o->timeout_ms : 30000;
    c->on_request = o->on_request;
    c->on_request_ud = o->on_request_ud;
    c->ua = strdup(o->user_agent ? o->user_agent : "headroom/" HR_VERSION_STRING);
    if (!c->ua) {
        st = hr_err_set(err, HR_E_NOMEM, "client: out of memory");
        goto fail;
    }
    if ((st = hr_kbase_url(c->cfg, &c->base, &c->connect_to, err)))
        goto fail;

    c->share = curl_share_init();
    if (!c->share) {
        st = hr_err_set(err, HR_E_NOMEM, "libcurl: curl_share_init failed");
        goto fail;
    }
    CURLSHcode sc = curl_share_setopt(c->share, CURLSHOPT_LOCKFUNC, hr_kcurl_share_lock);
    if (sc == CURLSHE_OK)
        sc = curl_share_setopt(c->share, CURLSHOPT_UNLOCKFUNC, hr_kcurl_share_unlock);
    if (sc == CURLSHE_OK)
        sc = curl_share_setopt(c->share, CURLSHOPT_USERDATA, c->locks);
    if (sc == CURLSHE_OK)
        sc = curl_share_setopt(c->share, CURLSHOPT_SHARE, CURL_LOCK_DATA_SSL_SESSION);
    if (sc == CURLSHE_OK)
        sc = curl_share_setopt(c->share, CURLSHOPT_SHARE, CURL_LOCK_DATA_DNS);
    if (sc != CURLSHE_OK) {
        st = hr_err_set(err, HR_E_IO, "libcurl: share setup: %s", curl_share_strerror(sc));
        goto fail;
    }
    *out = c;
    return HR_OK;
fail:
    hr_kclient_free(c);
    return st;
}

void hr_kclient_free(hr_kclient *c)
{
    if (!c)
        return;
    /* Handles first: a share cannot go while handles still use it. The
     * requests' connection goes with the multi handle. */
    if (c->mux_ok)
        hr_kmux_destroy(&c->mux);
    /* CURLSHE_IN_USE would mean a stream still runs on this client: a
     * caller bug; the share is then leaked rather than freed under it. */
    if (c->share && curl_share_cleanup(c->share) != CURLSHE_OK)
        fprintf(stderr, "headroom: client freed while a request still runs\n");
    for (int i = 0; i < c->n_locks; i++)
        pthread_mutex_destroy(&c->locks[i]);
    if (c->rand_ok)
        pthread_mutex_destroy(&c->rand_mu);
    if (c->lease_ok)
        pthread_mutex_destroy(&c->lease_mu);
    if (c->streams_ok)
        hr_kstreams_destroy(&c->streams);
    if (c->lim_ok)
        hr_klimiter_destroy(&c->lim);
    if (c->abandon_ok)
        hr_kstop_destroy(&c->abandon);
    if (c->cred_ok)
        hr_kcred_destroy(&c->cred);
    hr_ktls_free(&c->tls);
    curl_slist_free_all(c->connect_to);
    free(c->base);
    free(c->ua);
    hr_kubeconfig_free(c->cfg);
    free(c);
}

const char *hr_kclient_server(const hr_kclient *c)
{
    return c->cfg->server;
}

const char *hr_kclient_namespace(const hr_kclient *c)
{
    return c->cfg->ns;
}

const char *hr_kclient_origin(const hr_kclient *c)
{
    return c->cfg->origin;
}

void hr_kclient_set_rate(hr_kclient *c, double qps, int burst)
{
    hr_klimiter_set(&c->lim, qps, burst, hr_mono_ns());
    atomic_fetch_add(&c->n_rate_sets, 1);
}

void hr_kclient_abandon_writes(hr_kclient *c, bool on)
{
    hr_kstop_set(&c->abandon, on);
}

void hr_kclient_set_write_lease(hr_kclient *c, hr_kuntil_fn fn, void *ud)
{
    pthread_mutex_lock(&c->lease_mu);
    c->lease_fn = fn;
    c->lease_ud = ud;
    pthread_mutex_unlock(&c->lease_mu);
}

/* Until when a write may be in flight (HR_KUNTIL_NONE: no lease). The
 * callback runs under lease_mu, so a replacement never races a call. */
static int64_t write_until(hr_kclient *c)
{
    pthread_mutex_lock(&c->lease_mu);
    int64_t until = c->lease_fn != NULL ? c->lease_fn(c->lease_ud) : HR_KUNTIL_NONE;
    pthread_mutex_unlock(&c->lease_mu);
    return until;
}

long hr_kclient_timeout_ms(long timeout_ms, int64_t until_ms, int64_t now_ms)
{
    if (until_ms == HR_KUNTIL_NONE)
        return timeout_ms;
    if (until_ms <= now_ms)
        return 0;
    int64_t left = until_ms - now_ms;
    return left < timeout_ms ? (long)left : timeout_ms;
}

void hr_kclient_get_rate(hr_kclient *c, double *qps, int *burst)
{
    hr_klimiter_get(&c->lim, qps, burst);
}

long hr_kclient_backoff_ms(hr_kclient *c, int attempt, long base_ms, long max_ms,
                           long retry_after_ms)
{
    pthread_mutex_lock(&c->rand_mu);
    long r = hr_kbackoff_ms_r(&c->rand, attempt, base_ms, max_ms, retry_after_ms);
    pthread_mutex_unlock(&c->rand_mu);
    return r;
}

/* --------------------------------------------------------------- transfer */

typedef struct xfer {
    CURL *h;
    long http; /* known once headers are in */
    hr_buf *resp;
    hr_buf ebody; /* body of a non-2xx answer, bounded */
    char retry_after[64];
    size_t ra_len;
    bool resp_full; /* resp refused more data */
    bool ctype_pb;  /* Content-Type: application/vnd.kubernetes.protobuf */
    /* streams */
    hr_klines lines;
    hr_kframes frames; /* instead of lines when the answer is protobuf */
    hr_kline_fn ffn;   /* the frame callback; NULL: a protobuf answer is refused */
    bool pb_refused;   /* a protobuf stream nobody asked for */
    hr_kline_fn fn;
    void *ud;
    hr_kclient *c;    /* a stream's client and path: it is counted at its */
    const char *path; /* headers (count, client.h), not when it ends */
    bool counted;
    const atomic_bool *stop;
    bool cb_stopped; /* on_line asked to stop */
    bool line_failed;
    bool delivered; /* at least one line went out */
    hr_err line_err;
    char errbuf[CURL_ERROR_SIZE];
} xfer;

static long http_code(xfer *x)
{
    if (!x->http) {
        long code = 0;
        if (curl_easy_getinfo(x->h, CURLINFO_RESPONSE_CODE, &code) == CURLE_OK)
            x->http = code;
    }
    return x->http;
}

/* A finished transfer: on_request told (client.h) its verb, code (0: no answer) and time (a
 * stream's: to its answer's first byte); its protocol and connection reuse for the stats. */
static void count(hr_kclient *c, CURL *h, const char *method, const char *path, bool stream,
                  long code)
{
    long v = 0, conns = 0;
    curl_off_t us = 0;
    CURLINFO t = stream && code != 0 ? CURLINFO_STARTTRANSFER_TIME_T : CURLINFO_TOTAL_TIME_T;
    if (c->on_request != NULL && curl_easy_getinfo(h, t, &us) == CURLE_OK && us >= 0)
        c->on_request(c->on_request_ud, hr_kverb(method, path, stream), code, (uint64_t)us * 1000u);
    if (curl_easy_getinfo(h, CURLINFO_HTTP_VERSION, &v) != CURLE_OK || v == 0)
        return;
    atomic_fetch_add(&c->n_responses, 1);
    if (v == CURL_HTTP_VERSION_2_0)
        atomic_fetch_add(&c->n_http2, 1);
    if (curl_easy_getinfo(h, CURLINFO_NUM_CONNECTS, &conns) == CURLE_OK && conns > 0)
        atomic_fetch_add(&c->n_connects, (uint64_t)conns);
}

void hr_kclient_get_stats(const hr_kclient *c, hr_kclient_stats *out)
{
    out->responses = atomic_load(&c->n_responses);
    out->http2 = atomic_load(&c->n_http2);
    out->new_connections = atomic_load(&c->n_connects);
    out->rate_sets = atomic_load(&c->n_rate_sets);
}

static bool ok2xx(long s)
{
    return s >= 200 && s < 300;
}

static size_t on_write(char *p, size_t sz, size_t n, void *ud)
{
    xfer *x = ud;
    size_t len = sz * n;
    long s = http_code(x);
    if (!ok2xx(s)) {
        if (x->ebody.len < ERR_BODY_MAX)
            hr_buf_append(&x->ebody, p,
                          len < ERR_BODY_MAX - x->ebody.len ? len : ERR_BODY_MAX - x->ebody.len);
        return len;
    }
    if (x->fn && x->ctype_pb && !x->ffn) {
        x->pb_refused = true;
        return 0; /* abort the transfer */
    }
    if (x->fn) {
        int r = x->ctype_pb ? hr_kframes_feed(&x->frames, p, len, x->ffn, x->ud, &x->line_err)
                            : hr_klines_feed(&x->lines, p, len, x->fn, x->ud, &x->line_err);
        if (r == 0) {
            x->delivered = true;
            return len;
        }
        if (r > 0)
            x->cb_stopped = true;
        else
            x->line_failed = true;
        return 0; /* abort the transfer */
    }
    if (x->resp) {
        hr_buf_append(x->resp, p, len);
        if (hr_buf_failed(x->resp)) {
            x->resp_full = true;
            return 0;
        }
    }
    return len;
}

static size_t on_header(char *p, size_t sz, size_t n, void *ud)
{
    xfer *x = ud;
    size_t len = sz * n;
    static const char ra[] = "retry-after:";
    static const char ct[] = "content-type:";
    static const char pb[] = "application/vnd.kubernetes.protobuf";
    if (len <= 2 && x->fn != NULL && !x->counted && http_code(x) >= 200) {
        x->counted = true; /* the end of a stream's final headers */
        count(x->c, x->h, "GET", x->path, true, x->http);
    } else if (len > 5 && !memcmp(p, "HTTP/", 5)) {
        /* A new response (after 100-continue): forget the last one's. */
        x->ra_len = 0;
        x->http = 0;
        x->ctype_pb = false;
    } else if (len > sizeof ct - 1 && !strncasecmp(p, ct, sizeof ct - 1)) {
        const char *v = p + sizeof ct - 1, *end = p + len;
        while (v < end && (*v == ' ' || *v == '\t'))
            v++;
        /* The media type, its parameters (;stream=watch) aside. */
        size_t vl = (size_t)(end - v), m = sizeof pb - 1;
        x->ctype_pb = vl >= m && !strncasecmp(v, pb, m) &&
                      (vl == m || v[m] == ';' || v[m] == ' ' || v[m] == '\r' || v[m] == '\n');
    } else if (len > sizeof ra - 1 && !strncasecmp(p, ra, sizeof ra - 1)) {
        size_t v = len - (sizeof ra - 1);
        if (v >= sizeof x->retry_after)
            v = sizeof x->retry_after - 1;
        memcpy(x->retry_after, p + sizeof ra - 1, v);
        x->ra_len = v;
    }
    return len;
}

/* The caller's stop flag, read atomically: it is written by another
 * thread (see hr_kclient_stream). */
static bool stop_requested(const xfer *x)
{
    return x->stop && atomic_load_explicit(x->stop, memory_order_acquire);
}

static int on_progress(void *ud, curl_off_t dt, curl_off_t dn, curl_off_t ut, curl_off_t un)
{
    (void)dt, (void)dn, (void)ut, (void)un;
    return stop_requested(ud) ? 1 : 0;
}

/* Every request socket closes abortively (SO_LINGER {1, 0}: a TCP reset,
 * unsent bytes dropped), so a connection given up after a timeout takes
 * the request with it instead of leaving it for a stalled server to run
 * when it wakes (client.h; design §10). Streams keep the ordinary close. */
static int on_sockopt(void *ud, curl_socket_t fd, curlsocktype purpose)
{
    (void)ud, (void)purpose;
    struct linger l = {1, 0};
    return setsockopt(fd, SOL_SOCKET, SO_LINGER, &l, sizeof l) == 0 ? CURL_SOCKOPT_OK
                                                                    : CURL_SOCKOPT_ERROR;
}

#define SET(opt, val)                                     \
    do {                                                  \
        CURLcode rc_ = curl_easy_setopt(h, (opt), (val)); \
        if (rc_ != CURLE_OK)                              \
            return curl_fail(err, #opt, rc_);             \
    } while (0)

static hr_status setup(hr_kclient *c, xfer *x, const char *method, const char *url,
                       const hr_kcred_snap *snap, struct curl_slist *hdrs, const void *body,
                       size_t body_len, long timeout_ms, bool stream, hr_err *err)
{
    CURL *h = x->h;
    const hr_kubeconfig *k = c->cfg;
    SET(CURLOPT_URL, url);
    SET(CURLOPT_SHARE, c->share);
    SET(CURLOPT_NOSIGNAL, 1L); /* threads: no SIGALRM-based DNS timeouts */
    SET(CURLOPT_PROTOCOLS_STR, "https,http");
    SET(CURLOPT_HTTP_VERSION, (long)CURL_HTTP_VERSION_2TLS);
    SET(CURLOPT_TCP_KEEPALIVE, 1L);
    SET(CURLOPT_TCP_KEEPIDLE, 30L);
    SET(CURLOPT_TCP_KEEPINTVL, 15L);
    SET(CURLOPT_CONNECTTIMEOUT_MS,
        timeout_ms > 0 && timeout_ms < CONNECT_TIMEOUT_MS ? timeout_ms : CONNECT_TIMEOUT_MS);
    SET(CURLOPT_TIMEOUT_MS, timeout_ms > 0 ? timeout_ms : 0L);
    SET(CURLOPT_USERAGENT, c->ua);
    SET(CURLOPT_HTTPHEADER, hdrs);
    SET(CURLOPT_ERRORBUFFER, x->errbuf);
    SET(CURLOPT_WRITEFUNCTION, on_write);
    SET(CURLOPT_WRITEDATA, x);
    SET(CURLOPT_HEADERFUNCTION, on_header);
    SET(CURLOPT_HEADERDATA, x);
    if (stream || x->stop != NULL) {
        SET(CURLOPT_XFERINFOFUNCTION, on_progress);
        SET(CURLOPT_XFERINFODATA, x);
        SET(CURLOPT_NOPROGRESS, 0L);
    }
    if (!stream) {
        SET(CURLOPT_SOCKOPTFUNCTION, on_sockopt);
        SET(CURLOPT_PIPEWAIT, 1L); /* a stream on the connection, not a new one */
    }
    hr_status st = hr_ktls_setup(h, &c->tls, k, snap, err);
    if (st)
        return st;
    if (c->connect_to)
        SET(CURLOPT_CONNECT_TO, c->connect_to);
    if (k->proxy_url)
        SET(CURLOPT_PROXY, k->proxy_url);
    if (strcmp(method, "GET") == 0) {
        SET(CURLOPT_HTTPGET, 1L);
    } else {
        if (body || strcmp(method, "DELETE") != 0) {
            SET(CURLOPT_POSTFIELDSIZE_LARGE, (curl_off_t)body_len);
            SET(CURLOPT_POSTFIELDS, body ? (const char *)body : "");
            /* curl's smallest upload buffer: a body here is a few hundred
             * bytes, and every pooled handle keeps its buffer (64 kB by
             * default) after the first upload that needs one. */
            SET(CURLOPT_UPLOAD_BUFFERSIZE, UPLOAD_BUFFER);
        }
        SET(CURLOPT_CUSTOMREQUEST, method);
    }
    return HR_OK;
}

#undef SET

static bool path_ok(const char *p)
{
    if (!p || p[0] != '/')
        return false;
    for (; *p; p++)
        if ((unsigned char)*p <= ' ' || *p == 0x7f || *p == '#')
            return false;
    return true;
}

/* The slist holds the bearer token: wipe it before freeing. */

static hr_status transport_err(hr_kclient *c, hr_err *err, const char *method, const char *path,
                               CURLcode rc, const char *detail, long timeout_ms)
{
    char p[120];
    hr_err_quote(p, sizeof p, path, strlen(path), 100);
    const char *d = detail && *detail ? detail : curl_easy_strerror(rc);
    /* curl's detail says which limit hit (connect, TLS, whole request);
     * naming our total here would misreport a connect timeout. */
    if (rc == CURLE_OPERATION_TIMEDOUT && timeout_ms > 0)
        return hr_err_set(err, HR_E_IO, "%s %s: timed out (%s, request limit %ld ms): %s", method,
                          p, c->cfg->server, timeout_ms, d);
    if (rc == CURLE_OPERATION_TIMEDOUT)
        return hr_err_set(err, HR_E_IO, "%s %s: timed out (%s): %s", method, p, c->cfg->server, d);
    return hr_err_set(err, rc == CURLE_OUT_OF_MEMORY ? HR_E_NOMEM : HR_E_IO, "%s %s: %s: %s",
                      method, p, c->cfg->server, d);
}

static char *join_url(hr_kclient *c, const char *path)
{
    size_t n = strlen(c->base) + strlen(path) + 1;
    char *u = malloc(n);
    if (u)
        snprintf(u, n, "%s%s", c->base, path);
    return u;
}

/* The server answered with an error status and then cut the connection
 * (kube-apiserver closes it after a 401, often while curl still sends the
 * request body). The status and whatever body arrived are the answer; only
 * for a 2xx would a cut body mean a failed request. */
static bool error_answered(const xfer *x, CURLcode rc)
{
    if (x->http < 400)
        return false;
    switch (rc) {
    case CURLE_PARTIAL_FILE:
    case CURLE_HTTP2:
    case CURLE_HTTP2_STREAM:
    case CURLE_RECV_ERROR:
    case CURLE_SEND_ERROR: return true;
    default: return false;
    }
}

/* Fill res and err for a finished exchange that was not 2xx. */
static hr_status http_err(xfer *x, const char *method, const char *path, hr_kresult *res,
                          hr_err *err)
{
    hr_kstatus st;
    const char *body = hr_buf_failed(&x->ebody) ? NULL : x->ebody.data;
    if (x->ctype_pb)
        hr_kstatus_parse_pb((const uint8_t *)body, body ? x->ebody.len : 0, &st);
    else
        hr_kstatus_parse(body, x->ebody.len, &st);
    long ra = hr_kretry_after_ms(x->retry_after, x->ra_len, time(NULL));
    if (st.retry_after_s * 1000 > ra)
        ra = st.retry_after_s * 1000;
    if (res)
        res->retry_after_ms = ra;
    return hr_kstatus_err(err, method, path, x->http, &st);
}

static hr_status request(hr_kclient *c, const char *method, const char *path, const char *accept,
                         const char *content_type, const void *body, size_t body_len, hr_buf *resp,
                         hr_kresult *res, bool limited, int64_t until_ms, hr_err *err);
static hr_status request_stop(hr_kclient *c, const char *method, const char *path,
                              const char *accept, const char *content_type, const void *body,
                              size_t body_len, hr_buf *resp, hr_kresult *res, bool limited,
                              int64_t until_ms, const atomic_bool *stop, hr_err *err);

hr_status hr_kclient_do(hr_kclient *c, const char *method, const char *path,
                        const char *content_type, const void *body, size_t body_len, hr_buf *resp,
                        hr_kresult *res, hr_err *err)
{
    bool write = method && strcmp(method, "GET") != 0;
    return request(c, method, path, NULL, content_type, body, body_len, resp, res, write,
                   HR_KUNTIL_NONE, err);
}

hr_status hr_kclient_get_as(hr_kclient *c, const char *path, const char *accept, hr_buf *resp,
                            hr_kresult *res, hr_err *err)
{
    return request(c, "GET", path, accept, NULL, NULL, 0, resp, res, false, HR_KUNTIL_NONE, err);
}

hr_status hr_kclient_do_as(hr_kclient *c, int64_t until_ms, const char *method, const char *path,
                           const char *accept, const char *content_type, const void *body,
                           size_t body_len, hr_buf *resp, hr_kresult *res, hr_err *err)
{
    bool write = method && strcmp(method, "GET") != 0;
    return request(c, method, path, accept, content_type, body, body_len, resp, res, write,
                   until_ms, err);
}

hr_status hr_kclient_do_unlimited(hr_kclient *c, const char *method, const char *path,
                                  const char *content_type, const void *body, size_t body_len,
                                  hr_buf *resp, hr_kresult *res, hr_err *err)
{
    return request(c, method, path, NULL, content_type, body, body_len, resp, res, false,
                   HR_KUNTIL_NONE, err);
}

hr_status hr_kclient_do_unlimited_until(hr_kclient *c, int64_t until_ms, const atomic_bool *stop,
                                        const char *method, const char *path,
                                        const char *content_type, const void *body, size_t body_len,
                                        hr_buf *resp, hr_kresult *res, hr_err *err)
{
    return request_stop(c, method, path, NULL, content_type, body, body_len, resp, res, false,
                        until_ms, stop, err);
}

/* The timeout for the next attempt of a request bounded by until_ms and,
 * for a write, by the write lease — asked now, after any wait (design §10);
 * 0: the time has come, send nothing. */
static long attempt_timeout(hr_kclient *c, bool write, int64_t until_ms)
{
    if (write) {
        int64_t lease = write_until(c);
        if (lease < until_ms)
            until_ms = lease;
    }
    return hr_kclient_timeout_ms(c->timeout_ms, until_ms, hr_mono_ms());
}

static hr_status request(hr_kclient *c, const char *method, const char *path, const char *accept,
                         const char *content_type, const void *body, size_t body_len, hr_buf *resp,
                         hr_kresult *res, bool limited, int64_t until_ms, hr_err *err)
{
    return request_stop(c, method, path, accept, content_type, body, body_len, resp, res, limited,
                        until_ms, NULL, err);
}

/* stop: the transfer is aborted (progress callback) once it turns true. */
static hr_status request_stop(hr_kclient *c, const char *method, const char *path,
                              const char *accept, const char *content_type, const void *body,
                              size_t body_len, hr_buf *resp, hr_kresult *res, bool limited,
                              int64_t until_ms, const atomic_bool *stop, hr_err *err)
{
    hr_kresult dummy;
    if (!res)
        res = &dummy;
    res->status = 0;
    res->retry_after_ms = 0;
    res->protobuf = false;
    if (!path_ok(path))
        return hr_err_set(err, HR_E_INPUT,
                          "request path must start with '/' and contain no "
                          "spaces or control characters");
    if (!method || !*method)
        return hr_err_set(err, HR_E_INPUT, "request without a method");
    if (limited && hr_klimiter_wait_stop(&c->lim, &c->abandon) != HR_OK)
        return hr_err_set(err, HR_E_CANCELED,
                          "%s %s: abandoned on shutdown while waiting for the write limiter",
                          method, path);
    char *url = join_url(c, path);
    if (!url)
        return hr_err_set(err, HR_E_NOMEM, "client: out of memory");
    size_t resp_len0 = resp ? resp->len : 0;
    hr_status st = HR_OK;
    for (int attempt = 0;; attempt++) {
        xfer x;
        memset(&x, 0, sizeof x);
        hr_buf_init(&x.ebody, ERR_BODY_MAX + 1);
        x.resp = resp;
        x.stop = stop;
        hr_kcred_snap snap;
        struct curl_slist *hdrs = NULL;
        bool again = false;
        if ((st = hr_kcred_get(&c->cred, &snap, err)))
            break;
        if ((st = hr_kheaders_build(&snap, c->cfg, accept, content_type, &hdrs, err))) {
            hr_kcred_snap_free(&snap);
            break;
        }
        /* Asked last, right before the bytes go out: the limiter wait and
         * the credential lookup are behind us. */
        long timeout_ms = attempt_timeout(c, limited, until_ms);
        x.h = timeout_ms > 0 ? hr_kmux_take(&c->mux) : NULL;
        if (timeout_ms <= 0) {
            st = hr_err_set(err, HR_E_EXPIRED,
                            "%s %s: not sent: the write lease (or the caller's deadline) has "
                            "run out",
                            method, path);
        } else if (!x.h) {
            st = hr_err_set(err, HR_E_NOMEM, "libcurl: curl_easy_init failed");
        } else if (!(st = setup(c, &x, method, url, &snap, hdrs, body, body_len, timeout_ms, false,
                                err))) {
            uint64_t gen = 0;
            bool cut = false;
            CURLcode rc = hr_kmux_perform(&c->mux, x.h, &gen, &cut);
            if (cut)
                snprintf(x.errbuf, sizeof x.errbuf,
                         "the connection was reset: another request on it failed");
            http_code(&x);
            res->status = x.http;
            res->protobuf = x.ctype_pb;
            bool answered = rc == CURLE_OK || x.resp_full || error_answered(&x, rc);
            count(c, x.h, method, path, false, answered ? x.http : 0);
            if (x.resp_full) {
                st = hr_err_set(err, HR_E_LIMIT,
                                "%s %s: response larger than the buffer "
                                "allows (%zu bytes)",
                                method, path, resp ? resp->limit : 0);
            } else if (rc != CURLE_OK && !error_answered(&x, rc)) {
                res->status = 0;
                st = transport_err(c, err, method, path, rc, x.errbuf, timeout_ms);
                /* Its connection goes with a reset: a stalled server must
                 * not find the request waiting when it wakes (client.h).
                 * A request ended by its own stop flag is not a failure of
                 * the connection: curl ends that stream alone (HTTP/2
                 * RST_STREAM; over HTTP/1.1, its own connection), and
                 * requests beside it go on. */
                if (!cut && rc != CURLE_ABORTED_BY_CALLBACK)
                    hr_kmux_reset(&c->mux, gen);
            } else if (!ok2xx(x.http)) {
                if (x.http == 401 && attempt == 0 && snap.refreshable &&
                    hr_kcred_unauthorized(&c->cred, snap.gen)) {
                    again = true;
                    if (resp) {
                        resp->len = resp_len0;
                        if (resp->data)
                            resp->data[resp_len0] = '\0';
                    }
                } else {
                    st = http_err(&x, method, path, res, err);
                }
            }
        }
        hr_kmux_give(&c->mux, x.h);
        hr_kheaders_free(hdrs);
        hr_kcred_snap_free(&snap);
        hr_buf_free(&x.ebody);
        if (!again)
            break;
    }
    free(url);
    return st;
}

int64_t hr_kclient_urgent_writes(hr_kclient *c, int64_t delta)
{
    return hr_klimiter_urgent_add(&c->lim, delta);
}

int64_t hr_kclient_yield_claim_ns(hr_kclient *c)
{
    double qps;
    int burst;
    hr_klimiter_get(&c->lim, &qps, &burst);
    return hr_klimiter_yield_claim(&c->lim, hr_mono_ns(), burst / 2.0); /* half the burst kept */
}

void hr_kclient_streams_woken(hr_kclient *c, bool woken)
{
    atomic_store(&c->streams.woken, woken);
}

void hr_kclient_wake_streams(hr_kclient *c)
{
    hr_kstreams_wake(&c->streams);
}

/* Run one stream transfer on a private multi handle; *rc gets the result.
 * It sleeps in curl_multi_poll until data, a wake or the poll interval. */
static hr_status run_stream(hr_kclient *c, xfer *x, CURLcode *rc, hr_err *err)
{
    CURLM *m = curl_multi_init();
    if (!m)
        return hr_err_set(err, HR_E_NOMEM, "libcurl: curl_multi_init failed");
    CURLMcode mc = curl_multi_add_handle(m, x->h);
    if (mc != CURLM_OK) {
        (void)curl_multi_cleanup(m); /* nothing added: cannot fail usefully */
        return hr_err_set(err, HR_E_IO, "libcurl: %s", curl_multi_strerror(mc));
    }
    int slot = hr_kstreams_add(&c->streams, m); /* before the first look at the flag */
    int poll_ms =
        slot >= 0 && atomic_load(&c->streams.woken) ? STREAM_WOKEN_POLL_MS : STREAM_POLL_MS;
    *rc = CURLE_OK;
    int running = 1;
    while (running) {
        mc = curl_multi_perform(m, &running);
        if (mc != CURLM_OK)
            break;
        if (stop_requested(x))
            break;
        if (running)
            mc = curl_multi_poll(m, NULL, 0, poll_ms, NULL);
        if (mc != CURLM_OK)
            break;
    }
    hr_status st = HR_OK;
    if (mc != CURLM_OK)
        st = hr_err_set(err, HR_E_IO, "libcurl: %s", curl_multi_strerror(mc));
    else if (running)
        *rc = CURLE_ABORTED_BY_CALLBACK; /* left the loop on the stop flag */
    int q;
    CURLMsg *msg;
    while ((msg = curl_multi_info_read(m, &q)) != NULL)
        if (msg->msg == CURLMSG_DONE && msg->easy_handle == x->h)
            *rc = msg->data.result;
    hr_kstreams_remove(&c->streams, slot);
    /* Removal aborts a transfer still running (stop flag) and closes its
     * connection; failures here leave nothing to undo. */
    mc = curl_multi_remove_handle(m, x->h);
    if (mc == CURLM_OK)
        mc = curl_multi_cleanup(m);
    if (mc != CURLM_OK && !st)
        st = hr_err_set(err, HR_E_IO, "libcurl: ending a stream: %s", curl_multi_strerror(mc));
    return st;
}

hr_status hr_kclient_stream(hr_kclient *c, const char *path, long timeout_s, hr_kline_fn on_line,
                            void *ud, const atomic_bool *stop, hr_kresult *res, hr_err *err)
{
    return hr_kclient_stream_as(c, path, NULL, timeout_s, on_line, NULL, ud, stop, res, err);
}

hr_status hr_kclient_stream_as(hr_kclient *c, const char *path, const char *accept, long timeout_s,
                               hr_kline_fn on_line, hr_kline_fn on_frame, void *ud,
                               const atomic_bool *stop, hr_kresult *res, hr_err *err)
{
    hr_kresult dummy;
    if (!res)
        res = &dummy;
    res->status = 0;
    res->retry_after_ms = 0;
    res->protobuf = false;
    if (!path_ok(path))
        return hr_err_set(err, HR_E_INPUT,
                          "stream path must start with '/' and contain no "
                          "spaces or control characters");
    if (!on_line)
        return hr_err_set(err, HR_E_INPUT, "stream without a line callback");
    char *url = join_url(c, path);
    if (!url)
        return hr_err_set(err, HR_E_NOMEM, "client: out of memory");
    long timeout_ms = timeout_s > 0 ? timeout_s * 1000 : 0;
    hr_status st = HR_OK;
    for (int attempt = 0;; attempt++) {
        xfer x;
        memset(&x, 0, sizeof x);
        hr_buf_init(&x.ebody, ERR_BODY_MAX + 1);
        hr_klines_init(&x.lines, 0);
        hr_kframes_init(&x.frames, 0);
        x.ffn = on_frame;
        x.fn = on_line;
        x.ud = ud;
        x.c = c, x.path = path;
        x.stop = stop;
        hr_kcred_snap snap;
        struct curl_slist *hdrs = NULL;
        bool again = false;
        if ((st = hr_kcred_get(&c->cred, &snap, err)))
            break;
        if ((st = hr_kheaders_build(&snap, c->cfg, accept, NULL, &hdrs, err))) {
            hr_kcred_snap_free(&snap);
            break;
        }
        /* A fresh handle, not a pooled one: joining a multi handle would
         * close a pooled handle's warm connection, and a stream's own
         * connection is closed with its private multi anyway. */
        x.h = curl_easy_init();
        CURLcode rc = CURLE_OK;
        if (!x.h)
            st = hr_err_set(err, HR_E_NOMEM, "libcurl: curl_easy_init failed");
        else if (!(st = setup(c, &x, "GET", url, &snap, hdrs, NULL, 0, timeout_ms, true, err))) {
            st = run_stream(c, &x, &rc, err);
            if (!x.counted) /* no headers came: a transport failure */
                count(c, x.h, "GET", path, true, http_code(&x));
        }
        if (!st) {
            http_code(&x);
            res->status = x.http;
            res->protobuf = x.ctype_pb;
            if (x.cb_stopped || stop_requested(&x)) {
                st = HR_OK;
            } else if (x.pb_refused) {
                st = hr_err_set(err, HR_E_INPUT,
                                "GET %.100s: a protobuf stream answered a request for JSON", path);
            } else if (x.line_failed) {
                st = x.line_err.code;
                if (err)
                    *err = x.line_err;
                hr_err_prefix(err, "GET %.100s", path);
            } else if (rc != CURLE_OK && !error_answered(&x, rc)) {
                if (!ok2xx(x.http))
                    res->status = 0;
                st = transport_err(c, err, "GET", path, rc, x.errbuf, timeout_ms);
                if (hr_klines_pending(&x.lines))
                    hr_err_prefix(err, "stream cut inside a line (%zu bytes dropped)",
                                  hr_klines_pending(&x.lines));
                else if (hr_kframes_pending(&x.frames))
                    hr_err_prefix(err, "stream cut inside a frame (%zu bytes dropped)",
                                  hr_kframes_pending(&x.frames));
            } else if (!ok2xx(x.http)) {
                if (x.http == 401 && attempt == 0 && snap.refreshable &&
                    hr_kcred_unauthorized(&c->cred, snap.gen))
                    again = true;
                else
                    st = http_err(&x, "GET", path, res, err);
            } else if (!x.ctype_pb && hr_klines_finish(&x.lines, on_line, ud, err) < 0) {
                st = err ? err->code : HR_E_IO;
            } else if (x.ctype_pb && hr_kframes_pending(&x.frames)) {
                st = hr_err_set(err, HR_E_IO, "GET %.100s: stream ended inside a frame (%zu bytes)",
                                path, hr_kframes_pending(&x.frames));
            }
        }
        if (x.h)
            curl_easy_cleanup(x.h);
        hr_kheaders_free(hdrs);
        hr_kcred_snap_free(&snap);
        hr_buf_free(&x.ebody);
        hr_klines_free(&x.lines);
        hr_kframes_free(&x.frames);
        if (!again)
            break;
    }
    free(url);
    return st;
}
