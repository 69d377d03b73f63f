/*
 * hash.h — FNV-1a, the one string hash (32 and 64 bits).
 *
 * The hash tables (string map, node queue, interned strings) and the status
 * annotation's fingerprint hash short, trusted strings: names from the API
 * server. FNV-1a is a few instructions a byte and spreads such keys well;
 * a degenerate chain costs time, not safety. Inline, because the tables
 * call it on every lookup.
 *
 * Callers start from a basis and may feed pieces in turn
 * (h = hr_fnv1a32_add(h, ...)), which is how the fingerprint leaves a value
 * out of the middle of its text.
 */
#ifndef HR_UTIL_HASH_H
#define HR_UTIL_HASH_H

#include <stddef.h>
#include <stdint.h>

#define HR_FNV32_BASIS UINT32_C(2166136261)
#define HR_FNV32_PRIME UINT32_C(16777619)
#define HR_FNV64_PRIME UINT64_C(1099511628211)

/* The 64-bit basis the string map and the node queue have always started
 * from: the standard one (14695981039346656037) with its last digit lost.
 * Any basis hashes as well; this one is kept because the tables' slot
 * order follows from it, and the order of the per-node gauges on /metrics
 * (and of equally due nodes in the queue) follows from that. */
#define HR_FNV64_BASIS_TABLE UINT64_C(1469598103934665603)

static inline uint32_t hr_fnv1a32_add(uint32_t h, const void *p, size_t n)
{
    const unsigned char *s = p;
    for (size_t i = 0; i < n; i++)
        h = (h ^ s[i]) * HR_FNV32_PRIME;
    return h;
}

static inline uint32_t hr_fnv1a32(const void *p, size_t n)
{
    return hr_fnv1a32_add(HR_FNV32_BASIS, p, n);
}

/* 64 bits over a NUL-terminated string, from basis h. */
static inline uint64_t hr_fnv1a64_str(uint64_t h, const char *s)
{
    for (; *s; s++)
        h = (h ^ (unsigned char)*s) * HR_FNV64_PRIME;
    return h;
}

#endif
