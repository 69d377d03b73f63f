/*
 * bench_notes.c — the notes queue (controller/notes.h) at cold-start sizes:
 * what a put, a coalescing put and a take cost per note with 1,000, 10,000
 * and 30,000 notes queued (a cold start of 1,000 nodes × 30 managed pods
 * queues one note per resize while the resizes hold the limiter).
 *
 * The queue is driven the production way: puts from this thread while its
 * one sender holds the first note, then the sender drains the rest (a
 * no-op send). Reference, in the same run: the former queue, an array
 * coalesced by a linear scan and taken from the front with a memmove,
 * single-threaded and without a lock (so it is charged less than the real
 * queue for everything but the scan and the move).
 *
 *   bench_notes [max]   default 30000
 */
#include <pthread.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "controller/notes.h"
#include "util/clock.h"

typedef struct gate {
    pthread_mutex_t mu;
    pthread_cond_t cv;
    bool hold, holding;
    size_t sent;
} gate;

static void on_send(void *ud, const hr_note *n)
{
    (void)n;
    gate *g = ud;
    pthread_mutex_lock(&g->mu);
    g->holding = true;
    pthread_cond_broadcast(&g->cv);
    while (g->hold)
        pthread_cond_wait(&g->cv, &g->mu);
    g->sent++;
    pthread_cond_broadcast(&g->cv);
    pthread_mutex_unlock(&g->mu);
}

static void key_of(char *buf, size_t len, size_t i)
{
    snprintf(buf, len, "tenant-%zu/pod-%zu-7c9f8d6b5-x%zu/0f1e2d3c-%08zx", i % 97, i, i % 13, i);
}

typedef struct figures {
    double put_ns, coalesce_ns, take_ns;
} figures;

static figures run_queue(size_t n)
{
    gate g = {.hold = true};
    if (pthread_mutex_init(&g.mu, NULL) != 0 || pthread_cond_init(&g.cv, NULL) != 0) {
        fprintf(stderr, "bench_notes: cannot create a lock\n");
        exit(1);
    }
    hr_notes *q = NULL;
    hr_err err;
    if (hr_notes_start(NULL, on_send, &g, 1, &q, &err) != HR_OK) {
        fprintf(stderr, "bench_notes: %s\n", err.msg);
        exit(1);
    }
    char key[96];
    const char *patch = "{\"metadata\":{\"annotations\":{\"kube-headroom.dev/status\":\"...\"}}}";
    if (!hr_notes_put(q, &(hr_note){"first", "ns", "first", patch, NULL}))
        exit(1);
    pthread_mutex_lock(&g.mu);
    while (!g.holding)
        pthread_cond_wait(&g.cv, &g.mu);
    pthread_mutex_unlock(&g.mu);
    figures f;
    int64_t t0 = hr_mono_ns();
    for (size_t i = 0; i < n; i++) {
        key_of(key, sizeof key, i);
        if (!hr_notes_put(q, &(hr_note){key, "ns", key, patch, "CPU limit set"}))
            exit(1);
    }
    int64_t t1 = hr_mono_ns();
    for (size_t i = 0; i < n; i++) {
        key_of(key, sizeof key, i);
        if (!hr_notes_put(q, &(hr_note){key, "ns", key, patch, NULL}))
            exit(1);
    }
    int64_t t2 = hr_mono_ns();
    pthread_mutex_lock(&g.mu);
    g.hold = false;
    pthread_cond_broadcast(&g.cv);
    while (g.sent < n + 1)
        pthread_cond_wait(&g.cv, &g.mu);
    pthread_mutex_unlock(&g.mu);
    int64_t t3 = hr_mono_ns();
    f.put_ns = (double)(t1 - t0) / (double)n;
    f.coalesce_ns = (double)(t2 - t1) / (double)n;
    f.take_ns = (double)(t3 - t2) / (double)n;
    hr_notes_stop(q);
    pthread_cond_destroy(&g.cv);
    pthread_mutex_destroy(&g.mu);
    return f;
}

/* The reference: the former algorithm, nothing else. */
typedef struct ref_entry {
    char *key, *patch, *event;
} ref_entry;

static void ref_put(ref_entry *e, size_t *n, const char *key, const char *patch, const char *ev)
{
    size_t i = 0;
    while (i < *n && strcmp(e[i].key, key) != 0)
        i++;
    if (i < *n) {
        free(e[i].patch);
        e[i].patch = strdup(patch);
        if (ev != NULL) {
            free(e[i].event);
            e[i].event = strdup(ev);
        }
        return;
    }
    e[(*n)++] = (ref_entry){strdup(key), strdup(patch), ev ? strdup(ev) : NULL};
}

static figures run_reference(size_t n)
{
    ref_entry *e = calloc(n, sizeof *e);
    if (e == NULL)
        exit(1);
    size_t len = 0;
    char key[96];
    const char *patch = "{\"metadata\":{\"annotations\":{\"kube-headroom.dev/status\":\"...\"}}}";
    int64_t t0 = hr_mono_ns();
    for (size_t i = 0; i < n; i++) {
        key_of(key, sizeof key, i);
        ref_put(e, &len, key, patch, "CPU limit set");
    }
    int64_t t1 = hr_mono_ns();
    for (size_t i = 0; i < n; i++) {
        key_of(key, sizeof key, i);
        ref_put(e, &len, key, patch, NULL);
    }
    int64_t t2 = hr_mono_ns();
    while (len > 0) {
        ref_entry x = e[0];
        memmove(e, e + 1, (len - 1) * sizeof *e);
        len--;
        free(x.key);
        free(x.patch);
        free(x.event);
    }
    int64_t t3 = hr_mono_ns();
    free(e);
    return (figures){(double)(t1 - t0) / (double)n, (double)(t2 - t1) / (double)n,
                     (double)(t3 - t2) / (double)n};
}

int main(int argc, char **argv)
{
    size_t max = argc > 1 ? strtoul(argv[1], NULL, 10) : 30000;
    printf("notes queue, ns per note (put / coalescing put / take); reference: linear scan + "
           "memmove\n");
    printf("%8s  %28s  %28s\n", "queued", "queue (index + holes)", "reference");
    for (size_t n = 1000; n <= max; n = n < 10000 ? 10000 : n * 3) {
        figures q = run_queue(n), r = run_reference(n);
        printf("%8zu  %8.0f %8.0f %8.0f  %8.0f %8.0f %8.0f\n", n, q.put_ns, q.coalesce_ns,
               q.take_ns, r.put_ns, r.coalesce_ns, r.take_ns);
        if (n >= max)
            break;
    }
    return 0;
}
