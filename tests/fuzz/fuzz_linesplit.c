/*
 * fuzz_linesplit.c — libFuzzer target for the watch stream splitter
 * (kube/transport/linesplit.h).
 *
 * The first bytes choose where the stream is cut into pieces and the line
 * limit; the rest is the stream. Whatever the cuts, the delivered lines
 * must be exactly what one pass over the whole stream gives (a reference
 * computed here independently), each NUL-terminated and padded, and an
 * over-long line must be reported, never delivered.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "kube/transport/linesplit.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

typedef struct sink {
    char *out;
    size_t len;
} sink;

static int take(void *ud, const char *line, size_t len)
{
    sink *s = ud;
    for (size_t i = 0; i <= HR_KLINE_PAD; i++)
        if (line[len + i] != '\0')
            abort();
    if (len == 0 || memchr(line, '\n', len))
        abort();
    memcpy(s->out + s->len, line, len);
    s->len += len;
    s->out[s->len++] = '\n';
    return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size < 3)
        return 0;
    size_t max_line = 1 + data[0] % 64;
    unsigned cut_seed = data[1] | (unsigned)data[2] << 8;
    const char *in = (const char *)data + 3;
    size_t n = size - 3;

    /* Reference: lines of the whole input, '\r' before '\n' removed,
     * empty ones skipped; the tail counts as a line at a clean end. */
    char *want = malloc(n + 2);
    size_t wl = 0, start = 0;
    int too_long = 0;
    for (size_t i = 0; i <= n && !too_long; i++) {
        if (i < n && in[i] != '\n')
            continue;
        size_t len = i - start;
        if (len > max_line)
            too_long = 1;
        if (i < n && len && in[i - 1] == '\r')
            len--;
        else if (i == n && len && in[i - 1] == '\r')
            len--;
        if (!too_long && len) {
            memcpy(want + wl, in + start, len);
            wl += len;
            want[wl++] = '\n';
        }
        start = i + 1;
    }

    hr_klines s;
    hr_klines_init(&s, max_line);
    sink got = {malloc(n + 2), 0};
    hr_err e;
    int r = 0;
    size_t off = 0;
    while (off < n && r == 0) {
        cut_seed = cut_seed * 1103515245u + 12345u;
        size_t piece = 1 + (cut_seed >> 16) % 17;
        if (piece > n - off)
            piece = n - off;
        r = hr_klines_feed(&s, in + off, piece, take, &got, &e);
        off += piece;
    }
    if (r == 0)
        r = hr_klines_finish(&s, take, &got, &e);
    if (too_long != (r < 0))
        abort();
    if (r < 0 && e.code != HR_E_LIMIT)
        abort();
    if (r == 0 && (got.len != wl || memcmp(got.out, want, wl) != 0))
        abort();
    hr_klines_free(&s);
    free(got.out);
    free(want);
    return 0;
}
