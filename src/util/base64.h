/*
 * base64.h — base64, RFC 4648 standard alphabet: the one encoder and
 * decoder.
 *
 * Decoding reads kubeconfig *-data fields: certificates and keys as base64
 * of PEM (Go's []byte in JSON: standard alphabet, padded). kubeconfigs
 * written by hand or by tools wrap lines or drop padding, and kubectl
 * accepts them, so whitespace is skipped and padding is optional; anything
 * else is an error (a clear message beats a TLS failure far away).
 *
 * Encoding is always padded: basic-auth headers, the exec credential
 * plugin's CA, the webhook's JSONPatch.
 */
#ifndef HR_UTIL_BASE64_H
#define HR_UTIL_BASE64_H

#include <stddef.h>

#include "util/buf.h"

/* Decode src[0..len) into dst (room for at least hr_b64_max(len) bytes).
 * Returns the decoded length, or (size_t)-1 on invalid input; *bad_at
 * (may be NULL) then gets the offset of the offending byte. */
size_t hr_b64_decode(const char *src, size_t len, unsigned char *dst, size_t *bad_at);

static inline size_t hr_b64_max(size_t len)
{
    return len / 4 * 3 + 3;
}

/* Encode into dst (room for hr_b64_enc_len(len) + 1); NUL-terminates. */
size_t hr_b64_encode(const unsigned char *src, size_t len, char *dst);
static inline size_t hr_b64_enc_len(size_t len)
{
    return (len + 2) / 3 * 4;
}

/* Append the encoding of src[0..len) to b. */
void hr_buf_b64(hr_buf *b, const void *src, size_t len);

#endif
