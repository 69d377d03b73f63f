/*
 * explain_tenant.c — explain's tenant view: what one namespace's reader can
 * know of a pod's CPU limit. The pod itself and its status annotation
 * (kube/decode/statusnote.h) carry the figures the controller computed; the
 * namespace's own pods on the node are listed by name; R less what they book
 * is "other namespaces", one sum — no other namespace's pod is named.
 */
#include "cmd/explain_tenant.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cmd/explain.h"
#include "cmd/live.h"
#include "core/quantity.h"
#include "kube/decode/statusnote.h"

#define cpu hr_explain_cpu

hr_status hr_explain_add_neighbour(void *ud, yyjson_val *it, hr_err *err)
{
    hr_explain_neighbours *nb = ud;
    const char *n = yyjson_get_str(yyjson_ptr_get(it, "/metadata/name"));
    const char *s = yyjson_get_str(yyjson_ptr_get(it, "/metadata/namespace"));
    const char *node = yyjson_get_str(yyjson_ptr_get(it, "/spec/nodeName"));
    const char *phase = yyjson_get_str(yyjson_ptr_get(it, "/status/phase"));
    if (!n || strcmp(s ? s : "default", nb->ns) != 0 || !node || strcmp(node, nb->node) != 0)
        return HR_OK;
    /* Design §3.1: finished pods book nothing. */
    if (phase && (!strcmp(phase, "Succeeded") || !strcmp(phase, "Failed")))
        return HR_OK;
    hr_arena da;
    hr_arena_init(&da, 0);
    hr_kpod kp;
    hr_err derr;
    int64_t booked =
        hr_decode_pod(it, &da, &kp, &derr) == HR_OK ? hr_pod_booked_cpu(&kp.pod) : HR_NONE;
    hr_arena_free(&da);
    if (nb->n == nb->cap) {
        size_t cap = nb->cap ? nb->cap * 2 : 16;
        hr_explain_neighbour *v = realloc(nb->v, cap * sizeof *v);
        if (v == NULL)
            return hr_err_set(err, HR_E_NOMEM, "out of memory listing the namespace's pods");
        nb->v = v;
        nb->cap = cap;
    }
    snprintf(nb->v[nb->n].name, sizeof nb->v[nb->n].name, "%s", n);
    nb->v[nb->n++].booked = booked;
    return HR_OK;
}

static int by_booked(const void *x, const void *y)
{
    const hr_explain_neighbour *a = x, *b = y;
    if (a->booked != b->booked)
        return a->booked > b->booked ? -1 : 1;
    return strcmp(a->name, b->name);
}

/* The pod's own containers, from its spec: name, request, limit. */
static void print_containers(const hr_kpod *kp, const hr_knote *nt)
{
    char a[HR_CPU_FMT_MAX], b[HR_CPU_FMT_MAX], c[HR_CPU_FMT_MAX];
    for (uint32_t i = 0; i < kp->pod.n_ctr; i++) {
        const hr_container *ct = &kp->pod.ctr[i];
        const char *to = "(not recorded)";
        for (size_t k = 0; nt && k < nt->n_limits; k++)
            if (!strcmp(nt->limits[k].container, kp->ctr_names[i]))
                to = cpu(nt->limits[k].milli, c);
        printf("    container %-24s request %-8s limit %-8s → %s\n", kp->ctr_names[i],
               cpu(ct->cpu_req, a), cpu(ct->cpu_lim, b), to);
    }
}

/* The pod's current CPU limit: the sum of its containers' (HR_NONE when
 * one has none). */
static int64_t current_limit(const hr_kpod *kp)
{
    int64_t sum = 0;
    for (uint32_t i = 0; i < kp->pod.n_ctr; i++) {
        if (kp->pod.ctr[i].cpu_lim == HR_NONE)
            return HR_NONE;
        sum += kp->pod.ctr[i].cpu_lim;
    }
    return sum;
}

static void print_tenant(const char *ns, const char *pod, const char *node, const char *why,
                         const hr_kpod *kp, const hr_knote *nt, const hr_explain_neighbours *nb,
                         const char *resize_cond)
{
    char a[HR_CPU_FMT_MAX], b[HR_CPU_FMT_MAX];
    if (nt == NULL) {
        printf("pod %s/%s on node %s\n", ns, pod, node);
        printf("no status annotation yet: the controller has not written this pod\n");
        return;
    }
    printf("pod %s/%s on node %s: managed\n", ns, pod, node);
    printf("tenant view: figures from the pod's status annotation, computed at %s (%s)\n",
           nt->computed_at[0] ? nt->computed_at : "an unrecorded time", why);
    printf("\nnode %s\n", node);
    if (nt->allocatable != HR_NONE)
        printf("  A  allocatable CPU                 %s\n", cpu(nt->allocatable, a));
    if (nt->booked != HR_NONE || nt->node_pods >= 0) {
        int64_t own = 0;
        bool own_known = true;
        for (size_t k = 0; k < nb->n; k++) {
            own_known &= nb->v[k].booked != HR_NONE;
            own += nb->v[k].booked == HR_NONE ? 0 : nb->v[k].booked;
        }
        printf("  R  booked by %" PRId64 " pods               %s\n", nt->node_pods,
               nt->booked == HR_NONE ? "(not recorded)" : cpu(nt->booked, a));
        size_t shown = nb->n < 16 ? nb->n : 16;
        for (size_t k = 0; k < shown; k++)
            if (nb->v[k].booked != 0)
                printf("       %-44s %8s  namespace %s\n", nb->v[k].name,
                       nb->v[k].booked == HR_NONE ? "?" : cpu(nb->v[k].booked, a), ns);
        if (nb->n > shown)
            printf("       … and %zu more pods of namespace %s\n", nb->n - shown, ns);
        if (nt->booked != HR_NONE && own_known)
            printf("       %-44s %8s  %" PRId64 " pod%s\n", "(other namespaces)",
                   cpu(nt->booked > own ? nt->booked - own : 0, a),
                   nt->node_pods > (int64_t)nb->n ? nt->node_pods - (int64_t)nb->n : 0,
                   nt->node_pods - (int64_t)nb->n == 1 ? "" : "s");
    }
    printf("  S  slack = A − R                   %s\n", cpu(nt->slack, a));
    if (nt->managed_pods >= 0)
        printf("  M  managed requests over N = %" PRId64 "     %s\n", nt->managed_pods,
               cpu(nt->managed_requests, a));
    else
        printf("  M  managed requests                %s\n", cpu(nt->managed_requests, a));
    printf("  F  factor = 1 + S/M                %" PRId64 ".%02" PRId64 "\n",
           nt->factor_milli / 1000, (nt->factor_milli % 1000 + 5) / 10);
    if (nt->version < 2) {
        printf("\nthe pod's own figures (request, burst, caps, target) are not recorded: the "
               "controller writes an older status annotation (node figures only)\n");
        if (kp)
            print_containers(kp, NULL);
        if (resize_cond)
            printf("kubelet: %s\n", resize_cond);
        return;
    }
    printf("\npod request r                      %s\n", cpu(nt->request, a));
    printf("  floor min(minBurstFloor, S/N)     %s\n", cpu(nt->floor, a));
    printf("  burst = max(S·r/M, floor)         %s (%s)\n", cpu(nt->burst, a),
           nt->burst != HR_NONE && nt->burst == nt->floor && nt->floor > 0 ? "the floor binds"
                                                                           : "proportional");
    if (nt->request != HR_NONE && nt->burst != HR_NONE)
        printf("  r + burst                         %s\n", cpu(nt->request + nt->burst, a));
    printf("  caps (design §2.3):\n");
    static const char *const what[HR_KNOTE_CAP_COUNT_] = {
        [HR_KNOTE_CAP_MULTIPLIER] = "r × maxMultiplier               ",
        [HR_KNOTE_CAP_ALLOCATABLE] = "allocatable max(A, r)           ",
        [HR_KNOTE_CAP_MAX_CPU] = "max-cpu annotation              ",
        [HR_KNOTE_CAP_LIMITRANGE] = "LimitRange                      ",
    };
    for (int k = 0; k < HR_KNOTE_CAP_COUNT_; k++)
        printf("    %s%s\n", what[k], cpu(nt->caps[k], a));
    if (nt->cap[0] == '\0' || !strcmp(nt->cap, "none"))
        printf("  cap                               none binds\n");
    else
        printf("  cap                               %s (%s)\n", cpu(nt->cap_limit, a), nt->cap);
    printf("  target                            %s\n", cpu(nt->target_limit, a));
    if (kp)
        print_containers(kp, nt);
    if (nt->limits_omitted > 0)
        printf("    … and %" PRId64 " more containers not recorded\n", nt->limits_omitted);
    int64_t cur = kp ? current_limit(kp) : HR_NONE;
    printf("\ncurrent limit %s → target %s: ", cur == HR_NONE ? "none" : cpu(cur, a),
           cpu(nt->target_limit, b));
    if (nt->reason[0])
        printf("not written (%s: docs/reasons.md)\n", nt->reason);
    else if (nt->dry_run == 1)
        printf("kube-headroom runs in dry-run: the target is what would be written\n");
    else if (cur == nt->target_limit)
        printf("written\n");
    else
        printf("no write (inside the deadband, or not yet applied)\n");
    if (resize_cond)
        printf("kubelet: %s\n", resize_cond);
}

static void json_containers(yyjson_mut_doc *d, yyjson_mut_val *o, const hr_kpod *kp,
                            const int64_t *targets)
{
    yyjson_mut_val *arr = yyjson_mut_obj_add_arr(d, o, "containers");
    for (uint32_t i = 0; kp && i < kp->pod.n_ctr; i++) {
        yyjson_mut_val *c = yyjson_mut_arr_add_obj(d, arr);
        yyjson_mut_obj_add_strcpy(d, c, "name", kp->ctr_names[i]);
        hr_explain_jq(d, c, "request", kp->pod.ctr[i].cpu_req);
        hr_explain_jq(d, c, "limit", kp->pod.ctr[i].cpu_lim);
        if (targets)
            hr_explain_jq(d, c, "target", targets[i]);
    }
}

static yyjson_mut_val *tenant_json(yyjson_mut_doc *d, const char *ns, const char *pod,
                                   const char *node, const hr_kpod *kp, const hr_knote *nt,
                                   const hr_explain_neighbours *nb, const char *resize_cond)
{
    yyjson_mut_val *o = yyjson_mut_obj(d);
    yyjson_mut_obj_add_str(d, o, "view", "tenant");
    yyjson_mut_obj_add_strcpy(d, o, "namespace", ns);
    yyjson_mut_obj_add_strcpy(d, o, "name", pod);
    yyjson_mut_obj_add_strcpy(d, o, "node", node);
    if (nt == NULL) {
        yyjson_mut_obj_add_null(d, o, "annotationVersion");
        return o;
    }
    yyjson_mut_obj_add_int(d, o, "annotationVersion", nt->version);
    if (nt->computed_at[0])
        yyjson_mut_obj_add_strcpy(d, o, "computedAt", nt->computed_at);
    if (nt->policy[0])
        yyjson_mut_obj_add_strcpy(d, o, "policy", nt->policy);
    if (nt->dry_run >= 0)
        yyjson_mut_obj_add_bool(d, o, "dryRun", nt->dry_run == 1);
    hr_explain_jq(d, o, "allocatable", nt->allocatable);
    hr_explain_jq(d, o, "booked", nt->booked);
    if (nt->node_pods >= 0)
        yyjson_mut_obj_add_int(d, o, "nodePods", nt->node_pods);
    yyjson_mut_val *by = yyjson_mut_obj_add_arr(d, o, "bookedBy");
    int64_t own = 0;
    bool own_known = true;
    for (size_t k = 0; k < nb->n; k++) {
        yyjson_mut_val *p = yyjson_mut_arr_add_obj(d, by);
        yyjson_mut_obj_add_strcpy(d, p, "namespace", ns);
        yyjson_mut_obj_add_strcpy(d, p, "name", nb->v[k].name);
        hr_explain_jq(d, p, "booked", nb->v[k].booked);
        own_known &= nb->v[k].booked != HR_NONE;
        own += nb->v[k].booked == HR_NONE ? 0 : nb->v[k].booked;
    }
    if (nt->booked != HR_NONE && own_known)
        hr_explain_jq(d, o, "bookedByOtherNamespaces", nt->booked > own ? nt->booked - own : 0);
    hr_explain_jq(d, o, "slack", nt->slack);
    hr_explain_jq(d, o, "managedRequests", nt->managed_requests);
    if (nt->managed_pods >= 0)
        yyjson_mut_obj_add_int(d, o, "managedPods", nt->managed_pods);
    if (nt->factor_milli != HR_NONE)
        hr_explain_jfactor(d, o, nt->factor_milli);
    hr_explain_jq(d, o, "request", nt->request);
    hr_explain_jq(d, o, "floor", nt->floor);
    hr_explain_jq(d, o, "burst", nt->burst);
    bool any_cap = false;
    for (int k = 0; k < HR_KNOTE_CAP_COUNT_; k++)
        any_cap |= nt->caps[k] != HR_NONE;
    if (any_cap) {
        yyjson_mut_val *cp = yyjson_mut_obj_add_obj(d, o, "caps");
        for (int k = 0; k < HR_KNOTE_CAP_COUNT_; k++)
            hr_explain_jq(d, cp, hr_knote_cap_str((hr_knote_cap)k), nt->caps[k]);
    }
    if (nt->cap[0])
        yyjson_mut_obj_add_strcpy(d, o, "cap", nt->cap);
    hr_explain_jq(d, o, "capLimit", nt->cap_limit);
    hr_explain_jq(d, o, "target", nt->target_limit);
    int64_t *targets = NULL;
    if (kp && nt->version >= 2 && (targets = malloc((kp->pod.n_ctr + 1u) * sizeof *targets))) {
        for (uint32_t i = 0; i < kp->pod.n_ctr; i++) {
            targets[i] = HR_NONE;
            for (size_t k = 0; k < nt->n_limits; k++)
                if (!strcmp(nt->limits[k].container, kp->ctr_names[i]))
                    targets[i] = nt->limits[k].milli;
        }
    }
    json_containers(d, o, kp, targets);
    free(targets);
    if (kp)
        hr_explain_jq(d, o, "currentLimit", current_limit(kp));
    if (nt->reason[0])
        yyjson_mut_obj_add_strcpy(d, o, "reason", nt->reason);
    if (resize_cond)
        yyjson_mut_obj_add_strcpy(d, o, "kubelet", resize_cond);
    return o;
}

/* Whether a GET of path is refused with 403 Forbidden. */
static bool forbidden(hr_kclient *k, const char *path)
{
    hr_buf b;
    hr_buf_init(&b, 64u << 20);
    hr_kresult res = {0};
    hr_err err;
    hr_status st = hr_kclient_do(k, "GET", path, NULL, NULL, 0, &b, &res, &err);
    hr_buf_free(&b);
    return st != HR_OK && res.status == 403;
}

/* The cluster-wide view reads the pod's Node and every pod bound to it
 * (hr_live_load): either refused is the tenant's case. */
bool hr_explain_cluster_forbidden(hr_kclient *k, const char *node)
{
    char path[600];
    snprintf(path, sizeof path, "/api/v1/nodes/%s", node);
    if (forbidden(k, path))
        return true;
    snprintf(path, sizeof path, "/api/v1/pods?limit=1&fieldSelector=spec.nodeName%%3D%s", node);
    return forbidden(k, path);
}

int hr_explain_tenant(hr_kclient *k, const char *ns, const char *pod, const char *node,
                      const hr_kpod *kp, const char *status_ann, const char *resize_cond,
                      hr_explain_neighbours *nb, const char *why, const hr_output *o)
{
    hr_err err;
    nb->node = node;
    if (k != NULL) {
        char path[600], query[600];
        snprintf(path, sizeof path, "/api/v1/namespaces/%s/pods", ns);
        snprintf(query, sizeof query, "fieldSelector=spec.nodeName%%3D%s", node);
        if (hr_live_each(k, path, query, false, hr_explain_add_neighbour, nb, &err) != HR_OK) {
            fprintf(stderr, "explain: the pods of namespace %s on node %s: %s\n", ns, node,
                    err.msg);
            return HR_EXIT_INPUT;
        }
    }
    qsort(nb->v, nb->n, sizeof *nb->v, by_booked);
    hr_arena a;
    hr_arena_init(&a, 0);
    hr_knote note;
    const hr_knote *nt = NULL;
    int rc = HR_EXIT_OK;
    if (status_ann) {
        if (hr_decode_status_note(status_ann, strlen(status_ann), ns, pod, &a, &note, &err) !=
            HR_OK) {
            fprintf(stderr, "explain: %s\n", err.msg);
            rc = HR_EXIT_INPUT;
            goto out;
        }
        nt = &note;
    }
    if (o->kind == HR_OUTPUT_TEXT) {
        print_tenant(ns, pod, node, why, kp, nt, nb, resize_cond);
    } else {
        yyjson_mut_doc *d = yyjson_mut_doc_new(NULL);
        rc = d ? hr_explain_emit(d, tenant_json(d, ns, pod, node, kp, nt, nb, resize_cond), o)
               : HR_EXIT_INPUT;
        yyjson_mut_doc_free(d);
    }
out:
    hr_arena_free(&a);
    return rc;
}
