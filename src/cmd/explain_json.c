/*
 * explain_json.c — explain's figures as one object (-o json, yaml, ...): the
 * cluster-wide view's, the printer, and the helpers the tenant view's object
 * is built with too (explain_tenant.c). Quantities in millicores with "m",
 * as the status annotation writes them.
 */
#include "cmd/explain_json.h"
#include "cmd/cmd.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/grace.h"
#include "core/quantity.h"
#include "core/wide.h"
#include "kube/ktime.h"

/* "1700m": the annotation's unit, for JSON; NULL for HR_NONE. */
static const char *milli_str(int64_t v, char *buf)
{
    if (v == HR_NONE)
        return NULL;
    snprintf(buf, HR_CPU_FMT_MAX, "%" PRId64 "m", v);
    return buf;
}

void hr_explain_jq(yyjson_mut_doc *d, yyjson_mut_val *o, const char *key, int64_t v)
{
    char b[HR_CPU_FMT_MAX];
    if (v != HR_NONE)
        yyjson_mut_obj_add_strcpy(d, o, key, milli_str(v, b));
}

void hr_explain_jfactor(yyjson_mut_doc *d, yyjson_mut_val *o, int64_t f)
{
    char b[48];
    int64_t centi = (f + 5) / 10; /* two decimals, half up, as the annotation's */
    snprintf(b, sizeof b, "%" PRId64 ".%02" PRId64, centi / 100, centi % 100);
    yyjson_mut_obj_add_strcpy(d, o, "factor", b);
}

yyjson_mut_val *hr_explain_cluster_json(yyjson_mut_doc *d, const hr_nodesnap *s,
                                        const hr_reconcile *r, size_t me, const char *status_ann,
                                        const char *resize_cond)
{
    const hr_node_plan *np = &r->plan;
    const hr_rpod *p = &s->node.pods[me];
    const hr_pod_plan *pp = &r->pods[me];
    const hr_config *cfg = &s->cfg;
    yyjson_mut_val *o = yyjson_mut_obj(d);
    yyjson_mut_obj_add_str(d, o, "view", "cluster");
    yyjson_mut_obj_add_strcpy(d, o, "namespace", p->ns);
    yyjson_mut_obj_add_strcpy(d, o, "name", p->name);
    yyjson_mut_obj_add_strcpy(d, o, "node", s->node.name);
    yyjson_mut_obj_add_strcpy(d, o, "state",
                              pp->reason == HR_MANAGED ? "managed" : hr_reason_str(pp->reason));
    if (pp->reason == HR_R_FOREIGN_WRITER && p->pod.foreign_writer != NULL)
        yyjson_mut_obj_add_strcpy(d, o, "foreignWriter", p->pod.foreign_writer);
    yyjson_mut_obj_add_bool(d, o, "dryRun", cfg->dry_run);
    hr_explain_jq(d, o, "allocatable", np->allocatable);
    hr_explain_jq(d, o, "booked", np->booked);
    yyjson_mut_obj_add_uint(d, o, "nodePods", np->n_pods);
    yyjson_mut_val *by = yyjson_mut_obj_add_arr(d, o, "bookedBy");
    for (size_t k = 0; k < s->node.n; k++) {
        if (r->pods[k].booked == 0)
            continue;
        yyjson_mut_val *b = yyjson_mut_arr_add_obj(d, by);
        yyjson_mut_obj_add_strcpy(d, b, "namespace", s->node.pods[k].ns);
        yyjson_mut_obj_add_strcpy(d, b, "name", s->node.pods[k].name);
        hr_explain_jq(d, b, "booked", r->pods[k].booked);
        yyjson_mut_obj_add_strcpy(
            d, b, "state",
            r->pods[k].reason == HR_MANAGED ? "managed" : hr_reason_str(r->pods[k].reason));
    }
    yyjson_mut_obj_add_bool(d, o, "bookingUnknown", np->booking_unknown);
    hr_explain_jq(d, o, "slack", np->slack);
    hr_explain_jq(d, o, "managedRequests", np->managed);
    yyjson_mut_obj_add_uint(d, o, "managedPods", np->n_managed);
    hr_explain_jfactor(d, o, hr_node_factor_milli(np));
    bool planned = pp->reason == HR_MANAGED && pp->gate != HR_GATE_NODE_UNKNOWN;
    if (planned) {
        int64_t rq = pp->request;
        hr_explain_jq(d, o, "request", rq);
        int64_t burst = 0, fl = 0;
        if (pp->share > 0 && pp->share_managed > 0 && pp->share_n > 0) {
            int64_t prop = hr_muldiv64(pp->share, rq, pp->share_managed);
            fl = hr_pod_floor(cfg, pp->share, pp->share_managed, pp->share_n);
            burst = hr_max64(prop, fl);
            hr_explain_jq(d, o, "proportional", prop);
        }
        hr_explain_jq(d, o, "floor", fl);
        hr_explain_jq(d, o, "burst", burst);
        hr_pod_caps caps;
        hr_pod_caps_of(cfg, np->allocatable, &p->pod, rq, &caps);
        yyjson_mut_val *cp = yyjson_mut_obj_add_obj(d, o, "caps");
        static const char *const key[HR_CAP_REQUEST] = {
            [HR_CAP_MULTIPLIER] = "multiplier",
            [HR_CAP_ALLOCATABLE] = "allocatable",
            [HR_CAP_MAX_CPU] = "max-cpu",
            [HR_CAP_LR_POD] = "limitrange-pod",
            [HR_CAP_LR_CONTAINER] = "limitrange-container",
            [HR_CAP_QUOTA] = "quota",
        };
        for (int k = 0; k < HR_CAP_REQUEST; k++)
            if (caps.on[k])
                hr_explain_jq(d, cp, key[k], caps.bound[k]);
        int64_t raw = hr_pod_raw(cfg, pp->share, pp->share_managed, pp->share_n, rq);
        int64_t cap_limit;
        hr_cap_kind ck = hr_cap_binding(&caps, raw, &cap_limit);
        yyjson_mut_obj_add_str(d, o, "cap", hr_cap_key(ck));
        if (ck != HR_CAP_COUNT_)
            hr_explain_jq(d, o, "capLimit", cap_limit);
        /* Design §2.12: the startup grace and when it ends. */
        if (p->pod.in_grace) {
            char when[HR_KTIME_MICRO_MAX];
            hr_ktime_format_micro(hr_grace_end(cfg, &p->pod) * 1000000, when);
            yyjson_mut_val *g = yyjson_mut_obj_add_obj(d, o, "startupGrace");
            yyjson_mut_obj_add_strcpy(d, g, "until", when);
            yyjson_mut_obj_add_bool(d, g, "holding", pp->grace);
        }
        hr_explain_jq(d, o, "target", pp->target);
        /* Design §2.13: the pod-level limit is the one written. */
        if (pp->pod_level) {
            yyjson_mut_val *pl = yyjson_mut_obj_add_obj(d, o, "podLevel");
            hr_explain_jq(d, pl, "request", p->pod.pod_cpu_req);
            hr_explain_jq(d, pl, "limit", p->pod.pod_cpu_lim);
            hr_explain_jq(d, pl, "target", pp->target);
        }
        yyjson_mut_val *arr = yyjson_mut_obj_add_arr(d, o, "containers");
        for (uint32_t i = 0; i < p->pod.n_ctr; i++) {
            yyjson_mut_val *c = yyjson_mut_arr_add_obj(d, arr);
            yyjson_mut_obj_add_strcpy(d, c, "name", p->ctr_names[i]);
            hr_explain_jq(d, c, "request", p->pod.ctr[i].cpu_req);
            hr_explain_jq(d, c, "limit", p->pod.ctr[i].cpu_lim);
            hr_explain_jq(d, c, "target", r->limits[pp->ctr_off + i]);
        }
        hr_explain_jq(d, o, "currentLimit", pp->current ? pp->current : HR_NONE);
        const char *w = !pp->write                            ? "none"
                        : pp->gate == HR_GATE_BOOKING_UNKNOWN ? "held"
                        : cfg->dry_run                        ? "dry-run"
                        : pp->gate != HR_GATE_PASS            ? "held"
                                                              : "due";
        yyjson_mut_obj_add_str(d, o, "write", w);
        if (pp->write && pp->gate != HR_GATE_PASS)
            yyjson_mut_obj_add_str(d, o, "reason", hr_gate_str(pp->gate));
    }
    if (status_ann)
        yyjson_mut_obj_add_strcpy(d, o, "statusAnnotation", status_ann);
    else
        yyjson_mut_obj_add_null(d, o, "statusAnnotation");
    if (resize_cond)
        yyjson_mut_obj_add_strcpy(d, o, "kubelet", resize_cond);
    return o;
}

/* The object printed as -o says, by the helper every command's -o uses
 * (cmd/output.h): JSON indented two spaces, YAML, jsonpath, custom-columns. */
int hr_explain_emit(yyjson_mut_doc *d, yyjson_mut_val *root, const hr_output *o)
{
    if (root == NULL) {
        fprintf(stderr, "explain: out of memory writing the object\n");
        return HR_EXIT_INPUT;
    }
    yyjson_mut_doc_set_root(d, root);
    size_t len = 0;
    char *text = yyjson_mut_write(d, YYJSON_WRITE_PRETTY_TWO_SPACES, &len);
    if (text == NULL) {
        fprintf(stderr, "explain: out of memory writing the object\n");
        return HR_EXIT_INPUT;
    }
    hr_buf b;
    hr_buf_init(&b, 0);
    hr_err err;
    int rc = HR_EXIT_OK;
    if (hr_output_doc(o, text, len, &b, &err) != HR_OK) {
        fprintf(stderr, "explain: %s\n", err.msg);
        rc = HR_EXIT_INPUT;
    } else if (fwrite(hr_buf_str(&b), 1, b.len, stdout) != b.len || fflush(stdout) != 0) {
        fprintf(stderr, "explain: writing the output failed\n");
        rc = HR_EXIT_INPUT;
    }
    hr_buf_free(&b);
    free(text);
    return rc;
}

int hr_explain_emit_unbound(const char *ns, const char *pod, const hr_output *o)
{
    yyjson_mut_doc *d = yyjson_mut_doc_new(NULL);
    if (d == NULL)
        return HR_EXIT_INPUT;
    yyjson_mut_val *obj = yyjson_mut_obj(d);
    yyjson_mut_obj_add_strcpy(d, obj, "namespace", ns);
    yyjson_mut_obj_add_strcpy(d, obj, "name", pod);
    yyjson_mut_obj_add_null(d, obj, "node");
    int rc = hr_explain_emit(d, obj, o);
    yyjson_mut_doc_free(d);
    return rc;
}
