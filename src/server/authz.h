/*
 * authz.h — who may read a guarded route (the secured /metrics, design
 * §9.3): a bearer token, reviewed by a callback (the daemon's is a
 * TokenReview then a SubjectAccessReview, kube/write/review.h), with the
 * verdicts cached briefly and boundedly.
 *
 * The server knows no Kubernetes: it parses "Authorization: Bearer …",
 * answers 401 without a call when there is no token, and keeps a cache
 * keyed by SHA-256(verb, path, token) — never the token itself. Bounds:
 * at most max_entries verdicts (default 256; when full, the one closest
 * to expiry goes), an allowed verdict for allow_ttl_ms (default 60 s), a
 * denied or unauthenticated one for deny_ttl_ms (default 10 s), an error
 * never (the next request asks again). So a steady scraper costs one
 * review per minute, a revoked binding takes effect within a minute, and
 * a flood of random tokens costs at most one review per request on a
 * listener whose threads bound how many run at once.
 */
#ifndef HR_SERVER_AUTHZ_H
#define HR_SERVER_AUTHZ_H

#include <stddef.h>
#include <stdint.h>

#include "util/err.h"
#include "util/log.h"

typedef enum hr_authz_verdict {
    HR_AUTHZ_ALLOWED = 0,
    HR_AUTHZ_DENIED,          /* 403 */
    HR_AUTHZ_UNAUTHENTICATED, /* 401 */
    HR_AUTHZ_ERROR,           /* 500: the review could not be made; not cached */
} hr_authz_verdict;

/* Review token for (verb, path); user (cap bytes) gets a name for logs. */
typedef hr_authz_verdict (*hr_authz_review_fn)(void *ud, const char *token, const char *verb,
                                               const char *path, char *user, size_t cap);

typedef struct hr_authz_opts {
    hr_authz_review_fn review;
    void *ud;
    unsigned max_entries;  /* 0: 256 */
    unsigned allow_ttl_ms; /* 0: 60000 */
    unsigned deny_ttl_ms;  /* 0: 10000 */
    hr_logger log;
} hr_authz_opts;

typedef struct hr_authz hr_authz;

HR_MUST_CHECK hr_status hr_authz_new(const hr_authz_opts *o, hr_authz **out, hr_err *err);
void hr_authz_free(hr_authz *a);

/* The token of an Authorization header value ("Bearer <token>", scheme
 * case-insensitive); NULL when absent or malformed. Points into header. */
const char *hr_authz_bearer(const char *header, size_t *len);

/* The verdict for a request with this Authorization header (may be NULL). */
hr_authz_verdict hr_authz_check(hr_authz *a, const char *authorization, const char *verb,
                                const char *path);

/* The HTTP status of a verdict: 0 (go on), 401, 403, 500. */
int hr_authz_status(hr_authz_verdict v);

typedef struct hr_authz_stats {
    uint64_t reviews; /* review callback calls */
    uint64_t hits;    /* answered from the cache */
} hr_authz_stats;
void hr_authz_get_stats(hr_authz *a, hr_authz_stats *out);

#endif
