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

bool hr_waker_stopped(hr_waker *w)
{
    pthread_mutex_lock(&w->mu);
    bool s = w->stopped;
    pthread_mutex_unlock(&w->mu);
    return s;
}
