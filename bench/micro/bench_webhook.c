/*
 * bench_webhook.c — admission latency at a steady request rate over TLS on
 * loopback (design §16: webhook p99 ≤ 1 ms at 500 requests/s).
 *
 * The real server runs in this process (the same listener, certificate
 * loader and endpoint `headroom run` uses) on 127.0.0.1 with a fresh
 * self-signed certificate; one libcurl client reuses its connection, as
 * the API server does, and sends a realistic Job-pod AdmissionReview at a
 * fixed pace (500/s for 10 s by default). Latency is timed from each
 * request's scheduled send time, so a slow answer that delays the next
 * one is counted against the next one too (no coordinated omission).
 *
 * References, in the same process: /healthz at the same pace over the
 * same TLS connection (transport cost alone), and the review handler
 * called directly (no TLS, no HTTP). Printed as ratios.
 *
 * The machine may be shared: the load average is printed, and beside the
 * wall-clock latencies the CPU time the whole process (server and client)
 * spent per request, which load does not inflate much.
 *
 * Under attack, last: 300 slow connections from 127.0.0.1 held open for
 * the whole run (half silent, half trickling a TLS record header and body
 * a byte at a time; any the server closes or refuses is reopened, at most
 * once a second each), while the same paced AdmissionReviews come from
 * 127.0.0.2 on their own keep-alive connection. Its p99 is printed beside
 * the quiet one (a figure, not a verdict: the per-address limit and the
 * deadlines are what keep it close).
 *
 * Usage: bench_webhook [seconds] [requests-per-second]. Loopback only.
 */
#include <arpa/inet.h>
#include <curl/curl.h>
#include <errno.h>
#include <netinet/in.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include "core/config.h"
#include "server/certs.h"
#include "server/http.h"
#include "util/clock.h"
#include "webhook/admission.h"
#include "webhook/config_holder.h"
#include "webhook/endpoint.h"

#include "../tests/unit/hr_testcert.h"

static const char review[] =
    "{\"apiVersion\":\"admission.k8s.io/v1\",\"kind\":\"AdmissionReview\","
    "\"request\":{\"uid\":\"705ab4f5-6393-11e8-b7cc-42010a800002\","
    "\"kind\":{\"group\":\"\",\"version\":\"v1\",\"kind\":\"Pod\"},"
    "\"resource\":{\"group\":\"\",\"version\":\"v1\",\"resource\":\"pods\"},"
    "\"requestKind\":{\"group\":\"\",\"version\":\"v1\",\"kind\":\"Pod\"},"
    "\"requestResource\":{\"group\":\"\",\"version\":\"v1\",\"resource\":\"pods\"},"
    "\"namespace\":\"team-a\",\"operation\":\"CREATE\","
    "\"userInfo\":{\"username\":\"system:serviceaccount:kube-system:job-controller\","
    "\"uid\":\"1d3b5c2e\",\"groups\":[\"system:serviceaccounts\","
    "\"system:serviceaccounts:kube-system\",\"system:authenticated\"]},"
    "\"object\":{\"kind\":\"Pod\",\"apiVersion\":\"v1\",\"metadata\":{"
    "\"generateName\":\"nightly-report-28371-\",\"namespace\":\"team-a\","
    "\"labels\":{\"batch.kubernetes.io/controller-uid\":\"8f7d2c1a-5b3e-4d6f-9a8b-7c6d5e4f3a2b\","
    "\"batch.kubernetes.io/job-name\":\"nightly-report-28371\","
    "\"controller-uid\":\"8f7d2c1a-5b3e-4d6f-9a8b-7c6d5e4f3a2b\","
    "\"job-name\":\"nightly-report-28371\",\"app\":\"reports\"},"
    "\"annotations\":{\"batch.kubernetes.io/job-tracking\":\"\"},"
    "\"ownerReferences\":[{\"apiVersion\":\"batch/v1\",\"kind\":\"Job\","
    "\"name\":\"nightly-report-28371\",\"uid\":\"8f7d2c1a-5b3e-4d6f-9a8b-7c6d5e4f3a2b\","
    "\"controller\":true,\"blockOwnerDeletion\":true}]},"
    "\"spec\":{\"volumes\":[{\"name\":\"kube-api-access-x7k2p\",\"projected\":{"
    "\"sources\":[{\"serviceAccountToken\":{\"expirationSeconds\":3607,\"path\":\"token\"}},"
    "{\"configMap\":{\"name\":\"kube-root-ca.crt\",\"items\":[{\"key\":\"ca.crt\",\"path\":\"ca."
    "crt\"}]}},"
    "{\"downwardAPI\":{\"items\":[{\"path\":\"namespace\",\"fieldRef\":{\"apiVersion\":\"v1\","
    "\"fieldPath\":\"metadata.namespace\"}}]}}],\"defaultMode\":420}}],"
    "\"initContainers\":[{\"name\":\"fetch\",\"image\":\"registry.example/fetch:1.4\","
    "\"args\":[\"--from\",\"s3://reports/input\",\"--to\",\"/work\"],"
    "\"resources\":{\"requests\":{\"cpu\":\"100m\",\"memory\":\"64Mi\"}},"
    "\"terminationMessagePath\":\"/dev/termination-log\",\"terminationMessagePolicy\":\"File\","
    "\"imagePullPolicy\":\"IfNotPresent\"},"
    "{\"name\":\"log-shipper\",\"image\":\"registry.example/"
    "shipper:2.0\",\"restartPolicy\":\"Always\","
    "\"resources\":{\"requests\":{\"cpu\":\"50m\",\"memory\":\"32Mi\"},\"limits\":{\"memory\":"
    "\"64Mi\"}},"
    "\"terminationMessagePath\":\"/dev/termination-log\",\"terminationMessagePolicy\":\"File\","
    "\"imagePullPolicy\":\"IfNotPresent\"}],"
    "\"containers\":[{\"name\":\"report\",\"image\":\"registry.example/report:7.3.1\","
    "\"command\":[\"/bin/report\"],\"args\":[\"--period\",\"24h\",\"--out\",\"/work/out\"],"
    "\"env\":[{\"name\":\"GOMAXPROCS_AUTO\",\"value\":\"1\"},{\"name\":\"REGION\",\"value\":\"eu-"
    "west\"}],"
    "\"resources\":{\"requests\":{\"cpu\":\"1500m\",\"memory\":\"2Gi\"},\"limits\":{\"memory\":"
    "\"3Gi\"}},"
    "\"volumeMounts\":[{\"name\":\"kube-api-access-x7k2p\",\"readOnly\":true,"
    "\"mountPath\":\"/var/run/secrets/kubernetes.io/serviceaccount\"}],"
    "\"terminationMessagePath\":\"/dev/termination-log\",\"terminationMessagePolicy\":\"File\","
    "\"imagePullPolicy\":\"IfNotPresent\"}],"
    "\"restartPolicy\":\"Never\",\"terminationGracePeriodSeconds\":30,"
    "\"dnsPolicy\":\"ClusterFirst\",\"serviceAccountName\":\"default\","
    "\"serviceAccount\":\"default\",\"securityContext\":{},\"schedulerName\":\"default-scheduler\","
    "\"tolerations\":[{\"key\":\"node.kubernetes.io/not-ready\",\"operator\":\"Exists\","
    "\"effect\":\"NoExecute\",\"tolerationSeconds\":300}],\"priority\":0,"
    "\"enableServiceLinks\":true,\"preemptionPolicy\":\"PreemptLowerPriority\"},"
    "\"status\":{\"phase\":\"Pending\",\"qosClass\":\"Burstable\"}},"
    "\"oldObject\":null,\"dryRun\":false,\"options\":{\"kind\":\"CreateOptions\","
    "\"apiVersion\":\"meta.k8s.io/v1\"}}}";

static double now_s(void)
{
    return (double)hr_mono_ns() / 1e9;
}

static double cpu_s(clockid_t id)
{
    struct timespec ts;
    clock_gettime(id, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static void sleep_until(double t)
{
    hr_mono_sleep_until((int64_t)(t * 1e9));
}

static int cmp_d(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

typedef struct stats {
    double p50, p99, p999, max;
    size_t n;
} stats;

static stats summarize(double *v, size_t n)
{
    stats s = {0, 0, 0, 0, n};
    if (n == 0)
        return s;
    qsort(v, n, sizeof *v, cmp_d);
    s.p50 = v[n / 2];
    s.p99 = v[(size_t)((double)n * 0.99)];
    s.p999 = v[(size_t)((double)n * 0.999)];
    s.max = v[n - 1];
    return s;
}

static size_t sink(char *p, size_t sz, size_t n, void *ud)
{
    (void)p;
    size_t *total = ud;
    *total += sz * n;
    return sz * n;
}

/* Paced run against url: n requests at rate/s; latencies (s) into lat. */
static int paced(CURL *h, const char *url, bool post, size_t n, double rate, double *lat,
                 double *service, size_t *bad)
{
    size_t got = 0;
    curl_easy_setopt(h, CURLOPT_URL, url);
    if (post) {
        curl_easy_setopt(h, CURLOPT_POSTFIELDS, review);
        curl_easy_setopt(h, CURLOPT_POSTFIELDSIZE, (long)(sizeof review - 1));
    } else {
        curl_easy_setopt(h, CURLOPT_HTTPGET, 1L);
    }
    curl_easy_setopt(h, CURLOPT_WRITEFUNCTION, sink);
    curl_easy_setopt(h, CURLOPT_WRITEDATA, &got);
    double start = now_s() + 0.01;
    *bad = 0;
    for (size_t i = 0; i < n; i++) {
        double due = start + (double)i / rate;
        sleep_until(due);
        double t0 = now_s();
        CURLcode rc = curl_easy_perform(h);
        double t1 = now_s();
        long status = 0;
        curl_easy_getinfo(h, CURLINFO_RESPONSE_CODE, &status);
        if (rc != CURLE_OK || status != 200) {
            if (++*bad == 1)
                fprintf(stderr, "request failed: %s (HTTP %ld)\n", curl_easy_strerror(rc), status);
            if (*bad > 10)
                return -1;
        }
        lat[i] = t1 - due;
        service[i] = t1 - t0;
    }
    return 0;
}

/* ------------------------------------------------- the slow connections */

#define N_SLOW 300

typedef struct slow {
    uint16_t port;
    atomic_bool stop;
    int fd[N_SLOW];
    size_t sent[N_SLOW];
    double retry_at[N_SLOW];
    unsigned long reopened, open_sum, ticks;
} slow;

static int slow_connect(uint16_t port)
{
    int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
    if (fd < 0)
        return -1;
    struct sockaddr_in a = {.sin_family = AF_INET, .sin_port = htons(port)};
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    (void)connect(fd, (struct sockaddr *)&a, sizeof a); /* in progress */
    return fd;
}

/* A TLS handshake record header announcing 16 KiB, then its body, one
 * byte per tick: the record is never complete. */
static unsigned char slow_byte(size_t i)
{
    static const unsigned char head[] = {0x16, 0x03, 0x01, 0x40, 0x00, 0x01, 0x00, 0x3f, 0xfc};
    return i < sizeof head ? head[i] : 0x00;
}

static void *slow_main(void *arg)
{
    slow *w = arg;
    while (!atomic_load(&w->stop)) {
        double now = now_s();
        unsigned long open = 0;
        for (int i = 0; i < N_SLOW; i++) {
            if (w->fd[i] >= 0) {
                char b[64];
                ssize_t r = recv(w->fd[i], b, sizeof b, MSG_DONTWAIT);
                bool closed = r == 0 || (r < 0 && errno != EAGAIN && errno != EWOULDBLOCK &&
                                         errno != ENOTCONN);
                if (!closed && i % 2 == 1) {
                    unsigned char c = slow_byte(w->sent[i]);
                    ssize_t s = send(w->fd[i], &c, 1, MSG_NOSIGNAL | MSG_DONTWAIT);
                    if (s == 1)
                        w->sent[i]++;
                    else if (errno != EAGAIN && errno != EWOULDBLOCK && errno != ENOTCONN)
                        closed = true;
                }
                if (closed) {
                    close(w->fd[i]);
                    w->fd[i] = -1;
                    w->retry_at[i] = now + 1.0;
                } else {
                    open++;
                }
            } else if (now >= w->retry_at[i]) {
                w->fd[i] = slow_connect(w->port);
                w->sent[i] = 0;
                w->reopened++;
                w->retry_at[i] = now + 1.0;
            }
        }
        w->open_sum += open;
        w->ticks++;
        usleep(100000);
    }
    for (int i = 0; i < N_SLOW; i++)
        if (w->fd[i] >= 0)
            close(w->fd[i]);
    return NULL;
}

static void healthz(void *ud, const hr_http_req *req, hr_http_resp *r)
{
    (void)ud;
    (void)req;
    hr_buf_puts(&r->body, "ok\n");
}

static void print(const char *what, stats s)
{
    printf("  %-34s n=%zu  p50 %7.1f us  p99 %7.1f us  p99.9 %7.1f us  max %7.1f us\n", what, s.n,
           s.p50 * 1e6, s.p99 * 1e6, s.p999 * 1e6, s.max * 1e6);
}

int main(int argc, char **argv)
{
    double secs = argc > 1 ? atof(argv[1]) : 10.0;
    double rate = argc > 2 ? atof(argv[2]) : 500.0;
    if (secs <= 0 || secs > 600 || rate <= 0 || rate > 20000) {
        fprintf(stderr, "usage: bench_webhook [seconds (<=600)] [rps (<=20000)]\n");
        return 2;
    }
    size_t n = (size_t)(secs * rate);
    char dir[] = "/tmp/hr-bench-webhook.XXXXXX";
    if (mkdtemp(dir) == NULL || hr_testcert_write(dir, 1, HR_TC_BOTH) != 0) {
        fprintf(stderr, "cannot make a certificate in %s\n", dir);
        return 1;
    }
    hr_err err;
    hr_config cfg;
    hr_config_defaults(&cfg);
    cfg.present = true;
    cfg.dry_run = false;
    hr_cfg_holder *holder;
    hr_certs *certs;
    hr_listener *l;
    if (hr_cfg_holder_new(&cfg, &holder, &err) || hr_certs_new(dir, NULL, &certs, &err)) {
        fprintf(stderr, "setup: %s\n", err.msg);
        return 1;
    }
    hr_wh_endpoint wh;
    hr_wh_endpoint_init(&wh, holder, NULL, NULL);
    hr_route routes[] = {
        {"POST", HR_WEBHOOK_PATH, hr_wh_endpoint_handle, &wh, HR_WEBHOOK_MAX_BODY, false},
        {"GET", "/healthz", healthz, NULL, 0, false}, /* the transport alone */
    };
    hr_listener_opts lo = {.name = "webhook",
                           .addr = "127.0.0.1:0",
                           .tls = certs,
                           .routes = routes,
                           .n_routes = 2,
                           .threads = 4};
    if (hr_listener_start(&lo, &l, &err)) {
        fprintf(stderr, "listen: %s\n", err.msg);
        return 1;
    }
    char url_wh[128], url_hz[128], ca[600];
    snprintf(url_wh, sizeof url_wh, "https://127.0.0.1:%u%s", hr_listener_port(l), HR_WEBHOOK_PATH);
    snprintf(url_hz, sizeof url_hz, "https://127.0.0.1:%u/healthz", hr_listener_port(l));
    snprintf(ca, sizeof ca, "%s/tls.crt", dir);

    curl_global_init(CURL_GLOBAL_DEFAULT);
    CURL *h = curl_easy_init();
    struct curl_slist *hdr = curl_slist_append(NULL, "Content-Type: application/json");
    curl_easy_setopt(h, CURLOPT_CAINFO, ca);
    curl_easy_setopt(h, CURLOPT_HTTPHEADER, hdr);
    curl_easy_setopt(h, CURLOPT_TCP_NODELAY, 1L);
    curl_easy_setopt(h, CURLOPT_TIMEOUT_MS, 5000L);

    double *lat = calloc(n, sizeof *lat), *svc = calloc(n, sizeof *svc);
    double *lat2 = calloc(n, sizeof *lat2), *svc2 = calloc(n, sizeof *svc2);
    size_t m = n < 200000 ? n : 200000;
    double *hand = calloc(m, sizeof *hand);
    if (!lat || !svc || !lat2 || !svc2 || !hand)
        return 1;
    size_t bad = 0, bad2 = 0;
    /* Warm-up: connection, TLS session, caches; not measured. */
    double *wl = calloc(200, sizeof *wl), *ws = calloc(200, sizeof *ws);
    if (!wl || !ws || paced(h, url_wh, true, 200, 2000, wl, ws, &bad) != 0) {
        fprintf(stderr, "warm-up failed\n");
        return 1;
    }
    free(wl);
    free(ws);

    printf("bench_webhook: %zu AdmissionReviews (%zu-byte Job pod with a sidecar) at "
           "%.0f/s over TLS on 127.0.0.1, one keep-alive connection (libcurl), "
           "server in-process (4 threads)\n",
           n, sizeof review - 1, rate);
    fflush(stdout);
    double c0 = cpu_s(CLOCK_PROCESS_CPUTIME_ID);
    int rc1 = paced(h, url_wh, true, n, rate, lat, svc, &bad);
    double c1 = cpu_s(CLOCK_PROCESS_CPUTIME_ID);
    int rc2 = paced(h, url_hz, false, n, rate, lat2, svc2, &bad2);
    double c2 = cpu_s(CLOCK_PROCESS_CPUTIME_ID);

    /* The handler alone: no TLS, no HTTP. */
    hr_wh_env env = {.cfg = &cfg};
    double c3 = cpu_s(CLOCK_THREAD_CPUTIME_ID);
    for (size_t i = 0; i < m; i++) {
        hr_wh_result r;
        double t0 = now_s();
        hr_status st = hr_admission_review(&env, review, sizeof review - 1, &r, &err);
        hand[i] = now_s() - t0;
        if (st || r.outcome != HR_WH_MUTATED) {
            fprintf(stderr, "handler: unexpected outcome %s\n", hr_wh_outcome_str(r.outcome));
            return 1;
        }
        hr_wh_result_free(&r);
    }

    double c4 = cpu_s(CLOCK_THREAD_CPUTIME_ID);

    /* Under attack: 300 slow connections from 127.0.0.1, the reviews from
     * 127.0.0.2 on a connection of their own. */
    static slow w;
    w.port = hr_listener_port(l);
    for (int i = 0; i < N_SLOW; i++)
        w.fd[i] = slow_connect(w.port);
    pthread_t wt;
    bool attacking = pthread_create(&wt, NULL, slow_main, &w) == 0;
    int rc3 = attacking ? 0 : -1;
    double *lat3 = calloc(n, sizeof *lat3), *svc3 = calloc(n, sizeof *svc3);
    size_t bad3 = 0;
    CURL *h2 = curl_easy_init();
    if (rc3 == 0 && lat3 && svc3 && h2) {
        curl_easy_setopt(h2, CURLOPT_CAINFO, ca);
        curl_easy_setopt(h2, CURLOPT_HTTPHEADER, hdr);
        curl_easy_setopt(h2, CURLOPT_TCP_NODELAY, 1L);
        curl_easy_setopt(h2, CURLOPT_TIMEOUT_MS, 5000L);
        curl_easy_setopt(h2, CURLOPT_INTERFACE, "127.0.0.2");
        usleep(500000); /* let the attack settle in */
        rc3 = paced(h2, url_wh, true, n, rate, lat3, svc3, &bad3);
    } else {
        rc3 = -1;
    }
    double held = w.ticks ? (double)w.open_sum / (double)w.ticks : 0;
    unsigned long reopened = w.reopened;
    atomic_store(&w.stop, true);
    if (attacking)
        pthread_join(wt, NULL);
    if (h2)
        curl_easy_cleanup(h2);
    char load[64] = "?";
    FILE *la = fopen("/proc/loadavg", "r");
    if (la) {
        if (fgets(load, sizeof load, la) == NULL)
            snprintf(load, sizeof load, "?");
        load[strcspn(load, "\n")] = '\0';
        fclose(la);
    }
    printf("  machine: %ld CPUs online, load average %s\n", sysconf(_SC_NPROCESSORS_ONLN), load);
    stats s1 = summarize(lat, n), s1s = summarize(svc, n);
    stats s2 = summarize(lat2, n), s3 = summarize(hand, m);
    print("webhook /mutate-pods (TLS)", s1);
    print("  service time only", s1s);
    print("reference: /healthz (same TLS)", s2);
    print("reference: handler alone", s3);
    stats s4 = summarize(lat3, lat3 ? n : 0);
    print("under attack, from 127.0.0.2", s4);
    printf("  attack: %d slow connections from 127.0.0.1 (half silent, half trickling); "
           "%.0f open on average, %lu reopened after the server closed or refused them\n",
           N_SLOW, held, reopened);
    printf("  failed requests: webhook %zu, healthz %zu, under attack %zu\n", bad, bad2, bad3);
    printf("  CPU per request (server + client, whole process): webhook %.1f us, "
           "healthz %.1f us; handler alone %.1f us\n",
           (c1 - c0) / (double)n * 1e6, (c2 - c1) / (double)n * 1e6, (c4 - c3) / (double)m * 1e6);
    printf("  budget p99 <= 1000 us: %s (p99 %.1f us)\n",
           rc1 == 0 && s1.p99 <= 1e-3 ? "MET" : "MISSED", s1.p99 * 1e6);
    printf("  under attack p99 %.1f us (%.2f x the quiet p99)%s\n", s4.p99 * 1e6,
           s1.p99 > 0 ? s4.p99 / s1.p99 : 0, rc3 == 0 ? "" : " (run incomplete)");
    printf("  ratio p99 webhook / healthz: %.2f; p50 webhook / healthz: %.2f; "
           "p50 handler share of webhook: %.0f%%\n",
           s2.p99 > 0 ? s1.p99 / s2.p99 : 0, s2.p50 > 0 ? s1.p50 / s2.p50 : 0,
           s1.p50 > 0 ? 100 * s3.p50 / s1.p50 : 0);

    curl_slist_free_all(hdr);
    curl_easy_cleanup(h);
    curl_global_cleanup();
    hr_listener_stop(l);
    hr_certs_free(certs);
    hr_cfg_holder_free(holder);
    char p[600];
    snprintf(p, sizeof p, "%s/tls.crt", dir);
    unlink(p);
    snprintf(p, sizeof p, "%s/tls.key", dir);
    unlink(p);
    rmdir(dir);
    free(lat);
    free(svc);
    free(lat2);
    free(svc2);
    free(hand);
    free(lat3);
    free(svc3);
    return rc1 == 0 && rc2 == 0 && rc3 == 0 ? 0 : 1;
}
