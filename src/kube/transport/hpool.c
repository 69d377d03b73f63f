/*
 * hpool.c — the API client's idle easy handles (the contract is
 * kube/transport/hpool.h).
 */
#include "kube/transport/hpool.h"

#include <string.h>

int hr_khpool_init(hr_khpool *p)
{
    p->n = 0;
    return pthread_mutex_init(&p->mu, NULL) == 0 ? 0 : -1;
}

void hr_khpool_destroy(hr_khpool *p)
{
    for (int i = 0; i < p->n; i++)
        curl_easy_cleanup(p->h[i]);
    p->n = 0;
    pthread_mutex_destroy(&p->mu);
}

CURL *hr_khpool_take(hr_khpool *p)
{
    CURL *h = NULL;
    pthread_mutex_lock(&p->mu);
    if (p->n > 0)
        h = p->h[--p->n];
    pthread_mutex_unlock(&p->mu);
    if (h == NULL)
        return curl_easy_init();
    curl_easy_reset(h); /* options go, idle connections and caches stay */
    return h;
}

void hr_khpool_give(hr_khpool *p, CURL *h)
{
    if (h == NULL)
        return;
    pthread_mutex_lock(&p->mu);
    if (p->n < HR_KHPOOL_MAX) {
        p->h[p->n++] = h;
        h = NULL;
    }
    pthread_mutex_unlock(&p->mu);
    if (h != NULL)
        curl_easy_cleanup(h);
}

int hr_khpool_shed(hr_khpool *p, int keep)
{
    CURL *gone[HR_KHPOOL_MAX];
    int n = 0;
    if (keep < 0)
        keep = 0;
    pthread_mutex_lock(&p->mu);
    if (p->n > keep) {
        n = p->n - keep; /* the bottom of the stack: idle longest */
        memcpy(gone, p->h, (size_t)n * sizeof *gone);
        memmove(p->h, p->h + n, (size_t)keep * sizeof *p->h);
        p->n = keep;
    }
    pthread_mutex_unlock(&p->mu);
    for (int i = 0; i < n; i++)
        curl_easy_cleanup(gone[i]);
    return n;
}
