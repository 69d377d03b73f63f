/*
 * easypool.c — the API client's idle easy handles (see easypool.h).
 */
#include "kube/transport/easypool.h"

int hr_keasypool_init(hr_keasypool *p)
{
    p->n = 0;
    return pthread_mutex_init(&p->mu, NULL);
}

void hr_keasypool_destroy(hr_keasypool *p)
{
    for (int i = 0; i < p->n; i++)
        curl_easy_cleanup(p->h[i]);
    p->n = 0;
    pthread_mutex_destroy(&p->mu);
}

CURL *hr_keasypool_take(hr_keasypool *p)
{
    CURL *h = NULL;
    pthread_mutex_lock(&p->mu);
    if (p->n > 0)
        h = p->h[--p->n];
    pthread_mutex_unlock(&p->mu);
    if (h != NULL) {
        /* Options go, idle connections and caches stay. */
        curl_easy_reset(h);
        return h;
    }
    return curl_easy_init();
}

void hr_keasypool_give(hr_keasypool *p, CURL *h)
{
    if (h == NULL)
        return;
    pthread_mutex_lock(&p->mu);
    if (p->n < HR_KEASYPOOL_MAX) {
        p->h[p->n++] = h;
        h = NULL;
    }
    pthread_mutex_unlock(&p->mu);
    if (h != NULL)
        curl_easy_cleanup(h);
}
