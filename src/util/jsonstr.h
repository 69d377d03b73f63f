/*
 * jsonstr.h — write a JSON string literal into a buffer.
 *
 * Small hand-built JSON documents (a resize body, a status annotation, an
 * event) are clearer as a few appends than as a mutable yyjson tree; this
 * is the one place that knows how to quote untrusted text for them.
 */
#ifndef HR_UTIL_JSONSTR_H
#define HR_UTIL_JSONSTR_H

#include <stddef.h>

#include "buf.h"

/* Append "s" with JSON escaping (quotes, backslash, control characters as
 * \u00XX). Bytes >= 0x80 are copied as they are (UTF-8 passes through). */
void hr_buf_json_str(hr_buf *b, const char *s);
void hr_buf_json_strn(hr_buf *b, const char *s, size_t len);

#endif
