/*
 * quotas.h — the ResourceQuota store (quotas.c), rows of a small table.
 * PRIVATE to src/cache/; every function expects the cache lock held.
 */
#ifndef HR_CACHE_QUOTAS_H
#define HR_CACHE_QUOTAS_H

#include "cache/cache_int.h"
#include "core/quota.h"

HR_MUST_CHECK hr_status hr_cquotas_put(hr_cache *c, const hr_kquota *q, hr_err *err);
size_t hr_cquotas_namespaces(const hr_cache *c, const char **out, size_t cap);
void hr_cquotas_ns(const hr_cache *c, const char *ns, hr_ns_quota *out);
HR_MUST_CHECK hr_status hr_cquotas_managed(const hr_cache *c, const char *own_ns, const char ***out,
                                           size_t *n, hr_err *err);

#endif
