/*
 * gzip.c — Accept-Encoding and one gzip member, with zlib.
 */
#include "gzip.h"

#include <stdint.h>
#include <string.h>
#include <strings.h>
#include <zlib.h>

/* The q of one coding's parameters (after its name): 1 when absent, 0 for
 * q=0 (q=0.0, q=0.000); anything else is above 0. */
static bool q_zero(const char *p, const char *end)
{
    while (p < end) {
        while (p < end && (*p == ';' || *p == ' ' || *p == '\t'))
            p++;
        if (end - p >= 2 && (p[0] == 'q' || p[0] == 'Q') && p[1] == '=') {
            p += 2;
            if (p == end || *p != '0')
                return false;
            for (p++; p < end && *p != ';' && *p != ' '; p++)
                if (*p != '.' && *p != '0')
                    return false;
            return true;
        }
        while (p < end && *p != ';')
            p++;
    }
    return false;
}

bool hr_gzip_accepted(const char *ae)
{
    if (ae == NULL)
        return false;
    int gzip = -1, star = -1; /* -1: not named; 0: q=0; 1: accepted */
    const char *p = ae;
    while (*p != '\0') {
        while (*p == ' ' || *p == '\t' || *p == ',')
            p++;
        const char *end = p + strcspn(p, ",");
        size_t n = strcspn(p, ";, \t");
        if (n > (size_t)(end - p))
            n = (size_t)(end - p);
        int ok = q_zero(p + n, end) ? 0 : 1;
        if ((n == 4 && strncasecmp(p, "gzip", 4) == 0) ||
            (n == 6 && strncasecmp(p, "x-gzip", 6) == 0))
            gzip = gzip == 1 ? 1 : ok;
        else if (n == 1 && *p == '*')
            star = ok;
        p = end;
    }
    return gzip >= 0 ? gzip == 1 : star == 1;
}

hr_status hr_gzip(const void *in, size_t len, hr_buf *out, hr_err *err)
{
    z_stream z;
    memset(&z, 0, sizeof z);
    /* 15 + 16: a gzip header and trailer around the deflate stream. */
    if (deflateInit2(&z, 1, Z_DEFLATED, 15 + 16, 8, Z_DEFAULT_STRATEGY) != Z_OK)
        return hr_err_set(err, HR_E_NOMEM, "gzip: deflateInit2 failed");
    const unsigned char *src = in;
    size_t left = len;
    unsigned char chunk[16384];
    int rc;
    do {
        if (z.avail_in == 0 && left > 0) { /* avail_in is 32-bit: at most 1 GiB a turn */
            uInt take = left > (1u << 30) ? (1u << 30) : (uInt)left;
            z.next_in = (Bytef *)(uintptr_t)src;
            z.avail_in = take;
            src += take;
            left -= take;
        }
        z.next_out = chunk;
        z.avail_out = sizeof chunk;
        rc = deflate(&z, left == 0 ? Z_FINISH : Z_NO_FLUSH);
        hr_buf_append(out, chunk, sizeof chunk - z.avail_out);
    } while (rc == Z_OK && !hr_buf_failed(out));
    deflateEnd(&z);
    if (hr_buf_failed(out))
        return hr_err_set(err, HR_E_NOMEM, "gzip: out of memory");
    if (rc != Z_STREAM_END)
        return hr_err_set(err, HR_E_NOMEM, "gzip: deflate failed (%d)", rc);
    return HR_OK;
}

void hr_gzip_answer(const hr_http_req *req, hr_http_resp *r)
{
    if (r->content_encoding != NULL || hr_buf_failed(&r->body) ||
        !hr_gzip_accepted(req->accept_encoding))
        return;
    hr_buf z;
    hr_buf_init(&z, 0);
    hr_err err;
    if (hr_gzip(hr_buf_str(&r->body), r->body.len, &z, &err) != HR_OK) {
        hr_buf_free(&z);
        return;
    }
    hr_buf_free(&r->body);
    r->body = z; /* the answer owns the compressed bytes now */
    r->content_encoding = "gzip";
}
