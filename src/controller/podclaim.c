/*
 * podclaim.c — per pod, one write in flight at a time (see podclaim.h).
 */
#include "controller/podclaim.h"

int hr_podclaims_init(hr_podclaims *c)
{
    int rc = pthread_mutex_init(&c->mu, NULL);
    if (rc != 0)
        return rc;
    rc = pthread_cond_init(&c->cv, NULL);
    if (rc != 0) {
        pthread_mutex_destroy(&c->mu);
        return rc;
    }
    hr_strmap_init(&c->busy);
    return 0;
}

void hr_podclaims_destroy(hr_podclaims *c)
{
    hr_strmap_free(&c->busy);
    pthread_cond_destroy(&c->cv);
    pthread_mutex_destroy(&c->mu);
}

bool hr_podclaims_take(hr_podclaims *c, const char *key)
{
    pthread_mutex_lock(&c->mu);
    while (hr_strmap_get(&c->busy, key) != NULL)
        pthread_cond_wait(&c->cv, &c->mu);
    bool ok = hr_strmap_put(&c->busy, key, 1);
    pthread_mutex_unlock(&c->mu);
    return ok;
}

void hr_podclaims_release(hr_podclaims *c, const char *key)
{
    pthread_mutex_lock(&c->mu);
    HR_IGNORE(hr_strmap_del(&c->busy, key, NULL));
    pthread_cond_broadcast(&c->cv);
    pthread_mutex_unlock(&c->mu);
}
