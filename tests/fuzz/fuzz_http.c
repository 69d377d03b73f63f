/*
 * fuzz_http.c — libFuzzer target for the request handling we own between
 * libmicrohttpd and a handler (design §8 "Listeners", §9.3): routing and
 * the header-time body checks (server/request.h), body collection against
 * a route's limit and the listener's budget, the bearer token parser and
 * the verdict cache (server/authz.h), and the review answers' JSON
 * (kube/write/review.h).
 *
 * Input: four lines — "METHOD PATH", the Content-Length ("-": absent),
 * the Transfer-Encoding ("-": absent), the Authorization header value
 * ("-": absent) — then the body, cut into chunks at each 0xff byte. The
 * body is also read as a TokenReview and a SubjectAccessReview answer.
 *
 * Beyond "never crash, leak or read past the input", it checks what must
 * hold: a GET/HEAD with a body, or a body on a route with max_body 0, is
 * never admitted; an admitted declared length is within the limit; a body
 * never holds more than its limit, its buffer never grows past limit + 1,
 * a refused chunk leaves it as it was; the budget counts exactly the
 * bytes held and returns to 0; a token is non-empty with no blank and
 * lies inside the header; the same token gets the same verdict from the
 * cache as from the reviewer.
 */
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "kube/write/review.h"
#include "server/authz.h"
#include "server/request.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void handler(void *ud, const hr_http_req *req, hr_http_resp *resp)
{
    (void)ud;
    (void)req;
    (void)resp;
}

static const hr_route routes[] = {
    {"POST", "/mutate-pods", handler, NULL, 1024, false},
    {"GET", "/healthz", handler, NULL, 0, false},
    {"GET", "/readyz", handler, NULL, 0, false},
    {"GET", "/metrics", handler, NULL, 0, true},
    {"POST", "/small", handler, NULL, 7, false},
};

/* The reviewer: a pure function of the token, so the cache must agree. */
static hr_authz_verdict verdict_of(const char *token)
{
    return (hr_authz_verdict)((unsigned char)token[0] % 4);
}

static hr_authz_verdict review(void *ud, const char *token, const char *verb, const char *path,
                               int64_t until_ms, const atomic_bool *cancel, char *user, size_t cap)
{
    (void)cancel;
    (void)until_ms;
    (void)ud;
    (void)verb;
    (void)path;
    if (token[0] == '\0' || strlen(token) > 16384)
        abort();
    if (cap)
        user[0] = '\0';
    return verdict_of(token);
}

static hr_authz *cache(void)
{
    static hr_authz *a;
    if (a == NULL) {
        hr_authz_opts o = {.review = review, .max_entries = 4};
        hr_err err;
        if (hr_authz_new(&o, &a, &err) != HR_OK)
            abort();
    }
    return a;
}

/* The next line of [*p, end) as a NUL-terminated copy; NULL for "-". */
static char *line(const uint8_t **p, const uint8_t *end, bool *ok)
{
    const uint8_t *nl = memchr(*p, '\n', (size_t)(end - *p));
    if (nl == NULL) {
        *ok = false;
        return NULL;
    }
    size_t n = (size_t)(nl - *p);
    char *s = malloc(n + 1);
    if (s == NULL)
        abort();
    memcpy(s, *p, n);
    s[n] = '\0';
    *p = nl + 1;
    if (strcmp(s, "-") == 0) {
        free(s);
        return NULL;
    }
    return s;
}

static void check_bearer(const char *h)
{
    size_t n = 0;
    const char *t = hr_authz_bearer(h, &n);
    if (t == NULL)
        return;
    if (n == 0 || t < h || t + n > h + strlen(h))
        abort();
    for (size_t i = 0; i < n; i++)
        if (t[i] == ' ' || t[i] == '\t')
            abort();
    /* What the cache answers is what the reviewer says for this token. */
    char *tok = malloc(n + 1);
    if (tok == NULL)
        abort();
    memcpy(tok, t, n);
    tok[n] = '\0';
    hr_authz_verdict want = verdict_of(tok);
    for (int i = 0; i < 2; i++)
        if (hr_authz_check(cache(), h, "get", "/metrics") != want)
            abort();
    free(tok);
}

static void check_body(const hr_req_verdict *v, const uint8_t *p, const uint8_t *end)
{
    hr_body_budget budget;
    hr_body_budget_init(&budget, 1500);
    hr_body b;
    size_t max = v->route->max_body;
    int rc = hr_body_begin(&b, max, v->chunked ? 0 : v->declared, &budget);
    if (atomic_load(&budget.used) != 0)
        abort();
    while (rc == HR_BODY_OK && p < end) {
        const uint8_t *cut = memchr(p, 0xff, (size_t)(end - p));
        size_t n = cut ? (size_t)(cut - p) : (size_t)(end - p);
        size_t before = b.len;
        rc = hr_body_add(&b, p, n);
        if (rc != HR_BODY_OK && b.len != before)
            abort();
        if (b.len > max || b.cap > max + 1 || atomic_load(&budget.used) != b.len)
            abort();
        if (rc == HR_BODY_OK && b.data && b.data[b.len] != '\0')
            abort();
        p += n + (cut ? 1 : 0);
    }
    hr_body_free(&b);
    if (atomic_load(&budget.used) != 0)
        abort();
}

static void check_review_json(const uint8_t *p, size_t n)
{
    hr_buf sar;
    hr_buf_init(&sar, 0);
    hr_err err;
    bool authn = false, allowed = false;
    char user[64];
    if (hr_kreview_sar_json((const char *)p, n, "get", "/metrics", &authn, user, sizeof user, &sar,
                            &err) == HR_OK &&
        authn) {
        /* What we would send is a SubjectAccessReview we can read back. */
        if (hr_buf_failed(&sar) || sar.len == 0 || user[0] == '\0')
            abort();
    }
    if (hr_kreview_sar_allowed((const char *)p, n, &allowed, &err) != HR_OK && allowed)
        abort();
    hr_buf_free(&sar);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    const uint8_t *p = data, *end = data + size;
    bool ok = true;
    char *reqline = line(&p, end, &ok);
    char *cl = ok ? line(&p, end, &ok) : NULL;
    char *te = ok ? line(&p, end, &ok) : NULL;
    char *auth = ok ? line(&p, end, &ok) : NULL;
    if (ok && reqline != NULL) {
        char *sp = strchr(reqline, ' ');
        if (sp != NULL) {
            *sp = '\0';
            hr_req_head h = {reqline, sp + 1, cl, te};
            hr_req_verdict v;
            hr_req_admit(routes, sizeof routes / sizeof routes[0], &h, &v);
            bool get = strcmp(reqline, "GET") == 0 || strcmp(reqline, "HEAD") == 0;
            if ((v.status == 0) != (v.route != NULL))
                abort();
            if (v.status != 0 && v.msg == NULL)
                abort();
            if (v.route != NULL) {
                if (v.has_body && (get || v.route->max_body == 0))
                    abort();
                if (!v.chunked && v.declared > v.route->max_body)
                    abort();
                if (strcmp(v.route->method, reqline) != 0 || strcmp(v.route->path, sp + 1) != 0)
                    abort();
                if (v.route->max_body > 0)
                    check_body(&v, p, end);
            }
        }
        if (auth != NULL)
            check_bearer(auth);
        check_review_json(p, (size_t)(end - p));
    }
    free(reqline);
    free(cl);
    free(te);
    free(auth);
    return 0;
}
