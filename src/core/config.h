/*
 * config.h — the policy knobs of HeadroomConfig "cluster" (design §1), as
 * plain values, and the one rule that turns flags, the HeadroomConfig and
 * the defaults into the configuration in force (design §11). Quantities are already in millicores; multipliers are
 * fixed-point x1000 so "1.5" stays exact. The arrays point into memory the
 * caller owns (the dump reader's or the cache's arena).
 */
#ifndef HR_CORE_CONFIG_H
#define HR_CORE_CONFIG_H

#include <stdbool.h>
#include <stdint.h>

#include "attr.h"
#include "selector.h"

typedef struct hr_owner_ref {
    const char *kind;      /* required */
    const char *api_group; /* "" is the core group; NULL matches any group */
    const char *name;      /* NULL or "" matches any name */
} hr_owner_ref;

/* spec.policy (design §1.1): how a node's slack is shared (design §2). */
typedef enum hr_policy {
    HR_POLICY_PROPORTIONAL = 0, /* by request over the node (§2.2), the default */
    HR_POLICY_TENANT_FAIR,      /* among tenants first, then by request (§2.9) */
} hr_policy;

/* "Proportional", "TenantFair": the CRD's enum values. */
const char *hr_policy_str(hr_policy p);

/* The status annotation's "policy" (design §9.1): "proportional-v1",
 * "tenantfair-v1". */
const char *hr_policy_version(hr_policy p);

/* spec.nodePools[i] (design §2.11): the node settings a pool overrides for
 * the nodes its selector matches; HR_POOL_* bits say which are set, the
 * others come from the top level. */
enum {
    HR_POOL_FLOOR = 1u << 0,   /* overrides.minBurstFloor */
    HR_POOL_MULT = 1u << 1,    /* overrides.maxMultiplier */
    HR_POOL_QUANTUM = 1u << 2, /* overrides.quantum */
    HR_POOL_GROW = 1u << 3,    /* overrides.deadband.growPercent */
    HR_POOL_SHRINK = 1u << 4,  /* overrides.deadband.shrinkPercent */
};

/* At most this many pools (the CRD's maxItems): the pool label of
 * headroom_node_pool_info stays bounded (design §9.3). */
#define HR_POOLS_MAX 32

/* What `plan`, `node`, `explain` and the metrics say when no pool applies. */
#define HR_POOL_TOP_LEVEL "(top level)"

typedef struct hr_node_pool {
    const char *name;     /* unique among the pools */
    hr_selector selector; /* over the Node's labels */
    uint8_t set;          /* HR_POOL_* */
    int64_t min_burst_floor;
    int64_t max_multiplier_milli;
    int64_t quantum;
    int grow_percent;
    int shrink_percent;
} hr_node_pool;

typedef struct hr_config {
    bool present;   /* a HeadroomConfig "cluster" exists */
    uint8_t policy; /* hr_policy, default HR_POLICY_PROPORTIONAL */
    bool dry_run;
    int64_t min_burst_floor;          /* millicores, default 1000 */
    int64_t max_multiplier_milli;     /* x1000, default 10000; 0 disables the cap */
    int64_t quantum;                  /* millicores, default 10 */
    int grow_percent;                 /* default 10 */
    int shrink_percent;               /* default 5 */
    int64_t debounce_ms;              /* default 2000 */
    int per_node_pps;                 /* default 10 */
    int client_qps;                   /* default 50 */
    int client_burst;                 /* default 100 */
    bool webhook_enabled;             /* default true */
    int64_t initial_multiplier_milli; /* default 2000 */
    int64_t startup_grace_s;          /* spec.startupGrace.seconds (§2.12): how
                                         long an opted-in pod keeps its birth
                                         limit at most; 0 (default): no grace */

    hr_selector ns_selector; /* default kube-headroom.dev/mode=managed */
    const char *const *excluded_ns;
    uint32_t n_excluded_ns; /* default {"kube-system"} */
    const hr_owner_ref *excluded_owners;
    uint32_t n_excluded_owners;
    hr_selector excluded_nodes; /* unset: no node excluded */
    const hr_node_pool *pools;  /* spec.nodePools, in order; none by default */
    uint32_t n_pools;
    const char *tenant_label;  /* spec.tenantLabel (§2.9): the namespace label
                                 whose value names its tenant; default
                                 HR_LABEL_TENANT; NULL reads as the default */
    int max_group_size;        /* spec.maxGroupSize (§2.10): a larger group is
                                 refused whole; default HR_MAX_GROUP_SIZE */
    int quota_reserve_percent; /* spec.quotaReservePercent (§2.3, the quota
                                  cap): the share of a limits.cpu quota's
                                  hard kept for surge pods; 0…100, default 10 */
} hr_config;

/* spec.maxGroupSize's default and bounds (design §2.10: why 128). */
#define HR_MAX_GROUP_SIZE 128
#define HR_MAX_GROUP_SIZE_LIMIT 100000

/* All defaults, as with no HeadroomConfig: present=false and dry_run=true
 * (design §1: no config means the safe adoption path). The selector and the
 * excluded-namespace list point to static storage. */
void hr_config_defaults(hr_config *c);

/* --dry-run as given on the command line (design §11). The one
 * representation of the flag: every layer that needs it carries this. */
typedef enum hr_dry_run_flag {
    HR_DRY_RUN_UNSET = 0, /* not given: the HeadroomConfig decides */
    HR_DRY_RUN_ON,        /* --dry-run, --dry-run=true */
    HR_DRY_RUN_OFF,       /* --dry-run=false */
} hr_dry_run_flag;

/* The configuration in force (design §11): flags, then the HeadroomConfig,
 * then defaults. cluster is the HeadroomConfig in force, NULL when there is
 * none (all defaults). With no HeadroomConfig (NULL, or present=false) the
 * result is in dry run (design §1.2; a present one is live only when its
 * spec.dryRun is false, absent meaning true); a --dry-run flag beats both.
 * out may be cluster itself; its selectors and lists point where
 * cluster's do (or to static storage). */
void hr_config_effective(const hr_config *cluster, hr_dry_run_flag dry_run, hr_config *out);

/* Did a flag decide the dry-run setting in force (rather than spec.dryRun
 * or the absence of a HeadroomConfig)? What status messages name. */
bool hr_dry_run_from_flag(hr_dry_run_flag dry_run);

/* The one effective-config-per-node decision (design §2.11): the index of
 * the first pool of c whose nodeSelector matches the node's labels, -1 for
 * none (the top level). NULL labels (the Node is unknown) match no pool. */
int hr_config_pool_index(const hr_config *c, const hr_labels *node_labels);

/* The settings for one node: *out = *top with the overrides of the pool
 * hr_config_pool_index picks applied (out may be top). Returns that pool,
 * NULL for the top level. top must be the config in force, not the result
 * of an earlier call. Every reader that plans a node — the controller's
 * node snapshot (and `explain`), the offline planner (`plan`, `node`) and
 * the webhook's birth limit — asks here. */
const hr_node_pool *hr_config_for_node(const hr_config *top, const hr_labels *node_labels,
                                       hr_config *out);

/* The pool's name, HR_POOL_TOP_LEVEL for NULL. */
const char *hr_pool_name(const hr_node_pool *p);

/* Do a and b plan every node alike except for the settings a pool can
 * override (minBurstFloor, maxMultiplier, quantum, deadband) and the pools
 * themselves? When they do, a change from a to b re-plans only the nodes
 * whose hr_config_for_node settings moved (hr_config_node_same). */
bool hr_config_same_but_node_settings(const hr_config *a, const hr_config *b);

/* The settings a pool can override are the same in a and b. */
bool hr_config_node_same(const hr_config *a, const hr_config *b);

/* Check values the CRD schema may not have caught. Returns NULL when valid,
 * otherwise a static sentence naming the field. */
HR_CORE_MUST_CHECK const char *hr_config_validate(const hr_config *c);

#endif
