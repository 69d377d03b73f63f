/*
 * baseurl.h — the URL prefix the client's requests are made against, and
 * the connection redirect a kubeconfig's tls-server-name needs: the URL
 * names that host (so it is what SNI and certificate verification see) and
 * CURLOPT_CONNECT_TO sends the connection to the server's real address.
 * Split from client.c, which keeps both for its lifetime.
 */
#ifndef HR_KUBE_TRANSPORT_BASEURL_H
#define HR_KUBE_TRANSPORT_BASEURL_H

#include <curl/curl.h>

#include "kube/config/kubeconfig.h"
#include "util/err.h"

/* *base: malloc'ed, the server URL without a trailing '/' (with
 * tls-server-name: that host, the server's port); *connect_to: NULL, or
 * the one-entry list for CURLOPT_CONNECT_TO (curl_slist_free_all). On
 * failure the caller frees whatever was set. */
HR_MUST_CHECK hr_status hr_kbase_url(const hr_kubeconfig *k, char **base,
                                     struct curl_slist **connect_to, hr_err *err);

#endif
