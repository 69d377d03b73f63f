/*
 * request.c — request admission and body collection (see request.h).
 */
#include "server/request.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

/* Content-Length: digits only, no sign, no spaces, fits in size_t. */
static bool parse_length(const char *s, size_t *out)
{
    if (s == NULL || *s == '\0')
        return false;
    size_t v = 0;
    for (; *s; s++) {
        if (*s < '0' || *s > '9')
            return false;
        unsigned d = (unsigned)(*s - '0');
        if (v > (SIZE_MAX - d) / 10)
            return false;
        v = v * 10 + d;
    }
    *out = v;
    return true;
}

static void refuse(hr_req_verdict *v, int status, const char *msg)
{
    v->status = status;
    v->msg = msg;
}

void hr_req_admit(const hr_route *routes, size_t n_routes, const hr_req_head *h, hr_req_verdict *v)
{
    memset(v, 0, sizeof *v);
    const char *method = h->method ? h->method : "";
    const char *path = h->path ? h->path : "";
    bool path_known = false;
    for (size_t i = 0; i < n_routes; i++) {
        if (strcmp(routes[i].path, path) != 0)
            continue;
        path_known = true;
        if (strcmp(routes[i].method, method) == 0) {
            v->route = &routes[i];
            break;
        }
    }
    /* The body first: whatever the route, a GET with a body is refused
     * without reading it. */
    if (h->content_length != NULL && h->transfer_encoding != NULL) {
        v->route = NULL;
        refuse(v, 400, "both Content-Length and Transfer-Encoding\n");
        return;
    }
    if (h->content_length != NULL) {
        if (!parse_length(h->content_length, &v->declared)) {
            v->route = NULL;
            refuse(v, 400, "bad Content-Length\n");
            return;
        }
        v->has_body = v->declared > 0;
    } else if (h->transfer_encoding != NULL) {
        v->has_body = true;
        v->chunked = true;
    }
    if (v->has_body && (strcmp(method, "GET") == 0 || strcmp(method, "HEAD") == 0)) {
        v->route = NULL;
        refuse(v, 400, "GET and HEAD take no body\n");
        return;
    }
    if (v->route == NULL) {
        refuse(v, path_known ? 405 : 404, path_known ? "method not allowed\n" : "not found\n");
        return;
    }
    if (v->has_body && (v->route->max_body == 0 || v->declared > v->route->max_body)) {
        v->route = NULL;
        refuse(v, 413, "request body too large\n");
    }
}

void hr_body_budget_init(hr_body_budget *b, size_t limit)
{
    atomic_init(&b->used, 0);
    b->limit = limit;
}

/* Take n bytes from the budget, all or nothing. */
static bool budget_take(hr_body_budget *b, size_t n)
{
    if (b == NULL)
        return true;
    size_t cur = atomic_load(&b->used);
    do {
        if (n > b->limit || cur > b->limit - n)
            return false;
    } while (!atomic_compare_exchange_weak(&b->used, &cur, cur + n));
    return true;
}

static void budget_give(hr_body_budget *b, size_t n)
{
    if (b != NULL && n > 0)
        atomic_fetch_sub(&b->used, n);
}

/* Room for want bytes plus the NUL, in one allocation that never moves
 * again: the declared length, else (a chunked body) the route's limit.
 * Pages not yet written are not resident, so a large limit costs address
 * space, not memory, and no copy ever doubles the peak. */
static int reserve(hr_body *b, size_t want)
{
    if (want + 1 <= b->cap)
        return HR_BODY_OK;
    size_t cap = b->max + 1;
    char *d = realloc(b->data, cap);
    if (d == NULL)
        return HR_BODY_NO_ROOM;
    b->data = d;
    b->cap = cap;
    b->data[b->len] = '\0';
    return HR_BODY_OK;
}

int hr_body_begin(hr_body *b, size_t max, size_t expect, hr_body_budget *budget)
{
    memset(b, 0, sizeof *b);
    b->max = max;
    b->budget = budget;
    if (expect > max)
        return HR_BODY_TOO_LARGE;
    if (expect == 0)
        return HR_BODY_OK;
    b->data = malloc(expect + 1);
    if (b->data == NULL)
        return HR_BODY_NO_ROOM;
    b->cap = expect + 1;
    b->data[0] = '\0'; /* allocated ahead: an empty string until bytes come */
    return HR_BODY_OK;
}

int hr_body_add(hr_body *b, const void *p, size_t n)
{
    if (n > b->max - b->len)
        return HR_BODY_TOO_LARGE;
    if (n == 0)
        return HR_BODY_OK;
    int rc = reserve(b, b->len + n);
    if (rc != HR_BODY_OK)
        return rc;
    /* The budget counts bytes held, not room reserved: a client must send
     * a byte to use one up. */
    if (!budget_take(b->budget, n))
        return HR_BODY_NO_ROOM;
    memcpy(b->data + b->len, p, n);
    b->len += n;
    b->data[b->len] = '\0';
    return HR_BODY_OK;
}

const char *hr_body_str(const hr_body *b)
{
    return b->data ? b->data : "";
}

void hr_body_free(hr_body *b)
{
    budget_give(b->budget, b->len);
    free(b->data);
    b->data = NULL;
    b->len = b->cap = 0;
}
