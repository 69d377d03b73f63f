/*
 * limiter.h — the client-side token bucket that paces API writes.
 *
 * design §5 puts every write through one limiter (clientQPS/clientBurst) so a
 * reconcile storm cannot hammer the API server. It works by reservation, as
 * Go's rate.Limiter.Wait does: a caller always takes its token at once, the
 * bucket may go negative, and the caller sleeps until the moment its token
 * would have existed. That keeps callers in arrival order without a
 * condition variable and gives a caller who only asks (hr_klimiter_try) a
 * correct answer about the future.
 *
 * Two kinds of writer share it ("limits first", design §5): the
 * urgent ones (resizes) and the ones that yield to them (a resize's note:
 * status annotation, event). The rule lives here, in one place
 * (hr_klimiter_yield_claim): while any urgent write is outstanding —
 * counted by its owner from the moment it is decided until its answer
 * (hr_klimiter_urgent_add), so also while it waits in a queue before the
 * bucket or is in flight after its token — a yielding writer goes only on
 * its minimum share, one per HR_KLIMITER_YIELD_EVERY tokens' worth of time
 * (at 50 QPS one a second): urgent writes get the rest, so N of them are
 * done in about N ÷ qps seconds, and yielding writers are never starved by
 * endless urgent ones. With none outstanding, a yielding writer goes when
 * the bucket holds a token beyond `keep` (the part of the burst left for
 * the next urgent writes). Either way it then takes its token(s) as any
 * writer does (reserve/wait), so the total stays within qps.
 *
 * Batched wake-ups: every wait this file hands out (a reservation's, a
 * yielding writer's) ends on the next tick of one grid on the monotonic
 * clock, HR_KLIMITER_BATCH intervals (1/qps) wide and at most
 * HR_KLIMITER_BATCH_MAX_NS (at 50 QPS: 100 ms, five tokens). The writers
 * whose moments fall in one tick wake together and share the machine's
 * wake-up and a pass of the client's connection, where one at a time each
 * paid its own (bench/JOURNAL.md "client-cost": a write that comes alone
 * costs two to three times one that comes with others). No write goes
 * before its token; a write waits at most one tick longer; a reservation
 * that needs no wait still goes at once, so a reaction's first writes
 * (the burst) are not delayed.
 *
 * Thread-safe. Time is passed in (monotonic nanoseconds) so tests can run
 * the bucket on a fake clock; hr_klimiter_wait uses the real one.
 */
#ifndef HR_KUBE_LIMITER_H
#define HR_KUBE_LIMITER_H

#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>

#include "util/err.h"

typedef struct hr_klimiter {
    pthread_mutex_t mu;
    double qps;            /* tokens per second, > 0 */
    double burst;          /* bucket size, >= 1 */
    double tokens;         /* may be negative: reserved by sleepers */
    int64_t last_ns;       /* when tokens was last brought up to date */
    int64_t urgent;        /* urgent writes outstanding (hr_klimiter_urgent_add), >= 0 */
    int64_t yield_next_ns; /* while urgent > 0: the next yielding writer's share, not before */
} hr_klimiter;

/* qps <= 0 → 50, burst <= 0 → 100 (the defaults of design §1.1). The bucket
 * starts full. Returns 0, or an errno value when the mutex cannot be made. */
HR_MUST_CHECK int hr_klimiter_init(hr_klimiter *l, double qps, int burst, int64_t now_ns);
void hr_klimiter_destroy(hr_klimiter *l);

/* Change rate and size live; the next reservation is paced by them.
 * Tokens earned so far at the old rate are kept (capped at the new burst);
 * reservations already made keep the moment they were given, and the next
 * one comes one new interval (1/qps) after the last of them. Safe against
 * concurrent reservations (the bucket's mutex is a leaf lock: never held
 * while sleeping or taking another). */
void hr_klimiter_set(hr_klimiter *l, double qps, int burst, int64_t now_ns);

/* The rate and burst in force. */
void hr_klimiter_get(hr_klimiter *l, double *qps, int *burst);

/* The grid of batched wake-ups (see the top). */
#define HR_KLIMITER_BATCH 5
#define HR_KLIMITER_BATCH_MAX_NS 100000000LL

/* Take one token: returns how many ns the caller must wait before using it
 * (0: go now; otherwise a wait that ends on a tick). The token is taken
 * either way. */
int64_t hr_klimiter_reserve(hr_klimiter *l, int64_t now_ns);

/* Take one token only if it is available now. */
bool hr_klimiter_try(hr_klimiter *l, int64_t now_ns);

/* How long until the bucket holds keep + 1 whole tokens unreserved (0:
 * now), taking nothing: a low-priority writer waits for this to be 0, so
 * it spends only tokens the reserving writers leave — they keep the bucket
 * in debt while they queue — and never the last keep of the burst. */
int64_t hr_klimiter_ready_in(hr_klimiter *l, int64_t now_ns, double keep);

/* Count urgent writes outstanding: +n when they are decided, -n when
 * their answers are in (or they were dropped). Returns the count after
 * (never below 0). */
int64_t hr_klimiter_urgent_add(hr_klimiter *l, int64_t delta);

/* A yielding writer asks to go (see the top): 0 — go now (while urgent
 * writes are outstanding this uses up the share until one share period
 * from now); otherwise how many ns until asking again can succeed (an
 * urgent count dropping to 0 may make it sooner: its owner wakes the
 * yielding writers). Takes no token. */
#define HR_KLIMITER_YIELD_EVERY 50
int64_t hr_klimiter_yield_claim(hr_klimiter *l, int64_t now_ns, double keep);

/* Reserve and sleep on the monotonic clock (util/clock.h) until the token
 * is ours. */
void hr_klimiter_wait(hr_klimiter *l);

/* A flag that wakes the limiter's waiters when it is set (shutdown: the
 * client's hr_kclient_abandon_writes). A waiter sleeps on its condition
 * variable until its token's moment or the flag, never on a timer slice:
 * sixteen writers queued for tokens 20 ms apart wake once each, not a
 * hundred times a second. Contract: mu guards on; set takes it and
 * broadcasts, so a flag set before a wait is seen by it; mu is a leaf. */
typedef struct hr_kstop {
    pthread_mutex_t mu;
    pthread_cond_t cv; /* monotonic */
    bool on;           /* under mu */
} hr_kstop;

/* 0 or the error number of the pthread call that failed. */
HR_MUST_CHECK int hr_kstop_init(hr_kstop *s);
void hr_kstop_destroy(hr_kstop *s);
void hr_kstop_set(hr_kstop *s, bool on);

/* The same as hr_klimiter_wait, but a waiter gives up as soon as stop is
 * set (shutdown, design §10: a worker must not hold the process up for a
 * token it will not use): HR_E_CANCELED, and the token goes back to the
 * bucket. stop may be NULL (never). HR_OK: the token is ours. */
HR_MUST_CHECK hr_status hr_klimiter_wait_stop(hr_klimiter *l, hr_kstop *stop);

#endif
