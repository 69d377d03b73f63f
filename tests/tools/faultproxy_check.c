/*
 * faultproxy_check.c — the fault proxy's own test (tests/tools/faultproxy.c): every fault mode
 * against a local upstream, so that a broken mode fails here, not as a puzzling end-to-end run.
 *
 * The upstream is in this process, on loopback: GET /fixed/N answers N bytes with a
 * Content-Length; GET /lines streams a chunked line every 50 ms until the client goes; POST /echo
 * answers its request body. The proxy is the real binary, started as a child, its rules
 * rewritten and reloaded with SIGHUP as the e2e tests do. Checks (plain TCP, then TLS both ways
 * with a throw-away certificate, tests/unit/hr_testcert.h):
 *
 *   pass      a body arrives whole and intact
 *   cut       a Content-Length body stops after N bytes and the connection closes; a streaming
 *             (chunked) response already open is cut N bytes after the reload, mid-line, and the
 *             log says how far into the line; `once` lets the next request pass
 *   framing   a request with a body is followed on the same connection by one that gets its own
 *             rule (the request boundary was found)
 *   silent    silent T: no byte for T seconds, the connection kept open, then the rest; silent
 *             without T: nothing until the rules change, then the stream flows
 *   throttle  B bytes/s: a body of 2B bytes takes about 2 s, intact
 *   refuse    a connect is refused, a connection already open still works, then a connect works
 *             again once the rules say so
 *   respond   the proxy answers a matching request itself (409 times 2, 429 retry-after 3 once,
 *             503 for a chunked body): the status, a Kubernetes Status body with its reason and
 *             code (and Retry-After, details.retryAfterSeconds), the upstream never sees it, the
 *             connection stays open and the next request on it passes; a stream already sent
 *             on when such a rule loads is not answered
 *   bad file  refused whole, the rules in force stay
 *
 * Usage: faultproxy_check FAULTPROXY_BINARY. PASS/FAIL per check; exit 0 when all pass.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <gnutls/gnutls.h>

#include "../unit/hr_testcert.h"

static int passed, failed;
static char dir[256], log_path[300], rules_path[300], crt_path[300], key_path[300];
static pid_t proxy_pid;
static int proxy_port, gen;
/* Read by the upstream's threads, some still streaming when the mode changes. */
static atomic_bool tls_mode;
static gnutls_certificate_credentials_t srv_cred, cli_cred;

static void check(bool ok, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void check(bool ok, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    printf("%s  [%s] ", ok ? "PASS" : "FAIL", atomic_load(&tls_mode) ? "tls" : "plain");
    vprintf(fmt, ap);
    printf("\n");
    (void)fflush(stdout);
    va_end(ap);
    if (ok)
        passed++;
    else
        failed++;
}

static int64_t now_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

static void nap_ms(long ms)
{
    struct timespec ts = {ms / 1000, (ms % 1000) * 1000000};
    while (nanosleep(&ts, &ts) != 0 && errno == EINTR)
        ;
}

/* ------------------------------------------------------------ a byte stream, plain or TLS */

typedef struct stream {
    int fd;
    gnutls_session_t s;
} stream;

static ssize_t st_recv(stream *st, char *b, size_t n)
{
    for (;;) {
        ssize_t r = st->s ? gnutls_record_recv(st->s, b, n) : recv(st->fd, b, n, 0);
        if (st->s && (r == GNUTLS_E_AGAIN || r == GNUTLS_E_INTERRUPTED))
            continue;
        if (!st->s && r < 0 && errno == EINTR)
            continue;
        return r < 0 ? -1 : r;
    }
}

static bool st_send(stream *st, const char *b, size_t n)
{
    while (n > 0) {
        ssize_t w = st->s ? gnutls_record_send(st->s, b, n) : send(st->fd, b, n, MSG_NOSIGNAL);
        if (st->s && (w == GNUTLS_E_AGAIN || w == GNUTLS_E_INTERRUPTED))
            continue;
        if (w <= 0)
            return false;
        b += w;
        n -= (size_t)w;
    }
    return true;
}

static bool st_tls(stream *st, bool server)
{
    if (gnutls_init(&st->s, server ? GNUTLS_SERVER : GNUTLS_CLIENT) < 0)
        return false;
    if (gnutls_set_default_priority(st->s) < 0 ||
        gnutls_credentials_set(st->s, GNUTLS_CRD_CERTIFICATE, server ? srv_cred : cli_cred) < 0)
        return false;
    if (!server)
        gnutls_session_set_verify_cert(st->s, "127.0.0.1", 0);
    gnutls_transport_set_int(st->s, st->fd);
    gnutls_handshake_set_timeout(st->s, 5000);
    int rc;
    do
        rc = gnutls_handshake(st->s);
    while (rc < 0 && gnutls_error_is_fatal(rc) == 0);
    return rc >= 0;
}

static void st_close(stream *st)
{
    if (st->s)
        gnutls_deinit(st->s);
    if (st->fd >= 0)
        (void)close(st->fd);
    st->s = NULL;
    st->fd = -1;
}

/* ------------------------------------------------------------ the upstream */

static int up_lfd, up_port;
static atomic_int up_echoes; /* requests /echo the upstream answered */

/* Reads one request head (and a Content-Length body into body); false at EOF. */
static bool read_request(stream *st, char *target, size_t tcap, char *body, size_t bcap,
                         size_t *blen)
{
    char head[8192];
    size_t n = 0;
    while (n < sizeof head - 1) {
        ssize_t r = st_recv(st, head + n, 1);
        if (r <= 0)
            return false;
        n++;
        if (n >= 4 && memcmp(head + n - 4, "\r\n\r\n", 4) == 0)
            break;
    }
    head[n] = '\0';
    char m[16];
    if (sscanf(head, "%15s %1023s", m, target) != 2)
        return false;
    (void)tcap;
    *blen = 0;
    const char *cl = strcasestr(head, "content-length:");
    if (cl != NULL) {
        size_t want = (size_t)strtoul(cl + 15, NULL, 10);
        while (*blen < want && *blen < bcap) {
            ssize_t r = st_recv(st, body + *blen, want - *blen);
            if (r <= 0)
                return false;
            *blen += (size_t)r;
        }
    }
    return true;
}

static void *up_conn(void *arg)
{
    stream st = {(int)(intptr_t)arg, NULL};
    if (atomic_load(&tls_mode) && !st_tls(&st, true)) {
        st_close(&st);
        return NULL;
    }
    char target[1024], *body = malloc(1 << 20);
    size_t blen;
    while (body != NULL && read_request(&st, target, sizeof target, body, 1 << 20, &blen)) {
        char hdr[256];
        if (strncmp(target, "/fixed/", 7) == 0) {
            long n = strtol(target + 7, NULL, 10);
            snprintf(hdr, sizeof hdr, "HTTP/1.1 200 OK\r\nContent-Length: %ld\r\n\r\n", n);
            if (!st_send(&st, hdr, strlen(hdr)))
                break;
            for (long i = 0; i < n; i++)
                body[i % (1 << 20)] = (char)('a' + i % 26);
            if (!st_send(&st, body, (size_t)n))
                break;
        } else if (strcmp(target, "/echo") == 0) {
            atomic_fetch_add(&up_echoes, 1);
            snprintf(hdr, sizeof hdr, "HTTP/1.1 200 OK\r\nContent-Length: %zu\r\n\r\n", blen);
            if (!st_send(&st, hdr, strlen(hdr)) || !st_send(&st, body, blen))
                break;
        } else if (strcmp(target, "/lines") == 0) {
            const char *h = "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n";
            if (!st_send(&st, h, strlen(h)))
                break;
            for (int k = 0;; k++) {
                char line[200], chunk[256];
                int ll = snprintf(line, sizeof line, "{\"n\":%d,\"pad\":\"%060d\"}\n", k, k);
                int cl = snprintf(chunk, sizeof chunk, "%x\r\n%s\r\n", ll, line);
                if (!st_send(&st, chunk, (size_t)cl))
                    break;
                nap_ms(50);
            }
            break;
        } else {
            const char *h = "HTTP/1.1 404 Not Found\r\nContent-Length: 0\r\n\r\n";
            if (!st_send(&st, h, strlen(h)))
                break;
        }
    }
    free(body);
    st_close(&st);
    return NULL;
}

static void *up_main(void *arg)
{
    (void)arg;
    for (;;) {
        int fd = accept(up_lfd, NULL, NULL);
        if (fd < 0)
            continue;
        pthread_t t;
        if (pthread_create(&t, NULL, up_conn, (void *)(intptr_t)fd) != 0)
            (void)close(fd);
        else
            (void)pthread_detach(t);
    }
    return NULL;
}

/* ------------------------------------------------------------ the proxy */

static bool log_has(const char *needle)
{
    FILE *f = fopen(log_path, "r");
    if (f == NULL)
        return false;
    char line[4096];
    bool found = false;
    while (!found && fgets(line, sizeof line, f) != NULL)
        found = strstr(line, needle) != NULL;
    (void)fclose(f);
    return found;
}

/* The first log line containing needle after skip lines of it, copied to out. */
static bool log_line(const char *needle, char *out, size_t cap)
{
    FILE *f = fopen(log_path, "r");
    if (f == NULL)
        return false;
    char line[4096];
    bool found = false;
    while (!found && fgets(line, sizeof line, f) != NULL)
        if (strstr(line, needle) != NULL) {
            snprintf(out, cap, "%s", line);
            found = true;
        }
    (void)fclose(f);
    return found;
}

static bool wait_log(const char *needle, long ms)
{
    int64_t end = now_ms() + ms;
    while (!log_has(needle)) {
        if (now_ms() > end)
            return false;
        nap_ms(20);
    }
    return true;
}

/* Writes the rules and reloads them; true once the proxy says they are in force. */
static bool rules(const char *text)
{
    FILE *f = fopen(rules_path, "w");
    if (f == NULL || fputs(text, f) < 0 || fclose(f) != 0)
        return false;
    if (kill(proxy_pid, SIGHUP) != 0)
        return false;
    gen++;
    char want[64];
    snprintf(want, sizeof want, "rules loaded: generation %d,", gen);
    return wait_log(want, 5000);
}

static bool start_proxy(const char *bin)
{
    snprintf(log_path, sizeof log_path, "%s/proxy-%s.log", dir,
             atomic_load(&tls_mode) ? "tls" : "plain");
    FILE *rf = fopen(rules_path, "w");
    if (rf == NULL || fclose(rf) != 0)
        return false;
    char up[64];
    snprintf(up, sizeof up, "127.0.0.1:%d", up_port);
    proxy_pid = fork();
    if (proxy_pid < 0)
        return false;
    if (proxy_pid == 0) {
        FILE *lf = freopen(log_path, "w", stdout);
        if (lf == NULL || dup2(STDOUT_FILENO, STDERR_FILENO) < 0)
            _exit(127);
        if (atomic_load(&tls_mode))
            execl(bin, bin, "--listen", "127.0.0.1:0", "--upstream", up, "--rules", rules_path,
                  "--cert", crt_path, "--key", key_path, "--upstream-ca", crt_path, (char *)NULL);
        else
            execl(bin, bin, "--listen", "127.0.0.1:0", "--upstream", up, "--rules", rules_path,
                  (char *)NULL);
        _exit(127);
    }
    gen = 1;
    if (!wait_log("rules loaded: generation 1,", 5000))
        return false;
    char line[4096];
    if (!log_line("listening on 127.0.0.1:", line, sizeof line))
        return false;
    proxy_port = atoi(strstr(line, "127.0.0.1:") + 10);
    return proxy_port > 0;
}

static void stop_proxy(void)
{
    if (proxy_pid > 0) {
        (void)kill(proxy_pid, SIGTERM);
        (void)waitpid(proxy_pid, NULL, 0);
        proxy_pid = 0;
    }
}

/* ------------------------------------------------------------ the client */

static bool dial(stream *st, int *err)
{
    st->s = NULL;
    st->fd = socket(AF_INET, SOCK_STREAM, 0);
    struct sockaddr_in a = {.sin_family = AF_INET, .sin_port = htons((uint16_t)proxy_port)};
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    if (st->fd < 0 || connect(st->fd, (struct sockaddr *)&a, sizeof a) != 0) {
        *err = errno;
        st_close(st);
        return false;
    }
    if (atomic_load(&tls_mode) && !st_tls(st, false)) {
        *err = EPROTO;
        st_close(st);
        return false;
    }
    return true;
}

typedef struct answer {
    long status;
    char head[4096];
    char *body;
    size_t len;
    bool closed; /* the connection ended before the body did */
    int64_t ms;
} answer;

static bool read_answer(stream *st, size_t max, int64_t t0, answer *out);

/* Sends a request, reads its answer (Content-Length or chunked, decoded); at most max body
 * bytes of a stream (then returns with the connection open). */
static bool request(stream *st, const char *method, const char *target, const char *body,
                    size_t max, answer *out)
{
    int64_t t0 = now_ms();
    char req[2048];
    int n = snprintf(req, sizeof req, "%s %s HTTP/1.1\r\nHost: x\r\nContent-Length: %zu\r\n\r\n",
                     method, target, body ? strlen(body) : 0);
    if (!st_send(st, req, (size_t)n) || (body && !st_send(st, body, strlen(body))))
        return false;
    return read_answer(st, max, t0, out);
}

/* Reads one answer (its head kept in out->head) as request() does. */
static bool read_answer(stream *st, size_t max, int64_t t0, answer *out)
{
    memset(out, 0, sizeof *out);
    char *head = out->head;
    size_t h = 0;
    while (h < sizeof out->head - 1) {
        if (st_recv(st, head + h, 1) <= 0) {
            out->closed = true;
            return true;
        }
        h++;
        if (h >= 4 && memcmp(head + h - 4, "\r\n\r\n", 4) == 0)
            break;
    }
    head[h] = '\0';
    out->status = strtol(head + 9, NULL, 10);
    out->body = malloc(max + 1);
    if (out->body == NULL)
        return false;
    bool chunked = strcasestr(head, "transfer-encoding: chunked") != NULL;
    const char *cl = strcasestr(head, "content-length:");
    size_t want = cl ? (size_t)strtoul(cl + 15, NULL, 10) : max;
    if (want > max)
        want = max;
    while (out->len < want) {
        size_t chunk = want - out->len;
        if (chunked) {
            char sz[32];
            size_t k = 0;
            char c = 0;
            while (k < sizeof sz - 1 && st_recv(st, &c, 1) == 1 && c != '\n')
                sz[k++] = c;
            if (c != '\n') {
                out->closed = true;
                break;
            }
            sz[k] = '\0';
            chunk = (size_t)strtoul(sz, NULL, 16);
            if (chunk == 0)
                break;
        }
        size_t got = 0;
        while (got < chunk) {
            size_t room = max - out->len;
            char tmp[4096];
            size_t ask = chunk - got < sizeof tmp ? chunk - got : sizeof tmp;
            ssize_t r = st_recv(st, tmp, ask);
            if (r <= 0) {
                out->closed = true;
                break;
            }
            size_t keep = (size_t)r < room ? (size_t)r : room;
            memcpy(out->body + out->len, tmp, keep);
            out->len += keep;
            got += (size_t)r;
        }
        if (out->closed)
            break;
        if (chunked) {
            char crlf[2];
            if (st_recv(st, crlf, 1) != 1 || st_recv(st, crlf + 1, 1) != 1) {
                out->closed = true;
                break;
            }
        }
    }
    out->body[out->len] = '\0';
    out->ms = now_ms() - t0;
    return true;
}

/* Reads what a stream still sends for up to ms, counting bytes (raw) and whether it closed. */
static size_t drain(stream *st, long ms, bool *closed, int64_t *first_ms)
{
    size_t total = 0;
    int64_t end = now_ms() + ms, t0 = now_ms();
    *closed = false;
    *first_ms = -1;
    while (now_ms() < end) {
        if (!st->s || gnutls_record_check_pending(st->s) == 0) {
            struct pollfd pf = {st->fd, POLLIN, 0};
            int rc = poll(&pf, 1, (int)(end - now_ms() > 0 ? end - now_ms() : 0));
            if (rc <= 0)
                continue;
        }
        char b[4096];
        ssize_t r = st_recv(st, b, sizeof b);
        if (r <= 0) {
            *closed = true;
            break;
        }
        if (*first_ms < 0)
            *first_ms = now_ms() - t0;
        total += (size_t)r;
    }
    return total;
}

static bool body_ok(const answer *a, size_t n)
{
    if (a->len != n)
        return false;
    for (size_t i = 0; i < n; i++)
        if (a->body[i] != (char)('a' + i % 26))
            return false;
    return true;
}

/* ------------------------------------------------------------ the checks */

/* The answer is the proxy's own Status for code and reason, the connection open. */
static bool own_status(const answer *a, long code, const char *reason)
{
    char want_code[32], want_reason[64];
    snprintf(want_code, sizeof want_code, "\"code\":%ld}", code);
    snprintf(want_reason, sizeof want_reason, "\"reason\":\"%s\"", reason);
    return a->status == code && !a->closed && strstr(a->body, "\"kind\":\"Status\"") != NULL &&
           strstr(a->body, "\"status\":\"Failure\"") != NULL &&
           strstr(a->body, want_reason) != NULL && strstr(a->body, want_code) != NULL &&
           strcasestr(a->head, "content-type: application/json") != NULL;
}

static void respond_checks(void)
{
    stream st;
    int err = 0;
    answer a;
    /* 409 twice, on one connection, then the request passes; other requests pass meanwhile */
    int echoes = atomic_load(&up_echoes);
    bool ok = rules("PATCH /echo respond 409 times 2\n") && dial(&st, &err) &&
              request(&st, "PATCH", "/echo", "{\"spec\":1}", 1 << 20, &a);
    check(ok && own_status(&a, 409, "Conflict"),
          "respond 409: status %ld, a Status body with reason Conflict and code 409: %.200s",
          ok ? a.status : 0, ok ? a.body : "");
    if (ok)
        free(a.body);
    ok = ok && request(&st, "GET", "/fixed/10", NULL, 1 << 20, &a);
    check(ok && body_ok(&a, 10), "respond: another request on that connection passes");
    if (ok)
        free(a.body);
    ok = ok && request(&st, "PATCH", "/echo", "{\"spec\":2}", 1 << 20, &a);
    check(ok && own_status(&a, 409, "Conflict"), "respond 409 times 2: the second one too");
    if (ok)
        free(a.body);
    check(atomic_load(&up_echoes) == echoes, "respond: the upstream never saw them (%d)",
          atomic_load(&up_echoes) - echoes);
    ok = ok && request(&st, "PATCH", "/echo", "{\"spec\":3}", 1 << 20, &a);
    check(ok && a.status == 200 && a.len == 10 && memcmp(a.body, "{\"spec\":3}", 10) == 0 &&
              atomic_load(&up_echoes) == echoes + 1,
          "respond times 2: the third passes, its body to the upstream and back (%ld)",
          ok ? a.status : 0);
    if (ok)
        free(a.body);
    check(log_has("answered 409 Conflict itself (rule 1)"), "the log says it answered 409 itself");
    st_close(&st);

    /* 429 with Retry-After, once */
    ok = rules("* /fixed/* respond 429 retry-after 3 once\n") && dial(&st, &err) &&
         request(&st, "GET", "/fixed/10", NULL, 1 << 20, &a);
    check(ok && own_status(&a, 429, "TooManyRequests") &&
              strcasestr(a.head, "\r\nRetry-After: 3\r\n") != NULL &&
              strstr(a.body, "\"details\":{\"retryAfterSeconds\":3}") != NULL,
          "respond 429 retry-after 3: Retry-After: 3 and details.retryAfterSeconds 3");
    if (ok)
        free(a.body);
    ok = ok && request(&st, "GET", "/fixed/10", NULL, 1 << 20, &a);
    check(ok && body_ok(&a, 10), "respond once: the next request passes");
    if (ok)
        free(a.body);
    st_close(&st);

    /* 503 to a request with a chunked body: the body is read and dropped, framing kept */
    ok = rules("PATCH /echo respond 503\n") && dial(&st, &err);
    static const char chunked[] = "PATCH /echo HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: "
                                  "chunked\r\n\r\n5\r\nhello\r\n6\r\n world\r\n0\r\n\r\n";
    echoes = atomic_load(&up_echoes);
    ok = ok && st_send(&st, chunked, sizeof chunked - 1) && read_answer(&st, 1 << 20, now_ms(), &a);
    check(ok && own_status(&a, 503, "ServiceUnavailable") &&
              strcasestr(a.head, "Retry-After") == NULL,
          "respond 503 to a chunked request: reason ServiceUnavailable, no Retry-After");
    if (ok)
        free(a.body);
    ok = ok && request(&st, "GET", "/fixed/20", NULL, 1 << 20, &a);
    check(ok && body_ok(&a, 20) && atomic_load(&up_echoes) == echoes,
          "respond: after the dropped chunked body the next request passes");
    if (ok)
        free(a.body);
    st_close(&st);

    /* a stream already sent on is not answered by a respond rule loaded later */
    ok = rules("") && dial(&st, &err) && request(&st, "GET", "/lines", NULL, 100, &a);
    if (ok)
        free(a.body);
    ok = ok && rules("GET /lines respond 500\n");
    bool closed = false;
    int64_t first = 0;
    size_t more = ok ? drain(&st, 500, &closed, &first) : 0;
    check(ok && more > 0 && !closed, "respond: a stream already open flows on (%zu bytes)", more);
    st_close(&st);
    ok = dial(&st, &err) && request(&st, "GET", "/lines", NULL, 1 << 20, &a);
    check(ok && own_status(&a, 500, "InternalError"), "respond 500: a new request is answered");
    if (ok)
        free(a.body);
    st_close(&st);
}

static void run_checks(void)
{
    stream st;
    int err = 0;
    answer a;

    /* pass */
    bool ok =
        rules("") && dial(&st, &err) && request(&st, "GET", "/fixed/200000", NULL, 1 << 20, &a);
    check(ok && a.status == 200 && body_ok(&a, 200000) && !a.closed,
          "pass: 200000 bytes arrive whole and intact (%zu)", ok ? a.len : 0);
    if (ok)
        free(a.body);
    /* framing: a body, then a request on the same connection with a rule of its own */
    ok = ok && rules("GET /fixed/* cut 10\n");
    answer e;
    static char big[3001];
    memset(big, 'x', 3000);
    ok = ok && request(&st, "POST", "/echo", big, 1 << 20, &e);
    check(ok && e.len == 3000 && !e.closed, "framing: a POST body of 3000 bytes is echoed");
    if (ok)
        free(e.body);
    ok = ok && request(&st, "GET", "/fixed/100", NULL, 1 << 20, &a);
    check(ok && a.len == 10 && a.closed,
          "framing: the next request on that connection gets its own rule (cut 10: %zu bytes, "
          "closed %d)",
          ok ? a.len : 0, ok ? a.closed : 0);
    if (ok)
        free(a.body);
    st_close(&st);

    /* cut, Content-Length */
    ok = rules("GET /fixed/* cut 1000\n") && dial(&st, &err) &&
         request(&st, "GET", "/fixed/5000", NULL, 1 << 20, &a);
    check(ok && a.len == 1000 && a.closed && body_ok(&a, 1000),
          "cut 1000: 1000 intact bytes of 5000, then the connection closes (%zu)", ok ? a.len : 0);
    if (ok)
        free(a.body);
    st_close(&st);

    /* cut, a stream already open, mid-line; once */
    ok = rules("") && dial(&st, &err) && request(&st, "GET", "/lines", NULL, 300, &a);
    check(ok && a.len == 300 && !a.closed, "a stream flows through pass (300 bytes read)");
    if (ok)
        free(a.body);
    bool closed = false;
    int64_t first = 0;
    ok = ok && rules("GET /lines cut 50 once\n");
    size_t more = ok ? drain(&st, 3000, &closed, &first) : 0;
    /* Up to 50 bytes of body, a chunk-size line and a half line's bytes of what was read. */
    check(ok && closed && more < 50 + 200, "cut 50 once on the open stream: closed after %zu bytes",
          more);
    char line[4096] = "";
    long into = -1;
    const char *at =
        log_line("cut after 50 body bytes, ", line, sizeof line) ? strstr(line, "cut after") : NULL;
    if (at != NULL && sscanf(at, "cut after 50 body bytes, %ld bytes into a line", &into) != 1)
        into = -1;
    line[strcspn(line, "\n")] = '\0';
    check(at != NULL && into > 0, "the log says the cut fell %ld bytes into a line: %s", into,
          at != NULL ? at : "(no cut in the log)");
    st_close(&st);
    ok = dial(&st, &err) && request(&st, "GET", "/lines", NULL, 400, &a);
    check(ok && a.len == 400 && !a.closed, "once: the next stream passes (%zu bytes)",
          ok ? a.len : 0);
    if (ok)
        free(a.body);
    st_close(&st);

    /* silent T after N: the head and 200 bytes (about 150 ms of lines), then 2.5 s of nothing */
    ok = rules("GET /lines silent 2.5 after 200\n") && dial(&st, &err);
    static const char lreq[] = "GET /lines HTTP/1.1\r\nHost: x\r\n\r\n";
    ok = ok && st_send(&st, lreq, sizeof lreq - 1);
    size_t before = ok ? drain(&st, 800, &closed, &first) : 0;
    size_t during = ok ? drain(&st, 1200, &closed, &first) : 0;
    check(ok && before > 200 && before < 400 && during == 0 && !closed,
          "silent 2.5 after 200: %zu bytes (the head and 200 of body), then nothing for 1.2 s, "
          "still open",
          before);
    size_t after = ok ? drain(&st, 2000, &closed, &first) : 0;
    check(ok && after > 0 && !closed, "silent 2.5: then the stream goes on (%zu bytes)", after);
    st_close(&st);

    /* silent until the rules change, from the first byte */
    ok = rules("GET /lines silent\n") && dial(&st, &err);
    ok = ok && st_send(&st, lreq, sizeof lreq - 1);
    during = ok ? drain(&st, 1000, &closed, &first) : 0;
    check(ok && during == 0 && !closed, "silent: not even the head for 1 s, still open");
    ok = ok && rules("");
    after = ok ? drain(&st, 1000, &closed, &first) : 0;
    check(ok && after > 0 && !closed && first >= 0 && first < 500,
          "silent: the rules change and the stream flows within %lld ms (%zu bytes)",
          (long long)first, after);
    st_close(&st);

    /* throttle */
    ok = rules("GET /fixed/* throttle 10000\n") && dial(&st, &err) &&
         request(&st, "GET", "/fixed/20000", NULL, 1 << 20, &a);
    check(ok && body_ok(&a, 20000) && a.ms >= 1700 && a.ms <= 4000,
          "throttle 10000: 20000 bytes intact in %lld ms (2 s expected)", ok ? (long long)a.ms : 0);
    if (ok)
        free(a.body);
    st_close(&st);
    ok = rules("") && dial(&st, &err) && request(&st, "GET", "/fixed/20000", NULL, 1 << 20, &a);
    check(ok && body_ok(&a, 20000) && a.ms < 1000, "without it: in %lld ms",
          ok ? (long long)a.ms : 0);
    if (ok)
        free(a.body);

    /* refuse: st stays open through it */
    ok = rules("refuse\n");
    stream other;
    bool dialed = dial(&other, &err);
    check(ok && !dialed && err == ECONNREFUSED, "refuse: a connect is refused (%s)",
          dialed ? "it connected" : strerror(err));
    if (dialed)
        st_close(&other);
    ok = ok && request(&st, "GET", "/fixed/100", NULL, 1 << 20, &a);
    check(ok && body_ok(&a, 100), "refuse: a connection already open still works");
    if (ok)
        free(a.body);
    st_close(&st);
    ok = rules("") && dial(&st, &err) && request(&st, "GET", "/fixed/10", NULL, 1 << 20, &a);
    check(ok && body_ok(&a, 10), "refuse lifted: connects again");
    if (ok)
        free(a.body);
    st_close(&st);

    respond_checks();

    /* a bad file */
    ok = rules("GET /fixed/* cut 5\n");
    FILE *f = fopen(rules_path, "w");
    ok = ok && f != NULL && fputs("GET /fixed/* explode\n", f) >= 0 && fclose(f) == 0 &&
         kill(proxy_pid, SIGHUP) == 0 && wait_log("rules refused", 5000);
    ok = ok && dial(&st, &err) && request(&st, "GET", "/fixed/100", NULL, 1 << 20, &a);
    check(ok && a.len == 5 && a.closed, "a bad rules file is refused; the rules in force stay");
    if (ok)
        free(a.body);
    st_close(&st);
}

int main(int argc, char **argv)
{
    if (argc != 2) {
        fprintf(stderr, "usage: faultproxy_check FAULTPROXY_BINARY\n");
        return 2;
    }
    (void)signal(SIGPIPE, SIG_IGN);
    snprintf(dir, sizeof dir, "/tmp/faultproxy-check.XXXXXX");
    if (mkdtemp(dir) == NULL || hr_testcert_write(dir, 1, HR_TC_BOTH) != 0) {
        fprintf(stderr, "faultproxy_check: no work directory or certificate\n");
        return 1;
    }
    snprintf(rules_path, sizeof rules_path, "%s/rules", dir);
    snprintf(crt_path, sizeof crt_path, "%s/tls.crt", dir);
    snprintf(key_path, sizeof key_path, "%s/tls.key", dir);
    if (gnutls_certificate_allocate_credentials(&srv_cred) < 0 ||
        gnutls_certificate_set_x509_key_file(srv_cred, crt_path, key_path, GNUTLS_X509_FMT_PEM) <
            0 ||
        gnutls_certificate_allocate_credentials(&cli_cred) < 0 ||
        gnutls_certificate_set_x509_trust_file(cli_cred, crt_path, GNUTLS_X509_FMT_PEM) < 0) {
        fprintf(stderr, "faultproxy_check: cannot load the test certificate\n");
        return 1;
    }
    up_lfd = socket(AF_INET, SOCK_STREAM, 0);
    struct sockaddr_in a = {.sin_family = AF_INET, .sin_port = 0};
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    socklen_t len = sizeof a;
    pthread_t up;
    if (up_lfd < 0 || bind(up_lfd, (struct sockaddr *)&a, sizeof a) != 0 ||
        listen(up_lfd, 64) != 0 || getsockname(up_lfd, (struct sockaddr *)&a, &len) != 0 ||
        pthread_create(&up, NULL, up_main, NULL) != 0) {
        fprintf(stderr, "faultproxy_check: no upstream: %s\n", strerror(errno));
        return 1;
    }
    up_port = ntohs(a.sin_port);
    for (int mode = 0; mode < 2; mode++) {
        atomic_store(&tls_mode, mode == 1);
        if (!start_proxy(argv[1])) {
            check(false, "the proxy starts and loads its rules (log %s)", log_path);
            stop_proxy();
            continue;
        }
        run_checks();
        stop_proxy();
    }
    printf("%d passed, %d failed\n", passed, failed);
    if (failed == 0) {
        char cmd[400];
        snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
        if (system(cmd) != 0)
            fprintf(stderr, "faultproxy_check: could not remove %s\n", dir);
    } else {
        printf("logs in %s\n", dir);
    }
    return failed == 0 ? 0 : 1;
}
