/*
 * decode.h — Kubernetes objects (as yyjson values) into the core's views.
 *
 * One decoder per kind the planner and the watch cache need: Pod, Node,
 * Namespace, LimitRange, HeadroomConfig, and label selectors. Each takes a
 * yyjson_val* holding one object and an arena; everything it returns
 * (strings, label pairs, container arrays) is copied into that arena, so the
 * yyjson document can be freed right after decoding — the cache keeps the
 * compact result, never the JSON.
 *
 * Only the fields the policy, eligibility, gates and `explain` need are
 * extracted (SPEC §3, §4, §6); everything else, managedFields included, is
 * skipped without being looked at.
 *
 * Errors are values: HR_E_INPUT with one line naming the object and the
 * field, e.g.
 *   pod team-a/web-1: spec.containers[1].resources.requests.cpu: unknown suffix "1x"
 * or HR_E_NOMEM when the arena cannot grow. On error *out is unspecified and
 * whatever was taken from the arena stays there (freed with it).
 */
#ifndef HR_KUBE_DECODE_H
#define HR_KUBE_DECODE_H

#include <stdbool.h>
#include <stdint.h>
#include <yyjson.h>

#include "core/config.h"
#include "core/gates.h"
#include "core/pod.h"
#include "core/selector.h"
#include "util/arena.h"
#include "util/err.h"

/* What every object carries. Strings are never NULL ("" when absent). */
typedef struct hr_kmeta {
    const char *ns;               /* "" for cluster-scoped objects */
    const char *name;
    const char *uid;
    const char *resource_version;
    hr_labels labels;
} hr_kmeta;

/* The direct owner: the reference with controller: true, else the first. */
typedef struct hr_kowner {
    const char *kind;      /* NULL when the object has no owner */
    const char *api_group; /* group of apiVersion: "apps" for apps/v1, "" for v1 */
    const char *name;
    bool controller;
} hr_kowner;

typedef struct hr_kpod {
    hr_kmeta meta;
    const char *node_name;         /* spec.nodeName, NULL when not bound */
    hr_kowner owner;
    bool deleting;                 /* metadata.deletionTimestamp set */
    const char *const *ctr_names;  /* parallel to pod.ctr (pod.n_ctr entries) */
    /* The core view. Context fields (ns_state, node_excluded, node_windows,
     * owner_excluded, in_backoff, limits) are left neutral as hr_pod_init()
     * sets them: they depend on other objects, the caller fills them. */
    hr_pod pod;
} hr_kpod;

typedef struct hr_knode {
    hr_kmeta meta;
    hr_node node;          /* allocatable (0 when absent), known, pressures */
    bool has_allocatable;  /* status.allocatable.cpu was there */
    bool ready;            /* condition Ready is True */
    bool windows;          /* label kubernetes.io/os = windows */
} hr_knode;

typedef struct hr_knamespace {
    hr_kmeta meta;
} hr_knamespace;

typedef struct hr_klimitrange {
    hr_kmeta meta;
    hr_limit_bounds bounds; /* folded over spec.limits[] (tightest wins) */
} hr_klimitrange;

typedef struct hr_kconfig {
    hr_kmeta meta;
    hr_config cfg; /* defaults, present = true, dry_run = spec.dryRun */
} hr_kconfig;

/* A ResourceQuota, reduced to the one thing that matters to us: whether it
 * bounds limits.cpu in its namespace (then every raise there that would
 * cross the quota is refused with 403, SPEC §7, §12). */
typedef struct hr_kquota {
    hr_kmeta meta;
    bool limits_cpu; /* spec.hard has limits.cpu */
} hr_kquota;

/* One metav1.Condition as found in an object's status. Strings are never
 * NULL ("" when absent). */
typedef struct hr_kcondition {
    const char *type, *status, *reason, *message;
    const char *last_transition; /* RFC 3339, kept verbatim */
    int64_t observed_generation; /* -1 when absent */
} hr_kcondition;

/* The HeadroomConfig's status as the API server holds it: what the status
 * writer compares against, so that it writes only what changed and keeps
 * lastTransitionTime across restarts and leader changes. Numbers are -1
 * when absent. Only the first HR_KCOND_MAX conditions are kept. */
#define HR_KCOND_MAX 8
typedef struct hr_kcfg_status {
    int64_t generation;          /* metadata.generation */
    int64_t observed_generation; /* status.observedGeneration */
    int64_t managed_pods, managed_nodes;
    size_t n_cond;
    hr_kcondition cond[HR_KCOND_MAX];
} hr_kcfg_status;

hr_status hr_decode_pod(yyjson_val *obj, hr_arena *a, hr_kpod *out,
                        hr_err *err);
hr_status hr_decode_node(yyjson_val *obj, hr_arena *a, hr_knode *out,
                         hr_err *err);
hr_status hr_decode_namespace(yyjson_val *obj, hr_arena *a,
                              hr_knamespace *out, hr_err *err);
hr_status hr_decode_limitrange(yyjson_val *obj, hr_arena *a,
                               hr_klimitrange *out, hr_err *err);
/* Also runs hr_config_validate: a config the core would refuse is an error. */
hr_status hr_decode_config(yyjson_val *obj, hr_arena *a, hr_kconfig *out,
                           hr_err *err);

hr_status hr_decode_resourcequota(yyjson_val *obj, hr_arena *a,
                                  hr_kquota *out, hr_err *err);
/* Reads metadata.generation and status only, so it works on a config whose
 * spec hr_decode_config refuses. */
hr_status hr_decode_config_status(yyjson_val *obj, hr_arena *a,
                                  hr_kcfg_status *out, hr_err *err);

/* A metav1.LabelSelector (matchLabels + matchExpressions). NULL or JSON
 * null gives an unset selector (matches nothing); {} an empty one (matches
 * everything). `what` names the field in error messages. */
hr_status hr_decode_selector(yyjson_val *sel, hr_arena *a, const char *what,
                             hr_selector *out, hr_err *err);

/* A Go duration ("2s", "1m30s", "500ms") in milliseconds, rounded down.
 * Returns false on bad syntax, negative values or overflow. */
bool hr_parse_duration_ms(const char *s, size_t len, int64_t *ms);

#endif
