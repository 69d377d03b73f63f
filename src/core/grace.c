/*
 * grace.c — who is in the startup grace, and until when (grace.h).
 */
#include "grace.h"

#include <string.h>

#include "names.h"

hr_grace_opt hr_grace_opt_parse(const char *value)
{
    if (value == NULL)
        return HR_GRACE_UNSET;
    return strcmp(value, "true") == 0 ? HR_GRACE_ON : HR_GRACE_OFF;
}

int64_t hr_grace_until(const hr_config *c, const hr_pod *p, const hr_labels *ns_labels,
                       int64_t now_s)
{
    if (c->startup_grace_s <= 0 || now_s <= 0 || p->ready)
        return HR_NONE;
    hr_grace_opt opt = (hr_grace_opt)p->grace_opt;
    if (opt == HR_GRACE_UNSET)
        opt =
            hr_grace_opt_parse(ns_labels != NULL ? hr_labels_get(ns_labels, HR_LABEL_GRACE) : NULL);
    if (opt != HR_GRACE_ON)
        return HR_NONE;
    int64_t start = p->start_s != 0 && (int64_t)p->start_s <= now_s ? (int64_t)p->start_s : now_s;
    int64_t until = start + c->startup_grace_s;
    return now_s < until ? until : HR_NONE;
}

int64_t hr_grace_end(const hr_config *c, const hr_pod *p)
{
    return p->in_grace ? (int64_t)p->start_s + c->startup_grace_s : HR_NONE;
}
