/*
 * endpoint.c — HTTP glue, metrics and logs around the admission review
 * (see endpoint.h).
 */
#include <stdint.h>
#include <string.h>

#include "util/clock.h"
#include "webhook/endpoint.h"

static const double duration_bounds[] = {
    0.0001, 0.00025, 0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5,
};

void hr_wh_endpoint_init(hr_wh_endpoint *e, hr_cfg_holder *cfg, const char *own_ns,
                         const hr_logger *log)
{
    memset(e, 0, sizeof *e);
    e->cfg = cfg;
    e->own_ns = own_ns;
    if (log)
        e->log = *log;
    for (int i = 0; i < HR_WH_OUTCOME_COUNT_; i++)
        atomic_init(&e->requests[i], 0);
    hr_histogram_init(&e->duration, duration_bounds,
                      sizeof duration_bounds / sizeof duration_bounds[0]);
}

/* A patch for a log field: quotes turned to ' so logfmt stays one value. */
static void log_patch(char *dst, size_t cap, const hr_buf *patch)
{
    hr_err_quote(dst, cap, hr_buf_str(patch), patch->len, cap - 4);
    for (char *p = dst; *p; p++)
        if (*p == '"')
            *p = '\'';
}

void hr_wh_endpoint_handle(void *ud, const hr_http_req *req, hr_http_resp *resp)
{
    hr_wh_endpoint *e = ud;
    int64_t t0 = hr_mono_ns();
    hr_cfg_snapshot *snap = hr_cfg_holder_get(e->cfg);
    hr_wh_env env = {
        .cfg = hr_cfg_snapshot_config(snap),
        .own_ns = e->own_ns,
        .ns_lookup = e->ns_lookup,
        .ns_ud = e->ns_ud,
        .group_lookup = e->group_lookup,
        .group_ud = e->group_ud,
        .node_lookup = e->node_lookup,
        .node_ud = e->node_ud,
        .quota_room = e->quota_room,
        .quota_ud = e->quota_ud,
        .vpa_writer = e->vpa_writer,
        .vpa_ud = e->vpa_ud,
        .pod_resize = e->pod_resize,
    };
    hr_wh_result r;
    hr_err err;
    hr_status st = hr_admission_review(&env, req->body, req->body_len, &r, &err);
    hr_cfg_snapshot_release(snap);
    hr_wh_outcome outcome;
    if (st != HR_OK) {
        /* Only out of memory lands here; a 500 makes the API server apply
         * failurePolicy (Ignore), which is the safe answer. */
        outcome = HR_WH_ERROR;
        resp->status = 500;
        hr_buf_puts(&resp->body, err.msg);
        hr_buf_putc(&resp->body, '\n');
    } else {
        outcome = r.outcome;
        resp->status = r.http_status;
        resp->content_type = r.content_type;
        /* Hand the answer over instead of copying it. */
        resp->body = r.body;
        hr_buf_init(&r.body, 0);
    }
    uint64_t dt = (uint64_t)(hr_mono_ns() - t0);
    atomic_fetch_add_explicit(&e->requests[outcome], 1, memory_order_relaxed);
    hr_histogram_observe_ns(&e->duration, dt);

    if (st != HR_OK) {
        hr_logf(&e->log, HR_LV_ERROR, "msg=\"admission failed\" error=\"%s\"", err.msg);
    } else if (outcome == HR_WH_ERROR) {
        hr_logf(&e->log, HR_LV_WARN,
                "msg=\"admission review refused\" result=error status=400 "
                "reason=\"%s\"",
                r.why);
    } else {
        char patch[600];
        log_patch(patch, sizeof patch, &r.patch);
        hr_log_level lvl = outcome == HR_WH_UNCHANGED ? HR_LV_DEBUG : HR_LV_INFO;
        hr_logf(&e->log, lvl,
                "msg=\"admission\" result=%s uid=%s namespace=%s pod=%s "
                "reason=\"%s\" patch=\"%s\" duration_us=%llu",
                hr_wh_outcome_str(outcome), r.uid, r.ns, r.pod, r.why, patch,
                (unsigned long long)(dt / 1000));
    }
    hr_wh_result_free(&r);
}

void hr_wh_endpoint_render(void *ud, hr_buf *out)
{
    hr_wh_endpoint *e = ud;
    hr_buf_puts(out, "# HELP headroom_webhook_requests_total Admission "
                     "reviews answered, by result.\n"
                     "# TYPE headroom_webhook_requests_total counter\n");
    for (int i = 0; i < HR_WH_OUTCOME_COUNT_; i++)
        hr_buf_printf(
            out,
            "headroom_webhook_requests_total{result=\"%s\"} "
            "%llu\n",
            hr_wh_outcome_str((hr_wh_outcome)i),
            (unsigned long long)atomic_load_explicit(&e->requests[i], memory_order_relaxed));
    hr_histogram_render(&e->duration, "headroom_webhook_duration_seconds",
                        "Time to answer one admission review.", out);
}
