/*
 * backoff.c — jittered exponential back-off (see backoff.h) on the shared
 * generator (util/prng.h).
 */
#include "kube/transport/backoff.h"

long hr_kbackoff_ms_r(hr_prng *r, int attempt, long base_ms, long max_ms, long retry_after_ms)
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
    long j = (long)((double)d * (0.5 + hr_prng_unit(r)));
    if (j < 1)
        j = 1;
    return retry_after_ms > j ? retry_after_ms : j;
}

long hr_kbackoff_ms(int attempt, long base_ms, long max_ms, long retry_after_ms)
{
    /* The contract gives no client to hold the generator, so each thread
     * keeps its own: no lock, and no state shared between threads. */
    static _Thread_local hr_prng tr;
    static _Thread_local int seeded;
    if (!seeded) {
        hr_prng_seed_random(&tr);
        seeded = 1;
    }
    return hr_kbackoff_ms_r(&tr, attempt, base_ms, max_ms, retry_after_ms);
}
