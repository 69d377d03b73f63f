/*
 * request.h — what a listener decides about a request from its headers,
 * and how it collects the body: pure, so it is unit-tested and fuzzed
 * (tests/fuzz/fuzz_http.c) apart from libmicrohttpd.
 *
 * Why it exists: a body limit of 0 used to mean "unlimited" (util/buf.h's
 * convention) and only a declared Content-Length was checked, so one
 * chunked body to GET /healthz could take the process to the memory
 * limit. Here every route's limit is explicit — 0 means no body at all —
 * GET and HEAD never take one, and a chunked body is counted as it streams.
 *
 * Memory bound (design §8): a request holds at most its route's max_body
 * + 1 bytes of body — one buffer, sized once (the declared length, else
 * the limit, resident only as it is written) and never copied — on top of
 * the connection's fixed libmicrohttpd pool (HR_HTTP_CONN_MEMORY, headers
 * included). Across a listener the bytes of every body held draw on one
 * budget (hr_body_budget), so many connections cannot add up past it.
 */
#ifndef HR_SERVER_REQUEST_H
#define HR_SERVER_REQUEST_H

#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>

typedef struct hr_http_req hr_http_req;
typedef struct hr_http_resp hr_http_resp;
typedef void (*hr_http_handler)(void *ud, const hr_http_req *req, hr_http_resp *resp);

typedef struct hr_route {
    const char *method; /* "GET", "POST" */
    const char *path;   /* exact match */
    hr_http_handler fn;
    void *ud;
    size_t max_body; /* bytes; 0: the request must have no body */
    bool guarded;    /* a bearer token the listener's authorizer allows */
} hr_route;

/* One request's headers, as the admission check reads them (NULL:
 * absent). */
typedef struct hr_req_head {
    const char *method;
    const char *path;
    const char *content_length;
    const char *transfer_encoding;
} hr_req_head;

typedef struct hr_req_verdict {
    const hr_route *route; /* the route when status is 0 */
    int status;            /* 0: go on and read the body; else answer this */
    const char *msg;       /* static, for the answer's body */
    bool has_body;         /* a Content-Length > 0 or a Transfer-Encoding */
    size_t declared;       /* the Content-Length, when one was given */
    bool chunked;          /* no length given: count as it comes */
} hr_req_verdict;

/* Route and check a request before any of its body is read: 404 (no such
 * path), 405 (path known, not for this method), 400 (GET/HEAD with a body,
 * a bad Content-Length, both Content-Length and Transfer-Encoding), 413
 * (a body the route does not take, or a declared length over max_body). */
void hr_req_admit(const hr_route *routes, size_t n_routes, const hr_req_head *h, hr_req_verdict *v);

/* The body bytes all requests of one listener may hold together. */
typedef struct hr_body_budget {
    atomic_size_t used;
    size_t limit;
} hr_body_budget;

void hr_body_budget_init(hr_body_budget *b, size_t limit);

typedef struct hr_body {
    char *data; /* NUL-terminated when not NULL */
    size_t len;
    size_t cap;
    size_t max;
    hr_body_budget *budget; /* may be NULL */
} hr_body;

/* Outcomes of hr_body_add. */
enum { HR_BODY_OK = 0, HR_BODY_TOO_LARGE = 413, HR_BODY_NO_ROOM = 503 };

/* Start collecting a body of at most max bytes; expect (0: unknown) is
 * the declared length, allocated at once. */
int hr_body_begin(hr_body *b, size_t max, size_t expect, hr_body_budget *budget);
/* Append; past max nothing is kept and HR_BODY_TOO_LARGE is returned
 * (sticky: the caller drops the connection). */
int hr_body_add(hr_body *b, const void *p, size_t n);
/* The content, "" when empty. */
const char *hr_body_str(const hr_body *b);
void hr_body_free(hr_body *b);

#endif
