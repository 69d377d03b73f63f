/*
 * livenode.c — the live Node read, and a write's answer's resourceVersion
 * (livenode.h).
 */
#include "controller/livenode.h"

#include <stdio.h>
#include <stdlib.h>
#include <yyjson.h>

#include "kube/decode/decode.h"
#include "kube/decode/pbkinds.h"
#include "kube/decode/pbobj.h"
#include "util/arena.h"
#include "util/buf.h"

/* The answer b (protobuf when pb) into *kn, its strings in a. */
static hr_status decode(const hr_buf *b, bool pb, hr_arena *a, hr_knode *kn, hr_err *err)
{
    if (pb) {
        hr_pbobj o;
        hr_status st = hr_pb_unwrap((const uint8_t *)b->data, b->len, &o, err);
        return st ? st : hr_pbdecode_node(o.raw, o.len, a, kn, err);
    }
    yyjson_doc *d = yyjson_read(hr_buf_str(b), b->len, 0);
    if (d == NULL)
        return hr_err_set(err, HR_E_INPUT, "node: not JSON");
    hr_status st = hr_decode_node(yyjson_doc_get_root(d), a, kn, err);
    yyjson_doc_free(d);
    return st;
}

hr_status hr_live_node_read(hr_kclient *kc, int64_t until, const char *name, bool protobuf,
                            hr_node *out, long *http_status)
{
    char path[300];
    snprintf(path, sizeof path, "/api/v1/nodes/%s", name);
    hr_buf b;
    hr_buf_init(&b, 64u << 20);
    hr_kresult res = {0};
    hr_err err;
    hr_status st = hr_kclient_do_as(kc, until, "GET", path, protobuf ? HR_KACCEPT_PROTOBUF : NULL,
                                    NULL, NULL, 0, &b, &res, &err);
    if (st == HR_OK && hr_buf_failed(&b))
        st = HR_E_NOMEM;
    if (st == HR_OK) {
        hr_arena a;
        hr_arena_init(&a, 0);
        hr_knode kn;
        st = decode(&b, res.protobuf, &a, &kn, &err);
        if (st == HR_OK)
            *out = kn.node;
        hr_arena_free(&a);
    }
    *http_status = res.status;
    hr_buf_free(&b);
    return st;
}

uint64_t hr_answer_rv(const hr_buf *b, bool protobuf)
{
    if (b->len == 0 || hr_buf_failed(b))
        return 0;
    if (protobuf) {
        hr_pbobj o;
        hr_pbwmeta m;
        hr_err err;
        if (hr_pb_unwrap((const uint8_t *)b->data, b->len, &o, &err) != HR_OK ||
            !hr_pb_watch_meta(o.raw, o.len, false, &m))
            return 0;
        uint64_t v = 0;
        for (size_t i = 0; i < m.rv_len && m.rv[i] >= '0' && m.rv[i] <= '9' && v < UINT64_MAX / 10;
             i++)
            v = v * 10 + (uint64_t)(m.rv[i] - '0');
        return v;
    }
    yyjson_doc *d = yyjson_read(hr_buf_str(b), b->len, 0);
    if (d == NULL)
        return 0;
    const char *rv =
        yyjson_get_str(yyjson_ptr_get(yyjson_doc_get_root(d), "/metadata/resourceVersion"));
    uint64_t v = rv != NULL ? strtoull(rv, NULL, 10) : 0;
    yyjson_doc_free(d);
    return v;
}
