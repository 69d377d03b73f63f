/*
 * tls.h — a request's TLS settings as libcurl 7.88 with GnuTLS takes them:
 * the trust (the kubeconfig's CA; none with insecure-skip-tls-verify) and
 * the client certificate, all as files that are on no disk.
 *
 * The daemon links one TLS library, GnuTLS: libmicrohttpd's (src/server)
 * and libcurl's GnuTLS flavour. That libcurl takes none of the in-memory
 * options: measured against Debian's libcurl 7.88.1 (GnuTLS),
 * CURLOPT_CAINFO_BLOB is refused (CURLE_NOT_BUILT_IN) and
 * CURLOPT_SSLCERT_BLOB and CURLOPT_SSLKEY_BLOB are accepted and ignored (no
 * certificate is sent); curl's manual pages of that version name other
 * backends only. So the PEM bytes are written to sealed anonymous memory
 * files (util/memfile.h) and curl gets their paths, /proc/self/fd/N, through
 * CURLOPT_CAINFO, CURLOPT_SSLCERT and CURLOPT_SSLKEY; GnuTLS reads them for
 * each new connection. Nothing secret is written to disk.
 *
 * Owners, each closing its files when it is freed: the CA's file is the
 * hr_ktls's, which the client keeps for its life; the client certificate
 * and key are the credentials' (kube/config/cred.h: the kubeconfig's for
 * the client's life, an exec plugin's for one request's snapshot). A file
 * is open for as long as a request that names it runs.
 *
 * curl matches idle connections and cached TLS sessions by these path
 * strings, not by the bytes behind them, so one path string must never name
 * two different certificates: the CA and the kubeconfig's files stay open
 * (their numbers cannot be given to another file meanwhile), and an exec
 * plugin's are spelled with their credential generation (cred.h).
 */
#ifndef HR_KUBE_TRANSPORT_TLS_H
#define HR_KUBE_TRANSPORT_TLS_H

#include <curl/curl.h>

#include "kube/config/cred.h"
#include "kube/config/kubeconfig.h"
#include "util/err.h"
#include "util/memfile.h"

typedef struct hr_ktls {
    hr_memfile ca; /* the kubeconfig's CA; closed: none, or not verifying */
} hr_ktls;

/* Open cfg's CA as a memory file (when it has one and verifies). On
 * failure *t is left closed. */
HR_MUST_CHECK hr_status hr_ktls_init(hr_ktls *t, const hr_kubeconfig *cfg, hr_err *err);

/* Close (a zeroed hr_ktls: nothing to do). */
void hr_ktls_free(hr_ktls *t);

/* Set h's TLS options: TLS 1.2 at least, the trust, snap's client
 * certificate. The files must stay open until h's transfer is done. */
HR_MUST_CHECK hr_status hr_ktls_setup(CURL *h, const hr_ktls *t, const hr_kubeconfig *cfg,
                                      const hr_kcred_snap *snap, hr_err *err);

#endif
