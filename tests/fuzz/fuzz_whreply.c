/*
 * fuzz_whreply.c — libFuzzer target for an AdmissionReview answer as
 * `headroom verify` reads it from a webhook (webhook/reply.h).
 *
 * Invariants: nothing crashes or leaks; a CPU limit is counted only in a
 * patch that was read; an answer read without error says whether it was
 * allowed, and a refused one leaves no patch behind.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "webhook/reply.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    hr_wh_reply r;
    hr_err err;
    hr_status st = hr_wh_reply_parse((const char *)data, size, "u", &r, &err);
    if (r.n_cpu < 0 || (r.n_cpu > 0 && !r.has_patch))
        abort();
    if (st != HR_OK && r.has_patch)
        abort();
    return 0;
}
