/*
 * linesplit.c — stream to lines (see linesplit.h).
 *
 * Every line is copied once into the splitter's buffer, even when it lies
 * whole inside one piece: the copy buys the NUL and padding that let the
 * consumer parse in place, and memcpy runs an order of magnitude faster
 * than the JSON parse that follows.
 */
#include "kube/transport/linesplit.h"

#include <stdlib.h>
#include <string.h>

void hr_klines_init(hr_klines *s, size_t max_line)
{
    s->buf = NULL;
    s->len = 0;
    s->cap = 0;
    s->max = max_line ? max_line : HR_KLINE_MAX_DEFAULT;
}

void hr_klines_free(hr_klines *s)
{
    free(s->buf);
    s->buf = NULL;
    s->len = s->cap = 0;
}

/* Room for need content bytes plus the terminator and padding. */
static int reserve(hr_klines *s, size_t need, hr_err *err)
{
    size_t want = need + 1 + HR_KLINE_PAD;
    if (want <= s->cap)
        return 0;
    size_t cap = s->cap ? s->cap : 4096;
    while (cap < want)
        cap = cap > SIZE_MAX / 2 ? want : cap * 2;
    size_t hard = s->max + 1 + HR_KLINE_PAD;
    if (cap > hard)
        cap = hard;
    char *nb = realloc(s->buf, cap);
    if (!nb) {
        HR_IGNORE(hr_err_set(err, HR_E_NOMEM, "out of memory buffering a %zu-byte stream line",
                             need)); /* the code is in err; -1 says it */
        return -1;
    }
    s->buf = nb;
    s->cap = cap;
    return 0;
}

static int deliver(hr_klines *s, hr_kline_fn fn, void *ud)
{
    size_t len = s->len;
    s->len = 0;
    if (len && s->buf[len - 1] == '\r')
        len--;
    if (!len)
        return 0;
    memset(s->buf + len, 0, 1 + HR_KLINE_PAD);
    return fn(ud, s->buf, len) ? 1 : 0;
}

int hr_klines_feed(hr_klines *s, const char *p, size_t n, hr_kline_fn fn, void *ud, hr_err *err)
{
    while (n) {
        const char *nl = memchr(p, '\n', n);
        size_t seg = nl ? (size_t)(nl - p) : n;
        if (seg > s->max - s->len) {
            HR_IGNORE(hr_err_set(err, HR_E_LIMIT,
                                 "stream line longer than %zu bytes (limit); the stream is not "
                                 "line-delimited JSON or an object is absurdly large",
                                 s->max));
            return -1; /* the code is in err */
        }
        if (reserve(s, s->len + seg, err))
            return -1;
        memcpy(s->buf + s->len, p, seg);
        s->len += seg;
        if (!nl)
            return 0;
        p += seg + 1;
        n -= seg + 1;
        if (deliver(s, fn, ud))
            return 1;
    }
    return 0;
}

int hr_klines_finish(hr_klines *s, hr_kline_fn fn, void *ud, hr_err *err)
{
    (void)err;
    if (!s->len)
        return 0;
    return deliver(s, fn, ud);
}
