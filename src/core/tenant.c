/*
 * tenant.c — the kube-headroom.dev/weight label of a namespace (tenant.h).
 */
#include "tenant.h"

#include <stddef.h>

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
