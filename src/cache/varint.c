/*
 * varint.c — the pod blob codec (format and why in varint.h).
 *
 * Kept apart from pods.c so the format is read in one place: what goes in
 * (hr_cblob_encode) and what comes out (hr_cblob_decode) sit side by side,
 * and a change to one is seen next to the other.
 */
#include "cache/varint.h"

#include <stdlib.h>
#include <string.h>

void hr_cenc_free(hr_cenc *e)
{
    free(e->buf);
    e->buf = NULL;
    e->cap = 0;
}

static int enc_reserve(hr_cenc *e, size_t n)
{
    if (n <= e->cap)
        return 0;
    size_t nc = e->cap ? e->cap : 256;
    while (nc < n)
        nc *= 2;
    uint8_t *p = realloc(e->buf, nc);
    if (!p)
        return -1;
    e->buf = p;
    e->cap = nc;
    return 0;
}

/* Quantities are ≥ 0 or HR_NONE (-1): +1 makes them unsigned and puts
 * "none" in one byte. */
static uint64_t q_enc(int64_t v)
{
    return (uint64_t)v + 1;
}

static int64_t q_dec(uint64_t v)
{
    return (int64_t)(v - 1);
}

/* The length of the pod's pod-template-hash label when its direct owner is
 * a ReplicaSet named "<something>-<that hash>" (a Deployment's, design §4,
 * foreign-writer: the VPA's target), else 0. */
static size_t template_hash_len(const hr_kpod *p)
{
    if (p->owner.kind == NULL || strcmp(p->owner.kind, "ReplicaSet") != 0 || p->owner.name == NULL)
        return 0;
    const char *h = hr_labels_get(&p->meta.labels, "pod-template-hash");
    size_t hl = h != NULL ? strlen(h) : 0, on = strlen(p->owner.name);
    if (hl == 0 || on < hl + 2 || p->owner.name[on - hl - 1] != '-' ||
        strcmp(p->owner.name + on - hl, h) != 0)
        return 0;
    return hl;
}

size_t hr_cblob_encode(hr_cenc *e, hr_intern *str, const hr_kpod *p, uint32_t *ids,
                       uint32_t *group_id, uint32_t *writer_id)
{
    *group_id = 0;
    *writer_id = 0;
    size_t nl = strlen(p->meta.name);
    /* Upper bound: 10 bytes per varint. */
    size_t need = 11 + nl + (size_t)p->pod.n_ctr * (10 + 1 + 40) + 50;
    need += 11; /* the startup grace's two varints */
    need += 11; /* the pod-level CPU limit and memory bit (design §2.13) */
    need += 10; /* the pod-template-hash's length (design §4) */
    if (enc_reserve(e, need) != 0)
        return 0;
    uint8_t *o = e->buf;
    size_t n = hr_varint_put(o, nl);
    /* NUL-terminated, so readers get the name without a copy. */
    memcpy(o + n, p->meta.name, nl + 1);
    n += nl + 1;
    for (uint32_t i = 0; i < p->pod.n_ctr; i++) {
        const hr_container *k = &p->pod.ctr[i];
        const char *cn = p->ctr_names ? p->ctr_names[i] : "";
        uint32_t id = hr_intern_get(str, cn, strlen(cn));
        if (id == UINT32_MAX) {
            for (uint32_t j = 0; j < i; j++)
                hr_intern_unref(str, ids[j]);
            return 0;
        }
        ids[i] = id;
        n += hr_varint_put(o + n, id);
        o[n++] = (uint8_t)((k->kind & 3) | (k->cpu_restart ? 4 : 0));
        n += hr_varint_put(o + n, q_enc(k->cpu_req));
        n += hr_varint_put(o + n, q_enc(k->cpu_lim));
        n += hr_varint_put(o + n, q_enc(k->mem_req));
        n += hr_varint_put(o + n, q_enc(k->mem_lim));
    }
    n += hr_varint_put(o + n, q_enc(p->pod.overhead_cpu));
    n += hr_varint_put(o + n, q_enc(p->pod.pod_cpu_lim));
    n += hr_varint_put(o + n, p->pod.pod_mem_fixed ? 1u : 0u);
    n += hr_varint_put(o + n, q_enc(p->pod.pod_cpu_req));
    n += hr_varint_put(o + n, q_enc(p->pod.max_cpu));
    /* The startup grace (design §2.12): a Ready pod's start time no longer
     * matters and is not kept. */
    n += hr_varint_put(o + n, (uint64_t)(p->pod.grace_opt & 3) | (p->pod.ready ? 4u : 0u));
    n += hr_varint_put(o + n, p->pod.ready ? 0 : p->pod.start_s);
    if (p->pod.group != NULL) {
        uint32_t g = hr_intern_get(str, p->pod.group, strlen(p->pod.group));
        if (g == UINT32_MAX) {
            for (uint32_t j = 0; j < p->pod.n_ctr; j++)
                hr_intern_unref(str, ids[j]);
            return 0;
        }
        *group_id = g;
    }
    n += hr_varint_put(o + n, *group_id);
    if (p->pod.foreign_writer != NULL) {
        uint32_t w = hr_intern_get(str, p->pod.foreign_writer, strlen(p->pod.foreign_writer));
        if (w == UINT32_MAX) {
            for (uint32_t j = 0; j < p->pod.n_ctr; j++)
                hr_intern_unref(str, ids[j]);
            hr_intern_unref(str, *group_id);
            *group_id = 0;
            return 0;
        }
        *writer_id = w;
    }
    n += hr_varint_put(o + n, *writer_id);
    n += hr_varint_put(o + n, template_hash_len(p));
    return n;
}

void hr_cblob_decode(const uint8_t *blob, uint32_t n_ctr, uint32_t *ids, hr_container *ctr,
                     hr_pod *pod, uint32_t *group_id, uint32_t *writer_id, uint32_t *hash_len)
{
    const uint8_t *q = blob;
    uint64_t nl = hr_varint_get(&q);
    q += nl + 1;
    for (uint32_t i = 0; i < n_ctr; i++) {
        uint32_t id = (uint32_t)hr_varint_get(&q);
        uint8_t f = *q++;
        hr_container k;
        k.kind = f & 3;
        k.cpu_restart = (f & 4) != 0;
        k.cpu_req = q_dec(hr_varint_get(&q));
        k.cpu_lim = q_dec(hr_varint_get(&q));
        k.mem_req = q_dec(hr_varint_get(&q));
        k.mem_lim = q_dec(hr_varint_get(&q));
        if (ids)
            ids[i] = id;
        if (ctr)
            ctr[i] = k;
    }
    int64_t ov = q_dec(hr_varint_get(&q));
    int64_t pl = q_dec(hr_varint_get(&q));
    bool pmf = hr_varint_get(&q) != 0;
    int64_t pr = q_dec(hr_varint_get(&q));
    int64_t mc = q_dec(hr_varint_get(&q));
    uint64_t gf = hr_varint_get(&q);
    uint32_t start = (uint32_t)hr_varint_get(&q);
    uint32_t g = (uint32_t)hr_varint_get(&q);
    uint32_t w = (uint32_t)hr_varint_get(&q);
    uint32_t hl = (uint32_t)hr_varint_get(&q);
    if (hash_len)
        *hash_len = hl;
    if (group_id)
        *group_id = g;
    if (writer_id)
        *writer_id = w;
    if (pod) {
        pod->overhead_cpu = ov;
        pod->pod_cpu_lim = pl;
        pod->pod_mem_fixed = pmf;
        pod->pod_cpu_req = pr;
        pod->max_cpu = mc;
        pod->grace_opt = (uint8_t)(gf & 3);
        pod->ready = (gf & 4) != 0;
        pod->start_s = start;
    }
}
