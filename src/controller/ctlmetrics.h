/*
 * ctlmetrics.h — the controller's counters (design §6, §7, §9).
 *
 * Lock-free atomics bumped on the write path and rendered on /metrics:
 * resize outcomes by result, capacity skips by gate, writes by kind (the
 * steady-state-is-zero-writes check reads these), the reconcile duration
 * histogram, and the totals deferred resizes, managed pods and nodes.
 */
#ifndef HR_CONTROLLER_CTLMETRICS_H
#define HR_CONTROLLER_CTLMETRICS_H

#include <stdatomic.h>
#include <stdint.h>

#include "core/gates.h"
#include "server/metrics.h"
#include "util/buf.h"

typedef enum hr_result {
    HR_RES_APPLIED = 0,
    HR_RES_INFEASIBLE,
    HR_RES_QUOTA_DENIED,
    HR_RES_INVALID,
    HR_RES_CONFLICT,
    HR_RES_GONE,
    HR_RES_ERROR,
    HR_RES_DRY_RUN, /* a resize dry-run held: counted when its annotation is sent */
    HR_RES_COUNT_
} hr_result;

const char *hr_result_str(hr_result r);

typedef enum hr_write_kind {
    HR_WK_RESIZE = 0,
    HR_WK_ANNOTATION,
    HR_WK_EVENT,
    HR_WK_CONFIG_STATUS, /* the HeadroomConfig's status (cfgstatus.h) */
    HR_WK_COUNT_
} hr_write_kind;

typedef struct hr_ctlmetrics {
    atomic_uint_fast64_t resizes[HR_RES_COUNT_];
    atomic_uint_fast64_t skips[HR_GATE_COUNT_]; /* by hr_gate (PASS unused) */
    atomic_uint_fast64_t writes[HR_WK_COUNT_];
    atomic_uint_fast64_t reconciles;
    atomic_int_fast64_t deferred;      /* gauge, summed over nodes */
    atomic_int_fast64_t pods_managed;  /* gauge */
    atomic_int_fast64_t nodes_managed; /* gauge */
    hr_histogram reconcile_seconds;
} hr_ctlmetrics;

void hr_ctlmetrics_init(hr_ctlmetrics *m);

/* Appends the counters and the reconcile histogram to a /metrics page
 * (hr_metrics_render_fn shape): every replica's own activity. */
void hr_ctlmetrics_render(void *m, hr_buf *out);

/* The totals over the cluster (headroom_resizes_deferred,
 * headroom_pods_managed, headroom_nodes_managed): state of the cluster, not
 * of the replica, rendered with the gauges by the leader only
 * (hr_controller_render_gauges). */
void hr_ctlmetrics_render_totals(const hr_ctlmetrics *m, hr_buf *out);

#endif
