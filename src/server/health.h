/*
 * health.h — what /readyz answers: a small set of named readiness checks
 * that other parts of the daemon register ("caches-synced" from the
 * informers, "webhook-cert" from the certificate loader).
 *
 * A check is a callback rather than a stored flag so a state that already
 * lives elsewhere (a loaded certificate) is read where it is, never copied
 * and left stale; hr_ready_flag covers the plain "set it when done" case.
 * /healthz needs none of this: the process answering is the whole answer.
 */
#ifndef HR_SERVER_HEALTH_H
#define HR_SERVER_HEALTH_H

#include <stdatomic.h>
#include <stdbool.h>

#include "util/buf.h"
#include "util/err.h"

typedef bool (*hr_ready_fn)(void *ud);

#define HR_READY_MAX 8

typedef struct hr_readiness {
    struct {
        const char *name; /* static */
        hr_ready_fn fn;
        void *ud;
    } c[HR_READY_MAX];
    atomic_int n;
} hr_readiness;

void hr_readiness_init(hr_readiness *r);

/* Register at start-up (before the server runs). */
HR_MUST_CHECK hr_status hr_readiness_add(hr_readiness *r, const char *name, hr_ready_fn fn,
                                         void *ud, hr_err *err);

/* True when every check passes; *report lists each check with ok/failed. */
bool hr_readiness_eval(const hr_readiness *r, hr_buf *report);

/* A flag that a check can read: set it from any thread. */
typedef struct hr_ready_flag {
    atomic_bool v;
} hr_ready_flag;

void hr_ready_flag_set(hr_ready_flag *f, bool v);
/* An hr_ready_fn reading an hr_ready_flag (ud = the flag). */
bool hr_ready_flag_check(void *ud);

#endif
