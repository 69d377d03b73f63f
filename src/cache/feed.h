/*
 * feed.h — the change feed (feed.c). PRIVATE to src/cache/; every function
 * expects the cache lock held.
 */
#ifndef HR_CACHE_FEED_H
#define HR_CACHE_FEED_H

#include "cache/cache_int.h"

/* Node slot node may plan differently now (NIL: nothing). */
void hr_cfeed_mark(hr_cache *c, uint32_t node);
/* Every node may (a config, a LimitRange, a quota, the undecodable count). */
void hr_cfeed_all(hr_cache *c);
/* A number that changes whenever node slot node (NIL: a node the cache
 * does not hold) is marked or every node is, and never repeats: both come
 * from one clock that only ticks forward. The controller's group memo
 * (controller/nodememo.h) keeps a node's plan while it holds. */
uint64_t hr_cfeed_version(const hr_cache *c, uint32_t node);
size_t hr_cfeed_drain(hr_cache *c, void (*fn)(void *ud, const char *node), void *ud);
size_t hr_cfeed_dirty_count(const hr_cache *c);

#endif
