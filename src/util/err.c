/*
 * err.c — formatting of hr_err values. Messages are built with snprintf in
 * fixed storage: reporting an error never allocates.
 */
#define HR_ERR_C /* err.h: this file defines hr_err_set; no analyzer macro here */
#include "util/err.h"

#include <stdarg.h>
#include <stdio.h>
#include <string.h>

hr_status hr_err_set(hr_err *err, hr_status code, const char *fmt, ...)
{
    if (!err)
        return code;
    err->code = code;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(err->msg, sizeof err->msg, fmt, ap);
    va_end(ap);
    return code;
}

void hr_err_prefix(hr_err *err, const char *fmt, ...)
{
    if (!err)
        return;
    char prefix[HR_ERR_MSG_MAX];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(prefix, sizeof prefix, fmt, ap);
    va_end(ap);
    /* prefix + ": " + old message, cut to fit (truncation is fine here). */
    size_t pl = strnlen(prefix, sizeof prefix);
    size_t ol = strnlen(err->msg, sizeof err->msg);
    size_t cap = sizeof err->msg - 1;
    if (pl > cap)
        pl = cap;
    size_t sep = pl + 2 <= cap ? 2 : cap - pl;
    size_t keep = ol <= cap - pl - sep ? ol : cap - pl - sep;
    memmove(err->msg + pl + sep, err->msg, keep);
    memcpy(err->msg, prefix, pl);
    memcpy(err->msg + pl, ": ", sep);
    err->msg[pl + sep + keep] = '\0';
}

void hr_err_clear(hr_err *err)
{
    if (!err)
        return;
    err->code = HR_OK;
    err->msg[0] = '\0';
}

char *hr_err_quote(char *dst, size_t cap, const char *s, size_t len, size_t max)
{
    if (!cap)
        return dst;
    size_t o = 0;
    size_t i;
    for (i = 0; i < len && i < max && o + 1 < cap; i++) {
        unsigned char c = (unsigned char)s[i];
        dst[o++] = (c >= 0x20 && c < 0x7f) ? (char)c : '?';
    }
    if (i < len) {
        for (int k = 0; k < 3 && o + 1 < cap; k++)
            dst[o++] = '.';
    }
    dst[o] = '\0';
    return dst;
}
