/*
 * base64.c — RFC 4648 standard alphabet, lenient on whitespace and padding
 * (see base64.h).
 */
#include "util/base64.h"

#include <stdint.h>

static const char enc_tab[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";

static int dec_val(unsigned char c)
{
    if (c >= 'A' && c <= 'Z')
        return c - 'A';
    if (c >= 'a' && c <= 'z')
        return c - 'a' + 26;
    if (c >= '0' && c <= '9')
        return c - '0' + 52;
    if (c == '+')
        return 62;
    if (c == '/')
        return 63;
    return -1;
}

size_t hr_b64_decode(const char *src, size_t len, unsigned char *dst, size_t *bad_at)
{
    uint32_t acc = 0;
    int nbits = 0, pad = 0;
    size_t o = 0;
    for (size_t i = 0; i < len; i++) {
        unsigned char c = (unsigned char)src[i];
        if (c == ' ' || c == '\n' || c == '\r' || c == '\t')
            continue;
        if (c == '=') {
            pad++;
            if (pad > 2)
                goto bad_i;
            continue;
        }
        int v = dec_val(c);
        if (v < 0 || pad) /* data after padding is not base64 */
            goto bad_i;
        acc = (acc << 6) | (uint32_t)v;
        nbits += 6;
        if (nbits >= 8) {
            nbits -= 8;
            dst[o++] = (unsigned char)(acc >> nbits);
            acc &= (UINT32_C(1) << nbits) - 1;
        }
        continue;
bad_i:
        if (bad_at)
            *bad_at = i;
        return (size_t)-1;
    }
    /* 6 leftover bits cannot encode a byte: a truncated quantum. */
    if (nbits >= 6) {
        if (bad_at)
            *bad_at = len;
        return (size_t)-1;
    }
    return o;
}

size_t hr_b64_encode(const unsigned char *src, size_t len, char *dst)
{
    size_t o = 0, i = 0;
    for (; i + 2 < len; i += 3) {
        uint32_t v = (uint32_t)src[i] << 16 | (uint32_t)src[i + 1] << 8 | src[i + 2];
        dst[o++] = enc_tab[v >> 18];
        dst[o++] = enc_tab[(v >> 12) & 63];
        dst[o++] = enc_tab[(v >> 6) & 63];
        dst[o++] = enc_tab[v & 63];
    }
    if (i < len) {
        uint32_t v = (uint32_t)src[i] << 16;
        if (i + 1 < len)
            v |= (uint32_t)src[i + 1] << 8;
        dst[o++] = enc_tab[v >> 18];
        dst[o++] = enc_tab[(v >> 12) & 63];
        dst[o++] = i + 1 < len ? enc_tab[(v >> 6) & 63] : '=';
        dst[o++] = '=';
    }
    dst[o] = '\0';
    return o;
}

void hr_buf_b64(hr_buf *b, const void *src, size_t len)
{
    /* In chunks of a multiple of 3 bytes, so only the last one pads. */
    const unsigned char *s = src;
    char out[1024 + 1];
    while (len > 0) {
        size_t n = len < 768 ? len : 768;
        hr_buf_append(b, out, hr_b64_encode(s, n, out));
        s += n;
        len -= n;
    }
}
