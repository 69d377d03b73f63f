/*
 * bench_writecost.c — what one write costs the client itself: our CPU per
 * merge patch through the product's client (kube/transport/client.h:
 * libcurl, HTTP/2 streams of one connection, GnuTLS), against a real API
 * server, with nothing else in the process (no watches, no cache, no
 * planning). The converging daemon's CPU per write (bench/cluster/
 * sidebyside.sh) is this plus what each write brings back through the
 * watches; this says which part the transport is, and so what a client of
 * our own could at most win.
 *
 * Each write is a real change: the annotation bench.kube-headroom.dev/n of
 * a pod set to the write's number, round robin over the pods named on
 * stdin ("NAMESPACE NAME" a line), from THREADS threads at once, the
 * limiter out of the way. Rounds, each reported: JSON answers (the whole
 * Pod in JSON) and protobuf answers (what the controller asks for).
 *
 * Reference, in the same run: the same writes by the barest client this
 * machine's libraries make — GnuTLS directly, HTTP/1.1 with keep-alive,
 * one blocking connection per thread, the request written by one
 * snprintf and the answer read to its end (Content-Length or chunked)
 * without a parser. No HTTP/2, no event loop, no library between: what
 * a write costs a client at the least, TLS and the system calls. Its
 * credentials are the kubeconfig's client certificate (the test
 * cluster's admin) or token.
 *
 * The figures: process CPU-s (user + system, getrusage) per write, wall
 * time, writes a second, and the context switches.
 *
 *   bench_writecost [--writes 2000] [--threads 16] [--qps Q] < pods
 *
 * --qps paces both clients at Q writes a second in all, as the daemon's
 * clientQPS does (ours through its own limiter, the reference by a
 * shared schedule): what a write costs when the writes come one by one.
 *
 * KUBECONFIG names the cluster (bench/cluster/writecost.sh makes the pods
 * and runs it). Exit 1 when a write fails.
 */
#include <gnutls/gnutls.h>
#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <unistd.h>

#include "kube/config/kubeconfig.h"
#include "kube/transport/client.h"
#include "kube/write/patch.h"
#include "util/buf.h"
#include "util/clock.h"

#define MAX_PODS 4096

typedef struct bare bare;

typedef struct run {
    hr_kclient *k; /* NULL: the bare reference */
    bare *b;
    const char *accept;
    char (*paths)[320];
    int n_pods;
    int writes;
    double qps; /* the reference's pace; 0: none (ours: its limiter's) */
    int64_t t0_ns;
    atomic_int next;
    atomic_int failed;
} run;

/* ------------------------------------------------ the bare reference */

struct bare {
    char host[280], port[280], hostport[280];
    const char *auth; /* "Authorization: Bearer ...\r\n" or "" */
    gnutls_certificate_credentials_t cred;
};

typedef struct conn {
    int fd;
    gnutls_session_t s;
    char buf[65536];
    size_t have; /* bytes in buf not yet consumed, from buf[0] */
} conn;

static int bare_init(bare *b, const hr_kubeconfig *cfg)
{
    const char *hp = strstr(cfg->server, "://");
    if (hp == NULL || strncmp(cfg->server, "https", 5) != 0) {
        fprintf(stderr, "bench_writecost: the reference speaks https only (%s)\n", cfg->server);
        return -1;
    }
    hp += 3;
    size_t hl = strcspn(hp, "/");
    snprintf(b->hostport, sizeof b->hostport, "%.*s", (int)hl, hp);
    const char *colon = strrchr(b->hostport, ':');
    if (colon == NULL) {
        snprintf(b->host, sizeof b->host, "%s", b->hostport);
        snprintf(b->port, sizeof b->port, "443");
    } else {
        snprintf(b->host, sizeof b->host, "%.*s", (int)(colon - b->hostport), b->hostport);
        snprintf(b->port, sizeof b->port, "%s", colon + 1);
    }
    static char auth[4096];
    b->auth = "";
    if (cfg->token != NULL) {
        snprintf(auth, sizeof auth, "Authorization: Bearer %s\r\n", cfg->token);
        b->auth = auth;
    }
    if (gnutls_certificate_allocate_credentials(&b->cred) < 0)
        return -1;
    if (cfg->ca != NULL) {
        gnutls_datum_t ca = {(unsigned char *)cfg->ca, (unsigned)cfg->ca_len};
        if (gnutls_certificate_set_x509_trust_mem(b->cred, &ca, GNUTLS_X509_FMT_PEM) < 0)
            return -1;
    } else if (gnutls_certificate_set_x509_system_trust(b->cred) < 0) {
        return -1;
    }
    if (cfg->cert != NULL && cfg->key != NULL) {
        gnutls_datum_t c = {(unsigned char *)cfg->cert, (unsigned)cfg->cert_len};
        gnutls_datum_t k = {(unsigned char *)cfg->key, (unsigned)cfg->key_len};
        if (gnutls_certificate_set_x509_key_mem(b->cred, &c, &k, GNUTLS_X509_FMT_PEM) < 0)
            return -1;
    }
    return 0;
}

static int conn_open(const bare *b, conn *c)
{
    struct addrinfo hints = {.ai_family = AF_UNSPEC, .ai_socktype = SOCK_STREAM}, *ai;
    if (getaddrinfo(b->host, b->port, &hints, &ai) != 0)
        return -1;
    c->fd = socket(ai->ai_family, ai->ai_socktype, ai->ai_protocol);
    int ok = c->fd >= 0 && connect(c->fd, ai->ai_addr, ai->ai_addrlen) == 0;
    freeaddrinfo(ai);
    if (!ok)
        return -1;
    int one = 1;
    (void)setsockopt(c->fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
    gnutls_datum_t alpn = {(unsigned char *)"http/1.1", 8};
    /* As libcurl: the certificate goes whatever CA names the server lists. */
    if (gnutls_init(&c->s, GNUTLS_CLIENT | GNUTLS_FORCE_CLIENT_CERT) < 0)
        return -1;
    if (gnutls_set_default_priority(c->s) < 0 ||
        gnutls_credentials_set(c->s, GNUTLS_CRD_CERTIFICATE, b->cred) < 0 ||
        gnutls_alpn_set_protocols(c->s, &alpn, 1, 0) < 0)
        return -1;
    gnutls_session_set_verify_cert(c->s, b->host, 0);
    gnutls_transport_set_int(c->s, c->fd);
    int rc;
    do
        rc = gnutls_handshake(c->s);
    while (rc < 0 && !gnutls_error_is_fatal(rc));
    if (rc < 0) {
        fprintf(stderr, "bench_writecost: TLS: %s\n", gnutls_strerror(rc));
        return -1;
    }
    return 0;
}

static void conn_close(conn *c)
{
    if (c->s != NULL) {
        (void)gnutls_bye(c->s, GNUTLS_SHUT_WR); /* best effort */
        gnutls_deinit(c->s);
    }
    if (c->fd >= 0)
        close(c->fd);
}

/* More bytes into c->buf; -1 at the end of the connection or an error. */
static int conn_fill(conn *c)
{
    if (c->have == sizeof c->buf)
        return -1; /* a line longer than the buffer: not an answer of the API server's */
    ssize_t n;
    do
        n = gnutls_record_recv(c->s, c->buf + c->have, sizeof c->buf - c->have);
    while (n == GNUTLS_E_AGAIN || n == GNUTLS_E_INTERRUPTED);
    if (n <= 0)
        return -1;
    c->have += (size_t)n;
    return 0;
}

static void conn_consume(conn *c, size_t n)
{
    memmove(c->buf, c->buf + n, c->have - n);
    c->have -= n;
}

/* The length of the line at the start of c->buf with its CRLF, reading
 * more as needed; 0 on failure. */
static size_t conn_line(conn *c)
{
    for (;;) {
        char *nl = memmem(c->buf, c->have, "\r\n", 2);
        if (nl != NULL)
            return (size_t)(nl - c->buf) + 2;
        if (conn_fill(c) != 0)
            return 0;
    }
}

/* Skip n body bytes. */
static int conn_skip(conn *c, size_t n)
{
    while (n > 0) {
        if (c->have == 0 && conn_fill(c) != 0)
            return -1;
        size_t k = n < c->have ? n : c->have;
        conn_consume(c, k);
        n -= k;
    }
    return 0;
}

/* One PATCH and its whole answer; the HTTP status, or -1. */
static int bare_patch(const bare *b, conn *c, const char *path, const char *accept,
                      const char *body, int len)
{
    char req[2048];
    int n = snprintf(req, sizeof req,
                     "PATCH %s HTTP/1.1\r\nHost: %s\r\nUser-Agent: bench-writecost\r\n%s"
                     "Accept: %s\r\nContent-Type: application/merge-patch+json\r\n"
                     "Content-Length: %d\r\n\r\n%s",
                     path, b->hostport, b->auth, accept ? accept : "application/json", len, body);
    if (n < 0 || (size_t)n >= sizeof req)
        return -1;
    for (int off = 0; off < n;) {
        ssize_t w = gnutls_record_send(c->s, req + off, (size_t)(n - off));
        if (w == GNUTLS_E_AGAIN || w == GNUTLS_E_INTERRUPTED)
            continue;
        if (w < 0)
            return -1;
        off += (int)w;
    }
    size_t l = conn_line(c);
    if (l < 12 || strncmp(c->buf, "HTTP/1.1 ", 9) != 0)
        return -1;
    int status = atoi(c->buf + 9);
    conn_consume(c, l);
    long clen = -1;
    bool chunked = false;
    while ((l = conn_line(c)) > 2) {
        if (strncasecmp(c->buf, "Content-Length:", 15) == 0)
            clen = strtol(c->buf + 15, NULL, 10);
        else if (strncasecmp(c->buf, "Transfer-Encoding:", 18) == 0 &&
                 memmem(c->buf, l, "chunked", 7) != NULL)
            chunked = true;
        conn_consume(c, l);
    }
    if (l != 2)
        return -1;
    conn_consume(c, 2);
    if (!chunked)
        return clen >= 0 && conn_skip(c, (size_t)clen) == 0 ? status : -1;
    for (;;) {
        if ((l = conn_line(c)) == 0)
            return -1;
        long size = strtol(c->buf, NULL, 16);
        conn_consume(c, l);
        if (size < 0 || conn_skip(c, (size_t)size) != 0 || (l = conn_line(c)) != 2)
            return -1;
        conn_consume(c, 2);
        if (size == 0)
            return status;
    }
}

/* --------------------------------------------------------- the writes */

static int next_body(char *body, size_t cap, int i)
{
    return snprintf(body, cap,
                    "{\"metadata\":{\"annotations\":{\"bench.kube-headroom.dev/n\":\"%d\"}}}", i);
}

static void *bare_writer(void *ud)
{
    run *r = ud;
    conn *c = calloc(1, sizeof *c);
    if (c == NULL) {
        atomic_fetch_add(&r->failed, 1);
        return NULL;
    }
    c->fd = -1;
    if (conn_open(r->b, c) != 0) {
        atomic_fetch_add(&r->failed, 1);
        conn_close(c);
        free(c);
        return NULL;
    }
    for (;;) {
        int i = atomic_fetch_add(&r->next, 1);
        if (i >= r->writes)
            break;
        if (r->qps > 0) /* write i goes at its slot of the schedule, as a limiter would send it */
            hr_mono_sleep_until(r->t0_ns + (int64_t)(i * 1e9 / r->qps));
        char body[128];
        int len = next_body(body, sizeof body, i);
        int st = bare_patch(r->b, c, r->paths[i % r->n_pods], r->accept, body, len);
        if (st != 200 && atomic_fetch_add(&r->failed, 1) == 0)
            fprintf(stderr, "bench_writecost: bare: %s: status %d\n", r->paths[i % r->n_pods], st);
        if (st < 0)
            break;
    }
    conn_close(c);
    free(c);
    return NULL;
}

static void *writer(void *ud)
{
    run *r = ud;
    hr_buf resp;
    hr_buf_init(&resp, 0);
    for (;;) {
        int i = atomic_fetch_add(&r->next, 1);
        if (i >= r->writes)
            break;
        char body[128];
        int len = next_body(body, sizeof body, i);
        hr_buf_reset(&resp);
        hr_kresult res;
        hr_err err;
        hr_err_clear(&err);
        if (hr_kclient_merge_patch_as(r->k, r->paths[i % r->n_pods], r->accept, body, (size_t)len,
                                      &resp, &res, &err) != HR_OK) {
            if (atomic_fetch_add(&r->failed, 1) == 0)
                fprintf(stderr, "bench_writecost: %s: %s\n", r->paths[i % r->n_pods], err.msg);
        }
    }
    hr_buf_free(&resp);
    return NULL;
}

static double cpu_s(long *switches)
{
    struct rusage ru;
    if (getrusage(RUSAGE_SELF, &ru) != 0)
        return 0;
    *switches = ru.ru_nvcsw + ru.ru_nivcsw;
    return (double)ru.ru_utime.tv_sec + (double)ru.ru_utime.tv_usec / 1e6 +
           (double)ru.ru_stime.tv_sec + (double)ru.ru_stime.tv_usec / 1e6;
}

static int round_of(run *r, int threads, const char *label)
{
    pthread_t th[64];
    atomic_store(&r->next, 0);
    r->t0_ns = hr_mono_ns();
    long sw0, sw1;
    double c0 = cpu_s(&sw0);
    int64_t t0 = hr_mono_ns();
    int n = 0;
    for (; n < threads; n++)
        if (pthread_create(&th[n], NULL, r->k != NULL ? writer : bare_writer, r) != 0)
            break;
    for (int i = 0; i < n; i++)
        pthread_join(th[i], NULL);
    double wall = (double)(hr_mono_ns() - t0) / 1e9;
    double cpu = cpu_s(&sw1) - c0;
    if (n < threads) {
        fprintf(stderr, "bench_writecost: %d of %d threads started\n", n, threads);
        return 1;
    }
    printf("%-22s %6d writes  %2d threads  %7.3f CPU-s  %6.3f ms CPU a write  %6.2f s  %7.0f "
           "writes/s  %5.1f switches a write\n",
           label, r->writes, threads, cpu, cpu * 1000 / r->writes, wall, r->writes / wall,
           (double)(sw1 - sw0) / r->writes);
    return atomic_load(&r->failed) != 0;
}

int main(int argc, char **argv)
{
    int writes = 2000, threads = 16;
    double qps = 0;
    for (int i = 1; i < argc; i++) {
        if (i + 1 < argc && strcmp(argv[i], "--writes") == 0)
            writes = atoi(argv[++i]);
        else if (i + 1 < argc && strcmp(argv[i], "--threads") == 0)
            threads = atoi(argv[++i]);
        else if (i + 1 < argc && strcmp(argv[i], "--qps") == 0)
            qps = atof(argv[++i]);
        else {
            fprintf(stderr, "usage: bench_writecost [--writes N] [--threads N] [--qps Q] < pods\n");
            return 2;
        }
    }
    if (writes < 1 || threads < 1 || threads > 64) {
        fprintf(stderr, "bench_writecost: --writes >= 1, --threads 1..64\n");
        return 2;
    }
    static char paths[MAX_PODS][320];
    int n_pods = 0;
    char ns[128], name[128];
    while (n_pods < MAX_PODS && scanf("%127s %127s", ns, name) == 2)
        snprintf(paths[n_pods++], sizeof paths[0], "/api/v1/namespaces/%s/pods/%s", ns, name);
    if (n_pods == 0) {
        fprintf(stderr, "bench_writecost: no pods on stdin (\"NAMESPACE NAME\" a line)\n");
        return 2;
    }
    hr_kclient_opts o = {.qps = qps > 0 ? qps : 100000, .burst = qps > 0 ? 1 : 100000};
    hr_kclient *k;
    hr_err err;
    hr_err_clear(&err);
    hr_kubeconfig_opts ko = {0};
    hr_kubeconfig *cfg;
    if (hr_kclient_new(&o, &k, &err) != HR_OK || hr_kubeconfig_load(&ko, &cfg, &err) != HR_OK) {
        fprintf(stderr, "bench_writecost: %s\n", err.msg);
        return 1;
    }
    bare b;
    if (bare_init(&b, cfg) != 0) {
        fprintf(stderr, "bench_writecost: the reference's TLS credentials\n");
        return 1;
    }
    printf("bench_writecost: %s, %d pods; ours: kube/transport/client.h (libcurl, HTTP/2); "
           "bare: GnuTLS, HTTP/1.1, a connection a thread\n",
           hr_kclient_server(k), n_pods);
    run ours = {.k = k, .paths = paths, .n_pods = n_pods};
    run ref = {.b = &b, .paths = paths, .n_pods = n_pods, .qps = qps};
    int bad = 0;
    /* A warm-up round: our connection, TLS session and handle pool made.
     * The reference makes its connections in each of its rounds (a
     * handshake a thread, charged to it). */
    ours.writes = threads * 4;
    bad |= round_of(&ours, threads, "ours, warm-up");
    static const char *const accepts[2] = {NULL, HR_KACCEPT_PROTOBUF};
    static const char *const names[2][2] = {{"ours, JSON answers", "bare, JSON answers"},
                                            {"ours, protobuf", "bare, protobuf"}};
    for (int a = 0; a < 2; a++) {
        ours.accept = ref.accept = accepts[a];
        ours.writes = ref.writes = writes;
        bad |= round_of(&ours, threads, names[a][0]);
        bad |= round_of(&ref, threads, names[a][1]);
    }
    hr_kclient_free(k);
    gnutls_certificate_free_credentials(b.cred);
    hr_kubeconfig_free(cfg);
    return bad;
}
