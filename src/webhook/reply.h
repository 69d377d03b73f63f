/*
 * reply.h — an AdmissionReview answer as the client that sent the review
 * reads it: `headroom verify` (src/cmd/verify.c) posts a review to a
 * running webhook and judges the answer here. The server side, review in
 * and answer out, is admission.h.
 *
 * Pure: the bytes of the HTTP body in, the verdict out. The body comes
 * from the network, so every field is checked for its type, the patch is
 * bounded, and nothing is trusted to be what it claims (fuzzed by
 * tests/fuzz/fuzz_admission.c).
 */
#ifndef HR_WEBHOOK_REPLY_H
#define HR_WEBHOOK_REPLY_H

#include <stdbool.h>
#include <stddef.h>

#include "util/err.h"

typedef struct hr_wh_reply {
    bool allowed;   /* response.allowed */
    bool has_patch; /* a JSONPatch came with it */
    int n_cpu;      /* the patch's operations that set a container's limits.cpu */
} hr_wh_reply;

/* Read an AdmissionReview v1 answer to the review with request.uid uid.
 * HR_E_INPUT, with the reason, when the body is not JSON, not an
 * AdmissionReview v1, has no response, answers another uid, has no boolean
 * allowed, or carries a patch that is not base64 of a JSON array of
 * operations (patchType JSONPatch). */
HR_MUST_CHECK hr_status hr_wh_reply_parse(const char *body, size_t len, const char *uid,
                                          hr_wh_reply *out, hr_err *err);

#endif
