/*
 * gzip.h — compressing an answer when the client asks for it (design §9.3:
 * /metrics in gzip, as Prometheus asks with Accept-Encoding: gzip).
 */
#ifndef HR_SERVER_GZIP_H
#define HR_SERVER_GZIP_H

#include <stdbool.h>
#include <stddef.h>

#include "server/http.h"
#include "util/buf.h"
#include "util/err.h"

/* Does an Accept-Encoding header value (NULL: none) accept gzip? "gzip",
 * "x-gzip" or "*" with no q or a q above 0, in any case, among the
 * comma-separated codings (RFC 9110 §12.5.3); an explicit gzip;q=0 wins
 * over "*". Pure. */
bool hr_gzip_accepted(const char *accept_encoding);

/* in[0..len) as one gzip member (RFC 1952; zlib, level 1: a scrape is
 * compressed every time) appended to out. HR_E_NOMEM when zlib or out runs
 * out of memory (out is then failed or partly written). */
HR_MUST_CHECK hr_status hr_gzip(const void *in, size_t len, hr_buf *out, hr_err *err);

/* A handler's answer in gzip when req accepts it: r->body replaced by its
 * gzip and r->content_encoding set ("gzip"; the listener adds
 * Content-Encoding and Vary: Accept-Encoding). Left as it is when not
 * accepted, already encoded, failed, or when compressing fails (the plain
 * answer is still right). */
void hr_gzip_answer(const hr_http_req *req, hr_http_resp *r);

#endif
