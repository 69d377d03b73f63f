/*
 * clock.c — CLOCK_MONOTONIC readings, deadlines and sleeps (see clock.h).
 */
#include "util/clock.h"

#include <errno.h>

int64_t hr_mono_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (int64_t)ts.tv_sec * INT64_C(1000000000) + ts.tv_nsec;
}

int64_t hr_mono_ms(void)
{
    return hr_mono_ns() / 1000000;
}

struct timespec hr_mono_timespec(int64_t ns)
{
    struct timespec ts = {(time_t)(ns / 1000000000), (long)(ns % 1000000000)};
    return ts;
}

int hr_mono_cond_init(pthread_cond_t *cv)
{
    pthread_condattr_t ca;
    int rc = pthread_condattr_init(&ca);
    if (rc != 0)
        return rc;
    rc = pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
    if (rc == 0)
        rc = pthread_cond_init(cv, &ca);
    pthread_condattr_destroy(&ca);
    return rc;
}

void hr_mono_sleep_until(int64_t deadline_ns)
{
    struct timespec ts = hr_mono_timespec(deadline_ns);
    while (clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &ts, NULL) == EINTR)
        ;
}

void hr_mono_sleep_ms(int64_t ms)
{
    hr_mono_sleep_until(hr_mono_ns() + ms * 1000000);
}
