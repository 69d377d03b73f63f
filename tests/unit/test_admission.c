/*
 * test_admission.c — the admission review handler, rule by rule (design §8):
 * the patch shapes (limits map missing vs present, sidecars, untouched
 * containers), the caps (maxMultiplier, max-cpu shared over the pod,
 * LimitRange), every reason to leave a pod alone (namespace, opt-out,
 * BestEffort, Guaranteed, a QoS change, a RestartContainer resize policy,
 * a VerticalPodAutoscaler that writes its CPU limit, disabled, dry-run,
 * not a CREATE, an object it cannot read), the uid echo,
 * and malformed reviews → 400.
 * Plus the config holder's snapshot semantics.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>
#include <yyjson.h>

#include "core/config.h"
#include "core/eligibility.h"
#include "core/names.h"
#include "util/base64.h"
#include "webhook/admission.h"
#include "webhook/config_holder.h"

/* ---------------------------------------------------------------- helpers */

static char *review_full(const char *uid_json, const char *op, const char *ns, const char *extra,
                         const char *pod)
{
    size_t cap = strlen(pod) + 2048;
    char *s = malloc(cap);
    assert_non_null(s);
    snprintf(s, cap,
             "{\"apiVersion\":\"admission.k8s.io/v1\",\"kind\":\"AdmissionReview\","
             "\"request\":{\"uid\":%s,\"kind\":{\"group\":\"\",\"version\":\"v1\","
             "\"kind\":\"Pod\"},\"resource\":{\"group\":\"\",\"version\":\"v1\","
             "\"resource\":\"pods\"},%s\"namespace\":\"%s\",\"operation\":\"%s\","
             "\"object\":%s}}",
             uid_json, extra, ns, op, pod);
    return s;
}

static char *review(const char *ns, const char *pod)
{
    return review_full("\"u-1\"", "CREATE", ns, "", pod);
}

/* A pod with the given metadata extras and spec body. */
static char *pod_json(const char *meta, const char *spec)
{
    size_t cap = strlen(meta) + strlen(spec) + 256;
    char *s = malloc(cap);
    assert_non_null(s);
    snprintf(s, cap,
             "{\"apiVersion\":\"v1\",\"kind\":\"Pod\",\"metadata\":{"
             "\"generateName\":\"job-\"%s%s},\"spec\":{%s}}",
             meta[0] ? "," : "", meta, spec);
    return s;
}

static hr_config cfg_live(void)
{
    hr_config c;
    hr_config_defaults(&c);
    c.present = true;
    c.dry_run = false;
    return c;
}

typedef struct answer {
    hr_wh_result r;
    yyjson_doc *doc; /* the response, when 200 */
    char *patch;     /* decoded JSONPatch from the response, or NULL */
} answer;

/* The patch as the API server would read it: padded standard base64. */
static char *unbase64(const char *s)
{
    size_t n = strlen(s);
    assert_int_equal(n % 4, 0);
    assert_int_equal(strspn(s, "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/="),
                     n);
    char *out = calloc(hr_b64_max(n) + 1, 1);
    size_t o = hr_b64_decode(s, n, (unsigned char *)out, NULL);
    assert_true(o != (size_t)-1);
    out[o] = '\0';
    return out;
}

static void run_env(const hr_wh_env *env, const char *in, answer *a)
{
    memset(a, 0, sizeof *a);
    hr_err err;
    assert_int_equal(hr_admission_review(env, in, strlen(in), &a->r, &err), HR_OK);
    if (a->r.http_status != 200)
        return;
    a->doc = yyjson_read(hr_buf_str(&a->r.body), a->r.body.len, 0);
    assert_non_null(a->doc);
    yyjson_val *root = yyjson_doc_get_root(a->doc);
    assert_true(yyjson_equals_str(yyjson_obj_get(root, "apiVersion"), "admission.k8s.io/v1"));
    assert_true(yyjson_equals_str(yyjson_obj_get(root, "kind"), "AdmissionReview"));
    yyjson_val *resp = yyjson_obj_get(root, "response");
    assert_true(yyjson_get_bool(yyjson_obj_get(resp, "allowed")));
    yyjson_val *p = yyjson_obj_get(resp, "patch");
    if (p) {
        assert_true(yyjson_equals_str(yyjson_obj_get(resp, "patchType"), "JSONPatch"));
        a->patch = unbase64(yyjson_get_str(p));
    } else {
        assert_null(yyjson_obj_get(resp, "patchType"));
    }
}

static void run(const hr_config *cfg, const char *in, answer *a)
{
    hr_wh_env env = {.cfg = cfg};
    run_env(&env, in, a);
}

static void done(answer *a)
{
    hr_wh_result_free(&a->r);
    yyjson_doc_free(a->doc);
    free(a->patch);
}

/* Run pod (in namespace "team-a") under cfg and expect this patch (NULL:
 * none) and outcome. */
static void expect(const hr_config *cfg, const char *meta, const char *spec, hr_wh_outcome outcome,
                   const char *patch)
{
    char *pod = pod_json(meta, spec);
    char *in = review("team-a", pod);
    answer a;
    run(cfg, in, &a);
    if (a.r.outcome != outcome || (patch == NULL) != (a.patch == NULL) ||
        (patch && strcmp(patch, a.patch) != 0))
        fail_msg("outcome %s (%s), patch %s; want %s, %s", hr_wh_outcome_str(a.r.outcome), a.r.why,
                 a.patch ? a.patch : "(none)", hr_wh_outcome_str(outcome),
                 patch ? patch : "(none)");
    done(&a);
    free(in);
    free(pod);
}

#define C(name, res) "{\"name\":\"" name "\",\"image\":\"x\",\"resources\":" res "}"
#define REQ(cpu) "{\"requests\":{\"cpu\":\"" cpu "\"}}"

/* ------------------------------------------------------------ patch shapes */

static void limits_map_missing(void **state)
{
    (void)state;
    hr_config cfg = cfg_live();
    expect(&cfg, "", "\"containers\":[" C("a", REQ("500m")) "]", HR_WH_MUTATED,
           "[{\"op\":\"add\",\"path\":\"/spec/containers/0/resources/limits\","
           "\"value\":{\"cpu\":\"1\"}}]");
}

static void limits_map_present(void **state)
{
    (void)state;
    hr_config cfg = cfg_live();
    expect(&cfg, "",
           "\"containers\":[" C("a", "{\"requests\":{\"cpu\":\"250m\",\"memory\":"
                                     "\"64Mi\"},\"limits\":{\"memory\":\"128Mi\"}}") "]",
           HR_WH_MUTATED,
           "[{\"op\":\"add\",\"path\":\"/spec/containers/0/resources/limits/cpu\","
           "\"value\":\"500m\"}]");
}

static void only_missing_limits_added(void **state)
{
    (void)state;
    hr_config cfg = cfg_live();
    expect(
        &cfg, "",
        "\"containers\":[" C("a", "{\"requests\":{\"cpu\":\"1\"},\"limits\":{\"cpu\":\"3\"}}") "," C(
            "b", REQ("100m")) "," C("c", "{}") "]",
        HR_WH_MUTATED,
        "[{\"op\":\"add\",\"path\":\"/spec/containers/1/resources/limits\","
        "\"value\":{\"cpu\":\"200m\"}}]");
}

/* Design §2.10: a group member is born at its group's value in force. The
 * lookup answers for team-a/label:train only, with 5000m for 2000m (5×). */
static const char *g_asked;
static bool group_lookup(void *ud, const char *key, int64_t *num, int64_t *den)
{
    (void)ud;
    g_asked = key;
    if (strcmp(key, "team-a/label:train") != 0)
        return false;
    *num = 5000;
    *den = 2000;
    return true;
}

static void group_member_born_at_group_value(void **state)
{
    (void)state;
    hr_config cfg = cfg_live();
    static const char *const metas[3] = {
        "\"labels\":{\"kube-headroom.dev/group-uniform\":\"true\","
        "\"kube-headroom.dev/group\":\"train\"}",
        "\"labels\":{\"kube-headroom.dev/group-uniform\":\"true\","
        "\"kube-headroom.dev/group\":\"other\"}",
        "\"labels\":{\"kube-headroom.dev/group\":\"train\"}",
    };
    /* 400m × 2.5 = 1000m for the member; initialMultiplier 2 (800m) for a
     * pod of a group with no limits yet and for a pod not marked uniform. */
    static const char *const want[3] = {"1", "800m", "800m"};
    for (int i = 0; i < 3; i++) {
        char *pod = pod_json(metas[i], "\"containers\":[" C("app", REQ("400m")) "]");
        char *in = review("team-a", pod);
        hr_wh_env env = {.cfg = &cfg, .group_lookup = group_lookup};
        answer a;
        g_asked = NULL;
        run_env(&env, in, &a);
        char p[256];
        snprintf(p, sizeof p,
                 "[{\"op\":\"add\",\"path\":\"/spec/containers/0/resources/limits\","
                 "\"value\":{\"cpu\":\"%s\"}}]",
                 want[i]);
        if (a.r.outcome != HR_WH_MUTATED || a.patch == NULL || strcmp(a.patch, p) != 0)
            fail_msg("case %d: %s (%s), patch %s; want %s", i, hr_wh_outcome_str(a.r.outcome),
                     a.r.why, a.patch ? a.patch : "(none)", p);
        if (i == 2 && g_asked != NULL)
            fail_msg("a pod not marked group-uniform asked for group %s", g_asked);
        done(&a);
        free(in);
        free(pod);
    }
}

static void sidecars_yes_init_no(void **state)
{
    (void)state;
    hr_config cfg = cfg_live();
    expect(&cfg, "",
           "\"initContainers\":[{\"name\":\"init\",\"resources\":" REQ(
               "2") "},"
                    "{\"name\":\"side\",\"restartPolicy\":\"Always\",\"resources\":" REQ(
                        "50m") "}],"
                               "\"containers\":[" C("a", REQ("1500m")) "]",
           HR_WH_MUTATED,
           "[{\"op\":\"add\",\"path\":\"/spec/initContainers/1/resources/limits\","
           "\"value\":{\"cpu\":\"100m\"}},"
           "{\"op\":\"add\",\"path\":\"/spec/containers/0/resources/limits\","
           "\"value\":{\"cpu\":\"3\"}}]");
}

static void limits_null_is_missing(void **state)
{
    (void)state;
    hr_config cfg = cfg_live();
    expect(&cfg, "",
           "\"containers\":[" C("a", "{\"requests\":{\"cpu\":\"300m\"},\"limits\":null}") "]",
           HR_WH_MUTATED,
           "[{\"op\":\"add\",\"path\":\"/spec/containers/0/resources/limits\","
           "\"value\":{\"cpu\":\"600m\"}}]");
}

/* -------------------------------------------------------------------- caps */

static void max_multiplier_caps(void **state)
{
    (void)state;
    hr_config cfg = cfg_live();
    cfg.initial_multiplier_milli = 5000;
    cfg.max_multiplier_milli = 3000;
    expect(&cfg, "", "\"containers\":[" C("a", REQ("100m")) "]", HR_WH_MUTATED,
           "[{\"op\":\"add\",\"path\":\"/spec/containers/0/resources/limits\","
           "\"value\":{\"cpu\":\"300m\"}}]");
    /* 0 disables the cap. */
    cfg.max_multiplier_milli = 0;
    expect(&cfg, "", "\"containers\":[" C("a", REQ("100m")) "]", HR_WH_MUTATED,
           "[{\"op\":\"add\",\"path\":\"/spec/containers/0/resources/limits\","
           "\"value\":{\"cpu\":\"500m\"}}]");
}

/* Design §2.9, §8: the birth limit does not depend on the node, so
 * policy: TenantFair gives the same patch as Proportional. */
static void tenant_fair_same_birth_limit(void **state)
{
    (void)state;
    hr_config cfg = cfg_live();
    cfg.policy = HR_POLICY_TENANT_FAIR;
    expect(&cfg, "", "\"containers\":[" C("a", REQ("500m")) "," C("b", REQ("333m")) "]",
           HR_WH_MUTATED,
           "[{\"op\":\"add\",\"path\":\"/spec/containers/0/resources/limits\","
           "\"value\":{\"cpu\":\"1\"}},{\"op\":\"add\",\"path\":"
           "\"/spec/containers/1/resources/limits\",\"value\":{\"cpu\":\"670m\"}}]");
}

/* Design §2.11, §8: the node is unknown at admission, so a pool that would
 * match every node (nodeSelector {}) and caps at 1.5x does not change the
 * birth limit: the top level's initialMultiplier 2. */
static void node_pools_birth_limit_is_top_level(void **state)
{
    (void)state;
    hr_config cfg = cfg_live();
    hr_node_pool all = {.name = "tight",
                        .selector = {true, NULL, 0},
                        .set = HR_POOL_MULT | HR_POOL_QUANTUM,
                        .max_multiplier_milli = 1500,
                        .quantum = 100};
    cfg.pools = &all;
    cfg.n_pools = 1;
    expect(&cfg, "", "\"containers\":[" C("a", REQ("500m")) "]", HR_WH_MUTATED,
           "[{\"op\":\"add\",\"path\":\"/spec/containers/0/resources/limits\","
           "\"value\":{\"cpu\":\"1\"}}]");
}

/* A pod created with spec.nodeName on a node the caller knows is born under
 * that node's pool (design §2.11, §8): the pool for nodes labelled
 * pool=tight caps at 1.5x, so 500m gets 750m there, and still 1 (the top
 * level's 2x) on a node the pool does not select or the caller does not
 * know. */
static bool node_lookup_tight(void *ud, const char *node, hr_arena *a, hr_labels *labels)
{
    (void)ud;
    static const char *tight[] = {"pool", "tight"};
    static const char *other[] = {"pool", "batch"};
    (void)a;
    if (strcmp(node, "n-tight") == 0)
        *labels = (hr_labels){tight, 1};
    else if (strcmp(node, "n-other") == 0)
        *labels = (hr_labels){other, 1};
    else
        return false;
    return true;
}

static void node_pools_birth_limit_with_node_name(void **state)
{
    (void)state;
    hr_config cfg = cfg_live();
    static const char *const tight_v[] = {"tight"};
    hr_requirement req = {"pool", HR_SEL_IN, tight_v, 1};
    hr_node_pool tight = {.name = "tight",
                          .selector = {true, &req, 1},
                          .set = HR_POOL_MULT,
                          .max_multiplier_milli = 1500};
    cfg.pools = &tight;
    cfg.n_pools = 1;
    const struct {
        const char *node, *want;
    } cases[] = {{"n-tight", "750m"}, {"n-other", "1"}, {"n-unknown", "1"}, {NULL, "1"}};
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        char spec[256];
        snprintf(spec, sizeof spec, "%s%s%s\"containers\":[" C("a", REQ("500m")) "]",
                 cases[i].node ? "\"nodeName\":\"" : "", cases[i].node ? cases[i].node : "",
                 cases[i].node ? "\"," : "");
        char *pod = pod_json("", spec);
        char *in = review("team-a", pod);
        hr_wh_env env = {.cfg = &cfg, .node_lookup = node_lookup_tight};
        answer an;
        run_env(&env, in, &an);
        char want[160];
        snprintf(want, sizeof want,
                 "[{\"op\":\"add\",\"path\":\"/spec/containers/0/resources/limits\","
                 "\"value\":{\"cpu\":\"%s\"}}]",
                 cases[i].want);
        if (an.r.outcome != HR_WH_MUTATED || an.patch == NULL || strcmp(an.patch, want) != 0)
            fail_msg("node %s: outcome %s (%s), patch %s; want %s",
                     cases[i].node ? cases[i].node : "(none)", hr_wh_outcome_str(an.r.outcome),
                     an.r.why, an.patch ? an.patch : "(none)", want);
        done(&an);
        free(in);
        free(pod);
    }
}

static void fractional_multiplier(void **state)
{
    (void)state;
    hr_config cfg = cfg_live();
    cfg.initial_multiplier_milli = 1500;
    /* 333m × 1.5 = 499.5m, floored to 499m, then to the nearest grid
     * point (design §2.4, §8): 500m. */
    expect(&cfg, "", "\"containers\":[" C("a", REQ("333m")) "]", HR_WH_MUTATED,
           "[{\"op\":\"add\",\"path\":\"/spec/containers/0/resources/limits\","
           "\"value\":{\"cpu\":\"500m\"}}]");
}

/* Birth limits land on the quantum grid like the controller's (design §8,
 * §2.4): nearest grid point, never above a cap, never below the request;
 * a cap below the first grid point at or above the request leaves the
 * request. Default initialMultiplier 2, quantum 10m. */
static void birth_limits_on_grid(void **state)
{
    (void)state;
    hr_config cfg = cfg_live();
    static const struct {
        const char *req, *want;
    } rows[] = {
        {"5m", "10m"},      /* 10 */
        {"7m", "10m"},      /* 14 -> 10, still >= 7 */
        {"8m", "20m"},      /* 16 -> 20 */
        {"333m", "670m"},   /* 666 -> 670 */
        {"1583m", "3170m"}, /* 3166 -> 3170 */
    };
    for (size_t k = 0; k < sizeof rows / sizeof rows[0]; k++) {
        char spec[256], patch[256];
        snprintf(spec, sizeof spec,
                 "\"containers\":[{\"name\":\"a\",\"image\":\"x\",\"resources\":"
                 "{\"requests\":{\"cpu\":\"%s\"}}}]",
                 rows[k].req);
        snprintf(patch, sizeof patch,
                 "[{\"op\":\"add\",\"path\":\"/spec/containers/0/resources/limits\","
                 "\"value\":{\"cpu\":\"%s\"}}]",
                 rows[k].want);
        expect(&cfg, "", spec, HR_WH_MUTATED, patch);
    }
    /* A cap in the way rounds down: max-cpu 345m on 333m -> 340m. */
    expect(&cfg, "\"annotations\":{\"" HR_ANN_MAX_CPU "\":\"345m\"}",
           "\"containers\":[" C("a", REQ("333m")) "]", HR_WH_MUTATED,
           "[{\"op\":\"add\",\"path\":\"/spec/containers/0/resources/limits\","
           "\"value\":{\"cpu\":\"340m\"}}]");
    /* A cap below the first grid point: the request wins, 333m. */
    expect(&cfg, "\"annotations\":{\"" HR_ANN_MAX_CPU "\":\"335m\"}",
           "\"containers\":[" C("a", REQ("333m")) "]", HR_WH_MUTATED,
           "[{\"op\":\"add\",\"path\":\"/spec/containers/0/resources/limits\","
           "\"value\":{\"cpu\":\"333m\"}}]");
    /* Budget shared pro-rata: max-cpu 1 over 333m + 667m (2x would be
     * 2000m): shares 333m and 667m, each below its first grid point (340m,
     * 670m), so both stay at their requests, 1000m in all. */
    expect(&cfg, "\"annotations\":{\"" HR_ANN_MAX_CPU "\":\"1\"}",
           "\"containers\":[" C("a", REQ("333m")) "," C("b", REQ("667m")) "]", HR_WH_MUTATED,
           "[{\"op\":\"add\",\"path\":\"/spec/containers/0/resources/limits\","
           "\"value\":{\"cpu\":\"333m\"}},"
           "{\"op\":\"add\",\"path\":\"/spec/containers/1/resources/limits\","
           "\"value\":{\"cpu\":\"667m\"}}]");
    /* max-cpu 1200m: shares 399m (399.6 floored) and 800m; 2x (666m,
     * 1334m) is above both, so each goes down to the grid: 390m and 800m. */
    expect(&cfg, "\"annotations\":{\"" HR_ANN_MAX_CPU "\":\"1200m\"}",
           "\"containers\":[" C("a", REQ("333m")) "," C("b", REQ("667m")) "]", HR_WH_MUTATED,
           "[{\"op\":\"add\",\"path\":\"/spec/containers/0/resources/limits\","
           "\"value\":{\"cpu\":\"390m\"}},"
           "{\"op\":\"add\",\"path\":\"/spec/containers/1/resources/limits\","
           "\"value\":{\"cpu\":\"800m\"}}]");
}

static void max_cpu_shared_pro_rata(void **state)
{
    (void)state;
    hr_config cfg = cfg_live();
    /* 2x would be 1000m + 3000m; the pod may have 3 cores: 750m + 2250m. */
    expect(&cfg, "\"annotations\":{\"" HR_ANN_MAX_CPU "\":\"3\"}",
           "\"containers\":[" C("a", REQ("500m")) "," C("b", REQ("1500m")) "]", HR_WH_MUTATED,
           "[{\"op\":\"add\",\"path\":\"/spec/containers/0/resources/limits\","
           "\"value\":{\"cpu\":\"750m\"}},"
           "{\"op\":\"add\",\"path\":\"/spec/containers/1/resources/limits\","
           "\"value\":{\"cpu\":\"2250m\"}}]");
    /* A cap above 2x does not bind. */
    expect(&cfg, "\"annotations\":{\"" HR_ANN_MAX_CPU "\":\"10\"}",
           "\"containers\":[" C("a", REQ("500m")) "]", HR_WH_MUTATED,
           "[{\"op\":\"add\",\"path\":\"/spec/containers/0/resources/limits\","
           "\"value\":{\"cpu\":\"1\"}}]");
}

static void max_cpu_counts_existing_limits_and_floors(void **state)
{
    (void)state;
    hr_config cfg = cfg_live();
    /* 1500m budget, 1200m already taken by a: b gets its request, never
     * less. */
    expect(
        &cfg, "\"annotations\":{\"" HR_ANN_MAX_CPU "\":\"1500m\"}",
        "\"containers\":[" C(
            "a",
            "{\"requests\":{\"cpu\":\"1\"},\"limits\":{\"cpu\":\"1200m\"}}") "," C("b",
                                                                                   REQ("400m")) "]",
        HR_WH_MUTATED,
        "[{\"op\":\"add\",\"path\":\"/spec/containers/1/resources/limits\","
        "\"value\":{\"cpu\":\"400m\"}}]");
}

static void bad_max_cpu_leaves_pod(void **state)
{
    (void)state;
    hr_config cfg = cfg_live();
    expect(&cfg, "\"annotations\":{\"" HR_ANN_MAX_CPU "\":\"lots\"}",
           "\"containers\":[" C("a", REQ("500m")) "]", HR_WH_UNCHANGED, NULL);
}

static bool lr_lookup(void *ud, const char *ns, hr_arena *a, hr_labels *labels,
                      hr_limit_bounds *bounds)
{
    (void)ud;
    (void)a;
    static const char *const kv[] = {HR_LABEL_MODE, HR_MODE_MANAGED};
    if (strcmp(ns, "team-a") != 0)
        return false;
    *labels = (hr_labels){kv, 1};
    bounds->ctr_max = 700;
    bounds->ctr_ratio_milli = HR_NONE;
    bounds->pod_max = HR_NONE;
    return true;
}

static void limitrange_caps(void **state)
{
    (void)state;
    hr_config cfg = cfg_live();
    char *pod = pod_json("", "\"containers\":[" C("a", REQ("500m")) "]");
    char *in = review("team-a", pod);
    hr_wh_env env = {.cfg = &cfg, .ns_lookup = lr_lookup};
    answer a;
    run_env(&env, in, &a);
    assert_int_equal(a.r.outcome, HR_WH_MUTATED);
    assert_string_equal(a.patch,
                        "[{\"op\":\"add\",\"path\":\"/spec/containers/0/resources/limits\","
                        "\"value\":{\"cpu\":\"700m\"}}]");
    done(&a);
    free(in);
    free(pod);
}

/* Design §4, foreign-writer: what the VPA lookup was asked, and what it
 * answers (NULL: no VPA writes the pod's CPU limit). */
typedef struct vpa_ask {
    const char *answer;
    int calls;
    char ns[32], kind[32], group[32], name[32], hash[32], names[64];
    uint32_t n_ctr;
} vpa_ask;

static const char *vpa_writer(void *ud, const char *ns, const hr_vpa_owner *owner,
                              const hr_pod *pod, const char *const *ctr_names, hr_arena *a)
{
    vpa_ask *q = ud;
    q->calls++;
    snprintf(q->ns, sizeof q->ns, "%s", ns);
    snprintf(q->kind, sizeof q->kind, "%s", owner->kind ? owner->kind : "(null)");
    snprintf(q->group, sizeof q->group, "%s", owner->group ? owner->group : "(null)");
    snprintf(q->name, sizeof q->name, "%s", owner->name ? owner->name : "(null)");
    snprintf(q->hash, sizeof q->hash, "%s", owner->template_hash ? owner->template_hash : "(null)");
    q->n_ctr = pod->n_ctr;
    q->names[0] = '\0';
    for (uint32_t i = 0; i < pod->n_ctr; i++) {
        strncat(q->names, ctr_names[i], sizeof q->names - strlen(q->names) - 2);
        strcat(q->names, ",");
    }
    return q->answer != NULL ? hr_arena_strdup(a, q->answer) : NULL;
}

/* A Deployment's pod: owned by ReplicaSet web-abc12, pod-template-hash
 * abc12, and no metadata.namespace (the review's is the one). */
#define RS_POD_META                                                                             \
    "\"labels\":{\"pod-template-hash\":\"abc12\"},\"ownerReferences\":[{\"apiVersion\":"        \
    "\"apps/v1\",\"kind\":\"ReplicaSet\",\"name\":\"web-abc12\",\"uid\":\"u1\",\"controller\":" \
    "true}]"
#define VPA_WRITER "VerticalPodAutoscaler team-a/web"

static void vpa_run(const hr_config *cfg, const char *meta, const char *spec, vpa_ask *q, answer *a)
{
    char *pod = pod_json(meta, spec);
    char *in = review("team-a", pod);
    hr_wh_env env = {.cfg = cfg, .vpa_writer = q != NULL ? vpa_writer : NULL, .vpa_ud = q};
    run_env(&env, in, a);
    free(in);
    free(pod);
}

/* A pod whose VPA writes its CPU limit gets no birth limit from us: it is
 * the VPA's (the controller leaves it too), dry-run or not. */
static void vpa_writer_leaves_pod(void **state)
{
    (void)state;
    hr_config cfg = cfg_live();
    const char *spec = "\"containers\":[" C("app", REQ("500m")) "," C("proxy", REQ("100m")) "]";
    const char *patch = "[{\"op\":\"add\",\"path\":\"/spec/containers/0/resources/limits\","
                        "\"value\":{\"cpu\":\"1\"}},"
                        "{\"op\":\"add\",\"path\":\"/spec/containers/1/resources/limits\","
                        "\"value\":{\"cpu\":\"200m\"}}]";
    for (int dry = 0; dry < 2; dry++) {
        cfg.dry_run = dry != 0;
        vpa_ask q = {.answer = VPA_WRITER};
        answer a;
        vpa_run(&cfg, RS_POD_META, spec, &q, &a);
        if (a.r.outcome != HR_WH_UNCHANGED || a.patch != NULL || a.r.patch.len != 0)
            fail_msg("dry %d: %s (%s), patch %s", dry, hr_wh_outcome_str(a.r.outcome), a.r.why,
                     a.patch ? a.patch : "(none)");
        assert_true(a.r.has_reason);
        assert_int_equal(a.r.reason, HR_R_FOREIGN_WRITER);
        assert_int_equal(a.r.n_patched, 0);
        assert_string_equal(a.r.why, VPA_WRITER " writes its CPU limits");
        /* What it was asked: the review's namespace, the direct owner and
         * its template hash, the containers by name. */
        assert_int_equal(q.calls, 1);
        assert_string_equal(q.ns, "team-a");
        assert_string_equal(q.kind, "ReplicaSet");
        assert_string_equal(q.group, "apps");
        assert_string_equal(q.name, "web-abc12");
        assert_string_equal(q.hash, "abc12");
        assert_int_equal(q.n_ctr, 2);
        assert_string_equal(q.names, "app,proxy,");
        done(&a);
    }
    cfg.dry_run = false;

    /* No VPA writes it, or nothing to ask: the birth limits as ever. */
    vpa_ask none = {.answer = NULL};
    for (int k = 0; k < 2; k++) {
        answer a;
        vpa_run(&cfg, RS_POD_META, spec, k == 0 ? &none : NULL, &a);
        if (a.r.outcome != HR_WH_MUTATED || a.patch == NULL || strcmp(a.patch, patch) != 0)
            fail_msg("%s: %s (%s), patch %s", k == 0 ? "no writer" : "no lookup",
                     hr_wh_outcome_str(a.r.outcome), a.r.why, a.patch ? a.patch : "(none)");
        assert_int_equal(a.r.reason, HR_MANAGED);
        done(&a);
    }
    assert_int_equal(none.calls, 1);
}

/* The lookup is asked only of a pod a patch is due for: any other answer
 * keeps its own reason, whatever a VPA does. */
static void vpa_writer_keeps_other_reasons(void **state)
{
    (void)state;
    hr_config cfg = cfg_live();
    static const struct {
        const char *what, *meta, *spec;
        hr_reason want;
    } t[] = {
        {"opted out", RS_POD_META ",\"annotations\":{\"" HR_LABEL_MODE "\":\"unmanaged\"}",
         "\"containers\":[" C("app", REQ("500m")) "]", HR_R_OPTED_OUT},
        {"guaranteed", RS_POD_META,
         "\"containers\":[" C("app", "{\"requests\":{\"cpu\":\"1\",\"memory\":\"1Gi\"},"
                                     "\"limits\":{\"cpu\":\"1\",\"memory\":\"1Gi\"}}") "]",
         HR_R_GUARANTEED},
        {"no CPU request", RS_POD_META,
         "\"containers\":[" C("app", "{\"requests\":{\"memory\":\"1Gi\"}}") "]",
         HR_R_NO_CPU_REQUEST},
        {"nothing due", RS_POD_META,
         "\"containers\":[" C("app", "{\"requests\":{\"cpu\":\"500m\"},"
                                     "\"limits\":{\"cpu\":\"1\"}}") "]",
         HR_MANAGED},
    };
    for (size_t i = 0; i < sizeof t / sizeof t[0]; i++) {
        vpa_ask q = {.answer = VPA_WRITER};
        answer a;
        vpa_run(&cfg, t[i].meta, t[i].spec, &q, &a);
        if (a.r.outcome != HR_WH_UNCHANGED || !a.r.has_reason || a.r.reason != t[i].want ||
            q.calls != 0)
            fail_msg("%s: %s (%s), reason %s, asked %d time(s)", t[i].what,
                     hr_wh_outcome_str(a.r.outcome), a.r.why, hr_reason_str(a.r.reason), q.calls);
        done(&a);
    }
}

/* team-q: a limits.cpu ResourceQuota with room (hard − used) ud's. */
static int64_t quota_room(void *ud, const char *ns)
{
    return strcmp(ns, "team-q") == 0 ? *(const int64_t *)ud : HR_NONE;
}

/* Design §8: a birth limit beyond the room a limits.cpu quota leaves would
 * have the API server refuse the pod; the limits share the room instead,
 * never below the requests (a request the room cannot hold is the quota's
 * refusal to make, not ours). */
static void quota_room_caps(void **state)
{
    (void)state;
    hr_config cfg = cfg_live();
    char *pod = pod_json("", "\"containers\":[" C("a", REQ("500m")) "," C("b", REQ("1")) "]");
    char *in = review("team-q", pod);
    static const struct {
        int64_t room;
        const char *a, *b;
    } rows[] = {
        {HR_NONE, "1", "2"},     /* no quota: request × 2 */
        {5000, "1", "2"},        /* room enough */
        {2400, "800m", "1600m"}, /* shared pro rata */
        {1000, "500m", "1"},     /* below the requests: the requests */
        {0, "500m", "1"},        /* full, or not counted yet */
    };
    for (size_t i = 0; i < sizeof rows / sizeof rows[0]; i++) {
        hr_wh_env env = {.cfg = &cfg, .quota_room = quota_room, .quota_ud = (void *)&rows[i].room};
        answer a;
        run_env(&env, in, &a);
        assert_int_equal(a.r.outcome, HR_WH_MUTATED);
        char want[512];
        snprintf(want, sizeof want,
                 "[{\"op\":\"add\",\"path\":\"/spec/containers/0/resources/limits\","
                 "\"value\":{\"cpu\":\"%s\"}},"
                 "{\"op\":\"add\",\"path\":\"/spec/containers/1/resources/limits\","
                 "\"value\":{\"cpu\":\"%s\"}}]",
                 rows[i].a, rows[i].b);
        assert_string_equal(a.patch, want);
        done(&a);
    }
    free(in);
    free(pod);
}

/* ----------------------------------------------------- leaving pods alone */

static void qos_classes_left_alone(void **state)
{
    (void)state;
    hr_config cfg = cfg_live();
    /* BestEffort. */
    expect(&cfg, "", "\"containers\":[{\"name\":\"a\"}]", HR_WH_UNCHANGED, NULL);
    /* Guaranteed. */
    expect(&cfg, "",
           "\"containers\":[" C("a", "{\"requests\":{\"cpu\":\"1\",\"memory\":\"1Gi\"},"
                                     "\"limits\":{\"cpu\":\"1\",\"memory\":\"1Gi\"}}") "]",
           HR_WH_UNCHANGED, NULL);
    /* Burstable by memory only: no CPU request, nothing to add. */
    expect(&cfg, "", "\"containers\":[" C("a", "{\"requests\":{\"memory\":\"1Gi\"}}") "]",
           HR_WH_UNCHANGED, NULL);
}

static void qos_change_refused(void **state)
{
    (void)state;
    hr_config cfg = cfg_live();
    /* With a multiplier of 1 the limit equals the request; memory is
     * already pinned, so the pod would turn Guaranteed. */
    cfg.initial_multiplier_milli = 1000;
    expect(&cfg, "",
           "\"containers\":[" C("a", "{\"requests\":{\"cpu\":\"500m\",\"memory\":\"1Gi\"},"
                                     "\"limits\":{\"memory\":\"1Gi\"}}") "]",
           HR_WH_UNCHANGED, NULL);
    /* The same pod at 2x stays Burstable and is patched. */
    cfg.initial_multiplier_milli = 2000;
    expect(&cfg, "",
           "\"containers\":[" C("a", "{\"requests\":{\"cpu\":\"500m\",\"memory\":\"1Gi\"},"
                                     "\"limits\":{\"memory\":\"1Gi\"}}") "]",
           HR_WH_MUTATED,
           "[{\"op\":\"add\",\"path\":\"/spec/containers/0/resources/limits/cpu\","
           "\"value\":\"1\"}]");
}

static void opt_out(void **state)
{
    (void)state;
    hr_config cfg = cfg_live();
    const char *spec = "\"containers\":[" C("a", REQ("500m")) "]";
    const char *patch = "[{\"op\":\"add\",\"path\":\"/spec/containers/0/resources/limits\","
                        "\"value\":{\"cpu\":\"1\"}}]";
    expect(&cfg, "\"labels\":{\"" HR_LABEL_MODE "\":\"unmanaged\"}", spec, HR_WH_UNCHANGED, NULL);
    expect(&cfg, "\"annotations\":{\"" HR_LABEL_MODE "\":\"unmanaged\"}", spec, HR_WH_UNCHANGED,
           NULL);
    /* Fail closed: an unknown keyword is not "managed". */
    expect(&cfg, "\"labels\":{\"" HR_LABEL_MODE "\":\"Managed\"}", spec, HR_WH_UNCHANGED, NULL);
    expect(&cfg, "\"labels\":{\"" HR_LABEL_MODE "\":\"managed\"}", spec, HR_WH_MUTATED, patch);
    expect(&cfg, "\"labels\":{\"app\":\"x\"}", spec, HR_WH_MUTATED, patch);
}

static void mirror_and_pod_level_resources(void **state)
{
    (void)state;
    hr_config cfg = cfg_live();
    expect(&cfg, "\"annotations\":{\"kubernetes.io/config.mirror\":\"x\"}",
           "\"containers\":[" C("a", REQ("500m")) "]", HR_WH_UNCHANGED, NULL);
    expect(&cfg, "",
           "\"resources\":{\"requests\":{\"cpu\":\"1\"}},"
           "\"containers\":[" C("a", REQ("500m")) "]",
           HR_WH_UNCHANGED, NULL);
}

/* The controller's rule (design §4): a limit change must never restart a
 * container, so a pod with a CPU resizePolicy of RestartContainer on a
 * container the policy would resize is not managed — and not given a birth
 * limit either. A plain init container is never resized: its policy does
 * not count. */
static void restart_container_policy(void **state)
{
    (void)state;
    hr_config cfg = cfg_live();
#define RESTART_CPU \
    "\"resizePolicy\":[{\"resourceName\":\"cpu\",\"restartPolicy\":\"RestartContainer\"}]"
    expect(&cfg, "",
           "\"containers\":[{\"name\":\"a\"," RESTART_CPU ",\"resources\":" REQ("500m") "}]",
           HR_WH_UNCHANGED, NULL);
    expect(&cfg, "",
           "\"initContainers\":[{\"name\":\"s\",\"restartPolicy\":\"Always\"," RESTART_CPU
           ",\"resources\":" REQ("50m") "}],\"containers\":[" C("a", REQ("500m")) "]",
           HR_WH_UNCHANGED, NULL);
    expect(&cfg, "",
           "\"initContainers\":[{\"name\":\"i\"," RESTART_CPU
           ",\"resources\":" REQ("50m") "}],\"containers\":[" C("a", REQ("500m")) "]",
           HR_WH_MUTATED,
           "[{\"op\":\"add\",\"path\":\"/spec/containers/0/resources/limits\","
           "\"value\":{\"cpu\":\"1\"}}]");
    /* NotRequired (the default) and memory's policy do not matter. */
    expect(&cfg, "",
           "\"containers\":[{\"name\":\"a\",\"resizePolicy\":[{\"resourceName\":\"cpu\","
           "\"restartPolicy\":\"NotRequired\"},{\"resourceName\":\"memory\","
           "\"restartPolicy\":\"RestartContainer\"}],\"resources\":" REQ("500m") "}]",
           HR_WH_MUTATED,
           "[{\"op\":\"add\",\"path\":\"/spec/containers/0/resources/limits\","
           "\"value\":{\"cpu\":\"1\"}}]");
#undef RESTART_CPU
}

static void excluded_owner(void **state)
{
    (void)state;
    hr_config cfg = cfg_live();
    hr_owner_ref own = {"Job", "batch", NULL};
    cfg.excluded_owners = &own;
    cfg.n_excluded_owners = 1;
    const char *meta = "\"ownerReferences\":[{\"apiVersion\":\"batch/v1\","
                       "\"kind\":\"Job\",\"name\":\"j\",\"uid\":\"x\","
                       "\"controller\":true}]";
    expect(&cfg, meta, "\"containers\":[" C("a", REQ("500m")) "]", HR_WH_UNCHANGED, NULL);
    own.api_group = "apps";
    expect(&cfg, meta, "\"containers\":[" C("a", REQ("500m")) "]", HR_WH_MUTATED,
           "[{\"op\":\"add\",\"path\":\"/spec/containers/0/resources/limits\","
           "\"value\":{\"cpu\":\"1\"}}]");
}

static bool labels_lookup(void *ud, const char *ns, hr_arena *a, hr_labels *labels,
                          hr_limit_bounds *bounds)
{
    (void)a;
    (void)bounds;
    static const char *const managed[] = {HR_LABEL_MODE, HR_MODE_MANAGED};
    static const char *const other[] = {"team", "b"};
    (void)ud;
    if (strcmp(ns, "managed-ns") == 0)
        *labels = (hr_labels){managed, 1};
    else if (strcmp(ns, "plain-ns") == 0)
        *labels = (hr_labels){other, 1};
    else
        return false;
    return true;
}

static hr_wh_outcome outcome_in(const hr_config *cfg, const char *ns, hr_wh_ns_lookup_fn fn)
{
    char *pod = pod_json("", "\"containers\":[" C("a", REQ("500m")) "]");
    char *in = review(ns, pod);
    hr_wh_env env = {.cfg = cfg, .own_ns = "headroom-system", .ns_lookup = fn};
    answer a;
    run_env(&env, in, &a);
    hr_wh_outcome o = a.r.outcome;
    done(&a);
    free(in);
    free(pod);
    return o;
}

static void namespaces(void **state)
{
    (void)state;
    hr_config cfg = cfg_live();
    /* Labels known: the config's selector decides. */
    assert_int_equal(outcome_in(&cfg, "managed-ns", labels_lookup), HR_WH_MUTATED);
    assert_int_equal(outcome_in(&cfg, "plain-ns", labels_lookup), HR_WH_UNCHANGED);
    /* Unknown namespace: trust the registration's namespaceSelector... */
    assert_int_equal(outcome_in(&cfg, "other", labels_lookup), HR_WH_MUTATED);
    assert_int_equal(outcome_in(&cfg, "other", NULL), HR_WH_MUTATED);
    /* ...but excluded names and our own namespace are always out. */
    assert_int_equal(outcome_in(&cfg, "kube-system", NULL), HR_WH_UNCHANGED);
    assert_int_equal(outcome_in(&cfg, "headroom-system", NULL), HR_WH_UNCHANGED);
}

static void disabled_and_dry_run(void **state)
{
    (void)state;
    hr_config cfg = cfg_live();
    const char *spec = "\"containers\":[" C("a", REQ("500m")) "]";
    cfg.webhook_enabled = false;
    expect(&cfg, "", spec, HR_WH_UNCHANGED, NULL);
    /* Dry-run (and no HeadroomConfig at all, which means dry-run): no patch
     * in the answer, the would-be patch in the result for the log. */
    hr_config def;
    hr_config_defaults(&def);
    char *pod = pod_json("", spec);
    char *in = review("team-a", pod);
    answer a;
    run(&def, in, &a);
    assert_int_equal(a.r.outcome, HR_WH_DRY_RUN);
    assert_null(a.patch);
    assert_string_equal(hr_buf_str(&a.r.patch),
                        "[{\"op\":\"add\",\"path\":\"/spec/containers/0/resources/limits\","
                        "\"value\":{\"cpu\":\"1\"}}]");
    done(&a);
    free(in);
    free(pod);
}

static void only_pods_create(void **state)
{
    (void)state;
    hr_config cfg = cfg_live();
    char *pod = pod_json("", "\"containers\":[" C("a", REQ("500m")) "]");
    const char *ops[] = {"UPDATE", "DELETE", "CONNECT"};
    for (size_t i = 0; i < 3; i++) {
        char *in = review_full("\"u\"", ops[i], "team-a", "", pod);
        answer a;
        run(&cfg, in, &a);
        assert_int_equal(a.r.outcome, HR_WH_UNCHANGED);
        assert_null(a.patch);
        done(&a);
        free(in);
    }
    char *in = review_full("\"u\"", "CREATE", "team-a", "\"subResource\":\"resize\",", pod);
    answer a;
    run(&cfg, in, &a);
    assert_int_equal(a.r.outcome, HR_WH_UNCHANGED);
    done(&a);
    free(in);
    free(pod);
}

static void undecidable_object_allowed(void **state)
{
    (void)state;
    hr_config cfg = cfg_live();
    expect(&cfg, "", "\"containers\":[" C("a", REQ("5x")) "]", HR_WH_UNCHANGED, NULL);
    expect(&cfg, "", "\"containers\":[" C("a", "[]") "]", HR_WH_UNCHANGED, NULL);
    expect(&cfg, "", "\"containers\":{}", HR_WH_UNCHANGED, NULL);
    expect(&cfg, "", "\"containers\":[]", HR_WH_UNCHANGED, NULL);
    expect(&cfg, "", "\"containers\":[7]", HR_WH_UNCHANGED, NULL);
    expect(&cfg, "\"labels\":[]", "\"containers\":[" C("a", REQ("1")) "]", HR_WH_UNCHANGED, NULL);
    expect(&cfg, "\"labels\":{\"" HR_LABEL_MODE "\":3}", "\"containers\":[" C("a", REQ("1")) "]",
           HR_WH_UNCHANGED, NULL);
    /* No object at all. */
    const char *in = "{\"apiVersion\":\"admission.k8s.io/v1\",\"kind\":\"AdmissionReview\","
                     "\"request\":{\"uid\":\"u\",\"kind\":{\"kind\":\"Pod\"},"
                     "\"namespace\":\"a\",\"operation\":\"CREATE\"}}";
    answer a;
    run(&cfg, in, &a);
    assert_int_equal(a.r.http_status, 200);
    assert_int_equal(a.r.outcome, HR_WH_UNCHANGED);
    done(&a);
}

/* ---------------------------------------------------------- the envelope */

static void uid_echoed_escaped(void **state)
{
    (void)state;
    hr_config cfg = cfg_live();
    char *pod = pod_json("", "\"containers\":[" C("a", REQ("500m")) "]");
    char *in = review_full("\"a\\\"b\\\\c\\u0001\"", "CREATE", "team-a", "", pod);
    answer a;
    run(&cfg, in, &a);
    yyjson_val *resp = yyjson_obj_get(yyjson_doc_get_root(a.doc), "response");
    yyjson_val *uid = yyjson_obj_get(resp, "uid");
    assert_int_equal(yyjson_get_len(uid), 6);
    assert_memory_equal(yyjson_get_str(uid), "a\"b\\c\x01", 6);
    done(&a);
    free(in);
    free(pod);
}

static void malformed_reviews_400(void **state)
{
    (void)state;
    hr_config cfg = cfg_live();
    const char *bad[] = {
        "",
        "not json",
        "{\"apiVersion\":",
        "[]",
        "null",
        "{}",
        "{\"apiVersion\":\"admission.k8s.io/v1beta1\",\"kind\":\"AdmissionReview\","
        "\"request\":{\"uid\":\"u\"}}",
        "{\"apiVersion\":\"admission.k8s.io/v1\",\"kind\":\"Pod\",\"request\":{\"uid\":\"u\"}}",
        "{\"apiVersion\":\"admission.k8s.io/v1\",\"kind\":\"AdmissionReview\"}",
        "{\"apiVersion\":\"admission.k8s.io/v1\",\"kind\":\"AdmissionReview\",\"request\":[]}",
        "{\"apiVersion\":\"admission.k8s.io/v1\",\"kind\":\"AdmissionReview\",\"request\":{}}",
        "{\"apiVersion\":\"admission.k8s.io/v1\",\"kind\":\"AdmissionReview\","
        "\"request\":{\"uid\":42}}",
        "{\"apiVersion\":\"admission.k8s.io/v1\",\"kind\":\"AdmissionReview\","
        "\"request\":{\"uid\":\"\"}}",
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        hr_wh_env env = {.cfg = &cfg};
        hr_wh_result r;
        hr_err err;
        assert_int_equal(hr_admission_review(&env, bad[i], strlen(bad[i]), &r, &err), HR_OK);
        if (r.http_status != 400 || r.outcome != HR_WH_ERROR)
            fail_msg("case %zu: status %d outcome %s", i, r.http_status,
                     hr_wh_outcome_str(r.outcome));
        assert_non_null(strstr(hr_buf_str(&r.body), "malformed AdmissionReview"));
        hr_wh_result_free(&r);
    }
    /* A body with bytes after the JSON is not a review either. */
    const char trailing[] = "{\"apiVersion\":\"admission.k8s.io/v1\",\"kind\":\"AdmissionReview\","
                            "\"request\":{\"uid\":\"u\"}} x";
    hr_wh_env env = {.cfg = &cfg};
    hr_wh_result r;
    hr_err err;
    assert_int_equal(hr_admission_review(&env, trailing, sizeof trailing - 1, &r, &err), HR_OK);
    assert_int_equal(r.http_status, 400);
    hr_wh_result_free(&r);
}

/* -------------------------------------------------------- config holder */

static void holder_snapshots(void **state)
{
    (void)state;
    hr_config c = cfg_live();
    hr_cfg_holder *h;
    hr_err err;
    assert_int_equal(hr_cfg_holder_new(&c, &h, &err), HR_OK);
    hr_cfg_snapshot *s1 = hr_cfg_holder_get(h);
    assert_int_equal(hr_cfg_snapshot_version(s1), 1);

    /* A config whose strings live in a buffer that dies right after set. */
    char *ns = strdup("team-x");
    const char *list[] = {ns};
    hr_config d = cfg_live();
    d.initial_multiplier_milli = 3000;
    d.excluded_ns = list;
    d.n_excluded_ns = 1;
    /* and a node pool (design §2.11) whose name and selector die too */
    char *pname = strdup("batch"), *pkey = strdup("pool");
    hr_requirement preq = {pkey, HR_SEL_EXISTS, NULL, 0};
    hr_node_pool pool = {.name = pname, .selector = {true, &preq, 1}, .set = HR_POOL_MULT};
    d.pools = &pool;
    d.n_pools = 1;
    assert_int_equal(hr_cfg_holder_set(h, &d, &err), HR_OK);
    free(ns);
    free(pname);
    free(pkey);

    hr_cfg_snapshot *s2 = hr_cfg_holder_get(h);
    assert_int_equal(hr_cfg_snapshot_version(s2), 2);
    /* The old snapshot is intact while held. */
    assert_int_equal(hr_cfg_snapshot_config(s1)->initial_multiplier_milli, 2000);
    assert_string_equal(hr_cfg_snapshot_config(s1)->excluded_ns[0], "kube-system");
    assert_int_equal(hr_cfg_snapshot_config(s2)->initial_multiplier_milli, 3000);
    assert_string_equal(hr_cfg_snapshot_config(s2)->excluded_ns[0], "team-x");
    const hr_config *c2 = hr_cfg_snapshot_config(s2);
    assert_true(c2->ns_selector.set);
    assert_int_equal(c2->ns_selector.n, 1);
    assert_string_equal(c2->ns_selector.req[0].key, HR_LABEL_MODE);
    assert_string_equal(c2->ns_selector.req[0].values[0], HR_MODE_MANAGED);
    assert_int_equal(c2->n_pools, 1);
    assert_string_equal(c2->pools[0].name, "batch");
    assert_string_equal(c2->pools[0].selector.req[0].key, "pool");
    assert_int_equal(c2->pools[0].set, HR_POOL_MULT);
    assert_int_equal(hr_cfg_snapshot_config(s1)->n_pools, 0);
    hr_cfg_snapshot_release(s1);
    hr_cfg_snapshot_release(s2);
    hr_cfg_holder_free(h);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(limits_map_missing),
        cmocka_unit_test(limits_map_present),
        cmocka_unit_test(only_missing_limits_added),
        cmocka_unit_test(group_member_born_at_group_value),
        cmocka_unit_test(sidecars_yes_init_no),
        cmocka_unit_test(limits_null_is_missing),
        cmocka_unit_test(max_multiplier_caps),
        cmocka_unit_test(tenant_fair_same_birth_limit),
        cmocka_unit_test(node_pools_birth_limit_is_top_level),
        cmocka_unit_test(node_pools_birth_limit_with_node_name),
        cmocka_unit_test(fractional_multiplier),
        cmocka_unit_test(birth_limits_on_grid),
        cmocka_unit_test(max_cpu_shared_pro_rata),
        cmocka_unit_test(max_cpu_counts_existing_limits_and_floors),
        cmocka_unit_test(bad_max_cpu_leaves_pod),
        cmocka_unit_test(limitrange_caps),
        cmocka_unit_test(quota_room_caps),
        cmocka_unit_test(vpa_writer_leaves_pod),
        cmocka_unit_test(vpa_writer_keeps_other_reasons),
        cmocka_unit_test(qos_classes_left_alone),
        cmocka_unit_test(qos_change_refused),
        cmocka_unit_test(opt_out),
        cmocka_unit_test(mirror_and_pod_level_resources),
        cmocka_unit_test(restart_container_policy),
        cmocka_unit_test(excluded_owner),
        cmocka_unit_test(namespaces),
        cmocka_unit_test(disabled_and_dry_run),
        cmocka_unit_test(only_pods_create),
        cmocka_unit_test(undecidable_object_allowed),
        cmocka_unit_test(uid_echoed_escaped),
        cmocka_unit_test(malformed_reviews_400),
        cmocka_unit_test(holder_snapshots),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
