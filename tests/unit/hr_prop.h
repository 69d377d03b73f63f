/*
 * hr_prop.h — the seeded harness the property tests share (test_policy_props.c,
 * test_tenant_props.c, test_group.c): one run seed, from HR_SEED or the clock,
 * printed at start and in every failure so HR_SEED=<seed> replays the exact run;
 * each case draws from a stream of its own (hr_prop_start), so one case can be
 * replayed alone; PFAIL names the property, the case and the seed.
 *
 * Header only, included by one test file of each executable: the state is that
 * file's own (static). A file defines CASES (cases per property) before PROP.
 */
#ifndef HR_TEST_PROP_H
#define HR_TEST_PROP_H

#include <inttypes.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#include <cmocka.h>

#include "util/prng.h"

static uint64_t g_seed;    /* the run's seed, printed on failure */
static const char *g_prop; /* the property being checked */
static int g_case;         /* the case number within it */
static hr_prng rng;

static inline uint64_t hr_prop_seed_from_env(void)
{
    const char *s = getenv("HR_SEED");
    if (s != NULL && *s)
        return strtoull(s, NULL, 0);
    struct timespec ts;
    if (clock_gettime(CLOCK_REALTIME, &ts) != 0)
        return (uint64_t)time(NULL);
    return (uint64_t)ts.tv_sec * 1000000007u ^ (uint64_t)ts.tv_nsec;
}

/* Case k of property prop: its own stream of the run's seed. */
static inline void hr_prop_start(const char *prop, int k)
{
    g_prop = prop;
    g_case = k;
    hr_prng_seed(&rng, g_seed ^ (UINT64_C(0x9e3779b97f4a7c15) * (uint64_t)(k + 1)) ^
                           (uint64_t)(uint8_t)prop[0] << 56 ^ (uint64_t)(uint8_t)prop[1] << 48);
}

static inline int64_t below(int64_t n) /* uniform in [0, n) */
{
    return n <= 1 ? 0 : (int64_t)(hr_prng_next(&rng) % (uint64_t)n);
}
static inline bool chance(int pct)
{
    return below(100) < pct;
}
static inline int64_t between(int64_t lo, int64_t hi) /* uniform in [lo, hi] */
{
    return lo + below(hi - lo + 1);
}

#define PFAIL(...)                                                                                 \
    do {                                                                                           \
        char m_[512];                                                                              \
        snprintf(m_, sizeof m_, __VA_ARGS__);                                                      \
        fail_msg("property %s, case %d: %s (replay with HR_SEED=%" PRIu64 ")", g_prop, g_case, m_, \
                 g_seed);                                                                          \
    } while (0)

/* PROP(fn): a cmocka test test_fn that runs the property fn (CASES cases) and says so. */
#define PROP(fn)                                                                            \
    static void test_##fn(void **state)                                                     \
    {                                                                                       \
        (void)state;                                                                        \
        fn();                                                                               \
        printf("property %s: %d cases passed (seed %" PRIu64 ")\n", g_prop, CASES, g_seed); \
    }

#endif
