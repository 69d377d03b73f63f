/*
 * backoff.h — jittered exponential back-off.
 *
 * Many controllers retrying in lock-step after an API server restart turn a
 * recovery into a thundering herd; a random factor in [0.5, 1.5) spreads
 * them out. rand() is neither thread-safe nor private (any library may
 * reseed it), so each user keeps its own generator state: hr_kclient has
 * one (hr_kclient_backoff_ms), and hr_kbackoff_ms, which takes no client,
 * uses one per thread.
 */
#ifndef HR_KUBE_BACKOFF_H
#define HR_KUBE_BACKOFF_H

#include "util/prng.h"

/* Jittered exponential back-off: attempt 0,1,2… → base·2^attempt capped at
 * max, times a random factor in [0.5, 1.5); Retry-After wins when larger. */
long hr_kbackoff_ms(int attempt, long base_ms, long max_ms, long retry_after_ms);

/* hr_kbackoff_ms with an explicit generator (deterministic in tests). */
long hr_kbackoff_ms_r(hr_prng *r, int attempt, long base_ms, long max_ms, long retry_after_ms);

#endif
