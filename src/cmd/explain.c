/*
 * explain.c — `headroom explain POD [-n NS] [-f DUMP]`: the arithmetic behind one
 * pod's CPU limit, who booked its node, and why the last change was or was
 * not applied (design §0: every limit explainable in two commands).
 *
 * It reads the pod's node through the controller's own path — the cache's
 * sinks, the node snapshot, the reconcile — so the numbers it prints are
 * the numbers the controller acts on. With -f it reads a dump (a List)
 * into that same cache instead of the API server: the offline path the
 * golden tests drive. Names are checked (kube/kname.h) before any request.
 */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <yyjson.h>

#include "cmd/conn.h"
#include "cmd/explain.h"
#include "cmd/explain_json.h"
#include "cmd/explain_tenant.h"
#include "cmd/explain_throttle.h"
#include "cmd/live.h"
#include "controller/groups.h"
#include "controller/nodesnap.h"
#include "controller/reconcile.h"
#include "core/grace.h"
#include "core/names.h"
#include "core/quantity.h"
#include "core/vpa.h"
#include "core/wide.h"
#include "kube/decode/statusnote.h"
#include "kube/kname.h"
#include "kube/ktime.h"
#include "plan/snapshot.h"
#include "util/file.h"

const char *hr_explain_cpu(int64_t milli, char *buf)
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

enum {
    F_NAMESPACE,
    F_FILE,
    F_CONN,
    F_TIMEOUT = F_CONN + HR_CONN_N,
    F_FROM_ANNOTATION,
    F_OUTPUT,
    F_NO_HEADERS,
    F_ALLOW_MISSING,
    F_PROMETHEUS,
    F_PROMETHEUS_CA,
    F_PROMETHEUS_TOKEN,
    F_SINCE,
    F_N
};

static const hr_flag explain_flags[F_N] = {
    [F_NAMESPACE] = {"namespace", 'n', HR_FLAG_STRING, "NAMESPACE",
                     "the pod's namespace (default: the kubeconfig context's)", NULL},
    [F_FILE] = {"filename", 'f', HR_FLAG_STRING, "FILE",
                "explain from a dump (- for stdin) instead of the live cluster", "@file"},
    [F_CONN] = HR_CONN_FLAGS,
    [F_TIMEOUT] = HR_FLAG_REQUEST_TIMEOUT,
    [F_FROM_ANNOTATION] = {"from-annotation", 0, HR_FLAG_BOOL, NULL,
                           "the tenant view: the pod's status annotation and its namespace's "
                           "pods only\n"
                           "                           (the default when nodes or other "
                           "namespaces' pods are forbidden)",
                           NULL},
    [F_OUTPUT] = {"output", 'o', HR_FLAG_STRING, "FORMAT",
                  "text (default); json, yaml, jsonpath=TEMPLATE, custom-columns=SPEC: the "
                  "figures as one object",
                  "text " HR_OUTPUT_CHOICES},
    [F_NO_HEADERS] = HR_FLAG_NO_HEADERS,
    [F_ALLOW_MISSING] = HR_FLAG_ALLOW_MISSING,
    [F_PROMETHEUS] = {"prometheus", 0, HR_FLAG_STRING, "URL",
                      "the throttling view: was the pod throttled, at which ceiling, and what "
                      "request\n"
                      "                           would have avoided it, from this Prometheus "
                      "(cAdvisor's and our series)",
                      NULL},
    [F_PROMETHEUS_CA] = {"prometheus-ca", 0, HR_FLAG_STRING, "FILE",
                         "verify --prometheus' certificate against this CA (PEM)", "@file"},
    [F_PROMETHEUS_TOKEN] = {"prometheus-token-file", 0, HR_FLAG_STRING, "FILE",
                            "a bearer token for --prometheus", "@file"},
    [F_SINCE] = {"since", 0, HR_FLAG_STRING, "DURATION",
                 "--prometheus: the window, ending now (default 1h; 30s, 10m, 6h)", NULL},
};
HR_FLAGS_FIT(F_N);

#define cpu hr_explain_cpu

const hr_command hr_explain_command = {
    "explain",
    "POD|NAMESPACE/POD|pod/POD [-n NAMESPACE] [-f FILE|-] [--from-annotation] [--prometheus URL] "
    "[-o FORMAT]",
    "The arithmetic behind one pod's CPU limit, and why it was or was not written.",
    "Prints the node's booking, the pod's share and the slack-aware floor, each cap of\n"
    "design §2.3 and the one that binds, the quantum, and why the last change was or was\n"
    "not applied. The namespace: -n, else NAMESPACE/POD, else the kubeconfig context's\n"
    "(a dump read with -f has no context: default).\n"
    "Without read access to nodes or to other namespaces' pods (a tenant bound to the\n"
    "chart's <release>-tenant ClusterRole), or with --from-annotation, it prints the\n"
    "tenant view: the figures of the pod's status annotation, its own namespace's pods\n"
    "on the node by name and the other namespaces' as one sum.\n"
    "With --prometheus, the throttling view: the share of CFS periods the pod was throttled\n"
    "in over --since, the ceiling it hit and whether that was its slack share or a cap, and\n"
    "the least request that would have given it the CPU it wanted, on its node as it was.\n",
    explain_flags,
    F_N,
    1,
    hr_cmd_explain,
};

/* What explain reads of the pod object itself: the node it is bound to,
 * its live annotations and conditions, and why it cannot be decoded
 * (*decode_err, NULL when it can). */
typedef struct pod_facts {
    char node[256];
    char *status_ann, *resize_cond, *decode_err;
    hr_arena a;      /* kp's strings */
    hr_kpod kp;      /* the pod decoded, when decode_err is NULL */
    bool arena_used; /* a was initialized */
} pod_facts;

static void pod_facts_free(pod_facts *f)
{
    if (f->arena_used)
        hr_arena_free(&f->a);
    free(f->status_ann);
    free(f->resize_cond);
    free(f->decode_err);
}

static void read_facts(yyjson_val *root, pod_facts *f)
{
    hr_err derr;
    if (f->arena_used)
        hr_arena_free(&f->a);
    hr_arena_init(&f->a, 0);
    f->arena_used = true;
    if (hr_decode_pod(root, &f->a, &f->kp, &derr) != HR_OK)
        f->decode_err = strdup(derr.msg);
    const char *n = yyjson_get_str(yyjson_ptr_get(root, "/spec/nodeName"));
    snprintf(f->node, sizeof f->node, "%s", n ? n : "");
    yyjson_val *ann = yyjson_ptr_get(root, "/metadata/annotations");
    const char *st = yyjson_get_str(yyjson_obj_get(ann, HR_ANN_STATUS));
    f->status_ann = st ? strdup(st) : NULL;
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
            free(f->resize_cond);
            f->resize_cond = strdup(line);
        }
    }
}

/* The pod from the API server (ns and name are valid DNS-1123 names:
 * checked before they reach this path). */
static int read_pod(hr_kclient *k, const char *ns, const char *name, pod_facts *f)
{
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
    read_facts(yyjson_doc_get_root(d), f);
    yyjson_doc_free(d);
    return HR_EXIT_OK;
}

/* The pod in a dump (a List), or NULL. */
static yyjson_val *find_pod(yyjson_val *root, const char *ns, const char *name)
{
    size_t i, max;
    yyjson_val *it;
    yyjson_arr_foreach(yyjson_obj_get(root, "items"), i, max, it)
    {
        const char *kind = yyjson_get_str(yyjson_obj_get(it, "kind"));
        const char *n = yyjson_get_str(yyjson_ptr_get(it, "/metadata/name"));
        const char *s = yyjson_get_str(yyjson_ptr_get(it, "/metadata/namespace"));
        if (kind && n && !strcmp(kind, "Pod") && !strcmp(n, name) && !strcmp(s ? s : "default", ns))
            return it;
    }
    return NULL;
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

/* Design §2.10: the pod's group, what it would get alone and who binds. */
static void print_group(const hr_groups *g, size_t me, const hr_pod_plan *pp)
{
    if (g->pod_group == NULL || g->pod_group[me] < 0)
        return;
    char a[HR_CPU_FMT_MAX], b[HR_CPU_FMT_MAX], c[HR_CPU_FMT_MAX];
    const hr_group_info *gi = &g->info[g->pod_group[me]];
    int64_t rm = gi->res.ratio_milli;
    printf("  gang %s (design §2.10), %zu member%s\n", gi->key, gi->n_members,
           gi->n_members == 1 ? "" : "s");
    printf("    its target alone                %s\n", cpu(g->own_target[me], a));
    printf("    ratio = min target/request      %" PRId64 ".%03" PRId64
           ": %s/%s on node %s binds (%s for %s)\n",
           rm / 1000, rm % 1000, gi->binding_ns, gi->binding_name, gi->binding_node,
           cpu(gi->res.ratio_num, b), cpu(gi->res.ratio_den, c));
    printf("    the gang's value %s\n",
           gi->res.moves ? "moves: every member to request × ratio"
                         : "holds (inside the deadband): members keep their limits");
    (void)pp;
}

/* Design §2.12: a pod in its startup grace keeps its current limit in
 * place of r + burst, until Ready or the end of the duration. */
static void print_grace(const hr_config *cfg, const hr_rpod *p, const hr_pod_plan *pp)
{
    char a[HR_CPU_FMT_MAX], when[HR_KTIME_MICRO_MAX];
    int64_t end = hr_grace_end(cfg, &p->pod);
    if (end == HR_NONE)
        return;
    hr_ktime_format_micro(end * 1000000, when);
    int64_t left = end - (int64_t)time(NULL);
    printf("  startup grace (" HR_LABEL_GRACE "): until Ready or %s (%" PRId64 " s left)\n", when,
           left > 0 ? left : 0);
    if (pp->grace && pp->target == pp->current)
        printf("  in grace: its current limit %s is kept in place of r + burst\n",
               cpu(pp->current, a));
    else if (pp->grace)
        printf("  in grace: its current limit %s stands in for r + burst, above a cap\n",
               cpu(pp->current, a));
    else
        printf("  in grace, but a managed container has no limit to keep: r + burst applies\n");
}

static void print_explain(const hr_nodesnap *s, const hr_reconcile *r, size_t me,
                          const hr_groups *g, const char *status_ann, const char *resize_cond,
                          const char *decode_err)
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
    /* Design §2.11: the pool whose overrides planned this node. */
    if (s->n_pools > 0) {
        char m[48];
        if (cfg->max_multiplier_milli == 0)
            snprintf(m, sizeof m, "0 (no cap)");
        else
            snprintf(m, sizeof m, "%" PRId64 ".%03" PRId64, cfg->max_multiplier_milli / 1000,
                     cfg->max_multiplier_milli % 1000);
        printf("  pool %s: minBurstFloor %s, maxMultiplier %s, quantum %s, deadband +%d%%/−%d%%\n",
               s->pool ? s->pool : HR_POOL_TOP_LEVEL, cpu(cfg->min_burst_floor, a), m,
               cpu(cfg->quantum, b), cfg->grow_percent, cfg->shrink_percent);
    }
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
    if (pp->reason == HR_R_FOREIGN_WRITER && hr_vpa_is_writer(p->pod.foreign_writer)) {
        printf("\nthis pod is not managed (foreign-writer): %s writes its CPU limit "
               "(RequestsAndLimits), so kube-headroom leaves it to it; its requests still book "
               "the node\n",
               p->pod.foreign_writer);
        printf("to hand the limit back, set the VPA's controlledValues to RequestsOnly (or its "
               "updateMode to Off), or delete it (docs/reasons.md)\n");
        return;
    }
    if (pp->reason == HR_R_FOREIGN_WRITER && p->pod.foreign_writer != NULL) {
        printf("\nthis pod is not managed (foreign-writer): field manager \"%s\" writes its CPU "
               "limit (a resize), so kube-headroom leaves it to it; its requests still book the "
               "node\n",
               p->pod.foreign_writer);
        printf("to hand the limit back, remove that manager's entry from metadata.managedFields "
               "(docs/reasons.md)\n");
        return;
    }
    if (pp->reason == HR_R_POD_RESOURCES) {
        /* Design §2.13: what is missing for a pod-level resize. */
        printf("\nthis pod is not managed (pod-level-resources): %s; its limits are left as they "
               "are; its requests still book the node\n",
               hr_pod_level(&p->pod)
                   ? "its CPU is set at pod level (spec.resources), and a resize of pod-level "
                     "resources needs an API server of 1.36 or newer and a node that declares "
                     "InPlacePodLevelResourcesVerticalScaling (status.declaredFeatures): not "
                     "both are there"
                   : "its pod-level resources (spec.resources) set no CPU request");
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
    /* Design §2.9: under TenantFair the burst is a share of the tenant's
     * S_t, M_t and N_t (pp->share…), where Proportional uses S, M and N. */
    bool tf = cfg->policy == HR_POLICY_TENANT_FAIR;
    if (tf) {
        if (p->pod.tenant_by_label)
            printf("  tenant (policy TenantFair)        %s (label %s of namespace %s), weight "
                   "%" PRIu32 "%s\n",
                   p->pod.tenant, cfg->tenant_label ? cfg->tenant_label : HR_LABEL_TENANT, p->ns,
                   pp->weight,
                   p->pod.tenant_weight_invalid ? " (its " HR_LABEL_WEIGHT
                                                  " label is not a positive integer: read as 1)"
                                                : "");
        else
            printf("  tenant (policy TenantFair)        namespace %s, weight %" PRIu32 "%s\n",
                   p->ns, pp->weight,
                   p->pod.tenant_weight_invalid ? " (its " HR_LABEL_WEIGHT
                                                  " label is not a positive integer: read as 1)"
                                                : "");
        printf("  S_t = ⌊S · w / W⌋, W = %" PRIu64 " over %u tenant%s  %s\n", np->weight_total,
               np->n_tenants, np->n_tenants == 1 ? "" : "s", cpu(pp->share, a));
        printf("  M_t  its managed requests here over N_t = %u  %s\n", pp->share_n,
               cpu(pp->share_managed, a));
    }
    if (pp->share > 0 && pp->share_managed > 0 && pp->share_n > 0) {
        int64_t prop = hr_muldiv64(pp->share, rq, pp->share_managed);
        int64_t share = pp->share / pp->share_n;
        int64_t fl = hr_pod_floor(cfg, pp->share, pp->share_managed, pp->share_n);
        burst = hr_max64(prop, fl);
        printf(tf ? "  proportional S_t·r/M_t            %s\n"
                  : "  proportional S·r/M                %s\n",
               cpu(prop, a));
        printf(tf ? "  floor min(minBurstFloor %s, S_t/N_t %s) = %s\n"
                  : "  floor min(minBurstFloor %s, S/N %s) = %s\n",
               cpu(cfg->min_burst_floor, b), cpu(share, c), cpu(fl, d));
        printf("  burst = max of the two            %s (%s)\n", cpu(burst, a),
               fl > prop ? "the floor binds" : "proportional");
    } else {
        printf(tf ? "  no slack to share (S_t ≤ 0 or M_t = 0): burst 0, limit = request\n"
                  : "  no slack to share (S ≤ 0 or M = 0): burst 0, limit = request\n");
    }
    hr_pod_caps caps;
    hr_pod_caps_of(cfg, np->allocatable, &p->pod, rq, &caps);
    int64_t raw = hr_pod_raw(cfg, pp->share, pp->share_managed, pp->share_n, rq);
    printf("  r + burst                         %s\n", cpu(raw, a));
    /* One buffer per figure: printf reads them all after every cpu() ran. */
    char cb[HR_CAP_COUNT_][HR_CPU_FMT_MAX];
    printf("  caps (design §2.3):\n");
    /* Padded by hand: printf widths count bytes, and × is two. */
    static const char *const what[HR_CAP_REQUEST] = {
        [HR_CAP_MULTIPLIER] = "r × maxMultiplier               ",
        [HR_CAP_ALLOCATABLE] = "allocatable max(A, r)           ",
        [HR_CAP_MAX_CPU] = "max-cpu annotation              ",
        [HR_CAP_LR_POD] = "LimitRange Pod max              ",
        [HR_CAP_LR_CONTAINER] = "LimitRange Container bounds     ",
        [HR_CAP_QUOTA] = "ResourceQuota share             ",
    };
    for (int k = 0; k < HR_CAP_REQUEST; k++)
        if (k != HR_CAP_QUOTA || caps.on[k]) /* shown in a namespace with a quota only */
            printf("    %s%s\n", what[k],
                   !caps.on[k] ? (k == HR_CAP_MULTIPLIER ? "off" : "none")
                               : cpu(caps.bound[k], cb[k]));
    printf("  cap = max(least bound, r)         %s (%s)\n", cpu(caps.cap, a),
           hr_cap_str(caps.kind));
    if (raw > caps.cap && caps.kind == HR_CAP_REQUEST)
        printf("  r + burst %s > cap %s: every bound is below r, and the request wins over a "
               "cap\n",
               cpu(raw, a), cpu(caps.cap, b));
    else if (raw > caps.cap)
        printf("  r + burst %s > cap %s: the %s cap binds\n", cpu(raw, a), cpu(caps.cap, b),
               hr_cap_str(caps.kind));
    else if (raw == caps.cap)
        printf("  r + burst %s = cap: it reaches the %s cap exactly\n", cpu(raw, a),
               hr_cap_str(caps.kind));
    else
        printf("  r + burst %s < cap %s: no cap binds\n", cpu(raw, a), cpu(caps.cap, b));
    print_group(g, me, pp);
    print_grace(cfg, p, pp);
    printf("  target (quantum %s%s)  %s\n", cpu(cfg->quantum, b),
           pp->qos_guarded ? ", QoS guard: next grid point" : "", cpu(pp->target, a));
    if (pp->pod_level)
        printf("    pod level (spec.resources)        request %-8s limit %-8s → %s\n",
               cpu(p->pod.pod_cpu_req, a), cpu(p->pod.pod_cpu_lim, b), cpu(pp->target, c));
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
               s->cfg_invalid ? ""
               : cfg->present ? " (spec.dryRun is true or left out; dryRun: false writes)"
                              : " (no HeadroomConfig)");
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

static bool is_pod_kind(const char *s)
{
    return strcmp(s, "pod") == 0 || strcmp(s, "pods") == 0 || strcmp(s, "po") == 0;
}

/* POD, NS/POD, pod/POD (also pods/, po/), NS/pod/POD: the namespace part
 * (or NULL) and the name, both checked against the DNS-1123 rules before
 * either goes into a request path. */
static int parse_ref(const char *prog, const char *ref, char *ns, size_t ns_cap, char *name,
                     size_t name_cap)
{
    char buf[600];
    if (snprintf(buf, sizeof buf, "%s", ref) >= (int)sizeof buf)
        return hr_usage_error(prog, &hr_explain_command, "the pod name is too long");
    char *part[4];
    int n = 0;
    for (char *p = buf, *slash; n < 4; p = slash + 1) {
        part[n++] = p;
        if ((slash = strchr(p, '/')) == NULL)
            break;
        *slash = '\0';
    }
    const char *nsp = NULL, *pod = NULL;
    bool kind_ok = true;
    if (n == 1) {
        pod = part[0];
    } else if (n == 2) {
        if (is_pod_kind(part[0]))
            pod = part[1];
        else
            nsp = part[0], pod = part[1];
    } else if (n == 3) {
        nsp = part[0];
        kind_ok = is_pod_kind(part[1]);
        pod = part[2];
    }
    if (pod == NULL || !kind_ok) {
        fprintf(stderr, "%s explain: \"%s\": expected POD, NAMESPACE/POD or pod/POD\n", prog, ref);
        return HR_EXIT_USAGE;
    }
    if (!hr_kname_subdomain(pod)) {
        fprintf(stderr,
                "%s explain: \"%s\" is not a pod name (lowercase letters, digits, '-' and '.', "
                "at most 253)\n",
                prog, pod);
        return HR_EXIT_USAGE;
    }
    if (nsp && !hr_kname_label(nsp)) {
        fprintf(stderr,
                "%s explain: \"%s\" is not a namespace name (lowercase letters, digits and '-', "
                "at most 63)\n",
                prog, nsp);
        return HR_EXIT_USAGE;
    }
    snprintf(ns, ns_cap, "%s", nsp ? nsp : "");
    snprintf(name, name_cap, "%s", pod);
    return HR_EXIT_OK;
}

/* A dump that lacks a kind explains quietly wrong: the same warnings as
 * plan -f (plan/snapshot.h), on stderr. */
static void warn_gaps(yyjson_val *root)
{
    size_t n_ns = 0, n_pods = 0, n_lr = 0, n_cfg = 0, i, max;
    yyjson_val *it;
    yyjson_arr_foreach(yyjson_obj_get(root, "items"), i, max, it)
    {
        const char *kind = yyjson_get_str(yyjson_obj_get(it, "kind"));
        const char *name = yyjson_get_str(yyjson_ptr_get(it, "/metadata/name"));
        n_ns += kind && !strcmp(kind, "Namespace");
        n_pods += kind && !strcmp(kind, "Pod");
        n_lr += kind && !strcmp(kind, "LimitRange");
        n_cfg += kind && name && !strcmp(kind, "HeadroomConfig") && !strcmp(name, HR_CONFIG_NAME);
    }
    hr_snapshot_gap gaps[3];
    size_t n = hr_dump_gaps(n_ns, n_pods, n_lr, n_cfg > 0, gaps);
    for (size_t k = 0; k < n; k++)
        fprintf(stderr, "explain: warning: the dump has no %s: %s\n", gaps[k].kind, gaps[k].effect);
    if (n)
        fprintf(stderr, "explain: a complete dump: %s > dump.json\n", HR_DUMP_KUBECTL);
}

/* The dump at path into the cache; its pod ns/name into *f (1 when absent);
 * with nb, the pods of nb->ns on the pod's node into it (the tenant view). */
static int load_dump(const char *path, hr_cache *c, const char *ns, const char *name, pod_facts *f,
                     hr_explain_neighbours *nb)
{
    char *text = NULL;
    size_t len = 0;
    hr_err err;
    if (hr_file_slurp(path, (size_t)1 << 30, YYJSON_PADDING_SIZE, &text, &len, &err) != HR_OK) {
        fprintf(stderr, "explain: %s\n", err.msg);
        return HR_EXIT_INPUT;
    }
    yyjson_read_err re;
    yyjson_doc *d = yyjson_read_opts(text, len, YYJSON_READ_INSITU, NULL, &re);
    if (d == NULL) {
        fprintf(stderr, "explain: %s: not JSON at byte %zu: %s\n", path, re.pos, re.msg);
        free(text);
        return HR_EXIT_INPUT;
    }
    yyjson_val *root = yyjson_doc_get_root(d);
    int rc = HR_EXIT_OK;
    yyjson_val *pod = find_pod(root, ns, name);
    if (pod == NULL) {
        fprintf(stderr, "explain: pod %s/%s is not in %s\n", ns, name, path);
        rc = HR_EXIT_INPUT;
    } else if (hr_live_load_list(c, root, &err) != HR_OK) {
        fprintf(stderr, "explain: %s: %s\n", path, err.msg);
        rc = HR_EXIT_INPUT;
    } else {
        read_facts(pod, f);
        warn_gaps(root);
        size_t i, max;
        yyjson_val *it;
        nb->node = f->node;
        yyjson_arr_foreach(yyjson_obj_get(root, "items"), i, max, it)
        {
            const char *kind = yyjson_get_str(yyjson_obj_get(it, "kind"));
            if (kind && !strcmp(kind, "Pod") && hr_explain_add_neighbour(nb, it, &err) != HR_OK) {
                fprintf(stderr, "explain: %s\n", err.msg);
                rc = HR_EXIT_INPUT;
                break;
            }
        }
    }
    yyjson_doc_free(d);
    free(text);
    return rc;
}

int hr_cmd_explain(const char *prog, int argc, char **argv)
{
    const hr_command *cmd = &hr_explain_command;
    hr_args args;
    int rc = hr_args_parse(prog, cmd, argc, argv, &args);
    const char *ref = args.n_pos ? args.pos[0] : NULL;
    const char *ns_flag = args.val[F_NAMESPACE], *file = args.val[F_FILE];
    hr_conn conn;
    if (rc == HR_EXIT_OK && !args.help)
        rc = hr_conn_opts(prog, cmd, &args, F_CONN, &conn);
    const char *conn_flag = rc == HR_EXIT_OK ? hr_conn_given(cmd, &args, F_CONN) : NULL;
    long timeout_ms = args.val[F_TIMEOUT] ? hr_duration_ms(args.val[F_TIMEOUT]) : 0;
    bool from_ann = rc == HR_EXIT_OK && hr_args_on(&args, F_FROM_ANNOTATION);
    hr_throttle_opts thr = {args.val[F_PROMETHEUS],
                            args.val[F_PROMETHEUS_CA],
                            args.val[F_PROMETHEUS_TOKEN],
                            args.val[F_SINCE] ? hr_duration_ms(args.val[F_SINCE]) / 1000 : 3600,
                            (int64_t)time(NULL),
                            timeout_ms};
    bool args_since = args.val[F_SINCE] != NULL;
    hr_output out;
    if (rc == HR_EXIT_OK && !args.help)
        rc = hr_output_parse(prog, cmd, args.val[F_OUTPUT], HR_OUTPUT_ALLOW_DOC, &out);
    if (rc == HR_EXIT_OK && !args.help)
        hr_output_flags(&out, &args, F_NO_HEADERS, F_ALLOW_MISSING);
    hr_args_free(&args); /* the values point into argv */
    if (rc != HR_EXIT_OK || args.help)
        return rc;
    const hr_output *fmt = &out;
    if (ref == NULL)
        return hr_usage_error(prog, cmd, "which pod?");
    if (timeout_ms < 0)
        return hr_usage_error(prog, cmd, "--request-timeout takes 30s, 2m, 1h or 0");
    char ref_ns[64] = "", pod[254] = "", ns[64];
    rc = parse_ref(prog, ref, ref_ns, sizeof ref_ns, pod, sizeof pod);
    if (rc != HR_EXIT_OK)
        return rc;
    if (ns_flag && !hr_kname_label(ns_flag))
        return hr_usage_error(prog, cmd, "\"%s\" is not a namespace name", ns_flag);
    if (ns_flag && ref_ns[0] && strcmp(ns_flag, ref_ns) != 0)
        return hr_usage_error(prog, cmd, "-n %s and %s name two namespaces", ns_flag, ref);
    if (file && conn_flag)
        return hr_usage_error(prog, cmd, "-f reads a dump; it does not mix with --%s", conn_flag);
    if (thr.window_s < 30)
        return hr_usage_error(prog, cmd, "--since takes 30s or more: 10m, 1h, 6h");
    if (thr.url && (file || from_ann))
        return hr_usage_error(prog, cmd, "--prometheus reads the live pod: not with %s",
                              file ? "-f" : "--from-annotation");
    if (!thr.url && (args_since || thr.ca || thr.bearer))
        return hr_usage_error(prog, cmd,
                              "--since, --prometheus-ca and --prometheus-token-file "
                              "go with --prometheus");

    hr_err err;
    hr_kclient *k = NULL;
    if (file == NULL && hr_live_client(&conn.o, timeout_ms, &k, &err) != HR_OK) {
        fprintf(stderr, "explain: %s\n", err.msg);
        return HR_EXIT_INPUT;
    }
    /* Like kubectl: -n, else the namespace in the name, else the
     * kubeconfig context's (a dump has no context: "default"). */
    snprintf(ns, sizeof ns, "%s",
             ns_flag     ? ns_flag
             : ref_ns[0] ? ref_ns
             : k         ? hr_kclient_namespace(k)
                         : "default");
    pod_facts f = {0};
    hr_explain_neighbours nb = {.ns = ns};
    hr_cache *c = NULL;
    hr_arena a;
    hr_arena_init(&a, 0);
    if (hr_cache_new(&c, &err) != HR_OK) {
        fprintf(stderr, "explain: %s\n", err.msg);
        rc = HR_EXIT_INPUT;
        goto out;
    }
    /* Design §2.13: a dump holds no server version, its nodes' declared
     * features decide; live, the API server's version too (as `run`). */
    bool pod_resize = true;
    if (k != NULL) {
        hr_err verr;
        hr_live_server_pod_resize(k, &pod_resize, NULL, &verr);
    }
    hr_cache_set_server_pod_resize(c, pod_resize);
    rc = file ? load_dump(file, c, ns, pod, &f, &nb) : read_pod(k, ns, pod, &f);
    if (rc != HR_EXIT_OK)
        goto out;
    if (f.node[0] == '\0') {
        if (fmt->kind == HR_OUTPUT_TEXT)
            printf("pod %s/%s is not bound to a node yet: nothing to compute\n", ns, pod);
        else
            rc = hr_explain_emit_unbound(ns, pod, fmt);
        goto out;
    }
    if (!hr_kname_subdomain(f.node)) {
        fprintf(stderr, "explain: pod %s/%s: spec.nodeName is not a node name\n", ns, pod);
        rc = HR_EXIT_INPUT;
        goto out;
    }
    /* The tenant view: asked for, or the cluster-wide read is forbidden. */
    const char *why = from_ann ? "--from-annotation"
                      : k && hr_explain_cluster_forbidden(k, f.node)
                          ? "nodes or other namespaces' pods are forbidden to you"
                          : NULL;
    if (why) {
        rc = hr_explain_tenant(k, ns, pod, f.node, f.decode_err ? NULL : &f.kp, f.status_ann,
                               f.resize_cond, &nb, why, fmt);
        goto out;
    }
    if (k != NULL && hr_live_load(k, c, f.node, &err) != HR_OK) {
        fprintf(stderr, "explain: %s\n", err.msg);
        rc = HR_EXIT_INPUT;
        goto out;
    }
    hr_nodesnap s;
    hr_nodesnap_opts so = {NULL, NULL, 0, HR_DRY_RUN_UNSET, (int64_t)time(NULL)};
    hr_reconcile r;
    hr_groups g = {.cache = c, .opts = &so, .cfg = &s.cfg, .a = &a};
    if (hr_nodesnap_take(c, f.node, &so, &a, &s, &err) != HR_OK ||
        hr_reconcile_node_with(&s.cfg, &s.node, 0, hr_groups_apply, &g, &a, &r, &err) != HR_OK) {
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
                f.node);
        rc = HR_EXIT_INPUT;
        goto out;
    }
    if (thr.url) {
        const hr_pod_plan *pp = &r.pods[me];
        hr_throttle_pod tp = {ns, pod, f.node, pp->request > 0 ? pp->request : 0,
                              s.cfg.max_multiplier_milli};
        rc = hr_explain_throttle(&thr, &tp, fmt);
    } else if (fmt->kind == HR_OUTPUT_TEXT) {
        print_explain(&s, &r, me, &g, f.status_ann, f.resize_cond, f.decode_err);
    } else {
        yyjson_mut_doc *d = yyjson_mut_doc_new(NULL);
        rc = d ? hr_explain_emit(
                     d, hr_explain_cluster_json(d, &s, &r, me, f.status_ann, f.resize_cond), fmt)
               : HR_EXIT_INPUT;
        yyjson_mut_doc_free(d);
    }
out:
    free(nb.v);
    hr_arena_free(&a);
    hr_cache_free(c);
    hr_kclient_free(k);
    pod_facts_free(&f);
    return rc;
}
