/*
 * strmap.h — a string-keyed hash map with a 64-bit value per key.
 *
 * For the small bookkeeping tables of the controller (last write per pod,
 * events already reported, per-node rate limiters): keys are copied and
 * owned by the map; values are integers or pointers the caller owns.
 * Not thread-safe: each owner guards its map.
 */
#ifndef HR_UTIL_STRMAP_H
#define HR_UTIL_STRMAP_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "util/err.h"

typedef struct hr_strmap {
    struct hr_strmap_slot *slots;
    size_t cap;  /* power of two, 0 before the first put */
    size_t n;    /* live keys */
    size_t used; /* live keys + tombstones */
} hr_strmap;

void hr_strmap_init(hr_strmap *m);
void hr_strmap_free(hr_strmap *m);

/* Insert or replace. false when out of memory (the map is unchanged). */
HR_MUST_CHECK bool hr_strmap_put(hr_strmap *m, const char *key, uint64_t value);

/* The value's address, or NULL when absent (valid until the next put/del). */
uint64_t *hr_strmap_get(const hr_strmap *m, const char *key);

/* Remove; returns whether the key was there (and its value in *old). */
bool hr_strmap_del(hr_strmap *m, const char *key, uint64_t *old);

/* Iterate: start with *i = 0; false at the end. */
bool hr_strmap_next(const hr_strmap *m, size_t *i, const char **key, uint64_t *value);

#endif
