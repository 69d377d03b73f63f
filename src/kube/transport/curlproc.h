/*
 * curlproc.h — libcurl's process-wide setup, and the locks of a share
 * handle (client.c's: the TLS session and DNS caches of all its handles).
 */
#ifndef HR_KUBE_TRANSPORT_CURLPROC_H
#define HR_KUBE_TRANSPORT_CURLPROC_H

#include <curl/curl.h>

#include "util/err.h"

/* curl_global_init once per process (and curl_global_cleanup at exit):
 * libcurl's global state, and GnuTLS's under it, is process-wide.
 * Thread-safe; every later call returns the first one's result. */
HR_MUST_CHECK hr_status hr_kcurl_global_init(hr_err *err);

/* CURLSHOPT_LOCKFUNC and CURLSHOPT_UNLOCKFUNC with CURLSHOPT_USERDATA an
 * array of CURL_LOCK_DATA_LAST initialised pthread mutexes: one per kind
 * of shared data. */
void hr_kcurl_share_lock(CURL *h, curl_lock_data data, curl_lock_access acc, void *mutexes);
void hr_kcurl_share_unlock(CURL *h, curl_lock_data data, void *mutexes);

#endif
