/*
 * nodesnap.h — one node, copied out of the cache for a reconcile.
 *
 * The reconcile must see one consistent picture of a node while the
 * watches keep changing the cache, and it must not hold the cache lock
 * while it talks to the API server. So the node, its pods, their
 * containers and the context the core needs (namespace state, node and
 * owner exclusion, LimitRange bounds, back-off) are copied into an arena
 * under the lock, and the lock is released before anything else happens.
 * `headroom explain` and `headroom node` build the same snapshot.
 */
#ifndef HR_CONTROLLER_NODESNAP_H
#define HR_CONTROLLER_NODESNAP_H

#include <stdint.h>

#include "cache/cache.h"
#include "controller/backoff.h"
#include "controller/reconcile.h"
#include "util/arena.h"
#include "util/err.h"

typedef struct hr_nodesnap {
    hr_rnode node;
    hr_config cfg;           /* scalar settings in force for this node
                               (hr_config_effective: the flags applied, then
                               hr_config_for_node: its pool's overrides);
                               selectors/lists/pools cleared */
    const char *pool;        /* the pool that applied, NULL: the top level */
    uint32_t n_pools;        /* spec.nodePools in force (the list is not kept) */
    const char *cfg_invalid; /* why the last HeadroomConfig was refused, or NULL */
    uint64_t *pod_rv;        /* resourceVersion per pod, parallel to node.pods */
    uint8_t (*pod_uid)[16];  /* metadata.uid per pod, parallel (all zero: none) */
    bool node_present;
    bool node_undecodable; /* the Node object exists but could not be decoded */
    uint32_t pods_nowhere; /* undecodable pods whose node cannot be read
                              (hr_cache_pods_nowhere): node.booking_unknown */
    uint64_t version;      /* hr_cache_node_version when it was taken */
} hr_nodesnap;

typedef struct hr_nodesnap_opts {
    const char *own_ns;      /* the controller's namespace: never managed */
    hr_backoff *backoff;     /* may be NULL */
    int64_t now_ms;          /* for the back-off table */
    hr_dry_run_flag dry_run; /* --dry-run as given (HR_DRY_RUN_UNSET: none) */
    int64_t now_unix;        /* the wall clock, Unix seconds, for the startup
                                grace (design §2.12); 0: no pod in grace */
} hr_nodesnap_opts;

/* Copy node `name` and its pods. Takes and releases the cache lock. */
HR_MUST_CHECK hr_status hr_nodesnap_take(hr_cache *c, const char *name, const hr_nodesnap_opts *o,
                                         hr_arena *a, hr_nodesnap *out, hr_err *err);

#endif
