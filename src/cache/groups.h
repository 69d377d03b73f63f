/*
 * groups.h — the group index (design §2.10): group key id → its member
 * pods. PRIVATE to src/cache/; every function expects the cache lock held.
 *
 * Why in the cache: a node's reconcile must find the other members of its
 * groups without scanning every pod, and the index must follow the pods
 * exactly — a member that leaves (deleted, relabelled) leaves the index in
 * the same step, and a group with no member left is freed, so the index
 * holds state only for groups that exist (headroom_groups shows its size).
 * A change of membership marks every member's node (the group's value may
 * move for all of them).
 */
#ifndef HR_CACHE_GROUPS_H
#define HR_CACHE_GROUPS_H

#include <stddef.h>
#include <stdint.h>

#include "cache/cache_int.h"

/* Pod slot pi joins / leaves group gid (0: none, a no-op). -1 on out of
 * memory (the pod is then in no group: planned alone, never wrong). */
int hr_cgroups_add(hr_cache *c, uint32_t gid, uint32_t pi);
void hr_cgroups_del(hr_cache *c, uint32_t gid, uint32_t pi);
/* Mark every member's node (hr_cfeed_mark). */
void hr_cgroups_mark(hr_cache *c, uint32_t gid);
void hr_cgroups_free(hr_cache *c);
/* hr_cache_group_pods and hr_cache_n_groups (cache.h). */
size_t hr_cgroups_pods(const hr_cache *c, const char *key, uint32_t *ids, size_t cap);
size_t hr_cgroups_count(const hr_cache *c);
size_t hr_cgroups_bytes(const hr_cache *c);

#endif
