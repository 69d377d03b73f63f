/*
 * test_dump.c — the dump reader and the planner (src/plan) on good, bad
 * and very large input.
 *
 * The large cases are generated at test time in a temporary directory: a
 * realistic 100 MB List (must plan correctly, within the memory limits) and
 * a 100 MB adversarial one whose parse tree would be 8x its size (must stop
 * at the parser memory limit with a clear error, not allocate it).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <yyjson.h>

#include "hr_check.h"

#include "plan/planner.h"
#include "plan/render.h"
#include "plan/snapshot.h"

/* Parse a string (copied: the reader parses in place, with padding). */
static hr_status load(hr_snapshot *s, const char *json, hr_err *err)
{
    size_t n = strlen(json);
    char *buf = calloc(1, n + YYJSON_PADDING_SIZE);
    assert_non_null(buf);
    memcpy(buf, json, n);
    hr_err_clear(err);
    hr_status st = hr_snapshot_parse(s, buf, n, NULL, "test.json", err);
    free(buf);
    return st;
}

static void expect_error(const char *json, const char *want)
{
    hr_snapshot s;
    hr_err err;
    hr_status st = load(&s, json, &err);
    if (st == HR_OK)
        fail_msg("accepted: %s", json);
    if (strcmp(err.msg, want) != 0)
        fail_msg("got  \"%s\"\nwant \"%s\"", err.msg, want);
    hr_snapshot_free(&s);
}

static void test_bad_documents(void **state)
{
    (void)state;
    expect_error("", "test.json: empty input, expected a Kubernetes List in "
                     "JSON");
    expect_error("nope", "test.json: not valid JSON at line 1, column 1 "
                         "(byte 0): invalid literal, expected a valid literal such "
                         "as 'null'");
    expect_error("{\"kind\":\"List\",\"items\":[{\"kind\":\"Pod\"",
                 "test.json: not valid JSON at line 1, column 38 (byte 37): "
                 "unexpected end of data");
    expect_error("[]", "test.json: expected a Kubernetes List (an object with "
                       "\"items\"), got an array");
    expect_error("{\"kind\":\"Deployment\"}", "test.json: expected a "
                                              "Kubernetes List (kind List with items), got kind "
                                              "\"Deployment\"");
    expect_error("{\"kind\":\"List\",\"items\":{}}", "test.json: items: expected an array");
    expect_error("{\"kind\":\"List\",\"items\":[\"Pod\"]}",
                 "items[0]: expected an object, got a string");
    expect_error("{\"kind\":\"List\",\"items\":[{\"metadata\":{}}]}", "items[0]: kind: missing");
    expect_error("{\"kind\":\"List\",\"items\":[{\"kind\":7}]}",
                 "items[0]: kind: expected a string");
    expect_error("{\"kind\":\"List\",\"items\":[{\"kind\":\"Node\","
                 "\"metadata\":{\"name\":\"n\"}},{\"kind\":\"Node\","
                 "\"metadata\":{\"name\":\"n\"}}]}",
                 "node n: appears twice in the dump");
    expect_error("{\"kind\":\"List\",\"items\":[{\"kind\":\"HeadroomConfig\","
                 "\"metadata\":{\"name\":\"cluster\"}},{\"kind\":"
                 "\"HeadroomConfig\",\"metadata\":{\"name\":\"cluster\"}}]}",
                 "headroomconfig cluster: appears twice in the dump");
}

static const char *SMALL =
    "{\"kind\":\"List\",\"items\":["
    "{\"kind\":\"Namespace\",\"metadata\":{\"name\":\"app\",\"labels\":"
    "{\"kube-headroom.dev/mode\":\"managed\"}}},"
    "{\"kind\":\"Node\",\"metadata\":{\"name\":\"n1\"},\"status\":"
    "{\"allocatable\":{\"cpu\":\"4\"}}},"
    "{\"kind\":\"Service\",\"metadata\":{\"name\":\"svc\"}},"
    "{\"kind\":\"HeadroomConfig\",\"metadata\":{\"name\":\"other\"},"
    "\"spec\":{\"policy\":\"Bogus\"}},"
    "{\"kind\":\"Pod\",\"metadata\":{\"name\":\"three\",\"namespace\":\"app\"},"
    "\"spec\":{\"nodeName\":\"n1\",\"containers\":["
    "{\"name\":\"a\",\"resources\":{\"requests\":{\"cpu\":\"100m\"}}},"
    "{\"name\":\"b\",\"resources\":{\"requests\":{\"cpu\":\"100m\"}}},"
    "{\"name\":\"c\",\"resources\":{\"requests\":{\"cpu\":\"100m\"}}}]},"
    "\"status\":{\"phase\":\"Pending\"}},"
    "{\"kind\":\"Pod\",\"metadata\":{\"name\":\"bare\",\"namespace\":\"app\"},"
    "\"spec\":{\"nodeName\":\"n1\",\"containers\":[{\"name\":\"x\"},"
    "{\"name\":\"y\"}]},\"status\":{\"phase\":\"Pending\"}},"
    "{\"kind\":\"Pod\",\"metadata\":{\"name\":\"lost\",\"namespace\":\"app\"},"
    "\"spec\":{\"nodeName\":\"gone\",\"containers\":[{\"name\":\"a\","
    "\"resources\":{\"requests\":{\"cpu\":\"1\"}}}]}},"
    "{\"kind\":\"Pod\",\"metadata\":{\"name\":\"wait\",\"namespace\":\"app\"},"
    "\"spec\":{\"containers\":[{\"name\":\"a\"}]}},"
    "{\"kind\":\"Pod\",\"metadata\":{\"name\":\"done\",\"namespace\":\"app\"},"
    "\"spec\":{\"nodeName\":\"n1\",\"containers\":[{\"name\":\"a\"}]},"
    "\"status\":{\"phase\":\"Succeeded\"}}]}";

static void test_snapshot_and_plan(void **state)
{
    (void)state;
    hr_snapshot s;
    hr_err err;
    if (load(&s, SMALL, &err))
        fail_msg("%s", err.msg);
    CHECK_TRUE("no config: defaults", !s.cfg.present);
    CHECK_TRUE("no config: dry-run", s.cfg.dry_run);
    CHECK_I64("ignored (Service, foreign HeadroomConfig)", s.n_ignored, 2);
    CHECK_I64("pods", s.n_pods, 5);
    assert_string_equal(s.pods[0].meta.name, "bare"); /* sorted */
    hr_arena a;
    hr_arena_init(&a, 0);
    hr_plan p;
    if (hr_plan_build(&s, NULL, 0, &a, &p, &err))
        fail_msg("%s", err.msg);
    CHECK_I64("nodes incl. the unknown one", p.n_nodes, 2);
    assert_string_equal(p.nodes[0].name, "gone");
    CHECK_TRUE("gone is unknown", p.nodes[0].unknown);
    CHECK_I64("gone allocatable", p.nodes[0].np.allocatable, 0);
    CHECK_I64("n1 lists non-terminal pods", p.nodes[1].n_pods, 2);
    CHECK_I64("unbound", p.n_unbound, 1);
    CHECK_I64("terminal", p.n_terminal, 1);

    /* 1000m over three equal containers: 334 + 333 + 333, exactly. */
    hr_set_request set;
    if (hr_set_request_parse("app/three=1", &a, &set, &err))
        fail_msg("%s", err.msg);
    CHECK_I64("parsed cpu", set.cpu_milli, 1000);
    if (hr_plan_build(&s, &set, 1, &a, &p, &err))
        fail_msg("%s", err.msg);
    const hr_plan_node_out *n1 = hr_plan_find_node(&p, "n1");
    assert_non_null(n1);
    assert_string_equal(n1->src[1]->meta.name, "three");
    const hr_container *c = n1->pods[1].ctr;
    CHECK_I64("a", c[0].cpu_req, 334);
    CHECK_I64("b", c[1].cpu_req, 333);
    CHECK_I64("c", c[2].cpu_req, 333);
    CHECK_I64("request", n1->plans[1].request, 1000);
    /* The snapshot itself is untouched: plans can be rebuilt. */
    CHECK_I64("snapshot intact", s.pods[3].pod.ctr[0].cpu_req, 100);

    struct {
        const char *arg, *want;
        hr_status st;
    } bad[] = {
        {"app/nope=1", "--set-request app/nope: no such pod in the dump", HR_E_NOTFOUND},
        {"app/wait=1",
         "--set-request app/wait: the pod is not bound to a "
         "node, so it gets no limit to plan",
         HR_E_INPUT},
        {"app/done=1",
         "--set-request app/done: the pod has finished "
         "(Succeeded or Failed)",
         HR_E_INPUT},
        {"app/bare=1",
         "--set-request app/bare: no container requests CPU "
         "and 2 could take the request; which one is ambiguous",
         HR_E_INPUT},
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        if (hr_set_request_parse(bad[i].arg, &a, &set, &err))
            fail_msg("%s", err.msg);
        assert_int_equal(hr_plan_build(&s, &set, 1, &a, &p, &err), bad[i].st);
        assert_string_equal(err.msg, bad[i].want);
    }
    const char *syntax[] = {
        "app", "app/x", "/x=1", "app/=1", "app/x=", "app/x=0", "app/x=-1", "app/x=1q", "x=1/y"};
    for (size_t i = 0; i < sizeof syntax / sizeof syntax[0]; i++)
        if (hr_set_request_parse(syntax[i], &a, &set, &err) != HR_E_INPUT)
            fail_msg("accepted --set-request %s", syntax[i]);
    hr_arena_free(&a);
    hr_snapshot_free(&s);
}

/* Design §6, §15: a Pod or Node that cannot be decoded does not refuse the
 * dump. The pod is listed as undecodable on its node and holds every
 * increase there (decreases go); the node is unknown (node-unknown); a pod
 * whose nodeName cannot be read holds every node's increases. */
#define UPOD(name, node, req, lim)                                                   \
    "{\"kind\":\"Pod\",\"metadata\":{\"name\":\"" name "\",\"namespace\":\"app\"},"  \
    "\"spec\":{\"nodeName\":" node ",\"containers\":[{\"name\":\"c\",\"resources\":" \
    "{\"requests\":{\"cpu\":\"" req "\"},\"limits\":{\"cpu\":\"" lim "\"}}}]},"      \
    "\"status\":{\"phase\":\"Pending\"}}"
#define UNODE(name, cpu)                                                                   \
    "{\"kind\":\"Node\",\"metadata\":{\"name\":\"" name "\"},\"status\":{\"allocatable\":" \
    "{\"cpu\":" cpu "}}}"

static const hr_pod_plan *plan_of(const hr_plan *p, const char *node, const char *pod)
{
    const hr_plan_node_out *no = hr_plan_find_node(p, node);
    if (!no)
        fail_msg("node %s not planned", node);
    for (size_t i = 0; i < no->n_pods; i++)
        if (!strcmp(no->src[i]->meta.name, pod))
            return &no->plans[i];
    fail_msg("pod %s not on node %s", pod, node);
    return NULL;
}

/* A HeadroomConfig that writes (dryRun left out would mean dry-run, design §1.2). */
#define LIVE_CONFIG                                                     \
    "{\"kind\":\"HeadroomConfig\",\"metadata\":{\"name\":\"cluster\"}," \
    "\"spec\":{\"dryRun\":false}}"

static void test_undecodable_kept(void **state)
{
    (void)state;
    const char *dump = "{\"kind\":\"List\",\"items\":["
                       "{\"kind\":\"Namespace\",\"metadata\":{\"name\":\"app\",\"labels\":"
                       "{\"kube-headroom.dev/mode\":\"managed\"}}}," LIVE_CONFIG ","      //
        UNODE("n1", "\"4\"") "," UNODE("n2", "\"4\"") "," UNODE("n3", "\"16 cores\"") "," //
        UPOD("big", "\"n1\"", "1e16", "1e16") ","                                         //
        UPOD("grow", "\"n1\"", "100m", "200m") ","                                        //
        UPOD("shrink", "\"n1\"", "100m", "4") ","                                         //
        UPOD("other", "\"n2\"", "100m", "200m") ","                                       //
        UPOD("on3", "\"n3\"", "100m", "200m") "]}";
    hr_snapshot s;
    hr_err err;
    if (load(&s, dump, &err))
        fail_msg("refused: %s", err.msg);
    CHECK_I64("undecodable objects", s.n_bad, 2);
    assert_string_equal(s.bad[0].kind, "node");
    assert_string_equal(s.bad[0].name, "n3");
    assert_string_equal(s.bad[0].msg,
                        "node n3: status.allocatable.cpu: unknown suffix \"16 cores\"");
    assert_string_equal(s.bad[1].kind, "pod");
    assert_string_equal(s.bad[1].name, "big");
    assert_string_equal(s.bad[1].node, "n1");
    assert_string_equal(s.bad[1].msg,
                        "pod app/big: spec.containers[0].resources.requests.cpu: out of range "
                        "\"1e16\"");
    CHECK_I64("pods, the undecodable one included", s.n_pods, 5);
    CHECK_I64("nodes decoded", s.n_nodes, 2);

    hr_arena a;
    hr_arena_init(&a, 0);
    hr_plan p;
    if (hr_plan_build(&s, NULL, 0, &a, &p, &err))
        fail_msg("%s", err.msg);
    const hr_plan_node_out *n1 = hr_plan_find_node(&p, "n1");
    CHECK_TRUE("n1: booking unknown", n1->np.booking_unknown);
    CHECK_I64("n1: one undecodable pod", n1->np.n_undecodable, 1);
    const hr_pod_plan *big = plan_of(&p, "n1", "big");
    CHECK_I64("big: reason", big->reason, HR_R_UNDECODABLE);
    CHECK_TRUE("big: no write", !big->write);
    const hr_pod_plan *grow = plan_of(&p, "n1", "grow");
    CHECK_TRUE("grow: an increase is due", grow->write && grow->target > grow->current);
    CHECK_I64("grow: held", grow->gate, HR_GATE_BOOKING_UNKNOWN);
    const hr_pod_plan *shrink = plan_of(&p, "n1", "shrink");
    CHECK_TRUE("shrink: a decrease is due", shrink->write && shrink->target < shrink->current);
    CHECK_I64("shrink: decreases go", shrink->gate, HR_GATE_PASS);
    const hr_pod_plan *other = plan_of(&p, "n2", "other");
    CHECK_I64("n2 unaffected", other->gate, HR_GATE_PASS);
    CHECK_TRUE("n2 increase", other->write && other->target > other->current);
    const hr_plan_node_out *n3 = hr_plan_find_node(&p, "n3");
    CHECK_TRUE("n3 unknown", n3->unknown);
    assert_non_null(n3->undecodable);
    CHECK_I64("on3: node-unknown", plan_of(&p, "n3", "on3")->gate, HR_GATE_NODE_UNKNOWN);

    hr_buf out;
    hr_buf_init(&out, 0);
    if (hr_render_json(&p, NULL, &out, &err))
        fail_msg("%s", err.msg);
    assert_non_null(strstr(hr_buf_str(&out), "\"undecodable\": ["));
    assert_non_null(strstr(hr_buf_str(&out), "\"bookingUnknown\": true"));
    assert_non_null(strstr(hr_buf_str(&out), "\"held\": \"booking-unknown\""));
    hr_buf_reset(&out);
    if (hr_render_table(&p, NULL, &out, &err))
        fail_msg("%s", err.msg);
    assert_non_null(strstr(hr_buf_str(&out), "(held: booking-unknown)"));
    assert_non_null(strstr(hr_buf_str(&out), "undecodable"));
    hr_buf_free(&out);
    hr_arena_free(&a);
    hr_snapshot_free(&s);

    /* nodeName that cannot be read: the pod may be anywhere. */
    const char *anywhere = "{\"kind\":\"List\",\"items\":["
                           "{\"kind\":\"Namespace\",\"metadata\":{\"name\":\"app\",\"labels\":"
                           "{\"kube-headroom.dev/mode\":\"managed\"}}}," //
        UNODE("n2", "\"4\"") "," UPOD("lost", "7", "100m", "100m") ","   //
        UPOD("other", "\"n2\"", "100m", "200m") "]}";
    if (load(&s, anywhere, &err))
        fail_msg("refused: %s", err.msg);
    CHECK_I64("one undecodable", s.n_bad, 1);
    CHECK_TRUE("its node cannot be read", s.bad[0].node_unreadable);
    CHECK_I64("pods nowhere", s.n_pods_nowhere, 1);
    hr_arena_init(&a, 0);
    if (hr_plan_build(&s, NULL, 0, &a, &p, &err))
        fail_msg("%s", err.msg);
    CHECK_I64("lost is neither unbound nor on a node", p.n_unbound, 0);
    CHECK_I64("only n2 planned", p.n_nodes, 1);
    CHECK_I64("n2 held", plan_of(&p, "n2", "other")->gate, HR_GATE_BOOKING_UNKNOWN);
    hr_arena_free(&a);
    hr_snapshot_free(&s);
}

static void test_typed_list_and_single_object(void **state)
{
    (void)state;
    hr_snapshot s;
    hr_err err;
    /* The raw API's PodList leaves kind out of the items. */
    if (load(&s,
             "{\"kind\":\"PodList\",\"apiVersion\":\"v1\",\"items\":["
             "{\"metadata\":{\"name\":\"p\",\"namespace\":\"n\"},"
             "\"spec\":{\"containers\":[{\"name\":\"a\"}]}}]}",
             &err))
        fail_msg("%s", err.msg);
    CHECK_I64("PodList", s.n_pods, 1);
    hr_snapshot_free(&s);
    if (load(&s, "{\"kind\":\"Node\",\"metadata\":{\"name\":\"solo\"}}", &err))
        fail_msg("%s", err.msg);
    CHECK_I64("single Node", s.n_nodes, 1);
    hr_snapshot_free(&s);
    if (load(&s, "{\"kind\":\"List\",\"items\":[]}", &err))
        fail_msg("%s", err.msg);
    CHECK_I64("empty list", s.n_pods + s.n_nodes, 0);
    hr_arena a;
    hr_arena_init(&a, 0);
    hr_plan p;
    hr_buf b;
    hr_buf_init(&b, 0);
    if (hr_plan_build(&s, NULL, 0, &a, &p, &err) || hr_render_json(&p, NULL, &b, &err))
        fail_msg("%s", err.msg);
    /* An empty plan is still the whole document (docs/plan.schema.json). */
    const char *js = hr_buf_str(&b);
    const char *head =
        "{\n  \"apiVersion\": \"kube-headroom.dev/v1alpha1\",\n  \"kind\": \"Plan\",";
    assert_int_equal(strncmp(js, head, strlen(head)), 0);
    assert_non_null(strstr(js, "\n  \"nodes\": [],\n"));
    assert_non_null(strstr(js, "\"source\": \"defaults\""));
    assert_non_null(strstr(js, "\"pods\": 0,"));
    assert_null(strstr(js, "warnings"));
    hr_buf_free(&b);
    hr_arena_free(&a);
    hr_snapshot_free(&s);
}

/* The same objects in any order give the same bytes (design §2 determinism
 * carried through the reader and the renderers). */
static void test_order_independent(void **state)
{
    (void)state;
    static const char *items[] = {
        "{\"kind\":\"Node\",\"metadata\":{\"name\":\"b\"},\"status\":"
        "{\"allocatable\":{\"cpu\":\"4\"}}}",
        "{\"kind\":\"Node\",\"metadata\":{\"name\":\"a\"},\"status\":"
        "{\"allocatable\":{\"cpu\":\"2\"}}}",
        "{\"kind\":\"Namespace\",\"metadata\":{\"name\":\"x\",\"labels\":"
        "{\"kube-headroom.dev/mode\":\"managed\"}}}",
        "{\"kind\":\"LimitRange\",\"metadata\":{\"name\":\"l1\",\"namespace\":"
        "\"x\"},\"spec\":{\"limits\":[{\"type\":\"Container\",\"max\":"
        "{\"cpu\":\"1500m\"}}]}}",
        "{\"kind\":\"LimitRange\",\"metadata\":{\"name\":\"l0\",\"namespace\":"
        "\"x\"},\"spec\":{\"limits\":[{\"type\":\"Container\","
        "\"maxLimitRequestRatio\":{\"cpu\":\"4\"}}]}}",
        "{\"kind\":\"Pod\",\"metadata\":{\"name\":\"p2\",\"namespace\":\"x\"},"
        "\"spec\":{\"nodeName\":\"b\",\"containers\":[{\"name\":\"c\","
        "\"resources\":{\"requests\":{\"cpu\":\"300m\"}}}]}}",
        "{\"kind\":\"Pod\",\"metadata\":{\"name\":\"p1\",\"namespace\":\"x\"},"
        "\"spec\":{\"nodeName\":\"b\",\"containers\":[{\"name\":\"c\","
        "\"resources\":{\"requests\":{\"cpu\":\"700m\"}}}]}}",
        "{\"kind\":\"Pod\",\"metadata\":{\"name\":\"p0\",\"namespace\":\"x\"},"
        "\"spec\":{\"nodeName\":\"a\",\"containers\":[{\"name\":\"c\","
        "\"resources\":{\"requests\":{\"cpu\":\"100m\"}}}]}}",
    };
    const size_t n = sizeof items / sizeof items[0];
    char *first = NULL;
    /* Rotations and the reversal of the item list. */
    for (size_t order = 0; order <= n; order++) {
        char json[4096];
        size_t o = (size_t)snprintf(json, sizeof json, "{\"kind\":\"List\",\"items\":[");
        for (size_t i = 0; i < n; i++) {
            size_t k = order < n ? (i + order) % n : n - 1 - i;
            o += (size_t)snprintf(json + o, sizeof json - o, "%s%s", i ? "," : "", items[k]);
        }
        snprintf(json + o, sizeof json - o, "]}");
        hr_snapshot s;
        hr_err err;
        hr_arena a;
        hr_plan p;
        hr_buf b;
        hr_arena_init(&a, 0);
        hr_buf_init(&b, 0);
        if (load(&s, json, &err) || hr_plan_build(&s, NULL, 0, &a, &p, &err) ||
            hr_render_json(&p, NULL, &b, &err) || hr_render_table(&p, NULL, &b, &err))
            fail_msg("order %zu: %s", order, err.msg);
        if (!first)
            first = strdup(hr_buf_str(&b));
        else if (strcmp(first, hr_buf_str(&b)))
            fail_msg("order %zu differs:\n%s\nvs\n%s", order, first, hr_buf_str(&b));
        hr_buf_free(&b);
        hr_arena_free(&a);
        hr_snapshot_free(&s);
    }
    /* Node b: S = 4000 - 1000 = 3000 shared 70:30, both LimitRanges of x
     * apply: p1 700 + 2100 = 2800 -> max.cpu 1500; p2 300 + max(900, floor
     * 1000) = 1300 -> maxLimitRequestRatio 4 -> 1200. */
    CHECK_TRUE("p1 capped by max", strstr(first, "\"targetMilli\": 1500"));
    CHECK_TRUE("p2 capped by ratio", strstr(first, "\"targetMilli\": 1200"));
    free(first);
}

/* ---- 100 MB inputs ------------------------------------------------------ */

static char tmpdir[64];

static int make_tmp(void **state)
{
    (void)state;
    snprintf(tmpdir, sizeof tmpdir, "/tmp/hr-test-dump-XXXXXX");
    return mkdtemp(tmpdir) ? 0 : -1;
}

static int remove_tmp(void **state)
{
    (void)state;
    char path[128];
    snprintf(path, sizeof path, "%s/big.json", tmpdir);
    unlink(path);
    snprintf(path, sizeof path, "%s/zeros.json", tmpdir);
    unlink(path);
    return rmdir(tmpdir);
}

#define BIG_BYTES ((size_t)100 << 20)
#define BIG_NODES 500

/* ~4 KB per pod, managedFields included, like a real `kubectl -o json`. */
static size_t write_pod(FILE *f, size_t i)
{
    long start = ftell(f);
    fprintf(f,
            "{\"apiVersion\":\"v1\",\"kind\":\"Pod\",\"metadata\":{"
            "\"name\":\"web-%zu\",\"namespace\":\"team-%zu\","
            "\"uid\":\"0b7e6f0e-23a4-4c07-b5c2-%012zu\",\"resourceVersion\":\"%zu\","
            "\"labels\":{\"app\":\"web\",\"pod-template-hash\":\"7d9f8b6c4\"},"
            "\"ownerReferences\":[{\"apiVersion\":\"apps/v1\",\"kind\":"
            "\"ReplicaSet\",\"name\":\"web-7d9f8b6c4\",\"controller\":true,"
            "\"blockOwnerDeletion\":true,\"uid\":\"c0c0c0c0-0000-4000-8000-000000000001\"}],"
            "\"managedFields\":[",
            i, i % 20, i, 100000 + i);
    for (int m = 0; m < 6; m++)
        fprintf(f,
                "%s{\"apiVersion\":\"v1\",\"fieldsType\":\"FieldsV1\",\"fieldsV1\":"
                "{\"f:metadata\":{\"f:labels\":{\".\":{},\"f:app\":{}}},"
                "\"f:spec\":{\"f:containers\":{\"k:{\\\"name\\\":\\\"app\\\"}\":"
                "{\".\":{},\"f:image\":{},\"f:name\":{},\"f:resources\":{\".\":{},"
                "\"f:limits\":{\".\":{},\"f:cpu\":{}},\"f:requests\":{\".\":{},"
                "\"f:cpu\":{}}}}}}},\"manager\":\"kube-controller-manager-%d\","
                "\"operation\":\"Update\",\"time\":\"2026-11-02T09:14:07Z\"}",
                m ? "," : "", m);
    fprintf(f,
            "]},\"spec\":{\"nodeName\":\"node-%03zu\",\"containers\":[{\"name\":"
            "\"app\",\"image\":\"registry.example.com/web:4.2\",\"resources\":{"
            "\"requests\":{\"cpu\":\"%zum\",\"memory\":\"256Mi\"},\"limits\":{"
            "\"cpu\":\"1\"}}}]},\"status\":{\"phase\":\"Running\","
            "\"containerStatuses\":[{\"name\":\"app\",\"ready\":true,"
            "\"resources\":{\"requests\":{\"cpu\":\"100m\"}}}]}}",
            i % BIG_NODES, 50 + i % 7 * 10);
    return (size_t)(ftell(f) - start);
}

static void test_100mb_realistic(void **state)
{
    (void)state;
    char path[128];
    snprintf(path, sizeof path, "%s/big.json", tmpdir);
    FILE *f = fopen(path, "w");
    assert_non_null(f);
    fputs("{\"apiVersion\":\"v1\",\"kind\":\"List\",\"items\":[", f);
    for (size_t n = 0; n < BIG_NODES; n++)
        fprintf(f,
                "{\"kind\":\"Node\",\"metadata\":{\"name\":\"node-%03zu\"},"
                "\"status\":{\"allocatable\":{\"cpu\":\"64\"}}},",
                n);
    for (size_t t = 0; t < 20; t++)
        fprintf(f,
                "{\"kind\":\"Namespace\",\"metadata\":{\"name\":"
                "\"team-%zu\",\"labels\":{\"kube-headroom.dev/mode\":"
                "\"managed\"}}},",
                t);
    size_t total = 0, pods = 0;
    while (total < BIG_BYTES) {
        if (pods)
            fputc(',', f);
        total += write_pod(f, pods++) + 1;
    }
    fputs("]}", f);
    assert_int_equal(fclose(f), 0);

    hr_snapshot s;
    hr_err err;
    hr_err_clear(&err);
    if (hr_snapshot_read(&s, path, NULL, &err))
        fail_msg("%s", err.msg);
    CHECK_I64("pods", s.n_pods, pods);
    CHECK_I64("nodes", s.n_nodes, BIG_NODES);
    /* The compact form is far smaller than the JSON (no managedFields). */
    CHECK_TRUE("decoded size", hr_arena_bytes(&s.arena) < BIG_BYTES / 4);
    hr_arena a;
    hr_arena_init(&a, 0);
    hr_plan p;
    if (hr_plan_build(&s, NULL, 0, &a, &p, &err))
        fail_msg("%s", err.msg);
    CHECK_I64("planned nodes", p.n_nodes, BIG_NODES);
    size_t managed = 0;
    for (size_t i = 0; i < p.n_nodes; i++)
        managed += p.nodes[i].np.n_managed;
    CHECK_I64("every pod managed", managed, pods);
    printf("100 MB dump: %zu pods on %d nodes, decoded into %zu KiB\n", pods, BIG_NODES,
           hr_arena_bytes(&s.arena) >> 10);
    hr_arena_free(&a);
    hr_snapshot_free(&s);

    /* The same file over a smaller size limit: a clear refusal. */
    hr_dump_limits lim = {50u << 20, 0, 0};
    assert_int_equal(hr_snapshot_read(&s, path, &lim, &err), HR_E_LIMIT);
    char want[256];
    snprintf(want, sizeof want, "%s: larger than the limit of %zu bytes", path, (size_t)50 << 20);
    assert_string_equal(err.msg, want);
}

static void test_100mb_adversarial(void **state)
{
    (void)state;
    /* "[0,0,0,...]": 2 bytes of input, 16 bytes of parse tree each. */
    char path[128];
    snprintf(path, sizeof path, "%s/zeros.json", tmpdir);
    FILE *f = fopen(path, "w");
    assert_non_null(f);
    static char chunk[1 << 16];
    for (size_t i = 0; i < sizeof chunk; i += 2) {
        chunk[i] = '0';
        chunk[i + 1] = ',';
    }
    fputc('[', f);
    for (size_t w = 0; w < BIG_BYTES; w += sizeof chunk)
        fwrite(chunk, 1, sizeof chunk, f);
    fputs("0]", f);
    assert_int_equal(fclose(f), 0);
    hr_snapshot s;
    hr_err err;
    hr_status st = hr_snapshot_read(&s, path, NULL, &err);
    assert_int_equal(st, HR_E_NOMEM);
    CHECK_TRUE("names the limit", strstr(err.msg, "parsing needs more than"));
    printf("%s\n", err.msg);
    hr_snapshot_free(&s);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_bad_documents),
        cmocka_unit_test(test_snapshot_and_plan),
        cmocka_unit_test(test_undecodable_kept),
        cmocka_unit_test(test_typed_list_and_single_object),
        cmocka_unit_test(test_order_independent),
        cmocka_unit_test(test_100mb_realistic),
        cmocka_unit_test(test_100mb_adversarial),
    };
    return cmocka_run_group_tests(tests, make_tmp, remove_tmp);
}
