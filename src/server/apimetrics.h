/*
 * apimetrics.h — the API client's own requests on /metrics (design §9.3):
 * headroom_api_requests_total{verb,code} and the histogram
 * headroom_api_request_duration_seconds{verb}. Per replica: every replica
 * renders its own.
 *
 * The client reports each request it made (kube/transport/client.h,
 * hr_krequest_fn) with its verb, its HTTP status (0: a transport failure,
 * rendered code="error") and how long it took. The server layer knows no
 * Kubernetes: the verb is a word the client chose, looked up in the fixed
 * set below (anything else counts as "other").
 *
 * Threads: hr_apimetrics_observe runs on every thread that makes requests,
 * at once, and hr_apimetrics_render on the scrape's. Every cell is its own
 * atomic counter, added to and read with relaxed order, and nothing takes a
 * lock. A scrape reads each cell once: it may see a request in the counter
 * and not yet in the histogram (or the reverse), never a count lost or
 * counted twice, and each counter only ever grows.
 */
#ifndef HR_SERVER_APIMETRICS_H
#define HR_SERVER_APIMETRICS_H

#include <stdatomic.h>
#include <stdint.h>

#include "server/metrics.h"
#include "util/buf.h"

/* get, list, watch, create, update, patch, delete, other. */
#define HR_API_VERBS 8
/* Cell 0: a transport failure ("error"); cell 1 + s - 100: HTTP status s,
 * 100 to 599 (a status outside that range counts as an error). */
#define HR_API_CODES 501

typedef struct hr_apimetrics {
    atomic_uint_fast64_t count[HR_API_VERBS][HR_API_CODES];
    hr_histogram seconds[HR_API_VERBS];
} hr_apimetrics;

void hr_apimetrics_init(hr_apimetrics *m);

/* One request (ud: the hr_apimetrics): verb as the client names it, code the
 * HTTP status or 0 for a transport failure, ns its duration (a watch: until
 * its response headers). Thread-safe, lock-free. */
void hr_apimetrics_observe(void *ud, const char *verb, long code, uint64_t ns);

/* Both families (hr_metrics_render_fn shape): every (verb, code) seen at
 * least once, and one histogram per verb seen. */
void hr_apimetrics_render(void *ud, hr_buf *out);

#endif
