/*
 * explain.c — `headroom explain POD [-n NS]`: the arithmetic behind one
 * pod's CPU limit, who booked its node, and why the last change was or was
 * not applied (design §0: every limit explainable in two commands).
 *
 * It reads the pod's node through the controller's own path — the cache's
 * sinks, the node snapshot, the reconcile — so the numbers it prints are
 * the numbers the controller acts on.
 */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <yyjson.h>

#include "cmd/explain.h"
#include "cmd/live.h"
#include "controller/nodesnap.h"
#include "controller/reconcile.h"
#include "core/names.h"
#include "core/quantity.h"
#include "core/wide.h"

static const char *cpu(int64_t milli, char *buf)
{
    if (milli == HR_NONE)
        return "none";
    if (milli < 0) {
        buf[0] = '-';
        hr_cpu_format_milli(-milli, buf + 1, HR_CPU_FMT_MAX - 1);
        return buf;
    }
    hr_cpu_format_milli(milli, buf, HR_CPU_FMT_MAX);
    return buf;
}

static int usage(const char *prog, const char *msg)
{
    if (msg)
        fprintf(stderr, "%s explain: %s\n", prog, msg);
    fprintf(stderr, "usage: %s explain POD [-n NAMESPACE] [--kubeconfig FILE] [--context NAME]\n",
            prog);
    return HR_EXIT_USAGE;
}

/* The node a pod is bound to, its live annotations and conditions, and
 * why it cannot be decoded (*decode_err, NULL when it can). */
static int read_pod(hr_kclient *k, const char *ns, const char *name, char *node, size_t cap,
                    char **status_ann, char **resize_cond, char **decode_err)
{
    *decode_err = NULL;
    char path[600];
    snprintf(path, sizeof path, "/api/v1/namespaces/%s/pods/%s", ns, name);
    hr_buf b;
    hr_buf_init(&b, 64u << 20);
    hr_err err;
    if (hr_live_get(k, path, &b, &err) != HR_OK) {
        fprintf(stderr, "explain: pod %s/%s: %s\n", ns, name, err.msg);
        hr_buf_free(&b);
        return HR_EXIT_INPUT;
    }
    yyjson_doc *d = yyjson_read(hr_buf_str(&b), b.len, 0);
    hr_buf_free(&b);
    if (d == NULL) {
        fprintf(stderr, "explain: pod %s/%s: the API server's answer is not JSON\n", ns, name);
        return HR_EXIT_INPUT;
    }
    yyjson_val *root = yyjson_doc_get_root(d);
    hr_arena da;
    hr_arena_init(&da, 0);
    hr_kpod kp;
    hr_err derr;
    if (hr_decode_pod(root, &da, &kp, &derr) != HR_OK)
        *decode_err = strdup(derr.msg);
    hr_arena_free(&da);
    const char *n = yyjson_get_str(yyjson_ptr_get(root, "/spec/nodeName"));
    snprintf(node, cap, "%s", n ? n : "");
    yyjson_val *ann = yyjson_ptr_get(root, "/metadata/annotations");
    const char *st = yyjson_get_str(yyjson_obj_get(ann, HR_ANN_STATUS));
    *status_ann = st ? strdup(st) : NULL;
    *resize_cond = NULL;
    yyjson_val *conds = yyjson_ptr_get(root, "/status/conditions");
    size_t i, max;
    yyjson_val *c;
    yyjson_arr_foreach(conds, i, max, c)
    {
        const char *t = yyjson_get_str(yyjson_obj_get(c, "type"));
        if (t && strcmp(t, "PodResizePending") == 0) {
            char line[600];
            const char *r = yyjson_get_str(yyjson_obj_get(c, "reason"));
            const char *m = yyjson_get_str(yyjson_obj_get(c, "message"));
            snprintf(line, sizeof line, "PodResizePending %s%s%s", r ? r : "", m ? ": " : "",
                     m ? m : "");
            *resize_cond = strdup(line);
        }
    }
    yyjson_doc_free(d);
    return HR_EXIT_OK;
}

/* Design §6: a pod here (or maybe here) that could not be decoded. */
static void print_booking_unknown(const hr_nodesnap *s, const hr_reconcile *r)
{
    const hr_node_plan *np = &r->plan;
    if (!np->booking_unknown)
        return;
    printf("  !  booking unknown (booking-unknown): R above is a lower bound; no CPU limit "
           "increase on this node until the pods below decode or are deleted (decreases still "
           "go)\n");
    for (size_t k = 0; k < s->node.n; k++)
        if (s->node.pods[k].pod.undecodable)
            printf("       %s/%s could not be decoded\n", s->node.pods[k].ns, s->node.pods[k].name);
    if (s->pods_nowhere)
        printf("       %u undecodable pod%s whose node cannot be read may be on this node\n",
               s->pods_nowhere, s->pods_nowhere == 1 ? "" : "s");
}

static void print_explain(const hr_nodesnap *s, const hr_reconcile *r, size_t me,
                          const char *status_ann, const char *resize_cond, const char *decode_err)
{
    char a[HR_CPU_FMT_MAX], b[HR_CPU_FMT_MAX], c[HR_CPU_FMT_MAX], d[HR_CPU_FMT_MAX];
    const hr_node_plan *np = &r->plan;
    const hr_rpod *p = &s->node.pods[me];
    const hr_pod_plan *pp = &r->pods[me];
    const hr_config *cfg = &s->cfg;
    int64_t f = hr_node_factor_milli(np);

    printf("pod %s/%s on node %s: %s\n", p->ns, p->name, s->node.name,
           pp->reason == HR_MANAGED ? "managed" : hr_reason_str(pp->reason));
    printf("\nnode %s%s\n", s->node.name,
           s->node_present ? ""
           : s->node_undecodable
               ? " (Node object could not be decoded: nothing is written, "
                 "node-unknown)"
               : " (Node object not in the cache: nothing is written, node-unknown)");
    printf("  A  allocatable CPU                 %s\n", cpu(np->allocatable, a));
    printf("  R  booked by %u pods               %s\n", np->n_pods, cpu(np->booked, a));
    /* Who booked it: the largest requests first. */
    size_t order[16];
    size_t n_order = 0;
    for (size_t k = 0; k < s->node.n && n_order < 16; k++)
        order[n_order++] = k;
    for (size_t k = 16; k < s->node.n; k++) {
        size_t low = 0;
        for (size_t j = 1; j < n_order; j++)
            if (r->pods[order[j]].booked < r->pods[order[low]].booked)
                low = j;
        if (r->pods[k].booked > r->pods[order[low]].booked)
            order[low] = k;
    }
    for (size_t x = 0; x < n_order; x++)
        for (size_t y = x + 1; y < n_order; y++)
            if (r->pods[order[y]].booked > r->pods[order[x]].booked) {
                size_t t = order[x];
                order[x] = order[y];
                order[y] = t;
            }
    for (size_t x = 0; x < n_order; x++) {
        size_t k = order[x];
        if (r->pods[k].booked == 0)
            continue;
        printf("       %-44s %8s  %s\n", s->node.pods[k].name, cpu(r->pods[k].booked, a),
               r->pods[k].reason == HR_MANAGED ? "managed" : hr_reason_str(r->pods[k].reason));
    }
    if (s->node.n > n_order)
        printf("       … and %zu more pods\n", s->node.n - n_order);
    print_booking_unknown(s, r);
    printf("  S  slack = A − R                   %s\n", cpu(np->slack, a));
    printf("  M  managed requests over N = %u     %s\n", np->n_managed, cpu(np->managed, a));
    printf("  F  factor = 1 + S/M                %" PRId64 ".%02" PRId64 "\n", f / 1000,
           (f % 1000 + 5) / 10);

    if (pp->reason == HR_R_UNDECODABLE) {
        printf("\nthis pod could not be decoded: %s\nits requests are unknown, so no CPU limit "
               "on node %s is raised until it decodes or is deleted (booking-unknown); its own "
               "limit is left as it is\n",
               decode_err ? decode_err : "(it decodes now: try again)", s->node.name);
        return;
    }
    if (pp->reason != HR_MANAGED) {
        printf("\nthis pod is not managed (%s): its limit is left as it is; its requests still "
               "book the node\n",
               hr_reason_str(pp->reason));
        return;
    }
    if (pp->gate == HR_GATE_NODE_UNKNOWN) {
        printf(
            "\nnot planned (node-unknown): the Node is not in the cache, so its allocatable is "
            "unknown; the limit is left as it is, in either direction, until the Node is seen\n");
        printf("last status annotation: %s\n", status_ann ? status_ann : "none");
        return;
    }
    int64_t rq = pp->request;
    printf("\npod request r                      %s\n", cpu(rq, a));
    int64_t burst = 0;
    if (np->slack > 0 && np->managed > 0) {
        int64_t prop = hr_muldiv64(np->slack, rq, np->managed);
        int64_t share = np->slack / (np->n_managed ? np->n_managed : 1);
        int64_t fl = hr_min64(cfg->min_burst_floor, share);
        burst = hr_max64(prop, fl);
        printf("  proportional S·r/M                %s\n", cpu(prop, a));
        printf("  floor min(minBurstFloor %s, S/N %s) = %s\n", cpu(cfg->min_burst_floor, b),
               cpu(share, c), cpu(fl, d));
        printf("  burst = max of the two            %s\n", cpu(burst, a));
    } else {
        printf("  no slack to share (S ≤ 0 or M = 0): burst 0, limit = request\n");
    }
    int64_t cap = 0;
    hr_pod_target(cfg, np->allocatable, np->slack, np->managed, np->n_managed, &p->pod, rq, &cap);
    printf("  r + burst                         %s\n", cpu(rq + burst, a));
    printf("  caps: r × maxMultiplier %s, allocatable %s, max-cpu %s, LimitRange pod max %s → %s\n",
           cfg->max_multiplier_milli ? cpu(rq * cfg->max_multiplier_milli / 1000, a) : "off",
           cpu(np->allocatable, b), cpu(p->pod.max_cpu, c), cpu(p->pod.limits.pod_max, d),
           cpu(cap, a));
    printf("  target (quantum %s%s)          %s\n", cpu(cfg->quantum, b),
           pp->qos_guarded ? ", QoS guard: next grid point" : "", cpu(pp->target, a));
    for (uint32_t i = 0; i < p->pod.n_ctr; i++) {
        int64_t l = r->limits[pp->ctr_off + i];
        const hr_container *ct = &p->pod.ctr[i];
        printf("    container %-24s request %-8s limit %-8s → %s\n", p->ctr_names[i],
               cpu(ct->cpu_req, a), cpu(ct->cpu_lim, b), l == HR_NONE ? "(left alone)" : cpu(l, c));
    }
    printf("\ncurrent limit %s → target %s: ", pp->current ? cpu(pp->current, a) : "none",
           cpu(pp->target, b));
    if (!pp->write)
        printf("no write (inside the deadband: +%d%% / −%d%%)\n", cfg->grow_percent,
               cfg->shrink_percent);
    else if (pp->gate == HR_GATE_BOOKING_UNKNOWN)
        printf("increase held: the node's booking is unknown (booking-unknown), in dry-run "
               "too\n");
    else if (cfg->dry_run)
        printf("would be written, but kube-headroom runs in dry-run%s\n",
               s->cfg_invalid ? "" : " (no HeadroomConfig, or spec.dryRun: true)");
    else if (pp->gate != HR_GATE_PASS)
        printf("increase skipped by the %s gate\n", hr_gate_str(pp->gate));
    else
        printf("due to be written\n");
    if (s->cfg_invalid)
        printf("HeadroomConfig refused: %s\n", s->cfg_invalid);
    printf("last status annotation: %s\n", status_ann ? status_ann : "none");
    if (resize_cond)
        printf("kubelet: %s\n", resize_cond);
}

int hr_cmd_explain(const char *prog, int argc, char **argv)
{
    const char *pod = NULL, *ns = "default", *kubeconfig = NULL, *context = NULL;
    for (int i = 0; i < argc; i++) {
        const char *arg = argv[i];
        if (!strcmp(arg, "-n") || !strcmp(arg, "--namespace")) {
            if (++i >= argc)
                return usage(prog, "-n needs a namespace");
            ns = argv[i];
        } else if (!strcmp(arg, "--kubeconfig")) {
            if (++i >= argc)
                return usage(prog, "--kubeconfig needs a file");
            kubeconfig = argv[i];
        } else if (!strcmp(arg, "--context")) {
            if (++i >= argc)
                return usage(prog, "--context needs a name");
            context = argv[i];
        } else if (!strcmp(arg, "-h") || !strcmp(arg, "--help")) {
            usage(prog, NULL);
            return HR_EXIT_OK;
        } else if (arg[0] == '-') {
            return usage(prog, "unknown flag");
        } else if (pod == NULL) {
            pod = arg;
        } else {
            return usage(prog, "one pod at a time");
        }
    }
    if (pod == NULL)
        return usage(prog, "which pod?");

    hr_err err;
    hr_kclient *k = NULL;
    if (hr_live_client(kubeconfig, context, &k, &err) != HR_OK) {
        fprintf(stderr, "explain: %s\n", err.msg);
        return HR_EXIT_INPUT;
    }
    char node[256];
    char *status_ann = NULL, *resize_cond = NULL, *decode_err = NULL;
    int rc = read_pod(k, ns, pod, node, sizeof node, &status_ann, &resize_cond, &decode_err);
    hr_cache *c = NULL;
    hr_arena a;
    hr_arena_init(&a, 0);
    if (rc == HR_EXIT_OK && node[0] == '\0') {
        printf("pod %s/%s is not bound to a node yet: nothing to compute\n", ns, pod);
        goto out;
    }
    if (rc != HR_EXIT_OK)
        goto out;
    if (hr_cache_new(&c, &err) != HR_OK || hr_live_load(k, c, node, &err) != HR_OK) {
        fprintf(stderr, "explain: %s\n", err.msg);
        rc = HR_EXIT_INPUT;
        goto out;
    }
    hr_nodesnap s;
    hr_nodesnap_opts so = {NULL, NULL, 0, HR_DRY_RUN_UNSET};
    hr_reconcile r;
    if (hr_nodesnap_take(c, node, &so, &a, &s, &err) != HR_OK ||
        hr_reconcile_node(&s.cfg, &s.node, 0, &a, &r, &err) != HR_OK) {
        fprintf(stderr, "explain: %s\n", err.msg);
        rc = HR_EXIT_INPUT;
        goto out;
    }
    size_t me = s.node.n;
    for (size_t i = 0; i < s.node.n; i++)
        if (!strcmp(s.node.pods[i].ns, ns) && !strcmp(s.node.pods[i].name, pod))
            me = i;
    if (me == s.node.n) {
        fprintf(stderr, "explain: pod %s/%s left node %s while reading it; try again\n", ns, pod,
                node);
        rc = HR_EXIT_INPUT;
        goto out;
    }
    print_explain(&s, &r, me, status_ann, resize_cond, decode_err);
out:
    hr_arena_free(&a);
    hr_cache_free(c);
    hr_kclient_free(k);
    free(status_ann);
    free(resize_cond);
    free(decode_err);
    return rc;
}
