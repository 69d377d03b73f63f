/*
 * metrics.c — the registry and the lock-free histogram (see metrics.h).
 *
 * Buckets are stored non-cumulative so an observation touches one counter;
 * the cumulative counts Prometheus wants are summed at render time. A
 * scrape racing with observations may see a count a little behind the
 * buckets; Prometheus tolerates that, and it never goes backwards.
 */
#include <stdio.h>

#include "server/metrics.h"

void hr_metrics_init(hr_metrics *m)
{
    atomic_init(&m->n, 0);
    for (int i = 0; i < HR_METRICS_MAX_RENDERERS; i++) {
        m->r[i].fn = NULL;
        m->r[i].ud = NULL;
    }
}

hr_status hr_metrics_add(hr_metrics *m, hr_metrics_render_fn fn, void *ud, hr_err *err)
{
    int n = atomic_load(&m->n);
    if (n >= HR_METRICS_MAX_RENDERERS)
        return hr_err_set(err, HR_E_LIMIT, "metrics: more than %d renderers",
                          HR_METRICS_MAX_RENDERERS);
    m->r[n].fn = fn;
    m->r[n].ud = ud;
    atomic_store(&m->n, n + 1); /* publish after the slot is written */
    return HR_OK;
}

void hr_metrics_render(const hr_metrics *m, hr_buf *out)
{
    int n = atomic_load(&((hr_metrics *)m)->n);
    for (int i = 0; i < n; i++)
        m->r[i].fn(m->r[i].ud, out);
}

void hr_histogram_init(hr_histogram *h, const double *bounds, size_t n)
{
    h->bounds = bounds;
    h->n_bounds = n > HR_HIST_MAX_BUCKETS ? HR_HIST_MAX_BUCKETS : n;
    for (size_t i = 0; i <= HR_HIST_MAX_BUCKETS; i++)
        atomic_init(&h->bucket[i], 0);
    atomic_init(&h->sum_ns, 0);
    atomic_init(&h->count, 0);
}

void hr_histogram_observe_ns(hr_histogram *h, uint64_t ns)
{
    double s = (double)ns / 1e9;
    size_t i = 0;
    while (i < h->n_bounds && s > h->bounds[i])
        i++;
    atomic_fetch_add_explicit(&h->bucket[i], 1, memory_order_relaxed);
    atomic_fetch_add_explicit(&h->sum_ns, ns, memory_order_relaxed);
    atomic_fetch_add_explicit(&h->count, 1, memory_order_relaxed);
}

/* Bounds as Prometheus clients print them: shortest exact-looking form. */
static void put_le(hr_buf *out, double v)
{
    char s[32];
    snprintf(s, sizeof s, "%.9g", v);
    hr_buf_puts(out, s);
}

void hr_histogram_render(const hr_histogram *h, const char *name, const char *help, hr_buf *out)
{
    hr_buf_printf(out, "# HELP %s %s\n# TYPE %s histogram\n", name, help, name);
    hr_histogram_render_series(h, name, NULL, out);
}

void hr_histogram_render_series(const hr_histogram *h, const char *name, const char *labels,
                                hr_buf *out)
{
    const char *l = labels != NULL ? labels : "", *comma = labels != NULL ? "," : "";
    uint64_t cum = 0;
    for (size_t i = 0; i < h->n_bounds; i++) {
        cum += atomic_load_explicit(&((hr_histogram *)h)->bucket[i], memory_order_relaxed);
        hr_buf_printf(out, "%s_bucket{%s%sle=\"", name, l, comma);
        put_le(out, h->bounds[i]);
        hr_buf_printf(out, "\"} %llu\n", (unsigned long long)cum);
    }
    cum += atomic_load_explicit(&((hr_histogram *)h)->bucket[h->n_bounds], memory_order_relaxed);
    uint64_t sum = atomic_load_explicit(&((hr_histogram *)h)->sum_ns, memory_order_relaxed);
    hr_buf_printf(out, "%s_bucket{%s%sle=\"+Inf\"} %llu\n", name, l, comma,
                  (unsigned long long)cum);
    const char *open = labels != NULL ? "{" : "", *close = labels != NULL ? "}" : "";
    hr_buf_printf(out, "%s_sum%s%s%s %.9f\n", name, open, l, close, (double)sum / 1e9);
    /* _count equals the +Inf bucket by definition; use the same figure so
     * a scrape racing an observation stays self-consistent. */
    hr_buf_printf(out, "%s_count%s%s%s %llu\n", name, open, l, close, (unsigned long long)cum);
}

void hr_metrics_label_value(hr_buf *out, const char *v)
{
    for (const char *p = v; *p; p++) {
        if (*p == '\\')
            hr_buf_puts(out, "\\\\");
        else if (*p == '"')
            hr_buf_puts(out, "\\\"");
        else if (*p == '\n')
            hr_buf_puts(out, "\\n");
        else
            hr_buf_putc(out, *p);
    }
}
