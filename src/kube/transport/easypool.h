/*
 * easypool.h — the API client's idle easy handles (client.c
 * "Connections").
 *
 * A libcurl easy handle keeps its own idle connections, so a request that
 * runs on a handle an earlier request gave back reuses a warm TLS (and
 * HTTP/2) connection. The client takes a handle for each request and gives
 * it back after — unless the request failed in transport: that handle is
 * freed, its connection closed with a reset (client.h). Up to
 * HR_KEASYPOOL_MAX idle handles are kept (the writes in flight, the notes'
 * senders, the reads); one given back beyond that is freed.
 *
 * Contract: one mutex guards the slots; it is a leaf, and no libcurl call
 * is made under it.
 */
#ifndef HR_KUBE_TRANSPORT_EASYPOOL_H
#define HR_KUBE_TRANSPORT_EASYPOOL_H

#include <curl/curl.h>
#include <pthread.h>

#define HR_KEASYPOOL_MAX 32

typedef struct hr_keasypool {
    pthread_mutex_t mu;
    CURL *h[HR_KEASYPOOL_MAX]; /* under mu: [0, n) idle */
    int n;
} hr_keasypool;

/* 0 or the error number of pthread_mutex_init. */
int hr_keasypool_init(hr_keasypool *p);
/* Frees the idle handles: before the share they use goes (client.c). */
void hr_keasypool_destroy(hr_keasypool *p);

/* An idle handle, its options reset (its connections and caches kept), or
 * a new one; NULL: out of memory. */
CURL *hr_keasypool_take(hr_keasypool *p);
/* h (NULL: nothing) is idle again, or freed when the pool is full. */
void hr_keasypool_give(hr_keasypool *p, CURL *h);

#endif
