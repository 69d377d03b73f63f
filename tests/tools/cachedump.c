/*
 * cachedump.c — the controller's watch cache, filled from the real API
 * server, printed in one canonical line per record: what the cache holds
 * after the initial sync, fed by protobuf or by JSON.
 *
 *   cachedump protobuf|json [KUBECONFIG]
 *
 * It starts the same informers `headroom run` starts (cache/informers.h,
 * the client of kube/transport/client.h, the sinks of cache/sink.h) with
 * protobuf asked for or not, waits until every kind is synced (60 s at
 * most), then prints every pod (every field of its record and of every
 * container), node, namespace, the LimitRange bounds of each namespace and
 * the namespaces a ResourceQuota on limits.cpu bounds, in no fixed order
 * (sort the output). On stderr, one line per kind: "KIND protobuf=B
 * pb_objects=N listed=N" (the watch's own counters; the tests read the
 * encoding from the fault proxy's log or the API server, not from these).
 * tests/e2e/e2e_protobuf_equal.sh diffs the two dumps: equal exactly when
 * the cache received the same records whichever encoding they came in.
 *
 * Exit 0 when synced, 1 when not in time, 2 on usage or setup errors.
 */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "cache/cache.h"
#include "cache/informers.h"
#include "kube/transport/client.h"
#include "podline.h"

static void labels(const hr_labels *l)
{
    printf(" labels={");
    for (uint32_t i = 0; i < l->n; i++)
        printf("%s%s=%s", i ? "," : "", l->kv[2 * i], l->kv[2 * i + 1]);
    printf("}");
}

static void pod(const hr_cpod_view *v)
{
    printf("pod %s/%s node=%s rv=%" PRIu64 " uid=", v->ns, v->name, v->node ? v->node : "-", v->rv);
    for (int i = 0; i < 16; i++)
        printf("%02x", v->uid[i]);
    printf(" owner=%s/%s/%s/%d deleting=%d resize=%u resizing=%d status=%08" PRIx32,
           v->owner_kind ? v->owner_kind : "-", v->owner_group ? v->owner_group : "-",
           v->owner_name ? v->owner_name : "-", v->owner_controller, v->deleting, v->resize,
           v->resizing, v->status_hash);
    podline_print(&v->pod, v->ctr_names);
    printf("\n");
}

static void dump(hr_cache *c, hr_cpod_scratch *s)
{
    hr_cache_lock(c);
    uint32_t it = 0;
    hr_cpod_view v;
    while (hr_cache_pod_next(c, &it, &v, s))
        pod(&v);
    hr_cnode_view n;
    it = 0;
    while (hr_cache_node_next(c, &it, &n)) {
        printf("node %s present=%d undec=%d alloc=%" PRId64 " known=%d disk=%d pid=%d "
               "booking_unknown=%d has_alloc=%d ready=%d windows=%d rv=%" PRIu64 " pods=%u",
               n.name, n.present, n.undecodable, n.node.allocatable, n.node.known,
               n.node.disk_pressure, n.node.pid_pressure, n.node.booking_unknown, n.has_allocatable,
               n.ready, n.windows, n.rv, n.n_pods);
        labels(&n.labels);
        printf("\n");
    }
    hr_cns_view ns;
    it = 0;
    while (hr_cache_ns_next(c, &it, &ns)) {
        hr_limit_bounds b = hr_cache_ns_bounds(c, ns.name);
        printf("namespace %s rv=%" PRIu64 " weight=%u weight_invalid=%d bounds=%" PRId64 "/%" PRId64
               "/%" PRId64,
               ns.name, ns.rv, ns.weight, ns.weight_invalid, b.ctr_max, b.ctr_ratio_milli,
               b.pod_max);
        labels(&ns.labels);
        printf("\n");
    }
    const char *q[4096];
    size_t nq = hr_cache_quota_namespaces(c, q, 4096);
    for (size_t i = 0; i < nq && i < 4096; i++)
        printf("quota-bounded %s\n", q[i]);
    printf("limitranges %zu\n", hr_cache_limitrange_count(c));
    hr_cache_unlock(c);
}

static void quiet(void *ud, int level, const char *msg)
{
    (void)ud;
    if (level >= HR_LV_WARN)
        fprintf(stderr, "cachedump: %s\n", msg);
}

int main(int argc, char **argv)
{
    if (argc < 2 || (strcmp(argv[1], "protobuf") != 0 && strcmp(argv[1], "json") != 0)) {
        fprintf(stderr, "usage: cachedump protobuf|json [KUBECONFIG]\n");
        return 2;
    }
    hr_err err;
    hr_kclient_opts ko = {.kubeconfig = argc > 2 ? argv[2] : NULL};
    hr_kclient *k = NULL;
    hr_cache *c = NULL;
    hr_informers *in = NULL;
    hr_cpod_scratch *s = malloc(sizeof *s);
    int rc = 2;
    if (!s || hr_kclient_new(&ko, &k, &err) != HR_OK || hr_cache_new(&c, &err) != HR_OK) {
        fprintf(stderr, "cachedump: %s\n", s ? err.msg : "out of memory");
        goto out;
    }
    /* Every kind but the custom resources (the HeadroomConfig, the
     * VerticalPodAutoscalers): the API server serves them in JSON either
     * way, and a VPA's CRD may not be installed at all. */
    unsigned kinds = 0;
    for (int kind = 0; kind < HR_CK_COUNT_; kind++)
        if (kind != HR_CK_CONFIG && kind != HR_CK_VPA)
            kinds |= 1u << kind;
    hr_informers_opts io = {
        .kinds = kinds, .protobuf = strcmp(argv[1], "protobuf") == 0, .log = quiet};
    if (hr_informers_start(c, k, &io, &in, &err) != HR_OK) {
        fprintf(stderr, "cachedump: %s\n", err.msg);
        goto out;
    }
    rc = 1;
    for (int i = 0; i < 600; i++) {
        if (hr_informers_synced(in)) {
            rc = 0;
            break;
        }
        nanosleep(&(struct timespec){0, 100 * 1000 * 1000}, NULL);
    }
    if (rc != 0) {
        fprintf(stderr, "cachedump: not synced within 60 s\n");
        goto out;
    }
    dump(c, s);
    for (int kind = 0; kind < HR_CK_COUNT_; kind++) {
        if (!(kinds & (1u << kind)))
            continue;
        hr_watch_stats ws;
        hr_informers_stats(in, (hr_ckind)kind, &ws);
        fprintf(stderr, "%s protobuf=%d pb_objects=%" PRIu64 " listed=%" PRIu64 "\n",
                hr_ckind_str((hr_ckind)kind), ws.protobuf, ws.pb_objects, ws.listed);
    }
out:
    hr_informers_free(in);
    hr_cache_free(c);
    hr_kclient_free(k);
    free(s);
    return rc;
}
