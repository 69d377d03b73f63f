/*
 * backoff.c — jittered exponential back-off (see backoff.h) on splitmix64.
 *
 * splitmix64 is tiny, has no bad seeds and passes BigCrush; back-off needs
 * spread, not cryptographic strength.
 */
#include "kube/transport/backoff.h"

#include <sys/random.h>
#include <time.h>

void hr_krand_seed(hr_krand *r, uint64_t seed)
{
    if (seed == 0) {
        if (getrandom(&seed, sizeof seed, GRND_NONBLOCK) != (ssize_t)sizeof seed) {
            struct timespec ts;
            clock_gettime(CLOCK_MONOTONIC, &ts);
            seed = (uint64_t)ts.tv_nsec ^ ((uint64_t)ts.tv_sec << 32) ^
                   (uint64_t)(uintptr_t)r;
        }
    }
    r->s = seed;
}

uint64_t hr_krand_next(hr_krand *r)
{
    uint64_t z = (r->s += UINT64_C(0x9E3779B97F4A7C15));
    z = (z ^ (z >> 30)) * UINT64_C(0xBF58476D1CE4E5B9);
    z = (z ^ (z >> 27)) * UINT64_C(0x94D049BB133111EB);
    return z ^ (z >> 31);
}

double hr_krand_unit(hr_krand *r)
{
    /* 53 random bits: every double in [0,1) this can produce is exact. */
    return (double)(hr_krand_next(r) >> 11) * 0x1.0p-53;
}

long hr_kbackoff_ms_r(hr_krand *r, int attempt, long base_ms, long max_ms,
                      long retry_after_ms)
{
    if (base_ms < 1)
        base_ms = 1;
    if (max_ms < base_ms)
        max_ms = base_ms;
    if (attempt < 0)
        attempt = 0;
    /* Double until the cap; counting instead of shifting cannot overflow. */
    long d = base_ms;
    for (int i = 0; i < attempt && d < max_ms; i++)
        d = d > max_ms / 2 ? max_ms : d * 2;
    if (d > max_ms)
        d = max_ms;
    long j = (long)((double)d * (0.5 + hr_krand_unit(r)));
    if (j < 1)
        j = 1;
    return retry_after_ms > j ? retry_after_ms : j;
}

long hr_kbackoff_ms(int attempt, long base_ms, long max_ms, long retry_after_ms)
{
    /* The contract gives no client to hold the generator, so each thread
     * keeps its own: no lock, and no state shared between threads. */
    static _Thread_local hr_krand tr;
    static _Thread_local int seeded;
    if (!seeded) {
        hr_krand_seed(&tr, 0);
        seeded = 1;
    }
    return hr_kbackoff_ms_r(&tr, attempt, base_ms, max_ms, retry_after_ms);
}
