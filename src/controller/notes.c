/*
 * notes.c — the queue of status annotations and events that follow the
 * resizes (see notes.h).
 *
 * A small array in arrival order, coalesced by key with a linear scan: it
 * holds at most one entry per pod resized since the notes last caught up,
 * and each entry costs one API write, far more than the scan.
 *
 * Several senders (threads) take notes from the one queue; a note whose
 * pod another sender has in hand (a newer note put after the older was
 * taken) waits in the queue until that one is sent, so a pod's notes go out
 * one at a time and in order. A sender that takes a note while more wait
 * kicks the next sender awake.
 */
#include "controller/notes.h"

#include <pthread.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "util/clock.h"
#include "util/waker.h"

typedef struct entry {
    char *key, *ns, *name, *patch, *event; /* owned; event may be NULL */
} entry;

struct hr_notes {
    hr_kclient *client;
    hr_note_send_fn send;
    void *ud;
    pthread_t thread[HR_NOTES_SENDERS_MAX];
    int n_thr;
    hr_waker wake;      /* kicked by put, stopped by hr_notes_stop */
    pthread_mutex_t mu; /* guards e, n, cap, hand */
    entry *e;
    size_t n, cap;
    size_t sweep_at;                        /* where the next hr_notes_sweep looks */
    const char *hand[HR_NOTES_SENDERS_MAX]; /* the key each sender is sending; NULL: none */
    struct hr_notes_sender {
        hr_notes *q;
        int slot;
    } snd[HR_NOTES_SENDERS_MAX]; /* each sender thread's argument */
};

static void entry_free(entry *x)
{
    free(x->key);
    free(x->ns);
    free(x->name);
    free(x->patch);
    free(x->event);
}

static char *dup_or_null(const char *s, bool *ok)
{
    if (s == NULL)
        return NULL;
    char *d = strdup(s);
    if (d == NULL)
        *ok = false;
    return d;
}

bool hr_notes_put(hr_notes *q, const hr_note *n)
{
    bool ok = true;
    entry x = {dup_or_null(n->key, &ok), dup_or_null(n->ns, &ok), dup_or_null(n->name, &ok),
               dup_or_null(n->patch, &ok), dup_or_null(n->event, &ok)};
    if (!ok || x.key == NULL || x.patch == NULL) {
        entry_free(&x);
        return false;
    }
    pthread_mutex_lock(&q->mu);
    size_t i = 0;
    while (i < q->n && strcmp(q->e[i].key, x.key) != 0)
        i++;
    if (i < q->n) {
        /* Coalesced: the newer note says the latest; an event of the older
         * one not yet sent goes only if the newer has none. */
        if (x.event == NULL) {
            x.event = q->e[i].event;
            q->e[i].event = NULL;
        }
        entry_free(&q->e[i]);
        q->e[i] = x;
    } else {
        if (q->n == q->cap) {
            size_t nc = q->cap ? q->cap * 2 : 64;
            entry *ne = realloc(q->e, nc * sizeof *ne);
            if (ne == NULL) {
                pthread_mutex_unlock(&q->mu);
                entry_free(&x);
                return false;
            }
            q->e = ne;
            q->cap = nc;
        }
        q->e[q->n++] = x;
    }
    pthread_mutex_unlock(&q->mu);
    hr_waker_kick(&q->wake);
    return true;
}

size_t hr_notes_pending(hr_notes *q)
{
    pthread_mutex_lock(&q->mu);
    size_t n = q->n;
    pthread_mutex_unlock(&q->mu);
    return n;
}

size_t hr_notes_sweep(hr_notes *q, hr_notes_live_fn live, void *ud, size_t budget)
{
    size_t dropped = 0;
    pthread_mutex_lock(&q->mu);
    if (q->n == 0) { /* nothing queued (q->e may be NULL) */
        pthread_mutex_unlock(&q->mu);
        return 0;
    }
    if (q->sweep_at >= q->n)
        q->sweep_at = 0;
    size_t r = q->sweep_at, w = q->sweep_at,
           end = q->n - q->sweep_at > budget ? q->sweep_at + budget : q->n;
    for (; r < end; r++) {
        if (live(ud, q->e[r].key)) {
            q->e[w++] = q->e[r];
            continue;
        }
        entry_free(&q->e[r]);
        dropped++;
    }
    memmove(q->e + w, q->e + end, (q->n - end) * sizeof *q->e);
    q->n -= dropped;
    q->sweep_at = w < q->n ? w : 0;
    pthread_mutex_unlock(&q->mu);
    return dropped;
}

void hr_notes_wake(hr_notes *q)
{
    if (q != NULL)
        hr_waker_kick(&q->wake);
}

bool hr_notes_stopping(hr_notes *q)
{
    return hr_waker_stopped(&q->wake);
}

/* Has another sender this key in hand? Lock held. */
static bool in_hand(const hr_notes *q, const char *key)
{
    for (int i = 0; i < q->n_thr; i++)
        if (q->hand[i] != NULL && strcmp(q->hand[i], key) == 0)
            return true;
    return false;
}

/* The oldest note whose pod no other sender has in hand, taken out of the
 * queue and put in sender slot's hand; false when there is none. *more:
 * notes are left. */
static bool take(hr_notes *q, int slot, entry *out, bool *more)
{
    pthread_mutex_lock(&q->mu);
    size_t i = 0;
    while (i < q->n && in_hand(q, q->e[i].key))
        i++;
    bool have = i < q->n;
    if (have) {
        *out = q->e[i];
        memmove(q->e + i, q->e + i + 1, (q->n - i - 1) * sizeof *q->e);
        q->n--;
        q->hand[slot] = out->key;
    }
    *more = q->n > 0;
    pthread_mutex_unlock(&q->mu);
    return have;
}

static void drop_hand(hr_notes *q, int slot)
{
    pthread_mutex_lock(&q->mu);
    q->hand[slot] = NULL;
    bool more = q->n > 0;
    pthread_mutex_unlock(&q->mu);
    if (more)
        hr_waker_kick(&q->wake); /* a note may have waited for this one */
}

static void *notes_main(void *ud)
{
    const struct hr_notes_sender *me = ud;
    hr_notes *q = me->q;
    int slot = me->slot;
    for (;;) {
        if (hr_notes_pending(q) == 0) {
            if (!hr_waker_wait(&q->wake, HR_WAKER_NEVER))
                break;
            continue;
        }
        /* Limits first: while any resize is outstanding only the notes'
         * minimum share goes (limiter.h); the executor wakes us when the
         * last one is answered. */
        int64_t wait = q->client != NULL ? hr_kclient_yield_claim_ns(q->client) : 0;
        if (wait > 0) {
            if (!hr_waker_wait(&q->wake, hr_mono_ns() + wait))
                break;
            continue;
        }
        if (hr_waker_stopped(&q->wake))
            break;
        entry x;
        bool more;
        if (!take(q, slot, &x, &more)) {
            /* Taken by another sender, or only notes of pods in other
             * senders' hands (each end kicks): sleep until a put or an end. */
            if (!hr_waker_wait(&q->wake, HR_WAKER_NEVER))
                break;
            continue;
        }
        if (more)
            hr_waker_kick(&q->wake); /* the next sender takes the next one */
        hr_note n = {x.key, x.ns, x.name, x.patch, x.event};
        q->send(q->ud, &n);
        drop_hand(q, slot);
        entry_free(&x);
    }
    return NULL;
}

hr_status hr_notes_start(hr_kclient *client, hr_note_send_fn send, void *ud, int senders,
                         hr_notes **out, hr_err *err)
{
    if (senders < 1)
        senders = 1;
    if (senders > HR_NOTES_SENDERS_MAX)
        senders = HR_NOTES_SENDERS_MAX;
    hr_notes *q = calloc(1, sizeof *q);
    if (q == NULL)
        return hr_err_set(err, HR_E_NOMEM, "notes: out of memory");
    q->client = client;
    q->send = send;
    q->ud = ud;
    if (pthread_mutex_init(&q->mu, NULL) != 0) {
        free(q);
        return hr_err_set(err, HR_E_NOMEM, "notes: cannot create a lock");
    }
    if (hr_waker_init(&q->wake) != 0) {
        pthread_mutex_destroy(&q->mu);
        free(q);
        return hr_err_set(err, HR_E_NOMEM, "notes: cannot create a lock");
    }
    for (int i = 0; i < senders; i++) {
        q->snd[i] = (struct hr_notes_sender){q, i};
        if (pthread_create(&q->thread[i], NULL, notes_main, &q->snd[i]) != 0)
            break;
        q->n_thr++;
    }
    if (q->n_thr == 0) {
        hr_waker_destroy(&q->wake);
        pthread_mutex_destroy(&q->mu);
        free(q);
        return hr_err_set(err, HR_E_NOMEM, "notes: cannot start its thread");
    }
    *out = q;
    return HR_OK;
}

void hr_notes_stop(hr_notes *q)
{
    if (q == NULL)
        return;
    hr_waker_stop(&q->wake);
    for (int i = 0; i < q->n_thr; i++)
        pthread_join(q->thread[i], NULL);
    for (size_t i = 0; i < q->n; i++)
        entry_free(&q->e[i]);
    free(q->e);
    hr_waker_destroy(&q->wake);
    pthread_mutex_destroy(&q->mu);
    free(q);
}
