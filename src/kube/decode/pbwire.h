/*
 * pbwire.h — the protobuf wire format, read in place (for the protobuf
 * decoders, pb.h; not for other layers).
 *
 * Why: the API server's protobuf encoding of the built-in kinds is what
 * the decoders in pbpod.c and pbkinds.c walk, field by field, without a
 * generated schema or an object tree: a reader is two pointers into the
 * received bytes, every field a tag (number, wire type) and a value, and
 * whatever the cache does not need is skipped by its length.
 *
 * Bounded by construction: a varint is at most 10 bytes and may not
 * overflow 64 bits; a length may not run past the bytes it lives in (so
 * nested messages are always inside their parent); field number 0 and the
 * group wire types (3, 4, deprecated and never sent by Kubernetes) and 6,
 * 7 are refused. Nothing here recurses or allocates: the nesting depth is
 * that of the decoders, which follow a fixed schema.
 *
 * Errors are values: each reader returns false on malformed input and
 * leaves the reader where it stopped; the decoders turn that into a field
 * error (common.h's hr_kfail).
 */
#ifndef HR_KUBE_DECODE_PBWIRE_H
#define HR_KUBE_DECODE_PBWIRE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

typedef enum hr_pbwt {
    HR_PB_VARINT = 0,
    HR_PB_I64 = 1,
    HR_PB_LEN = 2,
    HR_PB_I32 = 5,
} hr_pbwt;

/* The unread rest of one message. */
typedef struct hr_pbr {
    const uint8_t *p, *end;
} hr_pbr;

/* A reader of len bytes at buf; NULL (with len 0) is an empty one. */
static inline hr_pbr hr_pbr_of(const void *buf, size_t len)
{
    const uint8_t *b = buf ? (const uint8_t *)buf : (const uint8_t *)"";
    return (hr_pbr){b, b + len};
}

static inline bool hr_pbr_more(const hr_pbr *r)
{
    return r->p < r->end;
}

static inline bool hr_pb_varint(hr_pbr *r, uint64_t *out)
{
    uint64_t v = 0;
    for (unsigned i = 0; i < 10; i++) {
        if (r->p >= r->end)
            return false;
        uint8_t b = *r->p++;
        if (i == 9 && b > 1)
            return false; /* more than 64 bits */
        v |= (uint64_t)(b & 0x7f) << (7 * i);
        if (!(b & 0x80)) {
            *out = v;
            return true;
        }
    }
    return false;
}

/* The next field's tag. False at a malformed tag (a field number of 0 or
 * above 2^29-1, a wire type we do not read). */
static inline bool hr_pb_tag(hr_pbr *r, uint32_t *field, hr_pbwt *wt)
{
    uint64_t t;
    if (!hr_pb_varint(r, &t) || (t >> 3) == 0 || (t >> 3) > 0x1fffffff)
        return false;
    unsigned w = (unsigned)(t & 7);
    if (w != HR_PB_VARINT && w != HR_PB_I64 && w != HR_PB_LEN && w != HR_PB_I32)
        return false;
    *field = (uint32_t)(t >> 3);
    *wt = (hr_pbwt)w;
    return true;
}

/* A length-delimited value: its bytes, in place. */
static inline bool hr_pb_len(hr_pbr *r, const uint8_t **s, size_t *len)
{
    uint64_t n = 0;
    *s = r->p; /* set on failure too: callers' compilers see it set */
    *len = 0;
    if (!hr_pb_varint(r, &n) || n > (uint64_t)(r->end - r->p))
        return false;
    *s = r->p;
    *len = (size_t)n;
    r->p += n;
    return true;
}

/* A length-delimited value as a reader of its own (an embedded message). */
static inline bool hr_pb_sub(hr_pbr *r, hr_pbr *sub)
{
    const uint8_t *s = NULL;
    size_t n = 0;
    if (!hr_pb_len(r, &s, &n))
        return false;
    *sub = (hr_pbr){s, s + n};
    return true;
}

/* Skip the value of a field of wire type wt. */
static inline bool hr_pb_skip(hr_pbr *r, hr_pbwt wt)
{
    uint64_t v;
    const uint8_t *s;
    size_t n;
    switch (wt) {
    case HR_PB_VARINT: return hr_pb_varint(r, &v);
    case HR_PB_LEN: return hr_pb_len(r, &s, &n);
    case HR_PB_I64:
    case HR_PB_I32: {
        size_t k = wt == HR_PB_I64 ? 8 : 4;
        if ((size_t)(r->end - r->p) < k)
            return false;
        r->p += k;
        return true;
    }
    default: return false;
    }
}

/* A slice of bytes compared with a C string. */
static inline bool hr_pb_eq(const uint8_t *s, size_t len, const char *lit)
{
    size_t n = strlen(lit);
    return len == n && memcmp(s, lit, n) == 0;
}

#endif
