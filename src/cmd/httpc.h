/*
 * httpc.h — one plain HTTP request from a command to a URL that is not the
 * API server: a daemon's /metrics or webhook (`verify`), Prometheus
 * (`explain --prometheus`). libcurl, http and https only, TLS 1.2 or newer,
 * gzip accepted; the server's certificate verified against a CA file when one
 * is given, not verified otherwise (the caller says which in its output).
 */
#ifndef HR_CMD_HTTPC_H
#define HR_CMD_HTTPC_H

#include <stddef.h>

#include "util/buf.h"

typedef struct hr_httpc_req {
    const char *url;
    const char *ca;    /* PEM file to verify the server against; NULL: not verified */
    const char *auth;  /* a whole header line ("Authorization: Bearer …"), or NULL */
    const char *body;  /* a POST of this JSON when not NULL, else a GET */
    long timeout_ms;   /* 0: 10 s */
    const char *agent; /* User-Agent */
} hr_httpc_req;

/* The status (0: no answer came) and the body into out (bounded by out's
 * limit), or why there was no answer into why. */
long hr_httpc_do(const hr_httpc_req *r, hr_buf *out, char *why, size_t cap);

#endif
