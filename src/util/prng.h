/*
 * prng.h — the one pseudo-random generator: splitmix64, for jitter.
 *
 * Many controllers and watches retrying in lock-step after an API server
 * restart turn a recovery into a thundering herd; debounce periods,
 * back-offs and watch timeouts are spread by a random factor (design §5).
 * rand() is neither thread-safe nor private (any library may reseed it),
 * so each user keeps its own generator state and guards it itself.
 *
 * splitmix64 is tiny, has no bad seeds and passes BigCrush; jitter needs
 * spread, not cryptographic strength. Never use it for secrets.
 */
#ifndef HR_UTIL_PRNG_H
#define HR_UTIL_PRNG_H

#include <stdint.h>

typedef struct hr_prng {
    uint64_t s;
} hr_prng;

/* Seed as given (any value, 0 included): the same seed gives the same
 * sequence, for tests and benchmarks. */
void hr_prng_seed(hr_prng *r, uint64_t seed);
/* Seed from the kernel (getrandom), falling back to the clock and the
 * address of r when that fails. */
void hr_prng_seed_random(hr_prng *r);

uint64_t hr_prng_next(hr_prng *r);
/* next % n: uniform in [0, n) but for a bias below n / 2^64; 0 when n is 0.
 * Draws once either way. */
uint64_t hr_prng_below(hr_prng *r, uint64_t n);
/* Uniform in [0, 1), from 53 random bits. */
double hr_prng_unit(hr_prng *r);
/* The second half of period: uniform in [period/2, period], so a delay
 * drawn here is never longer than period; 0 (and no draw) when period <= 0. */
int64_t hr_prng_jitter(hr_prng *r, int64_t period);

#endif
