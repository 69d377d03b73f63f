/*
 * http.h — one HTTP(S) listener on libmicrohttpd with a small route table.
 *
 * The daemon runs two: plain HTTP for /metrics, /healthz, /readyz
 * (--metrics-addr) and HTTPS for the admission webhook (--webhook-addr),
 * both built from this. A route's handler gets the whole request body
 * (bounded) and fills a response; it runs on one of the listener's pool
 * threads, so it must be thread-safe and must not block for long — the API
 * server gives the webhook at most timeoutSeconds.
 *
 * Threads: an internal epoll thread pool (MHD_OPTION_THREAD_POOL_SIZE),
 * so a slow client holds a connection, not a thread. Limits (request.h):
 * a body size per route, 0 meaning no body (413 when Content-Length says
 * more or the route takes none, before any of it is read; the connection
 * is dropped the moment a chunked body grows past it), GET and HEAD with a
 * body refused (400) unread, one body budget per listener, a fixed
 * per-connection pool for headers (HR_HTTP_CONN_MEMORY), an idle timeout
 * per connection; a connection cap in all and per client address, and a
 * header-read and a whole-request deadline per connection, so idle or
 * slow clients cannot starve others (a byte every few seconds defeats an
 * idle timeout, not a deadline). A full listener evicts, for each new
 * connection, the oldest one not in a request (one that never sent its
 * headers before a keep-alive one between requests), so an idle flood
 * from many addresses cannot lock out a client that sends its request at
 * once. TLS listeners take HR_TLS_PRIORITIES.
 * A guarded route (it takes no body) is answered 401/403/429/500/503 by
 * the listener's authorizer (authz.h) before its handler runs; a request
 * whose token must be reviewed waits suspended (MHD's suspend/resume), on
 * no thread, and stopping the listener answers every such request first.
 */
#ifndef HR_SERVER_HTTP_H
#define HR_SERVER_HTTP_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "server/authz.h"
#include "server/certs.h"
#include "server/request.h"
#include "util/buf.h"
#include "util/err.h"
#include "util/log.h"

typedef struct hr_http_req {
    const char *method;
    const char *path;            /* without the query */
    const char *content_type;    /* NULL when absent */
    const char *accept_encoding; /* NULL when absent (server/gzip.h reads it) */
    const char *body;            /* NUL-terminated; "" when none */
    size_t body_len;
} hr_http_req;

typedef struct hr_http_resp {
    int status;                   /* default 200 */
    const char *content_type;     /* static string; default text/plain */
    hr_buf body;                  /* the handler appends; freed by the server */
    const char *content_encoding; /* static string ("gzip"): body is encoded; NULL: not */
} hr_http_resp;

typedef struct hr_listener_opts {
    const char *name;       /* "metrics", "webhook": for logs */
    const char *addr;       /* "host:port", ":port"; port 0 picks one */
    hr_certs *tls;          /* NULL: plain HTTP; else HTTPS with these */
    hr_authz *authz;        /* checks the guarded routes (needed if any) */
    const hr_route *routes; /* copied */
    size_t n_routes;
    unsigned threads;            /* pool size; 0: 2 */
    unsigned idle_timeout_s;     /* 0: 30 */
    unsigned max_connections;    /* all clients together; 0: 256; when
                                  * full, a new one evicts the oldest
                                  * not in a request (or, if none, is
                                  * refused) */
    unsigned per_ip_connections; /* from one address; 0: 32 */
    /* Deadlines, enforced by a watchdog thread (every 100 ms) that shuts
     * the socket down, however busy the client keeps it: the headers
     * (and the TLS handshake) must be in within header_timeout_ms of the
     * accept or of the previous answer — so it is also how long an idle
     * keep-alive connection stays — and the whole request, answer
     * included, within request_timeout_ms of the same moment. */
    unsigned header_timeout_ms;  /* 0: 10000 */
    unsigned request_timeout_ms; /* 0: 30000 */
    size_t body_budget;          /* bytes all bodies in flight may hold; 0: 64 MiB */
    /* SO_REUSEPORT: other listeners of the same user may bind the same
     * address and port, and the kernel spreads new connections over them
     * (several hostNetwork replicas on one node sharing the webhook's
     * port; design §13). A listener that closes leaves the group, and new
     * connections go to the others. */
    bool reuse_port;
    /* With tls: the self-signed pair of hr_certs_fallback_selfsigned is
     * served while no pair is loaded (the secured /metrics). false: no
     * handshake until a pair loads (the webhook: the API server trusts
     * only the provided certificate). */
    bool tls_fallback;
    hr_logger log;
} hr_listener_opts;

/* Every TLS listener's GnuTLS priorities: TLS 1.3 (preferred: GnuTLS
 * picks the highest version both sides have) and 1.2, and in 1.2 only
 * ECDHE key exchange with AEAD ciphers — no TLS 1.0/1.1, no RSA key
 * exchange, no CBC or SHA-1 MAC suites such as AES128-SHA. TLS 1.3's
 * suites are all forward-secret AEAD. The server's order wins. */
#define HR_TLS_PRIORITIES                                                               \
    "NORMAL:-VERS-ALL:+VERS-TLS1.3:+VERS-TLS1.2:-CIPHER-ALL:+AES-256-GCM:+AES-128-GCM:" \
    "+CHACHA20-POLY1305:-MAC-ALL:+AEAD:-KX-ALL:+ECDHE-ECDSA:+ECDHE-RSA:%SERVER_PRECEDENCE"

/* libmicrohttpd's memory per connection: the request line and headers
 * must fit (431/413 otherwise), and body bytes pass through it. */
#define HR_HTTP_CONN_MEMORY (32u * 1024)

typedef struct hr_listener hr_listener;

/* Parse "host:port" / ":port" / "[v6]:port" into its parts; host "" means
 * every address. Exposed for flag validation. */
HR_MUST_CHECK hr_status hr_parse_addr(const char *addr, char *host, size_t host_cap, uint16_t *port,
                                      hr_err *err);

HR_MUST_CHECK hr_status hr_listener_start(const hr_listener_opts *o, hr_listener **out,
                                          hr_err *err);

/* The port actually bound (useful with port 0). */
uint16_t hr_listener_port(const hr_listener *l);

/* Stop accepting, close connections, join the threads, free. */
void hr_listener_stop(hr_listener *l);

#endif
