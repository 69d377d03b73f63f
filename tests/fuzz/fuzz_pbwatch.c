/*
 * fuzz_pbwatch.c — libFuzzer target: arbitrary bytes as a protobuf watch
 * stream (application/vnd.kubernetes.protobuf;stream=watch) or a
 * protobuf List page, through the watch and into the compact cache.
 *
 * Byte 0 picks the piece size the stream is cut into (the frame splitter,
 * kube/transport/framesplit.h, must not care where the network cut it);
 * byte 1 picks the kind (pods, nodes, namespaces, LimitRanges,
 * ResourceQuotas: the kinds that have protobuf) and, in its top bits,
 * whether the rest is a List page (hr_watch_feed_page_pb) instead of a
 * stream, and whether it is framed as a relist. Every frame goes through
 * the watch's own frame handling (hr_watch_feed_frame: the envelope, the
 * event, the bookmark's annotations, a Status) and the sink's protobuf
 * decoders, or their undecodable-object path. A frame the watch refuses
 * ends the stream, as in the client.
 *
 * What must hold besides "no crash, no leak, no read past the input": a
 * frame longer than the splitter's bound is an error, never a buffer of
 * that size; every pod found by iteration is found again by name and an
 * undecodable one has no containers; and after every kind is relisted
 * empty no record and no interned string is left. The seed corpus
 * (corpus/pbwatch) is the real API server's frames and Lists
 * (corpus/protobuf, the same bytes) behind the two header bytes.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cache/cache.h"
#include "cache/sink.h"
#include "kube/transport/framesplit.h"
#include "kube/watch/watch_feed.h"
#include "watchfx.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static const hr_ckind kinds[] = {HR_CK_POD, HR_CK_NODE, HR_CK_NAMESPACE, HR_CK_LIMITRANGE,
                                 HR_CK_QUOTA};
#define N_KINDS (sizeof kinds / sizeof kinds[0])

static int on_frame(void *ud, const char *f, size_t len)
{
    /* A frame the watch refuses ends the stream (watch.c's on_frame). */
    return hr_watch_feed_frame(ud, (const uint8_t *)f, len) == HR_WL_OK ? 0 : 1;
}

static void check(hr_cache *c, hr_cpod_scratch *s)
{
    hr_cache_lock(c);
    uint32_t it = 0;
    hr_cpod_view v, again;
    while (hr_cache_pod_next(c, &it, &v, s)) {
        if (!hr_cache_pod_get(c, v.ns, v.name, &again, s) || again.id != v.id)
            abort();
        if (v.pod.undecodable && v.pod.n_ctr != 0)
            abort();
    }
    hr_cache_drain(c, NULL, NULL);
    hr_cache_unlock(c);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size < 2)
        return 0;
    hr_cache *c;
    hr_err err;
    if (hr_cache_new(&c, &err))
        return 0;
    hr_csink *sinks[N_KINDS] = {0};
    hr_watch *w[N_KINDS] = {0};
    hr_cpod_scratch *s = malloc(sizeof *s);
    bool ok = s != NULL && watchfx_new(c, kinds, N_KINDS, sinks, w);
    if (ok) {
        size_t piece = 1 + data[0] % 64;
        hr_watch *wk = w[(data[1] & 0x0f) % N_KINDS];
        bool page = data[1] & 0x80, relist = data[1] & 0x40;
        const uint8_t *p = data + 2;
        size_t n = size - 2;
        if (relist)
            hr_watch_relist_begin(wk);
        if (page) {
            char cont[64];
            /* Malformed pages fail, as they should; only crashes count here. */
            HR_IGNORE(hr_watch_feed_page_pb(wk, p, n, cont, sizeof cont, &err));
        } else {
            hr_kframes fs;
            /* A small bound, so over-long frames are found, not allocated. */
            hr_kframes_init(&fs, 1 << 20);
            size_t i = 0;
            int rc = 0;
            while (rc == 0 && i < n) {
                size_t m = n - i < piece ? n - i : piece;
                rc = hr_kframes_feed(&fs, (const char *)p + i, m, on_frame, wk, &err);
                i += m;
                piece = 1 + (piece * 7 + m) % 4096;
            }
            if (rc < 0 && err.code != HR_E_LIMIT && err.code != HR_E_NOMEM)
                abort();
            if (fs.cap > ((size_t)1 << 20) * 2 + 64)
                abort(); /* buffered beyond the bound */
            hr_kframes_free(&fs);
        }
        if (relist)
            hr_watch_relist_end(wk, data[1] & 0x20);
        check(c, s);
        watchfx_sweep_all(c, w, N_KINDS);
    }
    watchfx_free(w, sinks, N_KINDS);
    free(s);
    hr_cache_free(c);
    return 0;
}
