/*
 * fuzz_protobuf.c — libFuzzer target for the protobuf reader
 * (kube/decode/pb.h) on arbitrary bytes.
 *
 * The input is tried as everything the client may be handed: a body
 * ("k8s\0" + runtime.Unknown) holding an object or a List, a watch
 * stream (frames of a 4-byte big-endian length and a WatchEvent), and a
 * bare message of each kind. Every decoder runs on every object. An error
 * must be one line that names its object's kind; an accepted pod must be
 * self-consistent (names, counts, quantities HR_NONE or >= 0) and the
 * core's accounting on it must not trip (UBSan runs here). The seed corpus
 * (corpus/protobuf) was taken from the real API server
 * (tests/e2e/e2e_protobuf_equal.sh with HEADROOM_PB_SEEDS).
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "core/eligibility.h"
#include "core/pod.h"
#include "kube/decode/pb.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void check_q(int64_t v)
{
    if (v != HR_NONE && v < 0)
        abort();
}

static void check_err(hr_status st, const hr_err *err, const char *kind)
{
    if (st && (!err->msg[0] || strchr(err->msg, '\n') || strncmp(err->msg, kind, strlen(kind))))
        abort();
}

static void check_meta(const hr_kmeta *m, bool namespaced)
{
    if (!m->name[0] || (namespaced && !m->ns[0]) || !m->uid || !m->resource_version)
        abort();
    for (uint32_t i = 0; i < 2 * m->labels.n; i++)
        if (!m->labels.kv[i])
            abort();
}

static void all_kinds(const uint8_t *raw, size_t len)
{
    hr_arena a;
    hr_arena_init(&a, 1024);
    hr_arena_set_limit(&a, 16 << 20);
    hr_err err;
    hr_err_clear(&err);
    hr_kpod kp;
    hr_kpod_status ps;
    hr_status st = hr_pbdecode_pod(raw, len, &a, &kp, &ps, &err);
    check_err(st, &err, "pod ");
    if (!st) {
        check_meta(&kp.meta, true);
        if (!kp.pod.n_ctr || kp.pod.n_ctr > 4096)
            abort();
        for (uint32_t i = 0; i < kp.pod.n_ctr; i++) {
            const hr_container *c = &kp.pod.ctr[i];
            if (!kp.ctr_names[i] || c->kind > HR_CTR_INIT)
                abort();
            check_q(c->cpu_req);
            check_q(c->cpu_lim);
            check_q(c->mem_req);
            check_q(c->mem_lim);
        }
        check_q(kp.pod.overhead_cpu);
        check_q(kp.pod.pod_cpu_req);
        check_q(kp.pod.pod_cpu_lim);
        /* The note's bytes lie in the input; an empty one (a map entry with
         * no value) is the decoder's static "" and has no bytes to read. */
        if (ps.status_note && ps.status_note_len > 0 &&
            (ps.status_note < (const char *)raw ||
             ps.status_note + ps.status_note_len > (const char *)raw + len))
            abort();
        if (hr_pod_booked_cpu(&kp.pod) < 0 || hr_pod_managed_cpu(&kp.pod) < 0)
            abort();
        (void)hr_pod_qos(&kp.pod, NULL);
        (void)hr_pod_eligibility(&kp.pod);
    }
    hr_knode n;
    st = hr_pbdecode_node(raw, len, &a, &n, &err);
    check_err(st, &err, "node ");
    if (!st) {
        check_meta(&n.meta, false);
        if (n.node.allocatable < 0)
            abort();
    }
    hr_knamespace ns;
    st = hr_pbdecode_namespace(raw, len, &a, &ns, &err);
    check_err(st, &err, "namespace ");
    if (!st)
        check_meta(&ns.meta, false);
    hr_klimitrange lr;
    st = hr_pbdecode_limitrange(raw, len, &a, &lr, &err);
    check_err(st, &err, "limitrange ");
    if (!st) {
        check_meta(&lr.meta, true);
        check_q(lr.bounds.ctr_max);
        check_q(lr.bounds.ctr_ratio_milli);
        check_q(lr.bounds.pod_max);
    }
    hr_kquota q;
    st = hr_pbdecode_resourcequota(raw, len, &a, &q, &err);
    check_err(st, &err, "resourcequota ");
    if (!st)
        check_meta(&q.meta, true);
    hr_pbstatus s;
    st = hr_pb_status(raw, len, &s, &err);
    check_err(st, &err, "protobuf: ");
    const uint8_t *kns, *kname;
    size_t knl, kml;
    if (hr_pb_key(raw, len, &kns, &knl, &kname, &kml) &&
        (kml == 0 || kname < raw || kname + kml > raw + len))
        abort();
    hr_arena_free(&a);
}

/* A body: one object, or a List of them. */
static void body(const uint8_t *data, size_t size)
{
    hr_err err;
    hr_pbobj o;
    hr_status st = hr_pb_unwrap(data, size, &o, &err);
    check_err(st, &err, "protobuf: ");
    if (st)
        return;
    all_kinds(o.raw, o.len);
    hr_pblist l;
    if (hr_pb_list_open(o.raw, o.len, &l, &err) != HR_OK)
        return;
    const uint8_t *item;
    size_t il;
    int n = 0;
    while (n++ < 64 && hr_pb_list_next(&l, &item, &il, &st, &err))
        all_kinds(item, il);
    check_err(st, &err, "protobuf: ");
}

/* A watch stream: length-prefixed WatchEvents until the bytes run out. */
static void stream(const uint8_t *data, size_t size)
{
    for (int n = 0; size >= 4 && n < 64; n++) {
        size_t len = (size_t)data[0] << 24 | (size_t)data[1] << 16 | (size_t)data[2] << 8 | data[3];
        if (len > size - 4)
            return;
        hr_err err;
        hr_pbevent ev;
        hr_status st = hr_pb_watch_event(data + 4, len, &ev, &err);
        check_err(st, &err, "protobuf: ");
        if (!st)
            all_kinds(ev.obj.raw, ev.obj.len);
        data += 4 + len;
        size -= 4 + len;
    }
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    body(data, size);
    stream(data, size);
    all_kinds(data, size);
    return 0;
}
