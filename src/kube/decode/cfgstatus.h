/*
 * cfgstatus.h — a HeadroomConfig's status (generation, counts, conditions)
 * as the API server holds it.
 */
#ifndef HR_KUBE_DECODE_CFGSTATUS_H
#define HR_KUBE_DECODE_CFGSTATUS_H

#include <stddef.h>
#include <stdint.h>

#include "kube/decode/common.h"
#include "util/arena.h"
#include "util/err.h"

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

/* One status.nodePools entry (design §2.11): a pool and its Node count. */
typedef struct hr_kpool_count {
    const char *name; /* never NULL */
    int64_t nodes;    /* -1 when absent */
} hr_kpool_count;
#define HR_KPOOL_MAX 32 /* HR_POOLS_MAX; more are not kept */

typedef struct hr_kcfg_status {
    int64_t generation;          /* metadata.generation */
    int64_t observed_generation; /* status.observedGeneration */
    int64_t managed_pods, managed_nodes;
    size_t n_cond;
    hr_kcondition cond[HR_KCOND_MAX];
    size_t n_pools; /* status.nodePools, in order */
    hr_kpool_count pools[HR_KPOOL_MAX];
} hr_kcfg_status;

/* Reads metadata.generation and status only, so it works on a config whose
 * spec hr_decode_config refuses. */
HR_MUST_CHECK hr_status hr_decode_config_status(yyjson_val *obj, hr_arena *a, hr_kcfg_status *out,
                                                hr_err *err);

#endif
