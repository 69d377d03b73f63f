/*
 * varint.h — the varint codec and the pod blob format built on it.
 * PRIVATE to src/cache/.
 *
 * Why: a pod's variable part (its name, each container's name id, kind and
 * four quantities, three optional pod-level quantities) is kept as one
 * malloc'd blob of LEB128 varints. Requests like 250m or 512Mi take 2–5
 * bytes instead of 8, and two blobs are equal exactly when what the cache
 * keeps is equal, so "did this update change anything?" is one memcmp.
 *
 * The blob, in order:
 *   varint name length, the name's bytes, NUL (readers take the name in
 *   place, without a copy);
 *   per container: varint interned name id, one byte (kind in bits 0–1,
 *   cpu_restart in bit 2), varints cpu_req, cpu_lim, mem_req, mem_lim;
 *   varints overhead_cpu, pod_cpu_lim, pod_mem_fixed (0 or 1), pod_cpu_req,
 *   max_cpu;
 *   varint startup-grace bits (hr_grace_opt in bits 0–1, Ready in bit 2)
 *   and varint status.startTime in Unix seconds, 0 (none) once Ready
 *   (design §2.12);
 *   varint interned id of the pod's group key (design §2.10), 0: none;
 *   varint interned id of its foreign writer's name (design §4), 0: none;
 *   varint length of its pod-template-hash label when its direct owner is a
 *   ReplicaSet named "<deployment>-<that hash>", 0: not so (design §4: a
 *   VerticalPodAutoscaler's Deployment target, without a ReplicaSet cache).
 * Quantities are ≥ 0 or HR_NONE (-1); they are stored plus one, so "none"
 * takes one byte. The container count lives in the pod record.
 *
 * The primitives are inline: they run for every container of every event.
 */
#ifndef HR_CACHE_VARINT_H
#define HR_CACHE_VARINT_H

#include <stddef.h>
#include <stdint.h>

#include "cache/intern.h"
#include "core/pod.h"
#include "kube/decode/pod.h"

static inline size_t hr_varint_put(uint8_t *p, uint64_t v)
{
    size_t n = 0;
    while (v >= 0x80) {
        p[n++] = (uint8_t)(v | 0x80);
        v >>= 7;
    }
    p[n++] = (uint8_t)v;
    return n;
}

static inline uint64_t hr_varint_get(const uint8_t **p)
{
    uint64_t v = 0;
    unsigned shift = 0;
    const uint8_t *q = *p;
    while (*q & 0x80) {
        v |= (uint64_t)(*q++ & 0x7f) << shift;
        shift += 7;
    }
    v |= (uint64_t)*q++ << shift;
    *p = q;
    return v;
}

/* Reusable room to encode into (grows, never shrinks). */
typedef struct hr_cenc {
    uint8_t *buf;
    size_t cap;
} hr_cenc;

void hr_cenc_free(hr_cenc *e);

/* Encode pod p into e->buf; container names, the group key and the
 * foreign writer are interned (references taken, their ids written to
 * ids[], *group_id and *writer_id, 0 for none). Returns the length, 0 on
 * out of memory (then no reference is held). */
size_t hr_cblob_encode(hr_cenc *e, hr_intern *str, const hr_kpod *p, uint32_t *ids,
                       uint32_t *group_id, uint32_t *writer_id);

/* Walk a blob of n_ctr containers: container name ids go to ids (may be
 * NULL), container views to ctr (may be NULL), optional fields to pod (may
 * be NULL), the group key's id to *group_id, the foreign writer's to
 * *writer_id and the pod-template-hash's length to *hash_len (any may be
 * NULL). */
void hr_cblob_decode(const uint8_t *blob, uint32_t n_ctr, uint32_t *ids, hr_container *ctr,
                     hr_pod *pod, uint32_t *group_id, uint32_t *writer_id, uint32_t *hash_len);

/* The pod's name, in place. */
static inline void hr_cblob_name(const uint8_t *b, const char **name, size_t *len)
{
    const uint8_t *q = b;
    *len = (size_t)hr_varint_get(&q);
    *name = (const char *)q;
}

/* What malloc really takes for a blob of len bytes. */
static inline size_t hr_cblob_alloc_size(size_t len)
{
    /* glibc: usable size rounded to 16 with an 8-byte header; counted so
     * the cache's own figure is honest about malloc's share. */
    size_t s = len + 8;
    if (s < 32)
        s = 32;
    return (s + 15) & ~(size_t)15;
}

#endif
