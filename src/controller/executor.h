/*
 * executor.h — carrying out one node's actions against the API server
 * (design §5–§7).
 *
 * For each action, in order: the per-node token bucket (a node's wave of
 * resizes is paced; what does not fit is requeued, never dropped), the
 * "never act on a cache older than our own write" check, the live Node
 * re-read before any increase (a condition that flipped mid-reconcile
 * cannot authorize a raise), then the write, and the outcome table of
 * design §7. Only the leader writes (design §10): leadership is asked
 * before every action, again after the live Node read (a wait of up to the
 * request timeout), and by the client right before each write is sent
 * (after its limiter wait; the client's write lease). A wave that loses
 * leadership stops there and the node is requeued (HR_EXEC_LEASE_REQUEUE_MS):
 * nothing is dropped, and the "already reported" mark of an event that was
 * not sent is taken back, so it is sent by whoever leads next.
 *
 * Writes in flight (design §5). The checks above run in the wave's own
 * thread, one action after the other; the writes that pass them (a
 * resize, or a dry-run annotation, each with what follows it for that pod)
 * are then handed to the executor's write pool (wpool.h) at once, and the
 * wave returns when every one of them has: up to write_concurrency
 * requests are outstanding across all waves, all through the one client
 * limiter, so the rate is clientQPS and not (workers ÷ latency). Per pod
 * the order holds: a wave has at most one action per pod, a node is in
 * one wave at a time (nodequeue.h), and a pod's write and its note
 * (hr_executor_send_note) exclude each other by the pod's key — no two
 * writes for one pod are ever in flight at once. Each write asks
 * leadership and the stop flag again when its turn comes; a write that
 * finds either gone (or is refused for it by the client) halts the rest of
 * the wave: nothing more is sent, the node is requeued.
 */
#ifndef HR_CONTROLLER_EXECUTOR_H
#define HR_CONTROLLER_EXECUTOR_H

#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>

#include "cache/cache.h"
#include "controller/backoff.h"
#include "controller/ctllog.h"
#include "controller/ctlmetrics.h"
#include "controller/nodesnap.h"
#include "controller/notes.h"
#include "controller/reconcile.h"
#include "kube/transport/client.h"
#include "util/err.h"
#include "util/prng.h"

typedef struct hr_executor hr_executor;

typedef struct hr_executor_opts {
    hr_kclient *client;
    hr_backoff *backoff;
    hr_ctlmetrics *metrics;
    /* May we write now? Asked before every action and after every wait
     * (NULL: always). */
    bool (*leading)(void *ud);
    /* Until when a request may be in flight (monotonic ms; NULL: no bound):
     * bounds the live Node read. Writes are bounded by the client's write
     * lease (controller.h installs the same callback there). */
    int64_t (*leading_until)(void *ud);
    void *leading_ud;
    /* Shutdown: checked before every write; the rest of a wave is
     * abandoned (design §10: finish or abandon in-flight work in 10 s). */
    const atomic_bool *stop;
    const char *instance; /* reportingInstance of events (hostname); copied */
    /* Writes of all waves in flight at once (the write pool's threads);
     * <= 1: none concurrent, each wave writes in its own thread, in order. */
    int write_concurrency;
    /* The answers to the writes and the live Node read in protobuf
     * (controller.h); false: JSON. */
    bool protobuf;
    hr_log_sink log; /* NULL: logfmt on stderr */
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

/* Limits first (notes.h): from now on an applied resize's status
 * annotation and event go to q instead of being sent right after it. Call
 * before any hr_execute (the controller does, at start); without it they
 * are sent inline, in order. */
void hr_executor_set_notes(hr_executor *e, hr_notes *q);

/* The hr_note_send_fn of that queue (ud: the executor): the annotation,
 * then the event, only while leading; a note it cannot send is dropped. */
void hr_executor_send_note(void *ud, const hr_note *n);

/* The per-node rate in force. A plain read, under the executor's lock. */
int hr_executor_node_rate(hr_executor *e);

/* How soon a node whose wave lost leadership is looked at again: one
 * election retry period. A replica that leads again by then (a slow
 * renewal) carries on; one that does not skips it (and every node is queued
 * anew when it leads again). */
#define HR_EXEC_LEASE_REQUEUE_MS 2000

typedef struct hr_exec_outcome {
    int64_t requeue_ms; /* -1: node done; else run it again this far from now */
    int64_t hold_ms;    /* > 0: a refused write's back-off: no run sooner, even
                         * for an event (hr_nodequeue_hold); <= requeue_ms */
    uint32_t writes;    /* API writes made */
    bool lease_lost;    /* leadership went during the wave (requeue_ms then <= 2 s) */
} hr_exec_outcome;

HR_MUST_CHECK hr_status hr_execute(hr_executor *e, const hr_nodesnap *s, const hr_reconcile *r,
                                   hr_exec_outcome *out, hr_err *err);

/* Why a planned write did not go in this wave (design §9.3,
 * headroom_pod_held), beside the plan's own reasons. */
#define HR_EXEC_HELD_RATE_LIMIT "rate-limit" /* the node's bucket stopped the wave before it */
#define HR_EXEC_HELD_ERROR "error" /* a 429/5xx/timeout: the node waits its back-off (§7) */

/* hr_execute, also leaving in held[i] (one slot per pod of s->node, NULL
 * on entry) why pod i's planned write did not go: HR_EXEC_HELD_RATE_LIMIT,
 * HR_EXEC_HELD_ERROR, or the reason of a gate the live Node read closed
 * (hr_gate_str: "unavailable", "pressure", "allocatable"); NULL: it went,
 * or had nothing to write, or the wave stopped for leadership or shutdown.
 * held NULL: hr_execute. */
HR_MUST_CHECK hr_status hr_execute_held(hr_executor *e, const hr_nodesnap *s, const hr_reconcile *r,
                                        const char **held, hr_exec_outcome *out, hr_err *err);

/* Retrying writes the server refused with 429, 5xx, a timeout or a lost
 * connection (design §7): jittered exponential back-off (kube/transport/
 * backoff.h) from HR_WRITE_RETRY_BASE_MS, doubling per refusal in a row up
 * to HR_WRITE_RETRY_MAX_MS (so, with the jitter, never more than 45 s);
 * the server's Retry-After (itself at most HR_KRETRY_AFTER_MAX_S) wins
 * when longer. */
#define HR_WRITE_RETRY_BASE_MS 1000L
#define HR_WRITE_RETRY_MAX_MS 30000L

/* The wait after `fails` such refusals in a row before this one (0: the
 * first), when the server asked for retry_after_ms (0: it did not). Pure
 * but for r; deterministic for a seeded r. */
long hr_exec_retry_ms(hr_prng *r, int fails, long retry_after_ms);

/* The executor's own use of it: counts one more refusal in a row and
 * returns how long the node waits. The count is the executor's, not a
 * node's (an overloaded API server refuses everyone: every node backs off,
 * and the jitter spreads them); any accepted write resets it. Thread-safe. */
long hr_executor_write_refused(hr_executor *e, long retry_after_ms);

/* A pod is gone (the API server said 404): forget its last-write record
 * and its dedup marks. uid: the pod's metadata.uid (NULL: none). */
void hr_executor_forget_pod(hr_executor *e, const char *ns, const char *name,
                            const uint8_t uid[16]);

/* What the executor keeps per pod is keyed by namespace, name AND uid, so a
 * pod recreated under the same name (a new uid) inherits neither the
 * last-write resourceVersion nor the "already reported" marks of the old
 * one. hr_executor_sweep drops what belongs to pods and nodes that left the
 * cache: per-pod entries whose ns/name is not cached, or is cached with
 * another uid, and token buckets of nodes the cache knows nothing of (no
 * Node, no placeholder). A pod whose name is not cached at all is also
 * dropped from the back-off table (every park comes with a mark; the table
 * is keyed by name, so a pod recreated under the same name keeps a park
 * until it expires, at most HR_BACKOFF_PERIOD_MS), and queued notes of pods
 * no longer cached as the same pod leave the notes queue (hr_notes_sweep).
 * Each call looks at no more than budget entries of
 * each map, resuming where the last one stopped, so memory follows the
 * cache within a few passes while no call holds the locks long.
 *
 * Call it with the cache lock held (the feeder does, right after the
 * drain): lock order cache lock, then the executor's lock, then the
 * back-off table's (a leaf; controller.h).
 * Returns how many entries were dropped. */
size_t hr_executor_sweep(hr_executor *e, const hr_cache *c, size_t budget);

typedef struct hr_executor_stats {
    size_t last_rv, reported, buckets; /* entries held in each map */
    size_t notes;                      /* notes queued (hr_notes_pending; 0: no queue) */
} hr_executor_stats;

void hr_executor_get_stats(hr_executor *e, hr_executor_stats *out);

/* The most writes the pool has seen in flight at once (0: no pool). Tests. */
int hr_executor_write_peak(hr_executor *e);

/* The marks held for one pod: *last_rv (0: none) and *reported (REP_* mask
 * bits; 0: none). For tests and diagnostics. */
void hr_executor_pod_marks(hr_executor *e, const char *ns, const char *name, const uint8_t uid[16],
                           uint64_t *last_rv, unsigned *reported);

#endif
