/*
 * test_notes.c — limits first (design §5; controller/notes.h): the status
 * annotations and events that describe resizes wait in a queue, coalesced
 * per pod, and are sent only with tokens of the write limiter that no
 * resize has reserved and that leave half the burst to resizes; a stop
 * drops what is queued (the next change of the pod sends a fresh note).
 * Several senders send at once, but never two notes of one pod, and a
 * pod's notes go in the order they were put. While any resize is
 * outstanding (decided, queued, waiting for its token or in flight) notes
 * go only on their minimum share (hr_klimiter_yield_claim), so a cold
 * start's resizes have the limiter to themselves (a fake-clock model of
 * the node workers, the write pool and the senders: the last resize at
 * ~N ÷ qps with at most one note a second before it, every note after).
 */
#include <inttypes.h>
#include <pthread.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <cmocka.h>

#include "controller/notes.h"
#include "hr_check.h"
#include "hr_switches.h"
#include "kube/transport/client.h"
#include "kube/transport/limiter.h"
#include "util/clock.h"
#include "util/heaptrim.h"

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

/* An outstanding resize that holds no token (queued before the bucket, or
 * in flight after it) still keeps notes back: a full bucket is not enough,
 * only the share (one note per HR_KLIMITER_YIELD_EVERY tokens' time). */
static void notes_yield_to_outstanding_resizes(void **state)
{
    (void)state;
    hr_klimiter l;
    assert_int_equal(hr_klimiter_init(&l, 50, 100, 0), 0);
    assert_int_equal(hr_klimiter_yield_claim(&l, 0, 50), 0); /* none outstanding, full */
    assert_int_equal(hr_klimiter_yield_claim(&l, 0, 50), 0); /* asking took nothing */
    assert_int_equal(hr_klimiter_urgent_add(&l, 3), 3);
    /* Full bucket, three resizes outstanding: the share, then a second's wait. */
    assert_int_equal(hr_klimiter_yield_claim(&l, 0, 50), 0);
    assert_int_equal(hr_klimiter_yield_claim(&l, 0, 50), SEC);
    assert_int_equal(hr_klimiter_yield_claim(&l, SEC / 4, 50), 3 * SEC / 4);
    /* Endless resizes never starve notes: one a second, no more. */
    int granted = 0;
    for (int64_t t = SEC / 4; t < 11 * SEC; t += SEC / 1000)
        granted += hr_klimiter_yield_claim(&l, t, 50) == 0;
    assert_int_equal(granted, 10);
    /* The last one answered: the bucket's rule again, at once. */
    assert_int_equal(hr_klimiter_urgent_add(&l, -3), 0);
    assert_int_equal(hr_klimiter_yield_claim(&l, 11 * SEC, 50), 0);
    assert_int_equal(hr_klimiter_urgent_add(&l, -1), 0); /* never below 0 */
    hr_klimiter_destroy(&l);
}

enum { SIM_PODS = 1800, SIM_FLIGHT = 16, SIM_WORKERS = 2, SIM_WAVE = 10 };

/* A cold start on a fake clock, 1 ms steps, shaped like the executor:
 * SIM_WORKERS node workers each run waves — SIM_WAVE resizes (the node's
 * bucket) counted outstanding from the wave's start, 100 ms of checks (the
 * live Node read), then handed to the write pool (SIM_FLIGHT at once, each
 * taking its token then `lat` in flight), the wave over (and its count
 * dropped) when all are answered. Each answered resize queues its note,
 * which one of SIM_FLIGHT senders sends once yield_claim says 0: two
 * writes (annotation, event), their tokens taken at once, then `lat`.
 * *last_resize: when the last resize was answered; *early: notes sent by
 * then; *last_note: the last note. Every note is sent (none lost). */
static void cold_start(int64_t lat, int64_t *last_resize, int64_t *last_note, int *early)
{
    hr_klimiter l;
    assert_int_equal(hr_klimiter_init(&l, 50, 100, 0), 0);
    const int64_t ms = SEC / 1000;
    int64_t check_end[SIM_WORKERS]; /* -1: the wave is in the pool */
    int left[SIM_WORKERS], size[SIM_WORKERS], handed[SIM_WORKERS];
    int64_t busy_w[SIM_FLIGHT], busy_n[SIM_FLIGHT]; /* until when; -1: idle */
    int owner[SIM_FLIGHT];
    int todo = SIM_PODS, answered = 0, queued = 0, sent = 0;
    for (int w = 0; w < SIM_WORKERS; w++)
        size[w] = left[w] = handed[w] = 0, check_end[w] = -1;
    for (int i = 0; i < SIM_FLIGHT; i++)
        busy_w[i] = busy_n[i] = -1;
    for (int64_t t = 0; sent < SIM_PODS; t += ms) {
        assert_true(t < 1000 * SEC);
        for (int w = 0; w < SIM_WORKERS; w++) {
            if (check_end[w] < 0 && left[w] == 0 && size[w] > 0) {
                (void)hr_klimiter_urgent_add(&l, -size[w]); /* the wave returns */
                size[w] = 0;
            }
            if (size[w] == 0 && todo > 0) { /* the next node's wave */
                size[w] = left[w] = todo < SIM_WAVE ? todo : SIM_WAVE;
                todo -= size[w];
                handed[w] = 0;
                check_end[w] = t + 100 * ms;
                (void)hr_klimiter_urgent_add(&l, size[w]);
            }
            if (check_end[w] >= 0 && t >= check_end[w])
                check_end[w] = -1; /* checked: its writes go to the pool */
        }
        for (int i = 0; i < SIM_FLIGHT; i++) {
            if (busy_w[i] >= 0 && t >= busy_w[i]) {
                busy_w[i] = -1;
                left[owner[i]]--;
                answered++;
                queued++;
                *last_resize = t;
                *early = sent;
            }
            for (int w = 0; busy_w[i] < 0 && w < SIM_WORKERS; w++)
                if (size[w] > 0 && check_end[w] < 0 && handed[w] < size[w]) {
                    handed[w]++;
                    owner[i] = w;
                    busy_w[i] = t + hr_klimiter_reserve(&l, t) + lat;
                }
            if (busy_n[i] >= 0 && t >= busy_n[i]) {
                busy_n[i] = -1;
                sent++;
                *last_note = t;
            }
            if (busy_n[i] < 0 && queued > 0 && hr_klimiter_yield_claim(&l, t, 50) == 0) {
                queued--;
                int64_t a = hr_klimiter_reserve(&l, t), b = hr_klimiter_reserve(&l, t);
                busy_n[i] = t + (a > b ? a : b) + lat;
            }
        }
    }
    assert_int_equal(answered, SIM_PODS);
    hr_klimiter_destroy(&l);
}

/* bench/cluster/scale.sh's default run, in arithmetic: 1,800 resizes at 50 QPS with 100 of
 * burst are right in ~35 s, notes only on their share meanwhile (one a
 * second), the rest after (5,400 writes in ~108 s). Before (notes went on
 * any token beyond half the burst), the senders took every token the
 * waves' gaps left: hundreds of notes went before the last resize. */
static void cold_start_limits_first(void **state)
{
    (void)state;
    const int64_t lats[] = {SEC / 20, SEC / 5};
    for (size_t i = 0; i < sizeof lats / sizeof *lats; i++) {
        int64_t last_resize = 0, last_note = 0;
        int early = 0;
        cold_start(lats[i], &last_resize, &last_note, &early);
        print_message("latency %" PRId64
                      " ms: last resize %.1f s, %d notes by then, last note %.1f s\n",
                      lats[i] / 1000000, (double)last_resize / 1e9, early, (double)last_note / 1e9);
        /* (1,800 - 100) / (50 - the share's 2/s) + the latency: 35.4 s + lat. */
        assert_true(last_resize <= 37 * SEC);
        assert_true(early <= last_resize / SEC + 1); /* the share, no more */
        /* The notes after, at the 50 QPS (none left behind): at most their
         * 3,600 writes' time beyond the last resize. */
        assert_true(last_note > last_resize);
        assert_true(last_note <= last_resize + 3600 * SEC / 50 + 2 * SEC);
    }
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
        pthread_mutex_unlock(&s->mu);
        hr_mono_sleep_ms(10);
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
        hr_mono_sleep_ms(10);
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
/* A recorder of every note sent, in order (the one above keeps eight). */
typedef struct log_all {
    sent s; /* its lock, hold and count */
    char (*what)[40];
    int cap;
} log_all;

/* l->cap and l->s.hold set: the log's room, lock and condition. */
static void log_all_init(log_all *l)
{
    l->what = calloc((size_t)l->cap, sizeof l->what[0]);
    assert_non_null(l->what);
    assert_int_equal(pthread_mutex_init(&l->s.mu, NULL), 0);
    assert_int_equal(pthread_cond_init(&l->s.cv, NULL), 0);
}

static void log_all_free(log_all *l)
{
    pthread_cond_destroy(&l->s.cv);
    pthread_mutex_destroy(&l->s.mu);
    free(l->what);
}

static void on_send_all(void *ud, const hr_note *n)
{
    log_all *l = ud;
    pthread_mutex_lock(&l->s.mu);
    l->s.holding = true;
    pthread_cond_broadcast(&l->s.cv);
    while (l->s.hold)
        pthread_cond_wait(&l->s.cv, &l->s.mu);
    l->s.holding = false;
    if (l->s.n < l->cap)
        snprintf(l->what[l->s.n], sizeof l->what[0], "%s %s %s", n->key, n->patch,
                 n->event != NULL ? n->event : "-");
    l->s.n++;
    pthread_cond_broadcast(&l->s.cv);
    pthread_mutex_unlock(&l->s.mu);
}

static bool key_kept(void *ud, const char *key)
{
    (void)ud;
    int i = 0;
    return sscanf(key, "k%d", &i) != 1 || i % 3 == 0; /* two of three k's are gone */
}

/* The key index through holes and their squeezing: 1,000 notes queued
 * behind one in hand, two of three dropped by small sweeps (the holes then
 * outnumber the notes and are squeezed out mid-sweep), the rest coalesced
 * through the index afterwards, then more put: every survivor is sent once,
 * in arrival order, with its newest patch and its unsent event. */
static void many_notes_keep_order_through_holes(void **state)
{
    (void)state;
    enum { N = 1000, FRESH = 100 };
    log_all l = {.s = {.hold = true}, .cap = 1 + N + FRESH};
    log_all_init(&l);
    hr_notes *q = NULL;
    hr_err err;
    assert_int_equal(hr_notes_start(NULL, on_send_all, &l, 1, &q, &err), HR_OK);
    assert_true(hr_notes_put(q, &(hr_note){"x", "ns", "x", "px", NULL}));
    wait_holding(&l.s);
    char key[16], patch[16], event[16];
    for (int i = 0; i < N; i++) {
        snprintf(key, sizeof key, "k%04d", i);
        snprintf(patch, sizeof patch, "p%04d", i);
        snprintf(event, sizeof event, "e%04d", i);
        assert_true(hr_notes_put(q, &(hr_note){key, "ns", key, patch, event}));
    }
    assert_int_equal(hr_notes_pending(q), N);
    size_t dropped = 0;
    for (int pass = 0; pass < 2 * N / 10; pass++)
        dropped += hr_notes_sweep(q, key_kept, NULL, 10);
    int kept = (N + 2) / 3;
    assert_int_equal(dropped, N - kept);
    assert_int_equal(hr_notes_pending(q), kept);
    for (int i = 0; i < N; i += 9) { /* newer notes of kept pods, no event */
        snprintf(key, sizeof key, "k%04d", i);
        snprintf(patch, sizeof patch, "q%04d", i);
        assert_true(hr_notes_put(q, &(hr_note){key, "ns", key, patch, NULL}));
    }
    assert_int_equal(hr_notes_pending(q), kept);
    for (int i = 0; i < FRESH; i++) {
        snprintf(key, sizeof key, "n%04d", i);
        assert_true(hr_notes_put(q, &(hr_note){key, "ns", key, "pn", NULL}));
    }
    assert_int_equal(hr_notes_pending(q), kept + FRESH);
    release(&l.s);
    wait_for(&l.s, 1 + kept + FRESH);
    assert_string_equal(l.what[0], "x px -");
    int at = 1;
    char want[40];
    for (int i = 0; i < N; i += 3, at++) {
        snprintf(want, sizeof want, "k%04d %c%04d e%04d", i, i % 9 == 0 ? 'q' : 'p', i, i);
        assert_string_equal(l.what[at], want);
    }
    for (int i = 0; i < FRESH; i++, at++) {
        snprintf(want, sizeof want, "n%04d pn -", i);
        assert_string_equal(l.what[at], want);
    }
    assert_int_equal(hr_notes_pending(q), 0);
    /* Drained: the queue starts over and still coalesces. */
    l.s.hold = true;
    assert_true(hr_notes_put(q, &(hr_note){"y", "ns", "y", "py", NULL}));
    wait_holding(&l.s);
    assert_true(hr_notes_put(q, &(hr_note){"z", "ns", "z", "p1", "ez"}));
    assert_true(hr_notes_put(q, &(hr_note){"z", "ns", "z", "p2", NULL}));
    assert_int_equal(hr_notes_pending(q), 1);
    release(&l.s);
    wait_for(&l.s, 1 + kept + FRESH + 2);
    assert_string_equal(l.what[1 + kept + FRESH + 1], "z p2 ez");
    hr_notes_stop(q);
    log_all_free(&l);
}

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
        hr_mono_sleep_ms(1);
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
    hr_mono_sleep_ms(100);
    pthread_mutex_lock(&f->mu);
    f->keys[slot][0] = 0;
    f->now--;
    if (f->n < 8)
        snprintf(f->order[f->n], sizeof f->order[0], "%s %s", n->key, n->patch);
    f->n++;
    pthread_mutex_unlock(&f->mu);
}

/* The sender that empties the queue after a burst returns the heap, once a
 * burst of HR_HEAPTRIM_WORK notes has ended; a trickle does not. 150 notes
 * queued behind one in hand go as one burst through four senders. */
static void a_drained_burst_trims_the_heap(void **state)
{
    (void)state;
    enum { N = 150 };
    log_all l = {.s = {.hold = true}, .cap = N + 3};
    log_all_init(&l);
    hr_notes *q = NULL;
    hr_err err;
    uint64_t t0 = hr_heaptrim_count();
    assert_int_equal(hr_notes_start(NULL, on_send_all, &l, 4, &q, &err), HR_OK);
    char key[16];
    assert_true(hr_notes_put(q, &(hr_note){"k0", "ns", "k0", "p", NULL}));
    wait_holding(&l.s);
    for (int i = 1; i < N; i++) {
        snprintf(key, sizeof key, "k%d", i);
        assert_true(hr_notes_put(q, &(hr_note){key, "ns", key, "p", NULL}));
    }
    release(&l.s);
    wait_for(&l.s, N);
    int64_t end = hr_mono_ms() + 5000; /* the trim follows the last send */
    while (hr_heaptrim_count() == t0 && hr_mono_ms() < end)
        hr_nap_ms(1);
    assert_int_equal(hr_heaptrim_count(), t0 + 1);
    for (int i = 0; i < 3; i++) {
        snprintf(key, sizeof key, "t%d", i);
        assert_true(hr_notes_put(q, &(hr_note){key, "ns", key, "p", NULL}));
    }
    wait_for(&l.s, N + 3);
    hr_nap_ms(50);
    assert_int_equal(hr_heaptrim_count(), t0 + 1);
    hr_notes_stop(q);
    log_all_free(&l);
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
        hr_mono_sleep_ms(1);
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
        hr_mono_sleep_ms(5);
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

static int flown(flight *f)
{
    pthread_mutex_lock(&f->mu);
    int n = f->n;
    pthread_mutex_unlock(&f->mu);
    return n;
}

/* While resizes are outstanding a sender sleeps until its yield share; the
 * puts that come meanwhile (one per resize) wake no sender only to put it
 * back to sleep: 20 puts in 200 ms cost a few thread switches, not 20. */
static void puts_leave_a_yielding_sender_asleep(void **state)
{
    (void)state;
    char kc[64];
    snprintf(kc, sizeof kc, "/tmp/hr-notes-%d.yaml", (int)getpid());
    FILE *fk = fopen(kc, "w");
    assert_non_null(fk);
    fprintf(fk, "current-context: x\ncontexts:\n- name: x\n  context: {cluster: c, user: u}\n"
                "clusters:\n- name: c\n  cluster: {server: 'https://127.0.0.1:1'}\n"
                "users:\n- name: u\n  user: {token: t}\n");
    assert_int_equal(fclose(fk), 0);
    hr_kclient_opts o = {.kubeconfig = kc, .qps = 50, .burst = 100};
    hr_kclient *c = NULL;
    hr_err err;
    assert_int_equal(hr_kclient_new(&o, &c, &err), HR_OK);
    (void)unlink(kc);
    (void)hr_kclient_urgent_writes(c, 1); /* a resize outstanding */
    flight f = {0};
    pthread_mutex_init(&f.mu, NULL);
    hr_notes *q = NULL;
    assert_int_equal(hr_notes_start(c, on_fly, &f, 4, &q, &err), HR_OK);
    assert_true(hr_notes_put(q, &(hr_note){"a", "ns", "a", "p", NULL})); /* the share */
    for (int64_t end = hr_mono_ms() + 2000; flown(&f) < 1 && hr_mono_ms() < end;)
        hr_nap_ms(1);
    CHECK_TRUE("the first note went on the share", flown(&f) == 1);
    hr_nap_ms(20);
    long s0 = hr_switches_others();
    char key[16];
    for (int i = 0; i < 20; i++) {
        snprintf(key, sizeof key, "p%d", i);
        assert_true(hr_notes_put(q, &(hr_note){key, "ns", key, "p", NULL}));
        hr_nap_ms(10);
    }
    long s1 = hr_switches_others();
    CHECK_TRUE("the rest wait for the next share", flown(&f) == 1);
    if (s0 < 0 || s1 - s0 > 6)
        fail_msg("20 puts woke the senders %ld times, want at most 6", s1 - s0);
    /* The resizes answered: the executor's wake sends the rest. */
    (void)hr_kclient_urgent_writes(c, -1);
    hr_notes_wake(q);
    for (int64_t end = hr_mono_ms() + 5000; flown(&f) < 21 && hr_mono_ms() < end;)
        hr_nap_ms(5);
    hr_notes_stop(q);
    CHECK_I64("every note sent", f.n, 21);
    pthread_mutex_destroy(&f.mu);
    hr_kclient_free(c);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(ready_only_beyond_the_kept_half),
        cmocka_unit_test(notes_yield_to_outstanding_resizes),
        cmocka_unit_test(cold_start_limits_first),
        cmocka_unit_test(coalesced_then_dropped_on_stop),
        cmocka_unit_test(many_notes_keep_order_through_holes),
        cmocka_unit_test(a_drained_burst_trims_the_heap),
        cmocka_unit_test(senders_apart_per_pod),
        cmocka_unit_test(puts_leave_a_yielding_sender_asleep),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
