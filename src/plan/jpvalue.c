/*
 * jpvalue.c — JSON values printed with Go's rules (jpvalue.h).
 *
 * Go's shortest float text: the fewest significant digits that read back
 * as the same double (tried from 1 to 17 with %.*e), laid out as
 * strconv.FormatFloat lays them out: %v ('g', shortest) uses the exponent
 * form when the decimal exponent is < -4 or >= 6 (1e+06), json.Marshal
 * when the value is < 1e-6 or >= 1e21.
 */
#include "plan/jpvalue.h"

#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* The shortest digits of x (> 0, finite): digits without leading or
 * trailing zeros, x = 0.DIGITS × 10^dp. */
typedef struct shortest {
    char d[24];
    int nd, dp;
} shortest;

static void shortest_of(double x, shortest *s)
{
    char buf[40];
    for (int p = 1; p <= 17; p++) {
        snprintf(buf, sizeof buf, "%.*e", p - 1, x);
        if (strtod(buf, NULL) == x || p == 17)
            break;
    }
    /* buf: D[.DDD]e±XX */
    s->nd = 0;
    const char *c = buf;
    for (; *c && *c != 'e'; c++)
        if (*c >= '0' && *c <= '9')
            s->d[s->nd++] = *c;
    int e = *c == 'e' ? atoi(c + 1) : 0;
    while (s->nd > 1 && s->d[s->nd - 1] == '0')
        s->nd--;
    s->d[s->nd] = '\0';
    s->dp = e + 1;
}

/* strconv's %e with the shortest digits: d.ddde±XX (two exponent digits
 * at least). */
static void fmt_e(const shortest *s, bool neg, hr_buf *out)
{
    if (neg)
        hr_buf_putc(out, '-');
    hr_buf_putc(out, s->d[0]);
    if (s->nd > 1) {
        hr_buf_putc(out, '.');
        hr_buf_append(out, s->d + 1, (size_t)s->nd - 1);
    }
    int e = s->dp - 1;
    hr_buf_printf(out, "e%c%02d", e < 0 ? '-' : '+', e < 0 ? -e : e);
}

/* strconv's %f with the shortest digits. */
static void fmt_f(const shortest *s, bool neg, hr_buf *out)
{
    if (neg)
        hr_buf_putc(out, '-');
    if (s->dp > 0) {
        for (int i = 0; i < s->dp; i++)
            hr_buf_putc(out, i < s->nd ? s->d[i] : '0');
    } else {
        hr_buf_putc(out, '0');
    }
    int frac = s->nd - s->dp;
    if (frac > 0) {
        hr_buf_putc(out, '.');
        for (int i = 0; i < frac; i++) {
            int k = s->dp + i;
            hr_buf_putc(out, k >= 0 && k < s->nd ? s->d[k] : '0');
        }
    }
}

/* as_json: json.Marshal's float; else fmt's %v. */
static void fmt_float(double x, bool as_json, hr_buf *out)
{
    if (isnan(x) || isinf(x)) { /* not from JSON text */
        hr_buf_puts(out, isnan(x) ? "NaN" : x < 0 ? "-Inf" : "+Inf");
        return;
    }
    bool neg = signbit(x);
    double a = fabs(x);
    if (a == 0) {
        hr_buf_puts(out, neg ? "-0" : "0");
        return;
    }
    shortest s;
    shortest_of(a, &s);
    int exp = s.dp - 1;
    bool e_form = as_json ? (a < 1e-6 || a >= 1e21) : (exp < -4 || exp >= 6);
    if (!e_form) {
        fmt_f(&s, neg, out);
        return;
    }
    size_t at = out->len;
    fmt_e(&s, neg, out);
    /* json.Marshal: e-07 → e-7 */
    if (as_json && !hr_buf_failed(out) && out->len - at >= 4) {
        char *b = out->data + out->len;
        if (b[-4] == 'e' && b[-3] == '-' && b[-2] == '0') {
            b[-2] = b[-1];
            out->len--;
            out->data[out->len] = '\0';
        }
    }
}

hr_jpnum hr_jpnum_of(yyjson_val *v)
{
    hr_jpnum n = {HR_JPNUM_NONE, 0, 0};
    if (yyjson_is_raw(v)) {
        const char *t = yyjson_get_raw(v);
        if (strpbrk(t, ".eE") == NULL) {
            errno = 0;
            char *end = NULL;
            long long i = strtoll(t, &end, 10);
            if (errno == 0 && end && *end == '\0') {
                n.kind = HR_JPNUM_INT;
                n.i = i;
                return n;
            }
        }
        n.kind = HR_JPNUM_FLOAT;
        n.f = strtod(t, NULL);
    } else if (yyjson_is_sint(v) || (yyjson_is_uint(v) && yyjson_get_uint(v) <= INT64_MAX)) {
        n.kind = HR_JPNUM_INT;
        n.i = yyjson_get_sint(v);
    } else if (yyjson_is_num(v)) {
        n.kind = HR_JPNUM_FLOAT;
        n.f = yyjson_get_num(v);
    }
    return n;
}

static void put_num(yyjson_val *v, bool as_json, hr_buf *out)
{
    hr_jpnum n = hr_jpnum_of(v);
    if (n.kind == HR_JPNUM_INT)
        hr_buf_printf(out, "%" PRId64, n.i);
    else
        fmt_float(n.f, as_json, out);
}

/* Go's encoding/json string: <>& and U+2028/9 escaped too. */
static void json_str(const char *s, size_t n, hr_buf *out)
{
    static const char hex[] = "0123456789abcdef";
    hr_buf_putc(out, '"');
    for (size_t i = 0; i < n; i++) {
        unsigned char c = (unsigned char)s[i];
        switch (c) {
        case '"': hr_buf_puts(out, "\\\""); continue;
        case '\\': hr_buf_puts(out, "\\\\"); continue;
        case '\n': hr_buf_puts(out, "\\n"); continue;
        case '\r': hr_buf_puts(out, "\\r"); continue;
        case '\t': hr_buf_puts(out, "\\t"); continue;
        case '\b': hr_buf_puts(out, "\\b"); continue;
        case '\f': hr_buf_puts(out, "\\f"); continue;
        default: break;
        }
        if (c < 0x20 || c == '<' || c == '>' || c == '&') {
            hr_buf_puts(out, "\\u00");
            hr_buf_putc(out, hex[c >> 4]);
            hr_buf_putc(out, hex[c & 15]);
        } else if (c == 0xe2 && i + 2 < n && (unsigned char)s[i + 1] == 0x80 &&
                   ((unsigned char)s[i + 2] == 0xa8 || (unsigned char)s[i + 2] == 0xa9)) {
            hr_buf_puts(out, (unsigned char)s[i + 2] == 0xa8 ? "\\u2028" : "\\u2029");
            i += 2;
        } else {
            hr_buf_putc(out, (char)c);
        }
    }
    hr_buf_putc(out, '"');
}

/* An object's members sorted by key (Go prints maps in key order). */
static int key_cmp(const void *a, const void *b)
{
    yyjson_val *ka = *(yyjson_val *const *)a, *kb = *(yyjson_val *const *)b;
    size_t la = yyjson_get_len(ka), lb = yyjson_get_len(kb);
    int c = memcmp(yyjson_get_str(ka), yyjson_get_str(kb), la < lb ? la : lb);
    return c ? c : (la > lb) - (la < lb);
}

/* The keys of o, sorted; NULL when o is empty or memory runs out. */
static yyjson_val **sorted_keys(yyjson_val *o, size_t *n)
{
    *n = yyjson_obj_size(o);
    yyjson_val **keys = *n ? malloc(*n * sizeof *keys) : NULL;
    if (!keys) {
        *n = 0;
        return NULL;
    }
    size_t i = 0, max;
    yyjson_val *k, *x;
    yyjson_obj_foreach(o, i, max, k, x) keys[i] = k;
    (void)x;
    qsort(keys, *n, sizeof *keys, key_cmp);
    return keys;
}

void hr_jpvalue_json(yyjson_val *v, hr_buf *out)
{
    if (yyjson_is_obj(v)) {
        size_t n;
        yyjson_val **keys = sorted_keys(v, &n);
        if (!keys && yyjson_obj_size(v))
            out->failed = true; /* out of memory: the buffer says so */
        hr_buf_putc(out, '{');
        for (size_t i = 0; i < n; i++) {
            if (i)
                hr_buf_putc(out, ',');
            json_str(yyjson_get_str(keys[i]), yyjson_get_len(keys[i]), out);
            hr_buf_putc(out, ':');
            hr_jpvalue_json(keys[i] + 1, out); /* a value follows its key */
        }
        hr_buf_putc(out, '}');
        free(keys);
    } else if (yyjson_is_arr(v)) {
        size_t i, max;
        yyjson_val *x;
        hr_buf_putc(out, '[');
        yyjson_arr_foreach(v, i, max, x)
        {
            if (i)
                hr_buf_putc(out, ',');
            hr_jpvalue_json(x, out);
        }
        hr_buf_putc(out, ']');
    } else if (yyjson_is_str(v)) {
        json_str(yyjson_get_str(v), yyjson_get_len(v), out);
    } else if (yyjson_is_raw(v) || yyjson_is_num(v)) {
        put_num(v, true, out);
    } else if (yyjson_is_bool(v)) {
        hr_buf_puts(out, yyjson_get_bool(v) ? "true" : "false");
    } else {
        hr_buf_puts(out, "null");
    }
}

void hr_jpvalue_text(yyjson_val *v, hr_buf *out)
{
    if (yyjson_is_obj(v) || yyjson_is_arr(v))
        hr_jpvalue_json(v, out);
    else if (yyjson_is_str(v))
        hr_buf_append(out, yyjson_get_str(v), yyjson_get_len(v));
    else if (yyjson_is_raw(v) || yyjson_is_num(v))
        put_num(v, false, out);
    else if (yyjson_is_bool(v))
        hr_buf_puts(out, yyjson_get_bool(v) ? "true" : "false");
    else
        hr_buf_puts(out, "null");
}

void hr_jpvalue_gov(yyjson_val *v, hr_buf *out)
{
    if (yyjson_is_obj(v)) {
        size_t n;
        yyjson_val **keys = sorted_keys(v, &n);
        if (!keys && yyjson_obj_size(v))
            out->failed = true;
        hr_buf_puts(out, "map[");
        for (size_t i = 0; i < n; i++) {
            if (i)
                hr_buf_putc(out, ' ');
            hr_buf_append(out, yyjson_get_str(keys[i]), yyjson_get_len(keys[i]));
            hr_buf_putc(out, ':');
            hr_jpvalue_gov(keys[i] + 1, out);
        }
        hr_buf_putc(out, ']');
        free(keys);
    } else if (yyjson_is_arr(v)) {
        size_t i, max;
        yyjson_val *x;
        hr_buf_putc(out, '[');
        yyjson_arr_foreach(v, i, max, x)
        {
            if (i)
                hr_buf_putc(out, ' ');
            hr_jpvalue_gov(x, out);
        }
        hr_buf_putc(out, ']');
    } else if (yyjson_is_null(v) || v == NULL) {
        hr_buf_puts(out, "<nil>");
    } else {
        hr_jpvalue_text(v, out);
    }
}

const char *hr_jpvalue_type(yyjson_val *v)
{
    if (yyjson_is_obj(v))
        return "map[string]interface {}";
    if (yyjson_is_arr(v))
        return "[]interface {}";
    if (yyjson_is_str(v))
        return "string";
    if (yyjson_is_bool(v))
        return "bool";
    hr_jpnum n = hr_jpnum_of(v);
    return n.kind == HR_JPNUM_INT ? "int64" : n.kind == HR_JPNUM_FLOAT ? "float64" : "<nil>";
}
