/*
 * executor.h — carrying out one node's actions against the API server
 * (design §5–§7).
 *
 * For each action, in order: the per-node token bucket (a node's wave of
 * resizes is paced; what does not fit is requeued, never dropped), the
 * "never act on a cache older than our own write" check, the live Node
 * re-read before any increase (a condition that flipped mid-reconcile
 * cannot authorize a raise), then the write, and the outcome table of
 * design §7. Only the leader writes: the flag is checked before every write,
 * so a replica that lost its lease stops at the next write.
 */
#ifndef HR_CONTROLLER_EXECUTOR_H
#define HR_CONTROLLER_EXECUTOR_H

#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>

#include "controller/backoff.h"
#include "controller/ctllog.h"
#include "controller/ctlmetrics.h"
#include "controller/nodesnap.h"
#include "controller/reconcile.h"
#include "kube/transport/client.h"
#include "util/err.h"

typedef struct hr_executor hr_executor;

typedef struct hr_executor_opts {
    hr_kclient *client;
    hr_backoff *backoff;
    hr_ctlmetrics *metrics;
    /* May we write now? Asked before every write (NULL: always). */
    bool (*leading)(void *ud);
    void *leading_ud;
    /* Shutdown: checked before every write; the rest of a wave is
     * abandoned (design §10: finish or abandon in-flight work in 10 s). */
    const atomic_bool *stop;
    const char *instance; /* reportingInstance of events (hostname); copied */
    hr_log_sink log;      /* NULL: logfmt on stderr */
    void *log_ud;
} hr_executor_opts;

HR_MUST_CHECK hr_status hr_executor_new(const hr_executor_opts *o, hr_executor **out, hr_err *err);
void hr_executor_free(hr_executor *e);

/* Change the per-node rate (HeadroomConfig rateLimits.perNodePatchesPerSecond;
 * below 1 counts as 1); every node's bucket is retuned. The controller calls
 * it when the configuration changes (hr_controller_config_changed), never
 * on a poll. Returns whether the rate changed. Thread-safe (the executor's
 * lock); the rate starts at 10, the default. */
bool hr_executor_set_node_rate(hr_executor *e, int per_node_pps);

/* The per-node rate in force. A plain read, under the executor's lock. */
int hr_executor_node_rate(hr_executor *e);

typedef struct hr_exec_outcome {
    int64_t requeue_ms; /* -1: node done; else run it again this far from now */
    uint32_t writes;    /* API writes made */
} hr_exec_outcome;

HR_MUST_CHECK hr_status hr_execute(hr_executor *e, const hr_nodesnap *s, const hr_reconcile *r,
                                   hr_exec_outcome *out, hr_err *err);

/* A pod left the cache: forget its last-write record and its dedup marks. */
void hr_executor_forget_pod(hr_executor *e, const char *ns, const char *name);

#endif
