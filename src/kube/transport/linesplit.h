/*
 * linesplit.h — turns a byte stream that arrives in arbitrary pieces into
 * lines, for watch streams (one JSON event per line).
 *
 * curl hands the body over in whatever pieces the network produced: an
 * event may span several pieces and one piece may hold many events. The
 * splitter keeps only the unfinished tail of the last line, so memory stays
 * at one line however long the stream runs, and a bound on that line
 * (16 MiB by default) keeps a broken or hostile server from growing it
 * without end.
 *
 * Each delivered line is a private copy: line[len] is '\0' and is followed
 * by at least HR_KLINE_PAD more zero bytes, so yyjson can parse it in place
 * (YYJSON_READ_INSITU needs that padding); the callback may modify the
 * bytes, which are reused after it returns. A trailing '\r' is removed and
 * empty lines are skipped (they carry no event).
 */
#ifndef HR_KUBE_LINESPLIT_H
#define HR_KUBE_LINESPLIT_H

#include <stddef.h>

#include "kube/transport/client.h"
#include "util/err.h"

#define HR_KLINE_PAD 8
#define HR_KLINE_MAX_DEFAULT ((size_t)16 << 20)

typedef struct hr_klines {
    char *buf;
    size_t len;
    size_t cap;
    size_t max; /* longest line accepted, in bytes without the newline */
} hr_klines;

void hr_klines_init(hr_klines *s, size_t max_line); /* 0: default */

/* Feed the next piece. Returns 0 when every complete line was delivered,
 * 1 when the callback asked to stop (later lines of this piece are not
 * delivered), -1 on error (HR_E_LIMIT for an over-long line, HR_E_NOMEM);
 * after an error the splitter must not be fed again. */
HR_MUST_CHECK int hr_klines_feed(hr_klines *s, const char *p, size_t n, hr_kline_fn fn, void *ud,
                                 hr_err *err);

/* The stream ended cleanly: deliver a last line that had no newline.
 * Same returns as hr_klines_feed. */
HR_MUST_CHECK int hr_klines_finish(hr_klines *s, hr_kline_fn fn, void *ud, hr_err *err);

/* Bytes of an unfinished line held now. */
static inline size_t hr_klines_pending(const hr_klines *s)
{
    return s->len;
}

void hr_klines_free(hr_klines *s);

#endif
