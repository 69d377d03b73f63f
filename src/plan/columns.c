/*
 * columns.c — kubectl's custom-columns (columns.h), on plan/jsonpath.h.
 */
#include "plan/columns.h"

#include <stdlib.h>
#include <string.h>

#include "plan/jpvalue.h"
#include "plan/jsonpath.h"
#include "plan/tabw.h"

typedef struct column {
    char *header;
    hr_jsonpath *path;
} column;

struct hr_columns {
    column *col;
    size_t n;
};

void hr_columns_free(hr_columns *c)
{
    if (!c)
        return;
    for (size_t i = 0; i < c->n; i++) {
        free(c->col[i].header);
        hr_jsonpath_free(c->col[i].path);
    }
    free(c->col);
    free(c);
}

/* kubectl's RelaxedJSONPathExpression: ^\{\.?([^{}]+)\}$|^\.?([^{}]+)$ → {.X}. */
static char *relaxed(const char *p, size_t n)
{
    if (n == 0)
        return strdup("");
    const char *s = p;
    size_t len = n;
    if (s[0] == '{' && s[len - 1] == '}' && len >= 2) {
        s++;
        len -= 2;
    }
    if (len && s[0] == '.') {
        s++;
        len--;
    }
    if (len == 0 || memchr(s, '{', len) || memchr(s, '}', len))
        return NULL;
    char *t = malloc(len + 4);
    if (t) {
        t[0] = '{';
        t[1] = '.';
        memcpy(t + 2, s, len);
        t[len + 2] = '}';
        t[len + 3] = '\0';
    }
    return t;
}

hr_status hr_columns_parse(const char *spec, hr_columns **out, hr_err *err)
{
    *out = NULL;
    if (!spec || !*spec)
        return hr_err_set(err, HR_E_INPUT,
                          "custom-columns format specified but no custom columns given");
    hr_columns *c = calloc(1, sizeof *c);
    size_t parts = 1;
    for (const char *q = spec; *q; q++)
        parts += *q == ',';
    if (c)
        c->col = calloc(parts, sizeof *c->col);
    if (!c || !c->col) {
        free(c);
        return hr_err_set(err, HR_E_NOMEM, "out of memory");
    }
    const char *s = spec;
    hr_status st = HR_OK;
    for (size_t k = 0; k < parts && !st; k++) {
        const char *e = strchr(s, ',');
        size_t len = e ? (size_t)(e - s) : strlen(s);
        const char *colon = memchr(s, ':', len);
        if (!colon) {
            st = hr_err_set(err, HR_E_INPUT,
                            "unexpected custom-columns spec: %.*s, expected "
                            "<header>:<json-path-expr>",
                            (int)(len > 200 ? 200 : len), s);
            break;
        }
        char *tmpl = relaxed(colon + 1, len - (size_t)(colon + 1 - s));
        if (!tmpl) {
            st = hr_err_set(err, HR_E_INPUT,
                            "unexpected path string, expected a 'name1.name2' or '.name1.name2' "
                            "or '{name1.name2}' or '{.name1.name2}'");
            break;
        }
        c->col[k].header = strndup(s, (size_t)(colon - s));
        st = c->col[k].header ? hr_jsonpath_parse(tmpl, &c->col[k].path, err)
                              : hr_err_set(err, HR_E_NOMEM, "out of memory");
        free(tmpl);
        c->n = k + 1;
        s = e ? e + 1 : s + len;
    }
    if (st) {
        hr_columns_free(c);
        return st;
    }
    *out = c;
    return HR_OK;
}

static hr_status row(const hr_columns *c, yyjson_val *obj, hr_tabw *t, hr_buf *cell, hr_err *err)
{
    for (size_t k = 0; k < c->n; k++) {
        yyjson_val **vals = NULL;
        size_t n = 0;
        bool first_empty = true;
        hr_status st = hr_jsonpath_find(c->col[k].path, obj, true, &vals, &n, &first_empty, err);
        if (st)
            return st;
        hr_buf_reset(cell);
        if (first_empty)
            hr_buf_puts(cell, "<none>");
        for (size_t i = 0; i < n; i++) {
            if (i || first_empty)
                hr_buf_putc(cell, ',');
            hr_jpvalue_gov(vals[i], cell);
        }
        free(vals);
        hr_tabw_cell(t, hr_buf_str(cell), cell->len);
    }
    return HR_OK;
}

hr_status hr_columns_print(const hr_columns *c, yyjson_val *root, bool no_headers, hr_buf *out,
                           hr_err *err)
{
    hr_tabw t;
    hr_tabw_init(&t, c->n);
    hr_buf cell;
    hr_buf_init(&cell, 0);
    for (size_t k = 0; !no_headers && k < c->n; k++)
        hr_tabw_cells(&t, c->col[k].header);
    yyjson_val *items = yyjson_obj_get(root, "items");
    hr_status st = HR_OK;
    if (yyjson_is_arr(items)) {
        size_t i, max;
        yyjson_val *x;
        yyjson_arr_foreach(items, i, max, x)
        {
            if (!st)
                st = row(c, x, &t, &cell, err);
        }
    } else {
        st = row(c, root, &t, &cell, err);
    }
    if (!st && (hr_buf_failed(&cell) || !hr_tabw_write(&t, out)))
        st = hr_err_set(err, HR_E_NOMEM, "out of memory");
    hr_buf_free(&cell);
    hr_tabw_free(&t);
    return st;
}
