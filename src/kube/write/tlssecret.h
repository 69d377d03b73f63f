/*
 * tlssecret.h — the self-managed webhook certificate's objects (design
 * §8): its Secret (tls.crt, tls.key, ca.crt and ca.key, each PEM) and
 * the MutatingWebhookConfiguration whose caBundle it keeps.
 *
 * Neither is ever created here: the chart renders both (the Secret
 * without data, so type Opaque: kubernetes.io/tls demands tls.crt and
 * tls.key in the manifest, and Helm's three-way merge and kubectl apply
 * would then reset what the controller wrote to the manifest's empty
 * values), so RBAC can name them with resourceNames (create cannot be
 * limited so). The patch leaves the type as it is. The Secret's data is written with a JSON merge patch
 * carrying the resourceVersion read: two replicas that both decide to
 * write cannot both win (409 Conflict for the loser, who reads again).
 * The caBundle of every webhook of the configuration is set with a JSON
 * patch that tests the resourceVersion first, for the same reason.
 */
#ifndef HR_KUBE_WRITE_TLSSECRET_H
#define HR_KUBE_WRITE_TLSSECRET_H

#include <stddef.h>

#include "kube/transport/client.h"
#include "util/buf.h"
#include "util/err.h"

/* The Secret's data, decoded (each NUL-terminated, NULL when absent). */
typedef struct hr_ktls_secret {
    char rv[64]; /* metadata.resourceVersion */
    char *crt, *key, *ca, *ca_key;
    size_t crt_len, key_len, ca_len, ca_key_len;
} hr_ktls_secret;

/* Wipe (the keys) and free the data; *s is empty after. */
void hr_ktls_secret_free(hr_ktls_secret *s);

/* GET the Secret; 404 is HR_E_NOTFOUND. */
HR_MUST_CHECK hr_status hr_ktls_secret_get(hr_kclient *c, const char *ns, const char *name,
                                           hr_ktls_secret *out, hr_kresult *res, hr_err *err);

/* A Secret object's JSON into *out (a value not base64 is an error). */
HR_MUST_CHECK hr_status hr_ktls_secret_parse(const char *json, size_t len, hr_ktls_secret *out,
                                             hr_err *err);

/* Write in's four values with in->rv as the precondition (409 Conflict:
 * someone wrote it first). The merge patch body (wiped after). */
HR_MUST_CHECK hr_status hr_ktls_secret_update(hr_kclient *c, const char *ns, const char *name,
                                              const hr_ktls_secret *in, hr_kresult *res,
                                              hr_err *err);

/* The webhook configuration: its resourceVersion, how many webhooks, and
 * whether every one's caBundle is exactly `want` (PEM). */
typedef struct hr_kmwc {
    char rv[64];
    size_t n_webhooks;
    bool all_match;
    char *first_bundle; /* the first webhook's caBundle, decoded (NUL-terminated), or NULL */
    size_t first_len;
} hr_kmwc;

void hr_kmwc_free(hr_kmwc *m);

/* GET the configuration and compare its caBundles with want. */
HR_MUST_CHECK hr_status hr_kmwc_get(hr_kclient *c, const char *name, const char *want,
                                    size_t want_len, hr_kmwc *out, hr_kresult *res, hr_err *err);

HR_MUST_CHECK hr_status hr_kmwc_parse(const char *json, size_t len, const char *want,
                                      size_t want_len, hr_kmwc *out, hr_err *err);

/* Set every webhook's caBundle to pem (JSON patch, resourceVersion m->rv
 * tested first; 409/422 when it changed). */
HR_MUST_CHECK hr_status hr_kmwc_set_ca(hr_kclient *c, const char *name, const hr_kmwc *m,
                                       const char *pem, size_t pem_len, hr_kresult *res,
                                       hr_err *err);

#endif
