/*
 * render.c — JSON and table output of a plan.
 *
 * JSON goes through yyjson's mutable writer (it escapes strings correctly,
 * which hand-made printf JSON tends not to), with "factor" inserted as raw
 * number text so it always has exactly two decimals. The table is sized
 * for 120 columns: the pod column takes the longest namespace/name shown
 * on any node (one width for the whole table, so rows line up across
 * nodes), capped, and longer names overflow rather than being cut (a cut
 * name is useless for kubectl).
 */
#include "plan/render.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <yyjson.h>

#include "core/eligibility.h"
#include "core/gates.h"
#include "core/grace.h"
#include "core/names.h"
#include "kube/ktime.h"
#include "plan/bars.h"
#include "plan/tabw.h"
#include "plan/yaml.h"

/* The JSON document's apiVersion (docs/plan.schema.json). */
#define HR_PLAN_API_VERSION "kube-headroom.dev/v1alpha1"

void hr_factor_str(int64_t factor_milli, char *buf, size_t cap)
{
    int64_t f = factor_milli < 0 ? 0 : factor_milli;
    int64_t hundredths = f / 10 + (f % 10 >= 5);
    snprintf(buf, cap, "%" PRId64 ".%02" PRId64, hundredths / 100, hundredths % 100);
}

static hr_status check_node(const hr_plan *p, const char *only_node, hr_err *err)
{
    if (only_node && !hr_plan_find_node(p, only_node)) {
        char q[72];
        return hr_err_set(err, HR_E_NOTFOUND,
                          "node %s: not in the dump (and no pod is bound "
                          "to it)",
                          hr_err_quote(q, sizeof q, only_node, strlen(only_node), 63));
    }
    return HR_OK;
}

static bool pod_managed(const hr_pod_plan *pp)
{
    return pp->reason == HR_MANAGED && pp->target != HR_NONE;
}

static const char *binding_cap(const hr_config *c, const hr_plan_node_out *no, size_t i);
static const char *fixed3(char *buf, size_t cap, int64_t v);

/* The table's WRITE column: a write the gates hold is not a write. */
static bool would_write(const hr_pod_plan *pp)
{
    return pod_managed(pp) && pp->write && pp->gate == HR_GATE_PASS;
}

/* Pod i of node no in o->before when --set-request changed its request or
 * target, else NULL. Both plans come from one snapshot: same nodes, same
 * pods, same order. */
static const hr_pod_plan *changed(const hr_plan *p, const hr_render_opts *o,
                                  const hr_plan_node_out *no, size_t i)
{
    if (o->before == NULL)
        return NULL;
    size_t n = (size_t)(no - p->nodes);
    if (n >= o->before->n_nodes)
        return NULL;
    const hr_plan_node_out *bn = &o->before->nodes[n];
    if (strcmp(bn->name, no->name) != 0 || i >= bn->n_pods || bn->src[i] != no->src[i])
        return NULL;
    const hr_pod_plan *b = &bn->plans[i], *a = &no->plans[i];
    return b->request != a->request || b->target != a->target ? b : NULL;
}

/* Whether pod i of the node is listed under o's filters. */
static bool listed(const hr_render_opts *o, const hr_plan_node_out *no, size_t i)
{
    const hr_kpod *kp = no->src[i];
    if (o->ns && strcmp(kp->meta.ns, o->ns) != 0)
        return false;
    return o->selector == NULL || hr_selector_matches(o->selector, &kp->meta.labels);
}

/* A node is shown when it is asked for, or when no filter hides all of
 * its pods (a node with no pods is shown unfiltered). */
static bool node_shown(const hr_render_opts *o, const hr_plan_node_out *no)
{
    if (o->only_node)
        return strcmp(no->name, o->only_node) == 0;
    if (!o->ns && !o->selector)
        return true;
    for (size_t i = 0; i < no->n_pods; i++)
        if (listed(o, no, i))
            return true;
    return false;
}

/* "tenant": the pod's tenant (its namespace's tenant label, or the
 * namespace), its weight, the weights present and its slack share (design
 * §2.9), the share its pods divide by request. */
static bool add_tenant_json(yyjson_mut_doc *doc, yyjson_mut_val *po, const hr_plan_node_out *no,
                            size_t i, const hr_pod_plan *pp)
{
    const hr_pod *head = &no->pods[pp->tenant];
    yyjson_mut_val *t = yyjson_mut_obj(doc);
    return t && yyjson_mut_obj_add_val(doc, po, "tenant", t) &&
           yyjson_mut_obj_add_str(doc, t, "name", head->tenant ? head->tenant : "") &&
           yyjson_mut_obj_add_bool(doc, t, "byLabel", head->tenant_by_label) &&
           yyjson_mut_obj_add_str(doc, t, "namespace", no->src[i]->meta.ns) &&
           yyjson_mut_obj_add_uint(doc, t, "weight", pp->weight) &&
           yyjson_mut_obj_add_uint(doc, t, "weightTotal", no->np.weight_total) &&
           yyjson_mut_obj_add_int(doc, t, "slackShareMilli", pp->share) &&
           yyjson_mut_obj_add_int(doc, t, "managedRequestsMilli", pp->share_managed) &&
           yyjson_mut_obj_add_uint(doc, t, "pods", pp->share_n) &&
           (!no->pods[pp->tenant].tenant_weight_invalid ||
            yyjson_mut_obj_add_bool(doc, t, "weightInvalid", true));
}

/* "group": the pod's group (design §2.10), its own target alone and the
 * group's ratio and binding member. */
static bool add_group_json(yyjson_mut_doc *doc, yyjson_mut_val *po, const hr_plan *p,
                           const hr_plan_node_out *no, size_t i)
{
    if (no->group == NULL || no->group[i] < 0)
        return true;
    const hr_plan_group *g = &p->groups[no->group[i]];
    char f[32];
    yyjson_mut_val *t = yyjson_mut_obj(doc);
    return t && yyjson_mut_obj_add_val(doc, po, "group", t) &&
           yyjson_mut_obj_add_str(doc, t, "key", g->key) &&
           yyjson_mut_obj_add_int(doc, t, "ownTargetMilli", no->own_target[i]) &&
           yyjson_mut_obj_add_val(
               doc, t, "ratio", yyjson_mut_rawcpy(doc, fixed3(f, sizeof f, g->res.ratio_milli))) &&
           yyjson_mut_obj_add_str(doc, t, "bindingPod", g->binding_name) &&
           yyjson_mut_obj_add_str(doc, t, "bindingNode", g->binding_node) &&
           yyjson_mut_obj_add_bool(doc, t, "moves", g->res.moves);
}

static bool add_node_json(yyjson_mut_doc *doc, yyjson_mut_val *nodes, const hr_plan *p,
                          const hr_plan_node_out *no, const hr_render_opts *ro)
{
    yyjson_mut_val *o = yyjson_mut_obj(doc);
    yyjson_mut_val *pods = yyjson_mut_arr(doc);
    char f[32];
    hr_factor_str(no->factor_milli, f, sizeof f);
    if (!o || !pods || !yyjson_mut_arr_append(nodes, o) ||
        !yyjson_mut_obj_add_str(doc, o, "name", no->name) ||
        !yyjson_mut_obj_add_int(doc, o, "allocatableMilli", no->np.allocatable) ||
        !yyjson_mut_obj_add_int(doc, o, "bookedMilli", no->np.booked) ||
        !yyjson_mut_obj_add_int(doc, o, "slackMilli", no->np.slack) ||
        !yyjson_mut_obj_add_int(doc, o, "managedRequestsMilli", no->np.managed) ||
        !yyjson_mut_obj_add_val(doc, o, "factor", yyjson_mut_rawcpy(doc, f)) ||
        !yyjson_mut_obj_add_val(doc, o, "pods", pods))
        return false;
    /* Design §2.11: only with pools, so plans without keep their shape. */
    if (p->cfg->n_pools > 0 &&
        !yyjson_mut_obj_add_str(doc, o, "pool", no->pool ? no->pool : HR_POOL_TOP_LEVEL))
        return false;
    /* The table's "!" lines, as codes. */
    yyjson_mut_val *notes = yyjson_mut_arr(doc);
    if (!notes || !yyjson_mut_obj_add_val(doc, o, "notes", notes) ||
        (no->undecodable && !yyjson_mut_arr_add_str(doc, notes, "undecodable")) ||
        (!no->undecodable && no->unknown && !yyjson_mut_arr_add_str(doc, notes, "not-in-dump")) ||
        (no->np.booking_unknown && !yyjson_mut_arr_add_str(doc, notes, "booking-unknown")) ||
        (no->node.disk_pressure && !yyjson_mut_arr_add_str(doc, notes, "disk-pressure")) ||
        (no->node.pid_pressure && !yyjson_mut_arr_add_str(doc, notes, "pid-pressure")) ||
        (!no->unknown && no->np.slack < 0 && !yyjson_mut_arr_add_str(doc, notes, "over-booked")))
        return false;
    /* Design §6, §15: only when it applies, so plans of clean dumps keep
     * their shape. */
    if (no->np.booking_unknown && !yyjson_mut_obj_add_bool(doc, o, "bookingUnknown", true))
        return false;
    if (no->undecodable && !yyjson_mut_obj_add_str(doc, o, "undecodable", no->undecodable))
        return false;
    for (size_t i = 0; i < no->n_pods; i++) {
        if (!listed(ro, no, i))
            continue;
        const hr_kpod *kp = no->src[i];
        const hr_pod_plan *pp = &no->plans[i];
        bool managed = pod_managed(pp);
        bool bad = kp->pod.undecodable;
        yyjson_mut_val *po = yyjson_mut_obj(doc);
        if (!po || !yyjson_mut_arr_append(pods, po) ||
            !yyjson_mut_obj_add_str(doc, po, "namespace", kp->meta.ns) ||
            !yyjson_mut_obj_add_str(doc, po, "name", kp->meta.name) ||
            !(bad ? yyjson_mut_obj_add_null(doc, po, "requestMilli")
                  : yyjson_mut_obj_add_int(doc, po, "requestMilli", pp->request)) ||
            /* No limit (on some managed container) is null, as the table's "none". */
            !(bad || pp->current == 0
                  ? yyjson_mut_obj_add_null(doc, po, "limitMilli")
                  : yyjson_mut_obj_add_int(doc, po, "limitMilli", pp->current)) ||
            !(managed ? yyjson_mut_obj_add_int(doc, po, "targetMilli", pp->target)
                      : yyjson_mut_obj_add_null(doc, po, "targetMilli")) ||
            /* A write a gate holds is not a write (the table's "held"). */
            !yyjson_mut_obj_add_bool(doc, po, "write", would_write(pp)) ||
            !yyjson_mut_obj_add_bool(doc, po, "managed",
                                     managed || pp->gate == HR_GATE_NODE_UNKNOWN) ||
            !yyjson_mut_obj_add_str(doc, po, "reason", hr_reason_str(pp->reason)))
            return false;
        /* The design §2.3 bound that cut r + burst (-o wide's CAP), or null. */
        const char *bc = bad ? "-" : binding_cap(&no->cfg, no, i);
        if (!(strcmp(bc, "-") == 0 ? yyjson_mut_obj_add_null(doc, po, "bindingCap")
                                   : yyjson_mut_obj_add_str(doc, po, "bindingCap", bc)))
            return false;
        /* Design §2.12: the startup grace holding the pod's limit. */
        char gwhen[HR_KTIME_MICRO_MAX];
        if (managed && pp->grace) {
            hr_ktime_format_micro(hr_grace_end(&no->cfg, &no->pods[i]) * 1000000, gwhen);
            if (!yyjson_mut_obj_add_strcpy(doc, po, "startupGraceUntil", gwhen))
                return false;
        }
        /* Design §2.9: under TenantFair, the share the burst came from. */
        if (p->cfg->policy == HR_POLICY_TENANT_FAIR && managed &&
            pp->gate != HR_GATE_NODE_UNKNOWN && !add_tenant_json(doc, po, no, i, pp))
            return false;
        /* Design §4 rule 20: who else writes the pod's limit. */
        if (pp->reason == HR_R_FOREIGN_WRITER && kp->pod.foreign_writer != NULL &&
            !yyjson_mut_obj_add_str(doc, po, "foreignWriter", kp->pod.foreign_writer))
            return false;
        if (!add_group_json(doc, po, p, no, i))
            return false;
        /* Design §6: a pod on a node not in the dump is not planned. */
        if ((pp->gate == HR_GATE_NODE_UNKNOWN || (managed && pp->write && pp->gate)) &&
            !yyjson_mut_obj_add_str(doc, po, "held", hr_gate_str(pp->gate)))
            return false;
        const hr_pod_plan *was = changed(p, ro, no, i);
        yyjson_mut_val *bo = was ? yyjson_mut_obj(doc) : NULL;
        if (was && (!bo || !yyjson_mut_obj_add_val(doc, po, "before", bo) ||
                    !yyjson_mut_obj_add_int(doc, bo, "requestMilli", was->request) ||
                    !(was->target == HR_NONE
                          ? yyjson_mut_obj_add_null(doc, bo, "targetMilli")
                          : yyjson_mut_obj_add_int(doc, bo, "targetMilli", was->target))))
            return false;
        if (bad && kp->undecodable && !yyjson_mut_obj_add_str(doc, po, "error", kp->undecodable))
            return false;
    }
    return true;
}

/* Design §15: what could not be decoded, in dump order. */
static bool add_bad_json(yyjson_mut_doc *doc, yyjson_mut_val *root, const hr_plan *p)
{
    if (!p->n_bad)
        return true;
    yyjson_mut_val *arr = yyjson_mut_arr(doc);
    if (!arr || !yyjson_mut_obj_add_val(doc, root, "undecodable", arr))
        return false;
    for (size_t i = 0; i < p->n_bad; i++) {
        const hr_snapshot_bad *b = &p->bad[i];
        yyjson_mut_val *o = yyjson_mut_obj(doc);
        if (!o || !yyjson_mut_arr_append(arr, o) ||
            !yyjson_mut_obj_add_str(doc, o, "kind", b->kind) ||
            (b->ns[0] && !yyjson_mut_obj_add_str(doc, o, "namespace", b->ns)) ||
            !yyjson_mut_obj_add_str(doc, o, "name", b->name) ||
            (b->node && !yyjson_mut_obj_add_str(doc, o, "node", b->node)) ||
            (b->node_unreadable && !yyjson_mut_obj_add_bool(doc, o, "nodeUnreadable", true)) ||
            !yyjson_mut_obj_add_str(doc, o, "error", b->msg ? b->msg : ""))
            return false;
    }
    return true;
}

/* What the dump lacks (hr_snapshot_gaps): only when there is something. */
static bool add_gaps_json(yyjson_mut_doc *doc, yyjson_mut_val *root, const hr_render_opts *o)
{
    yyjson_mut_val *arr = yyjson_mut_arr(doc);
    if (!arr || !yyjson_mut_obj_add_val(doc, root, "warnings", arr))
        return false;
    for (size_t i = 0; i < o->n_gaps; i++) {
        yyjson_mut_val *w = yyjson_mut_obj(doc);
        if (!w || !yyjson_mut_arr_append(arr, w) ||
            !yyjson_mut_obj_add_str(doc, w, "missing", o->gaps[i].kind) ||
            !yyjson_mut_obj_add_str(doc, w, "effect", o->gaps[i].effect) ||
            !yyjson_mut_obj_add_str(doc, w, "completeDump", HR_DUMP_KUBECTL))
            return false;
    }
    return true;
}

/* The table's last lines: what is shown, under the filters. */
typedef struct plan_summary {
    size_t nodes, pods, managed, writes, unknown;
} plan_summary;

static plan_summary summarize(const hr_plan *p, const hr_render_opts *o)
{
    plan_summary s = {0};
    for (size_t i = 0; i < p->n_nodes; i++) {
        const hr_plan_node_out *no = &p->nodes[i];
        if (!node_shown(o, no))
            continue;
        s.nodes++;
        for (size_t k = 0; k < no->n_pods; k++) {
            if (!listed(o, no, k))
                continue;
            s.pods++;
            s.managed += no->plans[k].reason == HR_MANAGED;
            s.writes += would_write(&no->plans[k]); /* the "yes" rows: held is not written */
            s.unknown += no->plans[k].gate == HR_GATE_NODE_UNKNOWN;
        }
    }
    return s;
}

/* Design §2.11: each pool with the overrides it sets, in order; only with
 * pools, so plans without keep their shape. */
static bool add_pools_json(yyjson_mut_doc *doc, yyjson_mut_val *o, const hr_config *c)
{
    if (c->n_pools == 0)
        return true;
    yyjson_mut_val *arr = yyjson_mut_arr(doc);
    if (!arr || !yyjson_mut_obj_add_val(doc, o, "nodePools", arr))
        return false;
    for (uint32_t i = 0; i < c->n_pools; i++) {
        const hr_node_pool *p = &c->pools[i];
        char m[32];
        yyjson_mut_val *e = yyjson_mut_obj(doc);
        if (!e || !yyjson_mut_arr_append(arr, e) ||
            !yyjson_mut_obj_add_str(doc, e, "name", p->name) ||
            ((p->set & HR_POOL_FLOOR) &&
             !yyjson_mut_obj_add_int(doc, e, "minBurstFloorMilli", p->min_burst_floor)) ||
            ((p->set & HR_POOL_MULT) &&
             !yyjson_mut_obj_add_val(
                 doc, e, "maxMultiplier",
                 yyjson_mut_rawcpy(doc, fixed3(m, sizeof m, p->max_multiplier_milli)))) ||
            ((p->set & HR_POOL_QUANTUM) &&
             !yyjson_mut_obj_add_int(doc, e, "quantumMilli", p->quantum)) ||
            ((p->set & HR_POOL_GROW) &&
             !yyjson_mut_obj_add_int(doc, e, "growPercent", p->grow_percent)) ||
            ((p->set & HR_POOL_SHRINK) &&
             !yyjson_mut_obj_add_int(doc, e, "shrinkPercent", p->shrink_percent)))
            return false;
    }
    return true;
}

static bool add_config_json(yyjson_mut_doc *doc, yyjson_mut_val *root, const hr_config *c)
{
    char m[32];
    yyjson_mut_val *o = yyjson_mut_obj(doc);
    return o && yyjson_mut_obj_add_val(doc, root, "config", o) &&
           yyjson_mut_obj_add_str(doc, o, "source", c->present ? "HeadroomConfig" : "defaults") &&
           yyjson_mut_obj_add_str(doc, o, "policy", hr_policy_str((hr_policy)c->policy)) &&
           yyjson_mut_obj_add_bool(doc, o, "dryRun", c->dry_run) &&
           yyjson_mut_obj_add_int(doc, o, "minBurstFloorMilli", c->min_burst_floor) &&
           yyjson_mut_obj_add_val(
               doc, o, "maxMultiplier",
               yyjson_mut_rawcpy(doc, fixed3(m, sizeof m, c->max_multiplier_milli))) &&
           yyjson_mut_obj_add_int(doc, o, "quantumMilli", c->quantum) &&
           yyjson_mut_obj_add_int(doc, o, "growPercent", c->grow_percent) &&
           yyjson_mut_obj_add_int(doc, o, "shrinkPercent", c->shrink_percent) &&
           /* Design §2.9: the label naming tenants, under TenantFair. */
           (c->policy != HR_POLICY_TENANT_FAIR ||
            yyjson_mut_obj_add_str(doc, o, "tenantLabel",
                                   c->tenant_label ? c->tenant_label : HR_LABEL_TENANT)) &&
           add_pools_json(doc, o, c);
}

static bool add_summary_json(yyjson_mut_doc *doc, yyjson_mut_val *root, const hr_plan *p,
                             const hr_render_opts *ro)
{
    plan_summary s = summarize(p, ro);
    bool all = !ro->only_node;
    yyjson_mut_val *o = yyjson_mut_obj(doc);
    return o && yyjson_mut_obj_add_val(doc, root, "summary", o) &&
           yyjson_mut_obj_add_uint(doc, o, "nodes", s.nodes) &&
           yyjson_mut_obj_add_uint(doc, o, "pods", s.pods) &&
           yyjson_mut_obj_add_uint(doc, o, "managed", s.managed) &&
           yyjson_mut_obj_add_uint(doc, o, "wouldBeWritten", s.writes) &&
           yyjson_mut_obj_add_uint(doc, o, "notPlannedNodeUnknown", s.unknown) &&
           yyjson_mut_obj_add_uint(doc, o, "unbound", all ? p->n_unbound : 0) &&
           yyjson_mut_obj_add_uint(doc, o, "finished", all ? p->n_terminal : 0) &&
           yyjson_mut_obj_add_uint(doc, o, "undecodable", all ? p->n_bad : 0);
}

/* "items": the flat table's rows (render.h). */
static bool add_items_json(yyjson_mut_doc *doc, yyjson_mut_val *root, const hr_plan *p,
                           const hr_render_opts *ro)
{
    yyjson_mut_val *arr = yyjson_mut_arr(doc);
    if (!arr || !yyjson_mut_obj_add_val(doc, root, "items", arr))
        return false;
    for (size_t n = 0; n < p->n_nodes; n++) {
        const hr_plan_node_out *no = &p->nodes[n];
        if (!node_shown(ro, no))
            continue;
        for (size_t i = 0; i < no->n_pods; i++) {
            if (!listed(ro, no, i))
                continue;
            const hr_kpod *kp = no->src[i];
            const hr_pod_plan *pp = &no->plans[i];
            bool bad = kp->pod.undecodable, managed = pod_managed(pp);
            const char *bc = bad ? "-" : binding_cap(&no->cfg, no, i);
            bool held = pp->gate == HR_GATE_NODE_UNKNOWN || (managed && pp->write && pp->gate);
            char r[32], l[32], t[32];
            snprintf(r, sizeof r, "%" PRId64 "m", pp->request);
            snprintf(l, sizeof l, "%" PRId64 "m", pp->current);
            snprintf(t, sizeof t, "%" PRId64 "m", pp->target);
            yyjson_mut_val *it = yyjson_mut_obj(doc);
            if (!it || !yyjson_mut_arr_append(arr, it) ||
                !yyjson_mut_obj_add_str(doc, it, "node", no->name) ||
                !yyjson_mut_obj_add_str(doc, it, "namespace", kp->meta.ns) ||
                !yyjson_mut_obj_add_str(doc, it, "name", kp->meta.name) ||
                (!bad && pp->request && !yyjson_mut_obj_add_strcpy(doc, it, "request", r)) ||
                (!bad && pp->current && !yyjson_mut_obj_add_strcpy(doc, it, "limit", l)) ||
                (managed && !yyjson_mut_obj_add_strcpy(doc, it, "target", t)) ||
                !yyjson_mut_obj_add_bool(doc, it, "write", would_write(pp)) ||
                !yyjson_mut_obj_add_str(doc, it, "reason", hr_reason_str(pp->reason)) ||
                (strcmp(bc, "-") != 0 && !yyjson_mut_obj_add_str(doc, it, "bindingCap", bc)) ||
                (held && !yyjson_mut_obj_add_str(doc, it, "held", hr_gate_str(pp->gate))))
                return false;
            /* Design §2.12: the startup grace holding the pod's limit. */
            char gwhen[HR_KTIME_MICRO_MAX];
            if (managed && pp->grace) {
                hr_ktime_format_micro(hr_grace_end(&no->cfg, &no->pods[i]) * 1000000, gwhen);
                if (!yyjson_mut_obj_add_strcpy(doc, it, "startupGraceUntil", gwhen))
                    return false;
            }
        }
    }
    return true;
}

static hr_status render_json(const hr_plan *p, const hr_render_opts *o, hr_buf *out, hr_err *err)
{
    yyjson_mut_doc *doc = yyjson_mut_doc_new(NULL);
    yyjson_mut_val *root = doc ? yyjson_mut_obj(doc) : NULL;
    yyjson_mut_val *nodes = doc ? yyjson_mut_arr(doc) : NULL;
    bool ok =
        root && nodes && yyjson_mut_obj_add_str(doc, root, "apiVersion", HR_PLAN_API_VERSION) &&
        yyjson_mut_obj_add_str(doc, root, "kind", "Plan") && add_config_json(doc, root, p->cfg) &&
        yyjson_mut_obj_add_val(doc, root, "nodes", nodes);
    if (ok)
        yyjson_mut_doc_set_root(doc, root);
    for (size_t i = 0; ok && i < p->n_nodes; i++)
        if (node_shown(o, &p->nodes[i]))
            ok = add_node_json(doc, nodes, p, &p->nodes[i], o);
    if (ok)
        ok = add_items_json(doc, root, p, o);
    if (ok)
        ok = add_summary_json(doc, root, p, o);
    if (ok && !o->only_node)
        ok = add_bad_json(doc, root, p);
    if (ok && o->n_gaps)
        ok = add_gaps_json(doc, root, o);
    char *text = NULL;
    size_t len = 0;
    if (ok)
        text = yyjson_mut_write(doc, YYJSON_WRITE_PRETTY_TWO_SPACES, &len);
    yyjson_mut_doc_free(doc);
    if (!text)
        return hr_err_set(err, HR_E_NOMEM, "out of memory writing JSON");
    hr_buf_append(out, text, len);
    hr_buf_putc(out, '\n');
    free(text);
    if (hr_buf_failed(out))
        return hr_err_set(err, HR_E_NOMEM, "out of memory writing JSON");
    return HR_OK;
}

static hr_status render_yaml(const hr_plan *p, const hr_render_opts *o, hr_buf *out, hr_err *err)
{
    hr_buf js;
    hr_buf_init(&js, 0);
    hr_status st = render_json(p, o, &js, err);
    /* Numbers as their text: "factor": 1.00 stays 1.00. */
    yyjson_doc *d = st ? NULL : yyjson_read(hr_buf_str(&js), js.len, YYJSON_READ_NUMBER_AS_RAW);
    hr_buf_free(&js);
    if (st)
        return st;
    if (d == NULL)
        return hr_err_set(err, HR_E_NOMEM, "out of memory writing YAML");
    hr_yaml_write(yyjson_doc_get_root(d), out);
    yyjson_doc_free(d);
    return hr_buf_failed(out) ? hr_err_set(err, HR_E_NOMEM, "out of memory writing YAML") : HR_OK;
}

static hr_status render_names(const hr_plan *p, const hr_render_opts *o, hr_buf *out, hr_err *err)
{
    for (size_t i = 0; i < p->n_nodes; i++) {
        const hr_plan_node_out *no = &p->nodes[i];
        if (!node_shown(o, no))
            continue;
        for (size_t k = 0; k < no->n_pods; k++)
            if (listed(o, no, k) && would_write(&no->plans[k]))
                hr_buf_printf(out, "pod/%s\n", no->src[k]->meta.name);
    }
    return hr_buf_failed(out) ? hr_err_set(err, HR_E_NOMEM, "out of memory") : HR_OK;
}

/* "1500m", or the placeholder when the value means "nothing". */
static const char *milli(char *buf, size_t cap, int64_t v, int64_t none, const char *placeholder)
{
    if (v == none)
        return placeholder;
    snprintf(buf, cap, "%" PRId64 "m", v);
    return buf;
}

#define POD_COL_MIN 24
#define POD_COL_MAX 44

/* CAP for -o wide: the bound that cut r + burst (design §2.3), or "-". */
static const char *binding_cap(const hr_config *c, const hr_plan_node_out *no, size_t i)
{
    const hr_pod_plan *pp = &no->plans[i];
    if (!pod_managed(pp) || pp->gate == HR_GATE_NODE_UNKNOWN)
        return "-";
    hr_pod_caps caps;
    hr_pod_caps_of(c, no->np.allocatable, &no->pods[i], pp->request, &caps);
    /* The burst is a share of pp->share (S, or the tenant's S_t). */
    int64_t raw = hr_pod_raw(c, pp->share, pp->share_managed, pp->share_n, pp->request);
    return raw > caps.cap ? hr_cap_str(caps.kind) : "-";
}

/* Column widths, one set for the whole table so that every node's rows
 * line up: the longest namespace/name shown (capped: longer ones overflow
 * rather than being cut), and in wide the longest cap name and node name. */
typedef struct col_widths {
    size_t pod, cap, node;
} col_widths;

static col_widths widths(const hr_plan *p, const hr_render_opts *o)
{
    col_widths cw = {POD_COL_MIN, strlen("CAP"), strlen("NODE")};
    for (size_t n = 0; n < p->n_nodes; n++) {
        const hr_plan_node_out *no = &p->nodes[n];
        if (!node_shown(o, no))
            continue;
        size_t nl = strlen(no->name);
        for (size_t i = 0; i < no->n_pods; i++) {
            if (!listed(o, no, i))
                continue;
            size_t l = strlen(no->src[i]->meta.ns) + 1 + strlen(no->src[i]->meta.name);
            if (l > cw.pod)
                cw.pod = l > POD_COL_MAX ? POD_COL_MAX : l;
            if (o->fmt == HR_RENDER_WIDE) {
                size_t c = strlen(binding_cap(&no->cfg, no, i));
                cw.cap = c > cw.cap ? c : cw.cap;
                cw.node = nl > cw.node ? nl : cw.node;
            }
        }
    }
    return cw;
}

/* How many namespaces the managed pods of the tenant headed by pod h span
 * on the node. */
static uint32_t tenant_namespaces(const hr_plan_node_out *no, size_t h)
{
    uint32_t n = 0;
    for (size_t i = h; i < no->n_pods; i++) {
        if (!pod_managed(&no->plans[i]) || no->plans[i].tenant != h)
            continue;
        size_t k = h;
        while (k < i && !(pod_managed(&no->plans[k]) && no->plans[k].tenant == h &&
                          strcmp(no->src[k]->meta.ns, no->src[i]->meta.ns) == 0))
            k++;
        n += k == i;
    }
    return n;
}

/* Design §2.9: one line per tenant with managed pods on the node — its
 * name (and, for a tenant named by the tenant label, the namespaces it
 * spans here), its weight among the weights present, the slack it gets,
 * and what its pods divide it by. */
static void render_tenants(const hr_plan_node_out *no, hr_buf *b)
{
    char v1[32], v2[32], lab[48] = "";
    for (size_t i = 0; i < no->n_pods; i++) {
        const hr_pod_plan *pp = &no->plans[i];
        if (!pod_managed(pp) || pp->gate == HR_GATE_NODE_UNKNOWN || pp->tenant != i)
            continue;
        if (no->pods[i].tenant_by_label) {
            uint32_t k = tenant_namespaces(no, i);
            snprintf(lab, sizeof lab, "(label, %" PRIu32 " namespace%s)", k, k == 1 ? "" : "s");
        } else {
            lab[0] = '\0';
        }
        hr_buf_printf(b,
                      "  tenant %s%s%s  weight %" PRIu32 "/%" PRIu64 "%s  slack share %s  "
                      "(%" PRIu32 " pod%s, requests %s)\n",
                      no->pods[i].tenant ? no->pods[i].tenant : no->src[i]->meta.ns,
                      lab[0] ? " " : "", lab, pp->weight, no->np.weight_total,
                      no->pods[i].tenant_weight_invalid ? " (label invalid: read as 1)" : "",
                      milli(v1, sizeof v1, pp->share, -1, ""), pp->share_n,
                      pp->share_n == 1 ? "" : "s", milli(v2, sizeof v2, pp->share_managed, -1, ""));
    }
}

/* The table's WRITE: yes, no, held, or - (not managed). */
static const char *write_word(const hr_pod_plan *pp)
{
    bool managed = pod_managed(pp);
    const char *write = pp->gate == HR_GATE_NODE_UNKNOWN ? "held"
                        : !managed                       ? "-"
                        : !pp->write                     ? "no"
                        : pp->gate                       ? "held"
                                                         : "yes";
    return write;
}

/* The table's STATUS: the reason, and what holds or changes it. */
static void status_text(const hr_plan *p, const hr_render_opts *o, const hr_plan_node_out *no,
                        size_t i, hr_buf *b)
{
    const hr_kpod *kp = no->src[i];
    const hr_pod_plan *pp = &no->plans[i];
    bool managed = pod_managed(pp);
    char v1[32], v2[32], v3[32], v4[32];
    hr_buf_puts(b, hr_reason_str(pp->reason));
    if ((managed && pp->write && pp->gate) || pp->gate == HR_GATE_NODE_UNKNOWN)
        hr_buf_printf(b, " (held: %s)", hr_gate_str(pp->gate));
    if (managed && pp->qos_guarded)
        hr_buf_puts(b, " (qos-guard)");
    /* Design §2.12: the limit held by the startup grace, and until when. */
    if (managed && pp->grace) {
        char when[HR_KTIME_MICRO_MAX];
        hr_ktime_format_micro(hr_grace_end(&no->cfg, &no->pods[i]) * 1000000, when);
        hr_buf_printf(b, " (startup-grace until Ready or %s)", when);
    }
    const hr_pod_plan *was = changed(p, o, no, i);
    if (was)
        hr_buf_printf(
            b, " [--set-request: request %s → %s, target %s → %s]",
            milli(v1, sizeof v1, was->request, 0, "-"), milli(v2, sizeof v2, pp->request, 0, "-"),
            milli(v3, sizeof v3, was->target, -1, "-"), milli(v4, sizeof v4, pp->target, -1, "-"));
    if (kp->deleting)
        hr_buf_puts(b, " (terminating)");
}

static void render_node_table(const hr_plan *p, const hr_plan_node_out *no, const hr_render_opts *o,
                              const col_widths *cw, hr_buf *b)
{
    bool wide = o->fmt == HR_RENDER_WIDE;
    char f[32], v1[32], v2[32], v3[32], v4[32];
    hr_factor_str(no->factor_milli, f, sizeof f);
    hr_buf_printf(b,
                  "NODE %s  allocatable %s  booked %s  slack %s  "
                  "managed %s (%" PRIu32 " pod%s)  factor %s\n",
                  no->name, milli(v1, sizeof v1, no->np.allocatable, -1, ""),
                  milli(v2, sizeof v2, no->np.booked, -1, ""),
                  milli(v3, sizeof v3, no->np.slack, INT64_MIN, ""),
                  milli(v4, sizeof v4, no->np.managed, -1, ""), no->np.n_managed,
                  no->np.n_managed == 1 ? "" : "s", f);
    /* Design §2.11: which pool's settings planned it, when there are pools. */
    if (p->cfg->n_pools > 0) {
        char v5[32];
        hr_buf_printf(b,
                      "  pool %s: minBurstFloor %s  maxMultiplier %s  quantum %" PRId64
                      "m  deadband +%d%%/-%d%%\n",
                      no->pool ? no->pool : HR_POOL_TOP_LEVEL,
                      milli(v1, sizeof v1, no->cfg.min_burst_floor, -1, ""),
                      fixed3(v5, sizeof v5, no->cfg.max_multiplier_milli), no->cfg.quantum,
                      no->cfg.grow_percent, no->cfg.shrink_percent);
    }
    /* Conditions that change how to read the numbers, one per line. */
    if (no->undecodable)
        hr_buf_puts(b, "  ! could not be decoded (listed at the top): its pods are not planned "
                       "and get no write (node-unknown)\n");
    else if (no->unknown)
        hr_buf_puts(b, "  ! not in the dump: its pods are not planned and get no write "
                       "(node-unknown)\n");
    if (no->np.booking_unknown)
        hr_buf_printf(b,
                      "  ! booking unknown: %" PRIu32 " pod%s here%s could not be decoded: "
                      "increases held (booking-unknown)\n",
                      no->np.n_undecodable, no->np.n_undecodable == 1 ? "" : "s",
                      no->node.booking_unknown ? ", and pods whose node cannot be read," : "");
    if (no->node.disk_pressure)
        hr_buf_puts(b, "  ! DiskPressure: increases held\n");
    if (no->node.pid_pressure)
        hr_buf_puts(b, "  ! PIDPressure: increases held\n");
    if (!no->unknown && no->np.slack < 0)
        hr_buf_puts(b, "  ! over-booked: requests exceed allocatable, "
                       "targets are the requests\n");
    if (!no->n_pods) {
        hr_buf_puts(b, "  (no pods)\n\n");
        return;
    }
    if (p->cfg->policy == HR_POLICY_TENANT_FAIR)
        render_tenants(no, b);
    size_t w = cw->pod;
    hr_buf_printf(b, "  %-*s  %9s  %9s  %9s  %-5s  ", (int)w, "POD", "REQUEST", "LIMIT", "TARGET",
                  "WRITE");
    if (wide)
        hr_buf_printf(b, "%-*s  %-*s  ", (int)cw->cap, "CAP", (int)cw->node, "NODE");
    hr_buf_puts(b, "STATUS\n");
    for (size_t i = 0; i < no->n_pods; i++) {
        if (!listed(o, no, i))
            continue;
        const hr_kpod *kp = no->src[i];
        const hr_pod_plan *pp = &no->plans[i];
        bool managed = pod_managed(pp);
        size_t l = strlen(kp->meta.ns) + 1 + strlen(kp->meta.name);
        hr_buf_printf(b, "  %s/%s", kp->meta.ns, kp->meta.name);
        hr_buf_fill(b, ' ', l < w ? w - l : 0);
        const char *wcol = write_word(pp);
        bool bad = kp->pod.undecodable;
        hr_buf_printf(b, "  %9s  %9s  %9s  %-5s  ",
                      bad ? "?" : milli(v1, sizeof v1, pp->request, 0, "-"),
                      bad ? "?" : milli(v2, sizeof v2, pp->current, 0, "none"),
                      managed ? milli(v3, sizeof v3, pp->target, -1, "-") : "-", wcol);
        if (wide)
            hr_buf_printf(b, "%-*s  %-*s  ", (int)cw->cap, binding_cap(&no->cfg, no, i),
                          (int)cw->node, no->name);
        status_text(p, o, no, i, b);
        hr_buf_putc(b, '\n');
    }
    hr_buf_putc(b, '\n');
}

/* A x1000 fixed-point value as a short decimal: 10000 -> "10", 1500 -> "1.5". */
static const char *fixed3(char *buf, size_t cap, int64_t v)
{
    int n = snprintf(buf, cap, "%" PRId64 ".%03" PRId64, v / 1000, (v < 0 ? -v : v) % 1000);
    if (n <= 0 || (size_t)n >= cap)
        return "?";
    char *e = buf + n - 1;
    while (*e == '0')
        *e-- = '\0';
    if (*e == '.')
        *e = '\0';
    return buf;
}

static void render_config(const hr_config *c, hr_buf *b)
{
    char v1[32], v2[32];
    if (c->present)
        hr_buf_printf(b, "Config: HeadroomConfig \"cluster\"%s\n",
                      c->dry_run ? " (dryRun: would write nothing)" : "");
    else
        hr_buf_puts(b, "Config: no HeadroomConfig in the dump: defaults, "
                       "dry-run (would write nothing)\n");
    if (c->policy == HR_POLICY_TENANT_FAIR)
        hr_buf_printf(b,
                      "        policy TenantFair: each node's slack divided among its "
                      "tenants first (weights; tenant label %s, else the namespace), then by "
                      "request\n",
                      c->tenant_label ? c->tenant_label : HR_LABEL_TENANT);
    hr_buf_printf(b,
                  "        minBurstFloor %s  maxMultiplier %s  quantum %" PRId64
                  "m  deadband +%d%%/-%d%%\n",
                  milli(v1, sizeof v1, c->min_burst_floor, -1, ""),
                  fixed3(v2, sizeof v2, c->max_multiplier_milli), c->quantum, c->grow_percent,
                  c->shrink_percent);
    /* Design §2.11: the pools in order, the first match applies. */
    if (c->n_pools > 0)
        hr_buf_puts(b, "        nodePools (the first whose nodeSelector matches a node applies; "
                       "else the values above):");
    for (uint32_t i = 0; i < c->n_pools; i++)
        hr_buf_printf(b, " %s", c->pools[i].name);
    hr_buf_puts(b, c->n_pools > 0 ? "\n\n" : "\n");
}

/* Design §2.10: each group, its ratio and the member whose node binds. */
static void render_groups(const hr_plan *p, hr_buf *b)
{
    char f[32];
    for (size_t k = 0; k < p->n_groups; k++) {
        const hr_plan_group *g = &p->groups[k];
        hr_buf_printf(b,
                      "GROUP %s  %zu member%s  ratio %s: %s/%s on %s binds (%" PRId64
                      "m alone for %" PRId64 "m)%s\n",
                      g->key, g->n_members, g->n_members == 1 ? "" : "s",
                      fixed3(f, sizeof f, g->res.ratio_milli), g->binding_ns, g->binding_name,
                      g->binding_node, g->binding_own, g->binding_request,
                      g->res.moves ? "" : "  (held: inside the deadband)");
    }
    if (p->n_groups)
        hr_buf_putc(b, '\n');
}

static hr_status render_table(const hr_plan *p, const hr_render_opts *o, hr_buf *out, hr_err *err)
{
    const char *only_node = o->only_node;
    bool filtered = o->ns || o->selector;
    render_config(p->cfg, out);
    if (p->n_bad && !only_node) {
        hr_buf_puts(out, "Not decoded: a pod's node holds every increase (booking-unknown); a "
                         "node is unknown (node-unknown)\n");
        for (size_t i = 0; i < p->n_bad; i++) {
            const hr_snapshot_bad *bd = &p->bad[i];
            /* The decoder's message names the object and the field. */
            hr_buf_printf(out, "  %s", bd->msg ? bd->msg : bd->name);
            if (bd->node)
                hr_buf_printf(out, " (on node %s)", bd->node);
            else if (bd->node_unreadable)
                hr_buf_puts(out, " (its node cannot be read: every node holds its increases)");
            hr_buf_putc(out, '\n');
        }
        hr_buf_putc(out, '\n');
    }
    col_widths cw = widths(p, o);
    for (size_t i = 0; i < p->n_nodes; i++)
        if (node_shown(o, &p->nodes[i]))
            render_node_table(p, &p->nodes[i], o, &cw, out);
    render_groups(p, out);
    plan_summary s = summarize(p, o);
    size_t nodes = s.nodes, pods = s.pods, managed = s.managed, writes = s.writes,
           unknown = s.unknown;
    hr_buf_printf(out,
                  "%zu node%s, %zu pod%s%s, %zu managed, %zu would be "
                  "written\n",
                  nodes, nodes == 1 ? "" : "s", pods, pods == 1 ? "" : "s",
                  filtered ? " listed" : "", managed, writes);
    if (!only_node && (p->n_unbound || p->n_terminal))
        hr_buf_printf(out,
                      "not planned: %zu pod%s not bound to a node, "
                      "%zu finished pod%s\n",
                      p->n_unbound, p->n_unbound == 1 ? "" : "s", p->n_terminal,
                      p->n_terminal == 1 ? "" : "s");
    if (unknown)
        hr_buf_printf(out,
                      "not planned: %zu managed pod%s on a node not in the dump (node-unknown)\n",
                      unknown, unknown == 1 ? "" : "s");
    if (!only_node && p->n_bad)
        hr_buf_printf(out, "not decoded: %zu object%s (listed at the top)\n", p->n_bad,
                      p->n_bad == 1 ? "" : "s");
    if (hr_buf_failed(out))
        return hr_err_set(err, HR_E_NOMEM, "out of memory writing the table");
    return HR_OK;
}

/* The flat table: one row per listed pod, its node in the first column
 * (render.h). */
static hr_status render_flat(const hr_plan *p, const hr_render_opts *o, hr_buf *out, hr_err *err)
{
    bool wide = o->fmt == HR_RENDER_WIDE;
    static const char *const head[] = {"NODE",   "NAMESPACE", "NAME", "REQUEST", "LIMIT",
                                       "TARGET", "WRITE",     "CAP",  "STATUS"};
    hr_tabw t;
    hr_tabw_init(&t, wide ? 9 : 8);
    for (size_t k = 0; !o->no_headers && k < 9; k++)
        if (wide || k != 7)
            hr_tabw_cells(&t, head[k]);
    hr_buf st;
    hr_buf_init(&st, 0);
    char v1[32], v2[32], v3[32];
    for (size_t n = 0; n < p->n_nodes; n++) {
        const hr_plan_node_out *no = &p->nodes[n];
        if (!node_shown(o, no))
            continue;
        for (size_t i = 0; i < no->n_pods; i++) {
            if (!listed(o, no, i))
                continue;
            const hr_kpod *kp = no->src[i];
            const hr_pod_plan *pp = &no->plans[i];
            bool bad = kp->pod.undecodable, managed = pod_managed(pp);
            hr_tabw_cells(&t, no->name);
            hr_tabw_cells(&t, kp->meta.ns);
            hr_tabw_cells(&t, kp->meta.name);
            hr_tabw_cells(&t, bad ? "?" : milli(v1, sizeof v1, pp->request, 0, "-"));
            hr_tabw_cells(&t, bad ? "?" : milli(v2, sizeof v2, pp->current, 0, "none"));
            hr_tabw_cells(&t, managed ? milli(v3, sizeof v3, pp->target, -1, "-") : "-");
            hr_tabw_cells(&t, write_word(pp));
            if (wide)
                hr_tabw_cells(&t, bad ? "-" : binding_cap(&no->cfg, no, i));
            hr_buf_reset(&st);
            status_text(p, o, no, i, &st);
            hr_tabw_cell(&t, hr_buf_str(&st), st.len);
        }
    }
    bool ok = !hr_buf_failed(&st) && hr_tabw_write(&t, out);
    hr_buf_free(&st);
    hr_tabw_free(&t);
    return ok ? HR_OK : hr_err_set(err, HR_E_NOMEM, "out of memory writing the table");
}

hr_status hr_render(const hr_plan *p, const hr_render_opts *o, hr_buf *out, hr_err *err)
{
    hr_status st = check_node(p, o->only_node, err);
    if (st)
        return st;
    switch (o->fmt) {
    case HR_RENDER_JSON: return render_json(p, o, out, err);
    case HR_RENDER_YAML: return render_yaml(p, o, out, err);
    case HR_RENDER_NAME: return render_names(p, o, out, err);
    case HR_RENDER_BARS: return hr_render_bars(p, o, out, err);
    case HR_RENDER_TABLE:
    case HR_RENDER_WIDE:
    default: return o->by_node ? render_table(p, o, out, err) : render_flat(p, o, out, err);
    }
}

bool hr_render_node_shown(const hr_render_opts *o, const hr_plan_node_out *no)
{
    return node_shown(o, no);
}

bool hr_render_listed(const hr_render_opts *o, const hr_plan_node_out *no, size_t i)
{
    return listed(o, no, i);
}

hr_status hr_render_json(const hr_plan *p, const char *only_node, hr_buf *out, hr_err *err)
{
    hr_render_opts o = {.fmt = HR_RENDER_JSON, .only_node = only_node};
    return hr_render(p, &o, out, err);
}

hr_status hr_render_table(const hr_plan *p, const char *only_node, hr_buf *out, hr_err *err)
{
    hr_render_opts o = {.fmt = HR_RENDER_TABLE, .only_node = only_node, .by_node = true};
    return hr_render(p, &o, out, err);
}
