/*
 * bench_decode.c — how fast the Pod decoder turns watch events into core
 * views (design §16: ≥ 100k realistic pod events per second on one core,
 * objects with managedFields, ~8 KB).
 *
 * Each round parses one event line with yyjson (as the watch reader will:
 * one line, one document) and decodes its object into a reused arena. The
 * reference run in the same process is yyjson's parse alone, so the ratio
 * shows what decoding adds on top of reading the bytes at all.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <yyjson.h>

#include "kube/decode/decode.h"
#include "podevent.h"
#include "util/clock.h"

static double now(void)
{
    return (double)hr_mono_ns() / 1e9;
}

int main(void)
{
    size_t len;
    char *ev = hr_bench_pod_event_json(&len);
    if (!ev)
        return 1;
    const int rounds = 200000;
    hr_arena a;
    hr_arena_init(&a, 4096);
    hr_err err;
    size_t sink = 0;

    double t0 = now();
    for (int i = 0; i < rounds; i++) {
        yyjson_doc *d = yyjson_read(ev, len, 0);
        if (!d)
            return 1;
        sink += yyjson_doc_get_val_count(d);
        yyjson_doc_free(d);
    }
    double parse_only = now() - t0;

    t0 = now();
    for (int i = 0; i < rounds; i++) {
        yyjson_doc *d = yyjson_read(ev, len, 0);
        if (!d)
            return 1;
        hr_kpod kp;
        if (hr_decode_pod(yyjson_obj_get(yyjson_doc_get_root(d), "object"), &a, &kp, &err)) {
            fprintf(stderr, "%s\n", err.msg);
            return 1;
        }
        sink += kp.pod.n_ctr;
        yyjson_doc_free(d);
        hr_arena_free(&a); /* the cache would copy out what it keeps */
    }
    double full = now() - t0;
    printf("decode: event size %zu bytes, %d events\n", len, rounds);
    printf("decode: parse only     %8.0f events/s  (%.2f us/event)\n", rounds / parse_only,
           parse_only / rounds * 1e6);
    printf("decode: parse + decode %8.0f events/s  (%.2f us/event)  budget 100000/s\n",
           rounds / full, full / rounds * 1e6);
    printf("decode: ratio full/parse-only %.2f  (sink %zu)\n", full / parse_only, sink);
    free(ev);
    return 0;
}
