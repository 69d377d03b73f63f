/*
 * tls.c — the TLS options of a request (see tls.h).
 */
#include "kube/transport/tls.h"

#include <string.h>

hr_status hr_ktls_init(hr_ktls *t, const hr_kubeconfig *cfg, hr_err *err)
{
    memset(t, 0, sizeof *t);
    if (!cfg->ca || cfg->insecure)
        return HR_OK;
    hr_status st = hr_memfile_open(&t->ca, "hr-ca", cfg->ca, cfg->ca_len, 0, err);
    if (st)
        hr_err_prefix(err, "certificate authority");
    return st;
}

void hr_ktls_free(hr_ktls *t)
{
    hr_memfile_close(&t->ca);
}

#define SET(opt, val)                                                                 \
    do {                                                                              \
        CURLcode rc_ = curl_easy_setopt(h, (opt), (val));                             \
        if (rc_ != CURLE_OK)                                                          \
            return hr_err_set(err, rc_ == CURLE_OUT_OF_MEMORY ? HR_E_NOMEM : HR_E_IO, \
                              "libcurl: %s: %s", #opt, curl_easy_strerror(rc_));      \
    } while (0)

hr_status hr_ktls_setup(CURL *h, const hr_ktls *t, const hr_kubeconfig *cfg,
                        const hr_kcred_snap *snap, hr_err *err)
{
    SET(CURLOPT_SSLVERSION, (long)CURL_SSLVERSION_TLSv1_2);
    if (cfg->insecure) {
        SET(CURLOPT_SSL_VERIFYPEER, 0L);
        SET(CURLOPT_SSL_VERIFYHOST, 0L);
    } else if (t->ca.path[0]) {
        SET(CURLOPT_CAINFO, t->ca.path);
        /* Only the kubeconfig's CA, as kubectl: not the system directory. */
        SET(CURLOPT_CAPATH, (char *)NULL);
    }
    if (snap->cert_path) {
        SET(CURLOPT_SSLCERT, snap->cert_path);
        SET(CURLOPT_SSLCERTTYPE, "PEM");
        SET(CURLOPT_SSLKEY, snap->key_path);
        SET(CURLOPT_SSLKEYTYPE, "PEM");
    }
    return HR_OK;
}

#undef SET
