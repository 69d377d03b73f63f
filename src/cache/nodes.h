/*
 * nodes.h — the node store (nodes.c). PRIVATE to src/cache/; every
 * function expects the cache lock held.
 */
#ifndef HR_CACHE_NODES_H
#define HR_CACHE_NODES_H

#include "cache/cache_int.h"

extern const cstore hr_cnodes_store;

HR_MUST_CHECK hr_status hr_cnodes_put(hr_cache *c, const hr_knode *k, hr_err *err);
HR_MUST_CHECK hr_status hr_cnodes_undecodable(hr_cache *c, const char *name, const char *rv,
                                              hr_err *err);
bool hr_cnodes_get(const hr_cache *c, const char *name, hr_cnode_view *out);
bool hr_cnodes_next(const hr_cache *c, uint32_t *iter, hr_cnode_view *out);

/* A HeadroomConfig change that moves only the settings a node pool can
 * override (hr_config_same_but_node_settings): mark dirty exactly the
 * nodes whose hr_config_for_node settings differ between old and new
 * (design §2.11). */
void hr_cnodes_mark_settings(hr_cache *c, const hr_config *old, const hr_config *new);

/* Per pool of cfg, how many Node objects its selector picks first
 * (counts[i] for cfg->pools[i]); the top level's are not counted. */
void hr_cnodes_pool_counts(const hr_cache *c, const hr_config *cfg, int64_t *counts);

/* The node slot of an interned name, created as a placeholder when
 * unknown. Takes over the caller's reference to name when it creates the
 * slot, drops it otherwise. NIL on out of memory. */
uint32_t hr_cnodes_slot(hr_cache *c, uint32_t name);
/* The slot of a node by name (NULL: none), NIL when unknown. */
uint32_t hr_cnodes_find(const hr_cache *c, const char *name);
/* A placeholder node nobody points to any more goes away. */
void hr_cnodes_gc(hr_cache *c, uint32_t i);

#endif
