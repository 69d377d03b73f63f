/*
 * ktime.c — RFC 3339 timestamps in and out (see ktime.h). Strict on the
 * shape the API server writes, since a misread expiry or renew time is a
 * silent bug (a token used after expiry, a lease stolen early).
 */
#include "kube/ktime.h"

#include <stdio.h>
#include <string.h>

static int digits(const char *s, size_t n, int *out)
{
    int v = 0;
    for (size_t i = 0; i < n; i++) {
        if (s[i] < '0' || s[i] > '9')
            return -1;
        v = v * 10 + (s[i] - '0');
    }
    *out = v;
    return 0;
}

int64_t hr_ktime_parse_us(const char *s, size_t len)
{
    /* 2006-01-02T15:04:05[.frac](Z|+07:00) */
    int Y, M, D, h, m, sec;
    if (len < 20 || s[4] != '-' || s[7] != '-' || (s[10] != 'T' && s[10] != 't') || s[13] != ':' ||
        s[16] != ':')
        return INT64_MIN;
    if (digits(s, 4, &Y) || digits(s + 5, 2, &M) || digits(s + 8, 2, &D) || digits(s + 11, 2, &h) ||
        digits(s + 14, 2, &m) || digits(s + 17, 2, &sec))
        return INT64_MIN;
    if (M < 1 || M > 12 || D < 1 || D > 31 || h > 23 || m > 59 || sec > 60)
        return INT64_MIN;
    size_t i = 19;
    int64_t frac = 0;
    if (i < len && s[i] == '.') {
        i++;
        size_t f = i;
        int64_t scale = 100000;
        while (i < len && s[i] >= '0' && s[i] <= '9') {
            frac += (s[i] - '0') * scale;
            scale /= 10;
            i++;
        }
        if (i == f)
            return INT64_MIN;
    }
    long off = 0;
    if (i < len && (s[i] == 'Z' || s[i] == 'z')) {
        i++;
    } else if (i + 6 == len && (s[i] == '+' || s[i] == '-') && s[i + 3] == ':') {
        int oh, om;
        if (digits(s + i + 1, 2, &oh) || digits(s + i + 4, 2, &om) || oh > 23 || om > 59)
            return INT64_MIN;
        off = (s[i] == '-' ? -1 : 1) * (oh * 3600L + om * 60L);
        i += 6;
    } else {
        return INT64_MIN;
    }
    if (i != len)
        return INT64_MIN;
    struct tm tm = {0};
    tm.tm_year = Y - 1900;
    tm.tm_mon = M - 1;
    tm.tm_mday = D;
    tm.tm_hour = h;
    tm.tm_min = m;
    tm.tm_sec = sec;
    time_t t = timegm(&tm);
    if (t == (time_t)-1)
        return INT64_MIN;
    return ((int64_t)t - off) * 1000000 + frac;
}

time_t hr_krfc3339(const char *s, size_t len)
{
    int64_t us = hr_ktime_parse_us(s, len);
    if (us == INT64_MIN)
        return -1;
    /* Floor, so a time before the epoch does not round up to it. */
    return (time_t)(us >= 0 ? us / 1000000 : -((-us + 999999) / 1000000));
}

void hr_ktime_format_micro(int64_t us, char out[HR_KTIME_MICRO_MAX])
{
    time_t t = (time_t)(us / 1000000);
    long frac = (long)(us % 1000000);
    if (frac < 0) {
        frac += 1000000;
        t -= 1;
    }
    struct tm tm;
    if (!gmtime_r(&t, &tm)) {
        snprintf(out, HR_KTIME_MICRO_MAX, "1970-01-01T00:00:00.000000Z");
        return;
    }
    /* Room for any int the compiler can imagine; real values take 27. */
    char tmp[128] = {0};
    snprintf(tmp, sizeof tmp, "%04d-%02d-%02dT%02d:%02d:%02d.%06ldZ", tm.tm_year + 1900,
             tm.tm_mon + 1, tm.tm_mday, tm.tm_hour, tm.tm_min, tm.tm_sec, frac);
    memcpy(out, tmp, HR_KTIME_MICRO_MAX - 1);
    out[HR_KTIME_MICRO_MAX - 1] = '\0';
}

int64_t hr_ktime_now_us(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    return (int64_t)ts.tv_sec * 1000000 + ts.tv_nsec / 1000;
}
