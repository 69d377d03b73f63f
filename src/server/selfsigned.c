/*
 * selfsigned.c — the self-signed serving certificate of the secured
 * /metrics when none is provided (see selfsigned.h for when it is used).
 *
 * What is made, with GnuTLS only, in memory:
 *  - a private key, ECDSA on P-256 (gnutls_x509_privkey_generate): small,
 *    fast to make at every start, accepted by every TLS 1.2/1.3 client and
 *    by HR_TLS_PRIORITIES (ECDHE-ECDSA);
 *  - an X.509 v3 certificate signed with that key (SHA-256): a 128-bit
 *    random serial (gnutls_rnd, the top bit cleared so it is positive), the
 *    subject CN given (the issuer is the same), valid from five minutes ago
 *    (a scraper's clock a little behind) for `days`, not a CA, key usage
 *    digitalSignature, extended key usage serverAuth, and the DNS and IP
 *    subject alternative names given (a client checks the name it dialled
 *    against them; one that skips verification does not care);
 *  - the pair as GnuTLS serves it (gnutls_pcert_st, gnutls_privkey_t), the
 *    certificate's DER and its SHA-256 fingerprint for the log.
 *
 * The private key is never exported: the gnutls_x509_privkey_t moves into
 * the gnutls_privkey_t (GNUTLS_PRIVKEY_IMPORT_AUTO_RELEASE), which GnuTLS
 * frees (and clears) with the holder. Every GnuTLS return is checked; a
 * failure is an hr_err naming the step and GnuTLS's reason.
 */
#include <arpa/inet.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <gnutls/crypto.h>
#include <gnutls/gnutls.h>
#include <gnutls/x509.h>

#include "server/selfsigned.h"

#define DEFAULT_DAYS 365u
#define MAX_DAYS 3650u
#define BACKDATE_S 300 /* a scraper whose clock is a little behind still accepts it */
#define SERIAL_LEN 16

struct hr_selfsigned {
    gnutls_pcert_st pcert;
    bool have_pcert;
    gnutls_privkey_t key;
    gnutls_datum_t der;
    char fpr[HR_SELFSIGNED_FPR_LEN];
};

void hr_selfsigned_free(hr_selfsigned *s)
{
    if (s == NULL)
        return;
    if (s->have_pcert)
        gnutls_pcert_deinit(&s->pcert);
    if (s->key)
        gnutls_privkey_deinit(s->key);
    gnutls_free(s->der.data);
    free(s);
}

/* A failed GnuTLS step as an error value. */
static hr_status gt_err(hr_err *err, const char *step, int rc)
{
    return hr_err_set(err, HR_E_INPUT, "self-signed certificate: %s: %s", step,
                      gnutls_strerror(rc));
}

static hr_status add_sans(gnutls_x509_crt_t crt, const hr_selfsigned_opts *o, hr_err *err)
{
    int rc;
    for (size_t i = 0; i < o->n_dns; i++) {
        const char *d = o->dns[i];
        if (d == NULL || d[0] == '\0')
            continue;
        if ((rc = gnutls_x509_crt_set_subject_alt_name(
                 crt, GNUTLS_SAN_DNSNAME, d, (unsigned)strlen(d), GNUTLS_FSAN_APPEND)) < 0)
            return gt_err(err, "DNS name", rc);
    }
    for (size_t i = 0; i < o->n_ips; i++) {
        const char *a = o->ips[i];
        unsigned char bin[16];
        unsigned len;
        if (a == NULL || a[0] == '\0')
            continue;
        if (inet_pton(AF_INET, a, bin) == 1)
            len = 4;
        else if (inet_pton(AF_INET6, a, bin) == 1)
            len = 16;
        else
            return hr_err_set(err, HR_E_INPUT,
                              "self-signed certificate: \"%s\" is not an IP address", a);
        if ((rc = gnutls_x509_crt_set_subject_alt_name(crt, GNUTLS_SAN_IPADDRESS, bin, len,
                                                       GNUTLS_FSAN_APPEND)) < 0)
            return gt_err(err, "IP address", rc);
    }
    return HR_OK;
}

/* Everything but the SANs and the signature: version, serial, validity,
 * names, key and its uses. */
static hr_status fill(gnutls_x509_crt_t crt, gnutls_x509_privkey_t key, const hr_selfsigned_opts *o,
                      hr_err *err)
{
    int rc;
    unsigned char serial[SERIAL_LEN];
    if ((rc = gnutls_rnd(GNUTLS_RND_NONCE, serial, sizeof serial)) < 0)
        return gt_err(err, "random serial", rc);
    serial[0] &= 0x7f; /* positive, as RFC 5280 wants */
    serial[0] |= 0x01; /* and without a leading zero byte to drop */
    unsigned days = o->days ? o->days : DEFAULT_DAYS;
    if (days > MAX_DAYS)
        return hr_err_set(err, HR_E_INPUT, "self-signed certificate: %u days is too long", days);
    time_t now = time(NULL);
    const char *cn = o->common_name && o->common_name[0] ? o->common_name : "kube-headroom";
    if ((rc = gnutls_x509_crt_set_version(crt, 3)) < 0)
        return gt_err(err, "version", rc);
    if ((rc = gnutls_x509_crt_set_serial(crt, serial, sizeof serial)) < 0)
        return gt_err(err, "serial", rc);
    if ((rc = gnutls_x509_crt_set_activation_time(crt, now - BACKDATE_S)) < 0)
        return gt_err(err, "not before", rc);
    if ((rc = gnutls_x509_crt_set_expiration_time(crt, now + (time_t)days * 86400)) < 0)
        return gt_err(err, "not after", rc);
    if ((rc = gnutls_x509_crt_set_dn_by_oid(crt, GNUTLS_OID_X520_COMMON_NAME, 0, cn,
                                            (unsigned)strlen(cn))) < 0)
        return gt_err(err, "common name", rc);
    if ((rc = gnutls_x509_crt_set_key(crt, key)) < 0)
        return gt_err(err, "public key", rc);
    if ((rc = gnutls_x509_crt_set_basic_constraints(crt, 0, -1)) < 0)
        return gt_err(err, "basic constraints", rc);
    if ((rc = gnutls_x509_crt_set_key_usage(crt, GNUTLS_KEY_DIGITAL_SIGNATURE)) < 0)
        return gt_err(err, "key usage", rc);
    if ((rc = gnutls_x509_crt_set_key_purpose_oid(crt, GNUTLS_KP_TLS_WWW_SERVER, 0)) < 0)
        return gt_err(err, "extended key usage", rc);
    unsigned char kid[64];
    size_t kid_len = sizeof kid;
    if ((rc = gnutls_x509_crt_get_key_id(crt, 0, kid, &kid_len)) < 0)
        return gt_err(err, "key id", rc);
    if ((rc = gnutls_x509_crt_set_subject_key_id(crt, kid, kid_len)) < 0)
        return gt_err(err, "subject key id", rc);
    return add_sans(crt, o, err);
}

/* The signed certificate's DER, fingerprint and pcert into s. */
static hr_status finish(hr_selfsigned *s, gnutls_x509_crt_t crt, hr_err *err)
{
    int rc;
    if ((rc = gnutls_x509_crt_export2(crt, GNUTLS_X509_FMT_DER, &s->der)) < 0)
        return gt_err(err, "export", rc);
    unsigned char fp[32];
    size_t fp_len = sizeof fp;
    if ((rc = gnutls_x509_crt_get_fingerprint(crt, GNUTLS_DIG_SHA256, fp, &fp_len)) < 0)
        return gt_err(err, "fingerprint", rc);
    for (size_t i = 0; i < fp_len && i < 32; i++)
        snprintf(s->fpr + 3 * i, 4, i + 1 < fp_len ? "%02X:" : "%02X", fp[i]);
    if ((rc = gnutls_pcert_import_x509(&s->pcert, crt, 0)) < 0)
        return gt_err(err, "pcert", rc);
    s->have_pcert = true;
    return HR_OK;
}

hr_status hr_selfsigned_new(const hr_selfsigned_opts *o, hr_selfsigned **out, hr_err *err)
{
    *out = NULL;
    hr_selfsigned *s = calloc(1, sizeof *s);
    if (s == NULL)
        return hr_err_set(err, HR_E_NOMEM, "self-signed certificate: out of memory");
    gnutls_x509_privkey_t xkey = NULL;
    gnutls_x509_crt_t crt = NULL;
    hr_status st;
    int rc;
    if ((rc = gnutls_x509_privkey_init(&xkey)) < 0) {
        xkey = NULL;
        st = gt_err(err, "key init", rc);
        goto fail;
    }
    if ((rc = gnutls_x509_privkey_generate(
             xkey, GNUTLS_PK_ECDSA, GNUTLS_CURVE_TO_BITS(GNUTLS_ECC_CURVE_SECP256R1), 0)) < 0) {
        st = gt_err(err, "ECDSA P-256 key", rc);
        goto fail;
    }
    if ((rc = gnutls_x509_crt_init(&crt)) < 0) {
        crt = NULL;
        st = gt_err(err, "certificate init", rc);
        goto fail;
    }
    if ((st = fill(crt, xkey, o, err)))
        goto fail;
    if ((rc = gnutls_x509_crt_sign2(crt, crt, xkey, GNUTLS_DIG_SHA256, 0)) < 0) {
        st = gt_err(err, "signature", rc);
        goto fail;
    }
    if ((st = finish(s, crt, err)))
        goto fail;
    if ((rc = gnutls_privkey_init(&s->key)) < 0) {
        s->key = NULL;
        st = gt_err(err, "private key init", rc);
        goto fail;
    }
    /* From here the abstract key owns the x509 key and frees it. */
    if ((rc = gnutls_privkey_import_x509(s->key, xkey, GNUTLS_PRIVKEY_IMPORT_AUTO_RELEASE)) < 0) {
        st = gt_err(err, "private key import", rc);
        goto fail;
    }
    xkey = NULL;
    gnutls_x509_crt_deinit(crt);
    *out = s;
    return HR_OK;
fail:
    if (crt)
        gnutls_x509_crt_deinit(crt);
    if (xkey)
        gnutls_x509_privkey_deinit(xkey);
    hr_selfsigned_free(s);
    return st;
}

hr_status hr_selfsigned_for_pod(const char *service, const char *ns, const char *pod_ip,
                                hr_selfsigned **out, hr_err *err)
{
    char host[256] = "", s1[256] = "", s2[256] = "", s3[256] = "";
    if (gethostname(host, sizeof host) != 0)
        host[0] = '\0'; /* no host name: one SAN fewer */
    host[sizeof host - 1] = '\0';
    bool svc = service && service[0];
    if (svc && ns && ns[0]) {
        snprintf(s1, sizeof s1, "%s.%s", service, ns);
        snprintf(s2, sizeof s2, "%s.%s.svc", service, ns);
        snprintf(s3, sizeof s3, "%s.%s.svc.cluster.local", service, ns);
    }
    const char *dns[] = {service, s1, s2, s3, host, "localhost"};
    const char *ips[] = {"127.0.0.1", "::1", pod_ip};
    hr_selfsigned_opts o = {.common_name = svc ? service : "kube-headroom-metrics",
                            .dns = dns,
                            .n_dns = sizeof dns / sizeof *dns,
                            .ips = ips,
                            .n_ips = sizeof ips / sizeof *ips,
                            .days = DEFAULT_DAYS};
    return hr_selfsigned_new(&o, out, err);
}

void hr_selfsigned_pair(hr_selfsigned *s, gnutls_pcert_st **pcert, unsigned *n,
                        gnutls_privkey_t *key)
{
    *pcert = &s->pcert;
    *n = 1;
    *key = s->key;
}

const char *hr_selfsigned_fingerprint(const hr_selfsigned *s)
{
    return s->fpr;
}

const gnutls_datum_t *hr_selfsigned_der(const hr_selfsigned *s)
{
    return &s->der;
}
