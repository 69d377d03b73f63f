/*
 * cfgstatus.h — the HeadroomConfig's status: what `kubectl get hcfg` shows
 * (design §1, §11).
 *
 *   observedGeneration, managedPods, managedNodes, and two conditions:
 *   Ready           True (Applied | DryRun), or False (InvalidSpec) when the
 *                   spec is refused and the last good config stays in force;
 *   LimitsCPUQuota  True (QuotaOnLimitsCPU) naming every managed namespace
 *                   whose ResourceQuota bounds limits.cpu — raises there fit
 *                   the quota (the quota cap, design §2.3) — or False
 *                   (NoQuotaOnLimitsCPU).
 *
 * Written by the leader only, by server-side apply on the status
 * subresource (field manager "headroom"), and only when it differs from
 * what the object already says: a steady state writes nothing, and a
 * condition keeps its lastTransitionTime until its status really flips —
 * across restarts and leader changes too, since the comparison is against
 * the object, not against memory. Count-only changes (pods come and go)
 * are written at most once per HR_CFGSTATUS_COUNTS_EVERY_S.
 *
 * The building is pure (hr_cfgstatus_build, unit-tested); the thread that
 * gathers its inputs from the cache and writes is the rest of this file.
 */
#ifndef HR_CONTROLLER_CFGSTATUS_H
#define HR_CONTROLLER_CFGSTATUS_H

#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "cache/cache.h"
#include "controller/ctllog.h"
#include "controller/ctlmetrics.h"
#include "kube/decode/decode.h"
#include "kube/transport/client.h"
#include "util/buf.h"

#define HR_CFGSTATUS_COUNTS_EVERY_S 10

#define HR_COND_READY "Ready"
#define HR_COND_QUOTA "LimitsCPUQuota"

typedef struct hr_cfgstatus_in {
    int64_t generation;   /* the object's metadata.generation */
    int64_t gen_in_force; /* generation of the config in force; -1: none */
    const char *invalid;  /* why the spec is refused; NULL: it is in force */
    bool dry_run;         /* as the controller runs: spec or flag */
    bool dry_run_flag;    /* forced by --dry-run */
    int64_t managed_pods, managed_nodes;
    const char *const *quota_ns; /* managed namespaces with a quota on limits.cpu, sorted */
    size_t n_quota_ns;
    const hr_node_pool *pools; /* status.nodePools (design §2.11): the pools in force */
    const int64_t *pool_nodes; /* Node count per pool */
    uint32_t n_pools;
    const hr_kcfg_status *observed;
    int64_t now_unix; /* lastTransitionTime of a condition that flips */
} hr_cfgstatus_in;

typedef enum hr_cfgstatus_diff {
    HR_CFGST_SAME = 0, /* nothing to write */
    HR_CFGST_COUNTS,   /* only managedPods/managedNodes or a pool's nodes moved */
    HR_CFGST_CHANGED,  /* generation or a condition: write now */
} hr_cfgstatus_diff;

/* The apply body for headroomconfigs/cluster/status into b, and how it
 * differs from in->observed. */
hr_cfgstatus_diff hr_cfgstatus_build(const hr_cfgstatus_in *in, hr_buf *b);

/* ------------------------------------------------------------ the writer */

typedef struct hr_cfgstatus_opts {
    hr_kclient *client;
    hr_cache *cache;
    hr_ctlmetrics *metrics; /* managed counts in, writes counted */
    const char *own_ns;
    hr_dry_run_flag dry_run;   /* --dry-run as given */
    bool (*leading)(void *ud); /* NULL: always */
    void *leading_ud;
    bool (*synced)(void *ud); /* NULL: always */
    void *synced_ud;
    int interval_ms; /* the least time between two looks; <= 0: 2000 */
    hr_log_sink log;
    void *log_ud;
} hr_cfgstatus_opts;

typedef struct hr_cfgstatus hr_cfgstatus;

HR_MUST_CHECK hr_status hr_cfgstatus_start(const hr_cfgstatus_opts *o, hr_cfgstatus **out,
                                           hr_err *err);
void hr_cfgstatus_stop(hr_cfgstatus *s);

/* Something it reads may have changed (the cache, the managed counts,
 * leadership): it compares again, no sooner than interval_ms after its
 * last look. Without kicks it looks only when a retry, a held-back count
 * or the warm-up is due: it never polls. Thread-safe, a leaf lock (may be
 * called under the cache lock); s may be NULL. */
void hr_cfgstatus_kick(hr_cfgstatus *s);

#endif
