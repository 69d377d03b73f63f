/*
 * headers.h — the request headers every API call carries: Accept (JSON,
 * or protobuf first with JSON as the fallback: client.h), no
 * Expect round trip, the body's Content-Type, the credential's
 * Authorization, which is wiped from memory when the list is freed, and
 * the Impersonate-* headers of --as and the kubeconfig's as: (every
 * request: lists, watches, writes, reviews).
 * Split from client.c, which builds them per attempt (a credential may
 * rotate between two).
 */
#ifndef HR_KUBE_TRANSPORT_HEADERS_H
#define HR_KUBE_TRANSPORT_HEADERS_H

#include <curl/curl.h>

#include "kube/config/cred.h"
#include "util/err.h"

/* The list for one attempt into *out (accept NULL: application/json;
 * content_type NULL: no body), with cfg's impersonation (kubeconfig.h:
 * Impersonate-User, Impersonate-Uid, one Impersonate-Group per group, one
 * Impersonate-Extra-KEY per value, KEY percent-encoded as client-go does)
 * when it has some. A value that could start a header of its own (a
 * control character: CR, LF) is refused here too (HR_E_INPUT), whatever
 * the configuration's checks let through. */
HR_MUST_CHECK hr_status hr_kheaders_build(const hr_kcred_snap *snap, const hr_kubeconfig *cfg,
                                          const char *accept, const char *content_type,
                                          struct curl_slist **out, hr_err *err);

/* Wipe the Authorization value, then free the list (NULL: nothing). */
void hr_kheaders_free(struct curl_slist *l);

#endif
