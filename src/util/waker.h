/*
 * waker.h — a thread's sleep that ends on an event, a stop or a deadline.
 *
 * The daemon's background threads (the controller's feeder, the
 * HeadroomConfig status writer, the leader election) sleep on one of these
 * instead of polling: each computes the moment its next due event falls
 * (a debounce or back-off expiry, a lease renewal, a retry) and waits until
 * then or until another thread kicks it (something changed) or stops it.
 * Nothing wakes a waker periodically: a quiet daemon sleeps.
 *
 * Contract: one mutex guards the two flags; kick and stop take it, set
 * their flag and signal the condition variable (on the monotonic clock), so
 * a kick that comes before the wait is not lost — the next wait returns at
 * once. Every call is thread-safe; the mutex is a leaf (no lock is taken
 * while holding it), so kick may be called with any other lock held, e.g.
 * the cache lock from a cache observer.
 */
#ifndef HR_UTIL_WAKER_H
#define HR_UTIL_WAKER_H

#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>

#include "util/err.h"

typedef struct hr_waker {
    pthread_mutex_t mu;
    pthread_cond_t cv; /* monotonic */
    bool kicked;       /* under mu: a kick since the last wait returned */
    bool stopped;      /* under mu: hr_waker_stop was called; never cleared */
    int64_t quiet_ns;  /* under mu: a kick before this moment does not signal (wait_after) */
} hr_waker;

/* Returns 0 or the error number of the pthread call that failed. */
HR_MUST_CHECK int hr_waker_init(hr_waker *w);
void hr_waker_destroy(hr_waker *w);

/* Something changed: the current or next wait returns. */
void hr_waker_kick(hr_waker *w);

/* For good: every wait, present and future, returns false at once. */
void hr_waker_stop(hr_waker *w);

/* Sleep until kicked, stopped, or the monotonic instant deadline_ns
 * (HR_WAKER_NEVER: no deadline). Consumes the kick. Returns false once
 * stopped, true otherwise (kicked or the deadline passed). */
#define HR_WAKER_NEVER INT64_MAX
bool hr_waker_wait(hr_waker *w, int64_t deadline_ns);

/* The same, but a kick before the monotonic instant earliest_ns does not
 * wake the thread: it is kept, and the wait returns at earliest_ns. For a
 * thread that acts at most once an interval (the HeadroomConfig status
 * writer): a burst of kicks costs one wakeup, not one each. One waiter
 * only: the quiet time is the waker's. */
bool hr_waker_wait_after(hr_waker *w, int64_t earliest_ns, int64_t deadline_ns);

/* Has hr_waker_stop been called? */
bool hr_waker_stopped(hr_waker *w);

#endif
