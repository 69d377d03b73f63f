/*
 * hpool.h — the API client's idle easy handles (client.c).
 *
 * A request takes a handle and gives it back; a handle keeps its idle
 * connection (TLS and HTTP/2 state, libcurl's buffers), so the next request
 * reuses it warm. The pool is a stack: the handle given back last is taken
 * first, so a steady trickle of requests keeps reusing the same few and the
 * ones at the bottom are those idle longest. A burst that ran many requests
 * at once (a write wave at its full concurrency) leaves as many handles
 * behind, each holding a connection the API server keeps too;
 * hr_khpool_shed closes all but the most recently used few — the client
 * owner calls it once a burst is over (client.h, hr_kclient_shed_idle).
 *
 * Thread-safe: one mutex, held only to push or pop (libcurl is called
 * outside it).
 */
#ifndef HR_KUBE_HPOOL_H
#define HR_KUBE_HPOOL_H

#include <curl/curl.h>
#include <pthread.h>

#define HR_KHPOOL_MAX 32 /* writes in flight (HR_CTL_WRITE_CONCURRENCY), notes, reads */

typedef struct hr_khpool {
    pthread_mutex_t mu;
    CURL *h[HR_KHPOOL_MAX]; /* h[n - 1] is the most recently given back */
    int n;
} hr_khpool;

/* 0, or -1 when the mutex cannot be made. */
int hr_khpool_init(hr_khpool *p);

/* Closes every pooled handle (and its connections). */
void hr_khpool_destroy(hr_khpool *p);

/* The most recently given back handle, its options reset (its connections
 * and caches stay); a new one when none is idle; NULL: out of memory. */
CURL *hr_khpool_take(hr_khpool *p);

/* Back to the pool (NULL: nothing); closed instead when the pool is full. */
void hr_khpool_give(hr_khpool *p, CURL *h);

/* Closes the idle handles but the keep most recently given back; returns
 * how many it closed. */
int hr_khpool_shed(hr_khpool *p, int keep);

#endif
