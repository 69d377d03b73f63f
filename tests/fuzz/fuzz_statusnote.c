/*
 * fuzz_statusnote.c — libFuzzer target for the status annotation's reader
 * (kube/decode/statusnote.h), which reads text a pod's owner can write,
 * and for the cache's fingerprint and mark of the same text
 * (kube/write/status_note.h), read by the controller on every pod event.
 *
 * Accepted notes must hold what the printer relies on: version 1 or 2,
 * quantities HR_NONE or non-negative, at most HR_KNOTE_LIMITS_MAX limits,
 * every word non-NULL and free of control bytes; a refusal is one line
 * naming the annotation.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "core/pod.h"
#include "kube/decode/statusnote.h"
#include "kube/write/status_note.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void check_q(int64_t v)
{
    if (v != HR_NONE && v < 0)
        abort();
}

static void check_word(const char *s)
{
    if (s == NULL)
        abort();
    for (; *s; s++)
        if ((unsigned char)*s < 0x20 || (unsigned char)*s >= 0x7f)
            abort();
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    /* A private copy of exactly size bytes: ASan flags any read past it. */
    char *s = malloc(size ? size : 1);
    if (s == NULL)
        return 0;
    if (size)
        memcpy(s, data, size);
    hr_arena a;
    hr_arena_init(&a, 1024);
    hr_arena_set_limit(&a, 16 << 20);
    hr_knote n;
    hr_err err;
    hr_err_clear(&err);
    hr_status st = hr_decode_status_note(s, size, "ns", "pod", &a, &n, &err);
    if (st) {
        if (!err.msg[0] || strchr(err.msg, '\n') ||
            strncmp(err.msg, "status annotation of pod ", 25))
            abort();
    } else {
        if ((n.version != 1 && n.version != 2) || n.n_limits > HR_KNOTE_LIMITS_MAX)
            abort();
        int64_t q[] = {
            n.factor_milli, n.slack, n.managed_requests, n.allocatable, n.booked, n.request,
            n.floor,        n.burst, n.target_limit,     n.cap_limit};
        for (size_t i = 0; i < sizeof q / sizeof q[0]; i++)
            check_q(q[i]);
        for (int k = 0; k < HR_KNOTE_CAP_COUNT_; k++)
            check_q(n.caps[k]);
        for (size_t i = 0; i < n.n_limits; i++) {
            check_word(n.limits[i].container);
            if (n.limits[i].milli < 0)
                abort();
        }
        check_word(n.cap);
        check_word(n.reason);
        check_word(n.computed_at);
        check_word(n.policy);
        if (n.dry_run < -1 || n.dry_run > 1)
            abort();
    }
    /* The mark's target, when it has one, is within its 31 bits; the
     * fingerprint is never "no annotation" for a text that is there. */
    int64_t t;
    if (hr_status_mark_target(hr_status_note_mark(s, size), &t) && (t < 0 || t > 0x7ffffffe))
        abort();
    if (hr_status_note_hash(s, size) == 0)
        abort();
    hr_arena_free(&a);
    free(s);
    return 0;
}
