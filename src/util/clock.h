/*
 * clock.h — the one monotonic clock.
 *
 * Every delay, deadline and duration in the daemon (debounce, back-off,
 * leases, rate limits, request timings) is measured on CLOCK_MONOTONIC,
 * which never jumps when the wall clock is set. Code that tests must drive
 * with a fake clock (the node queue, the token bucket) takes "now" as an
 * argument and its callers read it here; nothing else reads the clock.
 *
 * Wall-clock time (timestamps written to the API or to logs) is not here:
 * see kube/ktime.h.
 */
#ifndef HR_UTIL_CLOCK_H
#define HR_UTIL_CLOCK_H

#include <pthread.h>
#include <stdint.h>
#include <time.h>

#include "util/err.h"

/* Monotonic time since an arbitrary start, in nanoseconds / milliseconds
 * (hr_mono_ms() == hr_mono_ns() / 1000000, truncated). */
int64_t hr_mono_ns(void);
int64_t hr_mono_ms(void);

/* A monotonic instant in nanoseconds as a timespec, for the absolute
 * deadlines of pthread_cond_timedwait on a hr_mono_cond_init variable. */
struct timespec hr_mono_timespec(int64_t ns);

/* Initialise a condition variable whose timed waits use the monotonic
 * clock. Returns 0 or the error number pthread_cond_init returned. */
HR_MUST_CHECK int hr_mono_cond_init(pthread_cond_t *cv);

/* Sleep until the monotonic instant deadline_ns; a signal that interrupts
 * the sleep does not stretch it. Returns at once if it has passed. */
void hr_mono_sleep_until(int64_t deadline_ns);

/* Sleep ms milliseconds, as hr_mono_sleep_until(hr_mono_ns() + ms ms). */
void hr_mono_sleep_ms(int64_t ms);

#endif
