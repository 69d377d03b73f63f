/*
 * wide.h — 128-bit integers for intermediate products, and the saturating
 * arithmetic built on them.
 *
 * Every product of two millicore values is taken in 128 bits so a quantity
 * a user can type never wraps around, and sums saturate instead of
 * wrapping: absurd but valid inputs give a capped answer, never a negative
 * one. GCC and Clang provide __int128 on 64-bit targets; __extension__
 * keeps -Wpedantic quiet about it. The core includes nothing outside
 * itself, so these live here rather than in util/.
 */
#ifndef HR_CORE_WIDE_H
#define HR_CORE_WIDE_H

#include <stdint.h>

__extension__ typedef __int128 hr_i128;
__extension__ typedef unsigned __int128 hr_u128;

static inline int64_t hr_min64(int64_t a, int64_t b)
{
    return a < b ? a : b;
}
static inline int64_t hr_max64(int64_t a, int64_t b)
{
    return a > b ? a : b;
}

/* a + b, saturated to [INT64_MIN, INT64_MAX]. */
static inline int64_t hr_sadd64(int64_t a, int64_t b)
{
    if (b > 0 && a > INT64_MAX - b)
        return INT64_MAX;
    if (b < 0 && a < INT64_MIN - b)
        return INT64_MIN;
    return a + b;
}

/* floor(a * b / d) for a, b >= 0, d > 0, in 128 bits, saturated to int64.
 * A product that fits in 64 bits (every realistic one) is divided in 64
 * bits: the same quotient (both truncate toward zero), without the call to
 * the 128-bit division routine; and a * d / d is a, with no division at all
 * (a pod's one container takes the whole of its pod's share). */
static inline int64_t hr_muldiv64(int64_t a, int64_t b, int64_t d)
{
    if (d > 0 && b == d)
        return a;
    if (d > 0 && a == d)
        return b;
    int64_t p;
    if (d > 0 && !__builtin_mul_overflow(a, b, &p))
        return p / d;
    hr_i128 v = (hr_i128)a * b / d;
    return v > INT64_MAX ? INT64_MAX : (int64_t)v;
}

#endif
