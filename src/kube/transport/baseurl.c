/*
 * baseurl.c — the URL prefix requests are made against (baseurl.h).
 */
#include "kube/transport/baseurl.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

hr_status hr_kbase_url(const hr_kubeconfig *k, char **base, struct curl_slist **connect_to,
                       hr_err *err)
{
    *base = NULL;
    *connect_to = NULL;
    if (!k->tls_server_name) {
        *base = strdup(k->server);
        return *base ? HR_OK : hr_err_set(err, HR_E_NOMEM, "client: out of memory");
    }
    CURLU *u = curl_url();
    char *host = NULL, *port = NULL, *url = NULL;
    hr_status st = HR_OK;
    if (!u) {
        return hr_err_set(err, HR_E_NOMEM, "client: out of memory");
    }
    CURLUcode uc = curl_url_set(u, CURLUPART_URL, k->server, 0);
    if (uc == CURLUE_OK)
        uc = curl_url_get(u, CURLUPART_HOST, &host, 0);
    if (uc == CURLUE_OK)
        uc = curl_url_get(u, CURLUPART_PORT, &port, CURLU_DEFAULT_PORT);
    if (uc == CURLUE_OK)
        uc = curl_url_set(u, CURLUPART_HOST, k->tls_server_name, 0);
    if (uc == CURLUE_OK)
        uc = curl_url_get(u, CURLUPART_URL, &url, 0);
    if (uc != CURLUE_OK) {
        st = hr_err_set(err, HR_E_INPUT, "%s: server %s with tls-server-name %s: %s", k->origin,
                        k->server, k->tls_server_name, curl_url_strerror(uc));
        goto out;
    }
    size_t n = strlen(url);
    while (n && url[n - 1] == '/')
        url[--n] = '\0';
    char ct[600];
    snprintf(ct, sizeof ct, "%.250s:%.10s:%.250s:%.10s", k->tls_server_name, port, host, port);
    *base = strdup(url);
    *connect_to = curl_slist_append(NULL, ct);
    if (!*base || !*connect_to)
        st = hr_err_set(err, HR_E_NOMEM, "client: out of memory");
out:
    curl_free(host);
    curl_free(port);
    curl_free(url);
    curl_url_cleanup(u);
    return st;
}
