/*
 * run_hardening.c — what a client on the network can do to a running
 * `headroom run` (design §8 "Listeners"): real process, real
 * TLS, real sockets, on loopback, no API server needed (the kubeconfig
 * points at a port nothing listens on, so the informers just retry).
 *
 *   body     a 700 MiB chunked body to every route of the three listeners
 *            (webhook and metrics over TLS, probes plain)
 *            leaves the process's peak RSS (VmHWM) within a few MB of what
 *            it was, and the process answering;
 *   slow     64 idle or trickling connections from each of 8 addresses
 *            (127.0.0.2-9: twice the per-address cap, and together enough
 *            to fill the listener) do not stop a request from a 9th,
 *            127.0.0.10, being answered within 1 s, on the webhook, the
 *            metrics and the probe port;
 *   tls      a client offering only TLS 1.0/1.1, or only AES128-SHA, is
 *            refused on every TLS listener; TLS 1.3 is what a modern client
 *            gets, TLS 1.2 with an ECDHE AEAD suite still works.
 *
 * Usage: run_hardening HEADROOM_BINARY. Prints one PASS/FAIL line per
 * check and the figures; exit 0 when all pass.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <signal.h>
#include <stdarg.h>
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

static void check(bool ok, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void check(bool ok, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    printf("%s  ", ok ? "PASS" : "FAIL");
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

static uint16_t free_port(void)
{
    int fd = socket(AF_INET, SOCK_STREAM, 0);
    struct sockaddr_in a = {.sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
    socklen_t n = sizeof a;
    if (fd < 0 || bind(fd, (struct sockaddr *)&a, sizeof a) != 0 ||
        getsockname(fd, (struct sockaddr *)&a, &n) != 0) {
        perror("free_port");
        exit(2);
    }
    close(fd);
    return ntohs(a.sin_port);
}

/* A TCP connection to 127.0.0.1:port from src (NULL: any); -1 on failure.
 * Blocking, with send/receive timeouts. */
static int tcp_connect(const char *src, uint16_t port, int timeout_ms)
{
    int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    if (fd < 0)
        return -1;
    struct timeval tv = {timeout_ms / 1000, (timeout_ms % 1000) * 1000};
    setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv);
    setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof tv);
    if (src) {
        struct sockaddr_in s = {.sin_family = AF_INET};
        inet_pton(AF_INET, src, &s.sin_addr);
        if (bind(fd, (struct sockaddr *)&s, sizeof s) != 0) {
            close(fd);
            return -1;
        }
    }
    struct sockaddr_in a = {.sin_family = AF_INET, .sin_port = htons(port)};
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    if (connect(fd, (struct sockaddr *)&a, sizeof a) != 0) {
        close(fd);
        return -1;
    }
    return fd;
}

/* ------------------------------------------------------------ a client */

static gnutls_certificate_credentials_t g_cred;

typedef struct conn {
    int fd;
    gnutls_session_t s; /* NULL: plain */
} conn;

/* prio NULL: the client's defaults. Returns 0, or a GnuTLS error code
 * (negative), or 1 when the TCP connect failed. */
static int conn_open(conn *c, const char *src, uint16_t port, bool tls, const char *prio,
                     int timeout_ms)
{
    memset(c, 0, sizeof *c);
    c->fd = tcp_connect(src, port, timeout_ms);
    if (c->fd < 0)
        return 1;
    if (!tls)
        return 0;
    int rc = gnutls_init(&c->s, GNUTLS_CLIENT);
    if (rc < 0)
        return rc;
    rc = prio ? gnutls_priority_set_direct(c->s, prio, NULL) : gnutls_set_default_priority(c->s);
    if (rc >= 0)
        rc = gnutls_credentials_set(c->s, GNUTLS_CRD_CERTIFICATE, g_cred);
    if (rc >= 0) {
        gnutls_transport_set_int(c->s, c->fd);
        gnutls_handshake_set_timeout(c->s, (unsigned)timeout_ms);
        do
            rc = gnutls_handshake(c->s);
        while (rc < 0 && !gnutls_error_is_fatal(rc));
    }
    return rc < 0 ? rc : 0;
}

static void conn_close(conn *c)
{
    if (c->s)
        gnutls_deinit(c->s);
    if (c->fd >= 0)
        close(c->fd);
    c->s = NULL;
    c->fd = -1;
}

static ssize_t conn_send(conn *c, const void *p, size_t n)
{
    if (c->s) {
        ssize_t w;
        do
            w = gnutls_record_send(c->s, p, n);
        while (w == GNUTLS_E_AGAIN || w == GNUTLS_E_INTERRUPTED);
        return w < 0 ? -1 : w;
    }
    return send(c->fd, p, n, MSG_NOSIGNAL);
}

static ssize_t conn_recv(conn *c, void *p, size_t n)
{
    if (c->s) {
        ssize_t r;
        do
            r = gnutls_record_recv(c->s, p, n);
        while (r == GNUTLS_E_INTERRUPTED);
        return r < 0 ? -1 : r;
    }
    return recv(c->fd, p, n, 0);
}

static bool send_all(conn *c, const char *p, size_t n)
{
    while (n > 0) {
        ssize_t w = conn_send(c, p, n);
        if (w <= 0)
            return false;
        p += w;
        n -= (size_t)w;
    }
    return true;
}

/* The status of the answer on c (0: none). */
static int read_status(conn *c)
{
    char buf[2048];
    size_t len = 0;
    while (len < sizeof buf - 1) {
        ssize_t r = conn_recv(c, buf + len, sizeof buf - 1 - len);
        if (r <= 0)
            break;
        len += (size_t)r;
        buf[len] = '\0';
        if (strstr(buf, "\r\n"))
            break;
    }
    buf[len] = '\0';
    int st = 0;
    return sscanf(buf, "HTTP/1.%*d %d", &st) == 1 ? st : 0;
}

/* One GET on a new connection from src; the status (0: none). */
static int get(const char *src, uint16_t port, bool tls, const char *path, int timeout_ms)
{
    conn c;
    int st = 0;
    if (conn_open(&c, src, port, tls, NULL, timeout_ms) == 0) {
        char req[256];
        int n = snprintf(req, sizeof req,
                         "GET %s HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n", path);
        if (send_all(&c, req, (size_t)n))
            st = read_status(&c);
    }
    conn_close(&c);
    return st;
}

/* ----------------------------------------------------------- the daemon */

static pid_t g_pid = -1;

static long vm_kb(const char *field)
{
    char path[64], line[256];
    snprintf(path, sizeof path, "/proc/%d/status", (int)g_pid);
    FILE *f = fopen(path, "r");
    long v = -1;
    size_t fl = strlen(field);
    while (f && fgets(line, sizeof line, f))
        if (strncmp(line, field, fl) == 0 && line[fl] == ':')
            v = strtol(line + fl + 1, NULL, 10);
    if (f)
        (void)fclose(f);
    return v;
}

/* Reset VmHWM to the current RSS (proc(5), clear_refs "5"), so each check
 * sees its own peak. */
static void reset_peak(void)
{
    char path[64];
    snprintf(path, sizeof path, "/proc/%d/clear_refs", (int)g_pid);
    FILE *f = fopen(path, "w");
    if (f) {
        (void)fputs("5", f);
        (void)fclose(f);
    }
}

static bool alive(void)
{
    int status;
    return waitpid(g_pid, &status, WNOHANG) == 0;
}

static void write_file(const char *path, const char *text)
{
    FILE *f = fopen(path, "w");
    if (f == NULL || fputs(text, f) < 0 || fclose(f) != 0) {
        perror(path);
        exit(2);
    }
}

/* ------------------------------------------------------------ the checks */

#define BIG_BODY (700ull << 20)

/* Send a 700 MiB chunked body to method path; returns how much was sent
 * before the server answered or hung up, and the status it answered. */
static unsigned long long send_big(uint16_t port, bool tls, const char *method, const char *path,
                                   int *status)
{
    conn c;
    *status = 0;
    if (conn_open(&c, NULL, port, tls, NULL, 5000) != 0) {
        conn_close(&c);
        return 0;
    }
    char head[256];
    int n = snprintf(head, sizeof head,
                     "%s %s HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\n"
                     "Transfer-Encoding: chunked\r\n\r\n",
                     method, path);
    unsigned long long sent = 0;
    static char chunk[64 * 1024 + 16];
    int hl = snprintf(chunk, sizeof chunk, "%x\r\n", 64 * 1024);
    memset(chunk + hl, '{', 64 * 1024);
    memcpy(chunk + hl + 64 * 1024, "\r\n", 2);
    size_t cl = (size_t)hl + 64 * 1024 + 2;
    if (send_all(&c, head, (size_t)n)) {
        while (sent < BIG_BODY && send_all(&c, chunk, cl))
            sent += 64 * 1024;
        if (sent >= BIG_BODY)
            (void)send_all(&c, "0\r\n\r\n", 5);
        *status = read_status(&c);
    }
    conn_close(&c);
    return sent;
}

enum { WEBHOOK, METRICS, PROBES };
static const char *const port_name[] = {"webhook", "metrics", "probe"};

static void check_bodies(const uint16_t ports[3])
{
    static const struct {
        int port;
        const char *method, *path;
    } targets[] = {
        {WEBHOOK, "GET", "/healthz"},      {WEBHOOK, "GET", "/readyz"},
        {WEBHOOK, "POST", "/mutate-pods"}, {WEBHOOK, "POST", "/healthz"},
        {WEBHOOK, "GET", "/nowhere"},      {METRICS, "GET", "/metrics"},
        {METRICS, "POST", "/metrics"},     {METRICS, "PUT", "/mutate-pods"},
        {PROBES, "GET", "/healthz"},       {PROBES, "GET", "/readyz"},
        {PROBES, "POST", "/readyz"},
    };
    for (size_t i = 0; i < sizeof targets / sizeof targets[0]; i++) {
        int which = targets[i].port;
        uint16_t port = ports[which];
        bool tls = which != PROBES;
        reset_peak();
        long hwm0 = vm_kb("VmHWM");
        int64_t t0 = now_ms();
        int st;
        unsigned long long sent = send_big(port, tls, targets[i].method, targets[i].path, &st);
        int64_t dt = now_ms() - t0;
        long hwm1 = vm_kb("VmHWM");
        int after = get(NULL, ports[PROBES], false, "/healthz", 5000);
        check(hwm1 >= 0 && hwm1 - hwm0 <= 8 * 1024 && alive() && after == 200,
              "700 MiB chunked to %s %s on the %s port: peak RSS %ld -> %ld KiB (+%ld), %llu "
              "KiB taken before the server said %d or hung up (%lld ms); /healthz then %d",
              targets[i].method, targets[i].path, port_name[which], hwm0, hwm1, hwm1 - hwm0,
              sent / 1024, st, (long long)dt, after);
    }
}

#define N_ADDR 8
#define PER_ADDR 64
#define N_SLOW (N_ADDR * PER_ADDR)

/* Connection i of the flood: from 127.0.0.(2 + i / PER_ADDR); odd ones
 * trickle (over TLS on a TLS port, so the handshake is done and only the
 * headers are slow), even ones stay silent. */
static void flood_open(conn *c, int i, uint16_t port, bool tls, int timeout_ms)
{
    bool slow = i % 2 == 1;
    char src[16];
    snprintf(src, sizeof src, "127.0.0.%d", 2 + i / PER_ADDR);
    if (conn_open(c, src, port, tls && slow, NULL, timeout_ms) != 0)
        conn_close(c);
    else if (slow)
        (void)send_all(c, "GET /healthz HTTP/1.1\r\nX-Slow: ", 31);
}

/* Whether the server has closed c (or never let it in). */
static bool flood_gone(const conn *c)
{
    if (c->fd < 0)
        return true;
    struct pollfd p = {c->fd, POLLRDHUP, 0};
    return poll(&p, 1, 0) == 1 && (p.revents & (POLLRDHUP | POLLHUP | POLLERR));
}

/* 64 connections from each of 127.0.0.2 to 127.0.0.9, half silent, half
 * trickling a header byte every round: the per-address cap (32) lets 256
 * in, the listener's whole cap. Before each of five requests from
 * 127.0.0.10, 400 ms apart, the flood reopens the connections the server
 * closed until the listener is full again; each request must be answered
 * within 1 s. */
static void check_slow(uint16_t port, bool tls, const char *path, int want, const char *name)
{
    static conn cs[N_SLOW];
    int reopened = 0, least = N_SLOW, most = 0;
    for (int i = 0; i < N_SLOW; i++)
        flood_open(&cs[i], i, port, tls, 2000);
    int64_t worst = 0;
    int bad = 0;
    for (int round = 0; round < 5; round++) {
        for (int i = 1; i < N_SLOW; i += 2)
            if (cs[i].fd >= 0 && conn_send(&cs[i], "a", 1) != 1)
                conn_close(&cs[i]);
        /* Reopen what the server closed until as many are open as the
         * caps allow (32 per address: 256, the listener's cap; a
         * connection refused by a full thread of the pool may be let in
         * by another), for at most 2 s. */
        int open = 0;
        int64_t until = now_ms() + 2000;
        while (open < N_ADDR * 32 && now_ms() < until) {
            for (int i = 0; i < N_SLOW && now_ms() < until; i++) {
                if (flood_gone(&cs[i])) {
                    conn_close(&cs[i]);
                    flood_open(&cs[i], i, port, tls, 250);
                    reopened++;
                }
            }
            usleep(50000); /* refusals take a moment to show */
            open = 0;
            for (int i = 0; i < N_SLOW; i++)
                open += !flood_gone(&cs[i]);
        }
        least = open < least ? open : least;
        most = open > most ? open : most;
        int64_t t0 = now_ms();
        int st = get("127.0.0.10", port, tls, path, 2000);
        int64_t dt = now_ms() - t0;
        if (dt > worst)
            worst = dt;
        if (st != want || dt > 1000)
            bad++;
        usleep(400000);
    }
    for (int i = 0; i < N_SLOW; i++)
        conn_close(&cs[i]);
    check(bad == 0 && alive(),
          "%d idle or slow connections from %d addresses (127.0.0.2-%d) to the %s port, "
          "reopened when closed (%d times), %d-%d of them open before each request: %s from "
          "127.0.0.10 answered %d within 1 s %d times out of 5 (slowest %lld ms)",
          N_SLOW, N_ADDR, 1 + N_ADDR, name, reopened, least, most, path, want, 5 - bad,
          (long long)worst);
}

/* What a client offering only old or weak TLS gets: no handshake. */
static void check_tls(uint16_t port, const char *name)
{
    static const struct {
        const char *what, *prio;
        bool ok;
        int version; /* expected when ok; 0: any */
    } cases[] = {
        {"only TLS 1.0/1.1", "NORMAL:-VERS-ALL:+VERS-TLS1.1:+VERS-TLS1.0", false, 0},
        {"only TLS 1.0", "NORMAL:-VERS-ALL:+VERS-TLS1.0", false, 0},
        {"only AES128-SHA (RSA key exchange, CBC, SHA-1)",
         "NONE:+VERS-TLS1.2:+AES-128-CBC:+SHA1:+RSA:+COMP-NULL:+SIGN-ALL:+GROUP-ALL", false, 0},
        {"only ECDHE-RSA-AES128-SHA (forward-secret, not AEAD)",
         "NONE:+VERS-TLS1.2:+AES-128-CBC:+SHA1:+ECDHE-RSA:+COMP-NULL:+SIGN-ALL:+GROUP-ALL", false,
         0},
        {"only DHE-RSA-AES128-GCM-SHA256 (finite-field DH)",
         "NONE:+VERS-TLS1.2:+AES-128-GCM:+AEAD:+DHE-RSA:+COMP-NULL:+SIGN-ALL:+GROUP-ALL", false, 0},
        {"its defaults (TLS 1.3 expected)", NULL, true, GNUTLS_TLS1_3},
        {"only TLS 1.2 ECDHE-RSA-AES128-GCM-SHA256",
         "NONE:+VERS-TLS1.2:+AES-128-GCM:+AEAD:+ECDHE-RSA:+COMP-NULL:+SIGN-ALL:+GROUP-ALL", true,
         GNUTLS_TLS1_2},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        conn c;
        int rc = conn_open(&c, NULL, port, true, cases[i].prio, 3000);
        int v = rc == 0 ? (int)gnutls_protocol_get_version(c.s) : 0;
        char *desc = rc == 0 ? gnutls_session_get_desc(c.s) : NULL;
        bool ok = cases[i].ok ? rc == 0 && (cases[i].version == 0 || v == cases[i].version)
                              : rc != 0 && rc != 1;
        check(ok, "%s port, a client offering %s: %s (%s)", name, cases[i].what,
              rc == 0 ? "handshake done" : "refused",
              rc == 0   ? (desc ? desc : "?")
              : rc == 1 ? "no TCP connection"
                        : gnutls_strerror(rc));
        gnutls_free(desc);
        conn_close(&c);
    }
}

int main(int argc, char **argv)
{
    if (argc != 2) {
        fprintf(stderr, "usage: %s HEADROOM_BINARY\n", argv[0]);
        return 2;
    }
    (void)signal(SIGPIPE, SIG_IGN);
    char dir[] = "/tmp/hr-hardening.XXXXXX";
    if (mkdtemp(dir) == NULL || hr_testcert_write_pk(dir, 1, HR_TC_BOTH, GNUTLS_PK_RSA) != 0) {
        perror("certificate");
        return 2;
    }
    char kc[600], logp[600];
    snprintf(kc, sizeof kc, "%s/unreachable.kubeconfig", dir);
    snprintf(logp, sizeof logp, "%s/headroom.log", dir);
    write_file(kc, "apiVersion: v1\nkind: Config\ncurrent-context: x\n"
                   "clusters: [{name: x, cluster: {server: 'https://127.0.0.1:1', "
                   "insecure-skip-tls-verify: true}}]\n"
                   "users: [{name: x, user: {token: none}}]\n"
                   "contexts: [{name: x, context: {cluster: x, user: x}}]\n");
    gnutls_global_init();
    gnutls_certificate_allocate_credentials(&g_cred);

    uint16_t ports[3];
    char addr[3][64];
    for (int i = 0; i < 3; i++) {
        ports[i] = free_port();
        snprintf(addr[i], sizeof addr[i], "127.0.0.1:%u", ports[i]);
    }
    g_pid = fork();
    if (g_pid == 0) {
        int fd = open(logp, O_WRONLY | O_CREAT | O_TRUNC, 0600);
        if (fd < 0 || dup2(fd, 1) < 0 || dup2(fd, 2) < 0)
            _exit(126);
        /* Under AddressSanitizer, freed memory waits in a quarantine
         * (256 MiB by default) and counts in the RSS: measure the
         * program's memory, not the sanitizer's. No-op elsewhere. */
        const char *asan = getenv("ASAN_OPTIONS");
        char opts[512];
        snprintf(opts, sizeof opts, "%s%squarantine_size_mb=0", asan ? asan : "",
                 asan && asan[0] ? ":" : "");
        if (setenv("ASAN_OPTIONS", opts, 1) != 0)
            _exit(126);
        execl(argv[1], argv[1], "run", "--kubeconfig", kc, "--namespace", "hr-hardening",
              "--controller=false", "--webhook-addr", addr[WEBHOOK], "--metrics-addr",
              addr[METRICS], "--probe-addr", addr[PROBES], "--webhook-cert-dir", dir, (char *)NULL);
        _exit(127);
    }
    bool up = false;
    for (int i = 0; i < 200 && !up; i++) {
        up = get(NULL, ports[WEBHOOK], true, "/healthz", 1000) == 200 &&
             get(NULL, ports[METRICS], true, "/metrics", 1000) == 401 &&
             get(NULL, ports[PROBES], false, "/healthz", 1000) == 200;
        if (!up)
            usleep(50000);
    }
    check(up,
          "headroom run serves the webhook (TLS) on %u, /metrics (TLS, 401 without a token) on "
          "%u, the probes (plain) on %u",
          ports[WEBHOOK], ports[METRICS], ports[PROBES]);
    if (up) {
        printf("idle: VmRSS %ld KiB, VmHWM %ld KiB\n", vm_kb("VmRSS"), vm_kb("VmHWM"));
        if (!getenv("HR_SKIP_BODIES"))
            check_bodies(ports);
        printf("after: VmRSS %ld KiB, VmHWM %ld KiB\n", vm_kb("VmRSS"), vm_kb("VmHWM"));
        check_tls(ports[WEBHOOK], "webhook");
        check_tls(ports[METRICS], "metrics");
        check_slow(ports[WEBHOOK], true, "/healthz", 200, "webhook");
        check_slow(ports[METRICS], true, "/metrics", 401, "metrics");
        check_slow(ports[PROBES], false, "/healthz", 200, "probe");
    }
    (void)kill(g_pid, SIGTERM);
    int status = 0;
    if (waitpid(g_pid, &status, 0) != g_pid)
        status = -1;
    check(WIFEXITED(status) && WEXITSTATUS(status) == 0, "headroom run stopped cleanly (status %d)",
          status);
    if (failed) {
        char cmd[700];
        snprintf(cmd, sizeof cmd, "tail -n 20 %s", logp);
        if (system(cmd) != 0)
            fprintf(stderr, "(no log)\n");
    }
    char cmd[700];
    snprintf(cmd, sizeof cmd, "rm -rf %s", dir);
    if (system(cmd) != 0)
        fprintf(stderr, "could not remove %s\n", dir);
    gnutls_certificate_free_credentials(g_cred);
    printf("%d passed, %d failed\n", passed, failed);
    return failed ? 1 : 0;
}
