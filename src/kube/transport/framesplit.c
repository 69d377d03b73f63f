/*
 * framesplit.c — protobuf watch stream to frames (see framesplit.h).
 *
 * A frame is copied once into the splitter's buffer, as a line is in
 * linesplit.c, so the consumer gets it contiguous and padded whatever the
 * pieces were.
 */
#include "kube/transport/framesplit.h"

#include <stdlib.h>
#include <string.h>

#include "kube/transport/linesplit.h"

void hr_kframes_init(hr_kframes *s, size_t max_frame)
{
    memset(s, 0, sizeof *s);
    s->max = max_frame ? max_frame : HR_KLINE_MAX_DEFAULT;
}

void hr_kframes_free(hr_kframes *s)
{
    free(s->buf);
    s->buf = NULL;
    s->len = s->cap = 0;
}

static int reserve(hr_kframes *s, size_t need, hr_err *err)
{
    size_t want = need + HR_KLINE_PAD;
    if (want <= s->cap)
        return 0;
    size_t cap = s->cap ? s->cap : 4096;
    while (cap < want)
        cap *= 2; /* need <= max (16 MiB by default): no overflow */
    char *nb = realloc(s->buf, cap);
    if (!nb) {
        HR_IGNORE(hr_err_set(err, HR_E_NOMEM, "out of memory buffering a %zu-byte watch frame",
                             need)); /* the code is in err; -1 says it */
        return -1;
    }
    s->buf = nb;
    s->cap = cap;
    return 0;
}

int hr_kframes_feed(hr_kframes *s, const char *p, size_t n, hr_kline_fn fn, void *ud, hr_err *err)
{
    while (n) {
        if (s->hdr_len < 4) {
            s->hdr[s->hdr_len++] = (uint8_t)*p++;
            n--;
            if (s->hdr_len < 4)
                continue;
            uint32_t len = (uint32_t)s->hdr[0] << 24 | (uint32_t)s->hdr[1] << 16 |
                           (uint32_t)s->hdr[2] << 8 | (uint32_t)s->hdr[3];
            if (len > s->max) {
                HR_IGNORE(hr_err_set(err, HR_E_LIMIT,
                                     "watch frame of %lu bytes announced, over the limit of %zu; "
                                     "the stream is not protobuf watch frames or an object is "
                                     "absurdly large",
                                     (unsigned long)len, s->max));
                return -1; /* the code is in err */
            }
            s->want = len;
            s->len = 0;
            if (reserve(s, len, err))
                return -1;
        }
        size_t take = s->want - s->len;
        if (take > n)
            take = n;
        memcpy(s->buf + s->len, p, take);
        s->len += take;
        p += take;
        n -= take;
        if (s->len < s->want)
            return 0;
        size_t len = s->len;
        s->hdr_len = 0;
        s->len = 0;
        if (len == 0)
            continue;
        memset(s->buf + len, 0, HR_KLINE_PAD);
        if (fn(ud, s->buf, len))
            return 1;
    }
    return 0;
}
