/*
 * mux.c — one multiplexed connection, driven by whichever caller waits
 * (see mux.h).
 */
#include "kube/transport/mux.h"

#include <errno.h>
#include <string.h>

/* The longest a driver sleeps without a wake; curl shortens it to its own
 * timers (every transfer's timeout, connects). */
#define POLL_MS 1000

static CURLM *new_multi(void)
{
    CURLM *m = curl_multi_init();
    if (m && curl_multi_setopt(m, CURLMOPT_PIPELINING, (long)CURLPIPE_MULTIPLEX) != CURLM_OK) {
        (void)curl_multi_cleanup(m); /* nothing added: nothing to undo */
        m = NULL;
    }
    return m;
}

int hr_kmux_init(hr_kmux *x)
{
    memset(x, 0, sizeof *x);
    int e = pthread_mutex_init(&x->mu, NULL);
    if (e != 0)
        return e;
    x->m = new_multi();
    if (!x->m) {
        pthread_mutex_destroy(&x->mu);
        return ENOMEM;
    }
    return 0;
}

void hr_kmux_destroy(hr_kmux *x)
{
    if (x->m)
        (void)curl_multi_cleanup(x->m); /* no handle is in it: nothing to report */
    for (int i = 0; i < x->n_pool; i++)
        curl_easy_cleanup(x->pool[i]);
    pthread_mutex_destroy(&x->mu);
}

CURL *hr_kmux_take(hr_kmux *x)
{
    CURL *h = NULL;
    pthread_mutex_lock(&x->mu);
    if (x->n_pool)
        h = x->pool[--x->n_pool];
    pthread_mutex_unlock(&x->mu);
    if (h) {
        curl_easy_reset(h); /* options go, caches stay */
        return h;
    }
    return curl_easy_init();
}

void hr_kmux_give(hr_kmux *x, CURL *h)
{
    if (!h)
        return;
    pthread_mutex_lock(&x->mu);
    if (x->n_pool < HR_KMUX_POOL_MAX) {
        x->pool[x->n_pool++] = h;
        h = NULL;
    }
    pthread_mutex_unlock(&x->mu);
    if (h)
        curl_easy_cleanup(h);
}

/* Under mu: j ends with rc and leaves the list; its owner is woken (it
 * reads j only after taking mu, so j is not touched after this). */
static void finish(hr_kmux *x, hr_kmux_job *j, CURLcode rc)
{
    for (hr_kmux_job **p = &x->jobs; *p; p = &(*p)->next)
        if (*p == j) {
            *p = j->next;
            break;
        }
    j->rc = rc;
    j->done = true;
    pthread_cond_signal(&j->cv);
}

static hr_kmux_job *job_of(hr_kmux *x, CURL *h)
{
    for (hr_kmux_job *j = x->jobs; j; j = j->next)
        if (j->h == h)
            return j;
    return NULL;
}

/* Under mu, by the role's holder: every transfer on the connection ends,
 * and the multi handle (with the connection, closed abortively) is
 * replaced. */
static void reset(hr_kmux *x)
{
    x->reset_wanted = false;
    hr_kmux_job *j = x->jobs;
    while (j) {
        hr_kmux_job *next = j->next;
        if (j->added) {
            (void)curl_multi_remove_handle(x->m, j->h); /* aborts it; nothing to undo */
            j->added = false;
            j->cut = true;
            finish(x, j, CURLE_SEND_ERROR);
        }
        j = next;
    }
    if (x->m)
        (void)curl_multi_cleanup(x->m); /* empty now: closes its connections */
    x->gen++;
    x->m = new_multi();
}

/* Under mu, by the role's holder: queued jobs join the multi handle. */
static void add_queued(hr_kmux *x)
{
    if (!x->m)
        x->m = new_multi();
    hr_kmux_job *j = x->jobs;
    while (j) {
        hr_kmux_job *next = j->next;
        if (!j->added) {
            if (x->m && curl_multi_add_handle(x->m, j->h) == CURLM_OK) {
                j->added = true;
                j->gen = x->gen;
            } else {
                finish(x, j, CURLE_OUT_OF_MEMORY);
            }
        }
        j = next;
    }
}

/* Under mu, by the role's holder: transfers that ended leave the multi
 * handle and their owners are woken. */
static void collect(hr_kmux *x)
{
    int q;
    CURLMsg *msg;
    while ((msg = curl_multi_info_read(x->m, &q)) != NULL) {
        if (msg->msg != CURLMSG_DONE)
            continue;
        CURL *h = msg->easy_handle;
        CURLcode rc = msg->data.result; /* read before the removal frees msg */
        hr_kmux_job *j = job_of(x, h);
        (void)curl_multi_remove_handle(x->m, h); /* ended: nothing to undo */
        if (j) {
            j->added = false;
            finish(x, j, rc);
        }
    }
}

/* Under mu, holding the role: run every transfer until mine has ended.
 * mu is released while curl works. */
static void drive(hr_kmux *x, hr_kmux_job *mine)
{
    while (!mine->done) {
        if (x->reset_wanted)
            reset(x);
        add_queued(x);
        if (mine->done)
            break;
        CURLM *m = x->m; /* only the role's holder replaces it */
        pthread_mutex_unlock(&x->mu);
        int running = 0;
        CURLMcode mc = curl_multi_perform(m, &running);
        pthread_mutex_lock(&x->mu);
        collect(x);
        if (mc != CURLM_OK) {
            reset(x); /* a broken multi handle: start again */
            continue;
        }
        if (mine->done)
            break;
        pthread_mutex_unlock(&x->mu);
        mc = curl_multi_poll(m, NULL, 0, POLL_MS, NULL);
        pthread_mutex_lock(&x->mu);
        if (mc != CURLM_OK)
            reset(x);
    }
}

/* Under mu: the role passes to the owner of a job still running (it sleeps
 * on its condition variable), or to nobody. */
static void hand_off(hr_kmux *x)
{
    x->driving = false;
    if (x->jobs)
        pthread_cond_signal(&x->jobs->cv);
}

CURLcode hr_kmux_perform(hr_kmux *x, CURL *h, uint64_t *gen, bool *cut)
{
    hr_kmux_job j;
    memset(&j, 0, sizeof j);
    j.h = h;
    *gen = 0;
    *cut = false;
    if (pthread_cond_init(&j.cv, NULL) != 0)
        return CURLE_OUT_OF_MEMORY;
    pthread_mutex_lock(&x->mu);
    j.next = x->jobs;
    x->jobs = &j;
    if (x->driving) {
        if (x->m)
            (void)curl_multi_wakeup(x->m); /* fails only for a bad handle */
        while (!j.done && x->driving)
            pthread_cond_wait(&j.cv, &x->mu);
    }
    if (!j.done) {
        x->driving = true;
        drive(x, &j);
        hand_off(x);
    }
    *gen = j.gen;
    *cut = j.cut;
    CURLcode rc = j.rc;
    pthread_mutex_unlock(&x->mu);
    pthread_cond_destroy(&j.cv);
    return rc;
}

void hr_kmux_reset(hr_kmux *x, uint64_t gen)
{
    pthread_mutex_lock(&x->mu);
    if (gen == x->gen) {
        x->reset_wanted = true;
        if (x->driving) {
            if (x->m)
                (void)curl_multi_wakeup(x->m); /* the driver resets at its next turn */
        } else {
            reset(x);
        }
    }
    pthread_mutex_unlock(&x->mu);
}
