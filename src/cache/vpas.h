/*
 * vpas.h — the VerticalPodAutoscaler store (vpas.c), rows of a small table.
 * PRIVATE to src/cache/; every function expects the cache lock held.
 */
#ifndef HR_CACHE_VPAS_H
#define HR_CACHE_VPAS_H

#include "cache/cache_int.h"

HR_MUST_CHECK hr_status hr_cvpas_put(hr_cache *c, const hr_kvpa *v, hr_err *err);
/* crows.release of the table: the payload's interned strings back. */
void hr_cvpas_release(hr_cache *c, const void *payload);
const char *hr_cvpas_writer(const hr_cache *c, const hr_cpod_view *v);

#endif
