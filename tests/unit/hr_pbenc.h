/*
 * hr_pbenc.h — a protobuf encoder for the unit tests that hand the decoders
 * Kubernetes objects in protobuf (test_watch_pb.c, test_foreign_writer.c):
 * a fixed buffer of HR_PBENC_MAX bytes, varints and length-delimited
 * fields (bytes, strings, nested messages). Header only; an overflow fails
 * the test.
 */
#ifndef HR_TEST_PBENC_H
#define HR_TEST_PBENC_H

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#define HR_PBENC_MAX 8192

typedef struct pbb {
    uint8_t b[HR_PBENC_MAX];
    size_t n;
} pbb;

static inline void put_byte(pbb *o, uint8_t c)
{
    assert_true(o->n < sizeof o->b);
    o->b[o->n++] = c;
}

static inline void put_varint(pbb *o, uint64_t v)
{
    while (v >= 0x80) {
        put_byte(o, (uint8_t)(v | 0x80));
        v >>= 7;
    }
    put_byte(o, (uint8_t)v);
}

static inline void put_bytes(pbb *o, uint32_t field, const void *s, size_t n)
{
    put_varint(o, (uint64_t)field << 3 | 2);
    put_varint(o, n);
    assert_true(o->n + n <= sizeof o->b);
    memcpy(o->b + o->n, s, n);
    o->n += n;
}

static inline void put_str(pbb *o, uint32_t field, const char *s)
{
    put_bytes(o, field, s, strlen(s));
}

static inline void put_msg(pbb *o, uint32_t field, const pbb *m)
{
    put_bytes(o, field, m->b, m->n);
}

#endif
