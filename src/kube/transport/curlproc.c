/*
 * curlproc.c — libcurl's global init, once; a share handle's locks.
 */
#include "curlproc.h"

#include <dlfcn.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static pthread_once_t g_once = PTHREAD_ONCE_INIT;
static CURLcode g_init_rc = CURLE_FAILED_INIT;

/* libssh2's flag "leave the crypto library alone" (libssh2.h, a stable
 * ABI value since libssh2 1.2.5). */
#define SSH2_INIT_NO_CRYPTO 0x0001

/* Debian's libcurl links libssh2, whose init (called by curl_global_init)
 * initialises OpenSSL's libcrypto: all its ciphers and its config file,
 * for SSH, which this client never speaks (CURLOPT_PROTOCOLS_STR). libssh2
 * counts its inits, so ours first, without the crypto, makes curl's a
 * mere count: 1.4 MB less resident memory in the daemon
 * (tests/unit/test_ktransport.c). Looked up, not linked: a libcurl built
 * without libssh2 has nothing to skip. */
static void skip_ssh_crypto(void)
{
    int (*ssh2_init)(int) = NULL;
    void *sym = dlsym(RTLD_DEFAULT, "libssh2_init");
    memcpy(&ssh2_init, &sym, sizeof ssh2_init); /* object to function pointer */
    if (ssh2_init && ssh2_init(SSH2_INIT_NO_CRYPTO) != 0)
        fprintf(stderr, "headroom: libssh2_init failed; libcurl initialises it again\n");
}

static void global_init(void)
{
    skip_ssh_crypto();
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
