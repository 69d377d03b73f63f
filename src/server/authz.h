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
 * review per minute and a revoked binding takes effect within a minute.
 *
 * Reviews never run on the caller's thread (design §9.3): a miss is queued
 * for a pool of `threads` review threads (default 2), and the caller is
 * told later, through its waiter, so a listener thread never waits on the
 * API server. A miss whose key is already queued or in review joins it
 * (one review for any number of requests); a miss when max_pending
 * reviews (default 16, queued and running together) are outstanding is
 * refused at once (HR_AUTHZ_BUSY: 429). Each review is handed a deadline
 * (review_timeout_ms, default 5 s) that the callback must honour. So a
 * flood of random tokens costs at most `threads` reviews at a time and
 * max_pending queued, and a cached verdict is answered at once however
 * full the pool is.
 *
 * Shutdown: hr_authz_shutdown answers every waiter HR_AUTHZ_UNAVAILABLE
 * (503) at once, takes no new review and raises the reviews' cancel flag;
 * it never waits. hr_authz_free then joins the review threads, so it
 * waits for the reviews in flight to give up (the daemon's within about a
 * second, at worst their deadline): call it only after whatever must not
 * wait (the daemon releases its Lease first), and before freeing what the
 * callback uses.
 */
#ifndef HR_SERVER_AUTHZ_H
#define HR_SERVER_AUTHZ_H

#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>

#include "util/buf.h"
#include "util/err.h"
#include "util/log.h"

typedef enum hr_authz_verdict {
    HR_AUTHZ_ALLOWED = 0,
    HR_AUTHZ_DENIED,          /* 403 */
    HR_AUTHZ_UNAUTHENTICATED, /* 401 */
    HR_AUTHZ_ERROR,           /* 500: the review could not be made; not cached */
    HR_AUTHZ_BUSY,            /* 429: too many reviews outstanding; not cached */
    HR_AUTHZ_UNAVAILABLE,     /* 503: shutting down */
    HR_AUTHZ_PENDING,         /* hr_authz_start: the waiter will be told */
} hr_authz_verdict;

/* Review token for (verb, path), to finish by until_ms (monotonic ms,
 * util/clock.h) — a late answer is an HR_AUTHZ_ERROR — and to give up
 * promptly (HR_AUTHZ_ERROR) once *cancel turns true (hr_authz_shutdown);
 * user (cap bytes) gets a name for logs. Runs on a review thread. */
typedef hr_authz_verdict (*hr_authz_review_fn)(void *ud, const char *token, const char *verb,
                                               const char *path, int64_t until_ms,
                                               const atomic_bool *cancel, char *user, size_t cap);

typedef struct hr_authz_opts {
    hr_authz_review_fn review;
    void *ud;
    unsigned max_entries;       /* 0: 256 */
    unsigned allow_ttl_ms;      /* 0: 60000 */
    unsigned deny_ttl_ms;       /* 0: 10000 */
    unsigned threads;           /* review threads; 0: 2 */
    unsigned max_pending;       /* reviews queued or running; 0: 16 */
    unsigned review_timeout_ms; /* each review's deadline; 0: 5000 */
    hr_logger log;
} hr_authz_opts;

typedef struct hr_authz hr_authz;

HR_MUST_CHECK hr_status hr_authz_new(const hr_authz_opts *o, hr_authz **out, hr_err *err);
/* hr_authz_shutdown, then join the review threads (see above). */
void hr_authz_free(hr_authz *a);
/* Answer every waiter HR_AUTHZ_UNAVAILABLE and refuse new reviews; does
 * not wait. Idempotent; safe from any thread. */
void hr_authz_shutdown(hr_authz *a);

/* The token of an Authorization header value ("Bearer <token>", scheme
 * case-insensitive); NULL when absent or malformed. Points into header. */
const char *hr_authz_bearer(const char *header, size_t *len);

/* Who waits for a review: the caller's, owned by the caller. Contract:
 * once hr_authz_start has returned HR_AUTHZ_PENDING for w, done(w, v) is
 * called exactly once — from a review thread or from hr_authz_shutdown,
 * with the authorizer's lock held (so done must be short and must not call
 * into the authorizer) — with a final verdict (never PENDING), and w is
 * never touched after done returns. Until then the caller keeps w alive. */
typedef struct hr_authz_waiter hr_authz_waiter;
struct hr_authz_waiter {
    void (*done)(hr_authz_waiter *w, hr_authz_verdict v);
    hr_authz_waiter *next; /* the authorizer's */
};

/* The verdict for a request with this Authorization header (may be NULL),
 * when it is known now (no token, cached, busy, shutting down); else
 * HR_AUTHZ_PENDING, and w->done will be called (see above). Never blocks
 * on a review. */
hr_authz_verdict hr_authz_start(hr_authz *a, const char *authorization, const char *verb,
                                const char *path, hr_authz_waiter *w);

/* As hr_authz_start, but waits for a pending review on the calling thread
 * (tests, the fuzzer); never PENDING. */
hr_authz_verdict hr_authz_check(hr_authz *a, const char *authorization, const char *verb,
                                const char *path);

/* The HTTP status of a verdict: 0 (go on), 401, 403, 429, 503, 500. */
int hr_authz_status(hr_authz_verdict v);

typedef struct hr_authz_stats {
    uint64_t reviews;   /* review callback calls */
    uint64_t hits;      /* answered from the cache */
    uint64_t joined;    /* misses that joined a review already outstanding */
    uint64_t refused;   /* misses refused: too many reviews outstanding (429) */
    uint64_t in_flight; /* reviews running now (a gauge) */
    uint64_t queued;    /* reviews waiting for a thread now (a gauge) */
} hr_authz_stats;
void hr_authz_get_stats(hr_authz *a, hr_authz_stats *out);

/* The stats as metrics (server/metrics.h's renderer; ud the hr_authz):
 * headroom_metrics_auth_reviews_total, _refused_total (429),
 * _reviews_in_flight and _reviews_queued. */
void hr_authz_render(void *ud, hr_buf *out);

#endif
