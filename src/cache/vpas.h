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
/* The first VPA of namespace ns that writes the CPU limit of a container
 * of pod the policy manages; hr_cvpas_writer asks it for a cached pod. */
const char *hr_cvpas_writer_of(const hr_cache *c, const char *ns, const hr_vpa_owner *owner,
                               const hr_pod *pod, const char *const *names);
const char *hr_cvpas_writer(const hr_cache *c, const hr_cpod_view *v);

#endif
