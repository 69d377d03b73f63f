/*
 * faultproxy.c — a fault-injecting HTTP/1.1 proxy for the end-to-end tests (design §15): it sits
 * between the controller and the API server on loopback and, per request, passes the response,
 * cuts it after N bytes of body, goes silent without closing, or throttles it; it can also refuse
 * new connections. A test tool, not part of the product (tests/README.md).
 *
 *   faultproxy --listen 127.0.0.1:PORT --upstream 127.0.0.1:PORT --rules FILE   (PORT 0: any;
 *                                              the log's "listening on" line names it)
 *              [--cert CRT --key KEY]          serve TLS to clients (else plain TCP)
 *              [--upstream-ca CA [--upstream-cert CRT --upstream-key KEY]]
 *                                              speak TLS to the upstream (else plain TCP),
 *                                              trusting CA, presenting CRT as the client
 *
 * Why it terminates TLS. Rules match a request line (method and target, e.g. the pods watch) and
 * count bytes of the response body, so the proxy must see plaintext: it serves TLS with its own
 * certificate (the tests sign one with the test cluster's CA: cluster.sh serving-cert) and opens
 * its own TLS connection to the API server, presenting the controller's client certificate there
 * (so the API server and its audit log see the controller's user). Both sides negotiate
 * http/1.1 by ALPN: one request at a time per connection, which is what makes "this request's
 * response" well defined (a client that offers HTTP/2 falls back to 1.1 here).
 *
 * Rules. FILE holds one rule a line, read at start and again on SIGHUP (a file that does not
 * parse is refused whole and the rules in force stay; the log says which line). '#' starts a
 * comment. The first rule whose METHOD and PATTERN match a request applies to its response:
 *
 *   METHOD PATTERN ACTION [once | times K]
 *   refuse
 *
 *   METHOD   GET, PATCH, ... or * (any)
 *   PATTERN  an fnmatch(3) glob over the request target, query included:
 *            /api/v1/pods?*watch=1*   (here '?' matches any one character, the literal '?' too)
 *   ACTION   pass          forward as it comes
 *            cut N         forward N bytes of body, then close both connections (mid-object
 *                          when N falls inside one); HTTP framing (head, chunk sizes) is not
 *                          counted
 *            silent [T] [after N]
 *                          after N bytes of body (0: before anything, the head included), stop
 *                          forwarding and stop reading the upstream for T seconds (no T: until
 *                          the rules change), the connection kept open both ways; then go on
 *            throttle B    forward the response at B bytes a second
 *            respond CODE [retry-after S]
 *                          answer the request itself, never sending it upstream: status CODE
 *                          (200-599) with a Kubernetes Status body (kind Status, status Failure,
 *                          reason and code as the API server spells them for CODE: 409
 *                          Conflict, 429 TooManyRequests, 500 InternalError, 503
 *                          ServiceUnavailable, ...; a message naming the rule), and with S a
 *                          Retry-After header and details.retryAfterSeconds; the request's body
 *                          is read and dropped, the connection kept open. A request already
 *                          sent on when the rules change is never matched to a respond rule
 *   once, times K  the rule applies to its first K matching requests only (counted from the
 *            load); later ones fall through to the next rule
 *   refuse   no new connection is accepted: the listening socket is closed (a connect is
 *            refused) until rules without `refuse` are loaded; open connections go on
 *
 * A request with no matching rule passes. On a reload every open connection's current request
 * is matched again against the new rules, in the order the connections were opened, and the
 * new action applies from that moment, its byte counts starting at zero: that is how a test
 * cuts or stalls a watch that is already streaming, and how it ends a silence.
 *
 * Log. One line per event on stdout, with the UTC time: the listener, every request and the rule
 * it got, every response's status and Content-Type ("conn C req R METHOD TARGET: response 200
 * content-type application/vnd.kubernetes.protobuf;stream=watch"), each request it answered
 * itself ("conn C req R METHOD TARGET: answered CODE REASON itself"), each cut (with how far into a line of the body it fell and that line's first bytes),
 * each silence and its end, and "rules loaded: generation G" after each (re)load — the line a
 * test waits for before it acts (tests/lib/common.sh proxy_rules).
 *
 * One thread per direction of each connection (a GnuTLS session may be shared by one sending and
 * one receiving thread); each connection's state is under its own lock, the rules under one.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <fnmatch.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/signalfd.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include <gnutls/gnutls.h>

#define MAX_RULES 64
#define HEAD_MAX (64 * 1024)
#define LINE_PREFIX 160
#define IO_BUF 16384

typedef enum { A_PASS, A_CUT, A_SILENT, A_THROTTLE, A_RESPOND } act_kind;

typedef struct rule {
    char method[16];
    char pattern[512];
    act_kind kind;
    long n;     /* cut: bytes; throttle: bytes per second; silent: after N bytes; respond: code */
    long t_ms;  /* silent: how long (0: until the rules change); respond: Retry-After (-1: none) */
    long times; /* 0: every matching request */
    long used;  /* requests it applied to since the load */
    int lineno;
} rule;

typedef struct action {
    act_kind kind;
    long n, t_ms;
    int rule; /* 1-based line of the rule file; 0: no rule matched */
} action;

typedef struct conn {
    int id;
    int cfd, ufd;
    gnutls_session_t cs, us; /* NULL: plain */
    pthread_mutex_t mu;
    pthread_cond_t cv;
    pthread_mutex_t send_mu; /* one writer at a time to the client: the relay or an answer */
    bool dead;
    /* The current request and the action bound to its response. */
    char method[16];
    char target[1024];
    int req_no;
    action act;
    int64_t bound_ms;
    long payload;      /* body bytes forwarded since the action was bound */
    long sent;         /* bytes forwarded since the action was bound (throttle) */
    int64_t silent_ms; /* when the silence began (0: not silent) */
    long line_len;     /* body bytes since the last newline */
    char line_head[LINE_PREFIX + 1];
    struct conn *next;
} conn;

static struct {
    const char *listen_host, *up_host, *rules_path;
    int listen_port, up_port;
    gnutls_certificate_credentials_t srv_cred, cli_cred;
} opt;

static pthread_mutex_t g_mu = PTHREAD_MUTEX_INITIALIZER; /* rules, conns, the listener */
static rule g_rules[MAX_RULES];
static int g_nrules;
static bool g_refuse;
static unsigned g_gen;
static conn *g_conns;
static int g_next_id;
static int g_lfd = -1;
static pthread_mutex_t log_mu = PTHREAD_MUTEX_INITIALIZER;

static int64_t mono_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

static void logf_(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static void logf_(const char *fmt, ...)
{
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    struct tm tm;
    gmtime_r(&ts.tv_sec, &tm);
    char when[32];
    strftime(when, sizeof when, "%Y-%m-%dT%H:%M:%S", &tm);
    va_list ap;
    va_start(ap, fmt);
    pthread_mutex_lock(&log_mu);
    printf("%s.%03ldZ faultproxy: ", when, ts.tv_nsec / 1000000);
    vprintf(fmt, ap);
    putchar('\n');
    (void)fflush(stdout);
    pthread_mutex_unlock(&log_mu);
    va_end(ap);
}

static void describe(const action *a, char *out, size_t cap)
{
    switch (a->kind) {
    case A_PASS: snprintf(out, cap, "pass"); break;
    case A_CUT: snprintf(out, cap, "cut %ld", a->n); break;
    case A_THROTTLE: snprintf(out, cap, "throttle %ld", a->n); break;
    case A_RESPOND:
        if (a->t_ms >= 0)
            snprintf(out, cap, "respond %ld retry-after %ld", a->n, a->t_ms / 1000);
        else
            snprintf(out, cap, "respond %ld", a->n);
        break;
    case A_SILENT:
        if (a->t_ms > 0)
            snprintf(out, cap, "silent %.3g after %ld", (double)a->t_ms / 1000, a->n);
        else
            snprintf(out, cap, "silent after %ld", a->n);
        break;
    }
}

/* ------------------------------------------------------------------ rules */

static bool parse_long(const char *s, long *out)
{
    char *end;
    errno = 0;
    long v = strtol(s, &end, 10);
    if (errno != 0 || end == s || *end != '\0' || v < 0)
        return false;
    *out = v;
    return true;
}

/* Parses FILE into rules/n/refuse; false with a message in why. */
static bool parse_rules(const char *path, rule *rules, int *n, bool *refuse, char *why, size_t cap)
{
    FILE *f = fopen(path, "r");
    if (f == NULL) {
        snprintf(why, cap, "%s: %s", path, strerror(errno));
        return false;
    }
    char line[2048];
    int lineno = 0;
    *n = 0;
    *refuse = false;
    bool ok = true;
    while (ok && fgets(line, sizeof line, f) != NULL) {
        lineno++;
        char *hash = strchr(line, '#');
        if (hash != NULL)
            *hash = '\0';
        char *w[8];
        int nw = 0;
        char *save = NULL;
        for (char *t = strtok_r(line, " \t\r\n", &save); t != NULL && nw < 8;
             t = strtok_r(NULL, " \t\r\n", &save))
            w[nw++] = t;
        if (nw == 0)
            continue;
        if (nw == 1 && strcmp(w[0], "refuse") == 0) {
            *refuse = true;
            continue;
        }
        if (nw < 3 || *n >= MAX_RULES || strlen(w[0]) >= sizeof rules[0].method ||
            strlen(w[1]) >= sizeof rules[0].pattern) {
            snprintf(why, cap, "line %d: expected METHOD PATTERN ACTION (at most %d rules)", lineno,
                     MAX_RULES);
            ok = false;
            break;
        }
        rule *r = &rules[*n];
        memset(r, 0, sizeof *r);
        r->lineno = lineno;
        snprintf(r->method, sizeof r->method, "%s", w[0]);
        snprintf(r->pattern, sizeof r->pattern, "%s", w[1]);
        int i = 3;
        if (strcmp(w[2], "pass") == 0) {
            r->kind = A_PASS;
        } else if (strcmp(w[2], "cut") == 0 || strcmp(w[2], "throttle") == 0) {
            r->kind = w[2][0] == 'c' ? A_CUT : A_THROTTLE;
            if (i >= nw || !parse_long(w[i++], &r->n) || (r->kind == A_THROTTLE && r->n == 0)) {
                snprintf(why, cap, "line %d: %s needs a byte count%s", lineno, w[2],
                         r->kind == A_THROTTLE ? " above 0" : "");
                ok = false;
                break;
            }
        } else if (strcmp(w[2], "silent") == 0) {
            r->kind = A_SILENT;
            char *end;
            if (i < nw && (w[i][0] >= '0' && w[i][0] <= '9')) {
                double t = strtod(w[i], &end);
                if (*end != '\0' || t <= 0) {
                    snprintf(why, cap, "line %d: silent T: T is seconds above 0", lineno);
                    ok = false;
                    break;
                }
                r->t_ms = (long)(t * 1000);
                i++;
            }
            if (i + 1 < nw && strcmp(w[i], "after") == 0) {
                if (!parse_long(w[i + 1], &r->n)) {
                    snprintf(why, cap, "line %d: after N: N is a byte count", lineno);
                    ok = false;
                    break;
                }
                i += 2;
            }
        } else if (strcmp(w[2], "respond") == 0) {
            r->kind = A_RESPOND;
            r->t_ms = -1;
            if (i >= nw || !parse_long(w[i++], &r->n) || r->n < 200 || r->n > 599) {
                snprintf(why, cap, "line %d: respond needs a status code (200-599)", lineno);
                ok = false;
                break;
            }
            if (i < nw && strcmp(w[i], "retry-after") == 0) {
                long sec = 0;
                if (i + 1 >= nw || !parse_long(w[i + 1], &sec) || sec > 86400) {
                    snprintf(why, cap, "line %d: retry-after S: S is seconds (0-86400)", lineno);
                    ok = false;
                    break;
                }
                r->t_ms = sec * 1000;
                i += 2;
            }
        } else {
            snprintf(why, cap,
                     "line %d: unknown action '%s' (pass, cut, silent, throttle, respond)", lineno,
                     w[2]);
            ok = false;
            break;
        }
        if (i < nw && strcmp(w[i], "once") == 0) {
            r->times = 1;
            i++;
        } else if (i + 1 < nw && strcmp(w[i], "times") == 0) {
            if (!parse_long(w[i + 1], &r->times) || r->times == 0) {
                snprintf(why, cap, "line %d: times K: K is a count above 0", lineno);
                ok = false;
                break;
            }
            i += 2;
        }
        if (i != nw) {
            snprintf(why, cap, "line %d: unexpected '%s'", lineno, w[i]);
            ok = false;
            break;
        }
        (*n)++;
    }
    if (ok && ferror(f)) {
        snprintf(why, cap, "%s: read error", path);
        ok = false;
    }
    (void)fclose(f);
    return ok;
}

/* The action for a request (under g_mu): the first matching rule with uses left. A request
 * already sent upstream (sent) cannot be answered by the proxy: respond rules pass it by. */
static action match_locked(const char *method, const char *target, bool sent)
{
    for (int i = 0; i < g_nrules; i++) {
        rule *r = &g_rules[i];
        if (r->times > 0 && r->used >= r->times)
            continue;
        if (sent && r->kind == A_RESPOND)
            continue;
        if (strcmp(r->method, "*") != 0 && strcmp(r->method, method) != 0)
            continue;
        if (fnmatch(r->pattern, target, 0) != 0)
            continue;
        r->used++;
        return (action){r->kind, r->n, r->t_ms, r->lineno};
    }
    return (action){A_PASS, 0, 0, 0};
}

/* Binds an action to c's current request (under c->mu). */
static void bind_locked(conn *c, action a)
{
    c->act = a;
    c->bound_ms = mono_ms();
    c->payload = 0;
    c->sent = 0;
    c->silent_ms = 0;
    pthread_cond_broadcast(&c->cv);
}

static int open_listener(void);

static void load_rules(bool first)
{
    rule nr[MAX_RULES];
    int n = 0;
    bool refuse = false;
    char why[512] = "";
    if (!parse_rules(opt.rules_path, nr, &n, &refuse, why, sizeof why)) {
        logf_("rules refused, the rules in force stay: %s", why);
        if (first)
            exit(2);
        return;
    }
    pthread_mutex_lock(&g_mu);
    memcpy(g_rules, nr, sizeof(rule) * (size_t)n);
    g_nrules = n;
    g_refuse = refuse;
    unsigned gen = ++g_gen;
    /* Open connections, oldest first (the list is newest first). */
    conn *order[4096];
    int nc = 0;
    for (conn *c = g_conns; c != NULL && nc < 4096; c = c->next)
        order[nc++] = c;
    for (int i = nc - 1; i >= 0; i--) {
        conn *c = order[i];
        pthread_mutex_lock(&c->mu);
        if (c->req_no > 0 && !c->dead) {
            action old = c->act;
            int64_t silent = c->silent_ms;
            action a = match_locked(c->method, c->target, true);
            bind_locked(c, a);
            if (silent != 0)
                logf_("conn %d req %d: silent ends after %.1f s (rules changed)", c->id, c->req_no,
                      (double)(mono_ms() - silent) / 1000);
            if (a.kind != old.kind || a.rule != old.rule || a.kind != A_PASS) {
                char d[64];
                describe(&a, d, sizeof d);
                logf_("conn %d req %d %s %.200s: rebound to rule %d: %s", c->id, c->req_no,
                      c->method, c->target, a.rule, d);
            }
        }
        pthread_mutex_unlock(&c->mu);
    }
    if (g_refuse && g_lfd >= 0) {
        (void)close(g_lfd);
        g_lfd = -1;
        logf_("refusing new connections: listener closed");
    } else if (!g_refuse && g_lfd < 0) {
        g_lfd = open_listener();
        if (g_lfd < 0) {
            pthread_mutex_unlock(&g_mu);
            exit(1);
        }
        logf_("listening on %s:%d", opt.listen_host, opt.listen_port);
    }
    pthread_mutex_unlock(&g_mu);
    logf_("rules loaded: generation %u, %d rules%s", gen, n, refuse ? ", refuse" : "");
}

/* ------------------------------------------------------------------ I/O */

static void conn_kill(conn *c)
{
    pthread_mutex_lock(&c->mu);
    c->dead = true;
    pthread_cond_broadcast(&c->cv);
    pthread_mutex_unlock(&c->mu);
    (void)shutdown(c->cfd, SHUT_RDWR);
    if (c->ufd >= 0)
        (void)shutdown(c->ufd, SHUT_RDWR);
}

static ssize_t io_recv(int fd, gnutls_session_t s, char *buf, size_t n)
{
    for (;;) {
        ssize_t r = s != NULL ? gnutls_record_recv(s, buf, n) : recv(fd, buf, n, 0);
        if (s != NULL && (r == GNUTLS_E_AGAIN || r == GNUTLS_E_INTERRUPTED))
            continue;
        if (s == NULL && r < 0 && errno == EINTR)
            continue;
        return r < 0 ? -1 : r;
    }
}

static bool io_send(int fd, gnutls_session_t s, const char *buf, size_t n)
{
    while (n > 0) {
        ssize_t w = s != NULL ? gnutls_record_send(s, buf, n) : send(fd, buf, n, MSG_NOSIGNAL);
        if (s != NULL && (w == GNUTLS_E_AGAIN || w == GNUTLS_E_INTERRUPTED))
            continue;
        if (s == NULL && w < 0 && errno == EINTR)
            continue;
        if (w <= 0)
            return false;
        buf += w;
        n -= (size_t)w;
    }
    return true;
}

/* Waits on c->cv until ms (0: no deadline); false when the connection died. Under c->mu. */
static bool wait_locked(conn *c, int64_t until_ms)
{
    if (c->dead)
        return false;
    if (until_ms <= 0) {
        pthread_cond_wait(&c->cv, &c->mu);
    } else {
        struct timespec ts;
        clock_gettime(CLOCK_MONOTONIC, &ts);
        int64_t left = until_ms - mono_ms();
        if (left > 0) {
            ts.tv_sec += left / 1000;
            ts.tv_nsec += (left % 1000) * 1000000;
            if (ts.tv_nsec >= 1000000000) {
                ts.tv_sec++;
                ts.tv_nsec -= 1000000000;
            }
            (void)pthread_cond_timedwait(&c->cv, &c->mu, &ts);
        }
    }
    return !c->dead;
}

static void track_line(conn *c, const char *p, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        if (p[i] == '\n') {
            c->line_len = 0;
            continue;
        }
        if (c->line_len < LINE_PREFIX) {
            c->line_head[c->line_len] = (p[i] >= 0x20 && p[i] < 0x7f) ? p[i] : '.';
            c->line_head[c->line_len + 1] = '\0';
        }
        c->line_len++;
    }
}

/* Forwards one piece of the response to the client under c's action: false when the
 * connection is to end (cut, or an error). payload: body bytes, not framing. */
static bool forward_down(conn *c, const char *p, size_t n, bool payload)
{
    while (n > 0) {
        pthread_mutex_lock(&c->mu);
        if (c->dead) {
            pthread_mutex_unlock(&c->mu);
            return false;
        }
        action a = c->act;
        int64_t now = mono_ms();
        if (a.kind == A_SILENT && c->payload >= a.n) {
            if (c->silent_ms == 0) {
                c->silent_ms = now;
                logf_("conn %d req %d: silent from body byte %ld%s", c->id, c->req_no, c->payload,
                      a.t_ms > 0 ? "" : ", until the rules change");
            }
            if (a.t_ms > 0 && now >= c->silent_ms + a.t_ms) {
                logf_("conn %d req %d: silent ends after %.1f s (its time)", c->id, c->req_no,
                      (double)(now - c->silent_ms) / 1000);
                c->act.kind = A_PASS;
                c->silent_ms = 0;
                pthread_mutex_unlock(&c->mu);
                continue;
            }
            bool alive = wait_locked(c, a.t_ms > 0 ? c->silent_ms + a.t_ms : 0);
            pthread_mutex_unlock(&c->mu);
            if (!alive)
                return false;
            continue;
        }
        size_t take = n;
        if (a.kind == A_CUT && payload) {
            long room = a.n - c->payload;
            if (room <= 0) {
                logf_("conn %d req %d %s %.200s: cut after %ld body bytes, %ld bytes into a "
                      "line: %s",
                      c->id, c->req_no, c->method, c->target, c->payload, c->line_len,
                      c->line_len > 0 ? c->line_head : "(at a line's end)");
                pthread_mutex_unlock(&c->mu);
                conn_kill(c);
                return false;
            }
            if ((long)take > room)
                take = (size_t)room;
        }
        if (a.kind == A_THROTTLE) {
            size_t piece = (size_t)(a.n / 20 > 0 ? a.n / 20 : 1);
            if (take > piece)
                take = piece;
            int64_t due = c->bound_ms + (int64_t)((c->sent + (long)take) * 1000 / a.n);
            if (now < due) {
                /* Woken early by a rebind or a kill: the loop looks again. */
                bool alive = wait_locked(c, due);
                pthread_mutex_unlock(&c->mu);
                if (!alive)
                    return false;
                continue;
            }
        }
        if (payload) {
            c->payload += (long)take;
            track_line(c, p, take);
        }
        c->sent += (long)take;
        pthread_mutex_unlock(&c->mu);
        pthread_mutex_lock(&c->send_mu);
        bool sent = io_send(c->cfd, c->cs, p, take);
        pthread_mutex_unlock(&c->send_mu);
        if (!sent)
            return false;
        p += take;
        n -= take;
    }
    return true;
}

/* ----------------------------------------------------- HTTP/1.1 framing */

/* What is left of a message's body after its head. */
typedef enum { B_NONE, B_LENGTH, B_CHUNKED, B_EOF } body_kind;

typedef enum {
    S_HEAD,
    S_LENGTH,
    S_CHUNK_SIZE,
    S_CHUNK_DATA,
    S_CHUNK_CRLF,
    S_TRAILER,
    S_EOF
} pstate;

typedef struct parser {
    pstate st;
    char line[8192]; /* the current line of a head, a chunk size or a trailer */
    size_t line_len;
    bool first_line;
    long status;
    long long remaining;
    body_kind body;
    bool response;
    char ctype[128]; /* a response's Content-Type, for the log ("" when none) */
} parser;

static void head_header(parser *ps, const char *l)
{
    if (strncasecmp(l, "content-length:", 15) == 0) {
        ps->body = B_LENGTH;
        ps->remaining = strtoll(l + 15, NULL, 10);
    } else if (strncasecmp(l, "transfer-encoding:", 18) == 0 && strcasestr(l, "chunked")) {
        ps->body = B_CHUNKED;
    } else if (strncasecmp(l, "content-type:", 13) == 0) {
        const char *v = l + 13;
        while (*v == ' ' || *v == '\t')
            v++;
        snprintf(ps->ctype, sizeof ps->ctype, "%s", v);
    }
}

/* Where the body starts, once the head's empty line is read. */
static pstate after_head(parser *ps, bool head_request)
{
    if (ps->response && ps->status >= 100 && ps->status < 200)
        return S_HEAD; /* 100 Continue: the real answer follows */
    if (ps->response && (head_request || ps->status == 204 || ps->status == 304))
        return S_HEAD;
    if (ps->body == B_CHUNKED)
        return S_CHUNK_SIZE;
    if (ps->body == B_LENGTH)
        return ps->remaining > 0 ? S_LENGTH : S_HEAD;
    return ps->response ? S_EOF : S_HEAD;
}

/* Body bytes of the n at hand (S_LENGTH, S_CHUNK_DATA, S_EOF: the state says it is body). */
static size_t body_take(const parser *ps, size_t n)
{
    if (ps->st != S_EOF && (long long)n > ps->remaining)
        return (size_t)ps->remaining;
    return n;
}

/* After take body bytes: true when they ended a Content-Length message (the next head follows). */
static bool body_done(parser *ps, size_t take)
{
    if (ps->st == S_EOF)
        return false;
    ps->remaining -= (long long)take;
    if (ps->remaining > 0)
        return false;
    if (ps->st == S_CHUNK_DATA) {
        ps->st = S_CHUNK_CRLF;
        ps->remaining = 2;
        return false;
    }
    ps->st = S_HEAD;
    ps->first_line = true;
    return true;
}

typedef enum { F_MORE, F_HEAD_LINE, F_MSG_END } frame_ev;

/* One byte of framing (a head, a chunk size, its CRLF, a trailer). F_HEAD_LINE: a line of a
 * head is whole in ps->line (its length in *len, CR dropped); F_MSG_END: a chunked message's
 * trailer ended (the next head follows). Chunk sizes are taken here. */
static frame_ev frame_byte(parser *ps, char ch, size_t *len)
{
    if (ps->st == S_CHUNK_CRLF) {
        if (--ps->remaining == 0)
            ps->st = S_CHUNK_SIZE;
        return F_MORE;
    }
    if (ch != '\n') {
        if (ps->line_len < sizeof ps->line - 1)
            ps->line[ps->line_len++] = ch;
        return F_MORE;
    }
    if (ps->line_len > 0 && ps->line[ps->line_len - 1] == '\r')
        ps->line_len--;
    ps->line[ps->line_len] = '\0';
    *len = ps->line_len;
    ps->line_len = 0;
    if (ps->st == S_CHUNK_SIZE) {
        ps->remaining = strtoll(ps->line, NULL, 16);
        ps->st = ps->remaining > 0 ? S_CHUNK_DATA : S_TRAILER;
        return F_MORE;
    }
    if (ps->st == S_TRAILER) {
        if (*len > 0)
            return F_MORE;
        ps->st = S_HEAD;
        ps->first_line = true;
        return F_MSG_END;
    }
    return F_HEAD_LINE;
}

/* ------------------------------------------------------------ the two directions */

/* Upstream -> client: the responses, under the bound action. */
static void *down_main(void *arg)
{
    conn *c = arg;
    parser ps = {.st = S_HEAD, .first_line = true, .response = true};
    char buf[IO_BUF];
    for (;;) {
        ssize_t r = io_recv(c->ufd, c->us, buf, sizeof buf);
        if (r <= 0)
            break;
        const char *p = buf;
        size_t n = (size_t)r;
        bool ok = true;
        while (ok && n > 0) {
            if (ps.st == S_LENGTH || ps.st == S_CHUNK_DATA || ps.st == S_EOF) {
                size_t take = body_take(&ps, n);
                ok = forward_down(c, p, take, true);
                p += take;
                n -= take;
                if (body_done(&ps, take) || ps.st == S_HEAD) {
                    pthread_mutex_lock(&c->mu);
                    c->line_len = 0;
                    pthread_mutex_unlock(&c->mu);
                }
                continue;
            }
            /* Framing, a byte at a time (it is short). */
            char ch = *p;
            ok = forward_down(c, p, 1, false);
            p++;
            n--;
            size_t len = 0;
            if (frame_byte(&ps, ch, &len) != F_HEAD_LINE)
                continue;
            if (ps.first_line) {
                if (len == 0)
                    continue;
                ps.first_line = false;
                ps.body = B_NONE;
                ps.remaining = 0;
                ps.ctype[0] = '\0';
                const char *sp = strchr(ps.line, ' ');
                ps.status = sp != NULL ? strtol(sp + 1, NULL, 10) : 0;
            } else if (len == 0) {
                pthread_mutex_lock(&c->mu);
                bool head_req = strcmp(c->method, "HEAD") == 0;
                c->line_len = 0;
                /* What each answer was, for the tests that check the
                 * encoding the server chose (e2e_protobuf.sh). */
                if (ps.status >= 200)
                    logf_("conn %d req %d %s %.200s: response %ld content-type %s", c->id,
                          c->req_no, c->method, c->target, ps.status, ps.ctype[0] ? ps.ctype : "-");
                pthread_mutex_unlock(&c->mu);
                ps.st = after_head(&ps, head_req);
                ps.first_line = ps.st == S_HEAD;
            } else {
                head_header(&ps, ps.line);
            }
        }
        if (!ok)
            break;
    }
    conn_kill(c);
    return NULL;
}

/* The reason and the status line's phrase the API server gives a status code (apimachinery's
 * metav1.StatusReason), for the answers the proxy gives itself. */
static void status_words(long code, const char **reason, const char **phrase)
{
    static const struct {
        long code;
        const char *reason, *phrase;
    } t[] = {{400, "BadRequest", "Bad Request"},
             {401, "Unauthorized", "Unauthorized"},
             {403, "Forbidden", "Forbidden"},
             {404, "NotFound", "Not Found"},
             {405, "MethodNotAllowed", "Method Not Allowed"},
             {409, "Conflict", "Conflict"},
             {410, "Expired", "Gone"},
             {413, "RequestEntityTooLarge", "Request Entity Too Large"},
             {415, "UnsupportedMediaType", "Unsupported Media Type"},
             {422, "Invalid", "Unprocessable Entity"},
             {429, "TooManyRequests", "Too Many Requests"},
             {500, "InternalError", "Internal Server Error"},
             {503, "ServiceUnavailable", "Service Unavailable"},
             {504, "Timeout", "Gateway Timeout"}};
    for (size_t i = 0; i < sizeof t / sizeof t[0]; i++)
        if (t[i].code == code) {
            *reason = t[i].reason;
            *phrase = t[i].phrase;
            return;
        }
    *reason = code >= 500 ? "InternalError" : "";
    *phrase = code < 300 ? "OK" : "Error";
}

/* The proxy's own answer to c's current request (a respond rule): a Kubernetes Status. */
static bool answer_itself(conn *c, const action *a)
{
    const char *reason, *phrase;
    status_words(a->n, &reason, &phrase);
    char ra[48] = "", details[64] = "", body[1024], head[512];
    if (a->t_ms >= 0) {
        snprintf(ra, sizeof ra, "Retry-After: %ld\r\n", a->t_ms / 1000);
        snprintf(details, sizeof details, ",\"details\":{\"retryAfterSeconds\":%ld}",
                 a->t_ms / 1000);
    }
    pthread_mutex_lock(&c->mu);
    int req_no = c->req_no;
    char method[16], target[1024];
    snprintf(method, sizeof method, "%s", c->method);
    snprintf(target, sizeof target, "%s", c->target);
    pthread_mutex_unlock(&c->mu);
    int blen = snprintf(body, sizeof body,
                        "{\"kind\":\"Status\",\"apiVersion\":\"v1\",\"metadata\":{},"
                        "\"status\":\"%s\",\"message\":\"faultproxy rule %d answered %ld to %s "
                        "%.300s itself\",\"reason\":\"%s\"%s,\"code\":%ld}",
                        a->n < 300 ? "Success" : "Failure", a->rule, a->n, method, target, reason,
                        details, a->n);
    if (blen < 0 || (size_t)blen >= sizeof body)
        return false;
    int hlen = snprintf(head, sizeof head,
                        "HTTP/1.1 %ld %s\r\nContent-Type: application/json\r\n%s"
                        "Content-Length: %d\r\n\r\n",
                        a->n, phrase, ra, blen);
    if (hlen < 0 || (size_t)hlen >= sizeof head)
        return false;
    /* Logged before it is sent: the line's time is never later than the
     * client's receipt (the tests measure the client's wait from it). */
    logf_("conn %d req %d %s %.200s: answered %ld %s itself (rule %d), the upstream never saw it",
          c->id, req_no, method, target, a->n, reason, a->rule);
    pthread_mutex_lock(&c->send_mu);
    bool ok =
        io_send(c->cfd, c->cs, head, (size_t)hlen) && io_send(c->cfd, c->cs, body, (size_t)blen);
    pthread_mutex_unlock(&c->send_mu);
    return ok;
}

/* Client -> upstream: each request's head is read whole and matched, then sent on with its
 * body; or, under a respond rule, its body is read and dropped and the proxy answers. */
static void up_loop(conn *c)
{
    parser ps = {.st = S_HEAD, .first_line = true, .response = false};
    char *head = malloc(HEAD_MAX);
    if (head == NULL)
        return;
    size_t head_len = 0;
    char buf[IO_BUF];
    action own = {A_PASS, 0, 0, 0}; /* the current request's action */
    for (;;) {
        ssize_t r = io_recv(c->cfd, c->cs, buf, sizeof buf);
        if (r <= 0)
            break;
        const char *p = buf;
        size_t n = (size_t)r;
        bool ok = true;
        while (ok && n > 0) {
            bool swallow = own.kind == A_RESPOND;
            bool ended = false;
            if (ps.st == S_LENGTH || ps.st == S_CHUNK_DATA) {
                size_t take = body_take(&ps, n);
                ok = swallow || io_send(c->ufd, c->us, p, take);
                p += take;
                n -= take;
                ended = body_done(&ps, take);
            } else if (ps.st != S_HEAD) {
                char ch = *p++;
                n--;
                ok = swallow || io_send(c->ufd, c->us, &ch, 1);
                size_t len = 0;
                ended = frame_byte(&ps, ch, &len) == F_MSG_END;
            } else {
                char ch = *p++;
                n--;
                if (head_len == HEAD_MAX) {
                    logf_("conn %d: request head over %d bytes: closed", c->id, HEAD_MAX);
                    ok = false;
                    break;
                }
                head[head_len++] = ch;
                size_t len = 0;
                if (frame_byte(&ps, ch, &len) != F_HEAD_LINE)
                    continue;
                if (ps.first_line) {
                    if (len == 0) {
                        head_len = 0;
                        continue;
                    }
                    ps.first_line = false;
                    ps.body = B_NONE;
                    ps.remaining = 0;
                    char m[16] = "", t[1024] = "";
                    if (sscanf(ps.line, "%15s %1023s", m, t) != 2) {
                        logf_("conn %d: not an HTTP request line: closed", c->id);
                        ok = false;
                        break;
                    }
                    pthread_mutex_lock(&c->mu);
                    snprintf(c->method, sizeof c->method, "%s", m);
                    snprintf(c->target, sizeof c->target, "%s", t);
                    pthread_mutex_unlock(&c->mu);
                    continue;
                }
                if (len > 0) {
                    head_header(&ps, ps.line);
                    continue;
                }
                /* The head is whole: bind the rule, then send it on (or keep it). */
                pthread_mutex_lock(&g_mu);
                pthread_mutex_lock(&c->mu);
                own = match_locked(c->method, c->target, false);
                c->req_no++;
                bind_locked(c, own.kind == A_RESPOND ? (action){A_PASS, 0, 0, own.rule} : own);
                char d[64];
                describe(&own, d, sizeof d);
                logf_("conn %d req %d %s %.200s: rule %d: %s", c->id, c->req_no, c->method,
                      c->target, own.rule, d);
                pthread_mutex_unlock(&c->mu);
                pthread_mutex_unlock(&g_mu);
                ok = own.kind == A_RESPOND || io_send(c->ufd, c->us, head, head_len);
                head_len = 0;
                ps.st = after_head(&ps, false);
                ps.first_line = ps.st == S_HEAD;
                ended = ps.st == S_HEAD;
            }
            if (ok && ended && own.kind == A_RESPOND)
                ok = answer_itself(c, &own);
            if (ended)
                own = (action){A_PASS, 0, 0, 0};
        }
        if (!ok)
            break;
    }
    free(head);
}

/* ------------------------------------------------------------ connections */

static gnutls_datum_t alpn_h1 = {(unsigned char *)"http/1.1", 8};

static bool tls_session(gnutls_session_t *s, int fd, bool server, conn *c)
{
    if (gnutls_init(s, server ? GNUTLS_SERVER : GNUTLS_CLIENT) < 0)
        return false;
    /* To the upstream, TLS 1.2: in TLS 1.3 the API server (Go) names only RSA-PSS among the
     * signatures it accepts, and GnuTLS then declines to send a client certificate whose own
     * signature is PKCS#1 v1.5, as the test cluster's are (curl's OpenSSL sends it anyway). */
    int prio = server ? gnutls_set_default_priority(*s)
                      : gnutls_priority_set_direct(*s, "NORMAL:-VERS-TLS1.3", NULL);
    if (prio < 0 ||
        gnutls_credentials_set(*s, GNUTLS_CRD_CERTIFICATE, server ? opt.srv_cred : opt.cli_cred) <
            0 ||
        gnutls_alpn_set_protocols(*s, &alpn_h1, 1, 0) < 0) {
        gnutls_deinit(*s);
        *s = NULL;
        return false;
    }
    if (!server)
        gnutls_session_set_verify_cert(*s, opt.up_host, 0);
    gnutls_transport_set_int(*s, fd);
    gnutls_handshake_set_timeout(*s, 10000);
    int rc;
    do
        rc = gnutls_handshake(*s);
    while (rc < 0 && gnutls_error_is_fatal(rc) == 0);
    if (rc < 0) {
        logf_("conn %d: TLS handshake with the %s failed: %s", c->id,
              server ? "client" : "upstream", gnutls_strerror(rc));
        gnutls_deinit(*s);
        *s = NULL;
        return false;
    }
    return true;
}

static int connect_upstream(void)
{
    int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    if (fd < 0)
        return -1;
    struct sockaddr_in a = {.sin_family = AF_INET, .sin_port = htons((uint16_t)opt.up_port)};
    int one = 1;
    if (inet_pton(AF_INET, opt.up_host, &a.sin_addr) != 1 ||
        setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one) != 0 ||
        connect(fd, (struct sockaddr *)&a, sizeof a) != 0) {
        (void)close(fd);
        return -1;
    }
    return fd;
}

static void conn_unlink(conn *c)
{
    pthread_mutex_lock(&g_mu);
    for (conn **pp = &g_conns; *pp != NULL; pp = &(*pp)->next)
        if (*pp == c) {
            *pp = c->next;
            break;
        }
    pthread_mutex_unlock(&g_mu);
}

static void conn_free(conn *c)
{
    pthread_cond_destroy(&c->cv);
    pthread_mutex_destroy(&c->send_mu);
    pthread_mutex_destroy(&c->mu);
    free(c);
}

/* A connection's state for fd, its locks made; NULL (fd closed) when they cannot be. */
static conn *conn_new(int fd)
{
    conn *c = calloc(1, sizeof *c);
    if (c == NULL) {
        (void)close(fd);
        return NULL;
    }
    c->cfd = fd;
    c->ufd = -1;
    pthread_condattr_t ca;
    bool mu = pthread_mutex_init(&c->mu, NULL) == 0;
    bool smu = mu && pthread_mutex_init(&c->send_mu, NULL) == 0;
    bool attr = smu && pthread_condattr_init(&ca) == 0;
    bool cv = attr && pthread_condattr_setclock(&ca, CLOCK_MONOTONIC) == 0 &&
              pthread_cond_init(&c->cv, &ca) == 0;
    if (attr)
        (void)pthread_condattr_destroy(&ca);
    if (cv)
        return c;
    if (smu)
        pthread_mutex_destroy(&c->send_mu);
    if (mu)
        pthread_mutex_destroy(&c->mu);
    (void)close(fd);
    free(c);
    return NULL;
}

static void *conn_main(void *arg)
{
    conn *c = arg;
    bool ok = true;
    if (opt.srv_cred != NULL)
        ok = tls_session(&c->cs, c->cfd, true, c);
    if (ok) {
        c->ufd = connect_upstream();
        if (c->ufd < 0) {
            logf_("conn %d: upstream %s:%d unreachable: %s", c->id, opt.up_host, opt.up_port,
                  strerror(errno));
            ok = false;
        }
    }
    if (ok && opt.cli_cred != NULL)
        ok = tls_session(&c->us, c->ufd, false, c);
    pthread_t down;
    if (ok && pthread_create(&down, NULL, down_main, c) != 0) {
        logf_("conn %d: no thread", c->id);
        ok = false;
    }
    if (ok) {
        up_loop(c);
        conn_kill(c);
        pthread_join(down, NULL);
    }
    conn_unlink(c);
    if (c->cs != NULL)
        gnutls_deinit(c->cs);
    if (c->us != NULL)
        gnutls_deinit(c->us);
    (void)close(c->cfd);
    if (c->ufd >= 0)
        (void)close(c->ufd);
    logf_("conn %d: closed after %d requests", c->id, c->req_no);
    conn_free(c);
    return NULL;
}

static void accept_one(int lfd)
{
    int fd = accept4(lfd, NULL, NULL, SOCK_CLOEXEC);
    if (fd < 0)
        return;
    int one = 1;
    (void)setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
    conn *c = conn_new(fd);
    if (c == NULL)
        return;
    pthread_mutex_lock(&g_mu);
    c->id = ++g_next_id;
    c->next = g_conns;
    g_conns = c;
    pthread_mutex_unlock(&g_mu);
    pthread_t t;
    pthread_attr_t at;
    if (pthread_attr_init(&at) != 0 ||
        pthread_attr_setdetachstate(&at, PTHREAD_CREATE_DETACHED) != 0 ||
        pthread_create(&t, &at, conn_main, c) != 0) {
        logf_("conn %d: no thread: closed", c->id);
        conn_unlink(c);
        (void)close(fd);
        conn_free(c);
    }
    (void)pthread_attr_destroy(&at);
}

static int open_listener(void)
{
    int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    if (fd < 0) {
        logf_("socket: %s", strerror(errno));
        return -1;
    }
    int one = 1;
    struct sockaddr_in a = {.sin_family = AF_INET, .sin_port = htons((uint16_t)opt.listen_port)};
    if (inet_pton(AF_INET, opt.listen_host, &a.sin_addr) != 1 ||
        setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one) != 0 ||
        bind(fd, (struct sockaddr *)&a, sizeof a) != 0 || listen(fd, 128) != 0) {
        logf_("cannot listen on %s:%d: %s", opt.listen_host, opt.listen_port, strerror(errno));
        (void)close(fd);
        return -1;
    }
    /* Port 0: the kernel's choice, kept for every reopen after a refuse. */
    socklen_t len = sizeof a;
    if (opt.listen_port == 0 && getsockname(fd, (struct sockaddr *)&a, &len) == 0)
        opt.listen_port = ntohs(a.sin_port);
    return fd;
}

/* ------------------------------------------------------------ main */

static bool host_port(const char *s, const char **host, int *port)
{
    const char *colon = strrchr(s, ':');
    long p;
    if (colon == NULL || !parse_long(colon + 1, &p) || p > 65535)
        return false;
    char *h = strndup(s, (size_t)(colon - s));
    if (h == NULL)
        return false;
    *host = h;
    *port = (int)p;
    return true;
}

static void usage(void)
{
    fprintf(stderr, "usage: faultproxy --listen HOST:PORT --upstream HOST:PORT --rules FILE\n"
                    "                  [--cert CRT --key KEY]\n"
                    "                  [--upstream-ca CA [--upstream-cert CRT --upstream-key "
                    "KEY]]\n"
                    "(the rules and the log: the header of tests/tools/faultproxy.c)\n");
    exit(2);
}

int main(int argc, char **argv)
{
    const char *listen = NULL, *up = NULL, *cert = NULL, *key = NULL, *up_ca = NULL,
               *up_cert = NULL, *up_key = NULL;
    for (int i = 1; i < argc; i++) {
        const char **dst = NULL;
        if (strcmp(argv[i], "--listen") == 0)
            dst = &listen;
        else if (strcmp(argv[i], "--upstream") == 0)
            dst = &up;
        else if (strcmp(argv[i], "--rules") == 0)
            dst = &opt.rules_path;
        else if (strcmp(argv[i], "--cert") == 0)
            dst = &cert;
        else if (strcmp(argv[i], "--key") == 0)
            dst = &key;
        else if (strcmp(argv[i], "--upstream-ca") == 0)
            dst = &up_ca;
        else if (strcmp(argv[i], "--upstream-cert") == 0)
            dst = &up_cert;
        else if (strcmp(argv[i], "--upstream-key") == 0)
            dst = &up_key;
        if (dst == NULL || i + 1 >= argc)
            usage();
        *dst = argv[++i];
    }
    if (listen == NULL || up == NULL || opt.rules_path == NULL || (cert == NULL) != (key == NULL) ||
        (up_cert == NULL) != (up_key == NULL) || (up_cert != NULL && up_ca == NULL) ||
        !host_port(listen, &opt.listen_host, &opt.listen_port) ||
        !host_port(up, &opt.up_host, &opt.up_port) || opt.up_port == 0)
        usage();

    if (cert != NULL) {
        int rc = gnutls_certificate_allocate_credentials(&opt.srv_cred);
        if (rc >= 0)
            rc = gnutls_certificate_set_x509_key_file(opt.srv_cred, cert, key, GNUTLS_X509_FMT_PEM);
        if (rc < 0) {
            fprintf(stderr, "faultproxy: %s / %s: %s\n", cert, key, gnutls_strerror(rc));
            return 1;
        }
    }
    if (up_ca != NULL) {
        int rc = gnutls_certificate_allocate_credentials(&opt.cli_cred);
        if (rc >= 0)
            rc = gnutls_certificate_set_x509_trust_file(opt.cli_cred, up_ca, GNUTLS_X509_FMT_PEM);
        if (rc >= 0 && up_cert != NULL)
            rc = gnutls_certificate_set_x509_key_file(opt.cli_cred, up_cert, up_key,
                                                      GNUTLS_X509_FMT_PEM);
        if (rc < 0) {
            fprintf(stderr, "faultproxy: upstream credentials: %s\n", gnutls_strerror(rc));
            return 1;
        }
    }

    /* Signals arrive on a descriptor in this loop; every thread made later blocks them. */
    sigset_t set;
    sigemptyset(&set);
    sigaddset(&set, SIGHUP);
    sigaddset(&set, SIGTERM);
    sigaddset(&set, SIGINT);
    if (signal(SIGPIPE, SIG_IGN) == SIG_ERR || pthread_sigmask(SIG_BLOCK, &set, NULL) != 0) {
        fprintf(stderr, "faultproxy: cannot set up signals\n");
        return 1;
    }
    int sfd = signalfd(-1, &set, SFD_CLOEXEC);
    if (sfd < 0) {
        fprintf(stderr, "faultproxy: signalfd: %s\n", strerror(errno));
        return 1;
    }
    load_rules(true);

    for (;;) {
        /* g_lfd changes only here (load_rules runs in this loop): no lock to read it. */
        int lfd = g_lfd;
        struct pollfd pf[2] = {{sfd, POLLIN, 0}, {lfd, POLLIN, 0}};
        int rc = poll(pf, lfd >= 0 ? 2 : 1, -1);
        if (rc < 0) {
            if (errno == EINTR)
                continue;
            logf_("poll: %s", strerror(errno));
            return 1;
        }
        if (pf[0].revents & POLLIN) {
            struct signalfd_siginfo si;
            if (read(sfd, &si, sizeof si) != (ssize_t)sizeof si)
                continue;
            if (si.ssi_signo == SIGHUP) {
                load_rules(false);
                continue;
            }
            logf_("stopped by signal %u", si.ssi_signo);
            return 0;
        }
        if (lfd >= 0 && (pf[1].revents & POLLIN))
            accept_one(lfd);
    }
}
