/*
 * namespaces.h — the namespace store (namespaces.c). PRIVATE to
 * src/cache/; every function expects the cache lock held.
 */
#ifndef HR_CACHE_NAMESPACES_H
#define HR_CACHE_NAMESPACES_H

#include "cache/cache_int.h"

extern const cstore hr_cnss_store;

HR_MUST_CHECK hr_status hr_cnss_put(hr_cache *c, const hr_knamespace *k, hr_err *err);
bool hr_cnss_get(const hr_cache *c, const char *name, hr_cns_view *out);
bool hr_cnss_next(const hr_cache *c, uint32_t *iter, hr_cns_view *out);

#endif
