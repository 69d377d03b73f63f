/*
 * test_notes.c — limits first (issue 18; controller/notes.h): the status
 * annotations and events that describe resizes wait in a queue, coalesced
 * per pod, and are sent only with tokens of the write limiter that no
 * resize has reserved and that leave half the burst to resizes; a stop
 * drops what is queued (the next change of the pod sends a fresh note).
 * Several senders send at once, but never two notes of one pod, and a
 * pod's notes go in the order they were put.
 */
#include <pthread.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <cmocka.h>

#include "controller/notes.h"
#include "kube/transport/limiter.h"
#include "util/clock.h"

#define SEC INT64_C(1000000000)

/* The bucket with keep = burst/2 (what the client passes): notes go only
 * with a token beyond it, and never while resizes hold it in debt. */
static void ready_only_beyond_the_kept_half(void **state)
{
    (void)state;
    hr_klimiter l;
    assert_int_equal(hr_klimiter_init(&l, 10, 10, 0), 0);
    assert_int_equal(hr_klimiter_ready_in(&l, 0, 5), 0); /* full: 10 >= 6 */
    for (int i = 0; i < 5; i++)
        assert_int_equal(hr_klimiter_reserve(&l, 0), 0);
    /* 5 left: a note needs 6, one token (100 ms) away. */
    assert_int_equal(hr_klimiter_ready_in(&l, 0, 5), SEC / 10);
    /* Resizes queue: 5 more go, 3 wait (debt -3): 9 tokens, 900 ms. */
    for (int i = 0; i < 8; i++)
        (void)hr_klimiter_reserve(&l, 0);
    assert_int_equal(hr_klimiter_ready_in(&l, 0, 5), 9 * SEC / 10);
    /* Asking takes nothing: the answer moves only with the clock. */
    assert_int_equal(hr_klimiter_ready_in(&l, SEC / 2, 5), 4 * SEC / 10);
    assert_int_equal(hr_klimiter_ready_in(&l, SEC - SEC / 10, 5), 0);
    /* keep at or above the burst: a full bucket is enough. */
    assert_int_equal(hr_klimiter_ready_in(&l, 100 * SEC, 10), 0);
    hr_klimiter_destroy(&l);
}

typedef struct sent {
    pthread_mutex_t mu;
    pthread_cond_t cv;
    int n;
    char what[8][128];
    bool hold;    /* the sender blocks until released */
    bool holding; /* it is blocked now */
} sent;

static void on_send(void *ud, const hr_note *n)
{
    sent *s = ud;
    pthread_mutex_lock(&s->mu);
    s->holding = true;
    pthread_cond_broadcast(&s->cv);
    while (s->hold)
        pthread_cond_wait(&s->cv, &s->mu);
    s->holding = false;
    if (s->n < 8)
        snprintf(s->what[s->n], sizeof s->what[0], "%s %s %s", n->key, n->patch,
                 n->event != NULL ? n->event : "-");
    s->n++;
    pthread_cond_broadcast(&s->cv);
    pthread_mutex_unlock(&s->mu);
}

static void wait_for(sent *s, int n)
{
    int64_t end = hr_mono_ms() + 5000;
    pthread_mutex_lock(&s->mu);
    while (s->n < n && hr_mono_ms() < end) {
        struct timespec ts = {0, 10000000};
        pthread_mutex_unlock(&s->mu);
        nanosleep(&ts, NULL);
        pthread_mutex_lock(&s->mu);
    }
    int got = s->n;
    pthread_mutex_unlock(&s->mu);
    assert_int_equal(got, n);
}

static void wait_holding(sent *s)
{
    int64_t end = hr_mono_ms() + 5000;
    pthread_mutex_lock(&s->mu);
    while (!s->holding && hr_mono_ms() < end) {
        pthread_mutex_unlock(&s->mu);
        struct timespec ts = {0, 10000000};
        nanosleep(&ts, NULL);
        pthread_mutex_lock(&s->mu);
    }
    bool h = s->holding;
    pthread_mutex_unlock(&s->mu);
    assert_true(h);
}

static void release(sent *s)
{
    pthread_mutex_lock(&s->mu);
    s->hold = false;
    pthread_cond_broadcast(&s->cv);
    pthread_mutex_unlock(&s->mu);
}

static void *stop_main(void *q)
{
    hr_notes_stop(q);
    return NULL;
}

/* Coalesced per pod: while the sender is busy, two notes for pod a become
 * one (the newer annotation, the newer event), b keeps its own; a stop
 * drops what is queued, and the next note of the pod goes through a new
 * queue as usual. */
static void coalesced_then_dropped_on_stop(void **state)
{
    (void)state;
    sent s = {.hold = true};
    pthread_mutex_init(&s.mu, NULL);
    pthread_cond_init(&s.cv, NULL);
    hr_notes *q = NULL;
    hr_err err;
    assert_int_equal(hr_notes_start(NULL, on_send, &s, 1, &q, &err), HR_OK);
    assert_true(hr_notes_put(q, &(hr_note){"x", "ns", "x", "p0", "e0"}));
    wait_holding(&s); /* x is in hand; what follows queues */
    assert_true(hr_notes_put(q, &(hr_note){"a", "ns", "a", "p1", "e1"}));
    assert_true(hr_notes_put(q, &(hr_note){"b", "ns", "b", "p2", "e2"}));
    assert_true(hr_notes_put(q, &(hr_note){"a", "ns", "a", "p3", NULL}));
    assert_int_equal(hr_notes_pending(q), 2);
    release(&s);
    wait_for(&s, 3);
    assert_string_equal(s.what[0], "x p0 e0");
    assert_string_equal(s.what[1], "a p3 e1"); /* the newer patch, the unsent event */
    assert_string_equal(s.what[2], "b p2 e2");

    /* A stop with notes queued: they are dropped, not sent. The stop comes
     * while c is in hand (the stopper waits for it to finish). */
    s.hold = true;
    assert_true(hr_notes_put(q, &(hr_note){"c", "ns", "c", "p4", "e4"}));
    wait_holding(&s);
    assert_true(hr_notes_put(q, &(hr_note){"d", "ns", "d", "p5", "e5"}));
    pthread_t stopper;
    assert_int_equal(pthread_create(&stopper, NULL, stop_main, q), 0);
    int64_t end = hr_mono_ms() + 5000;
    while (!hr_notes_stopping(q) && hr_mono_ms() < end) {
        struct timespec ts = {0, 1000000};
        nanosleep(&ts, NULL);
    }
    release(&s);
    assert_int_equal(pthread_join(stopper, NULL), 0);
    assert_int_equal(s.n, 4); /* c finished; d dropped */
    assert_string_equal(s.what[3], "c p4 e4");

    /* The next change of pod d: a fresh note, sent. */
    assert_int_equal(hr_notes_start(NULL, on_send, &s, 1, &q, &err), HR_OK);
    assert_true(hr_notes_put(q, &(hr_note){"d", "ns", "d", "p6", "e6"}));
    wait_for(&s, 5);
    assert_string_equal(s.what[4], "d p6 e6");
    hr_notes_stop(q);
    pthread_cond_destroy(&s.cv);
    pthread_mutex_destroy(&s.mu);
}

/* Several senders: what each sends at once, per pod too. */
typedef struct flight {
    pthread_mutex_t mu;
    int now, peak, overlaps, n;
    char keys[8][8]; /* the keys in flight */
    char order[8][16];
} flight;

static void on_fly(void *ud, const hr_note *n)
{
    flight *f = ud;
    pthread_mutex_lock(&f->mu);
    for (int i = 0; i < 8; i++)
        if (strcmp(f->keys[i], n->key) == 0)
            f->overlaps++;
    int slot = 0;
    while (slot < 7 && f->keys[slot][0] != 0)
        slot++;
    snprintf(f->keys[slot], sizeof f->keys[slot], "%s", n->key);
    if (++f->now > f->peak)
        f->peak = f->now;
    pthread_mutex_unlock(&f->mu);
    struct timespec ts = {0, 100 * 1000000L};
    nanosleep(&ts, NULL);
    pthread_mutex_lock(&f->mu);
    f->keys[slot][0] = 0;
    f->now--;
    if (f->n < 8)
        snprintf(f->order[f->n], sizeof f->order[0], "%s %s", n->key, n->patch);
    f->n++;
    pthread_mutex_unlock(&f->mu);
}

/* Pod a's first note is in hand when its second is put: no other sender
 * takes the second until the first is sent, while b and c go beside it. */
static void senders_apart_per_pod(void **state)
{
    (void)state;
    flight f = {0};
    pthread_mutex_init(&f.mu, NULL);
    hr_notes *q = NULL;
    hr_err err;
    assert_int_equal(hr_notes_start(NULL, on_fly, &f, 4, &q, &err), HR_OK);
    assert_true(hr_notes_put(q, &(hr_note){"a", "ns", "a", "p1", NULL}));
    int64_t end = hr_mono_ms() + 5000;
    while (hr_notes_pending(q) > 0 && hr_mono_ms() < end) {
        struct timespec ts = {0, 1000000};
        nanosleep(&ts, NULL);
    }
    assert_true(hr_notes_put(q, &(hr_note){"a", "ns", "a", "p2", NULL}));
    assert_true(hr_notes_put(q, &(hr_note){"b", "ns", "b", "p3", NULL}));
    assert_true(hr_notes_put(q, &(hr_note){"c", "ns", "c", "p4", NULL}));
    end = hr_mono_ms() + 5000;
    for (;;) {
        pthread_mutex_lock(&f.mu);
        int n = f.n;
        pthread_mutex_unlock(&f.mu);
        if (n >= 4 || hr_mono_ms() > end)
            break;
        struct timespec ts = {0, 5000000};
        nanosleep(&ts, NULL);
    }
    hr_notes_stop(q);
    assert_int_equal(f.n, 4);
    assert_int_equal(f.overlaps, 0);
    assert_true(f.peak >= 2); /* b or c beside a */
    int first = -1, second = -1;
    for (int i = 0; i < 4; i++) {
        if (strcmp(f.order[i], "a p1") == 0)
            first = i;
        if (strcmp(f.order[i], "a p2") == 0)
            second = i;
    }
    assert_true(first >= 0 && second > first);
    pthread_mutex_destroy(&f.mu);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(ready_only_beyond_the_kept_half),
        cmocka_unit_test(coalesced_then_dropped_on_stop),
        cmocka_unit_test(senders_apart_per_pod),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
