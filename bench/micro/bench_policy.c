/*
 * bench_policy.c — time and heap allocations of one node computation
 * (design §16: policy + gates for a 110-pod node ≤ 20 µs, 0 allocations).
 *
 * The node is a realistic full kubelet: 110 pods on 64 cores (about 70% booked), most with one
 * app container, many with a service-mesh sidecar, some with init
 * containers, plus the pods the policy does not manage but that still book
 * CPU (DaemonSets in kube-system, Guaranteed databases, an opted-out pod,
 * BestEffort jobs). hr_plan_node runs on it many times; the figure is the
 * median of several batches, so a noisy neighbour on the machine moves one
 * batch, not the result.
 *
 * Allocations are counted by interposing malloc/calloc/realloc/free here
 * (forwarding to glibc's __libc_* entry points): a count > 0 on the
 * planning path would mean the controller's hot loop depends on the
 * allocator. Under AddressSanitizer the interposition is left out (ASan
 * owns malloc) and the count is reported as unavailable.
 *
 * Reference, same process, same node: a naive planner doing the same
 * arithmetic in double precision on a malloc'ed copy of the pods sorted with
 * qsort — the obvious first implementation. The ratio says what the integer,
 * allocation-free core buys. This program prints; it never asserts.
 *
 *   bench_policy [batches] [iterations-per-batch]   defaults 21 5000
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "core/config.h"
#include "core/eligibility.h"
#include "core/gates.h"
#include "core/pod.h"
#include "core/policy.h"
#include "util/clock.h"
#include "util/prng.h"

/* ---- allocation counting ------------------------------------------------ */

#if defined(__SANITIZE_ADDRESS__)
#define HR_COUNT_ALLOCS 0
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define HR_COUNT_ALLOCS 0
#endif
#endif
#ifndef HR_COUNT_ALLOCS
#define HR_COUNT_ALLOCS 1
#endif

static unsigned long n_allocs; /* malloc + calloc + realloc calls */

#if HR_COUNT_ALLOCS
extern void *__libc_malloc(size_t size);
extern void *__libc_calloc(size_t n, size_t size);
extern void *__libc_realloc(void *p, size_t size);
extern void __libc_free(void *p);

void *malloc(size_t size)
{
    n_allocs++;
    return __libc_malloc(size);
}

void *calloc(size_t n, size_t size)
{
    n_allocs++;
    return __libc_calloc(n, size);
}

void *realloc(void *p, size_t size)
{
    n_allocs++;
    return __libc_realloc(p, size);
}

void free(void *p)
{
    __libc_free(p);
}
#endif

/* ---- the node --------------------------------------------------------------- */

#define NPODS 110
#define MAXC 4
#define GiB INT64_C(1073741824)

static hr_pod pods[NPODS];
static hr_container ctrs[NPODS][MAXC];
static hr_pod_plan out[NPODS];
static int64_t limits[NPODS * MAXC];
static hr_prng rng = {UINT64_C(0x2545F4914F6CDD1D)}; /* fixed: every run plans the same node */

static uint64_t draw(void)
{
    return hr_prng_next(&rng);
}

static int64_t pick(const int64_t *v, int n)
{
    return v[draw() % (uint64_t)n];
}

static hr_container ctr(uint8_t kind, int64_t creq, int64_t clim, int64_t mreq, int64_t mlim)
{
    return (hr_container){creq, clim, mreq, mlim, kind, false};
}

static void build_node(void)
{
    static const int64_t app_req[] = {50, 100, 100, 100, 200, 250, 250, 500, 500, 1000, 2000};
    for (int i = 0; i < NPODS; i++) {
        hr_container *c = ctrs[i];
        hr_pod p = hr_pod_init();
        uint32_t n = 0;
        p.status_resources = true;
        int kind = (int)(draw() % 100);
        if (i < 6) {
            /* DaemonSets in kube-system: CNI, kube-proxy, log shipper... */
            c[n++] = ctr(HR_CTR_APP, 100, 200, GiB / 8, GiB / 4);
            p.ns_state = HR_NS_EXCLUDED;
        } else if (i < 10) {
            /* Guaranteed databases. */
            c[n++] = ctr(HR_CTR_APP, 2000, 2000, 4 * GiB, 4 * GiB);
        } else if (i == 10) {
            c[n++] = ctr(HR_CTR_APP, 500, HR_NONE, GiB, GiB);
            p.opted_out = true;
        } else if (i < 14) {
            /* BestEffort batch pods: book nothing, get nothing. */
            c[n++] = ctr(HR_CTR_APP, HR_NONE, HR_NONE, HR_NONE, HR_NONE);
        } else if (kind < 55) {
            c[n++] = ctr(HR_CTR_APP, pick(app_req, 11), HR_NONE, GiB / 2, GiB);
        } else if (kind < 85) {
            /* Service-mesh sidecar (a native sidecar: init, restartPolicy Always). */
            c[n++] = ctr(HR_CTR_SIDECAR, 100, HR_NONE, GiB / 8, GiB / 8);
            c[n++] = ctr(HR_CTR_APP, pick(app_req, 11), HR_NONE, GiB, 2 * GiB);
        } else if (kind < 95) {
            c[n++] = ctr(HR_CTR_INIT, 500, 500, GiB / 4, GiB / 4);
            c[n++] = ctr(HR_CTR_APP, pick(app_req, 11), HR_NONE, GiB, GiB);
        } else {
            c[n++] = ctr(HR_CTR_INIT, 200, HR_NONE, HR_NONE, HR_NONE);
            c[n++] = ctr(HR_CTR_SIDECAR, 100, HR_NONE, GiB / 8, GiB / 8);
            c[n++] = ctr(HR_CTR_APP, pick(app_req, 11), HR_NONE, GiB, 2 * GiB);
            c[n++] = ctr(HR_CTR_APP, 50, HR_NONE, HR_NONE, HR_NONE);
        }
        /* Half the managed pods already carry a limit from an earlier round. */
        for (uint32_t k = 0; k < n; k++)
            if (c[k].kind != HR_CTR_INIT && c[k].cpu_req > 0 && c[k].cpu_lim == HR_NONE &&
                draw() % 2)
                c[k].cpu_lim = c[k].cpu_req * 3;
        if (draw() % 10 == 0)
            p.max_cpu = 4000;
        if (draw() % 8 == 0)
            p.limits = (hr_limit_bounds){8000, 4000, HR_NONE};
        p.ctr = c;
        p.n_ctr = n;
        pods[i] = p;
    }
}

/* ---- the naive reference ----------------------------------------------------- */

typedef struct naive_pod {
    const hr_pod *p;
    double req, booked;
    int managed;
} naive_pod;

/* Local helpers: the bench links no libm (the build does not add it). */
static double fmax_(double a, double b)
{
    return a > b ? a : b;
}
static double fmin_(double a, double b)
{
    return a < b ? a : b;
}
static double fabs_(double a)
{
    return a < 0 ? -a : a;
}
static double floor_(double a)
{
    double t = (double)(int64_t)a;
    return t > a ? t - 1 : t;
}

static int by_request(const void *a, const void *b)
{
    const naive_pod *x = a, *y = b;
    return (x->req > y->req) - (x->req < y->req);
}

static double naive_plan(const hr_config *c, const hr_node *node)
{
    naive_pod *v = malloc(NPODS * sizeof *v);
    double *lim = malloc(NPODS * MAXC * sizeof *lim);
    double R = 0, M = 0, checksum = 0;
    int N = 0;
    for (int i = 0; i < NPODS; i++) {
        const hr_pod *p = &pods[i];
        double steady = 0, sidecars = 0, init_peak = 0, req = 0;
        for (uint32_t k = 0; k < p->n_ctr; k++) {
            const hr_container *ct = &p->ctr[k];
            double r = ct->cpu_req > 0 ? (double)ct->cpu_req / 1000.0 : 0.0;
            if (ct->kind == HR_CTR_INIT) {
                init_peak = fmax_(init_peak, r + sidecars);
            } else {
                steady += r;
                if (ct->kind == HR_CTR_SIDECAR)
                    sidecars += r;
                req += r;
            }
        }
        v[i] = (naive_pod){p, req, fmax_(steady, init_peak), hr_pod_eligibility(p) == HR_MANAGED};
        R += v[i].booked;
        if (v[i].managed) {
            M += req;
            N++;
        }
    }
    qsort(v, NPODS, sizeof *v, by_request);
    double A = (double)node->allocatable / 1000.0, S = A - R;
    double bfloor = (double)c->min_burst_floor / 1000.0, q = (double)c->quantum / 1000.0;
    double mult = (double)c->max_multiplier_milli / 1000.0;
    for (int i = 0; i < NPODS; i++) {
        if (!v[i].managed)
            continue;
        double r = v[i].req, t = r;
        if (S > 0 && M > 0)
            t = r + fmax_(S * r / M, fmin_(bfloor, S / N));
        if (mult > 0)
            t = fmin_(t, r * mult);
        t = fmin_(t, fmax_(A, r));
        if (v[i].p->max_cpu != HR_NONE)
            t = fmin_(t, (double)v[i].p->max_cpu / 1000.0);
        t = fmax_(r, r + floor_((t - r) / q + 0.5) * q);
        for (uint32_t k = 0; k < v[i].p->n_ctr; k++) {
            const hr_container *ct = &v[i].p->ctr[k];
            double l = ct->kind != HR_CTR_INIT && ct->cpu_req > 0
                           ? t * ((double)ct->cpu_req / 1000.0) / r
                           : 0.0;
            lim[i * MAXC + k] = l;
            checksum += l;
        }
        double cur = (double)hr_pod_current_limit(v[i].p) / 1000.0;
        int write = cur <= 0 ||
                    fabs_(t - cur) / cur >= (t > cur ? c->grow_percent : c->shrink_percent) / 100.0;
        if (write && t > cur && cur > 0 && (node->disk_pressure || node->pid_pressure))
            write = 0;
        checksum += write;
    }
    free(lim);
    free(v);
    return checksum;
}

/* ---- timing ---------------------------------------------------------------- */

/* Thread CPU time, not wall time: on a shared, loaded machine the wall
 * clock counts the time this thread sat descheduled, which says nothing
 * about the code. Wall time is printed beside it for reference. */
static double cpu_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
    return (double)ts.tv_sec * 1e9 + (double)ts.tv_nsec;
}

static double wall_ns(void)
{
    return (double)hr_mono_ns();
}

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

static volatile int64_t sink; /* keeps the work observable */

int main(int argc, char **argv)
{
    int batches = argc > 1 ? atoi(argv[1]) : 21;
    int iters = argc > 2 ? atoi(argv[2]) : 5000;
    if (batches < 1 || batches > 1000)
        batches = 21;
    if (iters < 1)
        iters = 5000;

    build_node();
    hr_config c;
    hr_config_defaults(&c);
    hr_node node = {64000, true, false, false, false}; /* 64 cores, ~70% booked */

    hr_node_plan np = hr_plan_node(&c, &node, pods, NPODS, out, limits);
    int64_t nctr = 0;
    for (int i = 0; i < NPODS; i++)
        nctr += pods[i].n_ctr;
    printf("node: %d pods, %lld containers, allocatable %lldm, booked %lldm, slack %lldm, "
           "managed %u pods / %lldm, factor %.3f, %u writes due\n",
           NPODS, (long long)nctr, (long long)np.allocatable, (long long)np.booked,
           (long long)np.slack, np.n_managed, (long long)np.managed,
           (double)hr_node_factor_milli(&np) / 1000.0, np.n_write);

    double *ours = malloc((size_t)batches * sizeof *ours);
    double *naive = malloc((size_t)batches * sizeof *naive);
    double *ours_wall = malloc((size_t)batches * sizeof *ours_wall);
    unsigned long allocs_ours = 0, allocs_naive = 0;
    double naive_sum = 0;
    for (int b = 0; b < batches; b++) {
        /* Alternate the two in every batch so drift (frequency scaling,
         * neighbours) hits both alike. */
        unsigned long a0 = n_allocs;
        double w0 = wall_ns(), t0 = cpu_ns();
        for (int k = 0; k < iters; k++) {
            np = hr_plan_node(&c, &node, pods, NPODS, out, limits);
            sink += np.n_write + out[k % NPODS].target;
        }
        double t1 = cpu_ns(), w1 = wall_ns();
        allocs_ours += n_allocs - a0;
        ours[b] = (t1 - t0) / iters;
        ours_wall[b] = (w1 - w0) / iters;

        a0 = n_allocs;
        t0 = cpu_ns();
        for (int k = 0; k < iters; k++)
            naive_sum += naive_plan(&c, &node);
        t1 = cpu_ns();
        allocs_naive += n_allocs - a0;
        naive[b] = (t1 - t0) / iters;
    }
    sink += (int64_t)naive_sum;
    qsort(ours, (size_t)batches, sizeof *ours, cmp_double);
    qsort(naive, (size_t)batches, sizeof *naive, cmp_double);
    qsort(ours_wall, (size_t)batches, sizeof *ours_wall, cmp_double);
    double med = ours[batches / 2], med_naive = naive[batches / 2];
    unsigned long calls = (unsigned long)batches * (unsigned long)iters;

    printf("hr_plan_node, 110-pod node: %.0f ns CPU time per node computation (median of %d "
           "batches x %d; min %.0f, max %.0f) — budget 20000 ns: %s\n",
           med, batches, iters, ours[0], ours[batches - 1], med <= 20000 ? "within" : "OVER");
    printf("  wall clock: %.0f ns median (includes time descheduled on a busy machine)\n",
           ours_wall[batches / 2]);
    printf("reference (double precision, malloc'ed copy, qsort): %.0f ns CPU time per node "
           "computation\n",
           med_naive);
    printf("ratio reference / hr_plan_node: %.2fx\n", med_naive / med);
    /* The fastest batch of each: what a neighbour on a loaded machine
     * moves least (the medians above can take a batch or two of it). */
    printf("fastest batch: hr_plan_node %.0f ns, reference %.0f ns, ratio %.2fx\n", ours[0],
           naive[0], naive[0] / ours[0]);
    if (HR_COUNT_ALLOCS) {
        printf("allocations per computation: %lu (budget 0)%s\n", allocs_ours / calls,
               allocs_ours % calls ? " (+ a remainder: some calls allocate)" : "");
        printf("reference allocations per computation: %lu\n", allocs_naive / calls);
    } else {
        printf("allocations per computation: unavailable under AddressSanitizer (budget 0)\n");
    }
    free(ours);
    free(naive);
    free(ours_wall);
    return 0;
}
