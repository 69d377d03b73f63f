/*
 * limiter.c — token bucket by reservation (see limiter.h).
 */
#include "kube/transport/limiter.h"

#include "util/clock.h"

static void norm(double *qps, int *burst)
{
    if (!(*qps > 0))
        *qps = 50;
    if (*burst <= 0)
        *burst = 100;
}

/* Bring tokens up to now; caller holds mu. A clock that went backwards
 * (it cannot on CLOCK_MONOTONIC, but tests pass any value) earns nothing. */
static void refill(hr_klimiter *l, int64_t now_ns)
{
    if (now_ns > l->last_ns) {
        l->tokens += (double)(now_ns - l->last_ns) * l->qps / 1e9;
        if (l->tokens > l->burst)
            l->tokens = l->burst;
        l->last_ns = now_ns;
    }
}

/* Batched wake-ups (limiter.h): a wait > 0 grows to end on the next tick
 * of one grid on the monotonic clock, so callers whose moments fall in a
 * tick wake together. Caller holds mu. */
static int64_t on_grid(const hr_klimiter *l, int64_t now_ns, int64_t wait)
{
    int64_t tick = (int64_t)(HR_KLIMITER_BATCH * 1e9 / l->qps);
    if (tick > HR_KLIMITER_BATCH_MAX_NS)
        tick = HR_KLIMITER_BATCH_MAX_NS;
    if (wait <= 0 || tick <= 1)
        return wait;
    int64_t at = now_ns + wait;
    return (at + tick - 1) / tick * tick - now_ns;
}

int hr_klimiter_init(hr_klimiter *l, double qps, int burst, int64_t now_ns)
{
    norm(&qps, &burst);
    int rc = pthread_mutex_init(&l->mu, NULL);
    if (rc != 0)
        return rc;
    l->qps = qps;
    l->burst = burst;
    l->tokens = burst;
    l->last_ns = now_ns;
    l->urgent = 0;
    l->yield_next_ns = now_ns;
    return 0;
}

void hr_klimiter_destroy(hr_klimiter *l)
{
    pthread_mutex_destroy(&l->mu);
}

void hr_klimiter_set(hr_klimiter *l, double qps, int burst, int64_t now_ns)
{
    norm(&qps, &burst);
    pthread_mutex_lock(&l->mu);
    refill(l, now_ns);
    /* A debt is time already promised to sleepers: the last of them goes
     * -tokens / qps from now. Keep that moment and re-express it at the
     * new rate, so the next reservation comes one new interval after it —
     * neither ahead of callers already asleep (a raised rate) nor a whole
     * queue's worth later (a lowered one). */
    if (l->tokens < 0)
        l->tokens = l->tokens * qps / l->qps;
    l->qps = qps;
    l->burst = burst;
    if (l->tokens > l->burst)
        l->tokens = l->burst;
    pthread_mutex_unlock(&l->mu);
}

void hr_klimiter_get(hr_klimiter *l, double *qps, int *burst)
{
    pthread_mutex_lock(&l->mu);
    *qps = l->qps;
    *burst = (int)l->burst;
    pthread_mutex_unlock(&l->mu);
}

int64_t hr_klimiter_reserve(hr_klimiter *l, int64_t now_ns)
{
    pthread_mutex_lock(&l->mu);
    refill(l, now_ns);
    l->tokens -= 1;
    int64_t wait = 0;
    if (l->tokens < 0)
        wait = on_grid(l, now_ns, (int64_t)(-l->tokens * 1e9 / l->qps + 0.5));
    pthread_mutex_unlock(&l->mu);
    return wait;
}

bool hr_klimiter_try(hr_klimiter *l, int64_t now_ns)
{
    pthread_mutex_lock(&l->mu);
    refill(l, now_ns);
    bool ok = l->tokens >= 1;
    if (ok)
        l->tokens -= 1;
    pthread_mutex_unlock(&l->mu);
    return ok;
}

/* ns until keep + 1 whole tokens are in the bucket, on the grid; caller
 * holds mu, has refilled. */
static int64_t ready_locked(const hr_klimiter *l, int64_t now_ns, double keep)
{
    double want = keep + 1 < l->burst ? keep + 1 : l->burst;
    if (l->tokens >= want)
        return 0;
    return on_grid(l, now_ns, (int64_t)((want - l->tokens) * 1e9 / l->qps + 0.5));
}

int64_t hr_klimiter_ready_in(hr_klimiter *l, int64_t now_ns, double keep)
{
    pthread_mutex_lock(&l->mu);
    refill(l, now_ns);
    int64_t wait = ready_locked(l, now_ns, keep);
    pthread_mutex_unlock(&l->mu);
    return wait;
}

int64_t hr_klimiter_urgent_add(hr_klimiter *l, int64_t delta)
{
    pthread_mutex_lock(&l->mu);
    l->urgent += delta;
    if (l->urgent < 0)
        l->urgent = 0; /* an owner's bug must not starve the yielding writers */
    int64_t n = l->urgent;
    pthread_mutex_unlock(&l->mu);
    return n;
}

int64_t hr_klimiter_yield_claim(hr_klimiter *l, int64_t now_ns, double keep)
{
    pthread_mutex_lock(&l->mu);
    refill(l, now_ns);
    int64_t wait = 0;
    if (l->urgent > 0) {
        /* Urgent writes outstanding: only the minimum share. */
        if (now_ns < l->yield_next_ns)
            wait = on_grid(l, now_ns, l->yield_next_ns - now_ns);
        else
            l->yield_next_ns = now_ns + (int64_t)(HR_KLIMITER_YIELD_EVERY * 1e9 / l->qps + 0.5);
    } else {
        wait = ready_locked(l, now_ns, keep);
    }
    pthread_mutex_unlock(&l->mu);
    return wait;
}

int hr_kstop_init(hr_kstop *s)
{
    s->on = false;
    int rc = pthread_mutex_init(&s->mu, NULL);
    if (rc != 0)
        return rc;
    rc = hr_mono_cond_init(&s->cv);
    if (rc != 0)
        pthread_mutex_destroy(&s->mu);
    return rc;
}

void hr_kstop_destroy(hr_kstop *s)
{
    pthread_cond_destroy(&s->cv);
    pthread_mutex_destroy(&s->mu);
}

void hr_kstop_set(hr_kstop *s, bool on)
{
    pthread_mutex_lock(&s->mu);
    s->on = on;
    pthread_cond_broadcast(&s->cv);
    pthread_mutex_unlock(&s->mu);
}

hr_status hr_klimiter_wait_stop(hr_klimiter *l, hr_kstop *stop)
{
    int64_t now = hr_mono_ns();
    int64_t wait = hr_klimiter_reserve(l, now);
    if (wait <= 0)
        return HR_OK;
    int64_t deadline = now + wait;
    if (stop == NULL) {
        hr_mono_sleep_until(deadline);
        return HR_OK;
    }
    struct timespec ts = hr_mono_timespec(deadline);
    pthread_mutex_lock(&stop->mu);
    while (!stop->on && hr_mono_ns() < deadline)
        (void)pthread_cond_timedwait(&stop->cv, &stop->mu, &ts); /* the loop re-reads both */
    bool stopped = stop->on;
    pthread_mutex_unlock(&stop->mu);
    if (!stopped)
        return HR_OK;
    /* Unused: the debt it made goes, so the bucket is as if the caller had
     * never come (reservations given out keep theirs). */
    pthread_mutex_lock(&l->mu);
    l->tokens += 1;
    if (l->tokens > l->burst)
        l->tokens = l->burst;
    pthread_mutex_unlock(&l->mu);
    return HR_E_CANCELED;
}

void hr_klimiter_wait(hr_klimiter *l)
{
    int64_t now = hr_mono_ns();
    int64_t wait = hr_klimiter_reserve(l, now);
    if (wait <= 0)
        return;
    /* Absolute deadline: a signal that interrupts the sleep does not
     * stretch it. */
    hr_mono_sleep_until(now + wait);
}
