/*
 * mux.h — one multiplexed connection for every request of a client, and
 * the pool of easy handles the requests run on.
 *
 * A request (not a stream) runs on a curl multi handle shared by the whole
 * client, so concurrent requests go as HTTP/2 streams over one connection
 * (CURLOPT_PIPEWAIT) instead of one TLS connection per thread. There is no
 * I/O thread: whichever caller is waiting drives the multi handle
 * (leaders and followers). A caller finding nobody driving drives until
 * its own transfer ends — the common case at the write limiter's pace, a
 * request costs no thread switch more than a blocking curl_easy_perform.
 * A caller finding a driver queues its handle, wakes the driver
 * (curl_multi_wakeup) and sleeps on its own condition variable; the driver
 * adds queued handles, runs every transfer's callbacks, and wakes each
 * owner as its transfer ends. A driver whose transfer is done hands the
 * multi handle to one waiting caller and returns.
 *
 * Contract: mu guards the handle pool, the job list, driving and the
 * multi handle m itself (which the driver alone uses, with mu released while it runs
 * curl); a job's callbacks run on the driver's thread while its owner
 * sleeps, and its owner reads the results after seeing done under mu.
 *
 * A request whose connection must go (design §10: a timed-out write must
 * not wait in a stalled server's socket for it to wake) asks for a reset:
 * every transfer still on the connection ends with CURLE_SEND_ERROR, and
 * the multi handle is replaced, closing the connection abortively (the
 * client's sockets linger {1, 0}). A reset names the connection's
 * generation, so the others' failures do not reset the next connection.
 */
#ifndef HR_KUBE_TRANSPORT_MUX_H
#define HR_KUBE_TRANSPORT_MUX_H

#include <curl/curl.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>

#include "util/err.h"

typedef struct hr_kmux_job {
    CURL *h;
    CURLcode rc;
    bool done;
    bool added;   /* in the multi handle */
    bool cut;     /* ended by a reset */
    uint64_t gen; /* the connection generation it ran on */
    pthread_cond_t cv;
    struct hr_kmux_job *next; /* the mux's list of jobs not done */
} hr_kmux_job;

#define HR_KMUX_POOL_MAX 32 /* writes in flight (HR_CTL_WRITE_CONCURRENCY), notes, reads */

typedef struct hr_kmux {
    pthread_mutex_t mu;
    CURL *pool[HR_KMUX_POOL_MAX]; /* under mu: idle easy handles */
    int n_pool;
    CURLM *m;          /* NULL: a reset could not make a new one */
    bool driving;      /* a caller runs m */
    bool reset_wanted; /* for gen: end every transfer, replace m */
    uint64_t gen;      /* bumped by every reset */
    hr_kmux_job *jobs; /* every job not done, queued or added */
} hr_kmux;

/* 0 or an error number (pthread_mutex_init) / ENOMEM (curl_multi_init). */
int hr_kmux_init(hr_kmux *x);
/* No request may still run. */
void hr_kmux_destroy(hr_kmux *x);

/* An easy handle for one request: a pooled one with its options reset
 * (its caches kept), or a new one; NULL: out of memory. Given back with
 * hr_kmux_give (NULL: nothing) once the request is over. */
CURL *hr_kmux_take(hr_kmux *x);
void hr_kmux_give(hr_kmux *x, CURL *h);

/* Run the transfer on h (set up by the caller) to its end and return its
 * result; *gen gets the connection generation it ran on (for
 * hr_kmux_reset), *cut whether another request's reset ended it
 * (CURLE_SEND_ERROR then). CURLE_OUT_OF_MEMORY when the multi handle could
 * not be made or refused the handle. */
CURLcode hr_kmux_perform(hr_kmux *x, CURL *h, uint64_t *gen, bool *cut);

/* Close the connection of generation gen abortively, ending every
 * transfer still on it; nothing if it is gone already. */
void hr_kmux_reset(hr_kmux *x, uint64_t gen);

#endif
