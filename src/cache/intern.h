/*
 * intern.h — reference-counted string interning for the cache.
 *
 * 150,000 pods repeat a few hundred distinct strings (namespace, node,
 * container and owner names, label keys and values). Each distinct string is
 * stored once and named by a 32-bit id, so a pod record carries 4 bytes per
 * string instead of a pointer and a copy. Counting references lets strings
 * that stop being used (the ReplicaSet names of old rollouts, deleted
 * namespaces) go away: a long-running controller must not grow with history.
 *
 * Id 0 is the empty string and is never counted. Not thread-safe: the cache
 * holds its lock around every call.
 */
#ifndef HR_CACHE_INTERN_H
#define HR_CACHE_INTERN_H

#include <stddef.h>
#include <stdint.h>

typedef struct hr_istr hr_istr; /* one entry; its text follows it */

typedef struct hr_intern {
    hr_istr **by_id; /* id -> entry (NULL: free id) */
    uint32_t n_ids;  /* ids handed out so far, 0 included */
    uint32_t cap_ids;
    uint32_t *free_ids; /* ids given back, reused first */
    uint32_t n_free, cap_free;
    uint32_t *buckets;  /* hash -> first id, chained through the entries */
    uint32_t n_buckets; /* power of two */
    uint32_t live;      /* distinct strings held */
    size_t bytes;       /* memory held (entries, tables) */
} hr_intern;

void hr_intern_init(hr_intern *t);
void hr_intern_free(hr_intern *t);

/* The id of s[0..len), taking one reference (0 for ""). Returns
 * UINT32_MAX when out of memory. */
uint32_t hr_intern_get(hr_intern *t, const char *s, size_t len);

/* The id of s without taking a reference; 0 when absent (or ""). */
uint32_t hr_intern_find(const hr_intern *t, const char *s, size_t len);

void hr_intern_ref(hr_intern *t, uint32_t id);
void hr_intern_unref(hr_intern *t, uint32_t id);

/* The text (NUL-terminated; stable while the id is referenced). */
const char *hr_intern_str(const hr_intern *t, uint32_t id);
uint32_t hr_intern_len(const hr_intern *t, uint32_t id);

/* The id of a pointer hr_intern_str returned. */
uint32_t hr_intern_id_of(const char *s);

uint32_t hr_intern_hash(const char *s, size_t len);

#endif
