/*
 * prng.c — splitmix64 and the draws built on it (see prng.h).
 */
#include "util/prng.h"

#include <sys/random.h>

#include "util/clock.h"

void hr_prng_seed(hr_prng *r, uint64_t seed)
{
    r->s = seed;
}

void hr_prng_seed_random(hr_prng *r)
{
    uint64_t seed;
    if (getrandom(&seed, sizeof seed, GRND_NONBLOCK) != (ssize_t)sizeof seed)
        seed = (uint64_t)hr_mono_ns() ^ (uint64_t)(uintptr_t)r;
    r->s = seed;
}

uint64_t hr_prng_next(hr_prng *r)
{
    uint64_t z = (r->s += UINT64_C(0x9E3779B97F4A7C15));
    z = (z ^ (z >> 30)) * UINT64_C(0xBF58476D1CE4E5B9);
    z = (z ^ (z >> 27)) * UINT64_C(0x94D049BB133111EB);
    return z ^ (z >> 31);
}

uint64_t hr_prng_below(hr_prng *r, uint64_t n)
{
    uint64_t x = hr_prng_next(r);
    return n ? x % n : 0;
}

double hr_prng_unit(hr_prng *r)
{
    /* 53 random bits: every double in [0,1) this can produce is exact. */
    return (double)(hr_prng_next(r) >> 11) * 0x1.0p-53;
}

int64_t hr_prng_jitter(hr_prng *r, int64_t period)
{
    if (period <= 0)
        return 0;
    return period - (int64_t)hr_prng_below(r, (uint64_t)(period / 2) + 1);
}
