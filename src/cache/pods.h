/*
 * pods.h — the pod store and the per-node index (pods.c). PRIVATE to
 * src/cache/; every function expects the cache lock held. Each one is the
 * body of the cache.h entry point of the same meaning.
 */
#ifndef HR_CACHE_PODS_H
#define HR_CACHE_PODS_H

#include "cache/cache_int.h"

extern const cstore hr_cpods_store;

HR_MUST_CHECK hr_status hr_cpods_put(hr_cache *c, const hr_kpod *p, const hr_cpod_status *s,
                                     hr_err *err);
bool hr_cpods_uid(const hr_cache *c, const char *ns, const char *name, uint8_t uid[16]);
bool hr_cpods_get(const hr_cache *c, const char *ns, const char *name, hr_cpod_view *out,
                  hr_cpod_scratch *s);
bool hr_cpods_at(const hr_cache *c, uint32_t id, hr_cpod_view *out, hr_cpod_scratch *s);
bool hr_cpods_next(const hr_cache *c, uint32_t *iter, hr_cpod_view *out, hr_cpod_scratch *s);
size_t hr_cpods_of_node(const hr_cache *c, const char *node, uint32_t *ids, size_t cap);
void hr_cpods_free(hr_cache *c);

#endif
