/*
 * quotas.c — the ResourceQuota store, one bit per object ("bounds
 * limits.cpu"), as rows of a small table (store.c writes the put, delete
 * and sweep of rows), and the names of the namespaces that have one.
 *
 * Why one bit and no dirty node: a quota does not change what a limit
 * should be, only whether the API server lets us raise it (the 403 is an
 * outcome, design §7); the HeadroomConfig status and `preflight` name the
 * managed namespaces with such a quota so an operator sees it coming.
 */
#include "cache/quotas.h"

#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include "cache/namespaces.h"
#include "cache/store.h"
#include "core/eligibility.h"

_Static_assert(offsetof(cquota, limits_cpu) == sizeof(crow), "a row's payload follows its header");

hr_status hr_cquotas_put(hr_cache *c, const hr_kquota *q, hr_err *err)
{
    return hr_crows_put(c, HR_CK_QUOTA, &q->meta, &q->limits_cpu, sizeof q->limits_cpu, err);
}

static const cquota *quota_at(const hr_cache *c, uint32_t i)
{
    return (const cquota *)row_at(&c->quotas, i);
}

size_t hr_cquotas_namespaces(const hr_cache *c, const char **out, size_t cap)
{
    size_t n = 0;
    for (uint32_t i = 0; i < c->quotas.n; i++) {
        if (!quota_at(c, i)->limits_cpu)
            continue;
        bool seen = false;
        for (uint32_t j = 0; j < i && !seen; j++)
            seen = quota_at(c, j)->limits_cpu && quota_at(c, j)->h.ns == quota_at(c, i)->h.ns;
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
