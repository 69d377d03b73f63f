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
 * limiter out of the way. Two rounds, each reported: JSON answers (the
 * whole Pod in JSON) and protobuf answers (what the controller asks for).
 * The figures: process CPU-s (user + system, getrusage) per write, wall
 * time, writes a second, and the context switches.
 *
 *   bench_writecost [--writes 2000] [--threads 16] < pods
 *
 * KUBECONFIG names the cluster (bench/cluster/writecost.sh makes the pods
 * and runs it). Exit 1 when a write fails.
 */
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>

#include "kube/transport/client.h"
#include "kube/write/patch.h"
#include "util/buf.h"
#include "util/clock.h"

#define MAX_PODS 4096

typedef struct run {
    hr_kclient *k;
    const char *accept;
    char (*paths)[320];
    int n_pods;
    int writes;
    atomic_int next;
    atomic_int failed;
} run;

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
        int len =
            snprintf(body, sizeof body,
                     "{\"metadata\":{\"annotations\":{\"bench.kube-headroom.dev/n\":\"%d\"}}}", i);
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
    long sw0, sw1;
    double c0 = cpu_s(&sw0);
    int64_t t0 = hr_mono_ns();
    int n = 0;
    for (; n < threads; n++)
        if (pthread_create(&th[n], NULL, writer, r) != 0)
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
    for (int i = 1; i < argc; i++) {
        if (i + 1 < argc && strcmp(argv[i], "--writes") == 0)
            writes = atoi(argv[++i]);
        else if (i + 1 < argc && strcmp(argv[i], "--threads") == 0)
            threads = atoi(argv[++i]);
        else {
            fprintf(stderr, "usage: bench_writecost [--writes N] [--threads N] < pods\n");
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
    hr_kclient_opts o = {.qps = 100000, .burst = 100000};
    hr_kclient *k;
    hr_err err;
    hr_err_clear(&err);
    if (hr_kclient_new(&o, &k, &err) != HR_OK) {
        fprintf(stderr, "bench_writecost: %s\n", err.msg);
        return 1;
    }
    printf("bench_writecost: %s, %d pods\n", hr_kclient_server(k), n_pods);
    run r = {.k = k, .paths = paths, .n_pods = n_pods, .writes = writes};
    int bad = 0;
    /* A warm-up round: the connection, TLS session and handle pool made. */
    r.writes = threads * 4;
    r.accept = NULL;
    bad |= round_of(&r, threads, "warm-up");
    r.writes = writes;
    r.accept = NULL;
    bad |= round_of(&r, threads, "JSON answers");
    r.accept = HR_KACCEPT_PROTOBUF;
    bad |= round_of(&r, threads, "protobuf answers");
    hr_kclient_free(k);
    return bad;
}
