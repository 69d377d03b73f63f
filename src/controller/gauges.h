/*
 * gauges.h — the per-node and per-pod gauges of design §9, as the last
 * reconcile of each node left them.
 *
 * Each reconcile replaces its node's entry whole, so a pod that left the
 * node, or a node that is gone, simply has no series any more — nothing to
 * garbage-collect. Rendering walks the table under one lock; with 5,000
 * nodes and 150,000 pods the page is a few megabytes (bench_metrics).
 */
#ifndef HR_CONTROLLER_GAUGES_H
#define HR_CONTROLLER_GAUGES_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "core/config.h"
#include "core/policy.h"
#include "util/buf.h"
#include "util/err.h"

typedef struct hr_gauges hr_gauges;

typedef struct hr_gauge_pod {
    const char *ns, *name;
    int64_t limit; /* current CPU limit over the managed containers, milli */
} hr_gauge_pod;

/* How the managed/deferred totals moved (for the gauges kept as counters). */
typedef struct hr_gauge_delta {
    int64_t pods, nodes, deferred;
} hr_gauge_delta;

HR_MUST_CHECK hr_gauges *hr_gauges_new(void);
void hr_gauges_free(hr_gauges *g);

/* Replace node's entry; plan NULL removes the node (it is gone). pool is
 * the node's spec.nodePools entry, NULL for the top level. Returns false
 * when out of memory (the old entry stays). */
bool hr_gauges_record(hr_gauges *g, const char *node, const char *pool, const hr_node_plan *plan,
                      uint32_t n_deferred, const hr_gauge_pod *pods, size_t n,
                      hr_gauge_delta *delta);

/* headroom_node_factor, headroom_node_slack_cores, headroom_node_booked_ratio,
 * headroom_node_pool_info, headroom_pod_limit_cores. */
void hr_gauges_render(hr_gauges *g, hr_buf *out);

#endif
