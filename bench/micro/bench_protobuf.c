/*
 * bench_protobuf.c — protobuf watch-event decode throughput on one core,
 * beside JSON's in the same run (goal >= 500k events/s with ~8 KB pods;
 * design §5 "Wire format").
 *
 * The pod is podevent.h's (the one bench_decode reads): the JSON event
 * line as the API server writes it, and the same object in protobuf, built
 * here with Kubernetes' field numbers and framed as a watch stream frame
 * (4-byte big-endian length, WatchEvent{type, object RawExtension{raw =
 * "k8s\0" + runtime.Unknown}}). Both paths do what the cache's sink needs
 * per event: JSON parse + hr_decode_pod + hr_decode_pod_status; protobuf
 * frame + envelope + event + resourceVersion (hr_wevent_pb, the watch's
 * own reading of a frame) + hr_pbdecode_pod with the status. The two decoded
 * views are compared first, so both paths read the same pod.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <yyjson.h>

#include "kube/decode/decode.h"
#include "kube/decode/pb.h"
#include "kube/watch/wevent.h"
#include "podevent.h"
#include "util/buf.h"
#include "util/clock.h"

/* The thread's CPU time: what one core spends, whatever else the machine
 * runs (a shared machine's wall clock mostly measures the neighbours). */
static double cpu_now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static double now(void)
{
    return (double)hr_mono_ns() / 1e9;
}

/* A minimal protobuf writer: messages are built inside out. */
static void varint(hr_buf *b, uint64_t v)
{
    uint8_t t[10];
    size_t n = 0;
    while (v >= 0x80) {
        t[n++] = (uint8_t)(v | 0x80);
        v >>= 7;
    }
    t[n++] = (uint8_t)v;
    hr_buf_append(b, t, n);
}

static void bytes(hr_buf *b, uint32_t f, const void *s, size_t n)
{
    varint(b, (uint64_t)f << 3 | 2);
    varint(b, n);
    hr_buf_append(b, s, n);
}

static void str(hr_buf *b, uint32_t f, const char *s)
{
    bytes(b, f, s, strlen(s));
}

static void msg(hr_buf *b, uint32_t f, hr_buf *m)
{
    bytes(b, f, m->data, m->len);
    hr_buf_free(m);
    hr_buf_init(m, 0);
}

static void vint(hr_buf *b, uint32_t f, uint64_t v)
{
    varint(b, (uint64_t)f << 3);
    varint(b, v);
}

static void entry(hr_buf *b, uint32_t f, const char *k, const char *v)
{
    hr_buf e;
    hr_buf_init(&e, 0);
    str(&e, 1, k);
    str(&e, 2, v);
    msg(b, f, &e);
}

static void qentry(hr_buf *b, uint32_t f, const char *k, const char *v)
{
    hr_buf e, q;
    hr_buf_init(&e, 0);
    hr_buf_init(&q, 0);
    str(&e, 1, k);
    str(&q, 1, v);
    msg(&e, 2, &q);
    msg(b, f, &e);
}

static void resources(hr_buf *b, uint32_t f, const char *rc, const char *rm, const char *lc,
                      const char *lm)
{
    hr_buf r;
    hr_buf_init(&r, 0);
    if (lc)
        qentry(&r, 1, "cpu", lc);
    if (lm)
        qentry(&r, 1, "memory", lm);
    if (rc)
        qentry(&r, 2, "cpu", rc);
    if (rm)
        qentry(&r, 2, "memory", rm);
    msg(b, f, &r);
}

static void timestamp(hr_buf *b, uint32_t f)
{
    hr_buf t;
    hr_buf_init(&t, 0);
    vint(&t, 1, 1793610847);
    vint(&t, 2, 0);
    msg(b, f, &t);
}

/* podevent.h's pod, as the API server's protobuf watch frame. */
static uint8_t *pod_frame(size_t *len)
{
    hr_buf m, x, y, spec, st, pod;
    hr_buf_init(&m, 0);
    hr_buf_init(&x, 0);
    hr_buf_init(&y, 0);
    hr_buf_init(&spec, 0);
    hr_buf_init(&st, 0);
    hr_buf_init(&pod, 0);
    str(&m, 1, "web-7d9f8b6c4-x2k9p");
    str(&m, 2, "");
    str(&m, 3, "team-a");
    str(&m, 4, "");
    str(&m, 5, "0b7e6f0e-23a4-4c07-b5c2-5a8f2ad7e003");
    str(&m, 6, "4812337");
    vint(&m, 7, 3);
    timestamp(&m, 8);
    entry(&m, 11, "app.kubernetes.io/name", "web");
    entry(&m, 11, "app.kubernetes.io/part-of", "shop");
    entry(&m, 11, "pod-template-hash", "7d9f8b6c4");
    entry(&m, 11, "team", "a");
    entry(&m, 12, "kube-headroom.dev/status", "{\"factor\":\"2.00\"}");
    entry(&m, 12, "prometheus.io/scrape", "true");
    str(&x, 5, "apps/v1");
    str(&x, 1, "ReplicaSet");
    str(&x, 3, "web-7d9f8b6c4");
    str(&x, 4, "c0c0c0c0-0000-4000-8000-000000000001");
    vint(&x, 6, 1);
    vint(&x, 7, 1);
    msg(&m, 13, &x);
    static const char fields_v1[] =
        "{\"f:metadata\":{\"f:labels\":{\".\":{},\"f:app\":{},\"f:team\":{}},"
        "\"f:ownerReferences\":{\".\":{}}},\"f:spec\":{\"f:containers\":{\"k:{\\\"name\\\":"
        "\\\"app\\\"}\":{\".\":{},\"f:image\":{},\"f:imagePullPolicy\":{},\"f:name\":{},"
        "\"f:ports\":{},\"f:resources\":{\".\":{},\"f:limits\":{\".\":{},\"f:cpu\":{}},"
        "\"f:requests\":{\".\":{},\"f:cpu\":{},\"f:memory\":{}}}}}}}";
    for (int i = 0; i < 16; i++) {
        str(&x, 1, "kube-controller-manager");
        str(&x, 2, "Update");
        str(&x, 3, "v1");
        timestamp(&x, 4);
        str(&x, 6, "FieldsV1");
        bytes(&y, 1, fields_v1, sizeof fields_v1 - 1);
        msg(&x, 7, &y);
        msg(&m, 17, &x);
    }
    msg(&pod, 1, &m);

    /* spec: the sidecar, the app container, nodeName, restartPolicy. */
    str(&x, 1, "envoy");
    str(&x, 2, "envoy:1.33");
    resources(&x, 8, "200m", "128Mi", "400m", "128Mi");
    str(&x, 24, "Always");
    msg(&spec, 20, &x);
    str(&x, 1, "app");
    str(&x, 2, "web:4.2");
    resources(&x, 8, "1", "512Mi", "2", "512Mi");
    str(&y, 1, "cpu");
    str(&y, 2, "NotRequired");
    msg(&x, 23, &y);
    msg(&spec, 2, &x);
    str(&spec, 3, "Always");
    str(&spec, 10, "node-017");
    msg(&pod, 2, &spec);

    str(&st, 1, "Running");
    str(&x, 1, "app");
    vint(&x, 4, 1);
    vint(&x, 5, 0);
    resources(&x, 11, "1", NULL, "2", NULL);
    msg(&st, 8, &x);
    str(&st, 9, "Burstable");
    str(&x, 1, "envoy");
    resources(&x, 11, "200m", NULL, NULL, NULL);
    msg(&st, 10, &x);
    msg(&pod, 3, &st);

    /* "k8s\0" + Unknown{typeMeta, raw}, in RawExtension, in WatchEvent. */
    hr_buf env, tm, ext, ev;
    hr_buf_init(&env, 0);
    hr_buf_init(&tm, 0);
    hr_buf_init(&ext, 0);
    hr_buf_init(&ev, 0);
    hr_buf_append(&env, HR_PB_MAGIC, HR_PB_MAGIC_LEN);
    str(&tm, 1, "v1");
    str(&tm, 2, "Pod");
    msg(&env, 1, &tm);
    msg(&env, 2, &pod);
    str(&env, 3, "");
    str(&env, 4, "");
    msg(&ext, 1, &env);
    str(&ev, 1, "MODIFIED");
    msg(&ev, 2, &ext);
    uint8_t *f = malloc(ev.len + 4);
    if (f && !hr_buf_failed(&ev)) {
        f[0] = (uint8_t)(ev.len >> 24);
        f[1] = (uint8_t)(ev.len >> 16);
        f[2] = (uint8_t)(ev.len >> 8);
        f[3] = (uint8_t)ev.len;
        memcpy(f + 4, ev.data, ev.len);
        *len = ev.len + 4;
    } else {
        free(f);
        f = NULL;
    }
    hr_buf_free(&ev);
    hr_buf_free(&m);
    hr_buf_free(&x);
    hr_buf_free(&y);
    return f;
}

static hr_status pb_event(const uint8_t *f, size_t n, hr_arena *a, hr_kpod *kp, hr_kpod_status *ps,
                          hr_err *err)
{
    size_t len = (size_t)f[0] << 24 | (size_t)f[1] << 16 | (size_t)f[2] << 8 | f[3];
    hr_wevent ev;
    /* What the watch does with a frame (the envelopes, the event, the
     * object's resourceVersion: kube/watch/wevent.h), then the sink. */
    hr_status st = len + 4 > n ? HR_E_INPUT : hr_wevent_pb(f + 4, len, &ev, err);
    return st ? st : hr_pbdecode_pod(ev.pb, ev.pb_len, a, kp, ps, err);
}

static hr_status json_event(const char *line, size_t n, hr_arena *a, hr_kpod *kp,
                            hr_kpod_status *ps, hr_err *err, yyjson_doc **doc)
{
    *doc = yyjson_read(line, n, 0);
    if (!*doc)
        return hr_err_set(err, HR_E_INPUT, "JSON parse failed");
    yyjson_val *obj = yyjson_obj_get(yyjson_doc_get_root(*doc), "object");
    hr_status st = hr_decode_pod(obj, a, kp, err);
    if (!st)
        hr_decode_pod_status(obj, ps);
    return st;
}

/* The two views agree on what the benchmark can see of them. */
static int same(const hr_kpod *a, const hr_kpod_status *as, const hr_kpod *b,
                const hr_kpod_status *bs)
{
    if (strcmp(a->meta.name, b->meta.name) || strcmp(a->meta.ns, b->meta.ns) ||
        a->meta.labels.n != b->meta.labels.n || a->pod.n_ctr != b->pod.n_ctr ||
        strcmp(a->node_name, b->node_name) || strcmp(a->owner.kind, b->owner.kind) ||
        a->pod.status_resources != b->pod.status_resources || a->pod.phase != b->pod.phase ||
        as->status_note_len != bs->status_note_len)
        return 0;
    for (uint32_t i = 0; i < a->pod.n_ctr; i++) {
        const hr_container *x = &a->pod.ctr[i], *y = &b->pod.ctr[i];
        if (x->cpu_req != y->cpu_req || x->cpu_lim != y->cpu_lim || x->mem_req != y->mem_req ||
            x->mem_lim != y->mem_lim || x->kind != y->kind || x->cpu_restart != y->cpu_restart ||
            strcmp(a->ctr_names[i], b->ctr_names[i]))
            return 0;
    }
    return 1;
}

int main(int argc, char **argv)
{
    int rounds = argc > 1 ? atoi(argv[1]) : 300000;
    size_t jlen = 0, plen = 0;
    char *line = hr_bench_pod_event_json(&jlen);
    uint8_t *frame = pod_frame(&plen);
    if (!line || !frame || rounds <= 0)
        return 1;
    hr_arena a, b;
    hr_arena_init(&a, 4096);
    hr_arena_init(&b, 4096);
    hr_err err;
    hr_kpod jp, pp;
    hr_kpod_status js, ps;
    yyjson_doc *d;
    if (json_event(line, jlen, &a, &jp, &js, &err, &d) ||
        pb_event(frame, plen, &b, &pp, &ps, &err)) {
        fprintf(stderr, "bench_protobuf: %s\n", err.msg);
        return 1;
    }
    if (!same(&jp, &js, &pp, &ps)) {
        fprintf(stderr, "bench_protobuf: the JSON and protobuf pods differ\n");
        return 1;
    }
    yyjson_doc_free(d);
    hr_arena_free(&a);
    hr_arena_free(&b);

    size_t sink = 0;
    double w0 = now(), t0 = cpu_now();
    for (int i = 0; i < rounds / 4; i++) {
        if (json_event(line, jlen, &a, &jp, &js, &err, &d))
            return 1;
        sink += jp.pod.n_ctr;
        yyjson_doc_free(d);
        hr_arena_free(&a);
    }
    double tj = (cpu_now() - t0) / (rounds / 4), wj = (now() - w0) / (rounds / 4);
    w0 = now();
    t0 = cpu_now();
    for (int i = 0; i < rounds; i++) {
        if (pb_event(frame, plen, &a, &pp, &ps, &err))
            return 1;
        sink += pp.pod.n_ctr;
        hr_arena_free(&a); /* the cache copies out what it keeps */
    }
    double tp = (cpu_now() - t0) / rounds, wp = (now() - w0) / rounds;
    printf("protobuf: pod event %zu bytes JSON, %zu bytes protobuf (%.0f%%)\n", jlen, plen,
           100.0 * (double)plen / (double)jlen);
    printf("protobuf: JSON     %9.0f events/s per CPU-second (%.2f us/event, %d events; "
           "wall %.0f/s)\n",
           1 / tj, tj * 1e6, rounds / 4, 1 / wj);
    printf("protobuf: protobuf %9.0f events/s per CPU-second (%.2f us/event, %d events; "
           "wall %.0f/s)  goal 500000/s\n",
           1 / tp, tp * 1e6, rounds, 1 / wp);
    printf("protobuf: protobuf/JSON speed %.1fx  (sink %zu)\n", tj / tp, sink);
    free(line);
    free(frame);
    return 0;
}
