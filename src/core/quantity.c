/*
 * quantity.c — Kubernetes quantity parsing and CPU formatting.
 *
 * The number is read into a 128-bit mantissa of at most 38 significant
 * digits plus a base-10 exponent; digits beyond that only matter for
 * rounding up, so we remember whether any of them was non-zero. The binary
 * suffixes multiply by 2^(10k). The final scaling is done in 128-bit
 * arithmetic so that nothing a user can type overflows before we check it.
 */
#include "quantity.h"

#include <stdbool.h>

#include "wide.h"

#define MANT_DIGITS 38   /* 10^38 < 2^127: the mantissa never overflows */
#define EXP_LIMIT 100000 /* far beyond any representable value either way */

const char *hr_qerr_str(hr_qerr e)
{
    switch (e) {
    case HR_Q_OK: return "ok";
    case HR_Q_EMPTY: return "empty quantity";
    case HR_Q_SYNTAX: return "not a number";
    case HR_Q_SUFFIX: return "unknown suffix";
    case HR_Q_RANGE: return "out of range";
    case HR_Q_NEGATIVE: return "negative quantity";
    }
    return "invalid quantity";
}

static bool is_digit(char c)
{
    return c >= '0' && c <= '9';
}

/* Read an optionally signed integer exponent; saturates at EXP_LIMIT. */
static bool parse_exponent(const char *s, size_t len, long *out)
{
    size_t i = 0;
    bool neg = false;
    if (i < len && (s[i] == '+' || s[i] == '-'))
        neg = s[i++] == '-';
    if (i == len)
        return false;
    long v = 0;
    for (; i < len; i++) {
        if (!is_digit(s[i]))
            return false;
        if (v < EXP_LIMIT)
            v = v * 10 + (s[i] - '0');
    }
    *out = neg ? -v : v;
    return true;
}

hr_qerr hr_quantity_parse(const char *s, size_t len, int scale, int64_t *out)
{
    if (s == NULL || len == 0)
        return HR_Q_EMPTY;

    size_t i = 0;
    bool neg = false;
    if (s[i] == '+' || s[i] == '-')
        neg = s[i++] == '-';

    hr_u128 mant = 0;
    int ndig = 0;         /* significant digits kept in mant */
    long exp10 = 0;       /* value = mant * 10^exp10 (before the suffix) */
    bool inexact = false; /* a dropped digit was non-zero */
    bool any = false, dot = false;

    for (; i < len; i++) {
        char ch = s[i];
        if (ch == '.') {
            if (dot)
                return HR_Q_SYNTAX;
            dot = true;
            continue;
        }
        if (!is_digit(ch))
            break;
        any = true;
        int d = ch - '0';
        if (mant == 0 && d == 0) {
            if (dot)
                exp10--; /* leading zeros after the point scale down */
            continue;
        }
        if (ndig < MANT_DIGITS) {
            mant = mant * 10 + (hr_u128)d;
            ndig++;
            if (dot)
                exp10--;
        } else {
            if (d != 0)
                inexact = true;
            if (!dot)
                exp10++;
        }
        if (exp10 < -EXP_LIMIT)
            exp10 = -EXP_LIMIT;
    }
    if (!any)
        return HR_Q_SYNTAX;

    /* Suffix. */
    int bin = 0; /* power of 1024 */
    const char *suf = s + i;
    size_t slen = len - i;
    if (slen == 0) {
        /* plain number */
    } else if (slen == 1) {
        switch (suf[0]) {
        case 'n': exp10 -= 9; break;
        case 'u': exp10 -= 6; break;
        case 'm': exp10 -= 3; break;
        case 'k': exp10 += 3; break;
        case 'M': exp10 += 6; break;
        case 'G': exp10 += 9; break;
        case 'T': exp10 += 12; break;
        case 'P': exp10 += 15; break;
        case 'E': exp10 += 18; break;
        default: return HR_Q_SUFFIX;
        }
    } else if (slen == 2 && suf[1] == 'i') {
        switch (suf[0]) {
        case 'K': bin = 1; break;
        case 'M': bin = 2; break;
        case 'G': bin = 3; break;
        case 'T': bin = 4; break;
        case 'P': bin = 5; break;
        case 'E': bin = 6; break;
        default: return HR_Q_SUFFIX;
        }
    } else if (suf[0] == 'e' || suf[0] == 'E') {
        long e;
        if (!parse_exponent(suf + 1, slen - 1, &e))
            return HR_Q_SUFFIX;
        exp10 += e;
    } else {
        return HR_Q_SUFFIX;
    }

    if (mant == 0 && !inexact) {
        *out = 0;
        return HR_Q_OK;
    }
    /* Rounding is towards +inf: up in magnitude for positive values, down
     * in magnitude for negative ones. */
    bool up = !neg;

    /* result = ceil(mant * 2^(10*bin) * 10^(exp10 - scale)) */
    long e = exp10 - scale;
    int shift = 10 * bin;
    hr_u128 v = mant;
    const hr_u128 limit = (hr_u128)INT64_MAX;
    if (e >= 0) {
        if (v > limit)
            return HR_Q_RANGE; /* every factor left is >= 1 */
        v <<= shift;           /* < 2^63 · 2^60: fits */
        if (v > limit)
            return HR_Q_RANGE;
        for (long k = 0; k < e; k++) {
            v *= 10;
            if (v > limit)
                return HR_Q_RANGE;
        }
        if (inexact) {
            /* Dropped digits are a fraction of one unit only when e == 0
             * and there is no binary suffix; otherwise the value has more
             * than 38 significant whole digits and cannot fit anyway. */
            if (e > 0 || shift > 0)
                return HR_Q_RANGE;
            if (up) {
                if (v == limit)
                    return HR_Q_RANGE;
                v += 1;
            }
        }
    } else {
        long d = -e;
        while (d > 38) { /* 10^39 does not fit in 128 bits; what is dropped
                            is far below one unit of the result */
            if (v % 10 != 0)
                inexact = true;
            v /= 10;
            d--;
        }
        hr_u128 p = 1;
        for (long k = 0; k < d; k++)
            p *= 10;
        /* Exact long division of v·2^shift by p, one bit of the shift at a
         * time: the remainder stays below p < 2^127, so doubling it never
         * overflows, and the quotient is checked against the range as it
         * grows. */
        hr_u128 q = v / p, r = v % p;
        if (q > limit)
            return HR_Q_RANGE;
        for (int k = 0; k < shift; k++) {
            q <<= 1;
            r <<= 1;
            if (r >= p) {
                r -= p;
                q += 1;
            }
            if (q > limit)
                return HR_Q_RANGE;
        }
        if (up && (r != 0 || inexact))
            q += 1;
        if (q > limit)
            return HR_Q_RANGE;
        v = q;
    }
    *out = neg ? -(int64_t)v : (int64_t)v;
    return HR_Q_OK;
}

/* Resources are never negative: reject any negative amount, even one that
 * rounds to zero ("-0.1m"), but accept "-0". */
static hr_qerr parse_nonneg(const char *s, size_t len, int scale, int64_t *out)
{
    int64_t v = 0;
    hr_qerr e = hr_quantity_parse(s, len, scale, &v);
    if (e != HR_Q_OK)
        return e;
    if (v < 0)
        return HR_Q_NEGATIVE;
    if (len > 0 && s[0] == '-') {
        for (size_t i = 1; i < len && (s[i] == '.' || (s[i] >= '0' && s[i] <= '9')); i++)
            if (s[i] >= '1' && s[i] <= '9')
                return HR_Q_NEGATIVE;
    }
    *out = v;
    return HR_Q_OK;
}

hr_qerr hr_cpu_parse_milli(const char *s, size_t len, int64_t *milli)
{
    return parse_nonneg(s, len, -3, milli);
}

hr_qerr hr_mem_parse_bytes(const char *s, size_t len, int64_t *bytes)
{
    return parse_nonneg(s, len, 0, bytes);
}

size_t hr_cpu_format_milli(int64_t milli, char *buf, size_t cap)
{
    char tmp[HR_CPU_FMT_MAX];
    size_t n = 0;
    bool neg = milli < 0;
    uint64_t v = neg ? (uint64_t)0 - (uint64_t)milli : (uint64_t)milli;
    bool whole = v % 1000 == 0;
    if (whole)
        v /= 1000;
    else
        tmp[n++] = 'm';
    do {
        tmp[n++] = (char)('0' + v % 10);
        v /= 10;
    } while (v != 0);
    if (neg)
        tmp[n++] = '-';
    if (cap < n + 1)
        return 0;
    for (size_t k = 0; k < n; k++)
        buf[k] = tmp[n - 1 - k];
    buf[n] = '\0';
    return n;
}
