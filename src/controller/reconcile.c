/*
 * reconcile.c — from a node snapshot to a list of actions.
 */
#include "reconcile.h"

#include <string.h>

#include "controller/writes.h"
#include "kube/write/status_note.h"
#include "util/buf.h"

/* Whether a dry-run rewrites a pod's note whose text changed. A live run
 * writes the note with a resize, when the target leaves the deadband of
 * the limit; dry-run sets no limit, so the target its note states stands
 * for the limit a live run would have set, and the deadband applies to it:
 * the node's figures moving (a neighbour landing) rewrite no note. A note
 * with no target or written by a live run is rewritten whenever it
 * changed, and so is a held one, or one that is to say a gate holds it, as
 * a live run rewrites a held pod's note (the HR_ACT_SKIP branch below). */
static bool dry_note_due(const hr_config *cfg, const hr_rpod *rp, const hr_pod_plan *pp)
{
    int64_t noted;
    if (!hr_status_mark_dry(rp->status_mark) || !hr_status_mark_target(rp->status_mark, &noted))
        return true;
    if (pp->gate != HR_GATE_PASS || hr_status_note_held(rp->status_hash))
        return true;
    return hr_should_write(cfg, noted, pp->target);
}

/* Copy a finished buffer into the arena; NULL on failure. */
static const char *keep(hr_arena *a, hr_buf *b)
{
    if (hr_buf_failed(b))
        return NULL;
    return hr_arena_strndup(a, hr_buf_str(b), b->len);
}

hr_status hr_reconcile_node(const hr_config *cfg, const hr_rnode *rn, int64_t now_unix, hr_arena *a,
                            hr_reconcile *out, hr_err *err)
{
    return hr_reconcile_node_with(cfg, rn, now_unix, NULL, NULL, a, out, err);
}

hr_status hr_reconcile_node_with(const hr_config *cfg, const hr_rnode *rn, int64_t now_unix,
                                 hr_plan_hook hook, void *hook_ud, hr_arena *a, hr_reconcile *out,
                                 hr_err *err)
{
    memset(out, 0, sizeof *out);
    size_t n_ctr = 0;
    for (size_t i = 0; i < rn->n; i++)
        n_ctr += rn->pods[i].pod.n_ctr;

    hr_pod *views = hr_arena_calloc(a, rn->n ? rn->n : 1, sizeof *views);
    out->pods = hr_arena_calloc(a, rn->n ? rn->n : 1, sizeof *out->pods);
    out->limits = hr_arena_calloc(a, n_ctr ? n_ctr : 1, sizeof *out->limits);
    out->actions = hr_arena_calloc(a, rn->n ? rn->n : 1, sizeof *out->actions);
    if (!views || !out->pods || !out->limits || !out->actions)
        return hr_err_set(err, HR_E_NOMEM, "node %s: out of memory", rn->name);
    for (size_t i = 0; i < rn->n; i++)
        views[i] = rn->pods[i].pod;

    out->plan = hr_plan_node(cfg, &rn->node, views, rn->n, out->pods, out->limits);
    if (hook != NULL) {
        hr_status hs = hook(hook_ud, rn, out, err);
        if (hs != HR_OK)
            return hs;
    }

    hr_buf b;
    hr_buf_init(&b, 0);
    hr_status st = HR_OK;
    for (size_t i = 0; i < rn->n && st == HR_OK; i++) {
        const hr_rpod *rp = &rn->pods[i];
        const hr_pod_plan *pp = &out->pods[i];
        if (pp->reason != HR_MANAGED)
            continue;
        if (rp->resize == HR_RS_DEFERRED)
            out->n_deferred++;
        if (pp->gate == HR_GATE_NODE_UNKNOWN) {
            /* Design §6: not planned, held in both directions and in dry-run
             * too; the executor only counts and reports it. */
            out->actions[out->n_actions++] = (hr_action){.kind = HR_ACT_SKIP,
                                                         .pod = i,
                                                         .current = pp->current,
                                                         .target = HR_NONE,
                                                         .gate = HR_GATE_NODE_UNKNOWN};
            continue;
        }
        /* An annotation that says a gate held the pod is rewritten once the
         * gate clears, with the write that goes with it, even when the new
         * target is within the deadband of the limit: it must not go on
         * saying "held" (status_note.h). */
        bool held_before = pp->gate == HR_GATE_PASS && hr_status_note_held(rp->status_hash);
        if (!pp->write && !held_before)
            continue;

        hr_action *act = &out->actions[out->n_actions];
        *act = (hr_action){0};
        act->pod = i;
        act->current = pp->current;
        act->target = pp->target;
        act->increase = pp->current > 0 && pp->target > pp->current;
        act->limits = &out->limits[pp->ctr_off];

        /* The pod's status annotation (design §9.1); a held write says its
         * gate. booking-unknown leaves the target figures out: the slack
         * they come from is only an upper bound. */
        hr_status_in si = {.cfg = cfg,
                           .np = &out->plan,
                           .pod = &rp->pod,
                           .pp = pp,
                           .ctr_names = rp->ctr_names,
                           .limits = act->limits,
                           .reason = pp->gate != HR_GATE_PASS ? hr_gate_str(pp->gate) : NULL,
                           .target_unknown = pp->gate == HR_GATE_BOOKING_UNKNOWN,
                           .dry_run = cfg->dry_run,
                           .unix_s = now_unix};
        hr_buf_reset(&b);
        hr_status_annotation(&b, &si);
        act->annotation = keep(a, &b);
        if (act->annotation == NULL)
            goto nomem;
        /* Only a resize carries its annotation unasked; every other one is
         * sent when what it says changes (computedAt aside), so a steady
         * state — dry-run, or a write a gate holds — stays free of writes. */
        bool changed =
            hr_status_note_hash(act->annotation, strlen(act->annotation)) != rp->status_hash;

        if (cfg->dry_run && pp->gate != HR_GATE_BOOKING_UNKNOWN) {
            /* Dry-run writes only the annotation, when a live run would
             * write (dry_note_due). An increase on a node whose booking
             * is unknown is held in dry-run too (below). */
            if (!changed || !dry_note_due(cfg, rp, pp))
                continue;
            act->kind = HR_ACT_ANNOTATE;
            act->held = pp->gate == HR_GATE_PASS;
        } else if (pp->gate != HR_GATE_PASS) {
            /* Held by a gate: the executor counts and reports it, and
             * sends the annotation saying why when that changed. */
            act->kind = HR_ACT_SKIP;
            act->gate = pp->gate;
            if (!changed) {
                act->annotation = NULL;
                out->n_actions++;
                continue;
            }
        } else {
            act->kind = HR_ACT_RESIZE;
            hr_buf_reset(&b);
            if (pp->pod_level)
                hr_pod_level_apply_body(&b, rp->ns, rp->name, pp->target);
            else
                hr_resize_apply_body(&b, rp->ns, rp->name, &rp->pod, rp->ctr_names, act->limits);
            act->apply_body = keep(a, &b);
            hr_buf_reset(&b);
            hr_event_message(&b, pp->current, pp->target, &out->plan);
            act->event_message = keep(a, &b);
            if (act->apply_body == NULL || act->event_message == NULL)
                goto nomem;
        }
        hr_buf_reset(&b);
        hr_status_patch(&b, act->annotation);
        act->status_patch = keep(a, &b);
        if (act->status_patch == NULL)
            goto nomem;
        out->n_actions++;
    }
    hr_buf_free(&b);
    return st;
nomem:
    hr_buf_free(&b);
    return hr_err_set(err, HR_E_NOMEM, "node %s: out of memory", rn->name);
}
