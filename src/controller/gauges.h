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
    int64_t limit;        /* current CPU limit over the managed containers, milli */
    int64_t target;       /* the limit the policy wants now, milli; <= 0: none (node-unknown) */
    const char *held;     /* why the limit is not at its target and is not being
                         written (a static keyword: hr_gauge_hold), NULL: it is
                         at its target or being written */
    bool parked;          /* in back-off (design §7): not managed for now, so only
                         its headroom_pod_held series, with held the back-off's
                         reason */
    bool undecodable;     /* could not be decoded and holds the node's increases
                         (design §6): only its headroom_pod_undecodable series */
    bool group_too_large; /* refused: its group is above spec.maxGroupSize
                             (design §2.10): only its headroom_pod_group_too_large
                             series */
    const char *foreign_writer; /* another field manager writes its limits.cpu
                                   (design §4): only its headroom_pod_foreign_writer
                                   series, naming it; NULL: none */
    int64_t grace_until;        /* in its startup grace with its limit kept (design
                            §2.12): when the grace ends, Unix seconds, its
                            headroom_pod_startup_grace_until_seconds series;
                            0: none */
} hr_gauge_pod;

/* The hold reasons of headroom_pod_held that are not a gate's (hr_gate_str),
 * the execution's (executor.h, HR_EXEC_HELD_*) or a back-off's
 * ("infeasible", "quota-denied", "invalid"): design §9.3. */
#define HR_GAUGE_HOLD_DRY_RUN "dry-run"   /* a resize the dry-run keeps from being sent */
#define HR_GAUGE_HOLD_DEADBAND "deadband" /* the change is inside the hysteresis (§2.5) */

/* How the managed/deferred totals moved (for the gauges kept as counters). */
typedef struct hr_gauge_delta {
    int64_t pods, nodes, deferred;
} hr_gauge_delta;

/* Why a managed pod's limit is not at its target and is not being written
 * by this reconcile (headroom_pod_held, design §9.3), NULL: at its target
 * or written now. A gate's reason comes before dry-run: a held increase is
 * held whatever the mode. Pure. */
const char *hr_gauge_hold(const hr_pod_plan *pp, bool dry_run);

HR_MUST_CHECK hr_gauges *hr_gauges_new(void);
void hr_gauges_free(hr_gauges *g);

/* Replace node's entry; plan NULL removes the node (it is gone). pool is
 * the node's spec.nodePools entry, NULL for the top level. Returns false
 * when out of memory (the old entry stays). */
bool hr_gauges_record(hr_gauges *g, const char *node, const char *pool, const hr_node_plan *plan,
                      uint32_t n_deferred, const hr_gauge_pod *pods, size_t n,
                      hr_gauge_delta *delta);

/* headroom_node_factor, headroom_node_slack_cores, headroom_node_booked_ratio,
 * headroom_node_pool_info, headroom_node_managed_pods,
 * headroom_node_allocatable_cores, headroom_node_booked_cores, then
 * headroom_pod_limit_cores, headroom_pod_target_cores, headroom_pod_held,
 * headroom_pod_info, headroom_pod_undecodable, headroom_pod_group_too_large,
 * headroom_pod_foreign_writer and headroom_pod_startup_grace_until_seconds
 * (design §9.3). */
void hr_gauges_render(hr_gauges *g, hr_buf *out);

#endif
