/*
 * store.h — the machinery every kind of the cache shares (store.c).
 * PRIVATE to src/cache/; every function expects the cache lock held.
 */
#ifndef HR_CACHE_STORE_H
#define HR_CACHE_STORE_H

#include "cache/cache_int.h"

/* Count a change and tell the observer. */
void hr_cstore_report(hr_cache *c, hr_ckind k, hr_cchange what, const char *ns, const char *name);

/* hr_cache_del, hr_cache_touch, hr_cache_relist_begin/_end for any kind
 * (ns and name not NULL; ns "" for cluster-scoped kinds). */
void hr_cstore_del(hr_cache *c, hr_ckind kind, const char *ns, const char *name);
void hr_cstore_touch(hr_cache *c, hr_ckind kind, const char *ns, const char *name);
void hr_cstore_relist_begin(hr_cache *c, hr_ckind kind);
size_t hr_cstore_relist_end(hr_cache *c, hr_ckind kind); /* objects swept */

uint64_t hr_cstore_parse_rv(const char *s);               /* 0 unless decimal */
void hr_cstore_parse_uid(const char *s, uint8_t out[16]); /* zeros unless a UUID */
uint32_t hr_cstore_intern(hr_cache *c, const char *s);    /* 0 for NULL/"", NIL: no memory */

/* A label set as a kv array of interned strings (NULL when empty); -1 on
 * out of memory. */
int hr_cstore_labels(hr_cache *c, const hr_labels *l, const char ***out);
void hr_cstore_labels_free(hr_cache *c, const char **kv, uint32_t n);
bool hr_cstore_labels_equal(const char **a, uint32_t na, const char **b, uint32_t nb);

/* Slot tables. take: a slot for name (not yet in the table), entered in
 * the map, its record left for the caller to fill; NIL on out of memory.
 * give: the slot back (map entry dropped, record zeroed). */
uint32_t hr_cslots_take(cslots *t, size_t size, uint32_t name);
void hr_cslots_give(cslots *t, size_t size, uint32_t i);
void hr_cslots_free(cslots *t);

/* Row tables. put: insert or update the row of m's namespace and name with
 * the payload (len bytes right after the header, compared as bytes); an
 * update that leaves the payload as it was moves only the resourceVersion
 * and reports nothing. */
HR_MUST_CHECK hr_status hr_crows_put(hr_cache *c, hr_ckind k, const hr_kmeta *m,
                                     const void *payload, size_t len, hr_err *err);
crows *hr_crows_of(hr_cache *c, hr_ckind k);
void hr_crows_free(crows *t);

#endif
