/*
 * controller.h — the node-scoped reconcile loop (design §5).
 *
 *   cache change feed ──(jittered debounce)──▶ node queue ──▶ workers:
 *     snapshot (under the cache lock) → reconcile (pure) → execute (writes)
 *
 * A feeder thread drains the cache's set of dirty nodes into the queue
 * with a delay of debouncePeriod ±50%, so a burst of scheduling on a node
 * computes once and a fleet of nodes does not reconcile in lockstep. It
 * sleeps until the cache rings it (hr_cache_set_kick: a change), a sweep
 * or a back-off expiry is due — never on a timer of its own (design §5:
 * idle means idle) — and drains at most once per 10 ms. The drain runs
 * under the cache lock, as cache.h requires, and feeds the queue from
 * inside it: lock order cache lock, then the node queue's lock
 * (hr_controller_enqueue_all takes them in the same order; the queue's
 * lock is never held while taking another). After a drain that reported
 * nodes, the feeder sweeps, 100 ms apart and under the same hold, enough
 * bounded slices of the executor's per-pod and per-node maps for one whole
 * pass (hr_executor_sweep: lock order cache lock, then the executor's
 * lock, then the back-off table's, a leaf), so what belongs to a pod or
 * node that left the cache is freed; the queue frees a node's entry
 * itself once the node is done. Workers take nodes from the queue; a node is
 * never reconciled by two workers at once; rate-limited or failed work is
 * requeued, never dropped. Only the leader writes; followers keep their
 * caches warm. Leadership is asked at the start of a reconcile (a node a
 * non-leader skips is not kept: every (re)gain of leadership queues every
 * node, hr_controller_enqueue_all), by the executor before each action and
 * after each wait, and by the client right before each write is sent (the
 * write lease, opts.leading_until); a node whose wave leadership cut short
 * is requeued (design §10). A worker's wave checks its actions itself
 * and hands the writes that passed to the executor's write pool, waiting
 * for them (executor.h, wpool.h: up to write_concurrency writes in flight
 * across all workers, never two for one pod). Beside the
 * workers, one thread keeps the HeadroomConfig's status current
 * (cfgstatus.h).
 *
 * Configuration is pushed, not polled (design §11): whoever applies a new
 * HeadroomConfig calls hr_controller_config_changed with the configuration
 * in force, and the values the threads run with (debounce period for the
 * feeder's jitter, the node queue's redo delay and the start-up wave; the
 * executor's per-node patch rate; the API client's write limiter,
 * clientQPS/clientBurst) change then, once: hr_controller_start hands the
 * client the starting rate, and each push that changes clientQPS or
 * clientBurst calls hr_kclient_set_rate exactly once. Those values live
 * under one mutex of the controller (cfg_mu in controller.c), taken only
 * for the copy in and the copy out; the push calls into the executor and
 * the client while holding it (lock order: caller's locks, e.g. the cache
 * lock, then cfg_mu, then the executor's lock or the client limiter's
 * mutex, a leaf that no request holds while it sleeps), so two
 * pushes never reach either out of order. No getter changes anything.
 */
#ifndef HR_CONTROLLER_CONTROLLER_H
#define HR_CONTROLLER_CONTROLLER_H

#include <stdatomic.h>
#include <stdbool.h>

#include "cache/cache.h"
#include "controller/ctllog.h"
#include "controller/ctlmetrics.h"
#include "core/config.h"
#include "kube/transport/client.h"
#include "util/err.h"

typedef struct hr_controller hr_controller;

typedef struct hr_controller_opts {
    hr_kclient *client;
    hr_cache *cache;
    const char *own_ns;      /* never managed */
    hr_dry_run_flag dry_run; /* --dry-run as given */
    /* The configuration in force at start (hr_config_effective); NULL:
     * defaults. Later changes come through hr_controller_config_changed. */
    const hr_config *config;
    bool (*leading)(void *ud); /* NULL: no leader election, always write */
    /* Until when a request may be in flight (hr_leader_until_ms; NULL: no
     * bound), with leading_ud. Installed as the client's write lease while
     * the controller runs, so every write is re-checked right before it is
     * sent and bounded by it (design §10). */
    int64_t (*leading_until)(void *ud);
    void *leading_ud;
    const char *instance; /* events' reportingInstance */
    /* Nodes reconciled at once, each by its own worker (its wave waits for
     * its writes); <= 0: HR_CTL_NODE_WORKERS, at most HR_CTL_NODE_WORKERS_MAX. */
    int workers;
    /* Writes in flight at once (executor.h, notes.h): the resizes of all
     * waves, and as many senders of notes; 0: HR_CTL_WRITE_CONCURRENCY;
     * 1: each worker writes one request at a time, one note sender. */
    int write_concurrency;
    /* Ask for protobuf answers to the writes to pods and events and to the
     * live Node read (--protobuf): the API server encodes, and we read, far
     * less than the JSON of a whole Pod a write. false: JSON. */
    bool protobuf;
    int status_interval_ms; /* HeadroomConfig status check; <= 0: 2000 */
    /* Nothing is reconciled before every watch has listed once: a cache
     * that has the pods but not yet their namespaces or their Node would
     * compute the wrong slack. NULL: treat as synced. */
    bool (*synced)(void *ud);
    void *synced_ud;
    hr_log_sink log;
    void *log_ud;
} hr_controller_opts;

HR_MUST_CHECK hr_status hr_controller_start(const hr_controller_opts *o, hr_controller **out,
                                            hr_err *err);

/* Stop taking work, finish the node in hand, join the threads. */
void hr_controller_stop(hr_controller *c);

/* Enough outstanding writes for clientQPS 50 at 300 ms a write: a loaded
 * API server's latency (bench/RESULTS.md), with room for a raised QPS. */
#define HR_CTL_WRITE_CONCURRENCY 16
/* Nodes reconciled at once. A wave is a live Node read and then its
 * writes, two round trips; at 1,000 nodes x 30 pods, 20 % managed, a wave
 * carries 2-3 resizes, and under churn two workers left 15 % of the newly
 * bound pods unresized before they were gone where eight left 0.2 %
 * (bench/RESULTS.md). An idle worker sleeps on the node queue. */
#define HR_CTL_NODE_WORKERS 8
#define HR_CTL_NODE_WORKERS_MAX 32

/* What hr_controller_config_changed pushed (a bit mask). */
enum {
    HR_CTL_PUSHED_DEBOUNCE = 1u << 0,  /* spec.debouncePeriod */
    HR_CTL_PUSHED_NODE_RATE = 1u << 1, /* spec.rateLimits.perNodePatchesPerSecond */
    /* spec.rateLimits.clientQPS / clientBurst, to the client's limiter */
    HR_CTL_PUSHED_CLIENT_RATE = 1u << 2,
};

/* The configuration in force changed (eff: hr_config_effective's result;
 * only its scalars are read, during the call). Values that differ from
 * what the controller runs with are taken over and passed on — the node
 * rate to the executor, the client rate to opts.client — and the mask of
 * those is returned; the same
 * values again push nothing (0). Thread-safe; see the contract above. */
unsigned hr_controller_config_changed(hr_controller *c, const hr_config *eff);

/* The debounce period in force, in milliseconds. A plain read. */
int64_t hr_controller_debounce_ms(hr_controller *c);

/* The per-node patch rate the executor runs with. A plain read. */
int hr_controller_node_rate(hr_controller *c);

/* Every node, each with its own jittered delay (start-up, new leader). */
void hr_controller_enqueue_all(hr_controller *c);

/* The metrics the controller keeps (render with hr_ctlmetrics_render and
 * hr_controller_render_gauges). */
hr_ctlmetrics *hr_controller_metrics(hr_controller *c);

/* The state of the cluster as design §9.3 exports it: the per-node and
 * per-pod gauges (headroom_node_factor, headroom_node_slack_cores,
 * headroom_node_booked_ratio, headroom_pod_limit_cores) and the totals over
 * them (hr_ctlmetrics_render_totals); series of gone nodes and pods
 * disappear. With leader election (opts.leading) only while this replica
 * leads: nothing at all on a follower, so no series is exported twice. */
void hr_controller_render_gauges(void *c, hr_buf *out);

#endif
