/*
 * groups.h — one ceiling for a group, in the controller (design §2.10).
 *
 * A node's own plan knows only its pods; a group member's target depends on
 * what every member would get on its own node. This hook of the reconcile
 * (hr_reconcile_node_with) finds, for each group with a member on the node,
 * the other members through the cache's group index, takes a snapshot of
 * each of their nodes and plans it, and hands the whole group to the core
 * (hr_group_apply). The node then writes only its own members; the other
 * members' nodes whose pods would be written are returned to be queued at
 * once (no second debounce). `explain` uses the same hook and prints what
 * it found. Everything lives in the caller's arena for one reconcile,
 * except the other nodes' plans: each is an entry of its own (nodememo.h),
 * given back when its group is done, and kept between reconciles when the
 * controller has a memo: one taken while its node's version holds is used
 * instead of a new snapshot, so a change plans each node once.
 */
#ifndef HR_CONTROLLER_GROUPS_H
#define HR_CONTROLLER_GROUPS_H

#include <stddef.h>
#include <stdint.h>

#include "cache/cache.h"
#include "controller/nodememo.h"
#include "controller/nodesnap.h"
#include "controller/reconcile.h"
#include "core/group.h"
#include "util/arena.h"
#include "util/err.h"

typedef struct hr_group_info {
    const char *key;
    size_t n_members;
    hr_group_result res;
    const char *binding_ns, *binding_name, *binding_node;
} hr_group_info;

typedef struct hr_groups {
    /* in */
    hr_cache *cache;
    const hr_nodesnap_opts *opts;
    const hr_config *cfg; /* the node snapshot's */
    hr_arena *a;
    hr_nodememo *memo; /* other nodes' plans kept between reconciles; NULL: none */
    /* out */
    const char **requeue; /* other nodes whose members would be written */
    size_t n_requeue;
    hr_group_info *info; /* the groups with a member on the node */
    size_t n_info;
    int32_t *pod_group;  /* per pod of the node: index into info, -1: none */
    int64_t *own_target; /* per pod: t_i alone, HR_NONE: not in a group */
    size_t planned;      /* other nodes snapshotted and planned (not the memo's) */
} hr_groups;

/* An hr_plan_hook; ud is an hr_groups with its inputs set. */
HR_MUST_CHECK hr_status hr_groups_apply(void *ud, const hr_rnode *rn, hr_reconcile *r, hr_err *err);

#endif
