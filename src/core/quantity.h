/*
 * quantity.h — Kubernetes resource quantities, parsed without allocation.
 *
 * The grammar is Kubernetes' own (k8s.io/apimachinery resource.Quantity):
 *
 *   quantity  ::= [sign] number suffix
 *   number    ::= digits | digits "." [digits] | "." digits
 *   suffix    ::= "" | "n" | "u" | "m" | "k" | "M" | "G" | "T" | "P" | "E"
 *                                                                 (decimal SI)
 *               | "Ki" | "Mi" | "Gi" | "Ti" | "Pi" | "Ei"         (binary SI)
 *               | ("e" | "E") [sign] digits                       (exponent)
 *
 * Values are converted to an integer count of 10^scale units rounding up
 * (towards +inf), as Quantity.ScaledValue does, so "0.1m" CPU is 1 millicore
 * and "1.5" memory is 2 bytes. Anything outside the grammar, and anything
 * that does not fit in an int64 at the requested scale, is an error value:
 * absurd input never overflows, it is rejected.
 *
 * Part of the pure core: no I/O, no allocation, no dependency.
 */
#ifndef HR_CORE_QUANTITY_H
#define HR_CORE_QUANTITY_H

#include <stddef.h>
#include <stdint.h>

#include "attr.h"

typedef enum hr_qerr {
    HR_Q_OK = 0,
    HR_Q_EMPTY,    /* no characters at all */
    HR_Q_SYNTAX,   /* not a number where one is required */
    HR_Q_SUFFIX,   /* unknown or malformed suffix */
    HR_Q_RANGE,    /* does not fit in int64 at the requested scale */
    HR_Q_NEGATIVE, /* negative where only non-negative values make sense */
} hr_qerr;

/* A short human sentence for an error value ("unknown suffix", ...). */
const char *hr_qerr_str(hr_qerr e);

/* Parse s[0..len) and return ceil(value / 10^scale) in *out (towards +inf,
 * so negative values are allowed here and round towards zero).
 * scale is -3 for milli-units, 0 for whole units. */
HR_CORE_MUST_CHECK hr_qerr hr_quantity_parse(const char *s, size_t len, int scale, int64_t *out);

/* CPU in millicores. Negative values are HR_Q_NEGATIVE. */
HR_CORE_MUST_CHECK hr_qerr hr_cpu_parse_milli(const char *s, size_t len, int64_t *milli);

/* Memory (or any count) in whole units, rounded up. Negative: HR_Q_NEGATIVE. */
HR_CORE_MUST_CHECK hr_qerr hr_mem_parse_bytes(const char *s, size_t len, int64_t *bytes);

/* Canonical Kubernetes text for a millicore count: "1500m", "2", "0".
 * Writes at most cap bytes including the NUL; returns the length written
 * (excluding NUL), or 0 when cap is too small. 24 bytes always suffice. */
size_t hr_cpu_format_milli(int64_t milli, char *buf, size_t cap);

#define HR_CPU_FMT_MAX 24

#endif
