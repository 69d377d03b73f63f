/*
 * sink.h — feeds the cache from list/watch (kube/watch/watch.h).
 *
 * One sink per watched kind: it decodes each object with the shared
 * decoders (kube/decode/decode.h) into a scratch arena, hands the compact result
 * to the cache, and throws the JSON and the scratch away. Deletions need
 * only the object's namespace and name, so a DELETED event whose body the
 * decoder would refuse still deletes. An object that cannot be decoded is
 * never dropped silently (design §15): what is kept of it, per kind, and
 * the once-per-object report are in sink.c's header comment.
 */
#ifndef HR_CACHE_SINK_H
#define HR_CACHE_SINK_H

#include "cache/cache.h"
#include "kube/watch/watch.h"

typedef struct hr_csink hr_csink;

HR_MUST_CHECK hr_status hr_csink_new(hr_cache *c, hr_ckind kind, hr_csink **out, hr_err *err);
void hr_csink_free(hr_csink *s);

/* Objects of this sink's kind that could not be decoded, each counted once
 * per episode (headroom_decode_errors_total{resource}). Any thread. */
uint64_t hr_csink_decode_errors(const hr_csink *s);

/* The watch.h sink interface of this sink. */
hr_wsink hr_csink_wsink(hr_csink *s);

/* Where a kind is listed and watched, and its extra query (or NULL). */
const char *hr_ckind_path(hr_ckind k);
const char *hr_ckind_query(hr_ckind k);
/* May the kind be not served, and come and go while we run (a CRD someone else installs:
 * VerticalPodAutoscalers, design §4)? Its watch then takes a 404 as "none exist"
 * (hr_watch_opts.absent_poll_ms). */
bool hr_ckind_optional(hr_ckind k);

#endif
