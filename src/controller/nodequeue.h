/*
 * nodequeue.h — the controller's work queue: node names, debounced.
 *
 * The unit of work is a node (design §5): every scheduling event on a node
 * changes every managed limit there, so events are collapsed per node. A
 * node is in one of three states:
 *
 *   idle     — not in the queue (nothing of it is kept)
 *   waiting  — due at some time; further adds keep the EARLIER due time,
 *              so a burst of events computes once, and the first event of
 *              the burst is never delayed by more than one debounce period
 *   running  — handed out to a worker; adds during the run mark it dirty,
 *              and finishing a dirty node puts it back as waiting, so one
 *              node is never reconciled by two workers at once and no event
 *              that arrived mid-run is lost
 *
 * Time is passed in (milliseconds on any monotonic clock) so the logic is
 * deterministic under test; hr_nodequeue_wait wraps it for the real
 * workers, each asleep on a condition variable of its own (nodequeue.c,
 * "Waking"). The queue owns copies of the names.
 */
#ifndef HR_CONTROLLER_NODEQUEUE_H
#define HR_CONTROLLER_NODEQUEUE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "util/err.h"

typedef struct hr_nodequeue hr_nodequeue;

HR_MUST_CHECK hr_status hr_nodequeue_new(hr_nodequeue **out, hr_err *err);
void hr_nodequeue_free(hr_nodequeue *q);

/* Ask for node to be reconciled no later than now + delay_ms. */
HR_MUST_CHECK hr_status hr_nodequeue_add(hr_nodequeue *q, const char *node, int64_t now_ms,
                                         int64_t delay_ms);

/* Non-blocking: the earliest node due at now, marked running; NULL when
 * none is due. It wakes no waiter: a queue is served by this (the tests)
 * or by hr_nodequeue_wait (the workers), not both. *next_due_ms (may be
 * NULL) receives the earliest future due time, or -1 when nothing waits.
 * The returned name stays valid until hr_nodequeue_done for it. */
const char *hr_nodequeue_pop(hr_nodequeue *q, int64_t now_ms, int64_t *next_due_ms);

/* While node runs: no run of it before until_ms, whatever is added until
 * then — the back-off a refused write asked for (design §7: a server's
 * Retry-After is honoured; an event on the node does not cut it short).
 * Kept until the node is idle; the worker requeues it at least that far. */
void hr_nodequeue_hold(hr_nodequeue *q, const char *node, int64_t until_ms);

/* The worker finished node. requeue_ms >= 0 asks for another run that far
 * from now (rate-limited or failed work is requeued, never dropped); a node
 * marked dirty during the run comes back at the due time its event asked
 * for, and no sooner than redo_ms from now. */
void hr_nodequeue_done(hr_nodequeue *q, const char *node, int64_t now_ms, int64_t requeue_ms,
                       int64_t redo_ms);

/* Blocking pop for worker threads: waits until a node is due or the queue
 * is shut down (then returns NULL). */
const char *hr_nodequeue_wait(hr_nodequeue *q);

/* How many times a worker in hr_nodequeue_wait woke (woken, or its
 * deadline passed; a spurious return is not counted) and looked again: the
 * cost of waking, for tests. */
uint64_t hr_nodequeue_wakeups(hr_nodequeue *q);

/* Wake every waiter; hr_nodequeue_wait returns NULL from then on. */
void hr_nodequeue_shutdown(hr_nodequeue *q);

size_t hr_nodequeue_len(hr_nodequeue *q);

/* Entries held (waiting or running). An idle node holds nothing: a node
 * done with no further work is freed, so the queue's memory follows the
 * nodes with work in hand, not every node ever seen. */
size_t hr_nodequeue_entries(hr_nodequeue *q);

#endif
