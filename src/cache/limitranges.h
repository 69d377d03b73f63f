/*
 * limitranges.h — the LimitRange store (limitranges.c), rows of a small
 * table. PRIVATE to src/cache/; every function expects the cache lock held.
 */
#ifndef HR_CACHE_LIMITRANGES_H
#define HR_CACHE_LIMITRANGES_H

#include "cache/cache_int.h"

HR_MUST_CHECK hr_status hr_clrs_put(hr_cache *c, const hr_klimitrange *l, hr_err *err);
hr_limit_bounds hr_clrs_bounds(const hr_cache *c, const char *ns);
size_t hr_clrs_count(const hr_cache *c);

#endif
