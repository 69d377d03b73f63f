/*
 * wpool.c — batches of items on a fixed set of threads (see wpool.h).
 *
 * A batch lives on its caller's stack for as long as the caller waits; the
 * queue is a singly linked list of them. A thread claims the next index of
 * the head batch under the lock, unlinks the batch once its last index is
 * claimed, runs the item unlocked, and counts it done; the caller waits for
 * done == n on the pool's one "finished" condition variable.
 */
#include "controller/wpool.h"
#include "util/tname.h"

#include <pthread.h>
#include <stdbool.h>
#include <stdlib.h>

typedef struct batch {
    hr_wjob_fn fn;
    void *ud;
    size_t n, next, done;
    struct batch *link;
} batch;

struct hr_wpool {
    pthread_mutex_t mu;
    pthread_cond_t work; /* an item is queued, or the pool stops */
    pthread_cond_t fin;  /* a batch's last item is done */
    batch *head, *tail;  /* under mu */
    bool stop;           /* under mu */
    int running, peak;   /* under mu: items running now, most at once */
    int n_thr;
    pthread_t thr[HR_WPOOL_MAX];
};

static void *pool_main(void *ud)
{
    hr_wpool *p = ud;
    hr_thread_name("hr-write");
    pthread_mutex_lock(&p->mu);
    for (;;) {
        while (p->head == NULL && !p->stop)
            pthread_cond_wait(&p->work, &p->mu);
        if (p->head == NULL)
            break; /* stopping, nothing left */
        batch *b = p->head;
        size_t i = b->next++;
        if (b->next == b->n) {
            p->head = b->link;
            if (p->head == NULL)
                p->tail = NULL;
        }
        if (++p->running > p->peak)
            p->peak = p->running;
        pthread_mutex_unlock(&p->mu);
        b->fn(b->ud, i);
        pthread_mutex_lock(&p->mu);
        p->running--;
        if (++b->done == b->n)
            pthread_cond_broadcast(&p->fin);
    }
    pthread_mutex_unlock(&p->mu);
    return NULL;
}

hr_status hr_wpool_start(int threads, hr_wpool **out, hr_err *err)
{
    *out = NULL;
    if (threads < 1)
        threads = 1;
    if (threads > HR_WPOOL_MAX)
        threads = HR_WPOOL_MAX;
    hr_wpool *p = calloc(1, sizeof *p);
    if (p == NULL)
        return hr_err_set(err, HR_E_NOMEM, "write pool: out of memory");
    if (pthread_mutex_init(&p->mu, NULL) != 0) {
        free(p);
        return hr_err_set(err, HR_E_NOMEM, "write pool: cannot create a lock");
    }
    if (pthread_cond_init(&p->work, NULL) != 0) {
        pthread_mutex_destroy(&p->mu);
        free(p);
        return hr_err_set(err, HR_E_NOMEM, "write pool: cannot create a lock");
    }
    if (pthread_cond_init(&p->fin, NULL) != 0) {
        pthread_cond_destroy(&p->work);
        pthread_mutex_destroy(&p->mu);
        free(p);
        return hr_err_set(err, HR_E_NOMEM, "write pool: cannot create a lock");
    }
    for (int i = 0; i < threads; i++) {
        if (pthread_create(&p->thr[i], NULL, pool_main, p) != 0)
            break;
        p->n_thr++;
    }
    if (p->n_thr == 0) {
        hr_wpool_stop(p);
        return hr_err_set(err, HR_E_NOMEM, "write pool: cannot start a thread");
    }
    *out = p;
    return HR_OK;
}

void hr_wpool_stop(hr_wpool *p)
{
    if (p == NULL)
        return;
    pthread_mutex_lock(&p->mu);
    p->stop = true;
    pthread_cond_broadcast(&p->work);
    pthread_mutex_unlock(&p->mu);
    for (int i = 0; i < p->n_thr; i++)
        pthread_join(p->thr[i], NULL);
    pthread_cond_destroy(&p->fin);
    pthread_cond_destroy(&p->work);
    pthread_mutex_destroy(&p->mu);
    free(p);
}

static void run_inline(hr_wjob_fn fn, void *ud, size_t n)
{
    for (size_t i = 0; i < n; i++)
        fn(ud, i);
}

void hr_wpool_run(hr_wpool *p, hr_wjob_fn fn, void *ud, size_t n)
{
    if (n == 0)
        return;
    if (p == NULL) {
        run_inline(fn, ud, n);
        return;
    }
    batch b = {.fn = fn, .ud = ud, .n = n};
    pthread_mutex_lock(&p->mu);
    if (p->stop) {
        pthread_mutex_unlock(&p->mu);
        run_inline(fn, ud, n);
        return;
    }
    if (p->tail != NULL)
        p->tail->link = &b;
    else
        p->head = &b;
    p->tail = &b;
    if (n > 1)
        pthread_cond_broadcast(&p->work);
    else
        pthread_cond_signal(&p->work);
    while (b.done < b.n)
        pthread_cond_wait(&p->fin, &p->mu);
    pthread_mutex_unlock(&p->mu);
}

int hr_wpool_threads(const hr_wpool *p)
{
    return p != NULL ? p->n_thr : 0;
}

int hr_wpool_peak(hr_wpool *p)
{
    if (p == NULL)
        return 0;
    pthread_mutex_lock(&p->mu);
    int v = p->peak;
    pthread_mutex_unlock(&p->mu);
    return v;
}
