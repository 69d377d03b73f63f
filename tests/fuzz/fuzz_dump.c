/*
 * fuzz_dump.c — libFuzzer target for the whole offline planner: dump
 * reader, decoders, planner and both renderers, on arbitrary bytes.
 *
 * Besides "never crash, never leak, never read out of bounds", it checks
 * that every failure comes with a one-line message and that what the
 * planner prints is consistent: targets never below requests, the JSON
 * output parses back, and rendering twice gives the same bytes; and that a
 * pod that could not be decoded is kept, never written, and holds every
 * increase on its node (design §6, booking-unknown).
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <yyjson.h>

#include "plan/planner.h"
#include "plan/render.h"
#include "plan/snapshot.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void check_err(hr_status st, const hr_err *err)
{
    if (st == HR_OK)
        return;
    if (err->msg[0] == '\0' || strchr(err->msg, '\n'))
        abort();
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    char *buf = malloc(size + YYJSON_PADDING_SIZE);
    if (!buf)
        return 0;
    memcpy(buf, data, size);
    memset(buf + size, 0, YYJSON_PADDING_SIZE);
    hr_snapshot s;
    hr_err err;
    hr_err_clear(&err);
    /* Small limits so the fuzzer also walks the limit paths. */
    hr_dump_limits lim = {1 << 20, 8 << 20, 8 << 20};
    hr_status st = hr_snapshot_parse(&s, buf, size, &lim, "fuzz", &err);
    free(buf);
    check_err(st, &err);
    if (st) {
        hr_snapshot_free(&s);
        return 0;
    }
    hr_arena a;
    hr_arena_init(&a, 0);
    hr_plan p;
    /* A what-if on the first bound pod, when there is one. */
    hr_set_request set = {NULL, NULL, 1234};
    size_t n_set = 0;
    for (size_t i = 0; i < s.n_pods; i++)
        if (s.pods[i].node_name && !hr_pod_terminal(&s.pods[i].pod) && !s.pods[i].pod.undecodable) {
            set.ns = s.pods[i].meta.ns;
            set.name = s.pods[i].meta.name;
            n_set = 1;
            break;
        }
    st = hr_plan_build(&s, &set, n_set, &a, &p, &err);
    check_err(st, &err);
    if (st == HR_OK) {
        for (size_t i = 0; i < p.n_nodes; i++) {
            /* Design §6: a node holding a pod that could not be decoded
             * (or any node, while one may be anywhere) has its booking
             * unknown, and no increase may go there. */
            bool undecodable_here = p.n_pods_nowhere > 0;
            for (size_t k = 0; k < p.nodes[i].n_pods; k++)
                undecodable_here |= p.nodes[i].pods[k].undecodable;
            if (undecodable_here != p.nodes[i].np.booking_unknown)
                abort();
            for (size_t k = 0; k < p.nodes[i].n_pods; k++) {
                const hr_pod_plan *pp = &p.nodes[i].plans[k];
                bool increase = pp->write && pp->current > 0 && pp->target > pp->current;
                if (undecodable_here && increase && pp->gate == HR_GATE_PASS)
                    abort();
                /* An undecodable pod is never managed, never written. */
                if (p.nodes[i].pods[k].undecodable &&
                    (pp->reason != HR_R_UNDECODABLE || pp->write || pp->target != HR_NONE))
                    abort();
                /* A managed pod on a node not in the dump is held: no
                 * target and never a write (design §6, node-unknown). */
                if (pp->gate == HR_GATE_NODE_UNKNOWN) {
                    if (pp->target != HR_NONE || pp->write)
                        abort();
                    continue;
                }
                if (pp->reason == HR_MANAGED && pp->target < pp->request)
                    abort();
            }
        }
        /* Every object that did not decode is named, with a message. */
        for (size_t i = 0; i < s.n_bad; i++)
            if (!s.bad[i].msg || !s.bad[i].msg[0] || strchr(s.bad[i].msg, '\n'))
                abort();
        hr_buf j1, j2, t;
        hr_buf_init(&j1, 0);
        hr_buf_init(&j2, 0);
        hr_buf_init(&t, 0);
        hr_status s1 = hr_render_json(&p, NULL, &j1, &err);
        hr_status s2 = hr_render_json(&p, NULL, &j2, &err);
        hr_status s3 = hr_render_table(&p, NULL, &t, &err);
        if (s1 || s2 || s3)
            abort();
        if (j1.len != j2.len || memcmp(hr_buf_str(&j1), hr_buf_str(&j2), j1.len))
            abort();
        yyjson_doc *back = yyjson_read(hr_buf_str(&j1), j1.len, 0);
        if (!back || !yyjson_is_arr(yyjson_obj_get(yyjson_doc_get_root(back), "nodes")))
            abort();
        yyjson_doc_free(back);
        if (p.n_nodes) {
            hr_buf_reset(&t);
            if (hr_render_table(&p, p.nodes[0].name, &t, &err))
                abort();
        }
        hr_buf_free(&j1);
        hr_buf_free(&j2);
        hr_buf_free(&t);
    }
    hr_arena_free(&a);
    hr_snapshot_free(&s);
    return 0;
}
