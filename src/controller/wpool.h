/*
 * wpool.h — a few threads that send a wave's writes at once (design
 * §5 "Writes in flight").
 *
 * Why: a write to a loaded API server takes 100–200 ms, so writers that
 * each wait for their answer before the next write cap the controller at
 * (writers ÷ latency) writes a second, whatever clientQPS says: two node
 * workers wrote ~5 resizes a second to a starved API server. The client
 * limiter (clientQPS/clientBurst) sets the rate; this pool only lets
 * enough requests be outstanding for that rate to be reached.
 *
 * A caller hands a batch — fn(ud, i) for every i below n — and waits until
 * every item has returned; the items run on the pool's threads, at most
 * `threads` at once across all callers, batches in the order they came,
 * items of a batch in index order (a later item may finish first). The
 * caller's thread does none of the work, so `threads` is the bound on
 * writes in flight. What makes two items safe to run at once is the
 * caller's business (the executor: one item per pod, see executor.c).
 *
 * Contract: one mutex guards the queue and the counters; it is a leaf (no
 * item runs under it). Idle threads sleep on a condition variable: no
 * timer. hr_wpool_stop lets the threads finish what is queued (items see
 * the caller's own stop flag and return quickly) and joins them; a batch
 * handed after the stop began runs inline in the caller's thread.
 */
#ifndef HR_CONTROLLER_WPOOL_H
#define HR_CONTROLLER_WPOOL_H

#include <stddef.h>

#include "util/err.h"

typedef struct hr_wpool hr_wpool;

typedef void (*hr_wjob_fn)(void *ud, size_t i);

/* threads: 1 to HR_WPOOL_MAX (clamped). */
#define HR_WPOOL_MAX 64
HR_MUST_CHECK hr_status hr_wpool_start(int threads, hr_wpool **out, hr_err *err);
/* NULL is fine. No hr_wpool_run may be waiting when it returns. */
void hr_wpool_stop(hr_wpool *p);

/* fn(ud, i) for i in [0, n); returns when every call has returned. p NULL
 * (or stopping): inline, in order, on the caller's thread. */
void hr_wpool_run(hr_wpool *p, hr_wjob_fn fn, void *ud, size_t n);

/* The pool's size, and the most items seen running at once (tests). */
int hr_wpool_threads(const hr_wpool *p);
int hr_wpool_peak(hr_wpool *p);

#endif
