/*
 * urlenc.h — percent-encode a query value into a buffer (RFC 3986).
 *
 * Query values we build (a field manager, a continue token, a
 * resourceVersion) may carry any byte; this is the one place that knows
 * which pass through as they are: the unreserved characters A–Z a–z 0–9
 * - . _ ~. Everything else becomes %XX (upper-case hex).
 */
#ifndef HR_UTIL_URLENC_H
#define HR_UTIL_URLENC_H

#include "buf.h"

/* Append s, percent-encoded. */
void hr_buf_urlenc(hr_buf *b, const char *s);

#endif
