/*
 * streams.c — registry of running streams for wakes (see streams.h).
 */
#include "kube/transport/streams.h"

int hr_kstreams_init(hr_kstreams *s)
{
    for (int i = 0; i < HR_KSTREAMS_MAX; i++)
        s->slot[i] = NULL;
    atomic_init(&s->woken, false);
    return pthread_mutex_init(&s->mu, NULL);
}

void hr_kstreams_destroy(hr_kstreams *s)
{
    pthread_mutex_destroy(&s->mu);
}

int hr_kstreams_add(hr_kstreams *s, CURLM *m)
{
    int slot = -1;
    pthread_mutex_lock(&s->mu);
    for (int i = 0; i < HR_KSTREAMS_MAX && slot < 0; i++)
        if (s->slot[i] == NULL) {
            s->slot[i] = m;
            slot = i;
        }
    pthread_mutex_unlock(&s->mu);
    return slot;
}

void hr_kstreams_remove(hr_kstreams *s, int slot)
{
    if (slot < 0)
        return;
    pthread_mutex_lock(&s->mu);
    s->slot[slot] = NULL;
    pthread_mutex_unlock(&s->mu);
}

void hr_kstreams_wake(hr_kstreams *s)
{
    pthread_mutex_lock(&s->mu);
    for (int i = 0; i < HR_KSTREAMS_MAX; i++)
        if (s->slot[i] != NULL)
            (void)curl_multi_wakeup(s->slot[i]); /* fails only for a bad handle */
    pthread_mutex_unlock(&s->mu);
}
