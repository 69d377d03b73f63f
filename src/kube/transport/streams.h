/*
 * streams.h — the client's running streams, so another thread can wake
 * them.
 *
 * A watch stream sleeps in curl_multi_poll until data comes. To stop it
 * without polling its stop flag on a timer, the stream registers its
 * multi handle here while it runs and whoever sets the flag wakes every
 * registered handle (curl_multi_wakeup, callable from any thread).
 * Contract: one mutex guards the slots; it is a leaf — curl_multi_wakeup
 * is the only call made under it — and a stream leaves the registry before
 * it cleans its handle up, so a wake never reaches a freed handle. A stop
 * set after the stream registered is followed by a wake it receives; one
 * set before, it sees at its first look at the flag (it looks after
 * registering).
 */
#ifndef HR_KUBE_TRANSPORT_STREAMS_H
#define HR_KUBE_TRANSPORT_STREAMS_H

#include <curl/curl.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>

#define HR_KSTREAMS_MAX 32

typedef struct hr_kstreams {
    pthread_mutex_t mu;
    CURLM *slot[HR_KSTREAMS_MAX]; /* under mu; NULL: free */
    atomic_bool woken;            /* every stop comes with hr_kstreams_wake */
} hr_kstreams;

/* 0 or the error number of pthread_mutex_init. */
int hr_kstreams_init(hr_kstreams *s);
void hr_kstreams_destroy(hr_kstreams *s);

/* m joins; returns its slot, -1 when all are taken (that stream then
 * polls its flag). */
int hr_kstreams_add(hr_kstreams *s, CURLM *m);
/* The stream in slot (-1: none) leaves. */
void hr_kstreams_remove(hr_kstreams *s, int slot);
/* Wake every registered stream. */
void hr_kstreams_wake(hr_kstreams *s);

#endif
