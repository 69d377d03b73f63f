/*
 * kname.c — DNS-1123 labels and subdomains (kname.h).
 */
#include "kube/kname.h"

#include <string.h>

static bool alnum(char c)
{
    return (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9');
}

/* s[0..n) is one label: [a-z0-9]([-a-z0-9]*[a-z0-9])? */
static bool label_n(const char *s, size_t n)
{
    if (n == 0 || n > 63 || !alnum(s[0]) || !alnum(s[n - 1]))
        return false;
    for (size_t i = 0; i < n; i++)
        if (!alnum(s[i]) && s[i] != '-')
            return false;
    return true;
}

bool hr_kname_label(const char *s)
{
    return s != NULL && label_n(s, strlen(s));
}

bool hr_kname_subdomain(const char *s)
{
    if (s == NULL)
        return false;
    size_t n = strlen(s);
    if (n == 0 || n > 253)
        return false;
    const char *p = s;
    for (;;) {
        const char *dot = strchr(p, '.');
        size_t len = dot ? (size_t)(dot - p) : strlen(p);
        if (!label_n(p, len))
            return false;
        if (!dot)
            return true;
        p = dot + 1;
    }
}
