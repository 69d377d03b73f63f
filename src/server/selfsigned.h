/*
 * selfsigned.h — a serving certificate made in memory at start, for the
 * secured /metrics when no certificate was provided (no cert-manager, no
 * Secret): an ECDSA P-256 key and a self-signed X.509 v3 certificate for
 * the names and addresses the pod can know (see selfsigned.c).
 *
 * The key is never written anywhere; it lives as long as the holder. A
 * scraper cannot verify this certificate (nothing signed it but itself):
 * it authenticates to the daemon with its token as before, but must skip
 * verifying the server. A provided certificate (hr_certs) wins as soon as
 * it loads; the webhook never serves this one (certs.h, http.h:
 * tls_fallback).
 *
 * The same maker signs the self-managed webhook certificate (design §8):
 * a CA (is_ca) and a serving certificate it issues (issuer), with a
 * validity in seconds when a test wants one that expires soon.
 */
#ifndef HR_SERVER_SELFSIGNED_H
#define HR_SERVER_SELFSIGNED_H

#include <gnutls/abstract.h>
#include <stdbool.h>
#include <stddef.h>

#include "util/buf.h"
#include "util/err.h"

/* "AB:CD:…": 32 bytes in hex with colons, and the NUL. */
#define HR_SELFSIGNED_FPR_LEN (32 * 3)

typedef struct hr_selfsigned_opts {
    const char *common_name; /* the subject's CN; NULL: "kube-headroom" */
    const char *const *dns;  /* DNS SANs ("" and NULL entries skipped) */
    size_t n_dns;
    const char *const *ips; /* IP SANs, IPv4 or IPv6 text; one that does not parse is an error */
    size_t n_ips;
    unsigned days; /* validity from now; 0: 365 */
    long seconds;  /* validity from now in seconds, when > 0 (overrides days) */
    bool is_ca;    /* a CA: basicConstraints CA, keyCertSign; no SANs, no serverAuth */
    const struct hr_selfsigned *issuer; /* sign with this CA's key; NULL: self-signed */
} hr_selfsigned_opts;

typedef struct hr_selfsigned hr_selfsigned;

/* Generate the key and the certificate. Every failure is an error value
 * naming the GnuTLS step; nothing is left allocated then. */
HR_MUST_CHECK hr_status hr_selfsigned_new(const hr_selfsigned_opts *o, hr_selfsigned **out,
                                          hr_err *err);

/* The daemon's: for the names a scraper of this pod may dial — service
 * (the metrics Service's name; with ns also service.ns, service.ns.svc,
 * service.ns.svc.cluster.local), the host name (the pod's), localhost,
 * 127.0.0.1, ::1 and pod_ip; NULL or "" leaves a name out — valid for
 * a year, CN the service's name (else kube-headroom-metrics). */
HR_MUST_CHECK hr_status hr_selfsigned_for_pod(const char *service, const char *ns,
                                              const char *pod_ip, hr_selfsigned **out, hr_err *err);

void hr_selfsigned_free(hr_selfsigned *s);

/* Whether key is the private key of pc's public key (a pair read from
 * files or a Secret: a rotation caught half-way does not match). */
bool hr_x509_key_matches(const gnutls_pcert_st *pc, gnutls_privkey_t key);

/* The pair for a handshake (GnuTLS's certificate callback), valid until
 * hr_selfsigned_free. */
void hr_selfsigned_pair(hr_selfsigned *s, gnutls_pcert_st **pcert, unsigned *n,
                        gnutls_privkey_t *key);

/* The SHA-256 fingerprint of the certificate's DER, "AB:CD:…", for the log
 * line that says which certificate is served (openssl x509 -fingerprint
 * -sha256 prints the same). */
const char *hr_selfsigned_fingerprint(const hr_selfsigned *s);

/* The certificate's DER (owned by s; for tests and for logging). */
const gnutls_datum_t *hr_selfsigned_der(const hr_selfsigned *s);

/* The certificate and its private key as PEM, appended to crt and key (the
 * self-managed webhook certificate's Secret, design §8). The caller wipes
 * and frees key. */
HR_MUST_CHECK hr_status hr_selfsigned_pem(const hr_selfsigned *s, hr_buf *crt, hr_buf *key,
                                          hr_err *err);

/* A pair read back from PEM (the first certificate of crt and key; they
 * must match): a CA kept in a Secret, to sign with (opts.issuer). */
HR_MUST_CHECK hr_status hr_selfsigned_from_pem(const char *crt, size_t crt_len, const char *key,
                                               size_t key_len, hr_selfsigned **out, hr_err *err);

#endif
