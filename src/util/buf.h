/*
 * buf.h — a growable byte buffer for rendering output.
 *
 * Renderers append many small pieces; checking every append would bury the
 * logic, so the buffer keeps a sticky failure flag instead (as curl's dynbuf
 * does): after the first failed append every later one is a no-op, and the
 * caller checks hr_buf_failed once at the end. The content is always
 * NUL-terminated when not failed.
 */
#ifndef HR_UTIL_BUF_H
#define HR_UTIL_BUF_H

#include <stdbool.h>
#include <stddef.h>

typedef struct hr_buf {
    char *data; /* NULL until the first append */
    size_t len;
    size_t cap;
    size_t limit; /* 0: no limit on len */
    bool failed;  /* sticky: out of memory or over the limit */
} hr_buf;

void hr_buf_init(hr_buf *b, size_t limit);
void hr_buf_append(hr_buf *b, const void *p, size_t n);
void hr_buf_puts(hr_buf *b, const char *s);
void hr_buf_putc(hr_buf *b, char c);
/* Append n copies of c (for column padding). */
void hr_buf_fill(hr_buf *b, char c, size_t n);
void hr_buf_printf(hr_buf *b, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static inline bool hr_buf_failed(const hr_buf *b)
{
    return b->failed;
}
/* The content, "" when empty. */
const char *hr_buf_str(const hr_buf *b);
void hr_buf_reset(hr_buf *b);
void hr_buf_free(hr_buf *b);

#endif
