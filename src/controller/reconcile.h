/*
 * reconcile.h — one node's decisions, before any I/O (design §5–§7, §9).
 *
 * The reconciler takes a consistent snapshot of one node — the Node, every
 * pod bound to it with the context the core needs already filled in — runs
 * the core (policy, hysteresis, gates) and turns the result into a list of
 * actions. Performing them (rate limits, the live Node re-read before an
 * increase, the API calls and their outcomes) is the executor's job; keeping
 * the two apart lets every decision be tested without a cluster and
 * explained by `headroom explain` through the very same code.
 */
#ifndef HR_CONTROLLER_RECONCILE_H
#define HR_CONTROLLER_RECONCILE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "cache/cache.h"
#include "core/policy.h"
#include "util/arena.h"
#include "util/err.h"

typedef struct hr_rpod {
    const char *ns, *name;
    const char *resource_version;
    const char *const *ctr_names; /* parallel to pod.ctr */
    hr_pod pod;                   /* context fields filled by the caller */
    uint32_t status_hash;         /* hr_status_note_hash of its current
                                     kube-headroom.dev/status, 0: none */
    uint32_t status_mark;         /* hr_status_note_mark of it */
    uint8_t resize;               /* hr_resize_state (cache.h): PodResizePending */
} hr_rpod;

typedef struct hr_rnode {
    const char *name;
    hr_node node; /* known = false when the Node is not in the cache */
    const hr_rpod *pods;
    size_t n;
} hr_rnode;

typedef enum hr_action_kind {
    HR_ACT_RESIZE = 0, /* apply the new limits, then annotate, then the event */
    HR_ACT_ANNOTATE,   /* dry-run: only the status annotation changes */
    HR_ACT_SKIP,       /* a gate refused an increase (booking-unknown also in
                          dry-run): only the annotation saying why, when
                          that changed (status_patch, else NULL); or the
                          Node is unknown and nothing is written at all
                          (design §6) */
} hr_action_kind;

typedef struct hr_action {
    hr_action_kind kind;
    size_t pod; /* index into hr_rnode.pods */
    int64_t current, target;
    bool increase;             /* the executor re-reads the Node before these */
    bool held;                 /* HR_ACT_ANNOTATE: a resize a live run would write now */
    hr_gate gate;              /* for HR_ACT_SKIP */
    const char *apply_body;    /* HR_ACT_RESIZE */
    const char *annotation;    /* HR_ACT_RESIZE, HR_ACT_ANNOTATE; HR_ACT_SKIP when changed */
    const char *status_patch;  /* merge patch carrying the annotation (or NULL) */
    const char *event_message; /* HR_ACT_RESIZE */
    const int64_t *limits;     /* per container, parallel to pod.ctr */
} hr_action;

typedef struct hr_reconcile {
    hr_node_plan plan;
    hr_pod_plan *pods; /* one per hr_rnode pod */
    int64_t *limits;   /* Σ n_ctr, see hr_plan_node */
    hr_action *actions;
    size_t n_actions;
    uint32_t n_deferred; /* managed pods whose last resize is Deferred */
} hr_reconcile;

/* Decide for one node. Everything returned lives in arena a. now_unix is
 * the wall clock for computedAt. */
HR_MUST_CHECK hr_status hr_reconcile_node(const hr_config *cfg, const hr_rnode *rn,
                                          int64_t now_unix, hr_arena *a, hr_reconcile *out,
                                          hr_err *err);

/* Runs after the node's plan, before the actions are built: it may rewrite
 * out->pods, out->limits and out->plan (the groups of design §2.10). */
typedef hr_status (*hr_plan_hook)(void *ud, const hr_rnode *rn, hr_reconcile *out, hr_err *err);

/* hr_reconcile_node with a hook (NULL: none). */
HR_MUST_CHECK hr_status hr_reconcile_node_with(const hr_config *cfg, const hr_rnode *rn,
                                               int64_t now_unix, hr_plan_hook hook, void *hook_ud,
                                               hr_arena *a, hr_reconcile *out, hr_err *err);

#endif
