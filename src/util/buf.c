/*
 * buf.c — the growable buffer of buf.h. Capacity doubles, so appending n
 * bytes one piece at a time costs O(n) overall.
 */
#include "util/buf.h"

#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

void hr_buf_init(hr_buf *b, size_t limit)
{
    b->data = NULL;
    b->len = 0;
    b->cap = 0;
    b->limit = limit;
    b->failed = false;
}

/* Make room for n more bytes plus the NUL. */
static bool reserve(hr_buf *b, size_t n)
{
    if (b->failed)
        return false;
    if (n > SIZE_MAX / 4 - b->len || (b->limit && b->len + n > b->limit)) {
        b->failed = true;
        return false;
    }
    size_t need = b->len + n + 1;
    if (need <= b->cap)
        return true;
    size_t cap = b->cap ? b->cap : 256;
    while (cap < need)
        cap *= 2;
    char *d = realloc(b->data, cap);
    if (!d) {
        b->failed = true;
        return false;
    }
    b->data = d;
    b->cap = cap;
    return true;
}

void hr_buf_append(hr_buf *b, const void *p, size_t n)
{
    if (!reserve(b, n))
        return;
    if (n)
        memcpy(b->data + b->len, p, n);
    b->len += n;
    b->data[b->len] = '\0';
}

void hr_buf_puts(hr_buf *b, const char *s)
{
    hr_buf_append(b, s, strlen(s));
}

void hr_buf_putc(hr_buf *b, char c)
{
    hr_buf_append(b, &c, 1);
}

void hr_buf_fill(hr_buf *b, char c, size_t n)
{
    if (!reserve(b, n))
        return;
    memset(b->data + b->len, c, n);
    b->len += n;
    b->data[b->len] = '\0';
}

void hr_buf_printf(hr_buf *b, const char *fmt, ...)
{
    if (b->failed)
        return;
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(NULL, 0, fmt, ap);
    va_end(ap);
    if (n < 0) {
        b->failed = true;
        return;
    }
    if (!reserve(b, (size_t)n))
        return;
    va_start(ap, fmt);
    vsnprintf(b->data + b->len, (size_t)n + 1, fmt, ap);
    va_end(ap);
    b->len += (size_t)n;
}

const char *hr_buf_str(const hr_buf *b)
{
    return b->data && !b->failed ? b->data : "";
}

void hr_buf_reset(hr_buf *b)
{
    b->len = 0;
    b->failed = false;
    if (b->data)
        b->data[0] = '\0';
}

void hr_buf_free(hr_buf *b)
{
    free(b->data);
    hr_buf_init(b, b->limit);
}
