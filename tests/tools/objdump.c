/*
 * objdump.c — what the cache would be given for each object of a List, in
 * one canonical line per object, from either encoding: the JSON decoders
 * (kube/decode/decode.h) or the protobuf ones (kube/decode/pb.h).
 *
 *   objdump KIND json|protobuf FILE
 *
 * KIND is pods, nodes, namespaces, limitranges or resourcequotas; FILE a
 * List body as the API server sends it (application/json, or
 * application/vnd.kubernetes.protobuf). Every field of the decoded view
 * is printed (for a pod: metadata, labels, owner, every container,
 * pod-level quantities, flags, the resize verdict and the status
 * annotation's fingerprint), so two dumps are equal exactly when the
 * cache receives the same records. tests/e2e/e2e_protobuf_equal.sh diffs
 * the two dumps of the same objects fetched from the real API server.
 *
 * Exit 0 when every object decoded, 1 when one did not (its error is
 * printed in its place), 2 on usage or I/O errors.
 */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <yyjson.h>

#include "kube/decode/decode.h"
#include "kube/decode/pb.h"
#include "kube/write/status_note.h"
#include "podline.h"

typedef enum { K_POD, K_NODE, K_NS, K_LR, K_RQ } kind;

static void meta(const hr_kmeta *m)
{
    printf("%s/%s uid=%s rv=%s labels={", m->ns, m->name, m->uid, m->resource_version);
    for (uint32_t i = 0; i < m->labels.n; i++)
        printf("%s%s=%s", i ? "," : "", m->labels.kv[2 * i], m->labels.kv[2 * i + 1]);
    printf("}");
}

static void pod(const hr_kpod *p, const hr_kpod_status *s)
{
    meta(&p->meta);
    printf(" node=%s owner=%s/%s/%s/%d deleting=%d", p->node_name ? p->node_name : "-",
           p->owner.kind ? p->owner.kind : "-", p->owner.api_group, p->owner.name,
           p->owner.controller, p->deleting);
    podline_print(&p->pod, p->ctr_names);
    printf(" resize=%d resizing=%d note=%zu/%08" PRIx32, (int)s->resize, s->resizing,
           s->status_note_len,
           s->status_note ? hr_status_note_hash(s->status_note, s->status_note_len) : 0u);
}

static int dump_one(kind k, bool pb, yyjson_val *obj, const uint8_t *raw, size_t len)
{
    hr_arena a;
    hr_arena_init(&a, 16384);
    hr_err err;
    hr_err_clear(&err);
    hr_status st = HR_OK;
    switch (k) {
    case K_POD: {
        hr_kpod p;
        hr_kpod_status s;
        if (pb) {
            st = hr_pbdecode_pod(raw, len, &a, &p, &s, &err);
        } else if (!(st = hr_decode_pod(obj, &a, &p, &err))) {
            hr_decode_pod_status(obj, &s);
        }
        if (!st)
            pod(&p, &s);
        break;
    }
    case K_NODE: {
        hr_knode n;
        st = pb ? hr_pbdecode_node(raw, len, &a, &n, &err) : hr_decode_node(obj, &a, &n, &err);
        if (!st) {
            meta(&n.meta);
            printf(" alloc=%" PRId64 " known=%d disk=%d pid=%d has_alloc=%d ready=%d windows=%d",
                   n.node.allocatable, n.node.known, n.node.disk_pressure, n.node.pid_pressure,
                   n.has_allocatable, n.ready, n.windows);
        }
        break;
    }
    case K_NS: {
        hr_knamespace n;
        st = pb ? hr_pbdecode_namespace(raw, len, &a, &n, &err)
                : hr_decode_namespace(obj, &a, &n, &err);
        if (!st)
            meta(&n.meta);
        break;
    }
    case K_LR: {
        hr_klimitrange l;
        st = pb ? hr_pbdecode_limitrange(raw, len, &a, &l, &err)
                : hr_decode_limitrange(obj, &a, &l, &err);
        if (!st) {
            meta(&l.meta);
            printf(" ctr_max=%" PRId64 " ratio=%" PRId64 " pod_max=%" PRId64, l.bounds.ctr_max,
                   l.bounds.ctr_ratio_milli, l.bounds.pod_max);
        }
        break;
    }
    case K_RQ: {
        hr_kquota q;
        st = pb ? hr_pbdecode_resourcequota(raw, len, &a, &q, &err)
                : hr_decode_resourcequota(obj, &a, &q, &err);
        if (!st) {
            meta(&q.meta);
            printf(" limits_cpu=%d", q.limits_cpu);
        }
        break;
    }
    }
    if (st)
        printf("ERROR %s", err.msg);
    printf("\n");
    hr_arena_free(&a);
    return st ? 1 : 0;
}

static uint8_t *slurp(const char *path, size_t *len)
{
    FILE *f = fopen(path, "rb");
    if (!f)
        return NULL;
    size_t cap = 1 << 16, n = 0;
    uint8_t *b = malloc(cap);
    size_t r;
    while (b && (r = fread(b + n, 1, cap - n, f)) > 0) {
        n += r;
        if (n == cap) {
            uint8_t *nb = realloc(b, cap *= 2);
            if (!nb) {
                free(b);
                b = NULL;
            }
            b = nb;
        }
    }
    fclose(f);
    *len = n;
    return b;
}

int main(int argc, char **argv)
{
    static const char *const kinds[] = {"pods", "nodes", "namespaces", "limitranges",
                                        "resourcequotas"};
    int k = -1;
    for (int i = 0; argc == 4 && i < 5; i++)
        if (strcmp(argv[1], kinds[i]) == 0)
            k = i;
    if (k < 0 || (strcmp(argv[2], "json") != 0 && strcmp(argv[2], "protobuf") != 0)) {
        fprintf(stderr, "usage: objdump pods|nodes|namespaces|limitranges|resourcequotas "
                        "json|protobuf FILE\n");
        return 2;
    }
    size_t len;
    uint8_t *buf = slurp(argv[3], &len);
    if (!buf) {
        fprintf(stderr, "objdump: cannot read %s\n", argv[3]);
        return 2;
    }
    int bad = 0;
    hr_err err;
    hr_err_clear(&err);
    if (strcmp(argv[2], "json") == 0) {
        yyjson_doc *d = yyjson_read((const char *)buf, len, 0);
        yyjson_val *items = d ? yyjson_obj_get(yyjson_doc_get_root(d), "items") : NULL;
        if (!yyjson_is_arr(items)) {
            fprintf(stderr, "objdump: %s: not a JSON List\n", argv[3]);
            free(buf);
            yyjson_doc_free(d);
            return 2;
        }
        size_t i, max;
        yyjson_val *e;
        yyjson_arr_foreach(items, i, max, e) bad |= dump_one((kind)k, false, e, NULL, 0);
        yyjson_doc_free(d);
    } else {
        hr_pbobj o;
        hr_pblist l;
        if (hr_pb_unwrap(buf, len, &o, &err) || hr_pb_list_open(o.raw, o.len, &l, &err)) {
            fprintf(stderr, "objdump: %s: %s\n", argv[3], err.msg);
            free(buf);
            return 2;
        }
        const uint8_t *item;
        size_t il;
        hr_status st;
        while (hr_pb_list_next(&l, &item, &il, &st, &err))
            bad |= dump_one((kind)k, true, NULL, item, il);
        if (st) {
            fprintf(stderr, "objdump: %s: %s\n", argv[3], err.msg);
            free(buf);
            return 2;
        }
    }
    free(buf);
    return bad;
}
