/*
 * lselector.c — kubectl's string label selectors (lselector.h).
 */
#include "kube/lselector.h"

#include <string.h>

static bool key_char(char c)
{
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '.' ||
           c == '-' || c == '_' || c == '/';
}

/* A copy of s[0..n) without surrounding blanks, checked as a key (is_key)
 * or a value (no '/'; may be empty). NULL when it is neither. */
static const char *word(hr_arena *a, const char *s, size_t n, bool is_key)
{
    while (n && (*s == ' ' || *s == '\t'))
        s++, n--;
    while (n && (s[n - 1] == ' ' || s[n - 1] == '\t'))
        n--;
    if (is_key && n == 0)
        return NULL;
    for (size_t i = 0; i < n; i++)
        if (!key_char(s[i]) || (!is_key && s[i] == '/'))
            return NULL;
    return hr_arena_strndup(a, s, n);
}

/* "x, y" inside the parentheses of in/notin. */
static hr_status values(hr_arena *a, const char *s, size_t n, hr_requirement *r, hr_err *err)
{
    size_t count = 1;
    for (size_t i = 0; i < n; i++)
        count += s[i] == ',';
    const char **v = hr_arena_calloc(a, count, sizeof *v);
    if (!v)
        return hr_err_set(err, HR_E_NOMEM, "out of memory");
    r->n_values = 0;
    for (size_t i = 0, start = 0; i <= n; i++)
        if (i == n || s[i] == ',') {
            const char *w = word(a, s + start, i - start, false);
            if (w == NULL)
                return hr_err_set(err, HR_E_INPUT, "selector: bad value in \"(%.*s)\"", (int)n, s);
            v[r->n_values++] = w;
            start = i + 1;
        }
    r->values = v;
    return HR_OK;
}

/* One requirement, s[0..n). */
static hr_status requirement(hr_arena *a, const char *s, size_t n, hr_requirement *r, hr_err *err)
{
    while (n && *s == ' ')
        s++, n--;
    const char *end = s + n;
#define BAD "selector: cannot read \"%.*s\""
    if (n && *s == '!') {
        r->op = HR_SEL_DOES_NOT_EXIST;
        r->key = word(a, s + 1, n - 1, true);
        return r->key ? HR_OK : hr_err_set(err, HR_E_INPUT, BAD, (int)n, s);
    }
    const char *paren = memchr(s, '(', n);
    if (paren) {
        const char *k = s;
        while (k < paren && key_char(*k))
            k++;
        const char *op = k;
        while (op < paren && *op == ' ')
            op++;
        size_t oplen = (size_t)(paren - op);
        while (oplen && op[oplen - 1] == ' ')
            oplen--;
        const char *close = end;
        while (close > paren && close[-1] == ' ')
            close--;
        if (close == paren + 1 || close[-1] != ')')
            return hr_err_set(err, HR_E_INPUT, BAD, (int)n, s);
        if (oplen == 2 && !strncmp(op, "in", 2))
            r->op = HR_SEL_IN;
        else if (oplen == 5 && !strncmp(op, "notin", 5))
            r->op = HR_SEL_NOT_IN;
        else
            return hr_err_set(err, HR_E_INPUT, BAD, (int)n, s);
        r->key = word(a, s, (size_t)(k - s), true);
        if (!r->key)
            return hr_err_set(err, HR_E_INPUT, BAD, (int)n, s);
        return values(a, paren + 1, (size_t)(close - 1 - (paren + 1)), r, err);
    }
    const char *eq = memchr(s, '=', n);
    if (eq == NULL) {
        r->op = HR_SEL_EXISTS;
        r->key = word(a, s, n, true);
        return r->key ? HR_OK : hr_err_set(err, HR_E_INPUT, BAD, (int)n, s);
    }
    const char *kend = eq, *vstart = eq + 1;
    r->op = HR_SEL_IN;
    if (eq > s && eq[-1] == '!') {
        r->op = HR_SEL_NOT_IN;
        kend = eq - 1;
    } else if (vstart < end && *vstart == '=') {
        vstart++;
    }
    r->key = word(a, s, (size_t)(kend - s), true);
    if (!r->key)
        return hr_err_set(err, HR_E_INPUT, BAD, (int)n, s);
    return values(a, vstart, (size_t)(end - vstart), r, err);
}

#undef BAD

hr_status hr_lselector_parse(const char *s, hr_arena *a, hr_selector *out, hr_err *err)
{
    *out = (hr_selector){.set = true};
    size_t n = strlen(s);
    if (strspn(s, " ") == n)
        return HR_OK;
    size_t count = 1;
    for (size_t i = 0, depth = 0; i < n; i++) {
        depth += s[i] == '(';
        depth -= s[i] == ')' && depth;
        count += s[i] == ',' && depth == 0;
    }
    hr_requirement *req = hr_arena_calloc(a, count, sizeof *req);
    if (!req)
        return hr_err_set(err, HR_E_NOMEM, "out of memory");
    uint32_t k = 0;
    for (size_t i = 0, start = 0, depth = 0; i <= n; i++) {
        if (i < n) {
            depth += s[i] == '(';
            depth -= s[i] == ')' && depth;
        }
        if (i == n || (s[i] == ',' && depth == 0)) {
            hr_status st = requirement(a, s + start, i - start, &req[k++], err);
            if (st != HR_OK)
                return st;
            start = i + 1;
        }
    }
    out->req = req;
    out->n = k;
    return HR_OK;
}
