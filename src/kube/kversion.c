/*
 * kversion.c — the supported server versions (kversion.h).
 */
#include "kube/kversion.h"

#include <stdbool.h>

/* A decimal number of at most 6 digits, optionally followed by one '+'
 * when plus_ok; -1 when s is anything else. */
static long number(const char *s, bool plus_ok)
{
    if (!s || *s < '0' || *s > '9')
        return -1;
    long n = 0;
    int digits = 0;
    for (; *s >= '0' && *s <= '9'; s++) {
        if (++digits > 6)
            return -1;
        n = n * 10 + (*s - '0');
    }
    if (plus_ok && *s == '+')
        s++;
    return *s ? -1 : n;
}

hr_kversion_verdict hr_kversion_check(const char *major, const char *minor)
{
    long mj = number(major, false), mn = number(minor, true);
    if (mj < 0 || mn < 0)
        return HR_KVERSION_UNREADABLE;
    if (mj > HR_KVERSION_MIN_MAJOR || (mj == HR_KVERSION_MIN_MAJOR && mn >= HR_KVERSION_MIN_MINOR))
        return HR_KVERSION_SUPPORTED;
    return HR_KVERSION_UNSUPPORTED;
}

bool hr_kversion_pod_resize(const char *major, const char *minor)
{
    long mj = number(major, false), mn = number(minor, true);
    if (mj < 0 || mn < 0)
        return false;
    return mj > 1 || (mj == 1 && mn >= HR_KVERSION_POD_RESIZE_MINOR);
}
