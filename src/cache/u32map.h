/*
 * u32map.h — a small map from non-zero 32-bit keys to 32-bit values.
 * PRIVATE to src/cache/.
 *
 * Why its own: the cache keys nodes and namespaces by interned name id and
 * counts pods per namespace id; both are dense small integers, so open
 * addressing with linear probing over two flat arrays costs 8 bytes a slot
 * and no allocation per entry, which util/strmap (string keys) cannot give.
 * Deletion shifts later members of a cluster back instead of leaving
 * tombstones, so a long-running controller's map never degrades.
 *
 * Keys are non-zero (0 marks an empty slot). Not thread-safe: the cache
 * lock covers it.
 */
#ifndef HR_CACHE_U32MAP_H
#define HR_CACHE_U32MAP_H

#include <stddef.h>
#include <stdint.h>

typedef struct u32map {
    uint32_t *keys, *vals;
    uint32_t cap, n;
} u32map;

/* The value of key, UINT32_MAX when absent. */
uint32_t hr_u32map_get(const u32map *m, uint32_t key);
/* Insert or overwrite; -1 on out of memory (the map is unchanged). */
int hr_u32map_put(u32map *m, uint32_t key, uint32_t val);
void hr_u32map_del(u32map *m, uint32_t key);
void hr_u32map_free(u32map *m);
/* Memory held, for the cache's own accounting. */
size_t hr_u32map_bytes(const u32map *m);

/* The integer finaliser the map probes with, also used to spread the pod
 * hash (pods.c). */
static inline uint32_t hr_mix32(uint32_t x)
{
    x ^= x >> 16;
    x *= 0x7feb352du;
    x ^= x >> 15;
    x *= 0x846ca68bu;
    x ^= x >> 16;
    return x;
}

#endif
