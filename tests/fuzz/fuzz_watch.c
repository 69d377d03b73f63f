/*
 * fuzz_watch.c — libFuzzer target: arbitrary bytes as a watch stream.
 *
 * The input goes through the transport's own line splitter (linesplit.h)
 * in pieces of varying size, as curl would hand over a chunked body, and
 * every line goes through the event decoder, the object decoders and into
 * the compact cache; the first byte picks the kind, so nodes,
 * namespaces, LimitRanges and the config get the same treatment as pods.
 * A line starting with '!' is fed as a list page instead (the next byte
 * picks the kind), and '#' frames a relist, so the relist-by-difference sweep runs on fuzzed state too.
 *
 * What must hold besides "no crash, no leak, no read past the input": the
 * cache stays consistent — every pod found by iteration is found again by
 * name and sits in its node's list, undecodable pods have no containers and
 * the count of those bound to no known node is right, and through the
 * controller's snapshot and reconcile no node holding an undecodable pod
 * (or any node, while one may be anywhere) gets an increase (design §6) —
 * and after deleting every pod no interned string is left behind.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cache/cache.h"
#include "cache/sink.h"
#include "controller/nodesnap.h"
#include "controller/reconcile.h"
#include "kube/transport/linesplit.h"
#include "kube/watch/watch_feed.h"
#include "watchfx.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* Design §6 through the controller's own path (snapshot, reconcile): on a
 * node holding an undecodable pod, or on every node while one may be
 * anywhere, no action raises a limit. */
static void check_booking_unknown(hr_cache *c, const char *node)
{
    hr_arena a;
    hr_arena_init(&a, 0);
    hr_nodesnap snap;
    hr_reconcile r;
    hr_err err;
    hr_nodesnap_opts o = {NULL, NULL, 0, HR_DRY_RUN_OFF, 0};
    if (hr_nodesnap_take(c, node, &o, &a, &snap, &err) == HR_OK &&
        hr_reconcile_node(&snap.cfg, &snap.node, 0, &a, &r, &err) == HR_OK) {
        bool unknown = snap.pods_nowhere > 0;
        for (size_t i = 0; i < snap.node.n; i++)
            unknown |= snap.node.pods[i].pod.undecodable;
        if (unknown != r.plan.booking_unknown)
            abort();
        for (size_t i = 0; unknown && i < r.n_actions; i++)
            if (r.actions[i].kind != HR_ACT_SKIP && r.actions[i].increase)
                abort();
    }
    hr_arena_free(&a);
}

static void check(hr_cache *c, hr_cpod_scratch *s)
{
    hr_cache_lock(c);
    uint32_t it = 0, nowhere = 0;
    hr_cpod_view v, again;
    while (hr_cache_pod_next(c, &it, &v, s)) {
        if (!hr_cache_pod_get(c, v.ns, v.name, &again, s) || again.id != v.id)
            abort();
        /* An undecodable pod has no containers; the ones bound to no
         * known node are exactly the cache's count of them. */
        if (v.pod.undecodable && v.pod.n_ctr != 0)
            abort();
        nowhere += v.pod.undecodable && v.pod.bound && !v.node;
        if (v.node) {
            uint32_t ids[64];
            size_t n = hr_cache_node_pods(c, v.node, ids, 64), k;
            for (k = 0; k < n && k < 64; k++)
                if (ids[k] == v.id)
                    break;
            if (n <= 64 && k == n)
                abort();
        }
    }
    if (nowhere != hr_cache_pods_nowhere(c))
        abort();
    /* The node names, copied: the snapshot takes the lock itself. */
    char names[32][256];
    size_t n_names = 0;
    hr_cnode_view nv;
    it = 0;
    while (n_names < 32 && hr_cache_node_next(c, &it, &nv))
        snprintf(names[n_names++], sizeof names[0], "%s", nv.name);
    hr_cache_drain(c, NULL, NULL);
    hr_cache_unlock(c);
    for (size_t i = 0; i < n_names; i++)
        check_booking_unknown(c, names[i]);
}

typedef struct fz {
    hr_watch **w;
    bool relisting[HR_CK_COUNT_];
} fz;

/* One line (a private, NUL-padded copy made by the splitter). */
static int on_line(void *ud, const char *line, size_t len)
{
    fz *z = ud;
    hr_err err;
    int k = len ? (unsigned char)line[0] % HR_CK_COUNT_ : 0;
    if (len && line[0] == '#') {
        int rk = len > 1 ? (unsigned char)line[1] % HR_CK_COUNT_ : 0;
        if (z->relisting[rk])
            hr_watch_relist_end(z->w[rk], len > 2 && line[2] == '+');
        else
            hr_watch_relist_begin(z->w[rk]);
        z->relisting[rk] = !z->relisting[rk];
    } else if (len > 1 && line[0] == '!') {
        char cont[64];
        int pk = (unsigned char)line[1] % HR_CK_COUNT_;
        /* Malformed pages fail, as they should; only crashes count here. */
        HR_IGNORE(hr_watch_feed_page(z->w[pk], line + 2, len - 2, cont, sizeof cont, &err));
    } else if (len) {
        /* In place, as the watch parses the client's lines: the splitter's
         * copy is writable and zero-padded. */
        hr_watch_feed_line_mut(z->w[k], (char *)(uintptr_t)(line + 1), len - 1);
    }
    return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    hr_cache *c;
    hr_err err;
    if (hr_cache_new(&c, &err))
        return 0;
    hr_csink *sinks[HR_CK_COUNT_] = {0};
    hr_watch *w[HR_CK_COUNT_] = {0};
    hr_ckind kinds[HR_CK_COUNT_];
    for (int k = 0; k < HR_CK_COUNT_; k++)
        kinds[k] = (hr_ckind)k;
    hr_cpod_scratch *s = malloc(sizeof *s);
    bool ok = s != NULL && watchfx_new(c, kinds, HR_CK_COUNT_, sinks, w);
    fz st = {w, {0}};
    if (ok) {
        hr_klines ls;
        hr_klines_init(&ls, 1 << 20);
        /* Piece sizes from the input itself: the splitter must not care
         * where the network cut the stream. */
        size_t i = 0, piece = 1 + (size ? data[0] % 64 : 0);
        int rc = 0;
        while (rc == 0 && i < size) {
            size_t n = size - i < piece ? size - i : piece;
            rc = hr_klines_feed(&ls, (const char *)data + i, n, on_line, &st, &err);
            i += n;
            piece = 1 + (piece * 7 + n) % 4096;
        }
        if (rc == 0) /* an over-long last line fails, as it should */
            HR_IGNORE(hr_klines_finish(&ls, on_line, &st, &err));
        hr_klines_free(&ls);
    }
    bool *relisting = st.relisting;
    for (int k = 0; ok && k < HR_CK_COUNT_; k++)
        if (relisting[k])
            hr_watch_relist_end(w[k], true);
    if (ok) {
        check(c, s);
        watchfx_sweep_all(c, w, HR_CK_COUNT_);
    }
    watchfx_free(w, sinks, HR_CK_COUNT_);
    free(s);
    hr_cache_free(c);
    return 0;
}
