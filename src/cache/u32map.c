/*
 * u32map.c — open addressing, linear probing, backward-shift deletion (see
 * u32map.h for why the cache has its own map).
 */
#include "cache/u32map.h"

#include <stdlib.h>
#include <string.h>

uint32_t hr_u32map_get(const u32map *m, uint32_t key)
{
    if (!m->cap)
        return UINT32_MAX;
    for (uint32_t i = hr_mix32(key) & (m->cap - 1);; i = (i + 1) & (m->cap - 1)) {
        if (m->keys[i] == key)
            return m->vals[i];
        if (!m->keys[i])
            return UINT32_MAX;
    }
}

static int map_grow(u32map *m)
{
    uint32_t nc = m->cap ? m->cap * 2 : 16;
    uint32_t *k = calloc(nc, sizeof *k), *v = calloc(nc, sizeof *v);
    if (!k || !v) {
        free(k);
        free(v);
        return -1;
    }
    for (uint32_t i = 0; i < m->cap; i++) {
        if (!m->keys[i])
            continue;
        uint32_t j = hr_mix32(m->keys[i]) & (nc - 1);
        while (k[j])
            j = (j + 1) & (nc - 1);
        k[j] = m->keys[i];
        v[j] = m->vals[i];
    }
    free(m->keys);
    free(m->vals);
    m->keys = k;
    m->vals = v;
    m->cap = nc;
    return 0;
}

int hr_u32map_put(u32map *m, uint32_t key, uint32_t val)
{
    if ((uint64_t)(m->n + 1) * 10 > (uint64_t)m->cap * 7 && map_grow(m) != 0)
        return -1;
    uint32_t i = hr_mix32(key) & (m->cap - 1);
    while (m->keys[i] && m->keys[i] != key)
        i = (i + 1) & (m->cap - 1);
    if (!m->keys[i])
        m->n++;
    m->keys[i] = key;
    m->vals[i] = val;
    return 0;
}

void hr_u32map_del(u32map *m, uint32_t key)
{
    if (!m->cap)
        return;
    uint32_t mask = m->cap - 1, i = hr_mix32(key) & mask;
    while (m->keys[i] != key) {
        if (!m->keys[i])
            return;
        i = (i + 1) & mask;
    }
    /* Shift later members of the cluster back so lookups never stop at
     * the hole before reaching them. */
    for (uint32_t j = (i + 1) & mask; m->keys[j]; j = (j + 1) & mask) {
        uint32_t home = hr_mix32(m->keys[j]) & mask;
        if (((j - home) & mask) >= ((j - i) & mask)) {
            m->keys[i] = m->keys[j];
            m->vals[i] = m->vals[j];
            i = j;
        }
    }
    m->keys[i] = 0;
    m->n--;
}

void hr_u32map_free(u32map *m)
{
    free(m->keys);
    free(m->vals);
    memset(m, 0, sizeof *m);
}

size_t hr_u32map_bytes(const u32map *m)
{
    return (size_t)m->cap * 8;
}
