/*
 * review.h — "may this bearer token do this?", asked of the API server
 * the Kubernetes way: a TokenReview (authentication.k8s.io/v1) says who
 * the token belongs to, then a SubjectAccessReview (authorization.k8s.io/v1)
 * for that user, its groups and extra, on a non-resource URL ("/metrics",
 * "get") says whether RBAC allows it (design §9.3: the secured metrics).
 *
 * Both are creates that store nothing; they bypass the write limiter (a
 * scrape must not queue behind a burst of resizes), and their answers are
 * cached above (server/authz.h), so a scraper costs two calls per token per
 * cache period, not two per scrape. The JSON halves are separate functions
 * so the fuzzer (tests/fuzz/fuzz_http.c) reaches them without a server.
 */
#ifndef HR_KUBE_REVIEW_H
#define HR_KUBE_REVIEW_H

#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "kube/transport/client.h"
#include "util/buf.h"
#include "util/err.h"

typedef enum hr_kreview_verdict {
    HR_KREVIEW_ALLOWED = 0,
    HR_KREVIEW_DENIED,          /* authenticated, RBAC says no: 403 */
    HR_KREVIEW_UNAUTHENTICATED, /* the token is not valid: 401 */
} hr_kreview_verdict;

/* The TokenReview request for token. */
HR_MUST_CHECK hr_status hr_kreview_token_json(const char *token, hr_buf *out, hr_err *err);

/* Read a TokenReview answer; when status.authenticated, write the
 * SubjectAccessReview for its user on (verb, path) to sar and the user's
 * name to user (truncated to cap). HR_E_INPUT: not a TokenReview. */
HR_MUST_CHECK hr_status hr_kreview_sar_json(const char *json, size_t len, const char *verb,
                                            const char *path, bool *authenticated, char *user,
                                            size_t cap, hr_buf *sar, hr_err *err);

/* Read a SubjectAccessReview answer: status.allowed (and not denied). */
HR_MUST_CHECK hr_status hr_kreview_sar_allowed(const char *json, size_t len, bool *allowed,
                                               hr_err *err);

/* Both calls, ending by until_ms (monotonic ms; a call that would start
 * later is not sent), given up within about a second once *stop (NULL:
 * never) turns true. An error (transport, timeout, 5xx, 403 on the review
 * itself: our RBAC lacks tokenreviews/subjectaccessreviews create) is an
 * error, not a verdict: the caller answers 500 and caches nothing. */
HR_MUST_CHECK hr_status hr_kreview_nonresource(hr_kclient *c, const char *token, const char *verb,
                                               const char *path, int64_t until_ms,
                                               const atomic_bool *stop, hr_kreview_verdict *out,
                                               char *user, size_t cap, hr_err *err);

#endif
