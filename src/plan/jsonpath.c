/*
 * jsonpath.c — kubectl's JSONPath: a parser into actions and chains of
 * steps, and an evaluator over yyjson values (jsonpath.h).
 *
 * The parser follows client-go's jsonpath parser rule by rule (what ends a
 * field name, how a filter and an array subscript are scanned, that
 * ['a.b'] is the chain .a.b, that a quote preceded by a backslash does not
 * close a string), so odd templates fail or succeed as they do in kubectl.
 * Literals ("text", 1, 2.5, true) become values of a small document of their
 * own, so every step works on yyjson values alone. Everything a template
 * owns lives in one arena, freed by hr_jsonpath_free.
 */
#include "plan/jsonpath.h"

#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "plan/jpvalue.h"
#include "util/arena.h"

typedef enum step_kind {
    ST_FIELD,  /* .name */
    ST_WILD,   /* .* */
    ST_RECUR,  /* .. */
    ST_ARRAY,  /* [a:b:c] */
    ST_UNION,  /* [x,y]: each part a chain */
    ST_FILTER, /* [?(left op right)] */
    ST_LIT,    /* "text", 1, 2.5, true: the value itself, whatever the input */
    ST_RANGE,  /* the identifier range */
    ST_END,    /* the identifier end */
    ST_IDENT,  /* any other identifier: an error when evaluated, as in kubectl */
} step_kind;

typedef struct chain chain;

typedef struct slice {
    long v[3];
    bool known[3], derived;
} slice;

typedef struct step {
    step_kind kind;
    const char *name; /* FIELD */
    slice sl;         /* ARRAY */
    chain *parts;     /* UNION: n_parts chains; FILTER: [0] left, [1] right */
    size_t n_parts;
    char op[3];      /* FILTER: "" exists, "==", "!=", "<", ">", "<=", ">=" */
    yyjson_val *lit; /* LIT */
} step;

struct chain {
    step *s;
    size_t n, cap;
};

typedef enum act_kind { A_TEXT, A_PATH } act_kind;

typedef struct action {
    act_kind kind;
    const char *text; /* TEXT */
    size_t len;
    chain c; /* PATH */
} action;

typedef struct lit_doc {
    yyjson_doc *doc;
    struct lit_doc *next;
} lit_doc;

struct hr_jsonpath {
    hr_arena arena;
    char *tmpl;
    action *a;
    size_t n, cap;
    lit_doc *docs;
};

/* ---- parsing ---- */

typedef struct parser {
    hr_jsonpath *jp;
    const char *s; /* the text being parsed (the template, or a piece of it) */
    size_t len, pos;
    char why[160];
} parser;

static bool fail(parser *p, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static bool fail(parser *p, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(p->why, sizeof p->why, fmt, ap);
    va_end(ap);
    return false;
}

static bool grow(hr_arena *ar, void **arr, size_t *cap, size_t n, size_t size)
{
    if (n < *cap)
        return true;
    size_t nc = *cap ? *cap * 2 : 8;
    void *na = hr_arena_calloc(ar, nc, size);
    if (!na)
        return false;
    if (*arr)
        memcpy(na, *arr, n * size);
    *arr = na;
    *cap = nc;
    return true;
}

static step *add_step(parser *p, chain *c, step_kind k)
{
    void *arr = c->s;
    if (!grow(&p->jp->arena, &arr, &c->cap, c->n, sizeof *c->s)) {
        fail(p, "%s", "out of memory");
        return NULL;
    }
    c->s = arr;
    step *st = &c->s[c->n++];
    memset(st, 0, sizeof *st);
    st->kind = k;
    return st;
}

static bool is_space(char c)
{
    return c == ' ' || c == '\t' || c == '\r' || c == '\n';
}

/* client-go's isTerminator: what ends a field name. */
static bool is_term(char c)
{
    return c == '\0' || is_space(c) || strchr(".,[]$@{}", c) != NULL;
}

static bool is_alnum(char c)
{
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_';
}

static char peek(const parser *p, size_t ahead)
{
    return p->pos + ahead < p->len ? p->s[p->pos + ahead] : '\0';
}

/* A literal as a value of a document of its own. */
static bool add_lit(parser *p, chain *c, const char *json, size_t len)
{
    lit_doc *ld = hr_arena_calloc(&p->jp->arena, 1, sizeof *ld);
    yyjson_doc *d = ld ? yyjson_read(json, len, YYJSON_READ_NUMBER_AS_RAW) : NULL;
    step *st = d ? add_step(p, c, ST_LIT) : NULL;
    if (!st) {
        yyjson_doc_free(d);
        return fail(p, "%s", "out of memory");
    }
    ld->doc = d;
    ld->next = p->jp->docs;
    p->jp->docs = ld;
    st->lit = yyjson_doc_get_root(d);
    return true;
}

static bool parse_chain_text(hr_jsonpath *jp, const char *text, size_t len, chain *c, char *why,
                             size_t why_cap);

/* A quoted string's value, Go's strconv.Unquote escapes (single quotes as
 * double), as a JSON string literal. */
static bool parse_quote(parser *p, chain *c)
{
    char q = p->s[p->pos];
    size_t start = p->pos++;
    for (;;) {
        char ch = peek(p, 0);
        if (ch == '\0' || ch == '\n')
            return fail(p, "%s", "unterminated quoted string");
        p->pos++;
        if (ch == q && p->s[p->pos - 2] != '\\')
            break;
    }
    hr_buf b;
    hr_buf_init(&b, 0);
    hr_buf_putc(&b, '"');
    for (size_t i = start + 1; i + 1 < p->pos; i++) {
        char ch = p->s[i];
        if (ch == '"' && q == '\'') {
            hr_buf_puts(&b, "\\\"");
        } else if (ch == '\\' && i + 2 < p->pos) {
            char e = p->s[++i];
            switch (e) {
            case 'n': hr_buf_puts(&b, "\\n"); break;
            case 't': hr_buf_puts(&b, "\\t"); break;
            case 'r': hr_buf_puts(&b, "\\r"); break;
            case 'b': hr_buf_puts(&b, "\\b"); break;
            case 'f': hr_buf_puts(&b, "\\f"); break;
            case 'a': hr_buf_puts(&b, "\\u0007"); break;
            case 'v': hr_buf_puts(&b, "\\u000b"); break;
            case '\\': hr_buf_puts(&b, "\\\\"); break;
            case '"': hr_buf_puts(&b, "\\\""); break;
            case '\'': hr_buf_putc(&b, '\''); break;
            case 'u': hr_buf_puts(&b, "\\u"); break; /* the four hex digits follow as they are */
            default: {
                char one[2] = {e, 0};
                hr_buf_free(&b);
                return fail(p, "unquote string: invalid escape \\%s", one);
            }
            }
        } else if ((unsigned char)ch < 0x20) {
            hr_buf_printf(&b, "\\u%04x", (unsigned)(unsigned char)ch);
        } else {
            hr_buf_putc(&b, ch);
        }
    }
    hr_buf_putc(&b, '"');
    bool ok = !hr_buf_failed(&b) ? add_lit(p, c, hr_buf_str(&b), b.len) : fail(p, "%s", "oom");
    hr_buf_free(&b);
    if (ok && c->s[c->n - 1].lit && !yyjson_is_str(c->s[c->n - 1].lit))
        return fail(p, "%s", "unquote string: invalid syntax");
    return ok;
}

/* .name (p->pos at the dot): a field, .* a wildcard; backslashes dropped. */
static bool parse_field(parser *p, chain *c)
{
    p->pos++; /* the dot */
    size_t start = p->pos;
    while (p->pos < p->len) {
        char ch = p->s[p->pos];
        if (ch == '\\') {
            p->pos += p->pos + 1 < p->len ? 2 : 1;
            continue;
        }
        if (is_term(ch))
            break;
        p->pos++;
    }
    size_t n = p->pos - start;
    if (n == 1 && p->s[start] == '*')
        return add_step(p, c, ST_WILD) != NULL;
    if (n == 0)
        return true; /* a lone dot: the current value */
    char *name = hr_arena_alloc(&p->jp->arena, n + 1);
    if (!name)
        return fail(p, "%s", "out of memory");
    size_t k = 0;
    for (size_t i = start; i < p->pos; i++)
        if (p->s[i] != '\\')
            name[k++] = p->s[i];
    name[k] = '\0';
    step *st = add_step(p, c, ST_FIELD);
    if (st)
        st->name = name;
    return st != NULL;
}

/* client-go's slice pattern ^(-?\d*)(:-?\d*)?(:-?\d*)?$ into params. */
static bool parse_slice(const char *t, size_t n, slice *sl)
{
    memset(sl, 0, sizeof *sl);
    size_t i = 0;
    for (int part = 0; part < 3; part++) {
        if (part > 0) {
            if (i == n)
                break;
            if (t[i] != ':')
                return false;
            i++;
        }
        size_t s = i;
        if (i < n && t[i] == '-')
            i++;
        size_t d = i;
        while (i < n && t[i] >= '0' && t[i] <= '9')
            i++;
        if (i == d && i != s)
            return false; /* "-" alone */
        if (i > s) {
            /* An index of more than 18 digits is refused, as Go's Atoi refuses
             * one past int64; 18 digits also keep N + 1 (below) from overflowing. */
            if (i - d > 18)
                return false;
            sl->known[part] = true;
            sl->v[part] = strtol(t + s, NULL, 10);
        } else if (part == 0 && (i == n || t[i] != ':')) {
            /* "" : never here ("[]" is refused before) */
        }
        if (part == 0 && i == n) { /* [N]: N to N+1 */
            sl->known[1] = true;
            sl->v[1] = sl->v[0] + 1;
            sl->derived = true;
            return true;
        }
    }
    return i == n;
}

/* [...] (p->pos at the bracket): a filter, a union, ['key'], a slice. */
static bool parse_array(parser *p, chain *c)
{
    if (peek(p, 1) == '?' && peek(p, 2) == '(') {
        p->pos += 3;
        size_t start = p->pos;
        bool begin = false, end = false;
        char pair = 0;
        for (;;) {
            char ch = peek(p, 0);
            if (ch == '\0' || ch == '\n')
                return fail(p, "%s", "unterminated filter");
            p->pos++;
            if (ch == '"' || ch == '\'') {
                if (!begin) {
                    begin = true;
                    pair = ch;
                    continue;
                }
                if (p->s[p->pos - 2] != '\\' && ch == pair)
                    end = true;
            } else if (ch == ')' && begin == end) {
                break;
            }
        }
        if (peek(p, 0) != ']')
            return fail(p, "%s", "unclosed array expect ]");
        p->pos++;
        const char *t = p->s + start;
        size_t n = p->pos - 2 - start; /* without ")]" */
        size_t l = 0;
        while (l < n && !strchr("!<>=", t[l]))
            l++;
        size_t o = l;
        while (o < n && strchr("!<>=", t[o]))
            o++;
        step *st = add_step(p, c, ST_FILTER);
        chain *parts = st ? hr_arena_calloc(&p->jp->arena, 2, sizeof *parts) : NULL;
        if (!parts)
            return fail(p, "%s", "out of memory");
        st->parts = parts;
        st->n_parts = 2;
        if (l == 0 || l == n || o == n) /* no operator (or nothing around it): exists */
            return parse_chain_text(p->jp, t, n, &parts[0], p->why, sizeof p->why);
        if (o - l > 2)
            return fail(p, "unrecognized filter operator %s", "");
        memcpy(st->op, t + l, o - l);
        st->op[o - l] = '\0';
        static const char *const ops[] = {"==", "!=", "<", ">", "<=", ">="};
        size_t k = 0;
        while (k < sizeof ops / sizeof ops[0] && strcmp(st->op, ops[k]) != 0)
            k++;
        if (k == sizeof ops / sizeof ops[0])
            return fail(p, "unrecognized filter operator %s", st->op);
        return parse_chain_text(p->jp, t, l, &parts[0], p->why, sizeof p->why) &&
               parse_chain_text(p->jp, t + o, n - o, &parts[1], p->why, sizeof p->why);
    }
    size_t start = ++p->pos;
    while (peek(p, 0) != ']') {
        if (peek(p, 0) == '\0' || peek(p, 0) == '\n')
            return fail(p, "%s", "unterminated array");
        p->pos++;
    }
    const char *t = p->s + start;
    size_t n = p->pos++ - start;
    if (n == 1 && t[0] == '*')
        t = ":";
    if (memchr(t, ',', n)) { /* a union: each part [part] */
        step *st = add_step(p, c, ST_UNION);
        size_t parts = 1;
        for (size_t i = 0; i < n; i++)
            parts += t[i] == ',';
        st = st ? st : NULL;
        chain *pc = st ? hr_arena_calloc(&p->jp->arena, parts, sizeof *pc) : NULL;
        if (!pc)
            return fail(p, "%s", "out of memory");
        st->parts = pc;
        st->n_parts = parts;
        size_t s = 0, k = 0;
        for (size_t i = 0; i <= n; i++) {
            if (i < n && t[i] != ',')
                continue;
            size_t a = s, b = i;
            while (a < b && t[a] == ' ')
                a++;
            while (b > a && t[b - 1] == ' ')
                b--;
            char buf[160];
            int len = snprintf(buf, sizeof buf, "[%.*s]", (int)(b - a), t + a);
            if (len < 0 || (size_t)len >= sizeof buf)
                return fail(p, "%s", "union part too long");
            if (!parse_chain_text(p->jp, buf, (size_t)len, &pc[k++], p->why, sizeof p->why))
                return false;
            s = i + 1;
        }
        return true;
    }
    if (n >= 2 && t[0] == '\'' && t[n - 1] == '\'' && !memchr(t + 1, '\'', n - 2)) {
        char buf[160]; /* ['a.b'] is .a.b */
        int len = snprintf(buf, sizeof buf, ".%.*s", (int)(n - 2), t + 1);
        if (len < 0 || (size_t)len >= sizeof buf)
            return fail(p, "%s", "key too long");
        return parse_chain_text(p->jp, buf, (size_t)len, c, p->why, sizeof p->why);
    }
    step *st = add_step(p, c, ST_ARRAY);
    if (!st)
        return false;
    if (n == 0 || !parse_slice(t, n, &st->sl)) {
        char idx[80];
        snprintf(idx, sizeof idx, "%.*s", (int)(n < 79 ? n : 79), t);
        return fail(p, "invalid array index %s", idx);
    }
    return true;
}

/* One action's chain, up to '}' (or the end of a piece). */
static bool parse_inside(parser *p, chain *c, bool braced)
{
    for (;;) {
        char ch = peek(p, 0);
        if (braced && ch == '}') {
            p->pos++;
            return true;
        }
        if (ch == '\0' && p->pos >= p->len)
            return braced ? fail(p, "%s", "unclosed action") : true;
        bool ok = true;
        if (ch == '\n' && braced) {
            return fail(p, "%s", "unclosed action");
        } else if (is_space(ch) || ch == '@' || ch == '$') {
            p->pos++;
        } else if (ch == '[') {
            ok = parse_array(p, c);
        } else if (ch == '"' || ch == '\'') {
            ok = parse_quote(p, c);
        } else if (ch == '.' && peek(p, 1) == '.') {
            p->pos += 2;
            ok = add_step(p, c, ST_RECUR) != NULL;
            if (ok && !is_term(peek(p, 0))) {
                p->pos--; /* ..name: the field after it */
                ok = parse_field(p, c);
            }
        } else if (ch == '.') {
            ok = parse_field(p, c);
        } else if (ch == '+' || ch == '-' || (ch >= '0' && ch <= '9')) {
            size_t s = p->pos++;
            while (strchr("0123456789.eE+-", peek(p, 0)) && peek(p, 0))
                p->pos++;
            const char *t = p->s + s + (p->s[s] == '+');
            ok = add_lit(p, c, t, (size_t)(p->s + p->pos - t));
            if (ok && !yyjson_is_raw(c->s[c->n - 1].lit)) {
                char num[64];
                snprintf(num, sizeof num, "%.*s", (int)(p->pos - s), p->s + s);
                return fail(p, "cannot parse number %s", num);
            }
        } else if (is_alnum(ch)) {
            size_t s = p->pos;
            while (is_alnum(peek(p, 0)))
                p->pos++;
            size_t n = p->pos - s;
            if (n == 5 && !memcmp(p->s + s, "range", 5))
                ok = add_step(p, c, ST_RANGE) != NULL;
            else if (n == 3 && !memcmp(p->s + s, "end", 3))
                ok = add_step(p, c, ST_END) != NULL;
            else if ((n == 4 && !memcmp(p->s + s, "true", 4)) ||
                     (n == 5 && !memcmp(p->s + s, "false", 5)))
                ok = add_lit(p, c, p->s + s, n);
            else {
                step *st = add_step(p, c, ST_IDENT);
                st = st ? st : NULL;
                char *id = st ? hr_arena_strndup(&p->jp->arena, p->s + s, n) : NULL;
                if (!id)
                    return fail(p, "%s", "out of memory");
                st->name = id;
            }
        } else {
            char u[48];
            unsigned char uc = (unsigned char)ch;
            if (uc < 0x80)
                snprintf(u, sizeof u, "U+%04X '%c'", uc, ch);
            else
                snprintf(u, sizeof u, "U+%04X", uc);
            return fail(p, "unrecognized character in action: %s", u);
        }
        if (!ok)
            return false;
    }
}

static bool parse_chain_text(hr_jsonpath *jp, const char *text, size_t len, chain *c, char *why,
                             size_t why_cap)
{
    parser q = {jp, text, len, 0, {0}};
    bool ok = parse_inside(&q, c, false);
    if (!ok)
        snprintf(why, why_cap, "%s", q.why);
    return ok;
}

static action *add_action(parser *p, act_kind k)
{
    void *arr = p->jp->a;
    if (!grow(&p->jp->arena, &arr, &p->jp->cap, p->jp->n, sizeof *p->jp->a))
        return NULL;
    p->jp->a = arr;
    action *a = &p->jp->a[p->jp->n++];
    memset(a, 0, sizeof *a);
    a->kind = k;
    return a;
}

void hr_jsonpath_free(hr_jsonpath *jp)
{
    if (!jp)
        return;
    for (lit_doc *d = jp->docs; d; d = d->next)
        yyjson_doc_free(d->doc);
    hr_arena_free(&jp->arena);
    free(jp);
}

hr_status hr_jsonpath_parse(const char *tmpl, hr_jsonpath **out, hr_err *err)
{
    *out = NULL;
    hr_jsonpath *jp = calloc(1, sizeof *jp);
    if (!jp)
        return hr_err_set(err, HR_E_NOMEM, "out of memory");
    hr_arena_init(&jp->arena, 4096);
    parser p = {jp, tmpl, strlen(tmpl), 0, {0}};
    bool ok = true;
    while (ok && p.pos < p.len) {
        if (tmpl[p.pos] == '{') {
            p.pos++;
            action *a = add_action(&p, A_PATH);
            ok = a ? parse_inside(&p, &a->c, true) : fail(&p, "%s", "out of memory");
        } else {
            size_t s = p.pos;
            while (p.pos < p.len && tmpl[p.pos] != '{')
                p.pos++;
            action *a = add_action(&p, A_TEXT);
            if (a) {
                a->text = tmpl + s;
                a->len = p.pos - s;
            }
            ok = a ? true : fail(&p, "%s", "out of memory");
        }
    }
    if (ok) {
        jp->tmpl = hr_arena_strdup(&jp->arena, tmpl);
        for (size_t i = 0; i < jp->n; i++) /* the text, into our own copy */
            if (jp->a[i].kind == A_TEXT && jp->tmpl)
                jp->a[i].text = jp->tmpl + (jp->a[i].text - tmpl);
        ok = jp->tmpl != NULL || fail(&p, "%s", "out of memory");
    }
    if (!ok) {
        hr_jsonpath_free(jp);
        return hr_err_set(err, HR_E_INPUT, "error parsing jsonpath %.120s, %s", tmpl, p.why);
    }
    *out = jp;
    return HR_OK;
}

/* ---- evaluation ---- */

/* Values one step's result may hold: a result is a pointer a value, and
 * unions and `..` over repeated values multiply what a template asks for.
 * Over it (16 MiB a vector), the result is refused as if memory had run out. */
#define JP_MAX_VALUES (1u << 21)
#define OVER "out of memory, or a result of more than 2097152 values"

typedef struct vec {
    yyjson_val **v;
    size_t n, cap;
    bool oom; /* a push failed: memory ran out, or the vector is full */
} vec;

static void push(vec *x, yyjson_val *v)
{
    if (x->n >= JP_MAX_VALUES) {
        x->oom = true;
        return;
    }
    if (x->n == x->cap) {
        size_t nc = x->cap ? x->cap * 2 : 16;
        yyjson_val **nv = realloc(x->v, nc * sizeof *nv);
        if (!nv) {
            x->oom = true;
            return;
        }
        x->v = nv;
        x->cap = nc;
    }
    x->v[x->n++] = v;
}

/* Values a template may visit and make before it is refused: nested ranges,
 * unions and `..` multiply, and a template is user input. A field path over
 * every item of a plan costs a few values an item. */
#define JP_BUDGET 10000000u

typedef struct ctx {
    bool allow_missing;
    char why[200];
    size_t budget; /* values left to visit */
} ctx;

static bool efail(ctx *cx, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static bool efail(ctx *cx, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(cx->why, sizeof cx->why, fmt, ap);
    va_end(ap);
    return false;
}

static bool eval_chain(ctx *cx, const chain *c, const vec *in, vec *out);

/* Pays for n values from the budget, or refuses the template. */
static bool spend(ctx *cx, size_t n)
{
    if (n > cx->budget)
        return efail(cx, "the template visits more than %u values", JP_BUDGET);
    cx->budget -= n;
    return true;
}

static int key_cmp(const void *a, const void *b)
{
    yyjson_val *ka = *(yyjson_val *const *)a, *kb = *(yyjson_val *const *)b;
    size_t la = yyjson_get_len(ka), lb = yyjson_get_len(kb);
    int c = memcmp(yyjson_get_str(ka), yyjson_get_str(kb), la < lb ? la : lb);
    return c ? c : (la > lb) - (la < lb);
}

/* An object's or array's children in order (an object's by sorted key),
 * appended to out: an object's keys are sorted in place and then stand for
 * their values (a yyjson value follows its key). */
static void children(yyjson_val *v, vec *out)
{
    size_t i, max, n0 = out->n;
    yyjson_val *k, *x;
    if (yyjson_is_arr(v)) {
        yyjson_arr_foreach(v, i, max, x) push(out, x);
    } else if (yyjson_is_obj(v)) {
        yyjson_obj_foreach(v, i, max, k, x) push(out, k);
        if (out->n - n0 > 1)
            qsort(out->v + n0, out->n - n0, sizeof *out->v, key_cmp);
        for (size_t j = n0; j < out->n; j++)
            out->v[j] = out->v[j] + 1;
    }
}

/* Every container under in's, each before its children, in order: a
 * depth-first walk with its own stack (`..` may run over millions of values,
 * so two vectors serve the whole walk). Each value looked at is paid for: a
 * chain of `..` looks at far more values than it keeps. */
static bool recurse(ctx *cx, const vec *in, vec *out)
{
    vec stack = {0}, kids = {0};
    bool ok = true;
    for (size_t i = 0; ok && i < in->n && !out->oom; i++) {
        stack.n = 0;
        push(&stack, in->v[i]);
        while (ok && stack.n && !out->oom && !stack.oom) {
            yyjson_val *x = stack.v[--stack.n];
            kids.n = 0;
            children(x, &kids);
            ok = spend(cx, kids.n);
            if (ok && kids.n) {
                push(out, x);
                for (size_t k = kids.n; k-- > 0;)
                    push(&stack, kids.v[k]);
            }
        }
        out->oom |= stack.oom || kids.oom;
    }
    free(stack.v);
    free(kids.v);
    return ok;
}

static bool eval_array(ctx *cx, const slice *sp, const vec *in, vec *out)
{
    for (size_t i = 0; i < in->n; i++) {
        yyjson_val *v = in->v[i];
        if (yyjson_is_null(v))
            continue;
        if (!yyjson_is_arr(v))
            return efail(cx, "%s is not array or slice", hr_jpvalue_type(v));
        long len = (long)yyjson_arr_size(v);
        slice s = *sp;
        if (!s.known[0])
            s.v[0] = 0;
        if (s.v[0] < 0)
            s.v[0] += len;
        if (!s.known[1])
            s.v[1] = len;
        if (s.v[1] < 0 || (s.v[1] == 0 && s.derived))
            s.v[1] += len;
        if (s.v[1] == s.v[0])
            return true; /* zero elements asked for: client-go stops here */
        if (s.v[0] >= len || s.v[0] < 0)
            return efail(cx, "array index out of bounds: index %ld, length %ld", s.v[0], len);
        if (s.v[1] > len || s.v[1] < 0)
            return efail(cx, "array index out of bounds: index %ld, length %ld", s.v[1] - 1, len);
        if (s.v[0] > s.v[1])
            return efail(cx, "starting index %ld is greater than ending index %ld", s.v[0], s.v[1]);
        long by = 1;
        if (s.known[2]) {
            if (s.v[2] <= 0)
                return efail(cx, "step must be > 0");
            by = s.v[2];
        }
        for (long k = s.v[0]; k < s.v[1] && !out->oom; k += by)
            push(out, yyjson_arr_get(v, (size_t)k));
    }
    return true;
}

/* Go's text/template comparison of two decoded values. */
static bool compare(ctx *cx, const char *op, yyjson_val *l, yyjson_val *r, bool *pass)
{
    hr_jpnum a = hr_jpnum_of(l), b = hr_jpnum_of(r);
    int c;
    bool eq_only = false;
    if (a.kind && b.kind) {
        if (a.kind != b.kind)
            return efail(cx, "incompatible types for comparison");
        c = a.kind == HR_JPNUM_INT ? (a.i > b.i) - (a.i < b.i) : (a.f > b.f) - (a.f < b.f);
    } else if (yyjson_is_str(l) && yyjson_is_str(r)) {
        size_t la = yyjson_get_len(l), lb = yyjson_get_len(r);
        c = memcmp(yyjson_get_str(l), yyjson_get_str(r), la < lb ? la : lb);
        c = c ? (c > 0) - (c < 0) : (la > lb) - (la < lb);
    } else if (yyjson_is_bool(l) && yyjson_is_bool(r)) {
        c = yyjson_get_bool(l) != yyjson_get_bool(r);
        eq_only = true;
    } else if ((a.kind || yyjson_is_str(l) || yyjson_is_bool(l)) &&
               (b.kind || yyjson_is_str(r) || yyjson_is_bool(r))) {
        return efail(cx, "incompatible types for comparison");
    } else {
        return efail(cx, "invalid type for comparison");
    }
    if (eq_only && op[0] != '=' && op[0] != '!')
        return efail(cx, "invalid type for comparison");
    *pass = !strcmp(op, "==")   ? c == 0
            : !strcmp(op, "!=") ? c != 0
            : !strcmp(op, "<")  ? c < 0
            : !strcmp(op, ">")  ? c > 0
            : !strcmp(op, "<=") ? c <= 0
                                : c >= 0;
    return true;
}

static bool eval_filter(ctx *cx, const step *st, const vec *in, vec *out)
{
    for (size_t i = 0; i < in->n; i++) {
        yyjson_val *v = in->v[i];
        if (!yyjson_is_arr(v)) {
            hr_buf b;
            hr_buf_init(&b, 200);
            hr_jpvalue_gov(v, &b);
            bool r =
                efail(cx, "%.120s is not array or slice and cannot be filtered", hr_buf_str(&b));
            hr_buf_free(&b);
            return r;
        }
        size_t k, max;
        yyjson_val *e;
        yyjson_arr_foreach(v, k, max, e)
        {
            vec one = {&e, 1, 1, false}, l = {0}, r = {0};
            bool ok = eval_chain(cx, &st->parts[0], &one, &l);
            bool keep = false;
            if (!st->op[0]) {
                keep = l.n > 0;
                ok = true;
            } else if (ok && l.n == 1) {
                ok = eval_chain(cx, &st->parts[1], &one, &r);
                if (ok && r.n > 1)
                    ok = efail(cx, "can only compare one element at a time");
                else if (ok && r.n == 1)
                    ok = compare(cx, st->op, l.v[0], r.v[0], &keep);
            } else if (ok && l.n > 1) {
                ok = efail(cx, "can only compare one element at a time");
            }
            free(l.v);
            free(r.v);
            if (!ok)
                return false;
            if (keep)
                push(out, e);
        }
    }
    return true;
}

static bool step_values(ctx *cx, const step *st, const vec *in, vec *out);

/* One step, paid for from the budget by what it reads and what it makes. */
static bool eval_step(ctx *cx, const step *st, const vec *in, vec *out)
{
    if (!spend(cx, in->n + 1))
        return false;
    size_t before = out->n;
    return step_values(cx, st, in, out) && spend(cx, out->n - before);
}

static bool step_values(ctx *cx, const step *st, const vec *in, vec *out)
{
    switch (st->kind) {
    case ST_FIELD:
        if (in->n == 0)
            return true;
        for (size_t i = 0; i < in->n; i++) {
            yyjson_val *x = yyjson_is_obj(in->v[i]) ? yyjson_obj_get(in->v[i], st->name) : NULL;
            if (x)
                push(out, x);
        }
        if (out->n == 0 && !cx->allow_missing)
            return efail(cx, "%.120s is not found", st->name);
        return true;
    case ST_WILD:
        for (size_t i = 0; i < in->n && !out->oom; i++)
            children(in->v[i], out);
        return true;
    case ST_RECUR: return recurse(cx, in, out);
    case ST_ARRAY: return eval_array(cx, &st->sl, in, out);
    case ST_UNION:
        for (size_t k = 0; k < st->n_parts; k++)
            if (!eval_chain(cx, &st->parts[k], in, out))
                return false;
        return true;
    case ST_FILTER: return eval_filter(cx, st, in, out);
    case ST_LIT: push(out, st->lit); return true;
    case ST_IDENT: return efail(cx, "unrecognized identifier %.60s", st->name);
    case ST_RANGE:
    case ST_END:
    default:
        for (size_t i = 0; i < in->n; i++)
            push(out, in->v[i]);
        return true;
    }
}

/* The steps of c, one after another, from in into out. Two vectors take
 * turns as a step's input and result, so a long chain allocates twice. */
static bool eval_chain(ctx *cx, const chain *c, const vec *in, vec *out)
{
    if (c->n == 0) {
        for (size_t i = 0; i < in->n && !out->oom; i++)
            push(out, in->v[i]);
        return !out->oom || efail(cx, "%s", OVER);
    }
    vec turn[2] = {{0}, {0}};
    const vec *src = in;
    vec *dst = &turn[0];
    bool ok = true;
    for (size_t k = 0; ok && k < c->n; k++) {
        dst->n = 0;
        ok = eval_step(cx, &c->s[k], src, dst);
        if (ok && dst->oom)
            ok = efail(cx, "%s", OVER);
        src = dst;
        dst = dst == &turn[0] ? &turn[1] : &turn[0];
    }
    vec *res = (vec *)src;   /* one of turn[] */
    if (ok && out->n == 0) { /* the usual case: the result is the answer, not a copy of it */
        free(out->v);
        *out = *res;
        res->v = NULL;
    } else if (ok) {
        for (size_t i = 0; i < res->n && !out->oom; i++)
            push(out, res->v[i]);
        ok = !out->oom || efail(cx, "%s", OVER);
    }
    free(turn[0].v);
    free(turn[1].v);
    return ok;
}

static bool first_is(const action *a, step_kind k)
{
    return a->kind == A_PATH && a->c.n > 0 && a->c.s[0].kind == k;
}

/* The end that closes the range at i, or n (an unclosed range runs to the
 * end, as in kubectl). */
static size_t range_end(const hr_jsonpath *jp, size_t i, size_t n)
{
    int depth = 0;
    for (size_t k = i + 1; k < n; k++) {
        if (first_is(&jp->a[k], ST_RANGE))
            depth++;
        else if (first_is(&jp->a[k], ST_END) && depth-- == 0)
            return k;
    }
    return n;
}

/* Actions [lo, hi) on root: printed into out, or (vals) collected. */
static bool exec(ctx *cx, const hr_jsonpath *jp, size_t lo, size_t hi, yyjson_val *root,
                 hr_buf *out, vec *vals, int *actions_seen, bool *first_empty)
{
    for (size_t i = lo; i < hi; i++) {
        const action *a = &jp->a[i];
        if (out && hr_buf_failed(out))
            return efail(cx, "out of memory (or over the output's limit)");
        if (a->kind == A_TEXT) {
            if (out)
                hr_buf_append(out, a->text, a->len);
            continue;
        }
        if (first_is(a, ST_END))
            return efail(cx, "not in range, nothing to end");
        vec one = {&root, 1, 1, false}, res = {0};
        if (!eval_chain(cx, &a->c, &one, &res)) {
            free(res.v);
            return false;
        }
        if (first_is(a, ST_RANGE)) {
            size_t e = range_end(jp, i, hi);
            bool ok = true;
            for (size_t k = 0; ok && k < res.n; k++)
                ok = exec(cx, jp, i + 1, e, res.v[k], out, vals, actions_seen, first_empty);
            free(res.v);
            if (!ok)
                return false;
            i = e;
            continue;
        }
        if (vals && (*actions_seen)++ == 0)
            *first_empty = res.n == 0;
        for (size_t k = 0; k < res.n && !(out && hr_buf_failed(out)); k++) {
            if (vals) {
                push(vals, res.v[k]);
                continue;
            }
            if (k)
                hr_buf_putc(out, ' ');
            hr_jpvalue_text(res.v[k], out);
        }
        free(res.v);
    }
    return true;
}

static hr_status exec_error(const hr_jsonpath *jp, const ctx *cx, hr_err *err)
{
    return hr_err_set(err, HR_E_INPUT,
                      "error executing jsonpath \"%.120s\": Error executing template: %s", jp->tmpl,
                      cx->why);
}

hr_status hr_jsonpath_print(const hr_jsonpath *jp, yyjson_val *root, bool allow_missing,
                            hr_buf *out, hr_err *err)
{
    ctx cx = {allow_missing, {0}, JP_BUDGET};
    int seen = 0;
    bool first_empty = false;
    if (!exec(&cx, jp, 0, jp->n, root, out, NULL, &seen, &first_empty))
        return exec_error(jp, &cx, err);
    return hr_buf_failed(out) ? hr_err_set(err, HR_E_NOMEM, "out of memory") : HR_OK;
}

hr_status hr_jsonpath_find(const hr_jsonpath *jp, yyjson_val *root, bool allow_missing,
                           yyjson_val ***vals, size_t *n, bool *first_empty, hr_err *err)
{
    ctx cx = {allow_missing, {0}, JP_BUDGET};
    vec v = {0};
    int seen = 0;
    *first_empty = true;
    bool ok = exec(&cx, jp, 0, jp->n, root, NULL, &v, &seen, first_empty);
    if (ok && v.oom)
        ok = efail(&cx, "%s", OVER);
    if (!ok) { /* custom-columns: kubectl's message alone */
        free(v.v);
        *vals = NULL;
        *n = 0;
        return hr_err_set(err, HR_E_INPUT, "%s", cx.why);
    }
    *vals = v.v;
    *n = v.n;
    return HR_OK;
}
