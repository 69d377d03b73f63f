/*
 * httpc.c — one plain HTTP request from a command (httpc.h).
 */
#include <stdbool.h>
#include <stdio.h>

#include <curl/curl.h>

#include "cmd/httpc.h"

static size_t on_body(char *p, size_t size, size_t n, void *ud)
{
    hr_buf *b = ud;
    hr_buf_append(b, p, size * n);
    return hr_buf_failed(b) ? 0 : size * n;
}

long hr_httpc_do(const hr_httpc_req *r, hr_buf *out, char *why, size_t cap)
{
    CURL *h = curl_easy_init();
    if (!h) {
        snprintf(why, cap, "curl_easy_init failed");
        return 0;
    }
    struct curl_slist *hdr = NULL, *hn;
    if (r->auth && (hn = curl_slist_append(hdr, r->auth)))
        hdr = hn;
    if (r->body && (hn = curl_slist_append(hdr, "Content-Type: application/json")))
        hdr = hn;
    char errbuf[CURL_ERROR_SIZE] = "";
    long ms = r->timeout_ms > 0 ? r->timeout_ms : 10000;
    bool ok =
        curl_easy_setopt(h, CURLOPT_URL, r->url) == CURLE_OK &&
        curl_easy_setopt(h, CURLOPT_PROTOCOLS_STR, "http,https") == CURLE_OK &&
        curl_easy_setopt(h, CURLOPT_NOSIGNAL, 1L) == CURLE_OK &&
        curl_easy_setopt(h, CURLOPT_TIMEOUT_MS, ms) == CURLE_OK &&
        curl_easy_setopt(h, CURLOPT_ERRORBUFFER, errbuf) == CURLE_OK &&
        curl_easy_setopt(h, CURLOPT_USERAGENT, r->agent ? r->agent : "headroom") == CURLE_OK &&
        curl_easy_setopt(h, CURLOPT_HTTPHEADER, hdr) == CURLE_OK &&
        curl_easy_setopt(h, CURLOPT_ACCEPT_ENCODING, "") == CURLE_OK &&
        curl_easy_setopt(h, CURLOPT_WRITEFUNCTION, on_body) == CURLE_OK &&
        curl_easy_setopt(h, CURLOPT_WRITEDATA, out) == CURLE_OK &&
        curl_easy_setopt(h, CURLOPT_SSLVERSION, (long)CURL_SSLVERSION_TLSv1_2) == CURLE_OK;
    if (ok && r->ca)
        ok = curl_easy_setopt(h, CURLOPT_CAINFO, r->ca) == CURLE_OK;
    else if (ok)
        ok = curl_easy_setopt(h, CURLOPT_SSL_VERIFYPEER, 0L) == CURLE_OK &&
             curl_easy_setopt(h, CURLOPT_SSL_VERIFYHOST, 0L) == CURLE_OK;
    if (ok && r->body)
        ok = curl_easy_setopt(h, CURLOPT_POSTFIELDS, r->body) == CURLE_OK;
    long status = 0;
    CURLcode rc = CURLE_OK;
    if (!ok)
        snprintf(why, cap, "a libcurl option was refused");
    else if ((rc = curl_easy_perform(h)) != CURLE_OK)
        snprintf(why, cap, "%s", errbuf[0] ? errbuf : curl_easy_strerror(rc));
    else if (curl_easy_getinfo(h, CURLINFO_RESPONSE_CODE, &status) != CURLE_OK)
        snprintf(why, cap, "no status");
    curl_slist_free_all(hdr);
    curl_easy_cleanup(h);
    return status;
}
