/*
 * bench_groups.c — what a gang costs a reconcile (design §2.10, §16).
 *
 * A cache of NODES nodes with PER_NODE ordinary managed pods each and one
 * gang (kube-headroom.dev/group-uniform, one Job owner) of G members spread
 * one per node round-robin. For each G it times what the controller does
 * for one member's node: the snapshot, the node's plan and the group hook
 * (hr_nodesnap_take + hr_reconcile_node_with with hr_groups_apply), and
 * beside it, in the same run, the same node's reconcile with no gang (the
 * reference). Each gang is timed with spec.maxGroupSize raised out of the
 * way ("unbounded") and at its default (HR_MAX_GROUP_SIZE): above it the
 * gang is refused and costs nothing. Last, what one change costs the
 * cluster (every member's node reconciled once after a pod lands beside a
 * member), with the memo of other nodes' plans (controller/nodememo.h)
 * and without.
 *
 *   bench_groups [NODES [PER_NODE [G...]]]   default 1000 20 0 64 128 256 1000
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <yyjson.h>

#include "cache/cache.h"
#include "cache/sink.h"
#include "controller/groups.h"
#include "controller/nodememo.h"
#include "controller/nodesnap.h"
#include "controller/reconcile.h"
#include "core/config.h"
#include "util/arena.h"
#include "util/clock.h"

#define RUNS 7

static void put(hr_wsink *ws, const char *json)
{
    yyjson_doc *d = yyjson_read(json, strlen(json), 0);
    hr_err err;
    if (d == NULL || ws->upsert(ws->ud, yyjson_doc_get_root(d), &err) != HR_OK) {
        fprintf(stderr, "upsert failed: %s\n%s\n", d ? err.msg : "bad JSON", json);
        exit(1);
    }
    yyjson_doc_free(d);
}

static void put_pod(hr_wsink *ws, const char *ns, const char *name, unsigned node, unsigned mcpu,
                    bool member)
{
    char b[1024];
    snprintf(b, sizeof b,
             "{\"kind\":\"Pod\",\"apiVersion\":\"v1\",\"metadata\":{\"name\":\"%s\","
             "\"namespace\":\"%s\",\"uid\":\"u-%s-%s\",\"resourceVersion\":\"1\"%s},"
             "\"spec\":{\"nodeName\":\"node-%04u\",\"containers\":[{\"name\":\"app\","
             "\"resources\":{\"requests\":{\"cpu\":\"%um\",\"memory\":\"64Mi\"}}}]},"
             "\"status\":{\"phase\":\"Running\",\"containerStatuses\":[{\"name\":\"app\","
             "\"resources\":{\"requests\":{\"cpu\":\"%um\"}}}]}}",
             name, ns, ns, name,
             member ? ",\"labels\":{\"kube-headroom.dev/group-uniform\":\"true\"},"
                      "\"ownerReferences\":[{\"apiVersion\":\"batch/v1\",\"kind\":\"Job\","
                      "\"name\":\"train\",\"uid\":\"job-train\",\"controller\":true}]"
                    : "",
             node, mcpu, mcpu);
    put(ws, b);
}

static hr_cache *build(unsigned nodes, unsigned per_node, unsigned gang, int max_group)
{
    hr_cache *c;
    hr_csink *ps, *ns, *nss, *cs;
    hr_err err;
    if (hr_cache_new(&c, &err) || hr_csink_new(c, HR_CK_POD, &ps, &err) ||
        hr_csink_new(c, HR_CK_NODE, &ns, &err) || hr_csink_new(c, HR_CK_NAMESPACE, &nss, &err) ||
        hr_csink_new(c, HR_CK_CONFIG, &cs, &err)) {
        fprintf(stderr, "cache: %s\n", err.msg);
        exit(1);
    }
    hr_wsink pw = hr_csink_wsink(ps), nw = hr_csink_wsink(ns), sw = hr_csink_wsink(nss),
             cw = hr_csink_wsink(cs);
    char cfg[512];
    snprintf(cfg, sizeof cfg,
             "{\"apiVersion\":\"kube-headroom.dev/v1alpha1\",\"kind\":\"HeadroomConfig\","
             "\"metadata\":{\"name\":\"cluster\",\"resourceVersion\":\"1\",\"uid\":\"c\"},"
             "\"spec\":{\"dryRun\":false%s}}",
             max_group ? ",\"maxGroupSize\":100000" : "");
    put(&cw, cfg);
    const char *names[] = {"apps", "ml"};
    for (int i = 0; i < 2; i++) {
        char b[256];
        snprintf(b, sizeof b,
                 "{\"metadata\":{\"name\":\"%s\",\"resourceVersion\":\"1\",\"uid\":\"ns-%s\","
                 "\"labels\":{\"kube-headroom.dev/mode\":\"managed\"}}}",
                 names[i], names[i]);
        put(&sw, b);
    }
    for (unsigned n = 0; n < nodes; n++) {
        char b[512];
        snprintf(b, sizeof b,
                 "{\"metadata\":{\"name\":\"node-%04u\",\"resourceVersion\":\"1\"},"
                 "\"status\":{\"allocatable\":{\"cpu\":\"32\",\"memory\":\"128Gi\","
                 "\"pods\":\"110\"},\"conditions\":[{\"type\":\"Ready\",\"status\":\"True\"}]}}",
                 n);
        put(&nw, b);
        for (unsigned p = 0; p < per_node; p++) {
            char name[64];
            snprintf(name, sizeof name, "w-%04u-%02u", n, p);
            put_pod(&pw, "apps", name, n, 100 + 10 * p, false);
        }
    }
    for (unsigned g = 0; g < gang; g++) {
        char name[64];
        snprintf(name, sizeof name, "train-%05u", g);
        put_pod(&pw, "ml", name, g % nodes, 1000, true);
    }
    hr_cache_lock(c);
    hr_cache_drain(c, NULL, NULL);
    hr_cache_unlock(c);
    hr_csink_free(ps);
    hr_csink_free(ns);
    hr_csink_free(nss);
    hr_csink_free(cs);
    return c;
}

/* What one reconcile of a node saw of its groups. */
typedef struct seen {
    size_t planned; /* other nodes snapshotted and planned */
    size_t groups;  /* groups with a member on the node */
    size_t members; /* the first one's size */
} seen;

/* One reconcile of node-%04u (index i): the group hook with the memo m
 * (NULL: none) when hook, else the node's own plan only; returns its ms
 * and adds what it saw to *sn. */
static double reconcile_node(hr_cache *c, unsigned i, bool hook, hr_nodememo *m, seen *sn)
{
    char name[32];
    snprintf(name, sizeof name, "node-%04u", i);
    hr_arena a;
    hr_arena_init(&a, 0);
    hr_nodesnap_opts so = {NULL, NULL, 0, HR_DRY_RUN_UNSET, 0};
    hr_nodesnap s;
    hr_reconcile r;
    hr_err err;
    hr_groups g = {.cache = c, .opts = &so, .cfg = &s.cfg, .a = &a, .memo = m};
    int64_t t0 = hr_mono_ns();
    if (hr_nodesnap_take(c, name, &so, &a, &s, &err) != HR_OK ||
        hr_reconcile_node_with(&s.cfg, &s.node, 0, hook ? hr_groups_apply : NULL, &g, &a, &r,
                               &err) != HR_OK) {
        fprintf(stderr, "reconcile: %s\n", err.msg);
        exit(1);
    }
    double ms = (double)(hr_mono_ns() - t0) / 1e6;
    sn->planned += g.planned;
    sn->groups = hook ? g.n_info : 0;
    sn->members = hook && g.n_info ? g.info[0].n_members : 0;
    hr_arena_free(&a);
    return ms;
}

/* What one change costs the cluster: a pod lands on node-0000, and every
 * member's node is reconciled once, as the controller queues them. With
 * the memo (warmed by the round before the change) each other node is
 * planned once; without, each reconcile plans every member's node. */
static void one_change(hr_cache *c, unsigned nodes, unsigned gang, bool memo, double *ms,
                       size_t *planned)
{
    hr_nodememo *m = memo ? hr_nodememo_new(0, 60000) : NULL;
    unsigned k = gang < nodes ? gang : nodes;
    seen warm = {0}, sn = {0};
    for (unsigned i = 0; i < k && m != NULL; i++)
        (void)reconcile_node(c, i, true, m, &warm);
    hr_csink *ps;
    hr_err err;
    if (hr_csink_new(c, HR_CK_POD, &ps, &err) != HR_OK)
        exit(1);
    hr_wsink pw = hr_csink_wsink(ps);
    static unsigned n_change;
    char name[32];
    snprintf(name, sizeof name, "neighbour-%u", n_change++);
    put_pod(&pw, "apps", name, 0, 4000, false);
    hr_csink_free(ps);
    *ms = 0;
    for (unsigned i = 0; i < k; i++)
        *ms += reconcile_node(c, i, true, m, &sn);
    *planned = sn.planned;
    hr_nodememo_free(m);
}

static int cmp_d(const void *x, const void *y)
{
    double a = *(const double *)x, b = *(const double *)y;
    return a < b ? -1 : a > b;
}

/* The median of RUNS reconciles of node-0000, in ms; *groups: the groups
 * the node's hook saw, *members: the first one's size. */
static double time_node(hr_cache *c, bool hook, size_t *groups, size_t *members)
{
    double t[RUNS];
    seen sn = {0};
    for (int k = 0; k < RUNS; k++)
        t[k] = reconcile_node(c, 0, hook, NULL, &sn);
    *groups = sn.groups;
    *members = sn.members;
    qsort(t, RUNS, sizeof t[0], cmp_d);
    return t[RUNS / 2];
}

int main(int argc, char **argv)
{
    unsigned nodes = argc > 1 ? (unsigned)atol(argv[1]) : 1000;
    unsigned per_node = argc > 2 ? (unsigned)atol(argv[2]) : 20;
    static const unsigned def[] = {0, 64, 128, 256, 1000};
    unsigned n_g = argc > 3 ? (unsigned)(argc - 3) : sizeof def / sizeof def[0];
    printf("one member's node reconciled (snapshot + plan + group hook), median of %d, "
           "%u nodes x %u pods\n",
           RUNS, nodes, per_node);
    printf("%8s %14s %8s %14s %8s %14s\n", "gang", "unbounded ms", "members", "default max ms",
           "members", "no hook ms");
    struct change_row {
        unsigned gang;
        double ms_memo;
        size_t pl_memo;
        double ms_none;
        size_t pl_none;
    } changes[64];
    unsigned n_changes = 0;
    if (n_g > 64)
        n_g = 64;
    for (unsigned i = 0; i < n_g; i++) {
        unsigned gang = argc > 3 ? (unsigned)atol(argv[3 + i]) : def[i];
        hr_cache *c = build(nodes, per_node, gang, HR_MAX_GROUP_SIZE_LIMIT);
        size_t groups = 0, members = 0, d_members = 0, none_g, none_m;
        double with = time_node(c, true, &groups, &members);
        double ref = time_node(c, false, &none_g, &none_m);
        hr_cache_free(c);
        c = build(nodes, per_node, gang, 0);
        double bounded = time_node(c, true, &groups, &d_members);
        printf("%8u %14.3f %8zu %14.3f %8zu %14.3f\n", gang, with, members, bounded, d_members,
               ref);
        hr_cache_free(c);
        c = build(nodes, per_node, gang, HR_MAX_GROUP_SIZE_LIMIT);
        double ms_memo, ms_none;
        size_t pl_memo, pl_none;
        one_change(c, nodes, gang, true, &ms_memo, &pl_memo);
        one_change(c, nodes, gang, false, &ms_none, &pl_none);
        changes[n_changes++] = (struct change_row){gang, ms_memo, pl_memo, ms_none, pl_none};
        hr_cache_free(c);
    }
    printf("\none change (a pod lands on a member's node), every member's node reconciled once "
           "(unbounded maximum):\n");
    printf("%8s %14s %14s %14s %14s\n", "gang", "memo ms", "nodes planned", "no memo ms",
           "nodes planned");
    for (unsigned i = 0; i < n_changes; i++)
        printf("%8u %14.1f %14zu %14.1f %14zu\n", changes[i].gang, changes[i].ms_memo,
               changes[i].pl_memo, changes[i].ms_none, changes[i].pl_none);
    return 0;
}
