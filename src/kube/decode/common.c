/*
 * common.c — typed field access with errors that name the object and
 * the field, plus metadata, labels and label selectors, shared by every
 * decoder.
 *
 * Numbers may arrive as yyjson integers, reals or raw text (the dump reader
 * parses with YYJSON_READ_NUMBER_AS_RAW so that "1e999" reaches the
 * quantity parser and gets a proper field error instead of failing the
 * whole document); every getter accepts all of them.
 */
#include "kube/decode/common.h"

#include <errno.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/quantity.h"

static void render_path(const hr_jpath *p, char *buf, size_t cap, size_t *o)
{
    if (!p)
        return;
    render_path(p->up, buf, cap, o);
    if (*o >= cap)
        return;
    int n;
    if (p->key)
        n = snprintf(buf + *o, cap - *o, "%s%s", p->up ? "." : "", p->key);
    else
        n = snprintf(buf + *o, cap - *o, "[%" PRId64 "]", p->idx);
    if (n > 0)
        *o += (size_t)n;
}

hr_status hr_kfail(const hr_kctx *c, const hr_jpath *p, hr_status code, const char *fmt, ...)
{
    if (!c->err)
        return code;
    char what[HR_ERR_MSG_MAX];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(what, sizeof what, fmt, ap);
    va_end(ap);
    char path[160];
    size_t o = 0;
    path[0] = '\0';
    render_path(p, path, sizeof path, &o);
    for (char *q = path; *q; q++) /* keys come from the input */
        if ((unsigned char)*q < 0x20 || (unsigned char)*q >= 0x7f)
            *q = '?';
    char ns[72], name[72];
    hr_err_quote(ns, sizeof ns, c->ns ? c->ns : "", c->ns ? strlen(c->ns) : 0, 63);
    hr_err_quote(name, sizeof name, c->name ? c->name : "", c->name ? strlen(c->name) : 0, 63);
    const char *shown = c->name ? name : "<unnamed>";
    if (p)
        return hr_err_set(c->err, code, "%s %s%s%s: %s: %s", c->kind, ns, ns[0] ? "/" : "", shown,
                          path, what);
    return hr_err_set(c->err, code, "%s %s%s%s: %s", c->kind, ns, ns[0] ? "/" : "", shown, what);
}

hr_status hr_knomem(const hr_kctx *c)
{
    return hr_kfail(c, NULL, HR_E_NOMEM, "out of memory while decoding");
}

const char *hr_jtype_str(yyjson_val *v)
{
    switch (yyjson_get_type(v)) {
    case YYJSON_TYPE_NULL: return "null";
    case YYJSON_TYPE_BOOL: return "a boolean";
    case YYJSON_TYPE_NUM:
    case YYJSON_TYPE_RAW: return "a number";
    case YYJSON_TYPE_STR: return "a string";
    case YYJSON_TYPE_ARR: return "an array";
    case YYJSON_TYPE_OBJ: return "an object";
    default: return "nothing";
    }
}

yyjson_val *hr_jget(yyjson_val *obj, const char *key)
{
    return yyjson_is_obj(obj) ? yyjson_obj_get(obj, key) : NULL;
}

static hr_status wrong_type(const hr_kctx *c, const hr_jpath *p, const char *want, yyjson_val *v)
{
    return hr_kfail(c, p, HR_E_INPUT, "expected %s, got %s", want, hr_jtype_str(v));
}

hr_status hr_jobj(const hr_kctx *c, const hr_jpath *p, yyjson_val *v, yyjson_val **out)
{
    *out = NULL;
    if (!v || yyjson_is_null(v))
        return HR_OK;
    if (!yyjson_is_obj(v))
        return wrong_type(c, p, "an object", v);
    *out = v;
    return HR_OK;
}

hr_status hr_jarr(const hr_kctx *c, const hr_jpath *p, yyjson_val *v, yyjson_val **out)
{
    *out = NULL;
    if (!v || yyjson_is_null(v))
        return HR_OK;
    if (!yyjson_is_arr(v))
        return wrong_type(c, p, "an array", v);
    *out = v;
    return HR_OK;
}

hr_status hr_jstr_ref(const hr_kctx *c, const hr_jpath *p, yyjson_val *v, const char **out,
                      size_t *len)
{
    *out = NULL;
    *len = 0;
    if (!v || yyjson_is_null(v))
        return HR_OK;
    if (!yyjson_is_str(v))
        return wrong_type(c, p, "a string", v);
    *out = yyjson_get_str(v);
    *len = yyjson_get_len(v);
    return HR_OK;
}

hr_status hr_jstr(const hr_kctx *c, const hr_jpath *p, yyjson_val *v, const char *dflt,
                  const char **out)
{
    const char *s;
    size_t len;
    hr_status st = hr_jstr_ref(c, p, v, &s, &len);
    if (st)
        return st;
    if (!s) {
        *out = dflt;
        return HR_OK;
    }
    char *copy = hr_arena_strndup(c->a, s, len);
    if (!copy)
        return hr_knomem(c);
    *out = copy;
    return HR_OK;
}

hr_status hr_jbool(const hr_kctx *c, const hr_jpath *p, yyjson_val *v, bool *out)
{
    if (!v || yyjson_is_null(v))
        return HR_OK;
    if (!yyjson_is_bool(v))
        return wrong_type(c, p, "a boolean", v);
    *out = yyjson_get_bool(v);
    return HR_OK;
}

/* The text of a number: raw text as written, or integers printed. */
static bool number_text(yyjson_val *v, char *tmp, size_t cap, const char **s, size_t *len)
{
    if (yyjson_is_raw(v)) {
        *s = yyjson_get_raw(v);
        *len = yyjson_get_len(v);
        return true;
    }
    int n;
    if (yyjson_is_uint(v))
        n = snprintf(tmp, cap, "%" PRIu64, yyjson_get_uint(v));
    else if (yyjson_is_sint(v))
        n = snprintf(tmp, cap, "%" PRId64, yyjson_get_sint(v));
    else
        return false; /* reals: binary floating point cannot hold "0.1" */
    if (n < 0 || (size_t)n >= cap)
        return false;
    *s = tmp;
    *len = (size_t)n;
    return true;
}

hr_status hr_jint(const hr_kctx *c, const hr_jpath *p, yyjson_val *v, int64_t lo, int64_t hi,
                  int64_t *out)
{
    if (!v || yyjson_is_null(v))
        return HR_OK;
    char tmp[32], quoted[48];
    const char *s;
    size_t len;
    if (!(yyjson_is_num(v) || yyjson_is_raw(v)))
        return wrong_type(c, p, "an integer", v);
    if (!number_text(v, tmp, sizeof tmp, &s, &len))
        return hr_kfail(c, p, HR_E_INPUT, "expected an integer, got %g", yyjson_get_num(v));
    /* strtoll needs a terminator; raw text points into the document. */
    if (len == 0 || len >= sizeof tmp)
        return hr_kfail(c, p, HR_E_INPUT, "integer out of range: %s",
                        hr_err_quote(quoted, sizeof quoted, s, len, 24));
    char num[32];
    memcpy(num, s, len);
    num[len] = '\0';
    char *end;
    errno = 0;
    long long x = strtoll(num, &end, 10);
    if (*end)
        return hr_kfail(c, p, HR_E_INPUT, "expected an integer, got %s",
                        hr_err_quote(quoted, sizeof quoted, s, len, 24));
    if (errno == ERANGE || x < lo || x > hi)
        return hr_kfail(c, p, HR_E_INPUT, "%s is out of range [%" PRId64 ", %" PRId64 "]",
                        hr_err_quote(quoted, sizeof quoted, s, len, 24), lo, hi);
    *out = (int64_t)x;
    return HR_OK;
}

/* A quantity's text: a string, or a number's own digits. *s NULL: absent. */
static hr_status quantity_text(const hr_kctx *c, const hr_jpath *p, yyjson_val *v, char *tmp,
                               size_t cap, const char **s, size_t *len)
{
    *s = NULL;
    *len = 0;
    if (!v || yyjson_is_null(v))
        return HR_OK;
    if (yyjson_is_str(v)) {
        *s = yyjson_get_str(v);
        *len = yyjson_get_len(v);
        return HR_OK;
    }
    if (yyjson_is_num(v) || yyjson_is_raw(v)) {
        if (!number_text(v, tmp, cap, s, len))
            return hr_kfail(c, p, HR_E_INPUT, "expected a quantity string, got the number %g",
                            yyjson_get_num(v));
        return HR_OK;
    }
    return wrong_type(c, p, "a quantity string", v);
}

hr_status hr_jquantity(const hr_kctx *c, const hr_jpath *p, yyjson_val *v, hr_qkind kind,
                       int64_t *out)
{
    char tmp[32];
    const char *s;
    size_t len;
    *out = HR_NONE;
    hr_status st = quantity_text(c, p, v, tmp, sizeof tmp, &s, &len);
    return st || !s ? st : hr_kquantity(c, p, s, len, kind, out);
}

hr_status hr_jquantity_soft(const hr_kctx *c, const hr_jpath *p, yyjson_val *v, hr_qkind kind,
                            int64_t *out)
{
    char tmp[32];
    const char *s;
    size_t len;
    *out = HR_NONE;
    hr_status st = quantity_text(c, p, v, tmp, sizeof tmp, &s, &len);
    if (st == HR_E_INPUT) { /* a number we cannot print is one that does not read */
        hr_err_clear(c->err);
        *out = HR_UNBOUNDED;
        return HR_OK;
    }
    return st || !s ? st : hr_kquantity_soft(s, len, kind, out);
}

static hr_qerr parse_kind(const char *s, size_t len, hr_qkind kind, int64_t *x)
{
    hr_qerr e;
    switch (kind) {
    case HR_QK_CPU: return hr_cpu_parse_milli(s, len, x);
    case HR_QK_MEM: return hr_mem_parse_bytes(s, len, x);
    default:
        e = hr_quantity_parse(s, len, -3, x);
        return e == HR_Q_OK && *x < 0 ? HR_Q_NEGATIVE : e;
    }
}

hr_status hr_kquantity(const hr_kctx *c, const hr_jpath *p, const char *s, size_t len,
                       hr_qkind kind, int64_t *out)
{
    char quoted[48];
    int64_t x = 0;
    *out = HR_NONE;
    hr_qerr e = parse_kind(s, len, kind, &x);
    if (e != HR_Q_OK)
        return hr_kfail(c, p, HR_E_INPUT, "%s \"%s\"", hr_qerr_str(e),
                        hr_err_quote(quoted, sizeof quoted, s, len, 32));
    *out = x;
    return HR_OK;
}

hr_status hr_kquantity_soft(const char *s, size_t len, hr_qkind kind, int64_t *out)
{
    int64_t x = 0;
    *out = parse_kind(s, len, kind, &x) == HR_Q_OK ? x : HR_UNBOUNDED;
    return HR_OK;
}

hr_status hr_decode_labels(const hr_kctx *c, const hr_jpath *p, yyjson_val *v, hr_labels *out)
{
    out->kv = NULL;
    out->n = 0;
    yyjson_val *obj;
    hr_status st = hr_jobj(c, p, v, &obj);
    if (st || !obj)
        return st;
    size_t n = yyjson_obj_size(obj);
    if (n == 0)
        return HR_OK;
    if (n > UINT32_MAX / 2)
        return hr_kfail(c, p, HR_E_INPUT, "too many entries");
    const char **kv = hr_arena_alloc(c->a, 2 * n * sizeof *kv);
    if (!kv)
        return hr_knomem(c);
    yyjson_obj_iter it = yyjson_obj_iter_with(obj);
    yyjson_val *key;
    size_t i = 0;
    while ((key = yyjson_obj_iter_next(&it))) {
        yyjson_val *val = yyjson_obj_iter_get_val(key);
        hr_jpath vp = HR_JP_KEY(p, yyjson_get_str(key));
        if (!yyjson_is_str(val))
            return wrong_type(c, &vp, "a string", val);
        kv[2 * i] = hr_arena_strndup(c->a, yyjson_get_str(key), yyjson_get_len(key));
        kv[2 * i + 1] = hr_arena_strndup(c->a, yyjson_get_str(val), yyjson_get_len(val));
        if (!kv[2 * i] || !kv[2 * i + 1])
            return hr_knomem(c);
        i++;
    }
    out->kv = kv;
    out->n = (uint32_t)i;
    return HR_OK;
}

static hr_status decode_meta(hr_kctx *c, yyjson_val *obj, bool namespaced, bool named, hr_kmeta *m,
                             yyjson_val **meta_out)
{
    m->ns = "";
    m->name = "";
    m->uid = "";
    m->resource_version = "";
    m->labels = (hr_labels){NULL, 0};
    *meta_out = NULL;
    if (!yyjson_is_obj(obj))
        return hr_kfail(c, NULL, HR_E_INPUT, "expected an object, got %s", hr_jtype_str(obj));
    hr_jpath pm = HR_JP_KEY(NULL, "metadata");
    yyjson_val *meta;
    hr_status st = hr_jobj(c, &pm, hr_jget(obj, "metadata"), &meta);
    if (st)
        return st;
    if (!meta)
        return hr_kfail(c, &pm, HR_E_INPUT, "missing");
    hr_jpath pns = HR_JP_KEY(&pm, "namespace");
    hr_jpath pname = HR_JP_KEY(&pm, "name");
    if ((st = hr_jstr(c, &pns, hr_jget(meta, "namespace"), "", &m->ns)))
        return st;
    c->ns = m->ns;
    const char *name;
    if ((st = hr_jstr(c, &pname, hr_jget(meta, "name"), NULL, &name)))
        return st;
    if (named && (!name || !name[0]))
        return hr_kfail(c, &pname, HR_E_INPUT, "missing");
    if (name && name[0]) {
        m->name = name;
        c->name = name;
    }
    if (namespaced && !m->ns[0])
        return hr_kfail(c, &pns, HR_E_INPUT, "missing");
    hr_jpath puid = HR_JP_KEY(&pm, "uid");
    hr_jpath prv = HR_JP_KEY(&pm, "resourceVersion");
    hr_jpath plab = HR_JP_KEY(&pm, "labels");
    if ((st = hr_jstr(c, &puid, hr_jget(meta, "uid"), "", &m->uid)) ||
        (st = hr_jstr(c, &prv, hr_jget(meta, "resourceVersion"), "", &m->resource_version)) ||
        (st = hr_decode_labels(c, &plab, hr_jget(meta, "labels"), &m->labels)))
        return st;
    *meta_out = meta;
    return HR_OK;
}

hr_status hr_decode_meta(hr_kctx *c, yyjson_val *obj, bool namespaced, hr_kmeta *m,
                         yyjson_val **meta_out)
{
    return decode_meta(c, obj, namespaced, true, m, meta_out);
}

hr_status hr_decode_meta_unnamed(hr_kctx *c, yyjson_val *obj, hr_kmeta *m, yyjson_val **meta_out)
{
    return decode_meta(c, obj, false, false, m, meta_out);
}

bool hr_decode_key(yyjson_val *obj, hr_arena *a, const char **ns, const char **name)
{
    yyjson_val *m = yyjson_obj_get(obj, "metadata");
    yyjson_val *n = yyjson_obj_get(m, "name");
    yyjson_val *x = yyjson_obj_get(m, "namespace");
    if (!yyjson_is_str(n) || !yyjson_get_len(n))
        return false;
    *name = hr_arena_strndup(a, yyjson_get_str(n), yyjson_get_len(n));
    *ns = yyjson_is_str(x) ? hr_arena_strndup(a, yyjson_get_str(x), yyjson_get_len(x)) : "";
    return *name && *ns;
}

int64_t hr_decode_generation(yyjson_val *obj, int64_t dflt)
{
    yyjson_val *g = yyjson_obj_get(yyjson_obj_get(obj, "metadata"), "generation");
    return yyjson_is_int(g) ? yyjson_get_sint(g) : dflt;
}

hr_status hr_jarr_items(const hr_kctx *c, const hr_jpath *p, yyjson_val *v, size_t max,
                        const char *what, size_t size, yyjson_val **arr, void **items)
{
    *items = NULL;
    hr_status st = hr_jarr(c, p, v, arr);
    if (st || !*arr)
        return st;
    size_t n = yyjson_arr_size(*arr);
    if (n > max)
        return hr_kfail(c, p, HR_E_INPUT, "%zu %s, at most %zu", n, what, max);
    *items = hr_arena_calloc(c->a, n ? n : 1, size);
    return *items ? HR_OK : hr_knomem(c);
}

hr_status hr_jstr_array(const hr_kctx *c, const hr_jpath *p, yyjson_val *v, const char *const **out,
                        uint32_t *n_out, bool *present)
{
    *out = NULL;
    *n_out = 0;
    yyjson_val *arr;
    void *items;
    hr_status st =
        hr_jarr_items(c, p, v, UINT32_MAX, "strings", sizeof(const char *), &arr, &items);
    if (present)
        *present = arr != NULL;
    if (st || !arr)
        return st;
    const char **list = items;
    size_t n = yyjson_arr_size(arr), i, max;
    yyjson_val *e;
    yyjson_arr_foreach(arr, i, max, e)
    {
        hr_jpath pe = HR_JP_IDX(p, i);
        if (!yyjson_is_str(e))
            return wrong_type(c, &pe, "a string", e);
        if ((st = hr_jstr(c, &pe, e, "", &list[i])))
            return st;
    }
    *out = list;
    *n_out = (uint32_t)n;
    return HR_OK;
}

hr_status hr_decode_selector_at(const hr_kctx *c, const hr_jpath *p, yyjson_val *sel,
                                hr_selector *out)
{
    *out = (hr_selector){false, NULL, 0};
    yyjson_val *obj;
    hr_status st = hr_jobj(c, p, sel, &obj);
    if (st || !obj)
        return st;
    hr_jpath pml = HR_JP_KEY(p, "matchLabels");
    hr_jpath pme = HR_JP_KEY(p, "matchExpressions");
    yyjson_val *ml, *me;
    if ((st = hr_jobj(c, &pml, hr_jget(obj, "matchLabels"), &ml)) ||
        (st = hr_jarr(c, &pme, hr_jget(obj, "matchExpressions"), &me)))
        return st;
    size_t n_ml = ml ? yyjson_obj_size(ml) : 0;
    size_t n_me = me ? yyjson_arr_size(me) : 0;
    if (n_ml + n_me > UINT32_MAX / 2)
        return hr_kfail(c, p, HR_E_INPUT, "too many requirements");
    size_t n = n_ml + n_me;
    hr_requirement *req = hr_arena_calloc(c->a, n ? n : 1, sizeof *req);
    if (!req)
        return hr_knomem(c);
    size_t k = 0;
    if (ml) {
        yyjson_obj_iter it = yyjson_obj_iter_with(ml);
        yyjson_val *key;
        while ((key = yyjson_obj_iter_next(&it))) {
            yyjson_val *val = yyjson_obj_iter_get_val(key);
            hr_jpath pv = HR_JP_KEY(&pml, yyjson_get_str(key));
            if (!yyjson_is_str(val))
                return wrong_type(c, &pv, "a string", val);
            const char **one = hr_arena_alloc(c->a, sizeof *one);
            char *kc = hr_arena_strndup(c->a, yyjson_get_str(key), yyjson_get_len(key));
            if (!one || !kc)
                return hr_knomem(c);
            if ((st = hr_jstr(c, &pv, val, "", one)))
                return st;
            req[k++] = (hr_requirement){kc, HR_SEL_IN, one, 1};
        }
    }
    if (me) {
        size_t i, max;
        yyjson_val *e;
        yyjson_arr_foreach(me, i, max, e)
        {
            hr_jpath pe = HR_JP_IDX(&pme, i);
            if (!yyjson_is_obj(e))
                return wrong_type(c, &pe, "an object", e);
            hr_jpath pk = HR_JP_KEY(&pe, "key");
            hr_jpath po = HR_JP_KEY(&pe, "operator");
            hr_jpath pv = HR_JP_KEY(&pe, "values");
            hr_requirement *r = &req[k];
            const char *op;
            size_t oplen;
            if ((st = hr_jstr(c, &pk, hr_jget(e, "key"), NULL, &r->key)) ||
                (st = hr_jstr_ref(c, &po, hr_jget(e, "operator"), &op, &oplen)))
                return st;
            if (!r->key)
                return hr_kfail(c, &pk, HR_E_INPUT, "missing");
            if (!op)
                return hr_kfail(c, &po, HR_E_INPUT, "missing");
            char quoted[48];
            if (yyjson_equals_str(hr_jget(e, "operator"), "In"))
                r->op = HR_SEL_IN;
            else if (yyjson_equals_str(hr_jget(e, "operator"), "NotIn"))
                r->op = HR_SEL_NOT_IN;
            else if (yyjson_equals_str(hr_jget(e, "operator"), "Exists"))
                r->op = HR_SEL_EXISTS;
            else if (yyjson_equals_str(hr_jget(e, "operator"), "DoesNotExist"))
                r->op = HR_SEL_DOES_NOT_EXIST;
            else
                return hr_kfail(c, &po, HR_E_INPUT,
                                "unknown operator \"%s\" (want In, NotIn, "
                                "Exists or DoesNotExist)",
                                hr_err_quote(quoted, sizeof quoted, op, oplen, 24));
            if ((st = hr_jstr_array(c, &pv, hr_jget(e, "values"), &r->values, &r->n_values, NULL)))
                return st;
            if ((r->op == HR_SEL_IN || r->op == HR_SEL_NOT_IN) && r->n_values == 0)
                return hr_kfail(c, &pv, HR_E_INPUT, "must not be empty for operator %s",
                                r->op == HR_SEL_IN ? "In" : "NotIn");
            k++;
        }
    }
    *out = (hr_selector){true, req, (uint32_t)k};
    return HR_OK;
}

hr_status hr_decode_selector(yyjson_val *sel, hr_arena *a, const char *what, hr_selector *out,
                             hr_err *err)
{
    hr_kctx c = {a, err, "selector", NULL, what ? what : "selector"};
    return hr_decode_selector_at(&c, NULL, sel, out);
}
