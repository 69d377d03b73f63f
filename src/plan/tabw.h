/*
 * tabw.h — a table laid out as kubectl lays out its tables: Go's
 * text/tabwriter with kubectl's settings (minimum cell width 6, padding
 * 3, spaces): every column but the last is as wide as its widest cell plus
 * 3 (at least 6), cells left-aligned; the last column is not padded.
 * Widths count UTF-8 characters. Used by the flat `plan`/`node` table and
 * by -o custom-columns.
 */
#ifndef HR_PLAN_TABW_H
#define HR_PLAN_TABW_H

#include <stdbool.h>
#include <stddef.h>

#include "util/buf.h"

typedef struct hr_tabw {
    hr_buf cells; /* every cell, NUL-terminated, row after row */
    size_t ncols, nrows;
    size_t *width; /* per column: the widest cell so far */
    size_t cur;    /* cells in the row being added */
    bool failed;
} hr_tabw;

void hr_tabw_init(hr_tabw *t, size_t ncols);
/* The next cell of the current row (a row ends after ncols cells). */
void hr_tabw_cell(hr_tabw *t, const char *s, size_t len);
void hr_tabw_cells(hr_tabw *t, const char *s); /* a NUL-terminated cell */
/* The table into out; false when memory ran out on the way. */
bool hr_tabw_write(hr_tabw *t, hr_buf *out);
void hr_tabw_free(hr_tabw *t);

#endif
