/*
 * test_vpa.c — design §4, foreign-writer: a VerticalPodAutoscaler that
 * writes a pod's CPU limit (core/vpa.h), decoded (kube/decode/vpa.h), kept
 * by the cache and turned into the pod's reason (cache/cache.h,
 * core/podctx.h, core/eligibility.h).
 *
 * The rules: the update mode writes (anything but Off; Auto when unset);
 * the container's policy (its own entry, first wins, else "*", else the
 * defaults) is not mode Off, not RequestsOnly, and names cpu when it names
 * resources; the target is the pod's direct owner, a Deployment's
 * ReplicaSet "<name>-<pod-template-hash>", or a CronJob's Job
 * "<name>-<digits>".
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <yyjson.h>

#include <cmocka.h>

#include "cache/cache.h"
#include "core/eligibility.h"
#include "core/podctx.h"
#include "core/vpa.h"
#include "kube/decode/pod.h"
#include "kube/decode/vpa.h"

/* ------------------------------------------------------------ the core */

static void test_targets(void **state)
{
    (void)state;
    static const struct {
        const char *kind, *name;            /* spec.targetRef */
        const char *okind, *ogroup, *oname; /* the pod's direct owner */
        const char *hash;                   /* its pod-template-hash */
        bool want;
    } t[] = {
        {"Deployment", "web", "ReplicaSet", "apps", "web-5d8f7c9b4", "5d8f7c9b4", true},
        {"Deployment", "web", "ReplicaSet", "apps", "web-5d8f7c9b4", NULL, false},
        {"Deployment", "web", "ReplicaSet", "apps", "web-api-5d8f7c9b4", "5d8f7c9b4", false},
        {"Deployment", "web-api", "ReplicaSet", "apps", "web-api-5d8f7c9b4", "5d8f7c9b4", true},
        {"Deployment", "web", "ReplicaSet", "apps", "web-5d8f7c9b4", "other", false},
        {"Deployment", "web", "StatefulSet", "apps", "web", NULL, false},
        {"StatefulSet", "db", "StatefulSet", "apps", "db", NULL, true},
        {"StatefulSet", "db", "StatefulSet", "apps", "db2", NULL, false},
        {"StatefulSet", "db", "StatefulSet", "", "db", NULL, false},
        {"DaemonSet", "agent", "DaemonSet", "apps", "agent", NULL, true},
        {"ReplicaSet", "rs", "ReplicaSet", "apps", "rs", NULL, true},
        {"ReplicationController", "rc", "ReplicationController", "", "rc", NULL, true},
        {"Job", "once", "Job", "batch", "once", NULL, true},
        {"CronJob", "nightly", "Job", "batch", "nightly-29012345", NULL, true},
        {"CronJob", "nightly", "Job", "batch", "nightly-", NULL, false},
        {"CronJob", "nightly", "Job", "batch", "nightly-29a", NULL, false},
        {"CronJob", "nightly", "Job", "batch", "nightly", NULL, false},
        {"Rollout", "web", "ReplicaSet", "apps", "web-5d8f7c9b4", "5d8f7c9b4", false},
        {"Deployment", "web", NULL, NULL, NULL, NULL, false},
    };
    for (size_t i = 0; i < sizeof t / sizeof t[0]; i++) {
        hr_vpa v = {.writer = "VerticalPodAutoscaler ns/v",
                    .target_name = t[i].name,
                    .target = (unsigned char)hr_vpa_target_of(t[i].kind),
                    .writes = true,
                    .dflt_limits = true};
        hr_vpa_owner o = {t[i].okind, t[i].ogroup, t[i].oname, t[i].hash};
        if (hr_vpa_targets(&v, &o) != t[i].want)
            fail_msg("case %zu: %s %s, owner %s %s: want %d", i, t[i].kind, t[i].name,
                     t[i].okind ? t[i].okind : "-", t[i].oname ? t[i].oname : "-", t[i].want);
    }
}

static void test_policy_and_mode(void **state)
{
    (void)state;
    assert_true(hr_vpa_policy_limits(NULL, NULL, false, false)); /* every default */
    assert_true(hr_vpa_policy_limits("Auto", "RequestsAndLimits", true, true));
    assert_false(hr_vpa_policy_limits("Off", NULL, false, false));
    assert_false(hr_vpa_policy_limits(NULL, "RequestsOnly", false, false));
    assert_false(hr_vpa_policy_limits(NULL, NULL, true, false)); /* memory only */
    assert_true(hr_vpa_mode_writes(NULL));
    assert_true(hr_vpa_mode_writes("Auto"));
    assert_true(hr_vpa_mode_writes("Recreate"));
    assert_true(hr_vpa_mode_writes("Initial"));
    assert_true(hr_vpa_mode_writes("InPlaceOrRecreate"));
    assert_false(hr_vpa_mode_writes("Off"));

    hr_vpa v = {.exceptions = "sidecar,log,", .dflt_limits = true};
    assert_true(hr_vpa_controls(&v, "app"));
    assert_false(hr_vpa_controls(&v, "sidecar"));
    assert_false(hr_vpa_controls(&v, "log"));
    assert_true(hr_vpa_controls(&v, "lo"));   /* a prefix is another name */
    assert_true(hr_vpa_controls(&v, "side")); /* so is a prefix of one */
    v.dflt_limits = false;
    assert_false(hr_vpa_controls(&v, "app"));
    assert_true(hr_vpa_controls(&v, "sidecar"));
}

/* ------------------------------------------------------------ decoding */

typedef struct dcase {
    const char *what;
    const char *spec; /* the VPA's spec, JSON */
    bool writes, dflt;
    const char *exceptions;
    unsigned char target;
} dcase;

static const dcase dcases[] = {
    {"defaults: Auto, RequestsAndLimits",
     "{\"targetRef\":{\"kind\":\"Deployment\",\"name\":\"web\"}}", true, true, "",
     HR_VT_DEPLOYMENT},
    {"updateMode Off",
     "{\"targetRef\":{\"kind\":\"Deployment\",\"name\":\"web\"},\"updatePolicy\":{\"updateMode\":"
     "\"Off\"}}",
     false, true, "", HR_VT_DEPLOYMENT},
    {"RequestsOnly for every container",
     "{\"targetRef\":{\"kind\":\"StatefulSet\",\"name\":\"db\"},\"resourcePolicy\":{"
     "\"containerPolicies\":[{\"containerName\":\"*\",\"controlledValues\":\"RequestsOnly\"}]}}",
     true, false, "", HR_VT_STATEFULSET},
    {"one container Off, the others by default",
     "{\"targetRef\":{\"kind\":\"Deployment\",\"name\":\"web\"},\"resourcePolicy\":{"
     "\"containerPolicies\":[{\"containerName\":\"istio-proxy\",\"mode\":\"Off\"}]}}",
     true, true, "istio-proxy,", HR_VT_DEPLOYMENT},
    {"only one container's limits, the first entry wins",
     "{\"targetRef\":{\"kind\":\"Deployment\",\"name\":\"web\"},\"resourcePolicy\":{"
     "\"containerPolicies\":[{\"containerName\":\"app\"},{\"containerName\":\"*\","
     "\"controlledValues\":\"RequestsOnly\"},{\"containerName\":\"app\",\"mode\":\"Off\"}]}}",
     true, false, "app,", HR_VT_DEPLOYMENT},
    {"memory only",
     "{\"targetRef\":{\"kind\":\"CronJob\",\"name\":\"n\"},\"resourcePolicy\":{"
     "\"containerPolicies\":[{\"containerName\":\"*\",\"controlledResources\":[\"memory\"]}]}}",
     true, false, "", HR_VT_CRONJOB},
    {"no targetRef", "{}", true, true, "", HR_VT_OTHER},
};

static hr_status decode(const char *spec, hr_arena *a, hr_kvpa *out, hr_err *err)
{
    char buf[2048];
    snprintf(buf, sizeof buf,
             "{\"apiVersion\":\"autoscaling.k8s.io/v1\",\"kind\":\"VerticalPodAutoscaler\","
             "\"metadata\":{\"namespace\":\"team\",\"name\":\"web\",\"resourceVersion\":\"7\"},"
             "\"spec\":%s}",
             spec);
    yyjson_doc *d = yyjson_read(buf, strlen(buf), 0);
    assert_non_null(d);
    hr_status st = hr_decode_vpa(yyjson_doc_get_root(d), a, out, err);
    yyjson_doc_free(d);
    return st;
}

static void test_decode(void **state)
{
    (void)state;
    for (size_t i = 0; i < sizeof dcases / sizeof dcases[0]; i++) {
        hr_arena a;
        hr_arena_init(&a, 0);
        hr_err err;
        hr_err_clear(&err);
        hr_kvpa v;
        if (decode(dcases[i].spec, &a, &v, &err) != HR_OK)
            fail_msg("%s: %s", dcases[i].what, err.msg);
        if (v.vpa.writes != dcases[i].writes || v.vpa.dflt_limits != dcases[i].dflt ||
            strcmp(v.vpa.exceptions, dcases[i].exceptions) != 0 || v.vpa.target != dcases[i].target)
            fail_msg("%s: writes %d dflt %d exceptions \"%s\" target %u", dcases[i].what,
                     v.vpa.writes, v.vpa.dflt_limits, v.vpa.exceptions, v.vpa.target);
        assert_string_equal(v.vpa.writer, "VerticalPodAutoscaler team/web");
        hr_arena_free(&a);
    }
}

static void test_decode_malformed(void **state)
{
    (void)state;
    static const struct {
        const char *spec, *field;
    } bad[] = {
        {"{\"targetRef\":[]}", "spec.targetRef"},
        {"{\"targetRef\":{\"kind\":3}}", "spec.targetRef.kind"},
        {"{\"updatePolicy\":{\"updateMode\":true}}", "spec.updatePolicy.updateMode"},
        {"{\"resourcePolicy\":{\"containerPolicies\":{}}}",
         "spec.resourcePolicy.containerPolicies"},
        {"{\"resourcePolicy\":{\"containerPolicies\":[{}]}}",
         "spec.resourcePolicy.containerPolicies[0].containerName"},
        {"{\"resourcePolicy\":{\"containerPolicies\":[{\"containerName\":\"a,b\"}]}}",
         "spec.resourcePolicy.containerPolicies[0].containerName"},
        {"{\"resourcePolicy\":{\"containerPolicies\":[{\"containerName\":\"a\","
         "\"controlledResources\":[1]}]}}",
         "spec.resourcePolicy.containerPolicies[0].controlledResources[0]"},
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        hr_arena a;
        hr_arena_init(&a, 0);
        hr_err err;
        hr_err_clear(&err);
        hr_kvpa v;
        if (decode(bad[i].spec, &a, &v, &err) != HR_E_INPUT)
            fail_msg("case %zu decoded", i);
        if (strstr(err.msg, bad[i].field) == NULL || strchr(err.msg, '\n') != NULL)
            fail_msg("case %zu: \"%s\" does not name %s", i, err.msg, bad[i].field);
        hr_arena_free(&a);
    }
}

/* ------------------------------------------------ the cache and the reason */

static void put_pod(hr_cache *c, const char *name, const char *rs, const char *hash)
{
    char buf[1024];
    snprintf(buf, sizeof buf,
             "{\"metadata\":{\"namespace\":\"team\",\"name\":\"%s\",\"resourceVersion\":\"1\","
             "\"labels\":{\"pod-template-hash\":\"%s\"},\"ownerReferences\":[{\"apiVersion\":"
             "\"apps/v1\",\"kind\":\"ReplicaSet\",\"name\":\"%s\",\"uid\":\"u\",\"controller\":"
             "true}]},\"spec\":{\"nodeName\":\"n1\",\"containers\":[{\"name\":\"app\","
             "\"resources\":{\"requests\":{\"cpu\":\"500m\"},\"limits\":{\"cpu\":\"1\"}}}]},"
             "\"status\":{\"phase\":\"Running\",\"containerStatuses\":[{\"name\":\"app\","
             "\"resources\":{}}]}}",
             name, hash, rs);
    yyjson_doc *d = yyjson_read(buf, strlen(buf), 0);
    assert_non_null(d);
    hr_arena a;
    hr_arena_init(&a, 0);
    hr_err err;
    hr_kpod kp;
    assert_int_equal(hr_decode_pod(yyjson_doc_get_root(d), &a, &kp, &err), HR_OK);
    assert_int_equal(hr_cache_put_pod(c, &kp, NULL, &err), HR_OK);
    hr_arena_free(&a);
    yyjson_doc_free(d);
}

static void put_vpa(hr_cache *c, const char *spec)
{
    hr_arena a;
    hr_arena_init(&a, 0);
    hr_err err;
    hr_kvpa v;
    assert_int_equal(decode(spec, &a, &v, &err), HR_OK);
    assert_int_equal(hr_cache_put_vpa(c, &v, &err), HR_OK);
    hr_arena_free(&a);
}

/* The pod's reason as the controller's snapshot decides it. */
static hr_reason reason_of(hr_cache *c, const char *pod, const char **writer)
{
    static hr_cpod_scratch s;
    hr_cpod_view v;
    hr_cache_lock(c);
    assert_true(hr_cache_pod_get(c, "team", pod, &v, &s));
    hr_config cfg;
    hr_config_effective(NULL, HR_DRY_RUN_UNSET, &cfg);
    cfg.ns_selector = (hr_selector){true, NULL, 0}; /* every namespace */
    hr_pod_ctx cx = {.cfg = &cfg,
                     .ns = v.ns,
                     .owner_kind = v.owner_kind,
                     .owner_group = v.owner_group,
                     .owner_name = v.owner_name,
                     .limits = HR_LIMIT_BOUNDS_NONE,
                     .vpa_writer = hr_cache_vpa_writer(c, &v)};
    hr_pod p = hr_pod_in_context(&v.pod, &cx);
    hr_reason r = hr_pod_eligibility(&p);
    *writer = p.foreign_writer;
    hr_cache_unlock(c);
    return r;
}

static void test_cache_and_reason(void **state)
{
    (void)state;
    hr_cache *c;
    hr_err err;
    assert_int_equal(hr_cache_new(&c, &err), HR_OK);
    put_pod(c, "web-5d8f7-a", "web-5d8f7", "5d8f7");
    put_pod(c, "api-77c-b", "api-77c", "77c");
    const char *w;
    assert_int_equal(reason_of(c, "web-5d8f7-a", &w), HR_MANAGED);

    put_vpa(c, "{\"targetRef\":{\"kind\":\"Deployment\",\"name\":\"web\"}}");
    assert_int_equal(reason_of(c, "web-5d8f7-a", &w), HR_R_FOREIGN_WRITER);
    assert_string_equal(w, "VerticalPodAutoscaler team/web");
    assert_int_equal(reason_of(c, "api-77c-b", &w), HR_MANAGED);

    /* An update to RequestsOnly hands the pod back; the same VPA again
     * changes nothing (and holds no second reference). */
    const char *only = "{\"targetRef\":{\"kind\":\"Deployment\",\"name\":\"web\"},"
                       "\"resourcePolicy\":{\"containerPolicies\":[{\"containerName\":\"*\","
                       "\"controlledValues\":\"RequestsOnly\"}]}}";
    put_vpa(c, only);
    put_vpa(c, only);
    assert_int_equal(reason_of(c, "web-5d8f7-a", &w), HR_MANAGED);
    put_vpa(c, "{\"targetRef\":{\"kind\":\"Deployment\",\"name\":\"web\"}}");
    assert_int_equal(reason_of(c, "web-5d8f7-a", &w), HR_R_FOREIGN_WRITER);
    hr_cache_stats st;
    hr_cache_lock(c);
    hr_cache_get_stats(c, &st);
    hr_cache_unlock(c);
    assert_int_equal(st.vpas, 1);

    /* Deleted: managed again, and the VPA's strings are gone. */
    hr_cache_del(c, HR_CK_VPA, "team", "web");
    assert_int_equal(reason_of(c, "web-5d8f7-a", &w), HR_MANAGED);
    hr_cache_stats after;
    hr_cache_lock(c);
    hr_cache_get_stats(c, &after);
    hr_cache_unlock(c);
    assert_int_equal(after.vpas, 0);
    assert_true(after.strings < st.strings);
    hr_cache_free(c);
}

/* The webhook's path (hr_cache_vpa_writer_of): a pod not cached yet, told
 * by its namespace, direct owner and containers, meets the cached VPAs by
 * the same loop and rule as the cached pod with that owner. */
static const char *writer_of(hr_cache *c, const char *ns, const char *okind, const char *oname,
                             const char *hash, int64_t cpu_req)
{
    hr_container ctr = {.cpu_req = cpu_req,
                        .cpu_lim = HR_NONE,
                        .mem_req = HR_NONE,
                        .mem_lim = HR_NONE,
                        .kind = HR_CTR_APP};
    hr_pod p = hr_pod_init();
    p.ctr = &ctr;
    p.n_ctr = 1;
    const char *const names[] = {"app"};
    hr_vpa_owner o = {okind, okind != NULL ? "apps" : NULL, oname, hash};
    hr_cache_lock(c);
    const char *w = hr_cache_vpa_writer_of(c, ns, &o, &p, names);
    hr_cache_unlock(c);
    return w;
}

static void test_writer_of_uncached(void **state)
{
    (void)state;
    hr_cache *c;
    hr_err err;
    assert_int_equal(hr_cache_new(&c, &err), HR_OK);
    put_pod(c, "web-5d8f7-a", "web-5d8f7", "5d8f7");
    assert_null(writer_of(c, "team", "ReplicaSet", "web-5d8f7", "5d8f7", 500));

    put_vpa(c, "{\"targetRef\":{\"kind\":\"Deployment\",\"name\":\"web\"}}");
    static const struct {
        const char *ns, *okind, *oname, *hash;
        int64_t cpu_req;
        bool want;
    } t[] = {
        {"team", "ReplicaSet", "web-5d8f7", "5d8f7", 500, true},
        {"team", "ReplicaSet", "web-5d8f7", NULL, 500, false},    /* no hash label */
        {"team", "ReplicaSet", "web-5d8f7", "other", 500, false}, /* another hash */
        {"team", "ReplicaSet", "api-77c", "77c", 500, false},     /* another Deployment */
        /* another namespace: one the cache holds as a string (the owner's
         * group), and one it has never seen */
        {"apps", "ReplicaSet", "web-5d8f7", "5d8f7", 500, false},
        {"nowhere", "ReplicaSet", "web-5d8f7", "5d8f7", 500, false},
        {"team", NULL, NULL, NULL, 500, false},                       /* no owner */
        {"team", "ReplicaSet", "web-5d8f7", "5d8f7", HR_NONE, false}, /* nothing managed */
    };
    for (size_t i = 0; i < sizeof t / sizeof t[0]; i++) {
        const char *w = writer_of(c, t[i].ns, t[i].okind, t[i].oname, t[i].hash, t[i].cpu_req);
        if (t[i].want ? w == NULL || strcmp(w, "VerticalPodAutoscaler team/web") != 0 : w != NULL)
            fail_msg("case %zu: writer %s", i, w ? w : "(none)");
    }
    /* The cached pod of that owner gets the same answer, by the same rule:
     * a policy that hands its container back hands both back. */
    const char *cw;
    assert_int_equal(reason_of(c, "web-5d8f7-a", &cw), HR_R_FOREIGN_WRITER);
    assert_string_equal(cw, "VerticalPodAutoscaler team/web");
    put_vpa(c, "{\"targetRef\":{\"kind\":\"Deployment\",\"name\":\"web\"},"
               "\"resourcePolicy\":{\"containerPolicies\":[{\"containerName\":\"app\","
               "\"mode\":\"Off\"}]}}");
    assert_null(writer_of(c, "team", "ReplicaSet", "web-5d8f7", "5d8f7", 500));
    assert_int_equal(reason_of(c, "web-5d8f7-a", &cw), HR_MANAGED);
    hr_cache_free(c);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_targets),          cmocka_unit_test(test_policy_and_mode),
        cmocka_unit_test(test_decode),           cmocka_unit_test(test_decode_malformed),
        cmocka_unit_test(test_cache_and_reason), cmocka_unit_test(test_writer_of_uncached),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
