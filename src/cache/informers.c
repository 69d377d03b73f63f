/*
 * informers.c — starts and stops the per-kind watches (informers.h).
 */
#include "cache/informers.h"

#include <stdlib.h>

#include "kube/watch/watch_http.h"

struct hr_informers {
    atomic_bool stop; /* read by every watch thread */
    hr_csink *sink[HR_CK_COUNT_];
    hr_watch *watch[HR_CK_COUNT_];
};

void hr_informers_free(hr_informers *in)
{
    if (!in)
        return;
    atomic_store(&in->stop, true);
    for (int k = 0; k < HR_CK_COUNT_; k++)
        hr_watch_wake(in->watch[k]); /* nothing polls the flag */
    for (int k = 0; k < HR_CK_COUNT_; k++)
        hr_watch_join(in->watch[k]);
    for (int k = 0; k < HR_CK_COUNT_; k++) {
        hr_watch_free(in->watch[k]);
        hr_csink_free(in->sink[k]);
    }
    free(in);
}

/* A watch synced: the cache's readers hear of it (hr_cache_ring), so none polls for the sync. */
static void ring(void *ud)
{
    hr_cache_ring(ud);
}

hr_status hr_informers_start(hr_cache *c, hr_kclient *k, const hr_informers_opts *o,
                             hr_informers **out, hr_err *err)
{
    *out = NULL;
    hr_informers_opts dflt = {0};
    if (!o)
        o = &dflt;
    unsigned kinds = o->kinds ? o->kinds : (1u << HR_CK_COUNT_) - 1;
    hr_informers *in = calloc(1, sizeof *in);
    if (!in)
        return hr_err_set(err, HR_E_NOMEM, "informers: out of memory");
    atomic_init(&in->stop, false);
    /* hr_informers_free wakes every watch after setting the flag: the
     * client's streams may sleep until data instead of polling it. */
    if (!o->transport && k)
        hr_kclient_streams_woken(k, true);
    hr_status st = HR_OK;
    for (int kind = 0; kind < HR_CK_COUNT_ && st == HR_OK; kind++) {
        if (!(kinds & (1u << kind)))
            continue;
        if ((st = hr_csink_new(c, (hr_ckind)kind, &in->sink[kind], err)))
            break;
        hr_watch_opts wo = {
            .resource = hr_ckind_str((hr_ckind)kind),
            .path = hr_ckind_path((hr_ckind)kind),
            .query = hr_ckind_query((hr_ckind)kind),
            .sink = hr_csink_wsink(in->sink[kind]),
            .transport = o->transport ? *o->transport : hr_watch_transport_kclient(k),
            .timeout_min_s = o->timeout_min_s,
            .timeout_max_s = o->timeout_max_s,
            .backoff_base_ms = o->backoff_base_ms,
            .backoff_max_ms = o->backoff_max_ms,
            .paged_lists = o->paged_lists,
            .protobuf = o->protobuf,
            .log = o->log,
            .log_ud = o->log_ud,
            .on_synced = ring,
            .on_synced_ud = c,
            .absent_poll_ms = !hr_ckind_optional((hr_ckind)kind) ? 0
                              : o->absent_poll_ms > 0            ? o->absent_poll_ms
                                                                 : HR_INFORMERS_ABSENT_POLL_MS,
        };
        if ((st = hr_watch_new(&wo, &in->watch[kind], err)))
            break;
        st = hr_watch_start(in->watch[kind], &in->stop, err);
    }
    if (st != HR_OK) {
        hr_informers_free(in); /* stops the threads already running */
        return st;
    }
    *out = in;
    return HR_OK;
}

bool hr_informers_synced(hr_informers *in)
{
    for (int k = 0; k < HR_CK_COUNT_; k++) {
        if (!in->watch[k])
            continue;
        hr_watch_stats s;
        hr_watch_get_stats(in->watch[k], &s);
        if (!s.synced)
            return false;
    }
    return true;
}

void hr_informers_stats(hr_informers *in, hr_ckind kind, hr_watch_stats *out)
{
    *out = (hr_watch_stats){0};
    if ((unsigned)kind < HR_CK_COUNT_ && in->watch[kind])
        hr_watch_get_stats(in->watch[kind], out);
}

uint64_t hr_informers_decode_errors(hr_informers *in, hr_ckind kind)
{
    return (unsigned)kind < HR_CK_COUNT_ ? hr_csink_decode_errors(in->sink[kind]) : 0;
}
