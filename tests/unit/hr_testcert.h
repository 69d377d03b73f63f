/*
 * hr_testcert.h — a throw-away self-signed certificate for 127.0.0.1,
 * written as DIR/tls.crt and DIR/tls.key, for the server tests and the
 * webhook benchmark (no openssl CLI, no files checked in, a distinct
 * serial per call so a test can tell which certificate is being served).
 */
#ifndef HR_TEST_TESTCERT_H
#define HR_TEST_TESTCERT_H

#include <gnutls/gnutls.h>
#include <gnutls/x509.h>
#include <stdint.h>
#include <stdio.h>
#include <time.h>

/* Which files to write: both, only the key, only the cert. */
enum { HR_TC_BOTH = 3, HR_TC_KEY = 1, HR_TC_CRT = 2 };

/* pk: GNUTLS_PK_ECDSA (P-256) or GNUTLS_PK_RSA (2048 bits; also usable
 * for RSA key exchange, so a test can show that exchange is refused). */
static inline int hr_testcert_write_pk(const char *dir, uint8_t serial_tag, int which,
                                       gnutls_pk_algorithm_t pk)
{
    gnutls_x509_privkey_t key;
    gnutls_x509_crt_t crt;
    int rc = 0;
    if (gnutls_x509_privkey_init(&key) < 0)
        return -1;
    if (gnutls_x509_crt_init(&crt) < 0) {
        gnutls_x509_privkey_deinit(key);
        return -1;
    }
    unsigned char serial[8] = {0x42, serial_tag, 2, 3, 4, 5, 6, 7};
    unsigned char ip[4] = {127, 0, 0, 1};
    time_t t = time(NULL);
    gnutls_datum_t c = {NULL, 0}, k = {NULL, 0};
    unsigned bits = pk == GNUTLS_PK_RSA ? 2048 : GNUTLS_CURVE_TO_BITS(GNUTLS_ECC_CURVE_SECP256R1);
    unsigned usage = GNUTLS_KEY_DIGITAL_SIGNATURE | GNUTLS_KEY_KEY_CERT_SIGN;
    if (pk == GNUTLS_PK_RSA)
        usage |= GNUTLS_KEY_KEY_ENCIPHERMENT;
    if (gnutls_x509_privkey_generate(key, pk, bits, 0) < 0 ||
        gnutls_x509_crt_set_version(crt, 3) < 0 ||
        gnutls_x509_crt_set_serial(crt, serial, sizeof serial) < 0 ||
        gnutls_x509_crt_set_activation_time(crt, t - 60) < 0 ||
        gnutls_x509_crt_set_expiration_time(crt, t + 3600) < 0 ||
        gnutls_x509_crt_set_dn_by_oid(crt, GNUTLS_OID_X520_COMMON_NAME, 0, "127.0.0.1", 9) < 0 ||
        gnutls_x509_crt_set_subject_alt_name(crt, GNUTLS_SAN_IPADDRESS, ip, sizeof ip,
                                             GNUTLS_FSAN_SET) < 0 ||
        gnutls_x509_crt_set_key(crt, key) < 0 ||
        gnutls_x509_crt_set_basic_constraints(crt, 1, -1) < 0 ||
        gnutls_x509_crt_set_key_usage(crt, usage) < 0 ||
        gnutls_x509_crt_sign2(crt, crt, key, GNUTLS_DIG_SHA256, 0) < 0 ||
        gnutls_x509_crt_export2(crt, GNUTLS_X509_FMT_PEM, &c) < 0 ||
        gnutls_x509_privkey_export2(key, GNUTLS_X509_FMT_PEM, &k) < 0)
        rc = -1;
    char path[512], tmp[520];
    for (int i = 0; rc == 0 && i < 2; i++) {
        if (!(which & (i ? HR_TC_KEY : HR_TC_CRT)))
            continue;
        snprintf(path, sizeof path, "%s/%s", dir, i ? "tls.key" : "tls.crt");
        snprintf(tmp, sizeof tmp, "%s.tmp", path);
        FILE *f = fopen(tmp, "w");
        gnutls_datum_t *d = i ? &k : &c;
        if (f == NULL || fwrite(d->data, 1, d->size, f) != d->size)
            rc = -1;
        if (f && fclose(f) != 0)
            rc = -1;
        /* Swapped in whole, as a Secret volume update does. */
        if (rc == 0 && rename(tmp, path) != 0)
            rc = -1;
    }
    gnutls_free(c.data);
    gnutls_free(k.data);
    gnutls_x509_crt_deinit(crt);
    gnutls_x509_privkey_deinit(key);
    return rc;
}

static inline int hr_testcert_write(const char *dir, uint8_t serial_tag, int which)
{
    return hr_testcert_write_pk(dir, serial_tag, which, GNUTLS_PK_ECDSA);
}

#endif
