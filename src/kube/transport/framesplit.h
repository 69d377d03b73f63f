/*
 * framesplit.h — turns a protobuf watch stream (Content-Type
 * application/vnd.kubernetes.protobuf;stream=watch) that arrives in
 * arbitrary pieces into its frames: each a 4-byte big-endian length, then
 * that many bytes (a WatchEvent, kube/decode/pbobj.h).
 *
 * The line splitter's twin (linesplit.h) for the binary framing: it keeps
 * only the unfinished frame, so memory stays at one frame however long the
 * stream runs, and a declared length above the bound (16 MiB by default,
 * the same as a JSON line's) is an error the moment its 4 bytes arrive —
 * nothing of it is buffered, the stream ends, the watch reconnects. A
 * frame of length 0 carries nothing and is skipped.
 *
 * Each delivered frame is a private copy followed by HR_KLINE_PAD zero
 * bytes; the callback may modify it, the bytes are reused after it returns.
 */
#ifndef HR_KUBE_FRAMESPLIT_H
#define HR_KUBE_FRAMESPLIT_H

#include <stddef.h>
#include <stdint.h>

#include "kube/transport/client.h"
#include "util/err.h"

typedef struct hr_kframes {
    char *buf;
    size_t len; /* bytes of the current frame held */
    size_t cap;
    size_t want; /* the current frame's declared length (valid when hdr_len == 4) */
    size_t max;  /* the largest frame accepted */
    uint8_t hdr[4];
    size_t hdr_len; /* bytes of the current length prefix held */
} hr_kframes;

void hr_kframes_init(hr_kframes *s, size_t max_frame); /* 0: HR_KLINE_MAX_DEFAULT */

/* Feed the next piece. Returns 0 when every complete frame was delivered,
 * 1 when the callback asked to stop, -1 on error (HR_E_LIMIT for a frame
 * over the bound, HR_E_NOMEM); after an error it must not be fed again. */
HR_MUST_CHECK int hr_kframes_feed(hr_kframes *s, const char *p, size_t n, hr_kline_fn fn, void *ud,
                                  hr_err *err);

/* Bytes of an unfinished frame (its prefix included) held now. */
static inline size_t hr_kframes_pending(const hr_kframes *s)
{
    return s->hdr_len + s->len;
}

void hr_kframes_free(hr_kframes *s);

#endif
