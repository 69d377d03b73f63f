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
#include <stdint.h>
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
    if (days > MAX_DAYS || o->seconds > (long)MAX_DAYS * 86400)
        return hr_err_set(err, HR_E_INPUT, "self-signed certificate: validity too long");
    time_t life = o->seconds > 0 ? (time_t)o->seconds : (time_t)days * 86400;
    time_t now = time(NULL);
    const char *cn = o->common_name && o->common_name[0] ? o->common_name : "kube-headroom";
    if ((rc = gnutls_x509_crt_set_version(crt, 3)) < 0)
        return gt_err(err, "version", rc);
    if ((rc = gnutls_x509_crt_set_serial(crt, serial, sizeof serial)) < 0)
        return gt_err(err, "serial", rc);
    if ((rc = gnutls_x509_crt_set_activation_time(crt, now - BACKDATE_S)) < 0)
        return gt_err(err, "not before", rc);
    if ((rc = gnutls_x509_crt_set_expiration_time(crt, now + life)) < 0)
        return gt_err(err, "not after", rc);
    if ((rc = gnutls_x509_crt_set_dn_by_oid(crt, GNUTLS_OID_X520_COMMON_NAME, 0, cn,
                                            (unsigned)strlen(cn))) < 0)
        return gt_err(err, "common name", rc);
    if ((rc = gnutls_x509_crt_set_key(crt, key)) < 0)
        return gt_err(err, "public key", rc);
    if ((rc = gnutls_x509_crt_set_basic_constraints(crt, o->is_ca ? 1 : 0, -1)) < 0)
        return gt_err(err, "basic constraints", rc);
    unsigned usage =
        o->is_ca ? GNUTLS_KEY_DIGITAL_SIGNATURE | GNUTLS_KEY_KEY_CERT_SIGN | GNUTLS_KEY_CRL_SIGN
                 : GNUTLS_KEY_DIGITAL_SIGNATURE;
    if ((rc = gnutls_x509_crt_set_key_usage(crt, usage)) < 0)
        return gt_err(err, "key usage", rc);
    if (!o->is_ca &&
        (rc = gnutls_x509_crt_set_key_purpose_oid(crt, GNUTLS_KP_TLS_WWW_SERVER, 0)) < 0)
        return gt_err(err, "extended key usage", rc);
    unsigned char kid[64];
    size_t kid_len = sizeof kid;
    if ((rc = gnutls_x509_crt_get_key_id(crt, 0, kid, &kid_len)) < 0)
        return gt_err(err, "key id", rc);
    if ((rc = gnutls_x509_crt_set_subject_key_id(crt, kid, kid_len)) < 0)
        return gt_err(err, "subject key id", rc);
    return o->is_ca ? HR_OK : add_sans(crt, o, err);
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

/* Sign crt: with its own key, or with the issuer's (its DN and key id
 * become crt's issuer and authority key id). */
static hr_status sign(gnutls_x509_crt_t crt, gnutls_x509_privkey_t own, const hr_selfsigned *issuer,
                      hr_err *err)
{
    int rc;
    if (issuer == NULL) {
        if ((rc = gnutls_x509_crt_sign2(crt, crt, own, GNUTLS_DIG_SHA256, 0)) < 0)
            return gt_err(err, "signature", rc);
        return HR_OK;
    }
    gnutls_x509_crt_t ica;
    if ((rc = gnutls_x509_crt_init(&ica)) < 0)
        return gt_err(err, "issuer init", rc);
    hr_status st = HR_OK;
    unsigned char kid[64];
    size_t kid_len = sizeof kid;
    if ((rc = gnutls_x509_crt_import(ica, &issuer->der, GNUTLS_X509_FMT_DER)) < 0)
        st = gt_err(err, "issuer import", rc);
    else if (gnutls_x509_crt_get_subject_key_id(ica, kid, &kid_len, NULL) >= 0 &&
             (rc = gnutls_x509_crt_set_authority_key_id(crt, kid, kid_len)) < 0)
        st = gt_err(err, "authority key id", rc);
    else if ((rc = gnutls_x509_crt_privkey_sign(crt, ica, issuer->key, GNUTLS_DIG_SHA256, 0)) < 0)
        st = gt_err(err, "signature by the CA", rc);
    gnutls_x509_crt_deinit(ica);
    return st;
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
    if ((st = sign(crt, xkey, o->issuer, err)))
        goto fail;
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

bool hr_x509_key_matches(const gnutls_pcert_st *pc, gnutls_privkey_t key)
{
    gnutls_pubkey_t kp;
    gnutls_datum_t a = {NULL, 0}, b = {NULL, 0};
    bool ok = false;
    if (gnutls_pubkey_init(&kp) < 0)
        return false;
    if (gnutls_pubkey_import_privkey(kp, key, 0, 0) >= 0 &&
        gnutls_pubkey_export2(kp, GNUTLS_X509_FMT_DER, &a) >= 0 &&
        gnutls_pubkey_export2(pc->pubkey, GNUTLS_X509_FMT_DER, &b) >= 0)
        ok = a.size == b.size && memcmp(a.data, b.data, a.size) == 0;
    gnutls_free(a.data);
    gnutls_free(b.data);
    gnutls_pubkey_deinit(kp);
    return ok;
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

hr_status hr_selfsigned_pem(const hr_selfsigned *s, hr_buf *crt, hr_buf *key, hr_err *err)
{
    gnutls_datum_t c = {NULL, 0}, k = {NULL, 0};
    gnutls_x509_crt_t x = NULL;
    gnutls_x509_privkey_t xk = NULL;
    int rc;
    hr_status st = HR_OK;
    if ((rc = gnutls_x509_crt_init(&x)) < 0) {
        x = NULL;
        st = gt_err(err, "certificate init", rc);
    } else if ((rc = gnutls_x509_crt_import(x, &s->der, GNUTLS_X509_FMT_DER)) < 0 ||
               (rc = gnutls_x509_crt_export2(x, GNUTLS_X509_FMT_PEM, &c)) < 0) {
        st = gt_err(err, "certificate PEM", rc);
    } else if ((rc = gnutls_privkey_export_x509(s->key, &xk)) < 0) {
        xk = NULL;
        st = gt_err(err, "key export", rc);
    } else if ((rc = gnutls_x509_privkey_export2(xk, GNUTLS_X509_FMT_PEM, &k)) < 0) {
        st = gt_err(err, "key PEM", rc);
    } else {
        hr_buf_append(crt, c.data, c.size);
        hr_buf_append(key, k.data, k.size);
        if (hr_buf_failed(crt) || hr_buf_failed(key))
            st = hr_err_set(err, HR_E_NOMEM, "self-signed certificate: out of memory");
    }
    if (k.data) {
        memset(k.data, 0, k.size); /* no private key left in freed memory */
        gnutls_free(k.data);
    }
    gnutls_free(c.data);
    if (xk)
        gnutls_x509_privkey_deinit(xk);
    if (x)
        gnutls_x509_crt_deinit(x);
    return st;
}

hr_status hr_selfsigned_from_pem(const char *crt, size_t crt_len, const char *key, size_t key_len,
                                 hr_selfsigned **out, hr_err *err)
{
    *out = NULL;
    hr_selfsigned *s = calloc(1, sizeof *s);
    if (s == NULL)
        return hr_err_set(err, HR_E_NOMEM, "self-signed certificate: out of memory");
    gnutls_x509_crt_t x = NULL;
    gnutls_datum_t dc = {(unsigned char *)crt, (unsigned)crt_len};
    gnutls_datum_t dk = {(unsigned char *)key, (unsigned)key_len};
    hr_status st = HR_OK;
    int rc;
    if (crt_len > UINT32_MAX || key_len > UINT32_MAX) {
        st = hr_err_set(err, HR_E_LIMIT, "certificate: too large");
    } else if ((rc = gnutls_x509_crt_init(&x)) < 0) {
        x = NULL;
        st = gt_err(err, "certificate init", rc);
    } else if ((rc = gnutls_x509_crt_import(x, &dc, GNUTLS_X509_FMT_PEM)) < 0) {
        st = gt_err(err, "certificate", rc);
    } else if ((rc = gnutls_privkey_init(&s->key)) < 0) {
        s->key = NULL;
        st = gt_err(err, "private key init", rc);
    } else if ((rc = gnutls_privkey_import_x509_raw(s->key, &dk, GNUTLS_X509_FMT_PEM, NULL, 0)) <
               0) {
        st = gt_err(err, "private key", rc);
    } else if ((st = finish(s, x, err)) == HR_OK && !hr_x509_key_matches(&s->pcert, s->key)) {
        st = hr_err_set(err, HR_E_INPUT, "certificate: the key does not match it");
    }
    if (x)
        gnutls_x509_crt_deinit(x);
    if (st) {
        hr_selfsigned_free(s);
        return st;
    }
    *out = s;
    return HR_OK;
}
