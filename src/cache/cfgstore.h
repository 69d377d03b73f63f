/*
 * cfgstore.h — the HeadroomConfig store (cfgstore.c). PRIVATE to src/cache/
 * (the config itself is core/config.h); every function but
 * hr_ccfg_copy_status expects the cache lock held.
 */
#ifndef HR_CACHE_CFGSTORE_H
#define HR_CACHE_CFGSTORE_H

#include "cache/cache_int.h"

extern const cstore hr_ccfg_store;

void hr_ccfg_init(hr_cache *c);
void hr_ccfg_free(hr_cache *c);

/* True when it took *a over (leaving it empty); false when the config
 * is not ours or changes nothing, and *a is the caller's to free. */
bool hr_ccfg_put(hr_cache *c, const hr_kconfig *k, int64_t generation, hr_arena *a);
void hr_ccfg_invalid(hr_cache *c, const char *msg);
/* The status in two steps, so the copying happens outside the lock: copy
 * s into a fresh arena *a (no lock needed), then swap it in. */
HR_MUST_CHECK hr_status hr_ccfg_copy_status(const hr_kcfg_status *s, hr_arena *a, hr_kcfg_status *t,
                                            hr_err *err);
void hr_ccfg_set_status(hr_cache *c, const hr_arena *a, const hr_kcfg_status *t);
const hr_config *hr_ccfg_get(const hr_cache *c, const char **invalid);
bool hr_ccfg_object(const hr_cache *c, int64_t *gen_in_force, const hr_kcfg_status **status);

#endif
