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
#include "util/clock.h"

static double now(void)
{
    return (double)hr_mono_ns() / 1e9;
}

/* One watch event, ~8 KB, shaped like the API server's. */
static char *make_event(size_t *len)
{
    size_t cap = 16384, n = 0;
    char *b = malloc(cap);
    if (!b)
        return NULL;
    n += (size_t)snprintf(
        b + n, cap - n,
        "{\"type\":\"MODIFIED\",\"object\":{\"apiVersion\":\"v1\",\"kind\":\"Pod\","
        "\"metadata\":{\"name\":\"web-7d9f8b6c4-x2k9p\",\"namespace\":\"team-a\","
        "\"uid\":\"0b7e6f0e-23a4-4c07-b5c2-5a8f2ad7e003\",\"resourceVersion\":\"4812337\","
        "\"generation\":3,\"creationTimestamp\":\"2026-11-02T09:14:07Z\","
        "\"labels\":{\"app.kubernetes.io/name\":\"web\",\"app.kubernetes.io/part-of\":\"shop\","
        "\"pod-template-hash\":\"7d9f8b6c4\",\"team\":\"a\"},"
        "\"annotations\":{\"kube-headroom.dev/status\":\"{\\\"factor\\\":\\\"2.00\\\"}\","
        "\"prometheus.io/scrape\":\"true\"},"
        "\"ownerReferences\":[{\"apiVersion\":\"apps/v1\",\"kind\":\"ReplicaSet\","
        "\"name\":\"web-7d9f8b6c4\",\"uid\":\"c0c0c0c0-0000-4000-8000-000000000001\","
        "\"controller\":true,\"blockOwnerDeletion\":true}],\"managedFields\":[");
    for (int m = 0; m < 16 && n < 7600; m++)
        n += (size_t)snprintf(
            b + n, cap - n,
            "%s{\"manager\":\"kube-controller-manager\",\"operation\":\"Update\","
            "\"apiVersion\":\"v1\",\"time\":\"2026-11-02T09:14:07Z\",\"fieldsType\":"
            "\"FieldsV1\",\"fieldsV1\":{\"f:metadata\":{\"f:labels\":{\".\":{},"
            "\"f:app\":{},\"f:team\":{}},\"f:ownerReferences\":{\".\":{}}},"
            "\"f:spec\":{\"f:containers\":{\"k:{\\\"name\\\":\\\"app\\\"}\":{\".\":{},"
            "\"f:image\":{},\"f:imagePullPolicy\":{},\"f:name\":{},\"f:ports\":{},"
            "\"f:resources\":{\".\":{},\"f:limits\":{\".\":{},\"f:cpu\":{}},"
            "\"f:requests\":{\".\":{},\"f:cpu\":{},\"f:memory\":{}}}}}}}}",
            m ? "," : "");
    n += (size_t)snprintf(
        b + n, cap - n,
        "]},\"spec\":{\"nodeName\":\"node-017\",\"restartPolicy\":\"Always\","
        "\"initContainers\":[{\"name\":\"envoy\",\"image\":\"envoy:1.33\",\"restartPolicy\":"
        "\"Always\",\"resources\":{\"requests\":{\"cpu\":\"200m\",\"memory\":\"128Mi\"},"
        "\"limits\":{\"cpu\":\"400m\",\"memory\":\"128Mi\"}}}],"
        "\"containers\":[{\"name\":\"app\",\"image\":\"web:4.2\",\"resources\":{\"requests\":"
        "{\"cpu\":\"1\",\"memory\":\"512Mi\"},\"limits\":{\"cpu\":\"2\",\"memory\":\"512Mi\"}},"
        "\"resizePolicy\":[{\"resourceName\":\"cpu\",\"restartPolicy\":\"NotRequired\"}]}]},"
        "\"status\":{\"phase\":\"Running\",\"qosClass\":\"Burstable\",\"containerStatuses\":["
        "{\"name\":\"app\",\"ready\":true,\"restartCount\":0,\"resources\":{\"requests\":"
        "{\"cpu\":\"1\"},\"limits\":{\"cpu\":\"2\"}}}],\"initContainerStatuses\":[{\"name\":"
        "\"envoy\",\"resources\":{\"requests\":{\"cpu\":\"200m\"}}}]}}}");
    *len = n;
    return b;
}

int main(void)
{
    size_t len;
    char *ev = make_event(&len);
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
