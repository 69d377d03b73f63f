/*
 * tabw.c — kubectl's table layout (tabw.h).
 */
#include "plan/tabw.h"

#include <stdlib.h>
#include <string.h>

#define TABW_MIN 6
#define TABW_PAD 3

static size_t utf8_chars(const char *s, size_t len)
{
    size_t n = 0;
    for (size_t i = 0; i < len; i++)
        n += ((unsigned char)s[i] & 0xc0) != 0x80;
    return n;
}

void hr_tabw_init(hr_tabw *t, size_t ncols)
{
    memset(t, 0, sizeof *t);
    hr_buf_init(&t->cells, 0);
    t->ncols = ncols;
    t->width = ncols ? calloc(ncols, sizeof *t->width) : NULL;
    t->failed = ncols == 0 || t->width == NULL;
}

void hr_tabw_cell(hr_tabw *t, const char *s, size_t len)
{
    if (t->failed)
        return;
    size_t w = utf8_chars(s, len);
    if (w > t->width[t->cur])
        t->width[t->cur] = w;
    hr_buf_append(&t->cells, s, len);
    hr_buf_putc(&t->cells, '\0');
    if (++t->cur == t->ncols) {
        t->cur = 0;
        t->nrows++;
    }
}

void hr_tabw_cells(hr_tabw *t, const char *s)
{
    hr_tabw_cell(t, s, strlen(s));
}

bool hr_tabw_write(hr_tabw *t, hr_buf *out)
{
    if (t->failed || hr_buf_failed(&t->cells))
        return false;
    const char *c = t->cells.data;
    for (size_t r = 0; r < t->nrows; r++) {
        for (size_t k = 0; k < t->ncols; k++) {
            size_t len = strlen(c);
            hr_buf_append(out, c, len);
            if (k + 1 < t->ncols) {
                size_t w = t->width[k] + TABW_PAD;
                w = w < TABW_MIN ? TABW_MIN : w;
                hr_buf_fill(out, ' ', w - utf8_chars(c, len));
            }
            c += len + 1;
        }
        hr_buf_putc(out, '\n');
    }
    return !hr_buf_failed(out);
}

void hr_tabw_free(hr_tabw *t)
{
    hr_buf_free(&t->cells);
    free(t->width);
    t->width = NULL;
}
