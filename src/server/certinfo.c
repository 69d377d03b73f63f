/*
 * certinfo.c — read the self-managed certificate's Secret (see certinfo.h).
 */
#include "server/certinfo.h"

#include <stdbool.h>
#include <stdio.h>
#include <string.h>

#include <gnutls/gnutls.h>
#include <gnutls/x509.h>

#define MAX_BUNDLE 8
#define MAX_PEM (1u << 20)

/* Up to MAX_BUNDLE certificates of a PEM bundle; how many (0: none or bad). */
static unsigned import_list(const char *pem, size_t len, gnutls_x509_crt_t *list)
{
    if (pem == NULL || len == 0 || len > MAX_PEM)
        return 0;
    gnutls_datum_t d = {(unsigned char *)pem, (unsigned)len};
    unsigned n = MAX_BUNDLE;
    if (gnutls_x509_crt_list_import(list, &n, &d, GNUTLS_X509_FMT_PEM, 0) < 0)
        return 0;
    return n;
}

static void free_list(gnutls_x509_crt_t *list, unsigned n)
{
    for (unsigned i = 0; i < n; i++)
        gnutls_x509_crt_deinit(list[i]);
}

/* The key id (SHA-1 of the public key) of a PEM private key; 0 when bad. */
static size_t key_id(const char *pem, size_t len, unsigned char *id, size_t cap)
{
    if (pem == NULL || len == 0 || len > MAX_PEM)
        return 0;
    gnutls_x509_privkey_t k;
    if (gnutls_x509_privkey_init(&k) < 0)
        return 0;
    gnutls_datum_t d = {(unsigned char *)pem, (unsigned)len};
    size_t n = cap;
    if (gnutls_x509_privkey_import(k, &d, GNUTLS_X509_FMT_PEM) < 0 ||
        gnutls_x509_privkey_get_key_id(k, 0, id, &n) < 0)
        n = 0;
    gnutls_x509_privkey_deinit(k);
    return n;
}

static bool crt_has_key(gnutls_x509_crt_t c, const unsigned char *id, size_t id_len)
{
    unsigned char cid[64];
    size_t n = sizeof cid;
    return id_len > 0 && gnutls_x509_crt_get_key_id(c, 0, cid, &n) >= 0 && n == id_len &&
           memcmp(cid, id, n) == 0;
}

static bool valid_at(gnutls_x509_crt_t c, int64_t now)
{
    time_t nb = gnutls_x509_crt_get_activation_time(c);
    time_t na = gnutls_x509_crt_get_expiration_time(c);
    return nb != (time_t)-1 && na != (time_t)-1 && nb <= now && now < na;
}

static bool is_ca(gnutls_x509_crt_t c)
{
    unsigned ca = 0;
    return gnutls_x509_crt_get_basic_constraints(c, NULL, &ca, NULL) >= 0 && ca;
}

/* The index in the bundle of the CA whose key is ca.key, or -1. */
static int signing_index(const hr_certsrc *src, gnutls_x509_crt_t *bundle, unsigned n)
{
    unsigned char id[64];
    size_t id_len = key_id(src->ca_key, src->ca_key_len, id, sizeof id);
    for (unsigned i = 0; i < n; i++)
        if (crt_has_key(bundle[i], id, id_len) && is_ca(bundle[i]))
            return (int)i;
    return -1;
}

static bool issued_by(gnutls_x509_crt_t leaf, gnutls_x509_crt_t *cas, unsigned n, int64_t now)
{
    unsigned status = 1;
    (void)now; /* the verification checks the times against the clock */
    return n > 0 && gnutls_x509_crt_verify(leaf, cas, n, 0, &status) >= 0 && status == 0;
}

static bool names_ok(gnutls_x509_crt_t c, const hr_certnames *w)
{
    for (size_t i = 0; i < w->n_dns; i++)
        if (w->dns[i] && w->dns[i][0] &&
            !gnutls_x509_crt_check_hostname2(c, w->dns[i], GNUTLS_VERIFY_DO_NOT_ALLOW_WILDCARDS))
            return false;
    for (size_t i = 0; i < w->n_ips; i++)
        if (w->ips[i] && w->ips[i][0] && !gnutls_x509_crt_check_hostname(c, w->ips[i]))
            return false;
    return true;
}

static bool same_der(gnutls_x509_crt_t a, gnutls_x509_crt_t b)
{
    gnutls_datum_t da = {NULL, 0}, db = {NULL, 0};
    bool same = gnutls_x509_crt_export2(a, GNUTLS_X509_FMT_DER, &da) >= 0 &&
                gnutls_x509_crt_export2(b, GNUTLS_X509_FMT_DER, &db) >= 0 && da.size == db.size &&
                memcmp(da.data, db.data, da.size) == 0;
    gnutls_free(da.data);
    gnutls_free(db.data);
    return same;
}

static void serial_hex(gnutls_x509_crt_t c, char out[HR_CERTINFO_SERIAL_LEN])
{
    unsigned char s[20];
    size_t n = sizeof s;
    out[0] = '\0';
    if (gnutls_x509_crt_get_serial(c, s, &n) < 0)
        return;
    for (size_t i = 0; i < n && i < sizeof s; i++)
        snprintf(out + 2 * i, 3, "%02X", s[i]);
}

/* The leaf's part of *out: tls.crt and tls.key a valid pair for the names,
 * from a CA of the bundle (the signing one: leaf_by_ca). */
static void read_leaf(const hr_certsrc *src, const hr_certnames *want, gnutls_x509_crt_t *bundle,
                      unsigned n, int sign, int64_t now, hr_certplan_in *out,
                      char serial[HR_CERTINFO_SERIAL_LEN])
{
    gnutls_x509_crt_t leaf[MAX_BUNDLE];
    unsigned nl = import_list(src->crt, src->crt_len, leaf);
    if (nl == 0)
        return;
    serial_hex(leaf[0], serial);
    unsigned char id[64];
    size_t id_len = key_id(src->key, src->key_len, id, sizeof id);
    out->leaf_not_before = gnutls_x509_crt_get_activation_time(leaf[0]);
    out->leaf_not_after = gnutls_x509_crt_get_expiration_time(leaf[0]);
    out->leaf_ok = crt_has_key(leaf[0], id, id_len) && valid_at(leaf[0], now) &&
                   names_ok(leaf[0], want) && issued_by(leaf[0], bundle, n, now);
    out->leaf_by_ca = out->leaf_ok && sign >= 0 && issued_by(leaf[0], &bundle[sign], 1, now);
    free_list(leaf, nl);
}

void hr_certinfo_read(const hr_certsrc *src, const hr_certnames *want, const char *trusted,
                      size_t trusted_len, int64_t now, hr_certplan_in *out,
                      char serial[HR_CERTINFO_SERIAL_LEN])
{
    *out = (hr_certplan_in){0};
    serial[0] = '\0';
    gnutls_x509_crt_t bundle[MAX_BUNDLE];
    unsigned n = import_list(src->ca, src->ca_len, bundle);
    out->n_bundle = n;
    int sign = signing_index(src, bundle, n);
    if (sign >= 0 && valid_at(bundle[sign], now)) {
        out->ca_ok = true;
        out->ca_not_after = gnutls_x509_crt_get_expiration_time(bundle[sign]);
        gnutls_x509_crt_t tr[MAX_BUNDLE];
        unsigned nt = import_list(trusted, trusted_len, tr);
        for (unsigned i = 0; i < nt && !out->webhook_trusts_ca; i++)
            out->webhook_trusts_ca = same_der(tr[i], bundle[sign]);
        free_list(tr, nt);
    }
    read_leaf(src, want, bundle, n, sign, now, out, serial);
    free_list(bundle, n);
}

hr_status hr_certinfo_signing_ca(const hr_certsrc *src, hr_selfsigned **out, hr_err *err)
{
    *out = NULL;
    gnutls_x509_crt_t bundle[MAX_BUNDLE];
    unsigned n = import_list(src->ca, src->ca_len, bundle);
    int sign = signing_index(src, bundle, n);
    hr_status st;
    gnutls_datum_t pem = {NULL, 0};
    if (sign < 0)
        st = hr_err_set(err, HR_E_INPUT, "ca.key is the key of no CA certificate in ca.crt");
    else if (gnutls_x509_crt_export2(bundle[sign], GNUTLS_X509_FMT_PEM, &pem) < 0)
        st = hr_err_set(err, HR_E_INPUT, "ca.crt: cannot export the signing CA");
    else
        st = hr_selfsigned_from_pem((const char *)pem.data, pem.size, src->ca_key, src->ca_key_len,
                                    out, err);
    gnutls_free(pem.data);
    free_list(bundle, n);
    return st;
}
