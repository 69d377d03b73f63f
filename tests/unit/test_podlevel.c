/*
 * test_podlevel.c — pods with pod-level resources (design §2.13): who is
 * managed (eligibility, with and without a node and API server that resize
 * pod-level resources), how the policy plans them (one member, the
 * pod-level request its weight, the pod-level limit its target; containers
 * never written), the resize body, the status annotation, the webhook's
 * pod-level birth limit, the decoders and the version rule.
 */
#include <inttypes.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <cmocka.h>
#include <yyjson.h>

#include "cache/cache.h"
#include "controller/writes.h"
#include "core/admission.h"
#include "core/policy.h"
#include "hr_check.h"
#include "kube/decode/decode.h"
#include "kube/kversion.h"
#include "webhook/admission.h"

#define GiB (INT64_C(1) << 30)

static hr_config cfg_live(void)
{
    hr_config c;
    hr_config_defaults(&c);
    c.present = true;
    c.dry_run = false;
    return c;
}

/* A pod-level pod: pod-level request req and limit lim, one app container
 * with no resources (*ctr), Running on a node that resizes pod-level
 * resources. */
static hr_pod pod_level(hr_container *ctr, int64_t req, int64_t lim)
{
    *ctr = (hr_container){HR_NONE, HR_NONE, HR_NONE, HR_NONE, HR_CTR_APP, false};
    hr_pod p = hr_pod_init();
    p.ctr = ctr;
    p.n_ctr = 1;
    p.pod_resources = true;
    p.pod_cpu_req = req;
    p.pod_cpu_lim = lim;
    p.pod_resize = true;
    return p;
}

static void eligibility(void **state)
{
    (void)state;
    hr_container c;
    hr_pod p = pod_level(&c, 500, 1000);
    CHECK_TRUE("managed where the resize is accepted", hr_pod_eligibility(&p) == HR_MANAGED);
    CHECK_TRUE("a pod-level pod", hr_pod_level(&p));
    CHECK_I64("its request is the pod-level one", hr_pod_managed_cpu(&p), 500);
    CHECK_I64("its current limit the pod-level one", hr_pod_current_limit(&p), 1000);
    CHECK_TRUE("Burstable from the pod level", hr_pod_qos(&p, NULL) == HR_QOS_BURSTABLE);

    p.pod_resize = false;
    CHECK_TRUE("excluded where it is not", hr_pod_eligibility(&p) == HR_R_POD_RESOURCES &&
                                               hr_pod_birth_eligibility(&p) == HR_R_POD_RESOURCES);
    p.pod_resize = true;

    /* No pod-level CPU: nothing to manage at pod level, excluded. */
    hr_pod m = p;
    m.pod_cpu_req = HR_NONE;
    m.pod_cpu_lim = HR_NONE;
    c.cpu_req = 200;
    CHECK_TRUE("pod-level without CPU stays excluded",
               hr_pod_eligibility(&m) == HR_R_POD_RESOURCES);
    c.cpu_req = HR_NONE;

    /* Guaranteed at pod level: limit = request for CPU and memory. */
    hr_pod g = p;
    g.pod_cpu_lim = 500;
    g.pod_mem_fixed = true;
    CHECK_TRUE("Guaranteed pod level", hr_pod_eligibility(&g) == HR_R_GUARANTEED);
    g.pod_mem_fixed = false;
    CHECK_TRUE("memory not fixed: Burstable", hr_pod_eligibility(&g) == HR_MANAGED);

    /* An unreadable pod-level limit is a quantity out of range. */
    hr_pod u = p;
    u.pod_cpu_lim = HR_UNBOUNDED;
    CHECK_TRUE("unbounded pod-level limit", hr_pod_eligibility(&u) == HR_R_UNBOUNDED_QUANTITY);
}

/* The policy plans a pod-level pod as a pod of one container with the
 * pod-level request and limit, on the same node: same target, same figures
 * for the node, and its containers get no limit. */
static void policy_as_one_member(void **state)
{
    (void)state;
    hr_config cfg = cfg_live();
    hr_node node = {.allocatable = 8000, .known = true};
    hr_container pc[2] = {{HR_NONE, HR_NONE, 64 << 20, HR_NONE, HR_CTR_APP, false},
                          {100, 200, HR_NONE, HR_NONE, HR_CTR_APP, false}};
    hr_pod pods[2];
    pods[0] = hr_pod_init();
    pods[0].ctr = pc;
    pods[0].n_ctr = 2;
    pods[0].pod_resources = true;
    pods[0].pod_cpu_req = 1000;
    pods[0].pod_cpu_lim = 1500;
    pods[0].pod_resize = true;
    hr_container oc = {1000, 1000, HR_NONE, HR_NONE, HR_CTR_APP, false};
    pods[1] = hr_pod_init();
    pods[1].ctr = &oc;
    pods[1].n_ctr = 1;

    hr_pod_plan out[2];
    int64_t lim[3];
    hr_node_plan np = hr_plan_node(&cfg, &node, pods, 2, out, lim);
    CHECK_TRUE("both managed", out[0].reason == HR_MANAGED && out[1].reason == HR_MANAGED);
    CHECK_I64("M counts the pod-level request", np.managed, 2000);
    CHECK_I64("booked", np.booked, 2000);
    CHECK_TRUE("planned at pod level", out[0].pod_level && !out[1].pod_level);
    CHECK_I64("current is the pod-level limit", out[0].current, 1500);
    CHECK_TRUE("containers of a pod-level pod are not written",
               lim[0] == HR_NONE && lim[1] == HR_NONE);
    /* S = 6000, M = 2000: both pods get r + 3000. */
    CHECK_I64("pod-level target", out[0].target, out[1].target);
    CHECK_I64("the same share as a one-container pod", out[0].target, 4000);
    CHECK_TRUE("a write is due", out[0].write);

    /* The pieces explain and the annotation use agree with the plan. */
    hr_pod_caps caps;
    hr_pod_caps_of(&cfg, node.allocatable, &pods[0], out[0].request, &caps);
    CHECK_TRUE("no container LimitRange cap on a pod-level pod", !caps.on[HR_CAP_LR_CONTAINER]);
    CHECK_I64("hr_pod_target agrees",
              hr_pod_target(&cfg, node.allocatable, np.slack, np.managed, np.n_managed, &pods[0],
                            out[0].request, NULL),
              4000);
    int64_t sl[2];
    CHECK_I64("hr_split_target: one pod-level total",
              hr_split_target(&cfg, &pods[0], out[0].request, 4000, sl, NULL), 4000);
    CHECK_TRUE("hr_split_target leaves the containers", sl[0] == HR_NONE && sl[1] == HR_NONE);

    /* Not accepted by its node: excluded, books its pod-level request. */
    pods[0].pod_resize = false;
    np = hr_plan_node(&cfg, &node, pods, 2, out, lim);
    CHECK_TRUE("excluded", out[0].reason == HR_R_POD_RESOURCES && !out[0].pod_level);
    CHECK_I64("still booked", np.booked, 2000);
    CHECK_I64("not in M", np.managed, 1000);
}

/* The QoS guard at pod level: with a fixed pod-level memory, a target at
 * the request would make the pod Guaranteed; it is lifted one quantum. */
static void policy_qos_guard(void **state)
{
    (void)state;
    hr_config cfg = cfg_live();
    cfg.max_multiplier_milli = 1000; /* the cap is the request */
    hr_node node = {.allocatable = 8000, .known = true};
    hr_container c;
    hr_pod p = pod_level(&c, 1000, 2000);
    p.pod_mem_fixed = true;
    hr_pod_plan out;
    int64_t lim;
    (void)hr_plan_node(&cfg, &node, &p, 1, &out, &lim);
    CHECK_TRUE("managed", out.reason == HR_MANAGED);
    CHECK_TRUE("guarded", out.qos_guarded);
    CHECK_TRUE("above the request", out.target > 1000);
    CHECK_TRUE("still Burstable", out.target != p.pod_cpu_req);
}

static void apply_body(void **state)
{
    (void)state;
    hr_buf b;
    hr_buf_init(&b, 0);
    hr_pod_level_apply_body(&b, "team-a", "web-0", 2500);
    assert_string_equal(hr_buf_str(&b),
                        "{\"apiVersion\":\"v1\",\"kind\":\"Pod\",\"metadata\":{\"namespace\":"
                        "\"team-a\",\"name\":\"web-0\"},\"spec\":{\"resources\":{\"limits\":{"
                        "\"cpu\":\"2500m\"}}}}");
    hr_buf_free(&b);
}

static void status_annotation(void **state)
{
    (void)state;
    hr_config cfg = cfg_live();
    hr_node node = {.allocatable = 8000, .known = true};
    hr_container c;
    hr_pod p = pod_level(&c, 1000, 1500);
    hr_pod_plan pp;
    int64_t lim;
    hr_node_plan np = hr_plan_node(&cfg, &node, &p, 1, &pp, &lim);
    const char *names[] = {"app"};
    hr_status_in in = {.cfg = &cfg,
                       .np = &np,
                       .pod = &p,
                       .pp = &pp,
                       .ctr_names = names,
                       .limits = &lim,
                       .unix_s = 1800000000};
    hr_buf b;
    hr_buf_init(&b, 0);
    hr_status_annotation(&b, &in);
    char want[64];
    snprintf(want, sizeof want, "\"podLimit\":\"%" PRId64 "m\"", pp.target);
    CHECK_TRUE("podLimit", strstr(hr_buf_str(&b), want) != NULL);
    CHECK_TRUE("no container limits", strstr(hr_buf_str(&b), "\"limits\"") == NULL);
    hr_buf_free(&b);
}

/* The core's birth decision: the pod-level limit by the rules of one
 * container's; no container gets one. */
static void birth_core(void **state)
{
    (void)state;
    hr_config cfg = cfg_live();
    hr_container c;
    hr_pod p = pod_level(&c, 500, HR_NONE);
    int64_t lim;
    hr_birth b = hr_admit_pod(&cfg, &p, HR_NONE, &lim);
    hr_container one = {500, HR_NONE, HR_NONE, HR_NONE, HR_CTR_APP, false};
    hr_pod o = hr_pod_init();
    o.ctr = &one;
    o.n_ctr = 1;
    int64_t want;
    CHECK_I64("one limit's arithmetic", hr_birth_limits(&cfg, &o, HR_NONE, &want), 1);
    CHECK_TRUE("limits", b.verdict == HR_BIRTH_LIMITS && b.n_limits == 1);
    CHECK_I64("pod-level birth limit", b.pod_limit, want);
    CHECK_TRUE("above the request", b.pod_limit > 500);
    CHECK_TRUE("no container limit", lim == HR_NONE);

    p.pod_cpu_lim = 800;
    b = hr_admit_pod(&cfg, &p, HR_NONE, &lim);
    CHECK_TRUE("a pod-level limit already set: nothing due",
               b.verdict == HR_BIRTH_NOTHING_DUE && b.pod_limit == HR_NONE);

    p.pod_cpu_lim = HR_NONE;
    p.pod_resize = false;
    b = hr_admit_pod(&cfg, &p, HR_NONE, &lim);
    CHECK_TRUE("no pod-level resize: left alone",
               b.verdict == HR_BIRTH_INELIGIBLE && b.reason == HR_R_POD_RESOURCES);
}

static void review(bool pod_resize, const char *pod_resources, hr_wh_result *r)
{
    hr_config cfg = cfg_live();
    hr_wh_env env = {.cfg = &cfg, .pod_resize = pod_resize};
    char in[1024];
    snprintf(in, sizeof in,
             "{\"apiVersion\":\"admission.k8s.io/v1\",\"kind\":\"AdmissionReview\",\"request\":{"
             "\"uid\":\"u-1\",\"kind\":{\"group\":\"\",\"version\":\"v1\",\"kind\":\"Pod\"},"
             "\"resource\":{\"group\":\"\",\"version\":\"v1\",\"resource\":\"pods\"},"
             "\"namespace\":\"team-a\",\"operation\":\"CREATE\",\"object\":{\"apiVersion\":"
             "\"v1\",\"kind\":\"Pod\",\"metadata\":{\"name\":\"p\"},\"spec\":{\"resources\":%s,"
             "\"containers\":[{\"name\":\"app\",\"image\":\"x\"}]}}}}",
             pod_resources);
    hr_err err;
    assert_int_equal(hr_admission_review(&env, in, strlen(in), r, &err), HR_OK);
    assert_int_equal(r->http_status, 200);
}

static void birth_webhook(void **state)
{
    (void)state;
    hr_wh_result r;
    review(true, "{\"requests\":{\"cpu\":\"500m\"}}", &r);
    CHECK_TRUE("mutated", r.outcome == HR_WH_MUTATED);
    CHECK_TRUE("the limits map is created",
               strstr(hr_buf_str(&r.patch), "\"path\":\"/spec/resources/limits\",\"value\":{"
                                            "\"cpu\":") != NULL);
    CHECK_TRUE("no container patched", strstr(hr_buf_str(&r.patch), "containers") == NULL);
    hr_wh_result_free(&r);

    review(true, "{\"requests\":{\"cpu\":\"500m\"},\"limits\":{\"memory\":\"1Gi\"}}", &r);
    CHECK_TRUE("into the existing map",
               strstr(hr_buf_str(&r.patch), "\"path\":\"/spec/resources/limits/cpu\"") != NULL);
    hr_wh_result_free(&r);

    review(false, "{\"requests\":{\"cpu\":\"500m\"}}", &r);
    CHECK_TRUE("no pod-level resize: unchanged, with the reason",
               r.outcome == HR_WH_UNCHANGED && r.has_reason && r.reason == HR_R_POD_RESOURCES);
    hr_wh_result_free(&r);
}

static void decode(void **state)
{
    (void)state;
    const char *pod =
        "{\"apiVersion\":\"v1\",\"kind\":\"Pod\",\"metadata\":{\"name\":\"p\",\"namespace\":"
        "\"a\",\"uid\":\"u\",\"resourceVersion\":\"1\"},\"spec\":{\"nodeName\":\"n\","
        "\"resources\":{\"requests\":{\"cpu\":\"500m\",\"memory\":\"1Gi\"},\"limits\":{\"cpu\":"
        "\"2\",\"memory\":\"1Gi\"}},\"containers\":[{\"name\":\"app\"}]},\"status\":{}}";
    yyjson_doc *d = yyjson_read(pod, strlen(pod), 0);
    hr_arena a;
    hr_arena_init(&a, 0);
    hr_kpod kp;
    hr_err err;
    assert_int_equal(hr_decode_pod(yyjson_doc_get_root(d), &a, &kp, &err), HR_OK);
    CHECK_I64("pod-level request", kp.pod.pod_cpu_req, 500);
    CHECK_I64("pod-level limit", kp.pod.pod_cpu_lim, 2000);
    CHECK_TRUE("memory fixed", kp.pod.pod_mem_fixed);
    yyjson_doc_free(d);

    const char *node =
        "{\"apiVersion\":\"v1\",\"kind\":\"Node\",\"metadata\":{\"name\":\"n\"},\"status\":{"
        "\"allocatable\":{\"cpu\":\"8\"},\"declaredFeatures\":[\"Other\","
        "\"InPlacePodLevelResourcesVerticalScaling\"]}}";
    d = yyjson_read(node, strlen(node), 0);
    hr_knode kn;
    assert_int_equal(hr_decode_node(yyjson_doc_get_root(d), &a, &kn, &err), HR_OK);
    CHECK_TRUE("declares the feature", kn.pod_resize);
    yyjson_doc_free(d);
    const char *plain = "{\"apiVersion\":\"v1\",\"kind\":\"Node\",\"metadata\":{\"name\":\"n\"},"
                        "\"status\":{\"declaredFeatures\":[\"Other\"]}}";
    d = yyjson_read(plain, strlen(plain), 0);
    assert_int_equal(hr_decode_node(yyjson_doc_get_root(d), &a, &kn, &err), HR_OK);
    CHECK_TRUE("does not", !kn.pod_resize);
    yyjson_doc_free(d);
    CHECK_TRUE("mem fixed: request defaults to the limit", hr_kpod_mem_fixed(HR_NONE, GiB));
    CHECK_TRUE("mem not fixed: request below", !hr_kpod_mem_fixed(1, GiB));
    CHECK_TRUE("mem not fixed: no limit", !hr_kpod_mem_fixed(GiB, HR_NONE));
    hr_arena_free(&a);
}

/* The cache keeps a node's declaration through the change feed (a drain
 * clears only its dirty bit), and a node view says pod_resize only when
 * the API server resizes pod-level resources too. */
static void cache_node(void **state)
{
    (void)state;
    hr_cache *c;
    hr_err err;
    assert_int_equal(hr_cache_new(&c, &err), HR_OK);
    hr_knode k;
    memset(&k, 0, sizeof k);
    k.meta.name = "n1";
    k.meta.resource_version = "1";
    k.node.known = true;
    k.node.allocatable = 4000;
    k.has_allocatable = true;
    k.pod_resize = true;
    assert_int_equal(hr_cache_put_node(c, &k, &err), HR_OK);
    hr_cnode_view v;
    for (int server = 0; server < 2; server++) {
        hr_cache_set_server_pod_resize(c, server == 1);
        hr_cache_lock(c);
        (void)hr_cache_drain(c, NULL, NULL);
        assert_true(hr_cache_node_get(c, "n1", &v));
        CHECK_TRUE("the node's and the server's, after a drain", v.pod_resize == (server == 1));
        hr_cache_unlock(c);
    }
    k.pod_resize = false;
    k.meta.resource_version = "2";
    assert_int_equal(hr_cache_put_node(c, &k, &err), HR_OK);
    hr_cache_lock(c);
    assert_true(hr_cache_node_get(c, "n1", &v));
    CHECK_TRUE("a node that stops declaring it", !v.pod_resize);
    hr_cache_unlock(c);
    hr_cache_free(c);
}

static void versions(void **state)
{
    (void)state;
    CHECK_TRUE("1.35 refuses", !hr_kversion_pod_resize("1", "35"));
    CHECK_TRUE("1.36 accepts", hr_kversion_pod_resize("1", "36"));
    CHECK_TRUE("1.37+ accepts", hr_kversion_pod_resize("1", "37+"));
    CHECK_TRUE("2.0 accepts", hr_kversion_pod_resize("2", "0"));
    CHECK_TRUE("unreadable: no", !hr_kversion_pod_resize("1", "x"));
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(eligibility),       cmocka_unit_test(policy_as_one_member),
        cmocka_unit_test(policy_qos_guard),  cmocka_unit_test(apply_body),
        cmocka_unit_test(status_annotation), cmocka_unit_test(birth_core),
        cmocka_unit_test(birth_webhook),     cmocka_unit_test(decode),
        cmocka_unit_test(cache_node),        cmocka_unit_test(versions),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
