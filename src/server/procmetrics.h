/*
 * procmetrics.h — the standard process_* series of a Prometheus exporter
 * (design §9): resident memory, CPU seconds, start time. Read from /proc and
 * getrusage at render time; nothing to update in between.
 */
#ifndef HR_SERVER_PROCMETRICS_H
#define HR_SERVER_PROCMETRICS_H

#include "util/buf.h"

/* hr_metrics_render_fn shape; ud is unused. */
void hr_procmetrics_render(void *ud, hr_buf *out);

#endif
