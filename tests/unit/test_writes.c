/*
 * test_writes.c — the documents the controller sends: the resize apply body
 * names only our containers and only limits.cpu; the status annotation has
 * design §9.1's shape (the node's and the pod's figures, the cap, the held
 * reason, at most 32 containers); the event text reads as the design
 * shows; two annotations differing only in computedAt compare equal.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <cmocka.h>
#include <yyjson.h>

#include "controller/writes.h"
#include "kube/write/status_note.h"

static void apply_body_names_only_our_fields(void **state)
{
    (void)state;
    hr_container c[3] = {
        {200, HR_NONE, 64, 128, HR_CTR_SIDECAR, false}, /* sidecar, managed */
        {HR_NONE, HR_NONE, 64, 128, HR_CTR_APP, false}, /* no request: untouched */
        {800, 1000, 64, 128, HR_CTR_APP, false},
    };
    hr_pod p = hr_pod_init();
    p.ctr = c;
    p.n_ctr = 3;
    const char *names[] = {"proxy", "logger", "app\"x"};
    int64_t lim[] = {600, HR_NONE, 2400};
    hr_buf b;
    hr_buf_init(&b, 0);
    hr_resize_apply_body(&b, "team-a", "web-0", &p, names, lim);
    assert_false(hr_buf_failed(&b));
    assert_string_equal(
        hr_buf_str(&b),
        "{\"apiVersion\":\"v1\",\"kind\":\"Pod\",\"metadata\":{\"namespace\":\"team-a\","
        "\"name\":\"web-0\"},\"spec\":{\"containers\":[{\"name\":\"app\\\"x\",\"resources\":"
        "{\"limits\":{\"cpu\":\"2400m\"}}}],\"initContainers\":[{\"name\":\"proxy\","
        "\"resources\":{\"limits\":{\"cpu\":\"600m\"}}}]}}");
    /* and it is valid JSON */
    yyjson_doc *d = yyjson_read(hr_buf_str(&b), b.len, 0);
    assert_non_null(d);
    yyjson_doc_free(d);

    /* no sidecar written: no initContainers key at all */
    int64_t lim2[] = {HR_NONE, HR_NONE, 3000};
    hr_buf_reset(&b);
    hr_resize_apply_body(&b, "ns", "p", &p, names, lim2);
    assert_null(strstr(hr_buf_str(&b), "initContainers"));
    assert_non_null(strstr(hr_buf_str(&b), "\"cpu\":\"3\""));
    hr_buf_free(&b);
}

/* Two single-container managed pods on a 16-core node, planned by the
 * core: 1000m ("app", limit 2000m) and 3000m. S = 12000, M = 4000, N = 2:
 * pod 0's floor 1000m, burst 3000m, target 4000m, no cap binds. */
typedef struct two_pods {
    hr_config cfg;
    hr_node node;
    hr_container ctr[2];
    hr_pod pods[2];
    hr_pod_plan plans[2];
    int64_t limits[2];
    hr_node_plan np;
} two_pods;

static void plan_two(two_pods *t)
{
    t->np = hr_plan_node(&t->cfg, &t->node, t->pods, 2, t->plans, t->limits);
}

static void two_pods_init(two_pods *t)
{
    *t = (two_pods){0};
    hr_config_defaults(&t->cfg);
    t->cfg.present = true;
    t->cfg.dry_run = false;
    t->node = (hr_node){16000, true, false, false, false};
    t->ctr[0] = (hr_container){1000, 2000, 100, HR_NONE, HR_CTR_APP, false};
    t->ctr[1] = (hr_container){3000, HR_NONE, 100, HR_NONE, HR_CTR_APP, false};
    for (int i = 0; i < 2; i++) {
        t->pods[i] = hr_pod_init();
        t->pods[i].ctr = &t->ctr[i];
        t->pods[i].n_ctr = 1;
    }
    plan_two(t);
}

static const char *const app_name[] = {"app"};

static hr_status_in pod0_in(const two_pods *t, int64_t unix_s)
{
    return (hr_status_in){.cfg = &t->cfg,
                          .np = &t->np,
                          .pod = &t->pods[0],
                          .pp = &t->plans[0],
                          .ctr_names = app_name,
                          .limits = &t->limits[t->plans[0].ctr_off],
                          .unix_s = unix_s};
}

static void status_annotation_shape(void **state)
{
    (void)state;
    two_pods t;
    two_pods_init(&t);
    hr_status_in in = pod0_in(&t, 1795000000);
    hr_buf b;
    hr_buf_init(&b, 0);
    hr_status_annotation(&b, &in);
    assert_string_equal(
        hr_buf_str(&b),
        "{\"factor\":\"4.00\",\"slack\":\"12000m\",\"managedRequests\":\"4000m\",\"nodePods\":2,"
        "\"allocatable\":\"16000m\",\"booked\":\"4000m\",\"managedPods\":2,"
        "\"request\":\"1000m\",\"floor\":\"1000m\",\"burst\":\"3000m\","
        "\"targetLimit\":\"4000m\",\"limits\":{\"app\":\"4000m\"},\"cap\":\"none\","
        "\"caps\":{\"multiplier\":\"10000m\",\"allocatable\":\"16000m\"},"
        "\"computedAt\":\"2026-11-18T11:06:40Z\",\"policy\":\"proportional-v1\",\"dryRun\":false}");

    hr_buf later;
    hr_buf_init(&later, 0);
    in.unix_s = 1795000999;
    hr_status_annotation(&later, &in);
    assert_true(hr_status_same(hr_buf_str(&b), hr_buf_str(&later)));
    assert_int_equal(hr_status_note_hash(hr_buf_str(&b), b.len),
                     hr_status_note_hash(hr_buf_str(&later), later.len));
    /* A held write says its gate: a new fingerprint. */
    in.reason = "pressure";
    hr_buf_reset(&later);
    hr_status_annotation(&later, &in);
    assert_non_null(strstr(hr_buf_str(&later),
                           "\"allocatable\":\"16000m\"},\"reason\":\"pressure\",\"computedAt\""));
    assert_false(hr_status_same(hr_buf_str(&b), hr_buf_str(&later)));
    assert_int_not_equal(hr_status_note_hash(hr_buf_str(&b), b.len),
                         hr_status_note_hash(hr_buf_str(&later), later.len));
    /* booking-unknown: the target figures are left out, the rest stays. */
    in.reason = "booking-unknown";
    in.target_unknown = true;
    hr_buf_reset(&later);
    hr_status_annotation(&later, &in);
    assert_string_equal(
        hr_buf_str(&later),
        "{\"factor\":\"4.00\",\"slack\":\"12000m\",\"managedRequests\":\"4000m\",\"nodePods\":2,"
        "\"allocatable\":\"16000m\",\"booked\":\"4000m\",\"managedPods\":2,\"request\":\"1000m\","
        "\"caps\":{\"multiplier\":\"10000m\",\"allocatable\":\"16000m\"},"
        "\"reason\":\"booking-unknown\",\"computedAt\":\"2026-11-18T11:23:19Z\","
        "\"policy\":\"proportional-v1\",\"dryRun\":false}");
    in = pod0_in(&t, 1795000000);
    in.dry_run = true;
    hr_buf_reset(&later);
    hr_status_annotation(&later, &in);
    assert_false(hr_status_same(hr_buf_str(&b), hr_buf_str(&later)));
    assert_false(hr_status_same(hr_buf_str(&b), NULL));
    /* A neighbour's figure moves: a new fingerprint. */
    t.ctr[1].cpu_req = 2990;
    plan_two(&t);
    in = pod0_in(&t, 1795000000);
    hr_buf_reset(&later);
    hr_status_annotation(&later, &in);
    assert_int_not_equal(hr_status_note_hash(hr_buf_str(&b), b.len),
                         hr_status_note_hash(hr_buf_str(&later), later.len));
    assert_int_equal(hr_status_note_hash(NULL, 0), 0);
    assert_int_not_equal(hr_status_note_hash("", 0), 0);

    hr_buf patch;
    hr_buf_init(&patch, 0);
    hr_status_patch(&patch, hr_buf_str(&b));
    yyjson_doc *d = yyjson_read(hr_buf_str(&patch), patch.len, 0);
    assert_non_null(d);
    yyjson_val *v =
        yyjson_ptr_get(yyjson_doc_get_root(d), "/metadata/annotations/kube-headroom.dev~1status");
    assert_non_null(v);
    assert_string_equal(yyjson_get_str(v), hr_buf_str(&b));
    yyjson_doc_free(d);
    hr_buf_free(&b);
    hr_buf_free(&later);
    hr_buf_free(&patch);
}

/* The mark: the note's targetLimit and dryRun, as written, and nothing from
 * a figure that is not ours. */
static void status_mark_reads_target_and_dry(void **state)
{
    (void)state;
    two_pods t;
    two_pods_init(&t);
    hr_status_in in = pod0_in(&t, 1795000000);
    hr_buf b;
    hr_buf_init(&b, 0);
    hr_status_annotation(&b, &in);
    uint32_t m = hr_status_note_mark(hr_buf_str(&b), b.len);
    int64_t v = 0;
    assert_true(hr_status_mark_target(m, &v));
    assert_int_equal(v, 4000);
    assert_false(hr_status_mark_dry(m));
    in.dry_run = true;
    hr_buf_reset(&b);
    hr_status_annotation(&b, &in);
    m = hr_status_note_mark(hr_buf_str(&b), b.len);
    assert_true(hr_status_mark_dry(m));
    assert_true(hr_status_mark_target(m, &v));
    assert_int_equal(v, 4000);
    in.target_unknown = true; /* booking-unknown: no target */
    hr_buf_reset(&b);
    hr_status_annotation(&b, &in);
    m = hr_status_note_mark(hr_buf_str(&b), b.len);
    assert_true(hr_status_mark_dry(m));
    assert_false(hr_status_mark_target(m, &v));
    hr_buf_free(&b);

    static const struct {
        const char *text;
        bool has;
        int64_t milli;
    } cases[] = {
        {"{\"targetLimit\":\"0m\"}", true, 0},
        {"{\"targetLimit\":\"2147483645m\"}", true, 2147483645},
        {"{\"targetLimit\":\"99999999999999999999999m\"}", true, 2147483646}, /* saturated */
        {"{\"targetLimit\":\"4\"}", false, 0},
        {"{\"targetLimit\":\"m\"}", false, 0},
        {"{\"targetLimit\":\"-4m\"}", false, 0},
        {"{\"targetLimit\":\"4m", false, 0}, /* cut short */
        {"{\"targetLimit\":4000}", false, 0},
        {"", false, 0},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        m = hr_status_note_mark(cases[i].text, strlen(cases[i].text));
        assert_int_equal(hr_status_mark_target(m, &v), cases[i].has);
        if (cases[i].has)
            assert_int_equal(v, cases[i].milli);
        assert_false(hr_status_mark_dry(m));
    }
    /* Bounded by its length: a target past it is not read. */
    static const char cut[] = "{\"targetLimit\":\"4000m\"}";
    assert_false(hr_status_mark_target(hr_status_note_mark(cut, 20), &v));
    assert_int_equal(hr_status_note_mark(NULL, 0), 0);
}

/* "cap": the bound r + burst meets; when every bound is below r, the least
 * of them; both LimitRange bounds read "limitrange", once in "caps". */
static void status_annotation_caps(void **state)
{
    (void)state;
    two_pods t;
    two_pods_init(&t);
    hr_buf b;
    hr_buf_init(&b, 0);

    t.pods[0].max_cpu = 3000; /* below r + burst = 4000 */
    plan_two(&t);
    hr_status_in in = pod0_in(&t, 1795000000);
    hr_status_annotation(&b, &in);
    assert_non_null(strstr(hr_buf_str(&b),
                           "\"targetLimit\":\"3000m\",\"limits\":{\"app\":\"3000m\"},"
                           "\"cap\":\"max-cpu\",\"capLimit\":\"3000m\",\"caps\":{\"multiplier\":"
                           "\"10000m\",\"allocatable\":\"16000m\",\"max-cpu\":\"3000m\"}"));

    t.pods[0].max_cpu = 500; /* below the request: the request wins */
    plan_two(&t);
    in = pod0_in(&t, 1795000000);
    hr_buf_reset(&b);
    hr_status_annotation(&b, &in);
    assert_non_null(strstr(hr_buf_str(&b), "\"targetLimit\":\"1000m\""));
    assert_non_null(strstr(hr_buf_str(&b), "\"cap\":\"max-cpu\",\"capLimit\":\"500m\""));

    t.pods[0].max_cpu = HR_NONE;
    t.pods[0].limits =
        (hr_limit_bounds){.ctr_max = 2500, .ctr_ratio_milli = HR_NONE, .pod_max = 2000};
    plan_two(&t);
    in = pod0_in(&t, 1795000000);
    hr_buf_reset(&b);
    hr_status_annotation(&b, &in);
    assert_non_null(strstr(hr_buf_str(&b), "\"cap\":\"limitrange\",\"capLimit\":\"2000m\","
                                           "\"caps\":{\"multiplier\":\"10000m\",\"allocatable\":"
                                           "\"16000m\",\"limitrange\":\"2000m\"}"));
    hr_buf_free(&b);
}

/* 33 managed containers with the longest names a container may have: 32
 * are listed, "limitsOmitted" counts the rest, and the value stays valid
 * JSON under 4 KiB. */
static void status_annotation_bounded(void **state)
{
    (void)state;
    enum { N = 33 };
    static hr_container ctr[N];
    static char names[N][64];
    static const char *np_names[N];
    hr_pod p = hr_pod_init();
    for (int i = 0; i < N; i++) {
        ctr[i] = (hr_container){100, HR_NONE, 64, HR_NONE, HR_CTR_APP, false};
        snprintf(names[i], sizeof names[i], "c%02d-%s", i,
                 "abcdefghijklmnopqrstuvwxyzabcdefghijklmnopqrstuvwxyz0123456");
        np_names[i] = names[i];
    }
    p.ctr = ctr;
    p.n_ctr = N;
    hr_config c;
    hr_config_defaults(&c);
    hr_node node = {999999000, true, false, false, false};
    hr_pod_plan pp;
    int64_t limits[N];
    hr_node_plan np = hr_plan_node(&c, &node, &p, 1, &pp, limits);
    hr_status_in in = {.cfg = &c,
                       .np = &np,
                       .pod = &p,
                       .pp = &pp,
                       .ctr_names = np_names,
                       .limits = limits,
                       .reason = "pressure",
                       .dry_run = true,
                       .unix_s = 1795000000};
    hr_buf b;
    hr_buf_init(&b, 0);
    hr_status_annotation(&b, &in);
    assert_false(hr_buf_failed(&b));
    assert_true(strlen(names[0]) == 63);
    assert_true(b.len <= 4096);
    assert_non_null(strstr(hr_buf_str(&b), "},\"limitsOmitted\":1,\"cap\":"));
    yyjson_doc *d = yyjson_read(hr_buf_str(&b), b.len, 0);
    assert_non_null(d);
    yyjson_val *root = yyjson_doc_get_root(d);
    assert_int_equal(yyjson_obj_size(yyjson_obj_get(root, "limits")), HR_STATUS_MAX_LIMITS);
    assert_null(yyjson_obj_get(yyjson_obj_get(root, "limits"), names[32]));
    assert_string_equal(yyjson_get_str(yyjson_obj_get(root, "reason")), "pressure");
    yyjson_doc_free(d);
    hr_buf_free(&b);
}

static void event_text(void **state)
{
    (void)state;
    hr_node_plan np = {.allocatable = 16000, .slack = 8000, .managed = 8000};
    hr_buf b;
    hr_buf_init(&b, 0);
    hr_event_message(&b, 1500, 3000, &np);
    assert_string_equal(hr_buf_str(&b), "1500m \xe2\x86\x92 3000m (factor 2.00, slack 8/16 cores)");
    hr_buf_reset(&b);
    np.slack = -500;
    hr_event_message(&b, 0, 250, &np);
    assert_string_equal(hr_buf_str(&b), "none \xe2\x86\x92 250m (factor 1.00, slack 0/16 cores)");
    hr_buf_free(&b);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(apply_body_names_only_our_fields),
        cmocka_unit_test(status_annotation_shape),
        cmocka_unit_test(status_mark_reads_target_and_dry),
        cmocka_unit_test(status_annotation_caps),
        cmocka_unit_test(status_annotation_bounded),
        cmocka_unit_test(event_text),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
