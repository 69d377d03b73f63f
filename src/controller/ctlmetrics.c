/*
 * ctlmetrics.c — rendering the controller's counters.
 */
#include "ctlmetrics.h"

#include <inttypes.h>

static const char *const result_names[HR_RES_COUNT_] = {
    "applied", "infeasible", "quota-denied", "invalid", "conflict", "gone", "error", "dry-run",
};
static const char *const write_names[HR_WK_COUNT_] = {"resize", "annotation", "event",
                                                      "configstatus"};

/* Reconciles take microseconds to a few seconds (rate-limited writes). */
static const double reconcile_bounds[] = {0.0001, 0.0005, 0.001, 0.005, 0.01, 0.05,
                                          0.1,    0.5,    1,     2.5,   5,    10};

const char *hr_result_str(hr_result r)
{
    return (unsigned)r < HR_RES_COUNT_ ? result_names[r] : "unknown";
}

void hr_ctlmetrics_init(hr_ctlmetrics *m)
{
    for (int i = 0; i < HR_RES_COUNT_; i++)
        atomic_init(&m->resizes[i], 0);
    for (int i = 0; i < HR_GATE_COUNT_; i++)
        atomic_init(&m->skips[i], 0);
    for (int i = 0; i < HR_WK_COUNT_; i++)
        atomic_init(&m->writes[i], 0);
    atomic_init(&m->reconciles, 0);
    atomic_init(&m->deferred, 0);
    atomic_init(&m->pods_managed, 0);
    atomic_init(&m->nodes_managed, 0);
    hr_histogram_init(&m->reconcile_seconds, reconcile_bounds,
                      sizeof reconcile_bounds / sizeof reconcile_bounds[0]);
}

void hr_ctlmetrics_render(void *ud, hr_buf *out)
{
    hr_ctlmetrics *m = ud;
    hr_buf_puts(out, "# HELP headroom_resizes_total Resize writes by outcome; dry-run: resizes the "
                     "dry-run mode held.\n"
                     "# TYPE headroom_resizes_total counter\n");
    for (int i = 0; i < HR_RES_COUNT_; i++)
        hr_buf_printf(out, "headroom_resizes_total{result=\"%s\"} %" PRIuFAST64 "\n",
                      result_names[i], atomic_load(&m->resizes[i]));
    hr_buf_puts(out, "# HELP headroom_capacity_skip_total Limit increases skipped by a capacity or "
                     "pressure gate or on a node whose booking is unknown, and pods on an "
                     "unknown Node left unwritten.\n"
                     "# TYPE headroom_capacity_skip_total counter\n");
    for (int g = HR_GATE_PRESSURE; g < HR_GATE_COUNT_; g++)
        hr_buf_printf(out, "headroom_capacity_skip_total{reason=\"%s\"} %" PRIuFAST64 "\n",
                      hr_gate_str((hr_gate)g), atomic_load(&m->skips[g]));
    hr_buf_puts(out, "# HELP headroom_writes_total API writes by kind (zero in a steady state).\n"
                     "# TYPE headroom_writes_total counter\n");
    for (int i = 0; i < HR_WK_COUNT_; i++)
        hr_buf_printf(out, "headroom_writes_total{kind=\"%s\"} %" PRIuFAST64 "\n", write_names[i],
                      atomic_load(&m->writes[i]));
    hr_histogram_render(&m->reconcile_seconds, "headroom_reconcile_duration_seconds",
                        "Time to reconcile one node, writes included.", out);
}

void hr_ctlmetrics_render_totals(const hr_ctlmetrics *m, hr_buf *out)
{
    hr_buf_printf(
        out,
        "# HELP headroom_resizes_deferred Managed pods whose last resize the kubelet deferred.\n"
        "# TYPE headroom_resizes_deferred gauge\nheadroom_resizes_deferred %" PRIdFAST64 "\n"
        "# HELP headroom_pods_managed Pods whose CPU limits kube-headroom manages.\n"
        "# TYPE headroom_pods_managed gauge\nheadroom_pods_managed %" PRIdFAST64 "\n"
        "# HELP headroom_nodes_managed Nodes with at least one managed pod.\n"
        "# TYPE headroom_nodes_managed gauge\nheadroom_nodes_managed %" PRIdFAST64 "\n",
        atomic_load(&m->deferred), atomic_load(&m->pods_managed), atomic_load(&m->nodes_managed));
}
