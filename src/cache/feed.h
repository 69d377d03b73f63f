/*
 * feed.h — the change feed (feed.c). PRIVATE to src/cache/; every function
 * expects the cache lock held.
 */
#ifndef HR_CACHE_FEED_H
#define HR_CACHE_FEED_H

#include "cache/cache_int.h"

/* Node slot node may plan differently now (NIL: nothing). */
void hr_cfeed_mark(hr_cache *c, uint32_t node);
size_t hr_cfeed_drain(hr_cache *c, void (*fn)(void *ud, const char *node), void *ud);
size_t hr_cfeed_dirty_count(const hr_cache *c);

#endif
