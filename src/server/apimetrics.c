/*
 * apimetrics.c — counting the API client's requests (apimetrics.h).
 */
#include "apimetrics.h"

#include <stdio.h>
#include <string.h>

static const char *const verbs[HR_API_VERBS] = {
    "get", "list", "watch", "create", "update", "patch", "delete", "other",
};

/* Kubernetes client latencies: client-go's rest_client_request_duration
 * buckets. */
static const double bounds[] = {0.005, 0.025, 0.1, 0.25, 0.5, 1, 2, 4, 8, 15, 30, 60};

void hr_apimetrics_init(hr_apimetrics *m)
{
    for (int v = 0; v < HR_API_VERBS; v++) {
        for (int c = 0; c < HR_API_CODES; c++)
            atomic_init(&m->count[v][c], 0);
        hr_histogram_init(&m->seconds[v], bounds, sizeof bounds / sizeof bounds[0]);
    }
}

static int verb_index(const char *verb)
{
    for (int v = 0; v < HR_API_VERBS - 1; v++)
        if (verb != NULL && strcmp(verb, verbs[v]) == 0)
            return v;
    return HR_API_VERBS - 1;
}

void hr_apimetrics_observe(void *ud, const char *verb, long code, uint64_t ns)
{
    hr_apimetrics *m = ud;
    int v = verb_index(verb);
    int c = code >= 100 && code <= 599 ? (int)(code - 100) + 1 : 0;
    atomic_fetch_add_explicit(&m->count[v][c], 1, memory_order_relaxed);
    hr_histogram_observe_ns(&m->seconds[v], ns);
}

void hr_apimetrics_render(void *ud, hr_buf *out)
{
    hr_apimetrics *m = ud;
    hr_buf_puts(out, "# HELP headroom_api_requests_total Requests the Kubernetes API client "
                     "made, by verb and HTTP status (error: no response).\n"
                     "# TYPE headroom_api_requests_total counter\n");
    for (int v = 0; v < HR_API_VERBS; v++)
        for (int c = 1; c <= HR_API_CODES; c++) {
            int cell = c % HR_API_CODES; /* the statuses, then "error" */
            uint64_t n = atomic_load_explicit(&m->count[v][cell], memory_order_relaxed);
            if (n == 0)
                continue;
            if (cell == 0)
                hr_buf_printf(out, "headroom_api_requests_total{verb=\"%s\",code=\"error\"} %llu\n",
                              verbs[v], (unsigned long long)n);
            else
                hr_buf_printf(out, "headroom_api_requests_total{verb=\"%s\",code=\"%d\"} %llu\n",
                              verbs[v], cell + 99, (unsigned long long)n);
        }
    hr_buf_puts(out, "# HELP headroom_api_request_duration_seconds Latency of the Kubernetes "
                     "API client's requests by verb (a watch: until its response headers).\n"
                     "# TYPE headroom_api_request_duration_seconds histogram\n");
    for (int v = 0; v < HR_API_VERBS; v++) {
        if (atomic_load_explicit(&m->seconds[v].count, memory_order_relaxed) == 0)
            continue;
        char labels[32];
        snprintf(labels, sizeof labels, "verb=\"%s\"", verbs[v]);
        hr_histogram_render_series(&m->seconds[v], "headroom_api_request_duration_seconds", labels,
                                   out);
    }
}
