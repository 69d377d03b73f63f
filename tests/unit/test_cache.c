/*
 * test_cache.c — the compact cache: upsert, delete, per-node index, lookup,
 * the change feed (design §5's enqueue rules), terminal eviction, relist by
 * difference, and that every interned string is released again.
 *
 * Objects go in as JSON through the same sink the watch uses, so these
 * tests also pin the decode → cache path the controller depends on.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "cache/cache.h"
#include "cache/sink.h"
#include "util/prng.h"

typedef struct fx {
    hr_cache *c;
    hr_csink *sink[HR_CK_COUNT_];
    hr_wsink ws[HR_CK_COUNT_];
    hr_cpod_scratch *scr;
    int changes[HR_CK_COUNT_][3];
    char last[256];
} fx;

static void observe(void *ud, hr_ckind kind, hr_cchange what, const char *ns, const char *name)
{
    fx *f = ud;
    f->changes[kind][what]++;
    snprintf(f->last, sizeof f->last, "%s %d %s/%s", hr_ckind_str(kind), (int)what, ns, name);
}

static int setup(void **state)
{
    fx *f = calloc(1, sizeof *f);
    hr_err err;
    assert_int_equal(hr_cache_new(&f->c, &err), HR_OK);
    for (int k = 0; k < HR_CK_COUNT_; k++) {
        assert_int_equal(hr_csink_new(f->c, (hr_ckind)k, &f->sink[k], &err), HR_OK);
        f->ws[k] = hr_csink_wsink(f->sink[k]);
    }
    f->scr = malloc(sizeof *f->scr);
    hr_cache_set_observer(f->c, observe, f);
    *state = f;
    return 0;
}

static int teardown(void **state)
{
    fx *f = *state;
    for (int k = 0; k < HR_CK_COUNT_; k++)
        hr_csink_free(f->sink[k]);
    hr_cache_free(f->c);
    free(f->scr);
    free(f);
    return 0;
}

/* Feed one JSON object to a kind's sink (upsert or remove). */
static hr_status feed(fx *f, hr_ckind k, bool del, const char *json)
{
    yyjson_doc *d = yyjson_read(json, strlen(json), 0);
    if (!d)
        fail_msg("test JSON does not parse: %s", json);
    hr_err err;
    hr_err_clear(&err);
    hr_status st = del ? f->ws[k].remove(f->ws[k].ud, yyjson_doc_get_root(d), &err)
                       : f->ws[k].upsert(f->ws[k].ud, yyjson_doc_get_root(d), &err);
    yyjson_doc_free(d);
    return st;
}

/* The fixture builders below feed one object and fail the test unless the
 * sink takes it. A pod with one app container (cpu request/limit in
 * millicores, -1 for none), an optional sidecar, on node (NULL: unbound). */
static void put_pod(fx *f, const char *ns, const char *name, const char *node, const char *phase,
                    int req, int lim, const char *rv)
{
    char res[200] = "{}", nodef[120] = "", buf[2048];
    if (req >= 0 && lim >= 0)
        snprintf(res, sizeof res,
                 "{\"requests\":{\"cpu\":\"%dm\",\"memory\":\"64Mi\"},"
                 "\"limits\":{\"cpu\":\"%dm\"}}",
                 req, lim);
    else if (req >= 0)
        snprintf(res, sizeof res, "{\"requests\":{\"cpu\":\"%dm\"}}", req);
    if (node)
        snprintf(nodef, sizeof nodef, "\"nodeName\":\"%s\",", node);
    snprintf(buf, sizeof buf,
             "{\"metadata\":{\"namespace\":\"%s\",\"name\":\"%s\","
             "\"uid\":\"0f1e2d3c-4b5a-6978-8796-a5b4c3d2e1f0\","
             "\"resourceVersion\":\"%s\",\"labels\":{\"app\":\"web\"},"
             "\"ownerReferences\":[{\"apiVersion\":\"apps/v1\",\"kind\":"
             "\"ReplicaSet\",\"name\":\"web-7d9\",\"controller\":true}],"
             "\"managedFields\":[{\"manager\":\"kubectl\",\"fieldsV1\":{}}]},"
             "\"spec\":{%s\"initContainers\":[{\"name\":\"proxy\","
             "\"restartPolicy\":\"Always\",\"resources\":{\"requests\":"
             "{\"cpu\":\"100m\"}}}],"
             "\"containers\":[{\"name\":\"app\",\"resources\":%s}]},"
             "\"status\":{\"phase\":\"%s\"}}",
             ns, name, rv, nodef, res, phase);
    assert_int_equal(feed(f, HR_CK_POD, false, buf), HR_OK);
}

static void put_node(fx *f, const char *name, const char *cpu, const char *disk, const char *zone,
                     const char *rv)
{
    char buf[1024];
    snprintf(buf, sizeof buf,
             "{\"metadata\":{\"name\":\"%s\",\"resourceVersion\":\"%s\","
             "\"labels\":{\"kubernetes.io/os\":\"linux\",\"zone\":\"%s\"}},"
             "\"status\":{\"allocatable\":{\"cpu\":\"%s\"},\"conditions\":["
             "{\"type\":\"Ready\",\"status\":\"True\",\"lastHeartbeatTime\":\"%s\"},"
             "{\"type\":\"DiskPressure\",\"status\":\"%s\"}]}}",
             name, rv, zone, cpu, rv, disk);
    assert_int_equal(feed(f, HR_CK_NODE, false, buf), HR_OK);
}

static void put_ns(fx *f, const char *name, const char *mode, const char *rv)
{
    char buf[512];
    snprintf(buf, sizeof buf,
             "{\"metadata\":{\"name\":\"%s\",\"resourceVersion\":\"%s\","
             "\"labels\":{\"kube-headroom.dev/mode\":\"%s\"}}}",
             name, rv, mode);
    assert_int_equal(feed(f, HR_CK_NAMESPACE, false, buf), HR_OK);
}

static void del_obj(fx *f, hr_ckind k, const char *ns, const char *name)
{
    char buf[512];
    snprintf(buf, sizeof buf, "{\"metadata\":{\"namespace\":\"%s\",\"name\":\"%s\"}}", ns, name);
    assert_int_equal(feed(f, k, true, buf), HR_OK);
}

/* Drain the change feed into a sorted, comma-joined string. */
static void add_name(void *ud, const char *node)
{
    char *s = ud;
    if (s[0])
        strcat(s, ",");
    strcat(s, node);
}

static int cmp_str(const void *a, const void *b)
{
    return strcmp(*(const char *const *)a, *(const char *const *)b);
}

static const char *drain(fx *f, char *out)
{
    char raw[4096] = "";
    hr_cache_lock(f->c);
    hr_cache_drain(f->c, add_name, raw);
    hr_cache_unlock(f->c);
    const char *parts[256];
    size_t n = 0;
    for (char *t = strtok(raw, ","); t && n < 256; t = strtok(NULL, ","))
        parts[n++] = t;
    qsort(parts, n, sizeof parts[0], cmp_str);
    out[0] = '\0';
    for (size_t i = 0; i < n; i++) {
        if (i)
            strcat(out, ",");
        strcat(out, parts[i]);
    }
    return out;
}

static size_t node_pod_count(fx *f, const char *node)
{
    uint32_t ids[16];
    hr_cache_lock(f->c);
    size_t n = hr_cache_node_pods(f->c, node, ids, 16);
    hr_cache_unlock(f->c);
    return n;
}

static void test_pod_roundtrip(void **state)
{
    fx *f = *state;
    char d[4096];
    put_pod(f, "team-a", "web-1", "n1", "Running", 250, 500, "1042");
    hr_cpod_view v;
    hr_cache_lock(f->c);
    assert_true(hr_cache_pod_get(f->c, "team-a", "web-1", &v, f->scr));
    assert_string_equal(v.ns, "team-a");
    assert_string_equal(v.name, "web-1");
    assert_string_equal(v.node, "n1");
    assert_int_equal(v.rv, 1042);
    assert_int_equal(v.uid[0], 0x0f);
    assert_int_equal(v.uid[15], 0xf0);
    assert_string_equal(v.owner_kind, "ReplicaSet");
    assert_string_equal(v.owner_group, "apps");
    assert_string_equal(v.owner_name, "web-7d9");
    assert_true(v.owner_controller);
    assert_int_equal(v.pod.n_ctr, 2);
    /* init containers (sidecars) first, as the core expects */
    assert_string_equal(v.ctr_names[0], "proxy");
    assert_int_equal(v.pod.ctr[0].kind, HR_CTR_SIDECAR);
    assert_int_equal(v.pod.ctr[0].cpu_req, 100);
    assert_true(v.pod.ctr[0].cpu_lim == HR_NONE);
    assert_string_equal(v.ctr_names[1], "app");
    assert_int_equal(v.pod.ctr[1].cpu_req, 250);
    assert_int_equal(v.pod.ctr[1].cpu_lim, 500);
    assert_int_equal(v.pod.ctr[1].mem_req, 64 * 1024 * 1024);
    assert_true(v.pod.ctr[1].mem_lim == HR_NONE);
    assert_int_equal(v.pod.phase, HR_PHASE_RUNNING);
    assert_true(v.pod.bound);
    assert_int_equal(hr_pod_booked_cpu(&v.pod), 350);
    assert_false(hr_cache_pod_get(f->c, "team-a", "web-2", &v, f->scr));
    assert_false(hr_cache_pod_get(f->c, "team-b", "web-1", &v, f->scr));
    hr_cache_unlock(f->c);
    assert_string_equal(drain(f, d), "n1");
    assert_int_equal(f->changes[HR_CK_POD][HR_CC_ADDED], 1);
}

static void test_rv_only_update_is_quiet(void **state)
{
    fx *f = *state;
    char d[4096];
    put_pod(f, "a", "p", "n1", "Running", 100, 200, "10");
    drain(f, d);
    put_pod(f, "a", "p", "n1", "Running", 100, 200, "11");
    assert_string_equal(drain(f, d), "");
    assert_int_equal(f->changes[HR_CK_POD][HR_CC_UPDATED], 0);
    hr_cpod_view v;
    hr_cache_lock(f->c);
    assert_true(hr_cache_pod_get(f->c, "a", "p", &v, f->scr));
    assert_int_equal(v.rv, 11); /* the resourceVersion still moves */
    hr_cache_unlock(f->c);
    /* a request change enqueues the node */
    put_pod(f, "a", "p", "n1", "Running", 300, 400, "12");
    assert_string_equal(drain(f, d), "n1");
    assert_int_equal(f->changes[HR_CK_POD][HR_CC_UPDATED], 1);
    /* a limit change too (our own resize comes back this way) */
    put_pod(f, "a", "p", "n1", "Running", 300, 600, "13");
    assert_string_equal(drain(f, d), "n1");
}

static void test_bind_rebind_leave(void **state)
{
    fx *f = *state;
    char d[4096];
    put_pod(f, "a", "p", NULL, "Pending", 100, -1, "1");
    assert_string_equal(drain(f, d), ""); /* unbound: no node to look at */
    put_pod(f, "a", "p", "n1", "Pending", 100, -1, "2");
    assert_string_equal(drain(f, d), "n1");
    assert_int_equal(node_pod_count(f, "n1"), 1);
    put_pod(f, "a", "q", "n1", "Running", 100, -1, "3");
    put_pod(f, "a", "r", "n1", "Running", 100, -1, "4");
    assert_int_equal(node_pod_count(f, "n1"), 3);
    drain(f, d);
    /* rebound (a recreated pod with the same name on another node) */
    put_pod(f, "a", "q", "n2", "Running", 100, -1, "5");
    assert_string_equal(drain(f, d), "n1,n2");
    assert_int_equal(node_pod_count(f, "n1"), 2);
    assert_int_equal(node_pod_count(f, "n2"), 1);
    /* deleted */
    del_obj(f, HR_CK_POD, "a", "p");
    assert_string_equal(drain(f, d), "n1");
    assert_int_equal(node_pod_count(f, "n1"), 1);
    /* deleting what is not there changes nothing */
    del_obj(f, HR_CK_POD, "a", "p");
    assert_string_equal(drain(f, d), "");
}

static uint64_t removals(fx *f)
{
    hr_cache_lock(f->c);
    uint64_t n = hr_cache_removals(f->c);
    hr_cache_unlock(f->c);
    return n;
}

/* Pod a/p on n1 with a uid of its own. */
static void put_uid(fx *f, const char *rv, const char *uid)
{
    char buf[1024];
    snprintf(buf, sizeof buf,
             "{\"metadata\":{\"namespace\":\"a\",\"name\":\"p\",\"resourceVersion\":\"%s\","
             "\"uid\":\"%s\"},\"spec\":{\"nodeName\":\"n1\",\"containers\":[{\"name\":\"c\","
             "\"resources\":{\"requests\":{\"cpu\":\"100m\"}}}]},"
             "\"status\":{\"phase\":\"Running\"}}",
             rv, uid);
    assert_int_equal(feed(f, HR_CK_POD, false, buf), HR_OK);
}

/* What leaves the cache moves the count the executor's sweeps wait for
 * (controller.c); what only changes does not. */
static void test_removals_count_what_leaves(void **state)
{
    fx *f = *state;
    char d[4096];
    put_uid(f, "1", "11111111-1111-1111-1111-111111111111");
    put_node(f, "n1", "4", "False", "z", "2");
    put_uid(f, "3", "11111111-1111-1111-1111-111111111111"); /* the same pod, changed */
    put_pod(f, "a", "q", "n1", "Running", 100, -1, "4");
    put_pod(f, "a", "q", "n1", "Running", 300, -1, "5");
    drain(f, d);
    assert_int_equal(removals(f), 0);
    /* recreated under its name, its delete never seen */
    put_uid(f, "6", "22222222-2222-2222-2222-222222222222");
    assert_int_equal(removals(f), 1);
    del_obj(f, HR_CK_POD, "a", "q");
    assert_int_equal(removals(f), 2);
    put_pod(f, "a", "job", "n1", "Running", 100, -1, "7");
    put_pod(f, "a", "job", "n1", "Succeeded", 100, -1, "8"); /* terminal: leaves */
    assert_int_equal(removals(f), 3);
    del_obj(f, HR_CK_NODE, "", "n1");
    assert_int_equal(removals(f), 4);
    del_obj(f, HR_CK_POD, "a", "q"); /* not there: nothing left */
    assert_int_equal(removals(f), 4);
}

static void test_terminal_pods_leave(void **state)
{
    fx *f = *state;
    char d[4096];
    put_pod(f, "a", "job-1", "n1", "Running", 100, -1, "1");
    drain(f, d);
    put_pod(f, "a", "job-1", "n1", "Succeeded", 100, -1, "2");
    assert_string_equal(drain(f, d), "n1");
    assert_int_equal(node_pod_count(f, "n1"), 0);
    hr_cpod_view v;
    hr_cache_lock(f->c);
    assert_false(hr_cache_pod_get(f->c, "a", "job-1", &v, f->scr));
    hr_cache_unlock(f->c);
    /* later updates and the final delete of a terminal pod are no-ops */
    put_pod(f, "a", "job-1", "n1", "Failed", 100, -1, "3");
    del_obj(f, HR_CK_POD, "a", "job-1");
    assert_string_equal(drain(f, d), "");
    assert_int_equal(f->changes[HR_CK_POD][HR_CC_DELETED], 1);
    hr_cache_stats s;
    hr_cache_lock(f->c);
    hr_cache_get_stats(f->c, &s);
    hr_cache_unlock(f->c);
    assert_int_equal(s.pods, 0);
}

static void test_nodes(void **state)
{
    fx *f = *state;
    char d[4096];
    put_pod(f, "a", "p", "n1", "Running", 100, -1, "1");
    hr_cnode_view nv;
    hr_cache_lock(f->c);
    assert_true(hr_cache_node_get(f->c, "n1", &nv));
    assert_false(nv.present); /* known only from its pod so far */
    assert_false(nv.node.known);
    hr_cache_unlock(f->c);
    drain(f, d);
    put_node(f, "n1", "16", "False", "z1", "5");
    assert_string_equal(drain(f, d), "n1");
    hr_cache_lock(f->c);
    assert_true(hr_cache_node_get(f->c, "n1", &nv));
    assert_true(nv.present && nv.node.known && nv.ready);
    assert_int_equal(nv.node.allocatable, 16000);
    assert_false(nv.node.disk_pressure);
    assert_int_equal(nv.n_pods, 1);
    assert_string_equal(hr_labels_get(&nv.labels, "zone"), "z1");
    hr_cache_unlock(f->c);
    /* heartbeat: only timestamps and the resourceVersion move */
    put_node(f, "n1", "16", "False", "z1", "6");
    assert_string_equal(drain(f, d), "");
    put_node(f, "n1", "16", "True", "z1", "7");
    assert_string_equal(drain(f, d), "n1");
    put_node(f, "n1", "15500m", "True", "z1", "8");
    assert_string_equal(drain(f, d), "n1");
    put_node(f, "n1", "15500m", "True", "z2", "9");
    assert_string_equal(drain(f, d), "n1");
    /* node deleted: its pods stay (they are deleted on their own) */
    del_obj(f, HR_CK_NODE, "", "n1");
    assert_string_equal(drain(f, d), "n1");
    hr_cache_lock(f->c);
    assert_true(hr_cache_node_get(f->c, "n1", &nv));
    assert_false(nv.present);
    assert_int_equal(nv.n_pods, 1);
    hr_cache_unlock(f->c);
    del_obj(f, HR_CK_POD, "a", "p");
    assert_string_equal(drain(f, d), "n1");
    /* the placeholder is collected once drained */
    hr_cache_lock(f->c);
    assert_false(hr_cache_node_get(f->c, "n1", &nv));
    hr_cache_unlock(f->c);
}

static void test_namespace_labels(void **state)
{
    fx *f = *state;
    char d[4096];
    put_pod(f, "a", "p1", "n1", "Running", 100, -1, "1");
    put_pod(f, "a", "p2", "n2", "Running", 100, -1, "2");
    put_pod(f, "b", "p3", "n3", "Running", 100, -1, "3");
    put_ns(f, "a", "managed", "4");
    put_ns(f, "b", "managed", "5");
    drain(f, d);
    put_ns(f, "a", "managed", "6"); /* nothing we keep changed */
    assert_string_equal(drain(f, d), "");
    put_ns(f, "a", "off", "7");
    assert_string_equal(drain(f, d), "n1,n2");
    hr_cns_view nv;
    hr_cache_lock(f->c);
    assert_true(hr_cache_ns_get(f->c, "a", &nv));
    assert_string_equal(hr_labels_get(&nv.labels, "kube-headroom.dev/mode"), "off");
    hr_cache_unlock(f->c);
    del_obj(f, HR_CK_NAMESPACE, "", "b");
    assert_string_equal(drain(f, d), "n3");
}

/* The TenantFair weight (design §2.9) is kept parsed beside the labels: a
 * change of the label dirties the namespace's nodes and the view says the
 * new weight; an invalid one reads as 1 and says so. */
static void put_weighted_ns(fx *f, const char *name, const char *weight, const char *rv)
{
    char buf[512];
    snprintf(buf, sizeof buf,
             "{\"metadata\":{\"name\":\"%s\",\"resourceVersion\":\"%s\","
             "\"labels\":{\"kube-headroom.dev/mode\":\"managed\","
             "\"kube-headroom.dev/weight\":\"%s\"}}}",
             name, rv, weight);
    assert_int_equal(feed(f, HR_CK_NAMESPACE, false, buf), HR_OK);
}

static void test_namespace_weight(void **state)
{
    fx *f = *state;
    char d[4096];
    hr_cns_view nv;
    put_pod(f, "w", "p1", "n1", "Running", 100, -1, "1");
    put_ns(f, "w", "managed", "2");
    drain(f, d);
    hr_cache_lock(f->c);
    assert_true(hr_cache_ns_get(f->c, "w", &nv));
    assert_int_equal(nv.weight, 1);
    assert_false(nv.weight_invalid);
    hr_cache_unlock(f->c);
    put_weighted_ns(f, "w", "5", "3");
    assert_string_equal(drain(f, d), "n1");
    hr_cache_lock(f->c);
    assert_true(hr_cache_ns_get(f->c, "w", &nv));
    assert_int_equal(nv.weight, 5);
    assert_false(nv.weight_invalid);
    hr_cache_unlock(f->c);
    put_weighted_ns(f, "w", "five", "4");
    assert_string_equal(drain(f, d), "n1");
    hr_cache_lock(f->c);
    assert_true(hr_cache_ns_get(f->c, "w", &nv));
    assert_int_equal(nv.weight, 1);
    assert_true(nv.weight_invalid);
    hr_cache_unlock(f->c);
}

static void test_limitrange_and_config(void **state)
{
    fx *f = *state;
    char d[4096];
    put_pod(f, "a", "p1", "n1", "Running", 100, -1, "1");
    put_pod(f, "b", "p2", "n2", "Running", 100, -1, "2");
    drain(f, d);
    const char *lr =
        "{\"metadata\":{\"namespace\":\"a\",\"name\":\"lr\",\"resourceVersion\":\"3\"},"
        "\"spec\":{\"limits\":[{\"type\":\"Container\",\"max\":{\"cpu\":\"2\"}},"
        "{\"type\":\"Pod\",\"max\":{\"cpu\":\"3\"}}]}}";
    assert_int_equal(feed(f, HR_CK_LIMITRANGE, false, lr), HR_OK);
    assert_string_equal(drain(f, d), "n1,n2"); /* all nodes */
    hr_cache_lock(f->c);
    hr_limit_bounds b = hr_cache_ns_bounds(f->c, "a");
    hr_limit_bounds nb = hr_cache_ns_bounds(f->c, "b");
    hr_cache_unlock(f->c);
    assert_int_equal(b.ctr_max, 2000);
    assert_int_equal(b.pod_max, 3000);
    assert_true(nb.ctr_max == HR_NONE);
    assert_int_equal(feed(f, HR_CK_LIMITRANGE, false, lr), HR_OK);
    assert_string_equal(drain(f, d), ""); /* unchanged */
    del_obj(f, HR_CK_LIMITRANGE, "a", "lr");
    assert_string_equal(drain(f, d), "n1,n2");

    /* no config: defaults with dry-run */
    const char *invalid;
    hr_cache_lock(f->c);
    const hr_config *cfg = hr_cache_config(f->c, &invalid);
    assert_false(cfg->present);
    assert_true(cfg->dry_run);
    assert_null(invalid);
    hr_cache_unlock(f->c);
    const char *good =
        "{\"apiVersion\":\"kube-headroom.dev/v1alpha1\",\"kind\":\"HeadroomConfig\","
        "\"metadata\":{\"name\":\"cluster\",\"resourceVersion\":\"9\",\"generation\":1},"
        "\"spec\":{\"dryRun\":false,\"minBurstFloor\":\"500m\",\"excludedNamespaces\":[\"ops\"]}}";
    assert_int_equal(feed(f, HR_CK_CONFIG, false, good), HR_OK);
    assert_string_equal(drain(f, d), "n1,n2");
    hr_cache_lock(f->c);
    cfg = hr_cache_config(f->c, &invalid);
    assert_true(cfg->present);
    assert_false(cfg->dry_run);
    assert_int_equal(cfg->min_burst_floor, 500);
    assert_int_equal(cfg->n_excluded_ns, 1);
    assert_string_equal(cfg->excluded_ns[0], "ops");
    hr_cache_unlock(f->c);
    /* a status write (same generation) is not a config change */
    const char *status =
        "{\"metadata\":{\"name\":\"cluster\",\"resourceVersion\":\"10\",\"generation\":1},"
        "\"spec\":{\"dryRun\":false,\"minBurstFloor\":\"500m\",\"excludedNamespaces\":[\"ops\"]},"
        "\"status\":{\"managedPods\":3}}";
    assert_int_equal(feed(f, HR_CK_CONFIG, false, status), HR_OK);
    assert_string_equal(drain(f, d), "");
    /* an invalid config keeps the last good one and says why */
    const char *bad =
        "{\"metadata\":{\"name\":\"cluster\",\"resourceVersion\":\"11\",\"generation\":2},"
        "\"spec\":{\"minBurstFloor\":\"lots\"}}";
    assert_int_not_equal(feed(f, HR_CK_CONFIG, false, bad), HR_OK);
    hr_cache_lock(f->c);
    cfg = hr_cache_config(f->c, &invalid);
    assert_int_equal(cfg->min_burst_floor, 500);
    assert_non_null(invalid);
    assert_non_null(strstr(invalid, "minBurstFloor"));
    hr_cache_unlock(f->c);
    /* other names are ignored */
    const char *other = "{\"metadata\":{\"name\":\"other\",\"generation\":1},\"spec\":{}}";
    assert_int_equal(feed(f, HR_CK_CONFIG, false, other), HR_OK);
    del_obj(f, HR_CK_CONFIG, "", "cluster");
    assert_string_equal(drain(f, d), "n1,n2");
    hr_cache_lock(f->c);
    cfg = hr_cache_config(f->c, &invalid);
    assert_false(cfg->present);
    assert_true(cfg->dry_run);
    hr_cache_unlock(f->c);
}

/* ResourceQuotas: kept as "bounds limits.cpu", never a reason to replan;
 * the HeadroomConfig's status: read whether or not its spec is valid. */
static void test_quotas_and_config_status(void **state)
{
    fx *f = *state;
    char d[4096];
    put_pod(f, "a", "p1", "n1", "Running", 100, -1, "1");
    drain(f, d);
    const char *q1 =
        "{\"metadata\":{\"namespace\":\"a\",\"name\":\"q1\",\"resourceVersion\":\"2\"},"
        "\"spec\":{\"hard\":{\"limits.cpu\":\"4\",\"pods\":\"10\"}},"
        "\"status\":{\"used\":{\"limits.cpu\":\"3500m\"}}}";
    const char *q2 =
        "{\"metadata\":{\"namespace\":\"a\",\"name\":\"q2\",\"resourceVersion\":\"3\"},"
        "\"spec\":{\"hard\":{\"limits.cpu\":\"8\"}}}";
    const char *q3 =
        "{\"metadata\":{\"namespace\":\"b\",\"name\":\"q3\",\"resourceVersion\":\"4\"},"
        "\"spec\":{\"hard\":{\"requests.cpu\":\"8\"}}}";
    const char *bad = "{\"metadata\":{\"namespace\":\"b\",\"name\":\"q4\"},"
                      "\"spec\":{\"hard\":{\"limits.cpu\":\"lots\"}}}";
    assert_int_equal(feed(f, HR_CK_QUOTA, false, q1), HR_OK);
    assert_int_equal(feed(f, HR_CK_QUOTA, false, q2), HR_OK);
    assert_int_equal(feed(f, HR_CK_QUOTA, false, q3), HR_OK);
    /* A quota we cannot read fails closed: it counts as bounding limits.cpu
     * (design §15), reported once. */
    assert_int_not_equal(feed(f, HR_CK_QUOTA, false, bad), HR_OK);
    assert_int_equal(feed(f, HR_CK_QUOTA, false, bad), HR_OK);
    assert_int_equal(hr_csink_decode_errors(f->sink[HR_CK_QUOTA]), 1);
    assert_int_equal(f->changes[HR_CK_QUOTA][HR_CC_ADDED], 4);
    /* A quota's limits.cpu caps its namespace's pods on any node (the
     * quota cap, design §2.3): every node replans. */
    assert_string_equal(drain(f, d), "n1");
    /* The same figures again change nothing; a moved used does. */
    assert_int_equal(feed(f, HR_CK_QUOTA, false, q1), HR_OK);
    assert_string_equal(drain(f, d), "");
    /* The least room wins: q1 (500m left) over q2 (used not counted yet
     * reads as full: 0 left, so q2); b's unreadable q4 has none. */
    hr_ns_quota nq;
    hr_cache_lock(f->c);
    hr_cache_ns_quota(f->c, "a", &nq);
    assert_true(nq.on);
    assert_int_equal(nq.hard, 8000);
    assert_int_equal(nq.used, HR_NONE);
    hr_cache_ns_quota(f->c, "b", &nq);
    assert_true(nq.on);
    assert_int_equal(nq.hard - nq.used, 0);
    hr_cache_ns_quota(f->c, "c", &nq);
    assert_false(nq.on);
    hr_cache_unlock(f->c);
    const char *q2u =
        "{\"metadata\":{\"namespace\":\"a\",\"name\":\"q2\",\"resourceVersion\":\"5\"},"
        "\"spec\":{\"hard\":{\"limits.cpu\":\"8\"}},\"status\":{\"used\":{\"limits.cpu\":\"1\"}}}";
    assert_int_equal(feed(f, HR_CK_QUOTA, false, q2u), HR_OK);
    assert_string_equal(drain(f, d), "n1");
    hr_cache_lock(f->c);
    hr_cache_ns_quota(f->c, "a", &nq);
    assert_int_equal(nq.hard, 4000);
    assert_int_equal(nq.used, 3500);
    hr_cache_unlock(f->c);
    const char *ns[4];
    hr_cache_lock(f->c);
    /* "a" once; b's q3 bounds requests only, but its q4 cannot be read */
    assert_int_equal(hr_cache_quota_namespaces(f->c, ns, 4), 2);
    assert_true((!strcmp(ns[0], "a") && !strcmp(ns[1], "b")) ||
                (!strcmp(ns[0], "b") && !strcmp(ns[1], "a")));
    hr_cache_unlock(f->c);
    /* Which of them the config manages: "a" once it is labelled managed,
     * never the controller's own namespace; sorted, each once. */
    const char **mq;
    size_t nmq;
    hr_err err;
    hr_cache_lock(f->c);
    assert_int_equal(hr_cache_managed_quota_ns(f->c, NULL, &mq, &nmq, &err), HR_OK);
    hr_cache_unlock(f->c);
    assert_int_equal(nmq, 0); /* namespace "a" is not known yet */
    free(mq);
    put_ns(f, "a", "managed", "20");
    hr_cache_lock(f->c);
    assert_int_equal(hr_cache_managed_quota_ns(f->c, NULL, &mq, &nmq, &err), HR_OK);
    assert_int_equal(nmq, 1);
    assert_string_equal(mq[0], "a");
    free(mq);
    assert_int_equal(hr_cache_managed_quota_ns(f->c, "a", &mq, &nmq, &err), HR_OK);
    assert_int_equal(nmq, 0);
    free(mq);
    hr_cache_unlock(f->c);
    /* A relist that no longer has q1 and q2 sweeps them. */
    hr_cache_relist_begin(f->c, HR_CK_QUOTA);
    assert_int_equal(feed(f, HR_CK_QUOTA, false, q3), HR_OK);
    assert_int_equal(hr_cache_relist_end(f->c, HR_CK_QUOTA, true), 3);
    hr_cache_lock(f->c);
    hr_cache_ns_quota(f->c, "a", &nq);
    assert_false(nq.on);
    hr_cache_unlock(f->c);
    hr_cache_lock(f->c);
    assert_int_equal(hr_cache_quota_namespaces(f->c, ns, 4), 0);
    hr_cache_unlock(f->c);

    /* The config status, from a valid then an invalid spec. */
    int64_t gen;
    const hr_kcfg_status *st;
    hr_cache_lock(f->c);
    assert_false(hr_cache_config_object(f->c, &gen, &st));
    hr_cache_unlock(f->c);
    const char *good =
        "{\"metadata\":{\"name\":\"cluster\",\"resourceVersion\":\"9\",\"generation\":2},"
        "\"spec\":{},\"status\":{\"observedGeneration\":1,\"managedPods\":7,\"conditions\":"
        "[{\"type\":\"Ready\",\"status\":\"True\",\"reason\":\"Applied\",\"message\":\"m\","
        "\"lastTransitionTime\":\"2026-11-30T08:00:00Z\",\"observedGeneration\":1}]}}";
    assert_int_equal(feed(f, HR_CK_CONFIG, false, good), HR_OK);
    hr_cache_lock(f->c);
    assert_true(hr_cache_config_object(f->c, &gen, &st));
    assert_int_equal(gen, 2);
    assert_int_equal(st->generation, 2);
    assert_int_equal(st->observed_generation, 1);
    assert_int_equal(st->managed_pods, 7);
    assert_int_equal(st->managed_nodes, -1);
    assert_int_equal(st->n_cond, 1);
    assert_string_equal(st->cond[0].last_transition, "2026-11-30T08:00:00Z");
    hr_cache_unlock(f->c);
    const char *invalid_spec =
        "{\"metadata\":{\"name\":\"cluster\",\"resourceVersion\":\"10\",\"generation\":3},"
        "\"spec\":{\"minBurstFloor\":\"lots\"},\"status\":{\"observedGeneration\":2}}";
    assert_int_not_equal(feed(f, HR_CK_CONFIG, false, invalid_spec), HR_OK);
    hr_cache_lock(f->c);
    assert_true(hr_cache_config_object(f->c, &gen, &st));
    assert_int_equal(gen, 2); /* the last good one stays in force */
    assert_int_equal(st->generation, 3);
    assert_int_equal(st->observed_generation, 2);
    assert_int_equal(st->n_cond, 0);
    hr_cache_unlock(f->c);
    /* A status of the wrong shape counts as none. */
    const char *garbled =
        "{\"metadata\":{\"name\":\"cluster\",\"resourceVersion\":\"11\",\"generation\":4},"
        "\"spec\":{},\"status\":{\"conditions\":\"yes\"}}";
    assert_int_equal(feed(f, HR_CK_CONFIG, false, garbled), HR_OK);
    hr_cache_lock(f->c);
    assert_true(hr_cache_config_object(f->c, &gen, &st));
    assert_int_equal(st->generation, 4);
    assert_int_equal(st->observed_generation, -1);
    hr_cache_unlock(f->c);
    del_obj(f, HR_CK_CONFIG, "", "cluster");
    hr_cache_lock(f->c);
    assert_false(hr_cache_config_object(f->c, &gen, &st));
    assert_int_equal(st->generation, -1);
    hr_cache_unlock(f->c);
}

/* One pod object as JSON: cpu is the request's text, node the raw JSON
 * value of spec.nodeName ("\"n1\"", "7", NULL: absent). */
static hr_status feed_pod(fx *f, bool del, const char *name, const char *uid, const char *node,
                          const char *cpu)
{
    char nodef[64] = "", buf[1024];
    if (node)
        snprintf(nodef, sizeof nodef, "\"nodeName\":%s,", node);
    snprintf(buf, sizeof buf,
             "{\"metadata\":{\"namespace\":\"u\",\"name\":\"%s\",\"uid\":\"%s\","
             "\"resourceVersion\":\"3\"},\"spec\":{%s\"containers\":[{\"name\":\"c\","
             "\"resources\":{\"requests\":{\"cpu\":\"%s\"}}}]},\"status\":{\"phase\":\"Running\"}}",
             name, uid, nodef, cpu);
    return feed(f, HR_CK_POD, del, buf);
}

static bool pod_view(fx *f, const char *name, hr_cpod_view *v)
{
    hr_cache_lock(f->c);
    bool ok = hr_cache_pod_get(f->c, "u", name, v, f->scr);
    hr_cache_unlock(f->c);
    return ok;
}

/* Design §6, §15: a pod the decoder refuses is kept as undecodable on its
 * node (its booking then unknown), reported and counted once per object,
 * and again only after it decoded, was deleted or was recreated. */
/* The config status is the cache's own copy, every string of it: the caller's may go at once. */
static void test_config_status_is_copied(void **state)
{
    fx *f = *state;
    char buf[6][32];
    const char *text[6] = {"Ready", "True", "Applied", "all good", "2026-11-30T08:00:00Z", "batch"};
    for (size_t i = 0; i < 6; i++)
        snprintf(buf[i], sizeof buf[i], "%s", text[i]);
    hr_kcfg_status s = {.generation = 2,
                        .observed_generation = 2,
                        .managed_pods = 7,
                        .managed_nodes = 3,
                        .n_cond = 1,
                        .n_pools = 1};
    s.cond[0] = (hr_kcondition){buf[0], buf[1], buf[2], buf[3], buf[4], 2};
    s.pools[0] = (hr_kpool_count){buf[5], 4};
    hr_err err;
    assert_int_equal(hr_cache_put_config_status(f->c, &s, &err), HR_OK);
    memset(buf, 'x', sizeof buf); /* the caller's strings are gone */
    int64_t gen;
    const hr_kcfg_status *st;
    hr_cache_lock(f->c);
    (void)hr_cache_config_object(f->c, &gen, &st);
    assert_string_equal(st->cond[0].type, "Ready");
    assert_string_equal(st->cond[0].status, "True");
    assert_string_equal(st->cond[0].reason, "Applied");
    assert_string_equal(st->cond[0].message, "all good");
    assert_string_equal(st->cond[0].last_transition, "2026-11-30T08:00:00Z");
    assert_int_equal(st->n_pools, 1);
    assert_string_equal(st->pools[0].name, "batch");
    assert_int_equal(st->pools[0].nodes, 4);
    assert_int_equal(st->managed_pods, 7);
    hr_cache_unlock(f->c);
}

static void test_undecodable_pods(void **state)
{
    fx *f = *state;
    char d[4096];
    hr_csink *ps = f->sink[HR_CK_POD];
    hr_cpod_view v;
    put_node(f, "n1", "4", "False", "z", "1");
    put_node(f, "n2", "4", "False", "z", "2");
    drain(f, d);

    /* The first failure is news (the watch logs it), the next is quiet. */
    assert_int_equal(feed_pod(f, false, "big", "u1", "\"n1\"", "1e16"), HR_E_INPUT);
    assert_int_equal(hr_csink_decode_errors(ps), 1);
    assert_int_equal(feed_pod(f, false, "big", "u1", "\"n1\"", "1e16"), HR_OK);
    assert_int_equal(hr_csink_decode_errors(ps), 1);
    assert_true(pod_view(f, "big", &v));
    assert_true(v.pod.undecodable);
    assert_string_equal(v.node, "n1");
    assert_int_equal(v.pod.n_ctr, 0);
    assert_string_equal(drain(f, d), "n1");
    hr_cache_lock(f->c);
    assert_int_equal(hr_cache_pods_nowhere(f->c), 0);
    hr_cache_unlock(f->c);

    /* It decodes: an ordinary pod again, the node replans; failing again
     * later is a new episode. */
    assert_int_equal(feed_pod(f, false, "big", "u1", "\"n1\"", "100m"), HR_OK);
    assert_true(pod_view(f, "big", &v));
    assert_false(v.pod.undecodable);
    assert_int_equal(v.pod.n_ctr, 1);
    assert_string_equal(drain(f, d), "n1");
    assert_int_equal(feed_pod(f, false, "big", "u1", "\"n1\"", "1x"), HR_E_INPUT);
    assert_int_equal(hr_csink_decode_errors(ps), 2);
    /* nodeName unreadable now: it cannot have moved, it stays on n1 */
    assert_int_equal(feed_pod(f, false, "big", "u1", "7", "1x"), HR_OK);
    assert_true(pod_view(f, "big", &v));
    assert_string_equal(v.node, "n1");
    /* Deleted (the event carries the uid): gone, and forgotten. */
    assert_int_equal(feed_pod(f, true, "big", "u1", "\"n1\"", "1x"), HR_OK);
    assert_false(pod_view(f, "big", &v));
    assert_int_equal(feed_pod(f, false, "big", "u2", "\"n1\"", "1x"), HR_E_INPUT);
    assert_int_equal(hr_csink_decode_errors(ps), 3);
    drain(f, d);

    /* A pod whose nodeName cannot be read may be on any node: every node
     * is looked at, when the first such pod comes and when the last goes. */
    assert_int_equal(feed_pod(f, false, "lost", "u3", "7", "1x"), HR_E_INPUT);
    assert_true(pod_view(f, "lost", &v));
    assert_null(v.node);
    assert_true(v.pod.bound && v.pod.undecodable);
    hr_cache_lock(f->c);
    assert_int_equal(hr_cache_pods_nowhere(f->c), 1);
    hr_cache_unlock(f->c);
    assert_string_equal(drain(f, d), "n1,n2");
    assert_int_equal(feed_pod(f, false, "lost", "u3", "\"n2\"", "1m"), HR_OK);
    hr_cache_lock(f->c);
    assert_int_equal(hr_cache_pods_nowhere(f->c), 0);
    hr_cache_unlock(f->c);
    assert_string_equal(drain(f, d), "n1,n2");

    /* A relist that no longer lists an undecodable pod sweeps it, and its
     * report: the same failure later is news again. */
    f->ws[HR_CK_POD].relist_begin(f->ws[HR_CK_POD].ud);
    assert_int_equal(feed_pod(f, false, "lost", "u3", "\"n2\"", "1m"), HR_OK);
    f->ws[HR_CK_POD].relist_end(f->ws[HR_CK_POD].ud, true);
    assert_false(pod_view(f, "big", &v));
    assert_int_equal(feed_pod(f, false, "big", "u2", "\"n1\"", "1x"), HR_E_INPUT);
    assert_int_equal(hr_csink_decode_errors(ps), 5);
}

/* Design §6: a Node object the decoder refuses makes the node unknown (no
 * write either way), dropping what was known of it, until it decodes. */
static void test_undecodable_node(void **state)
{
    fx *f = *state;
    char d[4096];
    hr_cnode_view nv;
    put_node(f, "n1", "4", "False", "z", "1");
    put_pod(f, "a", "p", "n1", "Running", 100, -1, "2");
    drain(f, d);
    const char *bad = "{\"metadata\":{\"name\":\"n1\",\"resourceVersion\":\"5\"},"
                      "\"status\":{\"allocatable\":{\"cpu\":\"16 cores\"}}}";
    assert_int_equal(feed(f, HR_CK_NODE, false, bad), HR_E_INPUT);
    assert_int_equal(feed(f, HR_CK_NODE, false, bad), HR_OK);
    assert_int_equal(hr_csink_decode_errors(f->sink[HR_CK_NODE]), 1);
    assert_string_equal(drain(f, d), "n1");
    hr_cache_lock(f->c);
    assert_true(hr_cache_node_get(f->c, "n1", &nv));
    assert_false(nv.present);
    assert_true(nv.undecodable);
    assert_false(nv.node.known);
    hr_cache_unlock(f->c);
    /* kept through a relist that lists it (undecodable still) */
    f->ws[HR_CK_NODE].relist_begin(f->ws[HR_CK_NODE].ud);
    assert_int_equal(feed(f, HR_CK_NODE, false, bad), HR_OK);
    f->ws[HR_CK_NODE].relist_end(f->ws[HR_CK_NODE].ud, true);
    hr_cache_lock(f->c);
    assert_true(hr_cache_node_get(f->c, "n1", &nv) && nv.undecodable);
    hr_cache_unlock(f->c);
    put_node(f, "n1", "4", "False", "z", "6");
    assert_string_equal(drain(f, d), "n1");
    hr_cache_lock(f->c);
    assert_true(hr_cache_node_get(f->c, "n1", &nv));
    assert_true(nv.present && nv.node.known && !nv.undecodable);
    assert_int_equal(nv.node.allocatable, 4000);
    hr_cache_unlock(f->c);
}

static void test_relist_by_difference(void **state)
{
    fx *f = *state;
    char d[4096];
    put_pod(f, "a", "keep", "n1", "Running", 100, -1, "1");
    put_pod(f, "a", "gone", "n2", "Running", 100, -1, "2");
    put_pod(f, "a", "changed", "n3", "Running", 100, -1, "3");
    put_pod(f, "a", "garbled", "n4", "Running", 100, -1, "4");
    put_node(f, "n1", "4", "False", "z", "5");
    put_node(f, "n9", "4", "False", "z", "6");
    drain(f, d);
    memset(f->changes, 0, sizeof f->changes);

    f->ws[HR_CK_POD].relist_begin(f->ws[HR_CK_POD].ud);
    put_pod(f, "a", "keep", "n1", "Running", 100, -1, "1");
    put_pod(f, "a", "changed", "n3", "Running", 200, -1, "7");
    put_pod(f, "a", "new", "n5", "Running", 100, -1, "8");
    /* a listed pod the decoder refuses is kept, as undecodable: its node's
     * booking is unknown now (design §6, §15) */
    const char *garbled = "{\"metadata\":{\"namespace\":\"a\",\"name\":\"garbled\"},"
                          "\"spec\":{\"containers\":[{\"name\":\"x\",\"resources\":"
                          "{\"requests\":{\"cpu\":\"1x\"}}}]}}";
    assert_int_not_equal(feed(f, HR_CK_POD, false, garbled), HR_OK);
    f->ws[HR_CK_POD].relist_end(f->ws[HR_CK_POD].ud, true);

    assert_int_equal(f->changes[HR_CK_POD][HR_CC_ADDED], 1);
    assert_int_equal(f->changes[HR_CK_POD][HR_CC_UPDATED], 2);
    assert_int_equal(f->changes[HR_CK_POD][HR_CC_DELETED], 1);
    assert_string_equal(f->last, "pods 2 a/gone");
    assert_string_equal(drain(f, d), "n2,n3,n4,n5");
    hr_cpod_view v;
    hr_cache_lock(f->c);
    assert_true(hr_cache_pod_get(f->c, "a", "garbled", &v, f->scr));
    assert_true(v.pod.undecodable);
    assert_string_equal(v.node, "n4");
    assert_int_equal(v.pod.n_ctr, 0);
    assert_false(hr_cache_pod_get(f->c, "a", "gone", &v, f->scr));
    hr_cache_unlock(f->c);

    /* an abandoned relist sweeps nothing */
    f->ws[HR_CK_POD].relist_begin(f->ws[HR_CK_POD].ud);
    f->ws[HR_CK_POD].relist_end(f->ws[HR_CK_POD].ud, false);
    hr_cache_stats s;
    hr_cache_lock(f->c);
    hr_cache_get_stats(f->c, &s);
    hr_cache_unlock(f->c);
    assert_int_equal(s.pods, 4);

    /* nodes: n9 vanished while we were away */
    f->ws[HR_CK_NODE].relist_begin(f->ws[HR_CK_NODE].ud);
    put_node(f, "n1", "4", "False", "z", "5");
    f->ws[HR_CK_NODE].relist_end(f->ws[HR_CK_NODE].ud, true);
    assert_string_equal(drain(f, d), "n9");
    assert_int_equal(f->changes[HR_CK_NODE][HR_CC_DELETED], 1);
}

static void test_resize_conditions(void **state)
{
    fx *f = *state;
    char d[4096];
    const char *pending =
        "{\"metadata\":{\"namespace\":\"a\",\"name\":\"p\",\"resourceVersion\":\"2\"},"
        "\"spec\":{\"nodeName\":\"n1\",\"containers\":[{\"name\":\"c\",\"resources\":"
        "{\"requests\":{\"cpu\":\"1\"}}}]},\"status\":{\"phase\":\"Running\","
        "\"conditions\":[{\"type\":\"PodResizePending\",\"reason\":\"Infeasible\"}]}}";
    const char *plain =
        "{\"metadata\":{\"namespace\":\"a\",\"name\":\"p\",\"resourceVersion\":\"1\"},"
        "\"spec\":{\"nodeName\":\"n1\",\"containers\":[{\"name\":\"c\",\"resources\":"
        "{\"requests\":{\"cpu\":\"1\"}}}]},\"status\":{\"phase\":\"Running\"}}";
    assert_int_equal(feed(f, HR_CK_POD, false, plain), HR_OK);
    drain(f, d);
    assert_int_equal(feed(f, HR_CK_POD, false, pending), HR_OK);
    assert_string_equal(drain(f, d), "n1"); /* design §5: resize conditions */
    hr_cpod_view v;
    hr_cache_lock(f->c);
    assert_true(hr_cache_pod_get(f->c, "a", "p", &v, f->scr));
    assert_int_equal(v.resize, HR_RS_INFEASIBLE);
    hr_cache_unlock(f->c);
}

/* Many pods in and out, against a plain array model: exercises rehashing,
 * slot reuse and the node lists, and that every string is released. */
static void test_churn_against_model(void **state)
{
    fx *f = *state;
    enum { N = 3000 };
    static int model[N]; /* 0 absent, else node number + 1 */
    memset(model, 0, sizeof model);
    hr_prng rng;
    hr_prng_seed(&rng, 12345); /* fixed: every run replays the same churn */
    char name[32], node[32], rv[32];
    for (int step = 0; step < 20000; step++) {
        uint64_t x = hr_prng_next(&rng);
        int i = (int)(x % N), op = (int)((x >> 20) % 4);
        snprintf(name, sizeof name, "pod-%d", i);
        snprintf(rv, sizeof rv, "%d", step + 1);
        if (op == 0) {
            del_obj(f, HR_CK_POD, i % 2 ? "odd" : "even", name);
            model[i] = 0;
        } else {
            int nd = (int)((x >> 30) % 17);
            snprintf(node, sizeof node, "node-%d", nd);
            put_pod(f, i % 2 ? "odd" : "even", name, node, "Running", 10 * (op + 1), -1, rv);
            model[i] = nd + 1;
        }
    }
    hr_cache_lock(f->c);
    size_t total = 0;
    for (int i = 0; i < N; i++) {
        hr_cpod_view v;
        snprintf(name, sizeof name, "pod-%d", i);
        bool have = hr_cache_pod_get(f->c, i % 2 ? "odd" : "even", name, &v, f->scr);
        assert_int_equal(have, model[i] != 0);
        if (have) {
            snprintf(node, sizeof node, "node-%d", model[i] - 1);
            assert_string_equal(v.node, node);
            total++;
        }
    }
    size_t on_nodes = 0;
    uint32_t ids[N];
    for (int nd = 0; nd < 17; nd++) {
        snprintf(node, sizeof node, "node-%d", nd);
        size_t n = hr_cache_node_pods(f->c, node, ids, N);
        for (size_t k = 0; k < n; k++) {
            hr_cpod_view v;
            assert_true(hr_cache_pod_at(f->c, ids[k], &v, f->scr));
            assert_string_equal(v.node, node);
        }
        on_nodes += n;
    }
    assert_int_equal(on_nodes, total);
    hr_cache_unlock(f->c);
    /* delete everything: no string may stay behind */
    for (int i = 0; i < N; i++) {
        snprintf(name, sizeof name, "pod-%d", i);
        del_obj(f, HR_CK_POD, i % 2 ? "odd" : "even", name);
    }
    char d[8192];
    drain(f, d);
    hr_cache_stats s;
    hr_cache_lock(f->c);
    hr_cache_get_stats(f->c, &s);
    hr_cache_unlock(f->c);
    assert_int_equal(s.pods, 0);
    assert_int_equal(s.node_placeholders, 0);
    assert_int_equal(s.strings, 0);
}

/* Delete, touch and the relist sweep are written once for every kind
 * (cache/store.c): each kind sweeps what a relist did not see, keeps what
 * was touched, ignores deletes of what it does not hold, and reports its
 * own deletions. */
static void test_every_kind_through_the_store(void **state)
{
    fx *f = *state;
    char d[4096], lr[512];
    put_pod(f, "a", "p1", "n1", "Running", 100, -1, "1");
    put_ns(f, "a", "managed", "2");
    put_ns(f, "b", "managed", "3");
    put_ns(f, "c", "managed", "4");
    for (int i = 1; i <= 3; i++) {
        snprintf(lr, sizeof lr,
                 "{\"metadata\":{\"namespace\":\"a\",\"name\":\"lr%d\",\"resourceVersion\":\"%d\"},"
                 "\"spec\":{\"limits\":[{\"type\":\"Container\",\"max\":{\"cpu\":\"%d\"}}]}}",
                 i, 10 + i, i);
        assert_int_equal(feed(f, HR_CK_LIMITRANGE, false, lr), HR_OK);
    }
    const char *cfg = "{\"metadata\":{\"name\":\"cluster\",\"resourceVersion\":\"20\","
                      "\"generation\":1},\"spec\":{}}";
    assert_int_equal(feed(f, HR_CK_CONFIG, false, cfg), HR_OK);
    drain(f, d);
    memset(f->changes, 0, sizeof f->changes);

    /* Deletes of objects the cache does not hold change nothing. */
    hr_cache_del(f->c, HR_CK_POD, "a", "nope");
    hr_cache_del(f->c, HR_CK_POD, "zz", "p1");
    hr_cache_del(f->c, HR_CK_NODE, "", "nope");
    hr_cache_del(f->c, HR_CK_NODE, "", "n1"); /* known only from its pod */
    hr_cache_del(f->c, HR_CK_NAMESPACE, "", "nope");
    hr_cache_del(f->c, HR_CK_LIMITRANGE, "a", "nope");
    hr_cache_del(f->c, HR_CK_LIMITRANGE, "b", "lr1");
    hr_cache_del(f->c, HR_CK_QUOTA, "a", "nope");
    hr_cache_del(f->c, HR_CK_CONFIG, "", "other");
    hr_cache_del(f->c, HR_CK_POD, NULL, NULL);
    for (int k = 0; k < HR_CK_COUNT_; k++)
        for (int w = 0; w < 3; w++)
            assert_int_equal(f->changes[k][w], 0);
    assert_string_equal(drain(f, d), "");

    /* Namespaces: a seen, b touched (listed but undecodable), c gone. */
    hr_cache_relist_begin(f->c, HR_CK_NAMESPACE);
    put_ns(f, "a", "managed", "2");
    hr_cache_touch(f->c, HR_CK_NAMESPACE, "", "b");
    assert_int_equal(hr_cache_relist_end(f->c, HR_CK_NAMESPACE, true), 1);
    assert_int_equal(f->changes[HR_CK_NAMESPACE][HR_CC_DELETED], 1);
    assert_string_equal(f->last, "namespaces 2 /c");
    hr_cns_view nv;
    hr_cache_lock(f->c);
    assert_true(hr_cache_ns_get(f->c, "b", &nv));
    assert_false(hr_cache_ns_get(f->c, "c", &nv));
    hr_cache_unlock(f->c);

    /* LimitRanges: the first two vanish; the row table moves the last row
     * into the hole, and the sweep still sees every row once. */
    hr_cache_relist_begin(f->c, HR_CK_LIMITRANGE);
    assert_int_equal(feed(f, HR_CK_LIMITRANGE, false, lr), HR_OK); /* lr3 */
    assert_int_equal(hr_cache_relist_end(f->c, HR_CK_LIMITRANGE, true), 2);
    assert_int_equal(f->changes[HR_CK_LIMITRANGE][HR_CC_DELETED], 2);
    hr_cache_lock(f->c);
    assert_int_equal(hr_cache_limitrange_count(f->c), 1);
    assert_int_equal(hr_cache_ns_bounds(f->c, "a").ctr_max, 3000);
    hr_cache_unlock(f->c);
    assert_string_equal(drain(f, d), "n1"); /* bounds changed: every node */

    /* The config: touched, it stays; unseen, it goes (defaults again). */
    hr_cache_relist_begin(f->c, HR_CK_CONFIG);
    hr_cache_touch(f->c, HR_CK_CONFIG, "", "cluster");
    assert_int_equal(hr_cache_relist_end(f->c, HR_CK_CONFIG, true), 0);
    hr_cache_relist_begin(f->c, HR_CK_CONFIG);
    assert_int_equal(hr_cache_relist_end(f->c, HR_CK_CONFIG, true), 1);
    assert_int_equal(f->changes[HR_CK_CONFIG][HR_CC_DELETED], 1);
    hr_cache_lock(f->c);
    assert_false(hr_cache_config(f->c, NULL)->present);
    hr_cache_unlock(f->c);
    hr_cache_relist_begin(f->c, HR_CK_CONFIG);
    assert_int_equal(hr_cache_relist_end(f->c, HR_CK_CONFIG, true), 0); /* nothing to sweep */

    /* Pods: touched pods stay, the rest go, and take their node along. */
    put_pod(f, "a", "p2", "n2", "Running", 100, -1, "30");
    drain(f, d);
    hr_cache_relist_begin(f->c, HR_CK_POD);
    hr_cache_touch(f->c, HR_CK_POD, "a", "p1");
    assert_int_equal(hr_cache_relist_end(f->c, HR_CK_POD, true), 1);
    assert_string_equal(f->last, "pods 2 a/p2");
    assert_string_equal(drain(f, d), "n2");
    assert_int_equal(node_pod_count(f, "n2"), 0);
    assert_int_equal(node_pod_count(f, "n1"), 1);
}

/* Design §2.11: a change of only what a node pool sets re-plans exactly
 * the nodes whose settings moved; anything else, every node. Pool counts
 * follow the nodes' labels. */
static void put_cfg(fx *f, int gen, const char *spec)
{
    char buf[2048];
    snprintf(buf, sizeof buf,
             "{\"metadata\":{\"name\":\"cluster\",\"resourceVersion\":\"%d\",\"generation\":%d},"
             "\"spec\":%s}",
             100 + gen, gen, spec);
    assert_int_equal(feed(f, HR_CK_CONFIG, false, buf), HR_OK);
}

static void test_pool_change_replans_its_nodes(void **state)
{
    fx *f = *state;
    char d[4096];
    put_node(f, "n1", "16", "False", "z1", "1");
    put_node(f, "n2", "16", "False", "z2", "2");
    put_node(f, "n3", "16", "False", "z3", "3");
    assert_string_equal(drain(f, d), "n1,n2,n3");
#define POOLS(m1, sel2, g2, top)                                                  \
    "{\"maxMultiplier\":\"" top "\",\"nodePools\":["                              \
    "{\"name\":\"a\",\"nodeSelector\":{\"matchLabels\":{\"zone\":\"z1\"}},"       \
    "\"overrides\":{\"maxMultiplier\":\"" m1 "\"}},"                              \
    "{\"name\":\"b\",\"nodeSelector\":{\"matchLabels\":{\"zone\":\"" sel2 "\"}}," \
    "\"overrides\":{\"maxMultiplier\":\"5\",\"deadband\":{\"growPercent\":" g2 "}}}]}"
    put_cfg(f, 1, POOLS("2", "z2", "30", "10"));
    assert_string_equal(drain(f, d), "n1,n2,n3"); /* the first config: all */
    int64_t counts[HR_POOLS_MAX];
    hr_cache_lock(f->c);
    hr_cache_pool_counts(f->c, counts);
    hr_cache_unlock(f->c);
    assert_int_equal(counts[0], 1);
    assert_int_equal(counts[1], 1);
    put_cfg(f, 2, POOLS("3", "z2", "30", "10")); /* pool a's multiplier */
    assert_string_equal(drain(f, d), "n1");
    put_cfg(f, 3, POOLS("3", "z2", "40", "10")); /* pool b's deadband */
    assert_string_equal(drain(f, d), "n2");
    put_cfg(f, 4, POOLS("3", "z3", "40", "10")); /* b moves from z2 to z3 */
    assert_string_equal(drain(f, d), "n2,n3");
    put_cfg(f, 5, POOLS("3", "z3", "40", "8")); /* the top level: only n2 uses it */
    assert_string_equal(drain(f, d), "n2");
    put_cfg(f, 6, POOLS("3", "z3", "40", "8")); /* same spec, new generation */
    assert_string_equal(drain(f, d), "");
    /* a node relabelled into a pool is dirty by its own update */
    put_node(f, "n2", "16", "False", "z1", "7");
    assert_string_equal(drain(f, d), "n2");
    hr_cache_lock(f->c);
    hr_cache_pool_counts(f->c, counts);
    hr_cache_unlock(f->c);
    assert_int_equal(counts[0], 2);
    assert_int_equal(counts[1], 1);
    /* anything a pool cannot set touches every node */
    put_cfg(f, 7,
            "{\"maxMultiplier\":\"8\",\"debouncePeriod\":\"1s\",\"nodePools\":["
            "{\"name\":\"a\",\"nodeSelector\":{\"matchLabels\":{\"zone\":\"z1\"}},"
            "\"overrides\":{\"maxMultiplier\":\"3\"}},"
            "{\"name\":\"b\",\"nodeSelector\":{\"matchLabels\":{\"zone\":\"z3\"}},"
            "\"overrides\":{\"maxMultiplier\":\"5\",\"deadband\":{\"growPercent\":40}}}]}");
    assert_string_equal(drain(f, d), "n1,n2,n3");
#undef POOLS
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_pod_roundtrip, setup, teardown),
        cmocka_unit_test_setup_teardown(test_rv_only_update_is_quiet, setup, teardown),
        cmocka_unit_test_setup_teardown(test_bind_rebind_leave, setup, teardown),
        cmocka_unit_test_setup_teardown(test_removals_count_what_leaves, setup, teardown),
        cmocka_unit_test_setup_teardown(test_terminal_pods_leave, setup, teardown),
        cmocka_unit_test_setup_teardown(test_nodes, setup, teardown),
        cmocka_unit_test_setup_teardown(test_namespace_labels, setup, teardown),
        cmocka_unit_test_setup_teardown(test_namespace_weight, setup, teardown),
        cmocka_unit_test_setup_teardown(test_limitrange_and_config, setup, teardown),
        cmocka_unit_test_setup_teardown(test_quotas_and_config_status, setup, teardown),
        cmocka_unit_test_setup_teardown(test_config_status_is_copied, setup, teardown),
        cmocka_unit_test_setup_teardown(test_relist_by_difference, setup, teardown),
        cmocka_unit_test_setup_teardown(test_undecodable_pods, setup, teardown),
        cmocka_unit_test_setup_teardown(test_undecodable_node, setup, teardown),
        cmocka_unit_test_setup_teardown(test_resize_conditions, setup, teardown),
        cmocka_unit_test_setup_teardown(test_churn_against_model, setup, teardown),
        cmocka_unit_test_setup_teardown(test_every_kind_through_the_store, setup, teardown),
        cmocka_unit_test_setup_teardown(test_pool_change_replans_its_nodes, setup, teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
