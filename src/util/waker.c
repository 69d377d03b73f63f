/*
 * waker.c — event, stop or deadline (see waker.h).
 */
#include "util/waker.h"

#include <errno.h>

#include "util/clock.h"

int hr_waker_init(hr_waker *w)
{
    w->kicked = false;
    w->stopped = false;
    w->quiet_ns = 0;
    int rc = pthread_mutex_init(&w->mu, NULL);
    if (rc != 0)
        return rc;
    rc = hr_mono_cond_init(&w->cv);
    if (rc != 0)
        pthread_mutex_destroy(&w->mu);
    return rc;
}

void hr_waker_destroy(hr_waker *w)
{
    pthread_cond_destroy(&w->cv);
    pthread_mutex_destroy(&w->mu);
}

void hr_waker_kick(hr_waker *w)
{
    pthread_mutex_lock(&w->mu);
    w->kicked = true;
    if (w->quiet_ns == 0 || hr_mono_ns() >= w->quiet_ns)
        pthread_cond_signal(&w->cv);
    pthread_mutex_unlock(&w->mu);
}

void hr_waker_stop(hr_waker *w)
{
    pthread_mutex_lock(&w->mu);
    w->stopped = true;
    pthread_cond_broadcast(&w->cv);
    pthread_mutex_unlock(&w->mu);
}

bool hr_waker_wait(hr_waker *w, int64_t deadline_ns)
{
    pthread_mutex_lock(&w->mu);
    struct timespec ts = hr_mono_timespec(deadline_ns);
    int rc = 0;
    while (!w->kicked && !w->stopped && rc != ETIMEDOUT) {
        if (deadline_ns == HR_WAKER_NEVER)
            rc = pthread_cond_wait(&w->cv, &w->mu);
        else
            rc = pthread_cond_timedwait(&w->cv, &w->mu, &ts);
    }
    w->kicked = false;
    bool alive = !w->stopped;
    pthread_mutex_unlock(&w->mu);
    return alive;
}

bool hr_waker_wait_after(hr_waker *w, int64_t earliest_ns, int64_t deadline_ns)
{
    pthread_mutex_lock(&w->mu);
    w->quiet_ns = earliest_ns;
    for (;;) {
        int64_t now = hr_mono_ns();
        if (w->stopped || now >= deadline_ns || (w->kicked && now >= earliest_ns))
            break;
        /* Before earliest: sleep to it (a kick may be kept by then); after
         * it, to the deadline or a kick. */
        int64_t until = now < earliest_ns && earliest_ns < deadline_ns ? earliest_ns : deadline_ns;
        if (until == HR_WAKER_NEVER) {
            (void)pthread_cond_wait(&w->cv, &w->mu); /* the loop re-reads everything */
        } else {
            struct timespec ts = hr_mono_timespec(until);
            (void)pthread_cond_timedwait(&w->cv, &w->mu, &ts);
        }
    }
    w->quiet_ns = 0;
    w->kicked = false;
    bool alive = !w->stopped;
    pthread_mutex_unlock(&w->mu);
    return alive;
}

bool hr_waker_stopped(hr_waker *w)
{
    pthread_mutex_lock(&w->mu);
    bool s = w->stopped;
    pthread_mutex_unlock(&w->mu);
    return s;
}
