/*
 * lease.h — coordination.k8s.io/v1 Lease get/create/update for leader
 * election (design §10).
 *
 * Correctness of leader election rests on optimistic concurrency: an update
 * carries the resourceVersion the caller read, and the API server refuses
 * it (409 Conflict) if anyone wrote the Lease since. So update requires a
 * resourceVersion, and create fails with 409 when the Lease exists. These
 * requests bypass the write limiter: a renewal queued behind a burst of
 * resizes would arrive late and lose the lease.
 */
#ifndef HR_KUBE_LEASE_H
#define HR_KUBE_LEASE_H

#include <stdint.h>

#include "kube/transport/client.h"
#include "util/err.h"

typedef struct hr_klease {
    char holder[256];   /* spec.holderIdentity, "" when none */
    long duration_s;    /* spec.leaseDurationSeconds, 0 when absent */
    int64_t acquire_us; /* spec.acquireTime (µs since the epoch), 0 when absent */
    int64_t renew_us;   /* spec.renewTime */
    long transitions;   /* spec.leaseTransitions */
    char rv[64];        /* metadata.resourceVersion (read; required for update) */
} hr_klease;

/* 404 → HR_E_NOTFOUND (res->status 404). */
HR_MUST_CHECK hr_status hr_klease_get(hr_kclient *c, const char *ns, const char *name,
                                      hr_klease *out, hr_kresult *res, hr_err *err);

/* 409 when it exists. out (may be NULL, may be in) gets the stored Lease. */
HR_MUST_CHECK hr_status hr_klease_create(hr_kclient *c, const char *ns, const char *name,
                                         const hr_klease *in, hr_klease *out, hr_kresult *res,
                                         hr_err *err);

/* PUT with in->rv as precondition: 409 when someone else wrote it first. */
HR_MUST_CHECK hr_status hr_klease_update(hr_kclient *c, const char *ns, const char *name,
                                         const hr_klease *in, hr_klease *out, hr_kresult *res,
                                         hr_err *err);

/* The JSON body (exposed for tests) and the parser of a Lease object. */
HR_MUST_CHECK hr_status hr_klease_json(const char *ns, const char *name, const hr_klease *in,
                                       bool with_rv, hr_buf *out, hr_err *err);
HR_MUST_CHECK hr_status hr_klease_parse(const char *json, size_t len, hr_klease *out, hr_err *err);

#endif
