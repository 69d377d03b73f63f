/*
 * endpoint.h — the webhook as an HTTP route: takes a config snapshot per
 * request, runs the pure review (admission.h), records the metrics this
 * feature owns and logs the decision.
 *
 * Metrics (design §9): headroom_webhook_requests_total{result} with result
 * one of mutated|unchanged|dry-run|error, and
 * headroom_webhook_duration_seconds (histogram of the handler's time, from
 * a complete request body to a complete answer; TLS and network excluded,
 * as those are the API server's to measure).
 */
#ifndef HR_WEBHOOK_ENDPOINT_H
#define HR_WEBHOOK_ENDPOINT_H

#include <stdatomic.h>

#include "server/http.h"
#include "server/metrics.h"
#include "util/log.h"
#include "webhook/admission.h"
#include "webhook/config_holder.h"

#define HR_WEBHOOK_PATH "/mutate-pods"
/* An AdmissionReview of the largest pod etcd stores (1.5 MiB) fits. */
#define HR_WEBHOOK_MAX_BODY (4u << 20)

typedef struct hr_wh_endpoint {
    hr_cfg_holder *cfg;           /* not owned */
    const char *own_ns;           /* may be NULL */
    hr_wh_ns_lookup_fn ns_lookup; /* optional: set before serving */
    void *ns_ud;
    hr_wh_group_lookup_fn group_lookup; /* optional: set before serving */
    void *group_ud;
    hr_wh_node_lookup_fn node_lookup; /* optional: set before serving */
    void *node_ud;
    hr_wh_quota_room_fn quota_room; /* optional: set before serving */
    void *quota_ud;
    hr_wh_vpa_writer_fn vpa_writer; /* optional: set before serving */
    void *vpa_ud;
    bool pod_resize; /* hr_wh_env.pod_resize: set before serving */
    hr_logger log;
    atomic_uint_fast64_t requests[HR_WH_OUTCOME_COUNT_];
    hr_histogram duration;
} hr_wh_endpoint;

void hr_wh_endpoint_init(hr_wh_endpoint *e, hr_cfg_holder *cfg, const char *own_ns,
                         const hr_logger *log);

/* The route handler (hr_http_handler; ud = the endpoint). */
void hr_wh_endpoint_handle(void *ud, const hr_http_req *req, hr_http_resp *resp);

/* The metrics renderer (hr_metrics_render_fn; ud = the endpoint). */
void hr_wh_endpoint_render(void *ud, hr_buf *out);

#endif
