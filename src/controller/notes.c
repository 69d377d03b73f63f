/*
 * notes.c — the queue of status annotations and events that follow the
 * resizes (see notes.h).
 *
 * An array in arrival order with a key index (a string map from a pod's
 * key to its entry's place), so a put, a take and a sweep's drop cost the
 * same at 30,000 queued notes as at 30: a put coalesces through the index;
 * a take or a drop leaves a hole (key NULL) instead of moving the rest, and
 * the holes are squeezed out, the index rewritten, once they outnumber the
 * notes (each note is moved a bounded number of times on average). `head`
 * is the first place that may hold a note: the oldest is found without
 * walking the holes the senders leave behind them.
 *
 * Several senders (threads) take notes from the one queue; a note whose
 * pod another sender has in hand (a newer note put after the older was
 * taken) waits in the queue until that one is sent, so a pod's notes go out
 * one at a time and in order. A sender that takes a note while more wait
 * kicks the next sender awake. The sender that empties the queue ends a
 * burst of writes (the notes trail a wave's resizes) and returns the heap
 * (util/heaptrim.h).
 */
#include "controller/notes.h"

#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "util/clock.h"
#include "util/heaptrim.h"
#include "util/strmap.h"
#include "util/tname.h"
#include "util/waker.h"

typedef struct entry {
    char *key, *ns, *name, *patch, *event; /* owned; event may be NULL; key NULL: a hole */
} entry;

/* Holes are squeezed out when there are more than this and more than notes. */
#define NOTES_HOLES_MIN 64

struct hr_notes {
    hr_kclient *client;
    hr_note_send_fn send;
    void *ud;
    pthread_t thread[HR_NOTES_SENDERS_MAX];
    int n_thr;
    hr_waker wake;       /* kicked by put, stopped by hr_notes_stop */
    atomic_int yielding; /* senders asleep until their yield share: no put needs to wake one */
    pthread_mutex_t mu;  /* guards everything below */
    entry *e;            /* [0, n): notes and holes, in arrival order */
    size_t n, cap;
    size_t head;                            /* e[0, head) are holes */
    size_t live;                            /* notes in e (n - live are holes) */
    hr_strmap at;                           /* key -> its note's index in e */
    size_t sweep_at;                        /* where the next hr_notes_sweep looks */
    size_t sent;                            /* notes sent since the queue was last empty */
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

/* Squeeze the holes out, keeping the order; the index and the sweep's
 * cursor follow their notes. Lock held. */
static void squeeze(hr_notes *q)
{
    size_t w = 0, sweep_at = 0;
    for (size_t r = 0; r < q->n; r++) {
        if (r == q->sweep_at)
            sweep_at = w;
        if (q->e[r].key == NULL)
            continue;
        uint64_t *at = hr_strmap_get(&q->at, q->e[r].key);
        if (at != NULL) /* always: every note is indexed */
            *at = w;
        q->e[w++] = q->e[r];
    }
    q->sweep_at = q->sweep_at >= q->n ? w : sweep_at;
    q->n = w;
    q->head = 0;
}

/* Entry i leaves the queue (taken or dropped; its strings are the caller's
 * now): a hole, the index forgets it, and the holes are squeezed out when
 * they outnumber the notes. Lock held. */
static void leave(hr_notes *q, size_t i)
{
    (void)hr_strmap_del(&q->at, q->e[i].key, NULL);
    q->e[i] = (entry){0};
    q->live--;
    while (q->head < q->n && q->e[q->head].key == NULL)
        q->head++;
    size_t holes = q->n - q->live;
    if (q->live == 0) {
        q->n = q->head = q->sweep_at = 0;
    } else if (holes > NOTES_HOLES_MIN && holes > q->live) {
        squeeze(q);
    }
}

/* A note came or a hand emptied: wake a sender, unless one sleeps until
 * its yield share already — it takes the oldest note then, and a wake per
 * resize's note would only put a sender back to sleep (a thread switch a
 * write). The executor's hr_notes_wake, when the resizes are all
 * answered, always wakes. */
static void nudge(hr_notes *q)
{
    if (atomic_load(&q->yielding) == 0)
        hr_waker_kick(&q->wake);
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
    const uint64_t *at = hr_strmap_get(&q->at, x.key);
    if (at != NULL) {
        /* Coalesced: the newer note says the latest; an event of the older
         * one not yet sent goes only if the newer has none. */
        entry *old = &q->e[*at];
        if (x.event == NULL) {
            x.event = old->event;
            old->event = NULL;
        }
        entry_free(old);
        *old = x;
    } else {
        if (q->n == q->cap && q->n - q->live > q->n / 4) {
            squeeze(q); /* room without growing */
        } else if (q->n == q->cap) {
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
        if (!hr_strmap_put(&q->at, x.key, q->n)) {
            pthread_mutex_unlock(&q->mu);
            entry_free(&x);
            return false;
        }
        q->e[q->n++] = x;
        q->live++;
    }
    pthread_mutex_unlock(&q->mu);
    nudge(q);
    return true;
}

size_t hr_notes_pending(hr_notes *q)
{
    pthread_mutex_lock(&q->mu);
    size_t n = q->live;
    pthread_mutex_unlock(&q->mu);
    return n;
}

size_t hr_notes_sweep(hr_notes *q, hr_notes_live_fn live, void *ud, size_t budget)
{
    size_t dropped = 0;
    pthread_mutex_lock(&q->mu);
    if (q->sweep_at >= q->n)
        q->sweep_at = 0;
    /* Up to budget notes looked at from the cursor (holes are passed over);
     * a drop may squeeze, which moves the cursor with the notes. */
    for (size_t seen = 0; seen < budget && q->sweep_at < q->n;) {
        entry *x = &q->e[q->sweep_at];
        if (x->key == NULL) {
            q->sweep_at++;
            continue;
        }
        seen++;
        if (live(ud, x->key)) {
            q->sweep_at++;
            continue;
        }
        entry gone = *x;
        size_t n_before = q->n;
        leave(q, q->sweep_at);
        entry_free(&gone);
        dropped++;
        if (q->n == n_before)
            q->sweep_at++; /* not squeezed: the hole is behind the cursor */
    }
    if (q->sweep_at >= q->n)
        q->sweep_at = 0;
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
    size_t i = q->head;
    while (i < q->n && (q->e[i].key == NULL || in_hand(q, q->e[i].key)))
        i++;
    bool have = i < q->n;
    if (have) {
        *out = q->e[i];
        leave(q, i);
        q->hand[slot] = out->key;
    }
    *more = q->live > 0;
    pthread_mutex_unlock(&q->mu);
    return have;
}

/* The note in this sender's hand has been sent. The sender that leaves the
 * queue empty, nothing queued and nothing in any hand, ends the burst: the
 * heap it used goes back (util/heaptrim.h). */
static void drop_hand(hr_notes *q, int slot)
{
    pthread_mutex_lock(&q->mu);
    q->hand[slot] = NULL;
    q->sent++;
    bool more = q->live > 0;
    size_t burst = 0;
    if (!more) {
        bool held = false;
        for (int i = 0; i < q->n_thr && !held; i++)
            held = q->hand[i] != NULL;
        if (!held) {
            burst = q->sent;
            q->sent = 0;
        }
    }
    pthread_mutex_unlock(&q->mu);
    if (more)
        nudge(q); /* a note may have waited for this one */
    else if (burst > 0)
        (void)hr_heaptrim_after(burst);
}

static void *notes_main(void *ud)
{
    const struct hr_notes_sender *me = ud;
    hr_notes *q = me->q;
    int slot = me->slot;
    hr_thread_name("hr-notes-%d", slot);
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
            atomic_fetch_add(&q->yielding, 1);
            bool alive = hr_waker_wait(&q->wake, hr_mono_ns() + wait);
            atomic_fetch_sub(&q->yielding, 1);
            if (!alive)
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
            nudge(q); /* the next sender takes the next one */
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
    hr_strmap_init(&q->at);
    atomic_init(&q->yielding, 0);
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
        entry_free(&q->e[i]); /* a hole frees nothing */
    free(q->e);
    hr_strmap_free(&q->at);
    hr_waker_destroy(&q->wake);
    pthread_mutex_destroy(&q->mu);
    free(q);
}
