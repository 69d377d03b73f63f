/*
 * quantity.c — Kubernetes quantity parsing and CPU formatting.
 *
 * The number is read into a 64-bit mantissa of at most 18 significant
 * digits plus a base-10 exponent; digits beyond that only matter for
 * rounding up, so we remember whether any of them was non-zero. The binary
 * suffixes multiply by 2^(10k). The final scaling is done in 128-bit
 * arithmetic so that nothing a user can type overflows before we check it.
 */
#include "quantity.h"

#include <stdbool.h>

#include "wide.h"

#define MANT_DIGITS 18   /* 10^18 < 2^63: the mantissa never overflows */
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

static bool is_digit(char c) { return c >= '0' && c <= '9'; }

/* Read an optionally signed integer exponent; saturates at EXP_LIMIT. */
static bool parse_exponent(const char *s, size_t len, long *out)
{
    size_t i = 0;
    bool neg = false;
    if (i < len && (s[i] == '+' || s[i] == '-')) neg = s[i++] == '-';
    if (i == len) return false;
    long v = 0;
    for (; i < len; i++) {
        if (!is_digit(s[i])) return false;
        if (v < EXP_LIMIT) v = v * 10 + (s[i] - '0');
    }
    *out = neg ? -v : v;
    return true;
}

hr_qerr hr_quantity_parse(const char *s, size_t len, int scale, int64_t *out)
{
    if (s == NULL || len == 0) return HR_Q_EMPTY;

    size_t i = 0;
    bool neg = false;
    if (s[i] == '+' || s[i] == '-') neg = s[i++] == '-';

    uint64_t mant = 0;
    int ndig = 0;          /* significant digits kept in mant */
    long exp10 = 0;        /* value = mant * 10^exp10 (before the suffix) */
    bool inexact = false;  /* a dropped digit was non-zero */
    bool any = false, dot = false;

    for (; i < len; i++) {
        char ch = s[i];
        if (ch == '.') {
            if (dot) return HR_Q_SYNTAX;
            dot = true;
            continue;
        }
        if (!is_digit(ch)) break;
        any = true;
        int d = ch - '0';
        if (mant == 0 && d == 0) {
            if (dot) exp10--; /* leading zeros after the point scale down */
            continue;
        }
        if (ndig < MANT_DIGITS) {
            mant = mant * 10 + (uint64_t)d;
            ndig++;
            if (dot) exp10--;
        } else {
            if (d != 0) inexact = true;
            if (!dot) exp10++;
        }
        if (exp10 < -EXP_LIMIT) exp10 = -EXP_LIMIT;
    }
    if (!any) return HR_Q_SYNTAX;

    /* Suffix. */
    int bin = 0; /* power of 1024 */
    const char *suf = s + i;
    size_t slen = len - i;
    if (slen == 0) {
        /* plain number */
    } else if (slen == 1) {
        switch (suf[0]) {
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
        if (!parse_exponent(suf + 1, slen - 1, &e)) return HR_Q_SUFFIX;
        exp10 += e;
    } else {
        return HR_Q_SUFFIX;
    }

    if (mant == 0 && !inexact) {
        *out = 0;
        return HR_Q_OK;
    }
    if (neg) return HR_Q_NEGATIVE;

    /* result = ceil(mant * 2^(10*bin) * 10^(exp10 - scale)) */
    long e = exp10 - scale;
    hr_u128 v = (hr_u128)mant << (10 * bin); /* < 2^124 */
    const hr_u128 limit = (hr_u128)INT64_MAX;
    if (e >= 0) {
        for (long k = 0; k < e; k++) {
            if (v > limit) return HR_Q_RANGE;
            v *= 10;
        }
        if (v > limit) return HR_Q_RANGE;
        if (inexact) {
            /* Dropped digits are a fraction of one unit only when e == 0;
             * beyond that they are whole units we no longer know, and a
             * value with more than 18 significant whole digits is absurd
             * for CPU or memory anyway. */
            if (e > 0 || v == limit) return HR_Q_RANGE;
            v += 1;
        }
    } else {
        long d = -e;
        if (d > 38) {
            *out = 1; /* a positive amount below one unit rounds up to 1 */
            return HR_Q_OK;
        }
        hr_u128 p = 1;
        for (long k = 0; k < d; k++) p *= 10;
        hr_u128 q = v / p;
        if (v % p != 0 || inexact) q += 1;
        if (q > limit) return HR_Q_RANGE;
        v = q;
    }
    *out = (int64_t)v;
    return HR_Q_OK;
}

hr_qerr hr_cpu_parse_milli(const char *s, size_t len, int64_t *milli)
{
    return hr_quantity_parse(s, len, -3, milli);
}

hr_qerr hr_mem_parse_bytes(const char *s, size_t len, int64_t *bytes)
{
    return hr_quantity_parse(s, len, 0, bytes);
}

size_t hr_cpu_format_milli(int64_t milli, char *buf, size_t cap)
{
    char tmp[HR_CPU_FMT_MAX];
    size_t n = 0;
    bool neg = milli < 0;
    uint64_t v = neg ? (uint64_t)0 - (uint64_t)milli : (uint64_t)milli;
    bool whole = v % 1000 == 0;
    if (whole) v /= 1000;
    else tmp[n++] = 'm';
    do {
        tmp[n++] = (char)('0' + v % 10);
        v /= 10;
    } while (v != 0);
    if (neg) tmp[n++] = '-';
    if (cap < n + 1) return 0;
    for (size_t k = 0; k < n; k++) buf[k] = tmp[n - 1 - k];
    buf[n] = '\0';
    return n;
}
