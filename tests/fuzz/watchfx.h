/*
 * watchfx.h — what the two watch fuzzers share (fuzz_watch.c: JSON lines,
 * fuzz_pbwatch.c: protobuf frames): a cache with one watch per kind over a
 * transport that has no network, and the end of every run, where everything
 * is swept out again and nothing may be left in the cache.
 *
 * Header only (each fuzzer is one source file, tests/CMakeLists.txt): static
 * functions, included by one fuzzer each.
 */
#ifndef HR_TESTS_FUZZ_WATCHFX_H
#define HR_TESTS_FUZZ_WATCHFX_H

#include <stdbool.h>
#include <stddef.h>
#include <stdlib.h>

#include "cache/cache.h"
#include "cache/sink.h"
#include "kube/watch/watch_feed.h"

static hr_status watchfx_no_get(void *ud, const char *path, hr_buf *resp, hr_kresult *res,
                                hr_err *err)
{
    (void)ud, (void)path, (void)resp, (void)res;
    return hr_err_set(err, HR_E_IO, "no network in the fuzzer");
}

static hr_status watchfx_no_stream(void *ud, const char *path, long t, hr_kline_fn f, void *lu,
                                   const atomic_bool *stop, hr_kresult *res, hr_err *err)
{
    (void)ud, (void)path, (void)t, (void)f, (void)lu, (void)stop, (void)res;
    return hr_err_set(err, HR_E_IO, "no network in the fuzzer");
}

static void watchfx_quiet(void *ud, int level, const char *msg)
{
    (void)ud, (void)level, (void)msg;
}

/* A sink and a watch for each of kinds[0..n) into c (sinks[], w[] zeroed by the caller); false
 * when one could not be made (watchfx_free frees what was). */
static bool watchfx_new(hr_cache *c, const hr_ckind *kinds, size_t n, hr_csink **sinks,
                        hr_watch **w)
{
    hr_err err;
    bool ok = true;
    for (size_t k = 0; ok && k < n; k++) {
        ok = hr_csink_new(c, kinds[k], &sinks[k], &err) == HR_OK;
        hr_watch_opts o = {
            .resource = hr_ckind_str(kinds[k]),
            .path = "/fuzz",
            .sink = ok ? hr_csink_wsink(sinks[k]) : (hr_wsink){0},
            .transport = {NULL, watchfx_no_get, watchfx_no_stream, NULL, false, NULL, NULL, NULL},
            .log = watchfx_quiet,
            .seed = 1};
        ok = ok && hr_watch_new(&o, &w[k], &err) == HR_OK;
    }
    return ok;
}

/* Everything out again (an empty relist of each watch): nothing may be left behind. */
static void watchfx_sweep_all(hr_cache *c, hr_watch **w, size_t n)
{
    for (size_t k = 0; k < n; k++) {
        hr_watch_relist_begin(w[k]);
        hr_watch_relist_end(w[k], true);
    }
    hr_cache_lock(c);
    hr_cache_drain(c, NULL, NULL);
    hr_cache_stats cs;
    hr_cache_get_stats(c, &cs);
    hr_cache_unlock(c);
    if (cs.pods || cs.nodes || cs.node_placeholders || cs.namespaces || cs.limitranges ||
        cs.quotas || cs.strings || hr_cache_pods_nowhere(c))
        abort();
}

static void watchfx_free(hr_watch **w, hr_csink **sinks, size_t n)
{
    for (size_t k = 0; k < n; k++) {
        hr_watch_free(w[k]);
        hr_csink_free(sinks[k]);
    }
}

#endif
