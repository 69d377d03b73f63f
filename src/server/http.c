/*
 * http.c — the libmicrohttpd listener behind http.h.
 *
 * Per request, the access handler is called once with the headers (route
 * lookup and the body checks of request.h happen there, so an oversized,
 * misrouted or GET-with-body request is answered before its body is read),
 * then once per chunk of body (counted against the route's limit as it
 * arrives), then once more to produce the answer. The TLS certificate
 * is picked per handshake by a GnuTLS callback that finds this listener
 * through the connection's socket context (set when MHD announces the
 * connection), so no global state is needed to serve rotating certs.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <netdb.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include <gnutls/gnutls.h>
#include <microhttpd.h>

#include "server/http.h"
#include "util/clock.h"
#include "util/tname.h"

#define MAX_ROUTES 16

/* One open connection, as the deadline watchdog sees it. */
typedef struct tconn {
    struct hr_listener *l;
    int fd;
    int64_t since_ns;    /* accepted, or the previous answer completed */
    int64_t deadline_ns; /* since + the header or the request deadline */
    bool in_request;     /* headers read: the whole-request deadline runs */
    bool served;         /* a request on it has ended: a keep-alive connection */
    bool fired;          /* shut down (deadline or eviction): closing, not counted */
    struct tconn *prev, *next;
} tconn;

struct hr_listener {
    struct MHD_Daemon *d;
    /* Deadlines: every connection is on this list (guarded by mu) from
     * MHD's "started" to its "closed" notice, which MHD gives before it
     * closes the socket, so the watchdog never shuts down a reused fd. */
    pthread_mutex_t mu;
    pthread_cond_t cv;
    tconn *conns;         /* newest first */
    unsigned n_live, cap; /* connections not fired; at most cap of them */
    bool stop;
    bool watchdog_running;
    pthread_t watchdog;
    int64_t header_ns, request_ns;
    hr_route routes[MAX_ROUTES];
    size_t n_routes;
    hr_certs *tls;
    bool tls_fallback;
    hr_authz *authz;
    hr_body_budget budget;
    hr_logger log;
    char name[32];
    uint16_t port;
};

/* A request's state from its headers to its end, owned by the MHD side
 * (freed in on_completed). A guarded request whose verdict is not cached
 * also lends its waiter to the authorizer (authz.h): from the moment
 * hr_authz_start returns PENDING until w.done runs, the review side may
 * touch w and, under mu, waiting, suspended and v — nothing else. The
 * access handler suspends the connection under mu unless done has come
 * already, and done, having seen (under mu) that it was suspended, resumes
 * it after releasing mu, so the resume never precedes the suspend and
 * done never touches st after the handler or on_completed may have it;
 * MHD calls the handler again on resume, which answers from v. */
typedef struct req_state {
    const hr_route *route;
    hr_body body;
    bool authz;   /* waiting for, or holding, a review's verdict */
    bool replied; /* an answer is queued: nothing more to do */
    hr_authz_waiter w;
    struct MHD_Connection *c;
    pthread_mutex_t mu; /* when authz was set: guards the three below */
    bool waiting, suspended;
    hr_authz_verdict v;
} req_state;

/* Marks a request already answered on its first call (no state to free). */
static char answered_early;

hr_status hr_parse_addr(const char *addr, char *host, size_t host_cap, uint16_t *port, hr_err *err)
{
    const char *colon = addr ? strrchr(addr, ':') : NULL;
    if (colon == NULL)
        return hr_err_set(err, HR_E_INPUT, "address %s: want host:port or :port",
                          addr ? addr : "(null)");
    const char *h = addr;
    size_t hl = (size_t)(colon - addr);
    if (hl >= 2 && h[0] == '[' && h[hl - 1] == ']') {
        h++;
        hl -= 2;
    }
    if (hl >= host_cap)
        return hr_err_set(err, HR_E_INPUT, "address %s: host too long", addr);
    char *end;
    unsigned long p = strtoul(colon + 1, &end, 10);
    if (colon[1] == '\0' || *end != '\0' || p > 65535)
        return hr_err_set(err, HR_E_INPUT, "address %s: bad port", addr);
    memcpy(host, h, hl);
    host[hl] = '\0';
    *port = (uint16_t)p;
    return HR_OK;
}

/* MHD's messages, passed on at debug level (they are about clients). */
static void mhd_log(void *cls, const char *fmt, va_list ap) __attribute__((format(printf, 2, 0)));
static void mhd_log(void *cls, const char *fmt, va_list ap)
{
    hr_listener *l = cls;
    char m[512];
    vsnprintf(m, sizeof m, fmt, ap);
    size_t n = strlen(m);
    while (n > 0 && (m[n - 1] == '\n' || m[n - 1] == '\r'))
        m[--n] = '\0';
    for (char *p = m; *p; p++)
        if (*p == '"')
            *p = '\'';
    hr_logf(&l->log, HR_LV_DEBUG, "msg=\"http: %s\" listener=%s", m, l->name);
}

/* The connection to shut down so that `fresh` fits under the cap: one
 * not in a request — never served first, by its accept, then a keep-alive
 * one between requests, by its last answer — the oldest of its kind; NULL
 * when every other one is in a request. Called with l->mu held. */
static tconn *evict_pick(hr_listener *l, const tconn *fresh)
{
    tconn *best = NULL;
    for (tconn *t = l->conns; t; t = t->next) {
        if (t == fresh || t->fired || t->in_request)
            continue;
        if (best == NULL || (best->served && !t->served) ||
            (best->served == t->served && t->since_ns <= best->since_ns))
            best = t;
    }
    return best;
}

/* A new connection over the cap evicts one that has not got as far
 * (evict_pick), or, when all the others are in a request, is refused
 * itself: a flood of idle or slow connections, from however many
 * addresses, cannot keep a client out that sends its request at once.
 * MHD's own limit is twice the cap, so the sockets being shut down never
 * make it refuse an accept. */
static void conn_admit(hr_listener *l, tconn *t)
{
    pthread_mutex_lock(&l->mu);
    t->next = l->conns;
    if (l->conns)
        l->conns->prev = t;
    l->conns = t;
    l->n_live++;
    tconn *victim = NULL;
    bool served = false;
    if (l->n_live > l->cap) {
        victim = evict_pick(l, t);
        if (victim == NULL)
            victim = t;
        served = victim->served;
        victim->fired = true;
        l->n_live--;
        (void)shutdown(victim->fd, SHUT_RDWR);
    }
    pthread_cond_signal(&l->cv); /* the dog may be asleep without a deadline */
    pthread_mutex_unlock(&l->mu);
    if (victim != NULL)
        hr_logf(&l->log, HR_LV_DEBUG, "msg=\"http: listener full, %s\" listener=%s cap=%u",
                victim == t ? "new connection refused (all others in a request)"
                : served    ? "oldest idle keep-alive connection evicted"
                            : "oldest connection without a request evicted",
                l->name, l->cap);
}

static void on_connection(void *cls, struct MHD_Connection *c, void **socket_context,
                          enum MHD_ConnectionNotificationCode toe)
{
    hr_listener *l = cls;
    if (toe == MHD_CONNECTION_NOTIFY_STARTED) {
        const union MHD_ConnectionInfo *ci =
            MHD_get_connection_info(c, MHD_CONNECTION_INFO_CONNECTION_FD);
        tconn *t = calloc(1, sizeof *t);
        if (t == NULL || ci == NULL) {
            /* Untracked means unbounded: refuse it instead. */
            free(t);
            *socket_context = NULL;
            if (ci != NULL)
                (void)shutdown(ci->connect_fd, SHUT_RDWR);
            return;
        }
        t->l = l;
        t->fd = ci->connect_fd;
        t->since_ns = hr_mono_ns();
        t->deadline_ns = t->since_ns + l->header_ns;
        *socket_context = t;
        conn_admit(l, t);
        return;
    }
    tconn *t = *socket_context;
    if (t == NULL)
        return;
    pthread_mutex_lock(&l->mu);
    if (t->prev)
        t->prev->next = t->next;
    else
        l->conns = t->next;
    if (t->next)
        t->next->prev = t->prev;
    if (!t->fired)
        l->n_live--;
    pthread_mutex_unlock(&l->mu);
    free(t);
    *socket_context = NULL;
}

/* The connection's entry, from MHD's socket context. */
static tconn *conn_of(struct MHD_Connection *c)
{
    const union MHD_ConnectionInfo *ci =
        MHD_get_connection_info(c, MHD_CONNECTION_INFO_SOCKET_CONTEXT);
    return ci ? ci->socket_context : NULL;
}

/* The headers of a request are in (in_request) or its answer is done. */
static void conn_phase(tconn *t, bool in_request)
{
    if (t == NULL)
        return;
    hr_listener *l = t->l;
    pthread_mutex_lock(&l->mu);
    t->in_request = in_request;
    if (in_request) {
        t->deadline_ns = t->since_ns + l->request_ns;
    } else {
        t->served = true;
        t->since_ns = hr_mono_ns();
        t->deadline_ns = t->since_ns + l->header_ns;
    }
    pthread_cond_signal(&l->cv); /* the deadline moved */
    pthread_mutex_unlock(&l->mu);
}

/* Shut down the sockets past their deadline; MHD sees the end of the
 * stream and closes them on its own thread. The dog sleeps until the
 * earliest deadline of a connection not yet cut, and without connections
 * until one comes: a new connection and every change of phase (which moves
 * its deadline) signal l->cv, so an idle listener never wakes. */
static void *watchdog_main(void *arg)
{
    hr_listener *l = arg;
    hr_thread_name("hr-http-dog");
    pthread_mutex_lock(&l->mu);
    while (!l->stop) {
        int64_t now = hr_mono_ns(), next = INT64_MAX;
        unsigned n_header = 0, n_request = 0;
        for (tconn *t = l->conns; t; t = t->next) {
            if (t->fired)
                continue;
            if (now < t->deadline_ns) {
                if (t->deadline_ns < next)
                    next = t->deadline_ns;
                continue;
            }
            t->fired = true;
            l->n_live--;
            (void)shutdown(t->fd, SHUT_RDWR);
            if (t->in_request)
                n_request++;
            else
                n_header++;
        }
        if (n_header + n_request > 0) {
            pthread_mutex_unlock(&l->mu);
            hr_logf(&l->log, HR_LV_DEBUG,
                    "msg=\"http: connections past their deadline closed\" listener=%s "
                    "header=%u request=%u",
                    l->name, n_header, n_request);
            pthread_mutex_lock(&l->mu);
            continue; /* the list may have changed meanwhile: look again */
        }
        if (l->stop)
            break;
        if (next == INT64_MAX) {
            pthread_cond_wait(&l->cv, &l->mu);
        } else {
            struct timespec until = hr_mono_timespec(next);
            (void)pthread_cond_timedwait(&l->cv, &l->mu, &until); /* ETIMEDOUT: look */
        }
    }
    pthread_mutex_unlock(&l->mu);
    return NULL;
}

static int cert_callback(gnutls_session_t s, const gnutls_datum_t *req_ca_rdn, int nreqs,
                         const gnutls_pk_algorithm_t *algos, int n_algos, gnutls_pcert_st **pcert,
                         unsigned int *pcert_len, gnutls_privkey_t *key)
{
    (void)req_ca_rdn;
    (void)nreqs;
    (void)algos;
    (void)n_algos;
    struct MHD_Connection *c = gnutls_session_get_ptr(s);
    if (c == NULL)
        return -1;
    tconn *t = conn_of(c);
    hr_listener *l = t ? t->l : NULL;
    if (l == NULL || l->tls == NULL)
        return -1;
    unsigned n = 0;
    if ((l->tls_fallback ? hr_certs_select_any : hr_certs_select)(l->tls, pcert, &n, key) != 0)
        return -1; /* no certificate yet: the handshake fails, cleanly */
    *pcert_len = n;
    return 0;
}

static enum MHD_Result reply(struct MHD_Connection *c, int status, const char *ctype,
                             const char *encoding, hr_buf *body)
{
    struct MHD_Response *r;
    if (body->data != NULL && !hr_buf_failed(body)) {
        r = MHD_create_response_from_buffer(body->len, body->data, MHD_RESPMEM_MUST_FREE);
        if (r != NULL) {
            /* MHD owns the bytes now. */
            body->data = NULL;
            body->len = body->cap = 0;
        }
    } else {
        r = MHD_create_response_from_buffer(0, (void *)"", MHD_RESPMEM_PERSISTENT);
    }
    if (r == NULL)
        return MHD_NO;
    MHD_add_response_header(r, MHD_HTTP_HEADER_CONTENT_TYPE,
                            ctype ? ctype : "text/plain; charset=utf-8");
    if (status == 401)
        MHD_add_response_header(r, MHD_HTTP_HEADER_WWW_AUTHENTICATE, "Bearer");
    if (status == 429 || status == 503)
        MHD_add_response_header(r, MHD_HTTP_HEADER_RETRY_AFTER, "1");
    if (encoding != NULL) {
        MHD_add_response_header(r, MHD_HTTP_HEADER_CONTENT_ENCODING, encoding);
        MHD_add_response_header(r, MHD_HTTP_HEADER_VARY, MHD_HTTP_HEADER_ACCEPT_ENCODING);
    }
    enum MHD_Result ret = MHD_queue_response(c, (unsigned)status, r);
    MHD_destroy_response(r);
    return ret;
}

static enum MHD_Result reply_text(struct MHD_Connection *c, int status, const char *text)
{
    hr_buf b;
    hr_buf_init(&b, 0);
    hr_buf_puts(&b, text);
    enum MHD_Result ret = reply(c, status, NULL, NULL, &b);
    hr_buf_free(&b);
    return ret;
}

static const char *authz_msg(int status)
{
    switch (status) {
    case 401: return "unauthorized: a bearer token is needed\n";
    case 403: return "forbidden\n";
    case 429: return "too many token reviews outstanding, try again\n";
    case 503: return "shutting down\n";
    default: return "authorization failed, try again\n";
    }
}

/* The review's end (authz.h's waiter contract): runs on a review thread or
 * in hr_authz_shutdown, with the authorizer's lock held. st is not touched
 * once mu is released: a request that was not suspended may be answered
 * and freed from then on. A suspended one stays until it is resumed (MHD
 * frees no suspended connection), so c is still valid for the resume. */
static void review_done(hr_authz_waiter *w, hr_authz_verdict v)
{
    req_state *st = (req_state *)((char *)w - offsetof(req_state, w));
    pthread_mutex_lock(&st->mu);
    st->v = v;
    st->waiting = false;
    bool resume = st->suspended;
    st->suspended = false;
    struct MHD_Connection *c = st->c;
    pthread_mutex_unlock(&st->mu);
    if (resume)
        MHD_resume_connection(c);
}

/* The route's answer. */
static enum MHD_Result serve(struct MHD_Connection *c, req_state *st, const char *method,
                             const char *url)
{
    hr_http_req req = {
        .method = method,
        .path = url,
        .content_type = MHD_lookup_connection_value(c, MHD_HEADER_KIND, "Content-Type"),
        .accept_encoding = MHD_lookup_connection_value(c, MHD_HEADER_KIND, "Accept-Encoding"),
        .body = hr_body_str(&st->body),
        .body_len = st->body.len,
    };
    hr_http_resp resp = {200, NULL, {0}, NULL};
    hr_buf_init(&resp.body, 0);
    st->route->fn(st->route->ud, &req, &resp);
    enum MHD_Result ret;
    if (hr_buf_failed(&resp.body))
        ret = reply_text(c, 500, "out of memory\n");
    else
        ret = reply(c, resp.status, resp.content_type, resp.content_encoding, &resp.body);
    hr_buf_free(&resp.body);
    st->replied = true;
    return ret;
}

/* A guarded request once its verdict is in (at once from the cache, on
 * resume, or the call after the verdict came before the suspend): a
 * refusal is answered now (and the connection closed, as for every early
 * answer); an allowed request goes on as any other — a guarded route takes
 * no body (hr_listener_start) — and is served by the last call, so a
 * scraper's keep-alive connection stays open. */
static enum MHD_Result after_review(hr_listener *l, struct MHD_Connection *c, req_state *st)
{
    pthread_mutex_lock(&st->mu);
    bool waiting = st->waiting;
    hr_authz_verdict v = st->v;
    pthread_mutex_unlock(&st->mu);
    if (waiting)
        return MHD_YES; /* cannot happen: a waiting request is suspended */
    st->authz = false;
    int status = hr_authz_status(v);
    if (status == 0) {
        int rc = hr_body_begin(&st->body, 0, 0, &l->budget);
        if (rc != HR_BODY_OK)
            status = rc;
    }
    if (status != 0) {
        st->replied = true;
        return reply_text(c, status,
                          status == 503 && v != HR_AUTHZ_UNAVAILABLE ? "server busy\n"
                                                                     : authz_msg(status));
    }
    return MHD_YES;
}

/* A guarded request's first call: the verdict now (a reply), or a review
 * to wait for — the connection is suspended, no thread waits. */
static enum MHD_Result guard(hr_listener *l, struct MHD_Connection *c, const hr_route *route,
                             const char *method, const char *url, void **con_cls)
{
    char verb[16];
    size_t i = 0;
    for (; method[i] && i < sizeof verb - 1; i++)
        verb[i] = (char)(method[i] >= 'A' && method[i] <= 'Z' ? method[i] + 32 : method[i]);
    verb[i] = '\0';
    const char *az = MHD_lookup_connection_value(c, MHD_HEADER_KIND, MHD_HTTP_HEADER_AUTHORIZATION);
    req_state *st = calloc(1, sizeof *st);
    if (st == NULL)
        return MHD_NO;
    if (pthread_mutex_init(&st->mu, NULL) != 0) {
        free(st);
        return MHD_NO;
    }
    st->route = route;
    st->authz = true;
    st->c = c;
    st->waiting = true;
    st->w.done = review_done;
    *con_cls = st; /* on_completed frees it from here on */
    hr_authz_verdict v = hr_authz_start(l->authz, az, verb, url, &st->w);
    pthread_mutex_lock(&st->mu);
    if (v != HR_AUTHZ_PENDING) {
        st->waiting = false;
        st->v = v;
    } else if (st->waiting) {
        MHD_suspend_connection(c);
        st->suspended = true;
    }
    pthread_mutex_unlock(&st->mu);
    if (v == HR_AUTHZ_PENDING)
        return MHD_YES; /* the handler is called again once the verdict is in */
    return after_review(l, c, st);
}

static enum MHD_Result on_request(void *cls, struct MHD_Connection *c, const char *url,
                                  const char *method, const char *version, const char *upload,
                                  size_t *upload_size, void **con_cls)
{
    (void)version;
    hr_listener *l = cls;
    req_state *st = *con_cls;
    if (st == (void *)&answered_early || (st != NULL && st->replied))
        return MHD_NO; /* nothing more to say on this request */
    if (st != NULL && st->authz)
        return after_review(l, c, st);
    if (st == NULL) {
        /* The headers are in, no body byte has been read: route and check
         * here, so a refused request is answered without reading it (MHD
         * then closes the connection rather than read on). */
        hr_req_head h = {
            .method = method,
            .path = url,
            .content_length =
                MHD_lookup_connection_value(c, MHD_HEADER_KIND, MHD_HTTP_HEADER_CONTENT_LENGTH),
            .transfer_encoding =
                MHD_lookup_connection_value(c, MHD_HEADER_KIND, MHD_HTTP_HEADER_TRANSFER_ENCODING),
        };
        conn_phase(conn_of(c), true);
        hr_req_verdict v;
        hr_req_admit(l->routes, l->n_routes, &h, &v);
        if (v.status == 0 && v.route->guarded)
            return guard(l, c, v.route, method, url, con_cls);
        if (v.status == 0) {
            st = calloc(1, sizeof *st);
            if (st == NULL)
                return MHD_NO;
            st->route = v.route;
            int rc = hr_body_begin(&st->body, v.route->max_body, v.declared, &l->budget);
            if (rc == HR_BODY_OK) {
                *con_cls = st;
                return MHD_YES;
            }
            hr_body_free(&st->body);
            free(st);
            v.status = rc;
            v.msg = rc == HR_BODY_TOO_LARGE ? "request body too large\n" : "server busy\n";
        }
        *con_cls = (void *)&answered_early;
        return reply_text(c, v.status, v.msg);
    }
    if (*upload_size > 0) {
        int rc = hr_body_add(&st->body, upload, *upload_size);
        *upload_size = 0;
        /* Over the route's limit (a chunked body has no Content-Length to
         * refuse early) or the listener's budget: drop the connection
         * rather than read on — MHD cannot answer in mid-body. */
        return rc == HR_BODY_OK ? MHD_YES : MHD_NO;
    }
    return serve(c, st, method, url);
}

static void on_completed(void *cls, struct MHD_Connection *c, void **con_cls,
                         enum MHD_RequestTerminationCode toe)
{
    (void)cls;
    (void)toe;
    conn_phase(conn_of(c), false);
    req_state *st = *con_cls;
    if (st != NULL && st != (void *)&answered_early) {
        hr_body_free(&st->body);
        if (st->c != NULL) /* a guarded request: it had a lock */
            pthread_mutex_destroy(&st->mu);
        free(st);
    }
    *con_cls = NULL;
}

static void listener_free(hr_listener *l)
{
    pthread_mutex_destroy(&l->mu);
    pthread_cond_destroy(&l->cv);
    free(l);
}

hr_status hr_listener_start(const hr_listener_opts *o, hr_listener **out, hr_err *err)
{
    *out = NULL;
    if (o->n_routes > MAX_ROUTES)
        return hr_err_set(err, HR_E_LIMIT, "%s: more than %d routes", o->name, MAX_ROUTES);
    char host[256];
    uint16_t port;
    hr_status st = hr_parse_addr(o->addr, host, sizeof host, &port, err);
    if (st)
        return st;
    struct addrinfo hints = {0}, *ai = NULL;
    hints.ai_family = AF_UNSPEC;
    hints.ai_socktype = SOCK_STREAM;
    hints.ai_flags = AI_PASSIVE;
    char ps[8];
    snprintf(ps, sizeof ps, "%u", (unsigned)port);
    /* An empty host listens on every address of both families, as Go's
     * ":8080" does: the IPv6 wildcard with IPV6_V6ONLY off (MHD's dual
     * stack), so IPv4 clients arrive as v4-mapped addresses; where the
     * kernel has no IPv6, the IPv4 wildcard. */
    bool dual = false;
    if (host[0] == '\0') {
        int probe = socket(AF_INET6, SOCK_STREAM | SOCK_CLOEXEC, 0);
        dual = probe >= 0;
        if (probe >= 0)
            close(probe);
        hints.ai_family = dual ? AF_INET6 : AF_INET;
    }
    int gai = getaddrinfo(host[0] ? host : NULL, ps, &hints, &ai);
    if (gai != 0 || ai == NULL)
        return hr_err_set(err, HR_E_INPUT, "%s address %s: %s", o->name, o->addr,
                          gai ? gai_strerror(gai) : "no address");

    hr_listener *l = calloc(1, sizeof *l);
    if (l == NULL) {
        freeaddrinfo(ai);
        return hr_err_set(err, HR_E_NOMEM, "%s: out of memory", o->name);
    }
    for (size_t i = 0; i < o->n_routes; i++) {
        if (o->routes[i].guarded && o->authz == NULL) {
            freeaddrinfo(ai);
            free(l);
            return hr_err_set(err, HR_E_INPUT, "%s: route %s is guarded but has no authorizer",
                              o->name, o->routes[i].path);
        }
        if (o->routes[i].guarded && o->routes[i].max_body != 0) {
            freeaddrinfo(ai);
            free(l);
            return hr_err_set(err, HR_E_INPUT, "%s: route %s is guarded and takes a body", o->name,
                              o->routes[i].path);
        }
    }
    l->authz = o->authz;
    memcpy(l->routes, o->routes, o->n_routes * sizeof *o->routes);
    l->n_routes = o->n_routes;
    l->tls = o->tls;
    l->tls_fallback = o->tls_fallback;
    hr_body_budget_init(&l->budget, o->body_budget ? o->body_budget : (size_t)64 << 20);
    l->log = o->log;
    snprintf(l->name, sizeof l->name, "%s", o->name ? o->name : "http");
    l->header_ns = (int64_t)(o->header_timeout_ms ? o->header_timeout_ms : 10000) * 1000000;
    l->request_ns = (int64_t)(o->request_timeout_ms ? o->request_timeout_ms : 30000) * 1000000;
    if (pthread_mutex_init(&l->mu, NULL) != 0 || hr_mono_cond_init(&l->cv) != 0) {
        freeaddrinfo(ai);
        free(l);
        return hr_err_set(err, HR_E_NOMEM, "%s: cannot create locks", o->name);
    }

    unsigned flags = MHD_USE_INTERNAL_POLLING_THREAD | MHD_USE_EPOLL | MHD_USE_ERROR_LOG;
    if (o->authz != NULL)
        flags |= MHD_ALLOW_SUSPEND_RESUME; /* a request waits for its review suspended */
    if (ai->ai_family == AF_INET6)
        flags |= dual ? MHD_USE_DUAL_STACK : MHD_USE_IPv6;
    if (o->tls)
        flags |= MHD_USE_TLS;
    unsigned threads = o->threads ? o->threads : 2;
    unsigned timeout = o->idle_timeout_s ? o->idle_timeout_s : 30;
    unsigned maxconn = o->max_connections ? o->max_connections : 256;
    l->cap = maxconn;
    unsigned per_ip = o->per_ip_connections ? o->per_ip_connections : 32;
    /* SO_REUSEPORT only when asked: MHD's option set to false would also
     * drop the SO_REUSEADDR it sets by default, so it is absent then. */
    struct MHD_OptionItem reuse[] = {
        {o->reuse_port ? MHD_OPTION_LISTENING_ADDRESS_REUSE : MHD_OPTION_END, 1, NULL},
        {MHD_OPTION_END, 0, NULL},
    };
    /* The TLS options go last: without TLS the first one's id is
     * MHD_OPTION_END, which ends the list there. */
    l->d = MHD_start_daemon(
        flags, 0, NULL, NULL, on_request, l, MHD_OPTION_EXTERNAL_LOGGER, mhd_log,
        l, /* first, to catch all */
        MHD_OPTION_SOCK_ADDR, ai->ai_addr, MHD_OPTION_CONNECTION_TIMEOUT, timeout,
        MHD_OPTION_CONNECTION_LIMIT, 2 * maxconn, MHD_OPTION_PER_IP_CONNECTION_LIMIT, per_ip,
        MHD_OPTION_CONNECTION_MEMORY_LIMIT, (size_t)HR_HTTP_CONN_MEMORY,
        MHD_OPTION_NOTIFY_COMPLETED, on_completed, NULL, MHD_OPTION_NOTIFY_CONNECTION,
        on_connection, l,
        /* A pool of one is no pool: MHD wants the option absent. */
        MHD_OPTION_THREAD_POOL_SIZE, threads > 1 ? threads : 0, MHD_OPTION_ARRAY, reuse,
        o->tls ? MHD_OPTION_HTTPS_PRIORITIES : MHD_OPTION_END, HR_TLS_PRIORITIES,
        MHD_OPTION_HTTPS_CERT_CALLBACK, cert_callback, MHD_OPTION_END);
    freeaddrinfo(ai);
    if (l->d == NULL) {
        listener_free(l);
        return hr_err_set(err, HR_E_IO,
                          "%s: cannot listen on %s (address in use, or "
                          "TLS setup failed)",
                          o->name, o->addr);
    }
    int rc = pthread_create(&l->watchdog, NULL, watchdog_main, l);
    if (rc != 0) {
        hr_listener_stop(l);
        return hr_err_set(err, HR_E_NOMEM, "%s: cannot start the deadline thread: %s", o->name,
                          strerror(rc));
    }
    l->watchdog_running = true;
    const union MHD_DaemonInfo *di = MHD_get_daemon_info(l->d, MHD_DAEMON_INFO_BIND_PORT);
    l->port = di ? di->port : port;
    *out = l;
    return HR_OK;
}

uint16_t hr_listener_port(const hr_listener *l)
{
    return l->port;
}

void hr_listener_stop(hr_listener *l)
{
    if (l == NULL)
        return;
    /* Every request waiting for a review is answered 503 and resumed, and
     * none is suspended any more, so MHD_stop_daemon (which must not meet a
     * suspended connection) waits on no review. */
    hr_authz_shutdown(l->authz);
    /* The daemon first: closing its connections empties the list. */
    if (l->d != NULL)
        MHD_stop_daemon(l->d);
    l->d = NULL;
    if (l->watchdog_running) {
        pthread_mutex_lock(&l->mu);
        l->stop = true;
        pthread_cond_signal(&l->cv);
        pthread_mutex_unlock(&l->mu);
        pthread_join(l->watchdog, NULL);
    }
    listener_free(l);
}
