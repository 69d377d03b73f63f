/*
 * nodequeue.c — debounced per-node work queue (see nodequeue.h).
 *
 * Entries live in an open-addressing hash table keyed by node name; the
 * earliest due entry is found by a scan. A cluster has thousands of nodes,
 * not millions, and a reconcile costs far more than a scan of a few
 * thousand slots, so a heap would buy nothing measurable here.
 *
 * Waking. Of the workers waiting in hr_nodequeue_wait, at most one (the
 * timer) sleeps until the earliest due time; the rest sleep untimed, on a
 * stack. An add or a requeue wakes someone only when it changes what the
 * timer should do: the timer when the new due time is earlier than its
 * deadline, one sleeper when there is no timer. A worker that takes a node
 * while others still wait, and nobody times them, wakes one sleeper to do
 * it. So under a steady stream of debounced events (each due later than
 * the earliest) an add wakes nobody, and a node's run costs about two
 * wakeups, where waking every waiter on every change cost one per worker
 * per change, all of them scanning the table and sleeping to the same
 * deadline. Each waiter sleeps on a condition variable of its own and is
 * woken by name (a flag, then a broadcast to its one thread):
 * pthread_cond_signal among several waiters can lose a wakeup in glibc
 * before 2.41 (sourceware bug 25847), and Debian 12's 2.36 is one.
 */
#include "nodequeue.h"

#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "util/clock.h"
#include "util/hash.h"

enum { ST_EMPTY = 0, ST_WAITING, ST_RUNNING, ST_IDLE };

/* A worker asleep in hr_nodequeue_wait (on its stack while it waits). */
typedef struct waiter {
    pthread_cond_t cv;   /* this thread's alone */
    struct waiter *next; /* in sleepers */
    bool woken;
} waiter;

typedef struct entry {
    char *name;   /* owned; NULL for an empty slot */
    int64_t due;  /* for ST_WAITING */
    int64_t hold; /* no run before this (hr_nodequeue_hold); 0: none */
    uint8_t state;
    bool dirty; /* an add arrived while running */
    int64_t dirty_due;
} entry;

struct hr_nodequeue {
    pthread_mutex_t mu;
    struct waiter *sleepers; /* untimed, most recent first */
    struct waiter *timer;    /* asleep until timer_due; NULL: none */
    int64_t timer_due;
    uint64_t wakeups; /* waits that returned (woken, or the deadline passed) */
    entry *slots;
    size_t cap;  /* power of two */
    size_t used; /* slots holding a name (any state but EMPTY) */
    size_t waiting;
    bool shutdown;
};

static uint64_t hash_str(const char *s)
{
    return hr_fnv1a64_str(HR_FNV64_BASIS_TABLE, s);
}

static entry *find_slot(entry *slots, size_t cap, const char *name)
{
    size_t i = hash_str(name) & (cap - 1);
    for (;;) {
        entry *e = &slots[i];
        if (e->name == NULL || strcmp(e->name, name) == 0)
            return e;
        i = (i + 1) & (cap - 1);
    }
}

/* Free e's name and close the gap (linear probing: shift back every entry
 * of the run after it that may live in the hole). Lock held. */
static void remove_entry(hr_nodequeue *q, entry *e)
{
    size_t i = (size_t)(e - q->slots);
    free(e->name);
    q->slots[i] = (entry){0};
    q->used--;
    size_t j = i;
    for (;;) {
        j = (j + 1) & (q->cap - 1);
        entry *n = &q->slots[j];
        if (n->name == NULL)
            return;
        size_t home = hash_str(n->name) & (q->cap - 1);
        /* n may move into the hole at i unless home lies cyclically in (i, j]. */
        bool stays = i <= j ? (home > i && home <= j) : (home > i || home <= j);
        if (stays)
            continue;
        q->slots[i] = *n;
        *n = (entry){0};
        i = j;
    }
}

static bool grow(hr_nodequeue *q)
{
    size_t ncap = q->cap * 2;
    entry *ns = calloc(ncap, sizeof *ns);
    if (ns == NULL)
        return false;
    for (size_t i = 0; i < q->cap; i++)
        if (q->slots[i].name != NULL)
            *find_slot(ns, ncap, q->slots[i].name) = q->slots[i];
    free(q->slots);
    q->slots = ns;
    q->cap = ncap;
    return true;
}

hr_status hr_nodequeue_new(hr_nodequeue **out, hr_err *err)
{
    hr_nodequeue *q = calloc(1, sizeof *q);
    if (q == NULL)
        return hr_err_set(err, HR_E_NOMEM, "node queue: out of memory");
    q->cap = 64;
    q->slots = calloc(q->cap, sizeof *q->slots);
    if (q->slots == NULL) {
        free(q);
        return hr_err_set(err, HR_E_NOMEM, "node queue: out of memory");
    }
    if (pthread_mutex_init(&q->mu, NULL) != 0) {
        free(q->slots);
        free(q);
        return hr_err_set(err, HR_E_NOMEM, "node queue: cannot create locks");
    }
    *out = q;
    return HR_OK;
}

void hr_nodequeue_free(hr_nodequeue *q)
{
    if (q == NULL)
        return;
    for (size_t i = 0; i < q->cap; i++)
        free(q->slots[i].name);
    free(q->slots);
    pthread_mutex_destroy(&q->mu);
    free(q);
}

/* Lock held, for this and the two below. Broadcast: w's thread is the
 * only one on w->cv, and the flag survives a spurious return. */
static void wake(waiter *w)
{
    w->woken = true;
    pthread_cond_broadcast(&w->cv);
}

static void wake_sleeper(hr_nodequeue *q)
{
    waiter *w = q->sleepers;
    if (w != NULL) {
        q->sleepers = w->next;
        wake(w);
    }
}

/* A node now waits until due: wake whoever must act on it (the file's
 * header, "Waking"). */
static void woken_for(hr_nodequeue *q, int64_t due)
{
    if (q->timer == NULL)
        wake_sleeper(q);
    else if (due < q->timer_due)
        wake(q->timer);
}

hr_status hr_nodequeue_add(hr_nodequeue *q, const char *node, int64_t now_ms, int64_t delay_ms)
{
    hr_status st = HR_OK;
    int64_t due = now_ms + (delay_ms > 0 ? delay_ms : 0);
    pthread_mutex_lock(&q->mu);
    if ((q->used + 1) * 4 > q->cap * 3 && !grow(q)) {
        pthread_mutex_unlock(&q->mu);
        return HR_E_NOMEM;
    }
    entry *e = find_slot(q->slots, q->cap, node);
    if (e->name == NULL) {
        e->name = strdup(node);
        if (e->name == NULL) {
            pthread_mutex_unlock(&q->mu);
            return HR_E_NOMEM;
        }
        e->state = ST_IDLE;
        q->used++;
    }
    switch (e->state) {
    case ST_IDLE:
        e->state = ST_WAITING;
        e->due = due;
        q->waiting++;
        woken_for(q, due);
        break;
    case ST_WAITING:
        if (due < e->hold)
            due = e->hold; /* a server's back-off is not cut short */
        if (due < e->due) {
            e->due = due;
            woken_for(q, due);
        }
        break;
    case ST_RUNNING: /* its worker's done puts it back */
        if (!e->dirty || due < e->dirty_due)
            e->dirty_due = due;
        e->dirty = true;
        break;
    default: break;
    }
    pthread_mutex_unlock(&q->mu);
    return st;
}

static entry *earliest(hr_nodequeue *q)
{
    entry *best = NULL;
    for (size_t i = 0; i < q->cap; i++) {
        entry *e = &q->slots[i];
        if (e->state == ST_WAITING && (best == NULL || e->due < best->due))
            best = e;
    }
    return best;
}

static const char *pop_locked(hr_nodequeue *q, int64_t now_ms, int64_t *next_due)
{
    entry *e = q->waiting ? earliest(q) : NULL;
    if (next_due != NULL)
        *next_due = e != NULL ? e->due : -1;
    if (e == NULL || e->due > now_ms)
        return NULL;
    e->state = ST_RUNNING;
    e->dirty = false;
    q->waiting--;
    if (next_due != NULL) {
        entry *n = q->waiting ? earliest(q) : NULL;
        *next_due = n != NULL ? n->due : -1;
    }
    return e->name;
}

const char *hr_nodequeue_pop(hr_nodequeue *q, int64_t now_ms, int64_t *next_due_ms)
{
    pthread_mutex_lock(&q->mu);
    const char *n = pop_locked(q, now_ms, next_due_ms);
    pthread_mutex_unlock(&q->mu);
    return n;
}

void hr_nodequeue_hold(hr_nodequeue *q, const char *node, int64_t until_ms)
{
    pthread_mutex_lock(&q->mu);
    entry *e = find_slot(q->slots, q->cap, node);
    if (e->name != NULL && e->state == ST_RUNNING && until_ms > e->hold)
        e->hold = until_ms;
    pthread_mutex_unlock(&q->mu);
}

void hr_nodequeue_done(hr_nodequeue *q, const char *node, int64_t now_ms, int64_t requeue_ms,
                       int64_t redo_ms)
{
    pthread_mutex_lock(&q->mu);
    entry *e = find_slot(q->slots, q->cap, node);
    if (e->name != NULL && e->state == ST_RUNNING) {
        int64_t due = -1;
        if (requeue_ms >= 0)
            due = now_ms + requeue_ms;
        if (e->dirty) {
            int64_t d = now_ms + (redo_ms > 0 ? redo_ms : 0);
            if (d < e->dirty_due)
                d = e->dirty_due; /* never sooner than asked */
            if (d < e->hold)
                d = e->hold;
            if (due < 0 || d < due)
                due = d;
        }
        e->dirty = false;
        if (due >= 0) {
            e->state = ST_WAITING;
            e->due = due;
            q->waiting++;
            woken_for(q, due);
        } else {
            remove_entry(q, e); /* idle: nothing of it is kept */
        }
    }
    pthread_mutex_unlock(&q->mu);
}

const char *hr_nodequeue_wait(hr_nodequeue *q)
{
    waiter me = {.next = NULL, .woken = false};
    /* Without a condition variable (it cannot fail on Linux) the worker
     * looks again every 10 ms instead of sleeping. */
    bool can_sleep = hr_mono_cond_init(&me.cv) == 0;
    const char *n = NULL;
    pthread_mutex_lock(&q->mu);
    while (!q->shutdown) {
        int64_t next = -1;
        n = pop_locked(q, hr_mono_ms(), &next);
        if (n != NULL) {
            /* Nodes still wait and nobody times them: a sleeper will. */
            if (next >= 0 && q->timer == NULL)
                wake_sleeper(q);
            break;
        }
        me.woken = false;
        if (!can_sleep) {
            pthread_mutex_unlock(&q->mu);
            hr_mono_sleep_until(hr_mono_ns() + 10 * 1000000);
            pthread_mutex_lock(&q->mu);
        } else if (next < 0 || q->timer != NULL) {
            me.next = q->sleepers;
            q->sleepers = &me;
            while (!me.woken) /* its waker took it off the stack */
                pthread_cond_wait(&me.cv, &q->mu);
        } else {
            q->timer = &me;
            q->timer_due = next;
            struct timespec ts = hr_mono_timespec(next * 1000000);
            int rc = 0;
            while (!me.woken && rc == 0) /* 0 and not woken: spurious */
                rc = pthread_cond_timedwait(&me.cv, &q->mu, &ts);
            q->timer = NULL;
        }
        q->wakeups++;
    }
    pthread_mutex_unlock(&q->mu);
    if (can_sleep)
        pthread_cond_destroy(&me.cv);
    return n;
}

void hr_nodequeue_shutdown(hr_nodequeue *q)
{
    pthread_mutex_lock(&q->mu);
    q->shutdown = true;
    while (q->sleepers != NULL)
        wake_sleeper(q);
    if (q->timer != NULL)
        wake(q->timer);
    pthread_mutex_unlock(&q->mu);
}

size_t hr_nodequeue_entries(hr_nodequeue *q)
{
    pthread_mutex_lock(&q->mu);
    size_t n = q->used;
    pthread_mutex_unlock(&q->mu);
    return n;
}

uint64_t hr_nodequeue_wakeups(hr_nodequeue *q)
{
    pthread_mutex_lock(&q->mu);
    uint64_t n = q->wakeups;
    pthread_mutex_unlock(&q->mu);
    return n;
}

size_t hr_nodequeue_len(hr_nodequeue *q)
{
    pthread_mutex_lock(&q->mu);
    size_t n = q->waiting;
    pthread_mutex_unlock(&q->mu);
    return n;
}
