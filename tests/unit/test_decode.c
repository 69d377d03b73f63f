/*
 * test_decode.c — the Kubernetes object decoders (src/kube/decode/decode.h).
 *
 * Good objects decode to the fields design §3–§4 need; bad ones give one
 * error naming the object and the field. The mutation test replaces every
 * value of a realistic pod, one at a time, by every JSON type: the decoder
 * must either accept the result or reject it with a message about that
 * pod — never crash (run it under ASan to mean it). A pod of a CREATE
 * request (no name yet) decodes like the stored one.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <yyjson.h>

#include "hr_check.h"

#include "core/eligibility.h"
#include "core/names.h"
#include "kube/decode/decode.h"

typedef struct parsed {
    yyjson_doc *doc;
    hr_arena arena;
    hr_err err;
} parsed;

static yyjson_val *parse(parsed *p, const char *json)
{
    p->doc = yyjson_read(json, strlen(json), 0);
    if (!p->doc)
        fail_msg("test JSON does not parse: %s", json);
    hr_arena_init(&p->arena, 0);
    hr_err_clear(&p->err);
    return yyjson_doc_get_root(p->doc);
}

static void done(parsed *p)
{
    yyjson_doc_free(p->doc);
    hr_arena_free(&p->arena);
}

static const char *GOOD_POD =
    "{\"apiVersion\":\"v1\",\"kind\":\"Pod\",\"metadata\":{"
    "\"name\":\"web-1\",\"namespace\":\"team-a\",\"uid\":\"u-1\","
    "\"resourceVersion\":\"42\",\"labels\":{\"app\":\"web\"},"
    "\"annotations\":{\"kube-headroom.dev/max-cpu\":\"2500m\"},"
    "\"ownerReferences\":[{\"apiVersion\":\"v1\",\"kind\":\"Other\","
    "\"name\":\"x\"},{\"apiVersion\":\"apps/v1\",\"kind\":\"ReplicaSet\","
    "\"name\":\"web-7d\",\"controller\":true}],"
    "\"managedFields\":[{\"manager\":\"kubectl\",\"fieldsV1\":{\"f:spec\":{}}}]},"
    "\"spec\":{\"nodeName\":\"node-a\",\"overhead\":{\"cpu\":\"50m\"},"
    "\"initContainers\":["
    "{\"name\":\"migrate\",\"resources\":{\"requests\":{\"cpu\":\"2\"}}},"
    "{\"name\":\"envoy\",\"restartPolicy\":\"Always\",\"resources\":{"
    "\"requests\":{\"cpu\":\"200m\",\"memory\":\"64Mi\"},"
    "\"limits\":{\"cpu\":\"400m\",\"memory\":\"128Mi\"}}}],"
    "\"containers\":["
    "{\"name\":\"app\",\"resources\":{\"requests\":{\"cpu\":\"1\","
    "\"memory\":\"1Gi\"},\"limits\":{\"cpu\":\"2\"}},"
    "\"resizePolicy\":[{\"resourceName\":\"memory\",\"restartPolicy\":"
    "\"RestartContainer\"},{\"resourceName\":\"cpu\",\"restartPolicy\":"
    "\"NotRequired\"}]},"
    "{\"name\":\"log\",\"resources\":{\"limits\":{\"cpu\":\"100m\"}}}]},"
    "\"status\":{\"phase\":\"Running\",\"containerStatuses\":["
    "{\"name\":\"app\",\"resources\":{}},{\"name\":\"log\",\"resources\":{}}],"
    "\"initContainerStatuses\":[{\"name\":\"envoy\",\"resources\":{}},"
    "{\"name\":\"migrate\"}]}}";

/* Design §2.10: a group member's key from the group-uniform label or
 * annotation and its controlling owner's uid, or its group label. */
static void test_pod_group(void **state)
{
    (void)state;
    static const char *const cases[][2] = {
        {"\"labels\":{\"kube-headroom.dev/group-uniform\":\"true\"},", "ml/owner:j-1"},
        {"\"annotations\":{\"kube-headroom.dev/group-uniform\":\"true\"},", "ml/owner:j-1"},
        {"\"labels\":{\"kube-headroom.dev/group-uniform\":\"true\","
         "\"kube-headroom.dev/group\":\"g\"},",
         "ml/label:g"},
        {"\"labels\":{\"kube-headroom.dev/group-uniform\":\"yes\"},", NULL},
        {"\"labels\":{\"kube-headroom.dev/group\":\"g\"},", NULL},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        char json[1024];
        snprintf(json, sizeof json,
                 "{\"apiVersion\":\"v1\",\"kind\":\"Pod\",\"metadata\":{\"name\":\"w-0\","
                 "\"namespace\":\"ml\",%s\"ownerReferences\":[{\"apiVersion\":\"batch/v1\","
                 "\"kind\":\"Job\",\"name\":\"train\",\"uid\":\"j-1\",\"controller\":true}]},"
                 "\"spec\":{\"containers\":[{\"name\":\"app\"}]}}",
                 cases[i][0]);
        parsed p;
        yyjson_val *root = parse(&p, json);
        hr_kpod kp;
        if (hr_decode_pod(root, &p.arena, &kp, &p.err))
            fail_msg("%s", p.err.msg);
        assert_string_equal(kp.owner.uid, "j-1");
        if (cases[i][1] == NULL)
            assert_null(kp.pod.group);
        else
            assert_string_equal(kp.pod.group ? kp.pod.group : "(none)", cases[i][1]);
        done(&p);
    }
}

static void test_pod_good(void **state)
{
    (void)state;
    parsed p;
    yyjson_val *root = parse(&p, GOOD_POD);
    hr_kpod kp;
    hr_status st = hr_decode_pod(root, &p.arena, &kp, &p.err);
    if (st)
        fail_msg("%s", p.err.msg);
    assert_string_equal(kp.meta.ns, "team-a");
    assert_string_equal(kp.meta.name, "web-1");
    assert_string_equal(kp.meta.uid, "u-1");
    assert_string_equal(kp.meta.resource_version, "42");
    assert_string_equal(hr_labels_get(&kp.meta.labels, "app"), "web");
    assert_string_equal(kp.node_name, "node-a");
    /* The controller reference wins over the first one. */
    assert_string_equal(kp.owner.kind, "ReplicaSet");
    assert_string_equal(kp.owner.api_group, "apps");
    assert_string_equal(kp.owner.name, "web-7d");
    CHECK_TRUE("bound", kp.pod.bound);
    CHECK_TRUE("not deleting", !kp.deleting);
    /* Init containers first, in spec order, then the app containers. */
    assert_int_equal(kp.pod.n_ctr, 4);
    assert_string_equal(kp.ctr_names[0], "migrate");
    assert_string_equal(kp.ctr_names[1], "envoy");
    assert_string_equal(kp.ctr_names[2], "app");
    assert_string_equal(kp.ctr_names[3], "log");
    CHECK_I64("migrate kind", kp.pod.ctr[0].kind, HR_CTR_INIT);
    CHECK_I64("envoy kind", kp.pod.ctr[1].kind, HR_CTR_SIDECAR);
    CHECK_I64("app kind", kp.pod.ctr[2].kind, HR_CTR_APP);
    CHECK_I64("migrate req", kp.pod.ctr[0].cpu_req, 2000);
    CHECK_I64("migrate lim", kp.pod.ctr[0].cpu_lim, HR_NONE);
    CHECK_I64("envoy req", kp.pod.ctr[1].cpu_req, 200);
    CHECK_I64("envoy lim", kp.pod.ctr[1].cpu_lim, 400);
    CHECK_I64("envoy mem req", kp.pod.ctr[1].mem_req, 64 << 20);
    CHECK_I64("envoy mem lim", kp.pod.ctr[1].mem_lim, 128 << 20);
    CHECK_I64("app req", kp.pod.ctr[2].cpu_req, 1000);
    CHECK_I64("app lim", kp.pod.ctr[2].cpu_lim, 2000);
    CHECK_I64("app mem lim", kp.pod.ctr[2].mem_lim, HR_NONE);
    /* A limit without a request: the API server defaults the request. */
    CHECK_I64("log req defaulted", kp.pod.ctr[3].cpu_req, 100);
    /* Only a cpu RestartContainer policy counts, not memory's. */
    CHECK_TRUE("app no cpu restart", !kp.pod.ctr[2].cpu_restart);
    CHECK_I64("overhead", kp.pod.overhead_cpu, 50);
    CHECK_I64("pod cpu req", kp.pod.pod_cpu_req, HR_NONE);
    CHECK_TRUE("no pod resources", !kp.pod.pod_resources);
    CHECK_I64("phase", kp.pod.phase, HR_PHASE_RUNNING);
    CHECK_I64("max cpu", kp.pod.max_cpu, 2500);
    CHECK_TRUE("max cpu valid", !kp.pod.max_cpu_invalid);
    CHECK_TRUE("not opted out", !kp.pod.opted_out);
    CHECK_TRUE("not mirror", !kp.pod.mirror);
    CHECK_TRUE("not windows", !kp.pod.windows);
    /* migrate is not resizable, so its missing resources do not matter. */
    CHECK_TRUE("status resources", kp.pod.status_resources);
    done(&p);
}

/* Decode a pod made of GOOD_POD with one substring replaced. */
static hr_status pod_with(const char *from, const char *to, hr_kpod *kp, parsed *p)
{
    const char *at = strstr(GOOD_POD, from);
    if (!at)
        fail_msg("fixture has no %s", from);
    size_t n = strlen(GOOD_POD) - strlen(from) + strlen(to) + 1;
    char *json = malloc(n);
    assert_non_null(json);
    snprintf(json, n, "%.*s%s%s", (int)(at - GOOD_POD), GOOD_POD, to, at + strlen(from));
    yyjson_val *root = parse(p, json);
    free(json);
    return hr_decode_pod(root, &p->arena, kp, &p->err);
}

/* Every valid quantity form books exactly what it says, through
 * the decoder (strings, and a bare JSON number as a dump may carry). */
static void test_pod_quantity_forms(void **state)
{
    (void)state;
    parsed p;
    yyjson_val *root = parse(
        &p, "{\"metadata\":{\"name\":\"q\",\"namespace\":\"n\"},\"spec\":{"
            "\"nodeName\":\"n1\",\"overhead\":{\"cpu\":\"1500000n\"},\"containers\":["
            "{\"name\":\"a\",\"resources\":{\"requests\":{\"cpu\":\"100u\"}}},"
            "{\"name\":\"b\",\"resources\":{\"requests\":{\"cpu\":\"5e-1\"},"
            "\"limits\":{\"cpu\":\"1E3m\"}}},"
            "{\"name\":\"c\",\"resources\":{\"requests\":{\"cpu\":\"+1\",\"memory\":\"+.5Gi\"},"
            "\"limits\":{\"cpu\":\"1E0\"}}},"
            "{\"name\":\"d\",\"resources\":{\"requests\":{\"cpu\":\"250000u\"},"
            "\"limits\":{\"cpu\":\"1e-3\"}}},"
            "{\"name\":\"e\",\"resources\":{\"requests\":{\"cpu\":\"10e-1\"},"
            "\"limits\":{\"cpu\":\"0.0015k\"}}},"
            "{\"name\":\"f\",\"resources\":{\"requests\":{\"cpu\":2}}}]}}");
    hr_kpod k;
    hr_status st = hr_decode_pod(root, &p.arena, &k, &p.err);
    /* 1E3m is not Kubernetes syntax (an exponent takes no suffix after it):
     * a CPU limit, so it reads as one that does not read (design §15) */
    assert_int_equal(st, HR_OK);
    CHECK_I64("1E3m: unbounded", k.pod.ctr[1].cpu_lim, HR_UNBOUNDED);
    done(&p);

    root = parse(
        &p, "{\"metadata\":{\"name\":\"q\",\"namespace\":\"n\"},\"spec\":{"
            "\"nodeName\":\"n1\",\"overhead\":{\"cpu\":\"1500000n\"},\"containers\":["
            "{\"name\":\"a\",\"resources\":{\"requests\":{\"cpu\":\"100u\"}}},"
            "{\"name\":\"b\",\"resources\":{\"requests\":{\"cpu\":\"5e-1\"},"
            "\"limits\":{\"cpu\":\"1E3\"}}},"
            "{\"name\":\"c\",\"resources\":{\"requests\":{\"cpu\":\"+1\",\"memory\":\"+.5Gi\"},"
            "\"limits\":{\"cpu\":\"1E0\"}}},"
            "{\"name\":\"d\",\"resources\":{\"requests\":{\"cpu\":\"250000u\"},"
            "\"limits\":{\"cpu\":\"1e-3\"}}},"
            "{\"name\":\"e\",\"resources\":{\"requests\":{\"cpu\":\"10e-1\"},"
            "\"limits\":{\"cpu\":\"0.0015k\"}}},"
            "{\"name\":\"f\",\"resources\":{\"requests\":{\"cpu\":2}}}]}}");
    if (hr_decode_pod(root, &p.arena, &k, &p.err) != HR_OK)
        fail_msg("%s", p.err.msg);
    const hr_container *c = k.pod.ctr;
    CHECK_I64("100u -> 1m (rounded up)", c[0].cpu_req, 1);
    CHECK_I64("5e-1", c[1].cpu_req, 500);
    CHECK_I64("1E3 (an exponent, not exa)", c[1].cpu_lim, 1000000);
    CHECK_I64("+1", c[2].cpu_req, 1000);
    CHECK_I64("+.5Gi", c[2].mem_req, INT64_C(536870912));
    CHECK_I64("1E0", c[2].cpu_lim, 1000);
    CHECK_I64("250000u", c[3].cpu_req, 250);
    CHECK_I64("1e-3", c[3].cpu_lim, 1);
    CHECK_I64("10e-1", c[4].cpu_req, 1000);
    CHECK_I64("0.0015k", c[4].cpu_lim, 1500);
    CHECK_I64("bare 2", c[5].cpu_req, 2000);
    CHECK_I64("1500000n overhead -> 2m", k.pod.overhead_cpu, 2);
    /* booked: 1 + 500 + 1000 + 250 + 1000 + 2000, plus 2 of overhead */
    CHECK_I64("booked exactly", hr_pod_booked_cpu(&k.pod), 4753);
    done(&p);
}

static void test_pod_flags(void **state)
{
    (void)state;
    struct {
        const char *from, *to, *label;
        size_t field; /* offsetof into hr_pod of a bool */
        bool want;
    } rows[] = {
        {"\"labels\":{\"app\":\"web\"}", "\"labels\":{\"kube-headroom.dev/mode\":\"unmanaged\"}",
         "label unmanaged", offsetof(hr_pod, opted_out), true},
        {"\"labels\":{\"app\":\"web\"}", "\"labels\":{\"kube-headroom.dev/mode\":\"managed\"}",
         "label managed", offsetof(hr_pod, opted_out), false},
        {"\"labels\":{\"app\":\"web\"}", "\"labels\":{\"kube-headroom.dev/mode\":\"Managed\"}",
         "label typo fails closed", offsetof(hr_pod, opted_out), true},
        {"\"annotations\":{",
         "\"annotations\":{\"kube-headroom.dev/mode\":"
         "\"off\",",
         "annotation", offsetof(hr_pod, opted_out), true},
        {"\"annotations\":{",
         "\"annotations\":{\"kubernetes.io/config."
         "mirror\":\"abc\",",
         "mirror", offsetof(hr_pod, mirror), true},
        {"\"2500m\"", "\"lots\"", "bad max-cpu", offsetof(hr_pod, max_cpu_invalid), true},
        {"\"2500m\"", "25", "max-cpu number", offsetof(hr_pod, max_cpu_invalid), true},
        {"\"overhead\"", "\"os\":{\"name\":\"windows\"},\"overhead\"", "windows",
         offsetof(hr_pod, windows), true},
        {"\"overhead\"",
         "\"resources\":{\"requests\":{\"cpu\":\"3\"}},"
         "\"overhead\"",
         "pod resources", offsetof(hr_pod, pod_resources), true},
        {"{\"name\":\"app\",\"resources\":{}}", "{\"name\":\"app\"}", "status without resources",
         offsetof(hr_pod, status_resources), false},
        {"{\"name\":\"envoy\",\"resources\":{}}", "{\"name\":\"envoy\"}",
         "sidecar status without resources", offsetof(hr_pod, status_resources), false},
        {"\"phase\":\"Running\",\"containerStatuses\":[{\"name\":\"app\","
         "\"resources\":{}}",
         "\"phase\":\"Pending\",\"containerStatuses\":"
         "[{\"name\":\"app\"}",
         "pending pods need no status resources", offsetof(hr_pod, status_resources), true},
        {"\"nodeName\":\"node-a\",", "", "unbound", offsetof(hr_pod, bound), false},
        {"\"resizePolicy\":[{\"resourceName\":\"memory\"",
         "\"resizePolicy\":[{\"resourceName\":\"cpu\"", "cpu RestartContainer",
         offsetof(hr_pod, ctr), true /* checked below */},
    };
    for (size_t i = 0; i < sizeof rows / sizeof rows[0]; i++) {
        parsed p;
        hr_kpod kp;
        if (pod_with(rows[i].from, rows[i].to, &kp, &p))
            fail_msg("%s: %s", rows[i].label, p.err.msg);
        bool got;
        if (rows[i].field == offsetof(hr_pod, ctr))
            got = kp.pod.ctr[2].cpu_restart;
        else
            memcpy(&got, (const char *)&kp.pod + rows[i].field, sizeof got);
        if (got != rows[i].want)
            fail_msg("%s: got %d, want %d", rows[i].label, got, rows[i].want);
        done(&p);
    }
}

static void test_pod_deleting_and_pod_level(void **state)
{
    (void)state;
    parsed p;
    hr_kpod kp;
    if (pod_with("\"uid\":\"u-1\",",
                 "\"uid\":\"u-1\",\"deletionTimestamp\":"
                 "\"2026-01-01T00:00:00Z\",",
                 &kp, &p))
        fail_msg("%s", p.err.msg);
    CHECK_TRUE("deleting", kp.deleting);
    done(&p);
    if (pod_with("\"overhead\"",
                 "\"resources\":{\"limits\":{\"cpu\":"
                 "\"1500m\"}},\"overhead\"",
                 &kp, &p))
        fail_msg("%s", p.err.msg);
    CHECK_I64("pod-level request defaults to the limit", kp.pod.pod_cpu_req, 1500);
    done(&p);
    if (pod_with("\"phase\":\"Running\"", "\"phase\":\"Succeeded\"", &kp, &p))
        fail_msg("%s", p.err.msg);
    CHECK_I64("succeeded", kp.pod.phase, HR_PHASE_SUCCEEDED);
    done(&p);
}

/* A CREATE request's pod (admission): no name yet, maybe no namespace; the
 * rest is read exactly as for a stored pod. */
static void test_pod_created(void **state)
{
    (void)state;
    const char *from = "\"name\":\"web-1\",\"namespace\":\"team-a\",";
    const char *at = strstr(GOOD_POD, from);
    assert_non_null(at);
    char json[4096];
    snprintf(json, sizeof json, "%.*s\"generateName\":\"web-\",%s", (int)(at - GOOD_POD), GOOD_POD,
             at + strlen(from));
    parsed p;
    yyjson_val *root = parse(&p, json);
    hr_kpod kp, stored;
    assert_int_equal(hr_decode_pod(root, &p.arena, &kp, &p.err), HR_E_INPUT);
    assert_string_equal(p.err.msg, "pod <unnamed>: metadata.name: missing");
    if (hr_decode_pod_created(root, &p.arena, &kp, &p.err))
        fail_msg("%s", p.err.msg);
    assert_string_equal(kp.meta.name, "");
    assert_string_equal(kp.meta.ns, "");
    yyjson_doc *d2 = yyjson_read(GOOD_POD, strlen(GOOD_POD), 0);
    assert_non_null(d2);
    if (hr_decode_pod(yyjson_doc_get_root(d2), &p.arena, &stored, &p.err))
        fail_msg("%s", p.err.msg);
    assert_int_equal(kp.pod.n_ctr, stored.pod.n_ctr);
    for (uint32_t i = 0; i < kp.pod.n_ctr; i++) {
        const hr_container *a = &kp.pod.ctr[i], *b = &stored.pod.ctr[i];
        CHECK_TRUE("same container", a->cpu_req == b->cpu_req && a->cpu_lim == b->cpu_lim &&
                                         a->mem_req == b->mem_req && a->mem_lim == b->mem_lim &&
                                         a->kind == b->kind && a->cpu_restart == b->cpu_restart);
    }
    CHECK_TRUE("opted out alike", kp.pod.opted_out == stored.pod.opted_out);
    assert_string_equal(kp.owner.kind ? kp.owner.kind : "",
                        stored.owner.kind ? stored.owner.kind : "");
    yyjson_doc_free(d2);
    /* Errors still name the field. */
    done(&p);
    root = parse(&p, "{\"metadata\":{},\"spec\":{\"containers\":[{\"name\":"
                     "\"a\",\"resources\":{\"requests\":{\"cpu\":\"1x\"}}}]}}");
    assert_int_equal(hr_decode_pod_created(root, &p.arena, &kp, &p.err), HR_E_INPUT);
    assert_string_equal(p.err.msg, "pod <unnamed>: spec.containers[0].resources.requests.cpu: "
                                   "unknown suffix \"1x\"");
    done(&p);
}

static void test_pod_errors(void **state)
{
    (void)state;
    struct {
        const char *from, *to, *want;
    } rows[] = {
        {"\"cpu\":\"1\",", "\"cpu\":\"1x\",",
         "pod team-a/web-1: spec.containers[0].resources.requests.cpu: "
         "unknown suffix \"1x\""},
        {"\"cpu\":\"1\",", "\"cpu\":\"1e999\",",
         "pod team-a/web-1: spec.containers[0].resources.requests.cpu: "
         "out of range \"1e999\""},
        {"\"cpu\":\"1\",", "\"cpu\":\"99999999999999999999\",",
         "pod team-a/web-1: spec.containers[0].resources.requests.cpu: "
         "out of range \"99999999999999999999\""},
        {"\"cpu\":\"1\",", "\"cpu\":\"-1\",",
         "pod team-a/web-1: spec.containers[0].resources.requests.cpu: "
         "negative quantity \"-1\""},
        {"\"cpu\":\"1\",", "\"cpu\":[],",
         "pod team-a/web-1: spec.containers[0].resources.requests.cpu: "
         "expected a quantity string, got an array"},
        {"\"cpu\":\"1\",", "\"cpu\":1.5,",
         "pod team-a/web-1: spec.containers[0].resources.requests.cpu: "
         "expected a quantity string, got the number 1.5"},
        /* A CPU limit that does not read, where it is also the request. */
        {"\"limits\":{\"cpu\":\"100m\"}", "\"limits\":{\"cpu\":\"1e16\"}",
         "pod team-a/web-1: spec.containers[1].resources.limits.cpu: "
         "out of range \"1e16\""},
        {"\"name\":\"web-1\",", "", "pod team-a/<unnamed>: metadata.name: missing"},
        {"\"namespace\":\"team-a\",", "", "pod web-1: metadata.namespace: missing"},
        {"\"containers\":[", "\"containerz\":[", "pod team-a/web-1: spec.containers: missing"},
        {"\"labels\":{\"app\":\"web\"}", "\"labels\":{\"app\":1}",
         "pod team-a/web-1: metadata.labels.app: expected a string, got a "
         "number"},
        {"\"nodeName\":\"node-a\"", "\"nodeName\":7",
         "pod team-a/web-1: spec.nodeName: expected a string, got a number"},
        {"\"overhead\":{\"cpu\":\"50m\"}", "\"overhead\":\"50m\"",
         "pod team-a/web-1: spec.overhead: expected an object, got a string"},
        {"\"ownerReferences\":[{\"apiVersion\":\"v1\",\"kind\":\"Other\",",
         "\"ownerReferences\":[7,{\"apiVersion\":\"v1\",\"kind\":\"Other\",",
         "pod team-a/web-1: metadata.ownerReferences[0]: expected an object, "
         "got a number"},
    };
    for (size_t i = 0; i < sizeof rows / sizeof rows[0]; i++) {
        parsed p;
        hr_kpod kp;
        hr_status st = pod_with(rows[i].from, rows[i].to, &kp, &p);
        if (st != HR_E_INPUT)
            fail_msg("row %zu: status %d, want input error (%s)", i, st, rows[i].want);
        assert_string_equal(p.err.msg, rows[i].want);
        done(&p);
    }
}

/* Design §15: what the scheduler does not book (memory, CPU limits) never
 * makes a pod undecodable: a value that does not read is HR_UNBOUNDED, the
 * pod books its CPU requests as usual and is not managed. */
static void test_pod_soft_quantities(void **state)
{
    (void)state;
    struct {
        const char *from, *to;
        uint32_t ctr;
        int field; /* 0 mem_req, 1 cpu_lim, 2 mem_lim */
    } rows[] = {
        {"\"memory\":\"64Mi\"", "\"memory\":\"1e30\"", 1, 0},
        {"\"memory\":\"64Mi\"", "\"memory\":\"64Mx\"", 1, 0},
        {"\"limits\":{\"cpu\":\"2\"}", "\"limits\":{\"cpu\":\"1e16\"}", 2, 1},
        {"\"memory\":\"128Mi\"", "\"memory\":\"99999999999999999999\"", 1, 2},
    };
    for (size_t i = 0; i < sizeof rows / sizeof rows[0]; i++) {
        parsed p, q;
        hr_kpod kp, good;
        hr_status st = pod_with(rows[i].from, rows[i].to, &kp, &p);
        if (st != HR_OK)
            fail_msg("row %zu: %s", i, p.err.msg);
        assert_int_equal(pod_with("\"uid\"", "\"uid\"", &good, &q), HR_OK);
        const hr_container *c = &kp.pod.ctr[rows[i].ctr];
        int64_t v = rows[i].field == 0 ? c->mem_req : rows[i].field == 1 ? c->cpu_lim : c->mem_lim;
        assert_int_equal(v, HR_UNBOUNDED);
        assert_true(hr_pod_unbounded_quantity(&kp.pod));
        assert_false(hr_pod_unbounded_quantity(&good.pod));
        assert_false(kp.pod.undecodable);
        /* It books exactly what the good pod books, and is not managed. */
        assert_int_equal(hr_pod_booked_cpu(&kp.pod), hr_pod_booked_cpu(&good.pod));
        assert_int_equal(hr_pod_eligibility(&kp.pod), HR_R_UNBOUNDED_QUANTITY);
        assert_string_equal(hr_reason_str(hr_pod_eligibility(&kp.pod)), "quantity-out-of-range");
        done(&p);
        done(&q);
    }
}

/* Every value of the pod, replaced by every JSON type, one at a time. */
typedef struct walk {
    size_t target, seen;
    int variant;
    bool hit;
} walk;

static void mutate(yyjson_mut_doc *doc, yyjson_mut_val *v, walk *w)
{
    if (w->hit || !v)
        return;
    if (w->seen++ == w->target) {
        w->hit = true;
        switch (w->variant) {
        case 0: yyjson_mut_set_null(v); break;
        case 1: yyjson_mut_set_bool(v, true); break;
        case 2: yyjson_mut_set_sint(v, -7); break;
        case 3: yyjson_mut_set_str(v, "1x"); break;
        case 4: yyjson_mut_set_arr(v); break;
        case 5: yyjson_mut_set_obj(v); break;
        default: yyjson_mut_set_real(v, 1e300); break;
        }
        return;
    }
    if (yyjson_mut_is_arr(v)) {
        size_t i, max;
        yyjson_mut_val *e;
        yyjson_mut_arr_foreach(v, i, max, e) mutate(doc, e, w);
    } else if (yyjson_mut_is_obj(v)) {
        size_t i, max;
        yyjson_mut_val *k, *e;
        yyjson_mut_obj_foreach(v, i, max, k, e) mutate(doc, e, w);
    }
}

static void test_pod_mutations(void **state)
{
    (void)state;
    yyjson_doc *base = yyjson_read(GOOD_POD, strlen(GOOD_POD), 0);
    assert_non_null(base);
    size_t accepted = 0, rejected = 0;
    for (size_t target = 0;; target++) {
        bool any = false;
        for (int variant = 0; variant < 7; variant++) {
            yyjson_mut_doc *m = yyjson_doc_mut_copy(base, NULL);
            walk w = {target, 0, variant, false};
            mutate(m, yyjson_mut_doc_get_root(m), &w);
            if (!w.hit) {
                yyjson_mut_doc_free(m);
                break;
            }
            any = true;
            yyjson_doc *d = yyjson_mut_doc_imut_copy(m, NULL);
            yyjson_mut_doc_free(m);
            assert_non_null(d);
            hr_arena a;
            hr_arena_init(&a, 0);
            hr_err err;
            hr_err_clear(&err);
            hr_kpod kp;
            hr_status st = hr_decode_pod(yyjson_doc_get_root(d), &a, &kp, &err);
            if (st == HR_OK) {
                accepted++;
            } else {
                rejected++;
                if (st != HR_E_INPUT || strncmp(err.msg, "pod ", 4) != 0 || strchr(err.msg, '\n'))
                    fail_msg("value %zu variant %d: status %d, \"%s\"", target, variant, st,
                             err.msg);
            }
            hr_arena_free(&a);
            yyjson_doc_free(d);
        }
        if (!any)
            break;
    }
    yyjson_doc_free(base);
    printf("mutations: %zu accepted, %zu rejected\n", accepted, rejected);
    CHECK_TRUE("some accepted", accepted > 0);
    CHECK_TRUE("some rejected", rejected > 100);
}

static void test_node(void **state)
{
    (void)state;
    parsed p;
    yyjson_val *root =
        parse(&p, "{\"kind\":\"Node\",\"metadata\":{\"name\":\"n1\",\"labels\":"
                  "{\"kubernetes.io/os\":\"windows\"}},\"status\":{\"allocatable\":"
                  "{\"cpu\":\"15890m\"},\"conditions\":[{\"type\":\"DiskPressure\","
                  "\"status\":\"True\"},{\"type\":\"PIDPressure\",\"status\":\"False\"},"
                  "{\"type\":\"Ready\",\"status\":\"True\"}]}}");
    hr_knode n;
    if (hr_decode_node(root, &p.arena, &n, &p.err))
        fail_msg("%s", p.err.msg);
    assert_string_equal(n.meta.name, "n1");
    CHECK_I64("allocatable", n.node.allocatable, 15890);
    CHECK_TRUE("known", n.node.known);
    CHECK_TRUE("disk pressure", n.node.disk_pressure);
    CHECK_TRUE("no pid pressure", !n.node.pid_pressure);
    CHECK_TRUE("ready", n.ready);
    CHECK_TRUE("windows", n.windows);
    CHECK_TRUE("has allocatable", n.has_allocatable);
    done(&p);

    root = parse(&p, "{\"kind\":\"Node\",\"metadata\":{\"name\":\"new\"}}");
    if (hr_decode_node(root, &p.arena, &n, &p.err))
        fail_msg("%s", p.err.msg);
    CHECK_I64("no status: allocatable 0", n.node.allocatable, 0);
    CHECK_TRUE("no status: flagged", !n.has_allocatable);
    CHECK_TRUE("no status: not ready", !n.ready);
    done(&p);

    root = parse(&p, "{\"kind\":\"Node\",\"metadata\":{\"name\":\"n2\"},"
                     "\"status\":{\"conditions\":{}}}");
    assert_int_equal(hr_decode_node(root, &p.arena, &n, &p.err), HR_E_INPUT);
    assert_string_equal(p.err.msg, "node n2: status.conditions: expected an "
                                   "array, got an object");
    done(&p);
}

static void test_namespace_and_limitrange(void **state)
{
    (void)state;
    parsed p;
    yyjson_val *root = parse(&p, "{\"kind\":\"Namespace\",\"metadata\":{\"name\":\"team-a\","
                                 "\"labels\":{\"kube-headroom.dev/mode\":\"managed\"}}}");
    hr_knamespace ns;
    if (hr_decode_namespace(root, &p.arena, &ns, &p.err))
        fail_msg("%s", p.err.msg);
    assert_string_equal(hr_labels_get(&ns.meta.labels, HR_LABEL_MODE), "managed");
    done(&p);

    root = parse(&p, "{\"kind\":\"LimitRange\",\"metadata\":{\"name\":\"lr\","
                     "\"namespace\":\"team-b\"},\"spec\":{\"limits\":["
                     "{\"type\":\"Container\",\"max\":{\"cpu\":\"4\"},"
                     "\"maxLimitRequestRatio\":{\"cpu\":\"2.5\"}},"
                     "{\"type\":\"Container\",\"max\":{\"cpu\":\"3\"}},"
                     "{\"type\":\"Pod\",\"max\":{\"cpu\":\"6\"}},"
                     "{\"type\":\"PersistentVolumeClaim\",\"max\":{\"storage\":\"1Gi\"}}]}}");
    hr_klimitrange lr;
    if (hr_decode_limitrange(root, &p.arena, &lr, &p.err))
        fail_msg("%s", p.err.msg);
    CHECK_I64("ctr max: tightest", lr.bounds.ctr_max, 3000);
    CHECK_I64("ratio", lr.bounds.ctr_ratio_milli, 2500);
    CHECK_I64("pod max", lr.bounds.pod_max, 6000);
    done(&p);

    root = parse(&p, "{\"kind\":\"LimitRange\",\"metadata\":{\"name\":\"lr\","
                     "\"namespace\":\"team-b\"},\"spec\":{\"limits\":[{}]}}");
    assert_int_equal(hr_decode_limitrange(root, &p.arena, &lr, &p.err), HR_E_INPUT);
    assert_string_equal(p.err.msg, "limitrange team-b/lr: spec.limits[0].type: missing");
    done(&p);
}

static void test_config(void **state)
{
    (void)state;
    parsed p;
    yyjson_val *root =
        parse(&p, "{\"kind\":\"HeadroomConfig\",\"metadata\":{\"name\":\"cluster\"}}");
    hr_kconfig kc;
    if (hr_decode_config(root, &p.arena, &kc, &p.err))
        fail_msg("%s", p.err.msg);
    hr_config def;
    hr_config_defaults(&def);
    CHECK_TRUE("present", kc.cfg.present);
    CHECK_TRUE("a present config without a spec is dry-run (design §1.2)", kc.cfg.dry_run);
    CHECK_I64("floor", kc.cfg.min_burst_floor, def.min_burst_floor);
    CHECK_I64("mult", kc.cfg.max_multiplier_milli, def.max_multiplier_milli);
    CHECK_I64("excluded ns", kc.cfg.n_excluded_ns, 1);
    CHECK_TRUE("default ns selector", kc.cfg.ns_selector.set);
    done(&p);

    /* spec.tenantLabel (design §2.9): absent is the default key; a label
     * key is kept; anything else is refused, naming the field. */
    root = parse(&p, "{\"kind\":\"HeadroomConfig\",\"metadata\":{\"name\":\"cluster\"},"
                     "\"spec\":{}}");
    if (hr_decode_config(root, &p.arena, &kc, &p.err))
        fail_msg("%s", p.err.msg);
    assert_string_equal(kc.cfg.tenant_label, "kube-headroom.dev/tenant");
    done(&p);
    root = parse(&p, "{\"kind\":\"HeadroomConfig\",\"metadata\":{\"name\":\"cluster\"},"
                     "\"spec\":{\"tenantLabel\":\"capsule.clastix.io/tenant\"}}");
    if (hr_decode_config(root, &p.arena, &kc, &p.err))
        fail_msg("%s", p.err.msg);
    assert_string_equal(kc.cfg.tenant_label, "capsule.clastix.io/tenant");
    done(&p);
    root = parse(&p, "{\"kind\":\"HeadroomConfig\",\"metadata\":{\"name\":\"cluster\"},"
                     "\"spec\":{\"tenantLabel\":\"no key/at all\"}}");
    assert_int_equal(hr_decode_config(root, &p.arena, &kc, &p.err), HR_E_INPUT);
    assert_non_null(strstr(p.err.msg, "spec.tenantLabel must be a label key"));
    done(&p);

    /* spec.maxGroupSize (design §2.10): defaulted, kept, bounded. */
    root = parse(&p, "{\"kind\":\"HeadroomConfig\",\"metadata\":{\"name\":\"cluster\"},"
                     "\"spec\":{}}");
    if (hr_decode_config(root, &p.arena, &kc, &p.err))
        fail_msg("%s", p.err.msg);
    assert_int_equal(kc.cfg.max_group_size, HR_MAX_GROUP_SIZE);
    done(&p);
    root = parse(&p, "{\"kind\":\"HeadroomConfig\",\"metadata\":{\"name\":\"cluster\"},"
                     "\"spec\":{\"maxGroupSize\":512}}");
    if (hr_decode_config(root, &p.arena, &kc, &p.err))
        fail_msg("%s", p.err.msg);
    assert_int_equal(kc.cfg.max_group_size, 512);
    done(&p);
    root = parse(&p, "{\"kind\":\"HeadroomConfig\",\"metadata\":{\"name\":\"cluster\"},"
                     "\"spec\":{\"maxGroupSize\":0}}");
    assert_int_equal(hr_decode_config(root, &p.arena, &kc, &p.err), HR_E_INPUT);
    assert_non_null(strstr(p.err.msg, "maxGroupSize"));
    done(&p);

    /* dryRun left out means dry-run, as the CRD's default says, for an
     * object the default was not applied to (a dump, a CRD without
     * defaults); only an explicit false is live (design §1.2). */
    static const struct {
        const char *spec;
        bool dry_run;
    } dry[] = {
        {"{}", true},
        {"{\"namespaceSelector\":{\"matchLabels\":{\"team\":\"a\"}}}", true},
        {"{\"dryRun\":true}", true},
        {"{\"dryRun\":false}", false},
        {"{\"dryRun\":false,\"namespaceSelector\":{}}", false},
    };
    for (size_t i = 0; i < sizeof dry / sizeof dry[0]; i++) {
        char doc[256];
        snprintf(doc, sizeof doc,
                 "{\"kind\":\"HeadroomConfig\",\"metadata\":{\"name\":\"cluster\"},"
                 "\"spec\":%s}",
                 dry[i].spec);
        root = parse(&p, doc);
        if (hr_decode_config(root, &p.arena, &kc, &p.err))
            fail_msg("%s: %s", dry[i].spec, p.err.msg);
        if (kc.cfg.dry_run != dry[i].dry_run)
            fail_msg("spec %s: dry_run %d, want %d", dry[i].spec, kc.cfg.dry_run, dry[i].dry_run);
        done(&p);
    }

    root = parse(&p, "{\"kind\":\"HeadroomConfig\",\"metadata\":{\"name\":\"cluster\"},"
                     "\"spec\":{\"policy\":\"Proportional\",\"dryRun\":true,"
                     "\"minBurstFloor\":\"500m\",\"maxMultiplier\":\"2.5\","
                     "\"quantum\":\"5m\",\"deadband\":{\"growPercent\":20,"
                     "\"shrinkPercent\":0},\"debouncePeriod\":\"1m30.5s\","
                     "\"rateLimits\":{\"perNodePatchesPerSecond\":3,\"clientQPS\":20,"
                     "\"clientBurst\":40},\"webhook\":{\"enabled\":false,"
                     "\"initialMultiplier\":\"1.5\"},"
                     "\"namespaceSelector\":{\"matchExpressions\":[{\"key\":\"team\","
                     "\"operator\":\"In\",\"values\":[\"a\",\"b\"]}]},"
                     "\"excludedNamespaces\":[],"
                     "\"excludedOwners\":[{\"kind\":\"DaemonSet\",\"apiGroup\":\"apps\"},"
                     "{\"kind\":\"Job\",\"name\":\"nightly\"}],"
                     "\"excludedNodeSelector\":{\"matchLabels\":{\"pool\":\"gpu\"}}}}");
    if (hr_decode_config(root, &p.arena, &kc, &p.err))
        fail_msg("%s", p.err.msg);
    const hr_config *c = &kc.cfg;
    CHECK_TRUE("dry run", c->dry_run);
    CHECK_I64("floor", c->min_burst_floor, 500);
    CHECK_I64("mult", c->max_multiplier_milli, 2500);
    CHECK_I64("quantum", c->quantum, 5);
    CHECK_I64("grow", c->grow_percent, 20);
    CHECK_I64("shrink", c->shrink_percent, 0);
    CHECK_I64("debounce", c->debounce_ms, 90500);
    CHECK_I64("pps", c->per_node_pps, 3);
    CHECK_I64("qps", c->client_qps, 20);
    CHECK_I64("burst", c->client_burst, 40);
    CHECK_TRUE("webhook off", !c->webhook_enabled);
    CHECK_I64("initial", c->initial_multiplier_milli, 1500);
    CHECK_I64("policy", c->policy, HR_POLICY_PROPORTIONAL);
    CHECK_I64("no excluded ns", c->n_excluded_ns, 0);
    CHECK_I64("owners", c->n_excluded_owners, 2);
    assert_string_equal(c->excluded_owners[0].api_group, "apps");
    assert_null(c->excluded_owners[1].api_group);
    assert_string_equal(c->excluded_owners[1].name, "nightly");
    const char *kv_a[] = {"team", "a"}, *kv_c[] = {"team", "c"};
    hr_labels la = {kv_a, 1}, lc = {kv_c, 1};
    CHECK_TRUE("selector a", hr_selector_matches(&c->ns_selector, &la));
    CHECK_TRUE("selector c", !hr_selector_matches(&c->ns_selector, &lc));
    const char *kv_gpu[] = {"pool", "gpu"};
    hr_labels lg = {kv_gpu, 1};
    CHECK_TRUE("node selector", hr_selector_matches(&c->excluded_nodes, &lg));
    done(&p);

    /* The two policies of the CRD's enum; absent is Proportional. */
    struct {
        const char *spec;
        hr_policy want;
    } pols[] = {
        {"{}", HR_POLICY_PROPORTIONAL},
        {"{\"policy\":\"Proportional\"}", HR_POLICY_PROPORTIONAL},
        {"{\"policy\":\"TenantFair\"}", HR_POLICY_TENANT_FAIR},
    };
    for (size_t i = 0; i < sizeof pols / sizeof pols[0]; i++) {
        char doc[256];
        snprintf(doc, sizeof doc,
                 "{\"kind\":\"HeadroomConfig\",\"metadata\":{\"name\":\"cluster\"},"
                 "\"spec\":%s}",
                 pols[i].spec);
        root = parse(&p, doc);
        if (hr_decode_config(root, &p.arena, &kc, &p.err))
            fail_msg("%s: %s", pols[i].spec, p.err.msg);
        if (kc.cfg.policy != pols[i].want)
            fail_msg("spec %s: policy %d, want %d", pols[i].spec, kc.cfg.policy, pols[i].want);
        done(&p);
    }

    struct {
        const char *spec, *want;
    } bad[] = {
        {"{\"policy\":\"tenantfair\"}",
         "headroomconfig cluster: spec.policy: "
         "unknown policy \"tenantfair\" (Proportional or TenantFair)"},
        {"{\"policy\":\"Greedy\"}", "headroomconfig cluster: spec.policy: "
                                    "unknown policy \"Greedy\" (Proportional or TenantFair)"},
        {"{\"deadband\":{\"growPercent\":101}}",
         "headroomconfig cluster: "
         "spec.deadband.growPercent: 101 is out of range [0, 100]"},
        {"{\"deadband\":{\"growPercent\":\"10\"}}",
         "headroomconfig cluster: "
         "spec.deadband.growPercent: expected an integer, got a string"},
        {"{\"rateLimits\":{\"clientQPS\":0}}",
         "headroomconfig cluster: "
         "spec.rateLimits.clientQPS: 0 is out of range [1, 1000000]"},
        {"{\"debouncePeriod\":\"-2s\"}",
         "headroomconfig cluster: "
         "spec.debouncePeriod: not a duration \"-2s\" (e.g. \"2s\", "
         "\"500ms\")"},
        {"{\"namespaceSelector\":{\"matchExpressions\":[{\"key\":\"a\","
         "\"operator\":\"Near\"}]}}",
         "headroomconfig cluster: "
         "spec.namespaceSelector.matchExpressions[0].operator: unknown "
         "operator \"Near\" (want In, NotIn, Exists or DoesNotExist)"},
        {"{\"excludedOwners\":[{\"name\":\"x\"}]}", "headroomconfig cluster: "
                                                    "spec.excludedOwners[0].kind: missing"},
        {"{\"minBurstFloor\":\"lots\"}", "headroomconfig cluster: "
                                         "spec.minBurstFloor: not a number \"lots\""},
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        char json[512];
        snprintf(json, sizeof json,
                 "{\"kind\":\"HeadroomConfig\",\"metadata\":"
                 "{\"name\":\"cluster\"},\"spec\":%s}",
                 bad[i].spec);
        root = parse(&p, json);
        assert_int_equal(hr_decode_config(root, &p.arena, &kc, &p.err), HR_E_INPUT);
        assert_string_equal(p.err.msg, bad[i].want);
        done(&p);
    }
}

static void test_selector(void **state)
{
    (void)state;
    parsed p;
    hr_selector s;
    const char *kv[] = {"env", "prod", "tier", "web"};
    hr_labels l = {kv, 2};
    yyjson_val *root = parse(&p, "{}");
    if (hr_decode_selector(root, &p.arena, "sel", &s, &p.err))
        fail_msg("%s", p.err.msg);
    CHECK_TRUE("{} selects everything", hr_selector_matches(&s, &l));
    done(&p);
    root = parse(&p, "null");
    if (hr_decode_selector(root, &p.arena, "sel", &s, &p.err))
        fail_msg("%s", p.err.msg);
    CHECK_TRUE("null selects nothing", !hr_selector_matches(&s, &l));
    done(&p);
    root = parse(&p, "{\"matchLabels\":{\"env\":\"prod\"},\"matchExpressions\":"
                     "[{\"key\":\"tier\",\"operator\":\"NotIn\",\"values\":"
                     "[\"db\"]},{\"key\":\"gpu\",\"operator\":"
                     "\"DoesNotExist\"}]}");
    if (hr_decode_selector(root, &p.arena, "sel", &s, &p.err))
        fail_msg("%s", p.err.msg);
    CHECK_I64("requirements", s.n, 3);
    CHECK_TRUE("matches", hr_selector_matches(&s, &l));
    done(&p);
    root = parse(&p, "{\"matchExpressions\":[{\"key\":\"a\",\"operator\":"
                     "\"In\",\"values\":[]}]}");
    assert_int_equal(hr_decode_selector(root, &p.arena, "sel", &s, &p.err), HR_E_INPUT);
    assert_string_equal(p.err.msg, "selector sel: matchExpressions[0].values: "
                                   "must not be empty for operator In");
    done(&p);
}

static void test_duration(void **state)
{
    (void)state;
    struct {
        const char *s;
        bool ok;
        int64_t ms;
    } rows[] = {
        {"2s", true, 2000},
        {"0", true, 0},
        {"500ms", true, 500},
        {"1m30s", true, 90000},
        {"1.5h", true, 5400000},
        {"1500us", true, 1},
        {"2.0005s", true, 2000},
        {"", false, 0},
        {"2", false, 0},
        {"s", false, 0},
        {"-1s", false, 0},
        {"1d", false, 0},
        {"99999999999999999999h", false, 0},
        {"3000000h", false, 0},
        {"1.s", true, 1000},
        {".5s", true, 500},
    };
    for (size_t i = 0; i < sizeof rows / sizeof rows[0]; i++) {
        int64_t ms = -1;
        bool ok = hr_parse_duration_ms(rows[i].s, strlen(rows[i].s), &ms);
        if (ok != rows[i].ok || (ok && ms != rows[i].ms))
            fail_msg("\"%s\": ok %d ms %lld", rows[i].s, ok, (long long)ms);
    }
}

/* The never-failing readings (decode/common.c, decode/pod.c): what the
 * watch sink used to read from the JSON itself. */
static void test_watch_readings(void **state)
{
    (void)state;
    parsed p;
    const char *ns = NULL, *name = NULL;
    yyjson_val *o = parse(&p, "{\"metadata\":{\"name\":\"web-1\",\"namespace\":\"team-a\","
                              "\"generation\":7,\"annotations\":{\"" HR_ANN_STATUS "\":\"x\"}},"
                              "\"spec\":{\"containers\":7},"
                              "\"status\":{\"conditions\":[{\"type\":\"PodResizePending\","
                              "\"reason\":\"Infeasible\"},{\"type\":\"PodResizeInProgress\"},7]}}");
    assert_true(hr_decode_key(o, &p.arena, &ns, &name));
    assert_string_equal(ns, "team-a");
    assert_string_equal(name, "web-1");
    assert_int_equal(hr_decode_generation(o, -1), 7);
    hr_kpod_status st;
    hr_decode_pod_status(o, &st);
    assert_int_equal(st.resize, HR_RS_INFEASIBLE);
    assert_true(st.resizing);
    assert_int_equal(st.status_note_len, 1);
    assert_memory_equal(st.status_note, "x", 1);
    done(&p);

    o = parse(&p, "{\"metadata\":{\"name\":\"cluster\",\"generation\":\"7\"},"
                  "\"status\":{\"conditions\":[{\"type\":\"PodResizePending\","
                  "\"reason\":\"Deferred\"}]}}");
    assert_true(hr_decode_key(o, &p.arena, &ns, &name));
    assert_string_equal(ns, "");
    assert_string_equal(name, "cluster");
    assert_int_equal(hr_decode_generation(o, -1), -1); /* not an integer */
    hr_decode_pod_status(o, &st);
    assert_int_equal(st.resize, HR_RS_DEFERRED);
    assert_false(st.resizing);
    assert_null(st.status_note);
    done(&p);

    const char *bad[] = {"{}", "[]", "{\"metadata\":{\"name\":\"\"}}",
                         "{\"metadata\":{\"name\":7}}", "{\"metadata\":[]}"};
    for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
        o = parse(&p, bad[i]);
        assert_false(hr_decode_key(o, &p.arena, &ns, &name));
        assert_int_equal(hr_decode_generation(o, 0), 0);
        hr_decode_pod_status(o, &st);
        assert_int_equal(st.resize, HR_RS_NONE);
        assert_false(st.resizing);
        assert_null(st.status_note);
        done(&p);
    }
}

static void test_arena(void **state)
{
    (void)state;
    hr_arena a;
    hr_arena_init(&a, 256);
    char *small = hr_arena_strdup(&a, "hello");
    char *big = hr_arena_alloc(&a, 10000);      /* its own chunk */
    char *after = hr_arena_strdup(&a, "world"); /* still in the small chunk */
    assert_non_null(small);
    assert_non_null(big);
    assert_non_null(after);
    memset(big, 'x', 10000);
    assert_string_equal(small, "hello");
    assert_string_equal(after, "world");
    assert_null(hr_arena_calloc(&a, SIZE_MAX / 2, 4));
    hr_arena_free(&a);
    hr_arena_set_limit(&a, 4096);
    assert_non_null(hr_arena_alloc(&a, 1000));
    assert_null(hr_arena_alloc(&a, 8192));
    hr_arena_free(&a);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_pod_good),
        cmocka_unit_test(test_pod_group),
        cmocka_unit_test(test_pod_quantity_forms),
        cmocka_unit_test(test_pod_flags),
        cmocka_unit_test(test_pod_deleting_and_pod_level),
        cmocka_unit_test(test_pod_created),
        cmocka_unit_test(test_pod_errors),
        cmocka_unit_test(test_pod_soft_quantities),
        cmocka_unit_test(test_pod_mutations),
        cmocka_unit_test(test_node),
        cmocka_unit_test(test_namespace_and_limitrange),
        cmocka_unit_test(test_config),
        cmocka_unit_test(test_selector),
        cmocka_unit_test(test_duration),
        cmocka_unit_test(test_watch_readings),
        cmocka_unit_test(test_arena),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
