/*
 * selector.c — label selector evaluation (metav1.LabelSelector semantics).
 */
#include "selector.h"

#include <string.h>

const char *hr_labels_get(const hr_labels *l, const char *key)
{
    if (l == NULL)
        return NULL;
    for (uint32_t i = 0; i < l->n; i++)
        if (strcmp(l->kv[2 * i], key) == 0)
            return l->kv[2 * i + 1];
    return NULL;
}

static bool in_values(const hr_requirement *r, const char *v)
{
    for (uint32_t i = 0; i < r->n_values; i++)
        if (strcmp(r->values[i], v) == 0)
            return true;
    return false;
}

bool hr_selector_matches(const hr_selector *s, const hr_labels *l)
{
    if (s == NULL || !s->set)
        return false;
    for (uint32_t i = 0; i < s->n; i++) {
        const hr_requirement *r = &s->req[i];
        const char *v = hr_labels_get(l, r->key);
        bool ok;
        switch (r->op) {
        case HR_SEL_IN: ok = v != NULL && in_values(r, v); break;
        case HR_SEL_NOT_IN: ok = v == NULL || !in_values(r, v); break;
        case HR_SEL_EXISTS: ok = v != NULL; break;
        case HR_SEL_DOES_NOT_EXIST: ok = v == NULL; break;
        default: ok = false; break; /* unknown operator: fail closed */
        }
        if (!ok)
            return false;
    }
    return true;
}
