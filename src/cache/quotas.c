/*
 * quotas.c — the ResourceQuota store, each object's limits.cpu (hard and
 * used), as rows of a small table (store.c writes the put, delete and
 * sweep of rows), the names of the namespaces that have one, and a
 * namespace's tightest one (the quota cap, design §2.3).
 *
 * A change of a quota's limits.cpu marks every node dirty (its namespace's
 * pods may sit on any node): only quotas that bound limits.cpu have a used
 * figure that moves, and a quota without it keeps an unchanging payload.
 */
#include "cache/quotas.h"

#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include "cache/namespaces.h"
#include "cache/store.h"
#include "core/eligibility.h"
#include "core/quota.h"

_Static_assert(offsetof(cquota, cpu) == sizeof(crow), "a row's payload follows its header");
_Static_assert(sizeof(cquota_cpu) == 2 * sizeof(int64_t), "the payload has no padding");

hr_status hr_cquotas_put(hr_cache *c, const hr_kquota *q, hr_err *err)
{
    cquota_cpu p = {HR_NONE, HR_NONE};
    if (q->limits_cpu) {
        /* A quota that bounds limits.cpu with no figure we can read (an
         * undecodable one, sink.c) has no room: fail closed. */
        p.hard = q->hard_cpu != HR_NONE ? q->hard_cpu : 0;
        p.used = q->hard_cpu != HR_NONE ? q->used_cpu : 0;
    }
    return hr_crows_put(c, HR_CK_QUOTA, &q->meta, &p, sizeof p, err);
}

static const cquota *quota_at(const hr_cache *c, uint32_t i)
{
    return (const cquota *)row_at(&c->quotas, i);
}

void hr_cquotas_ns(const hr_cache *c, const char *ns, hr_ns_quota *out)
{
    uint32_t nsid = hr_intern_find(&c->str, ns, strlen(ns));
    *out = (hr_ns_quota){.on = false};
    for (uint32_t i = 0; nsid != 0 && i < c->quotas.n; i++) {
        const cquota *q = quota_at(c, i);
        if (q->h.ns == nsid && q->cpu.hard != HR_NONE)
            hr_ns_quota_fold(out, q->cpu.hard, q->cpu.used);
    }
}

size_t hr_cquotas_namespaces(const hr_cache *c, const char **out, size_t cap)
{
    size_t n = 0;
    for (uint32_t i = 0; i < c->quotas.n; i++) {
        if (quota_at(c, i)->cpu.hard == HR_NONE)
            continue;
        bool seen = false;
        for (uint32_t j = 0; j < i && !seen; j++)
            seen =
                quota_at(c, j)->cpu.hard != HR_NONE && quota_at(c, j)->h.ns == quota_at(c, i)->h.ns;
        if (seen)
            continue;
        if (n < cap)
            out[n] = hr_intern_str(&c->str, quota_at(c, i)->h.ns);
        n++;
    }
    return n;
}

static int cmp_cstr(const void *a, const void *b)
{
    return strcmp(*(const char *const *)a, *(const char *const *)b);
}

hr_status hr_cquotas_managed(const hr_cache *c, const char *own_ns, const char ***out, size_t *n,
                             hr_err *err)
{
    *out = NULL;
    *n = 0;
    size_t total = hr_cquotas_namespaces(c, NULL, 0);
    if (total == 0)
        return HR_OK;
    const char **ns = malloc(total * sizeof *ns);
    if (!ns)
        return hr_err_set(err, HR_E_NOMEM, "cache: out of memory");
    size_t got = hr_cquotas_namespaces(c, ns, total);
    if (got < total)
        total = got; /* the same set both times (the lock is held); read only what was written */
    size_t kept = 0;
    for (size_t i = 0; i < total; i++) {
        hr_cns_view v;
        if (hr_cnss_get(c, ns[i], &v) &&
            hr_namespace_state(&c->cfg, ns[i], &v.labels, own_ns) == HR_NS_MANAGED)
            ns[kept++] = ns[i];
    }
    qsort(ns, kept, sizeof *ns, cmp_cstr);
    *out = ns;
    *n = kept;
    return HR_OK;
}
