/*
 * livenode.c — the live Node read (livenode.h).
 */
#include "controller/livenode.h"

#include <stdio.h>
#include <yyjson.h>

#include "kube/decode/decode.h"
#include "util/arena.h"
#include "util/buf.h"

hr_status hr_live_node_read(hr_kclient *kc, int64_t until, const char *name, hr_node *out,
                            long *http_status)
{
    char path[300];
    snprintf(path, sizeof path, "/api/v1/nodes/%s", name);
    hr_buf b;
    hr_buf_init(&b, 64u << 20);
    hr_kresult res = {0};
    hr_err err;
    hr_status st = hr_kclient_do_until(kc, until, "GET", path, NULL, NULL, 0, &b, &res, &err);
    if (st == HR_OK) {
        yyjson_doc *d = yyjson_read(hr_buf_str(&b), b.len, 0);
        hr_arena a;
        hr_arena_init(&a, 0);
        hr_knode kn;
        if (d == NULL)
            st = HR_E_INPUT;
        else
            st = hr_decode_node(yyjson_doc_get_root(d), &a, &kn, &err);
        if (st == HR_OK)
            *out = kn.node;
        yyjson_doc_free(d);
        hr_arena_free(&a);
    }
    *http_status = res.status;
    hr_buf_free(&b);
    return st;
}
