/*
 * curlproc.c — libcurl's global init, once; a share handle's locks.
 */
#include "curlproc.h"

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>

static pthread_once_t g_once = PTHREAD_ONCE_INIT;
static CURLcode g_init_rc = CURLE_FAILED_INIT;

static void global_init(void)
{
    g_init_rc = curl_global_init(CURL_GLOBAL_DEFAULT);
    /* Without the exit hook libcurl's globals are merely not freed at
     * exit; not worth failing for. */
    if (g_init_rc == CURLE_OK && atexit(curl_global_cleanup) != 0)
        fprintf(stderr, "headroom: cannot register libcurl cleanup at exit\n");
}

hr_status hr_kcurl_global_init(hr_err *err)
{
    pthread_once(&g_once, global_init);
    if (g_init_rc == CURLE_OK)
        return HR_OK;
    return hr_err_set(err, g_init_rc == CURLE_OUT_OF_MEMORY ? HR_E_NOMEM : HR_E_IO,
                      "libcurl: curl_global_init: %s", curl_easy_strerror(g_init_rc));
}

void hr_kcurl_share_lock(CURL *h, curl_lock_data data, curl_lock_access acc, void *mutexes)
{
    (void)h, (void)acc;
    if ((int)data >= 0 && data < CURL_LOCK_DATA_LAST)
        pthread_mutex_lock(&((pthread_mutex_t *)mutexes)[data]);
}

void hr_kcurl_share_unlock(CURL *h, curl_lock_data data, void *mutexes)
{
    (void)h;
    if ((int)data >= 0 && data < CURL_LOCK_DATA_LAST)
        pthread_mutex_unlock(&((pthread_mutex_t *)mutexes)[data]);
}
