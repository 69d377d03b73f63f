/*
 * tenant.c — the kube-headroom.dev/weight label of a namespace (tenant.h).
 */
#include "tenant.h"

#include <stddef.h>
#include <string.h>

#include "names.h"

uint32_t hr_tenant_weight_parse(const char *value, bool *invalid)
{
    bool bad = false;
    uint64_t w = 0;
    if (value != NULL) {
        bad = value[0] == '\0';
        for (const char *c = value; !bad && *c; c++) {
            /* A digit that keeps w within the maximum, or the label is bad. */
            bad =
                *c < '0' || *c > '9' || (w = w * 10 + (uint64_t)(*c - '0')) > HR_TENANT_WEIGHT_MAX;
        }
        bad = bad || w == 0;
    }
    if (invalid != NULL)
        *invalid = bad;
    return value == NULL || bad ? 1 : (uint32_t)w;
}

uint32_t hr_tenant_weight(const hr_labels *ns_labels, bool *invalid)
{
    const char *v = ns_labels != NULL ? hr_labels_get(ns_labels, HR_LABEL_WEIGHT) : NULL;
    return hr_tenant_weight_parse(v, invalid);
}

const char *hr_tenant_of(const char *key, const char *ns, const hr_labels *ns_labels,
                         bool *by_label)
{
    const char *v =
        ns_labels != NULL ? hr_labels_get(ns_labels, key != NULL ? key : HR_LABEL_TENANT) : NULL;
    bool lab = v != NULL && v[0] != '\0';
    if (by_label != NULL)
        *by_label = lab;
    return lab ? v : ns;
}

static bool alnum(char c)
{
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9');
}

/* 1 to max characters of alnum and the extra ones, alnum at both ends. */
static bool word_ok(const char *s, size_t n, size_t max, const char *extra)
{
    if (n == 0 || n > max || !alnum(s[0]) || !alnum(s[n - 1]))
        return false;
    for (size_t i = 0; i < n; i++)
        if (!alnum(s[i]) && strchr(extra, s[i]) == NULL)
            return false;
    return true;
}

bool hr_label_key_valid(const char *key)
{
    if (key == NULL)
        return false;
    const char *slash = strchr(key, '/');
    if (slash == NULL)
        return word_ok(key, strlen(key), 63, "-_.");
    /* The prefix: DNS labels of lower-case letters, digits and '-'. */
    size_t pn = (size_t)(slash - key);
    if (pn == 0 || pn > 253)
        return false;
    for (const char *p = key, *e; p < slash; p = e + 1) {
        e = memchr(p, '.', (size_t)(slash - p));
        if (e == NULL)
            e = slash;
        for (const char *q = p; q < e; q++)
            if (*q >= 'A' && *q <= 'Z')
                return false;
        if (!word_ok(p, (size_t)(e - p), 63, "-"))
            return false;
    }
    return word_ok(slash + 1, strlen(slash + 1), 63, "-_.");
}
