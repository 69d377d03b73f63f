/*
 * ktime.h — the API's timestamps: metav1.Time ("2026-11-30T08:00:00Z") and
 * metav1.MicroTime ("2026-11-30T08:00:00.123456Z").
 *
 * ExecCredential expiry, Lease acquire/renew times and Event times all
 * travel as RFC 3339 text; leader election compares renew times to the
 * microsecond, so parsing keeps the fraction.
 */
#ifndef HR_KUBE_KTIME_H
#define HR_KUBE_KTIME_H

#include <stddef.h>
#include <stdint.h>
#include <time.h>

/* RFC 3339 (fractions and offsets allowed) to microseconds since the
 * epoch; INT64_MIN when malformed. Digits beyond microseconds are cut. */
int64_t hr_ktime_parse_us(const char *s, size_t len);

/* The same in whole seconds (fraction dropped); -1 when malformed. */
time_t hr_krfc3339(const char *s, size_t len);

/* MicroTime text, UTC, always 6 fraction digits: needs 28 bytes. */
#define HR_KTIME_MICRO_MAX 32
void hr_ktime_format_micro(int64_t us, char out[HR_KTIME_MICRO_MAX]);

/* Now, in microseconds since the epoch (CLOCK_REALTIME). */
int64_t hr_ktime_now_us(void);

#endif
