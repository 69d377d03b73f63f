/*
 * intern.c — the string table behind hr_intern (see intern.h).
 *
 * Chained hashing with ids as links: an entry is one malloc holding its
 * counters and its text, so a string's address never moves and can be
 * handed out as a const char* (node and namespace labels use that). Ids of
 * released strings are reused, so the id space stays as small as the live
 * set.
 */
#include "cache/intern.h"

#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include "util/hash.h"

struct hr_istr {
    uint32_t id;
    uint32_t refs;
    uint32_t len;
    uint32_t hash;
    uint32_t next; /* next id in the bucket chain */
    char s[];
};

uint32_t hr_intern_hash(const char *s, size_t len)
{
    return hr_fnv1a32(s, len);
}

void hr_intern_init(hr_intern *t)
{
    memset(t, 0, sizeof *t);
}

void hr_intern_free(hr_intern *t)
{
    for (uint32_t i = 1; i < t->n_ids; i++)
        free(t->by_id[i]);
    free(t->by_id);
    free(t->buckets);
    free(t->free_ids);
    memset(t, 0, sizeof *t);
}

static int rehash(hr_intern *t, uint32_t nb)
{
    uint32_t *b = calloc(nb, sizeof *b);
    if (!b)
        return -1;
    for (uint32_t i = 1; i < t->n_ids; i++) {
        hr_istr *e = t->by_id[i];
        if (!e)
            continue;
        uint32_t k = e->hash & (nb - 1);
        e->next = b[k];
        b[k] = i;
    }
    t->bytes = t->bytes - (size_t)t->n_buckets * sizeof *b + (size_t)nb * sizeof *b;
    free(t->buckets);
    t->buckets = b;
    t->n_buckets = nb;
    return 0;
}

uint32_t hr_intern_find(const hr_intern *t, const char *s, size_t len)
{
    if (len == 0 || !t->n_buckets)
        return 0;
    uint32_t h = hr_intern_hash(s, len);
    for (uint32_t id = t->buckets[h & (t->n_buckets - 1)]; id; id = t->by_id[id]->next) {
        const hr_istr *e = t->by_id[id];
        if (e->hash == h && e->len == len && memcmp(e->s, s, len) == 0)
            return id;
    }
    return 0;
}

static uint32_t new_id(hr_intern *t)
{
    if (t->n_free)
        return t->free_ids[--t->n_free];
    if (t->n_ids == 0)
        t->n_ids = 1; /* id 0 is "" */
    if (t->n_ids >= UINT32_MAX - 1)
        return UINT32_MAX;
    if (t->n_ids >= t->cap_ids) {
        uint32_t nc = t->cap_ids ? t->cap_ids * 2 : 64;
        hr_istr **p = realloc(t->by_id, (size_t)nc * sizeof *p);
        if (!p)
            return UINT32_MAX;
        memset(p + t->cap_ids, 0, (size_t)(nc - t->cap_ids) * sizeof *p);
        t->bytes += (size_t)(nc - t->cap_ids) * sizeof *p;
        t->by_id = p;
        t->cap_ids = nc;
    }
    return t->n_ids++;
}

uint32_t hr_intern_get(hr_intern *t, const char *s, size_t len)
{
    if (len == 0)
        return 0;
    if (len > UINT32_MAX / 2)
        return UINT32_MAX;
    uint32_t id = hr_intern_find(t, s, len);
    if (id) {
        t->by_id[id]->refs++;
        return id;
    }
    /* Load factor ≤ 3/4 keeps chains short. */
    if (!t->n_buckets || (uint64_t)(t->live + 1) * 4 > (uint64_t)t->n_buckets * 3) {
        uint32_t nb = t->n_buckets ? t->n_buckets * 2 : 64;
        if (nb == 0 || rehash(t, nb) != 0)
            return UINT32_MAX;
    }
    hr_istr *e = malloc(sizeof *e + len + 1);
    if (!e)
        return UINT32_MAX;
    id = new_id(t);
    if (id == UINT32_MAX) {
        free(e);
        return UINT32_MAX;
    }
    e->id = id;
    e->refs = 1;
    e->len = (uint32_t)len;
    e->hash = hr_intern_hash(s, len);
    memcpy(e->s, s, len);
    e->s[len] = '\0';
    t->by_id[id] = e;
    uint32_t k = e->hash & (t->n_buckets - 1);
    e->next = t->buckets[k];
    t->buckets[k] = id;
    t->live++;
    t->bytes += sizeof *e + len + 1;
    return id;
}

void hr_intern_ref(hr_intern *t, uint32_t id)
{
    if (id && id < t->n_ids && t->by_id[id])
        t->by_id[id]->refs++;
}

void hr_intern_unref(hr_intern *t, uint32_t id)
{
    if (!id || id >= t->n_ids || !t->by_id[id])
        return;
    hr_istr *e = t->by_id[id];
    if (--e->refs)
        return;
    /* Keep the id for reuse; if the stack cannot grow, the id is simply
     * never reused (a leak of 4 bytes of id space, not of memory). */
    if (t->n_free >= t->cap_free) {
        uint32_t nc = t->cap_free ? t->cap_free * 2 : 64;
        uint32_t *p = realloc(t->free_ids, (size_t)nc * sizeof *p);
        if (p) {
            t->bytes += (size_t)(nc - t->cap_free) * sizeof *p;
            t->free_ids = p;
            t->cap_free = nc;
        }
    }
    if (t->n_free < t->cap_free)
        t->free_ids[t->n_free++] = id;
    uint32_t *pp = &t->buckets[e->hash & (t->n_buckets - 1)];
    while (*pp != id)
        pp = &t->by_id[*pp]->next;
    *pp = e->next;
    t->by_id[id] = NULL;
    t->live--;
    t->bytes -= sizeof *e + e->len + 1;
    free(e);
}

const char *hr_intern_str(const hr_intern *t, uint32_t id)
{
    if (!id || id >= t->n_ids || !t->by_id[id])
        return "";
    return t->by_id[id]->s;
}

uint32_t hr_intern_len(const hr_intern *t, uint32_t id)
{
    if (!id || id >= t->n_ids || !t->by_id[id])
        return 0;
    return t->by_id[id]->len;
}

uint32_t hr_intern_id_of(const char *s)
{
    if (!s || !s[0])
        return 0;
    const hr_istr *e = (const hr_istr *)(const void *)(s - offsetof(hr_istr, s));
    return e->id;
}
