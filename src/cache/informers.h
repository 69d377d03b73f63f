/*
 * informers.h — one list/watch per cached kind, each on its own thread,
 * all feeding one cache (design §5).
 *
 * The controller starts this once and reads the cache; hr_informers_free
 * stops and joins every thread (each notices within half a second).
 */
#ifndef HR_CACHE_INFORMERS_H
#define HR_CACHE_INFORMERS_H

#include <stdbool.h>

#include "cache/cache.h"
#include "cache/sink.h"
#include "kube/transport/client.h"
#include "kube/watch/watch.h"

typedef struct hr_informers hr_informers;

/* How often the watch of an optional kind that is not served asks again (hr_ckind_optional,
 * hr_watch_opts.absent_poll_ms): a CRD installed while we run is watched within this long,
 * and until then it costs one 404 GET per period, as the HeadroomConfig's watch back-off does
 * at its longest. */
#define HR_INFORMERS_ABSENT_POLL_MS 30000

typedef struct hr_informers_opts {
    unsigned kinds;    /* bit (1u << hr_ckind); 0: all kinds */
    int timeout_min_s; /* watch timeouts, see hr_watch_opts; 0: default */
    int timeout_max_s;
    long backoff_base_ms;
    long backoff_max_ms;
    bool paged_lists;    /* every list by pages, never streamed (hr_watch_opts) */
    bool protobuf;       /* ask for protobuf, except for the HeadroomConfig (hr_watch_opts) */
    long absent_poll_ms; /* an optional kind not served asks again this often; 0:
                            HR_INFORMERS_ABSENT_POLL_MS */
    hr_log_sink log;     /* NULL: logfmt on stderr */
    void *log_ud;
    /* The transport every watch lists and streams through; NULL: the
     * client's (hr_watch_transport_kclient). Tests put an in-process API
     * server here (tests/stress/stress_churn.c); k may then be NULL. */
    const hr_wtransport *transport;
} hr_informers_opts;

HR_MUST_CHECK hr_status hr_informers_start(hr_cache *c, hr_kclient *k, const hr_informers_opts *o,
                                           hr_informers **out, hr_err *err);

/* Every started kind has completed its first list. */
bool hr_informers_synced(hr_informers *in);

/* Counters of one kind (zeroes when it was not started). */
void hr_informers_stats(hr_informers *in, hr_ckind kind, hr_watch_stats *out);

/* Objects of one kind that could not be decoded (hr_csink_decode_errors;
 * 0 when the kind was not started). */
uint64_t hr_informers_decode_errors(hr_informers *in, hr_ckind kind);

/* Stops and joins the threads, frees everything. */
void hr_informers_free(hr_informers *in);

#endif
