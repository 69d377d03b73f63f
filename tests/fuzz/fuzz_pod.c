/*
 * fuzz_pod.c — libFuzzer target for the Pod decoder on arbitrary JSON.
 *
 * The input is parsed with both number modes the callers use (plain, as
 * the watch cache may, and numbers-as-raw, as the dump reader does), then
 * decoded. Accepted pods must be self-consistent: container counts and
 * names line up, quantities are HR_NONE or non-negative, and the core's
 * accounting on them does not trip (it runs under UBSan here).
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <yyjson.h>

#include "core/eligibility.h"
#include "core/pod.h"
#include "kube/decode/decode.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void check_q(int64_t v)
{
    if (v != HR_NONE && v < 0)
        abort();
}

static void decode_once(yyjson_doc *doc)
{
    hr_arena a;
    hr_arena_init(&a, 1024);
    hr_arena_set_limit(&a, 16 << 20);
    hr_err err;
    hr_err_clear(&err);
    hr_kpod kp;
    hr_status st = hr_decode_pod(yyjson_doc_get_root(doc), &a, &kp, &err);
    if (st) {
        if (!err.msg[0] || strchr(err.msg, '\n') || strncmp(err.msg, "pod ", 4))
            abort();
    } else {
        if (!kp.meta.name[0] || !kp.meta.ns[0] || !kp.pod.n_ctr)
            abort();
        for (uint32_t i = 0; i < kp.pod.n_ctr; i++) {
            const hr_container *c = &kp.pod.ctr[i];
            if (!kp.ctr_names[i])
                abort();
            check_q(c->cpu_req);
            check_q(c->cpu_lim);
            check_q(c->mem_req);
            check_q(c->mem_lim);
        }
        check_q(kp.pod.overhead_cpu);
        check_q(kp.pod.pod_cpu_req);
        check_q(kp.pod.pod_cpu_lim);
        if (hr_pod_booked_cpu(&kp.pod) < 0 || hr_pod_managed_cpu(&kp.pod) < 0)
            abort();
        (void)hr_pod_qos(&kp.pod, NULL);
        (void)hr_pod_eligibility(&kp.pod);
    }
    hr_arena_free(&a);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    yyjson_doc *d1 = yyjson_read((const char *)data, size, 0);
    if (d1) {
        decode_once(d1);
        yyjson_doc_free(d1);
    }
    yyjson_doc *d2 = yyjson_read((const char *)data, size, YYJSON_READ_NUMBER_AS_RAW);
    if (d2) {
        decode_once(d2);
        yyjson_doc_free(d2);
    }
    return 0;
}
