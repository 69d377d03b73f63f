/*
 * metrics.h — the /metrics page: a registry of render callbacks, and the
 * two instruments the daemon's hot paths need (a counter family and a
 * histogram) that can be updated from any thread without a lock.
 *
 * There is no Prometheus client library for C worth depending on (see
 * notes/c-deps-facts.md), and the text exposition format is small, so each
 * owner of metrics registers a callback that appends its families to the
 * page; the server only concatenates. The observability work (design §9)
 * plugs its node/pod/process families in the same way.
 */
#ifndef HR_SERVER_METRICS_H
#define HR_SERVER_METRICS_H

#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>

#include "util/buf.h"
#include "util/err.h"

typedef void (*hr_metrics_render_fn)(void *ud, hr_buf *out);

#define HR_METRICS_MAX_RENDERERS 16

typedef struct hr_metrics {
    struct {
        hr_metrics_render_fn fn;
        void *ud;
    } r[HR_METRICS_MAX_RENDERERS];
    atomic_int n;
} hr_metrics;

void hr_metrics_init(hr_metrics *m);

/* Register a renderer. Meant for start-up, before the server runs
 * (registration is not synchronised with rendering beyond the count). */
HR_MUST_CHECK hr_status hr_metrics_add(hr_metrics *m, hr_metrics_render_fn fn, void *ud,
                                       hr_err *err);

/* The whole page, in registration order. */
void hr_metrics_render(const hr_metrics *m, hr_buf *out);

/* A histogram with fixed upper bounds (seconds), observed in nanoseconds:
 * integer atomics only, so observing never takes a lock. */
#define HR_HIST_MAX_BUCKETS 24

typedef struct hr_histogram {
    const double *bounds; /* ascending upper bounds in seconds (static) */
    size_t n_bounds;
    atomic_uint_fast64_t bucket[HR_HIST_MAX_BUCKETS + 1]; /* last is +Inf */
    atomic_uint_fast64_t sum_ns;
    atomic_uint_fast64_t count;
} hr_histogram;

void hr_histogram_init(hr_histogram *h, const double *bounds, size_t n);
void hr_histogram_observe_ns(hr_histogram *h, uint64_t ns);

/* Render "# HELP", "# TYPE name histogram" and the _bucket/_sum/_count
 * series. */
void hr_histogram_render(const hr_histogram *h, const char *name, const char *help, hr_buf *out);

/* Only the series, each with labels (`verb="get"`, already escaped; NULL:
 * none) before le: one member of a labelled family whose HELP and TYPE the
 * caller wrote. */
void hr_histogram_render_series(const hr_histogram *h, const char *name, const char *labels,
                                hr_buf *out);

/* A label value escaped per the text format (\\, \", \n). */
void hr_metrics_label_value(hr_buf *out, const char *v);

#endif
