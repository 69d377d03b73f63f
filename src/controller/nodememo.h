/*
 * nodememo.h — other nodes' plans kept between reconciles, for groups
 * (design §2.10).
 *
 * A reconcile of a node holding a group member plans every other member's
 * node. A change on one member's node queues every member's node, so
 * without a memory each of the k nodes would plan all k: k² node plans a
 * change. The memo keeps each planned node (its snapshot, the core views
 * of its pods, their plans and container limits, the node plan) in an
 * arena of its own, with what it was planned from: the cache's version of
 * the node (hr_cache_node_version: it moves with any change the node's
 * plan reads), the back-off table's change count and the time. A later
 * reconcile that finds the same version and count, within max_age_ms,
 * reuses the plan instead of taking the snapshot again, so each node is
 * planned once per change of its own, whichever member's node asks.
 *
 * Sharing: an entry, once put, is never written again; readers take a
 * reference (hr_nodememo_get) and give it back (hr_nodememo_release). A
 * newer plan of the same node replaces the entry in the table; the old one
 * is freed when its last reference goes. The table holds at most cap
 * entries (the oldest put goes first). One mutex guards the table and the
 * reference counts; nothing is planned under it.
 */
#ifndef HR_CONTROLLER_NODEMEMO_H
#define HR_CONTROLLER_NODEMEMO_H

#include <stddef.h>
#include <stdint.h>

#include "controller/nodesnap.h"
#include "core/policy.h"
#include "util/arena.h"

typedef struct hr_nodememo hr_nodememo;

/* One planned node. Everything points into a. */
typedef struct hr_memo_node {
    hr_arena a;
    hr_nodesnap s;
    hr_pod *views;
    hr_pod_plan *plans;
    int64_t *limits;
    size_t n_ctr;
    hr_node_plan np;
    /* what it was planned from */
    uint64_t backoff_changes;
    int64_t planned_ms;
    /* the table's */
    unsigned refs;
    struct hr_memo_node *next;
} hr_memo_node;

/* cap: the most entries kept (0: 4096); max_age_ms: an entry older than
 * this is planned again (0: 10 s). NULL when out of memory. */
hr_nodememo *hr_nodememo_new(size_t cap, int64_t max_age_ms);
void hr_nodememo_free(hr_nodememo *m);

/* A new entry (one reference, the caller's), its arena empty: plan into
 * it, then hr_nodememo_put. NULL when out of memory. */
hr_memo_node *hr_nodememo_entry(void);

/* The plan of node name if it still holds (same version and back-off
 * count, not older than max_age_ms at now_ms), with a reference taken;
 * NULL otherwise. */
hr_memo_node *hr_nodememo_get(hr_nodememo *m, const char *name, uint64_t version,
                              uint64_t backoff_changes, int64_t now_ms);

/* Publish e (planned: e->s filled) in place of any older plan of its node.
 * The caller keeps its reference. */
void hr_nodememo_put(hr_nodememo *m, hr_memo_node *e);

/* Give a reference back (m may be NULL for an entry never put). */
void hr_nodememo_release(hr_nodememo *m, hr_memo_node *e);

typedef struct hr_nodememo_stats {
    uint64_t hits, misses;
    size_t entries;
} hr_nodememo_stats;
void hr_nodememo_get_stats(hr_nodememo *m, hr_nodememo_stats *out);

#endif
