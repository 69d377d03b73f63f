/*
 * test_eligibility_parity.c — the webhook and the controller give the same
 * eligibility answer, with the same reason, for the same pod (design §4,
 * §8).
 *
 * Why a table across both paths: the two used to keep separate rule lists
 * that had drifted apart (the webhook never read a RestartContainer resize
 * policy). Each row is one pod, fed
 *   - to the webhook path: an AdmissionReview CREATE of the pod as the API
 *     server sends it at birth (generateName, no node, no status) through
 *     hr_admission_review, with namespace labels looked up in the cache as
 *     `headroom run` does; the answer is hr_wh_result.reason;
 *   - to the controller path: the same pod as it is stored once running
 *     (named, bound to a node, Running with container resources in its
 *     status) through the pod decoder, the cache, the node snapshot (which
 *     fills in the pod's context) and the reconcile; the answer is the
 *     reconcile's hr_pod_plan.reason;
 * and both answers must equal the row's. Both paths share one cache and one
 * HeadroomConfig. The one rule the two do not share on purpose (Windows: a
 * birth limit needs no in-place resize) has its own test below, so a change
 * to it is a visible decision.
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

#include "cache/cache.h"
#include "controller/nodesnap.h"
#include "controller/reconcile.h"
#include "core/eligibility.h"
#include "core/names.h"
#include "kube/decode/decode.h"
#include "webhook/admission.h"

#define OWN_NS "headroom-system"
#define NODE "n1"

/* ---------------------------------------------------------------- the table */

typedef struct parity_case {
    const char *what;
    const char *ns;
    const char *meta; /* extra metadata members, "" for none */
    const char *spec; /* the spec's members (containers, initContainers, ...) */
    hr_reason want;
} parity_case;

#define REQ(cpu) "{\"requests\":{\"cpu\":\"" cpu "\"}}"
#define APPC(name, res) "{\"name\":\"" name "\",\"image\":\"x\",\"resources\":" res "}"
#define ONE_APP "\"containers\":[" APPC("a", REQ("500m")) "]"
#define RESTART_CPU \
    "\"resizePolicy\":[{\"resourceName\":\"cpu\",\"restartPolicy\":\"RestartContainer\"}]"
#define SIDECAR(name, extra, res)                                               \
    "{\"name\":\"" name "\",\"image\":\"x\",\"restartPolicy\":\"Always\"" extra \
    ",\"resources\":" res "}"
#define INITC(name, extra, res) \
    "{\"name\":\"" name "\",\"image\":\"x\"" extra ",\"resources\":" res "}"
#define OWNER(api, kind)                                                                     \
    "\"ownerReferences\":[{\"apiVersion\":\"" api "\",\"kind\":\"" kind "\",\"name\":\"o\"," \
    "\"uid\":\"u\",\"controller\":true}]"

static const parity_case cases[] = {
    {"plain Burstable pod", "team-a", "", ONE_APP, HR_MANAGED},
    {"mode label managed", "team-a", "\"labels\":{\"" HR_LABEL_MODE "\":\"managed\"}", ONE_APP,
     HR_MANAGED},
    /* Namespaces. */
    {"namespace not selected", "plain", "", ONE_APP, HR_R_NS_NOT_SELECTED},
    {"namespace excluded (excludedNamespaces)", "kube-system", "", ONE_APP, HR_R_NS_EXCLUDED},
    {"namespace excluded (the controller's own)", OWN_NS, "", ONE_APP, HR_R_NS_EXCLUDED},
    /* Opt-out, fail closed. */
    {"opted out by label", "team-a", "\"labels\":{\"" HR_LABEL_MODE "\":\"unmanaged\"}", ONE_APP,
     HR_R_OPTED_OUT},
    {"opted out by annotation", "team-a", "\"annotations\":{\"" HR_LABEL_MODE "\":\"unmanaged\"}",
     ONE_APP, HR_R_OPTED_OUT},
    {"unknown mode keyword", "team-a", "\"labels\":{\"" HR_LABEL_MODE "\":\"Managed\"}", ONE_APP,
     HR_R_OPTED_OUT},
    /* QoS. */
    {"QoS BestEffort", "team-a", "", "\"containers\":[{\"name\":\"a\",\"image\":\"x\"}]",
     HR_R_BEST_EFFORT},
    {"QoS Guaranteed", "team-a", "",
     "\"containers\":[" APPC("a", "{\"requests\":{\"cpu\":\"1\",\"memory\":\"1Gi\"},"
                                  "\"limits\":{\"cpu\":\"1\",\"memory\":\"1Gi\"}}") "]",
     HR_R_GUARANTEED},
    {"no CPU request (memory only)", "team-a", "",
     "\"containers\":[" APPC("a", "{\"requests\":{\"memory\":\"1Gi\"}}") "]", HR_R_NO_CPU_REQUEST},
    {"every CPU request already limited", "team-a", "",
     "\"containers\":[" APPC("a", "{\"requests\":{\"cpu\":\"1\"},\"limits\":{\"cpu\":\"2\"}}") "]",
     HR_MANAGED},
    /* RestartContainer. */
    {"RestartContainer on an app container", "team-a", "",
     "\"containers\":[{\"name\":\"a\",\"image\":\"x\"," RESTART_CPU
     ",\"resources\":" REQ("500m") "}]",
     HR_R_RESTART_POLICY},
    {"RestartContainer on a sidecar", "team-a", "",
     "\"initContainers\":[" SIDECAR("s", "," RESTART_CPU, REQ("50m")) "]," ONE_APP,
     HR_R_RESTART_POLICY},
    {"RestartContainer on a plain init container (never resized)", "team-a", "",
     "\"initContainers\":[" INITC("i", "," RESTART_CPU, REQ("50m")) "]," ONE_APP, HR_MANAGED},
    {"RestartContainer for memory only", "team-a", "",
     "\"containers\":[{\"name\":\"a\",\"image\":\"x\",\"resizePolicy\":[{\"resourceName\":"
     "\"memory\",\"restartPolicy\":\"RestartContainer\"}],\"resources\":" REQ("500m") "}]",
     HR_MANAGED},
    /* Sidecars (restartable init containers) are resizable; init
     * containers are not. */
    {"sidecar and app", "team-a", "",
     "\"initContainers\":[" SIDECAR("s", "", REQ("50m")) "]," ONE_APP, HR_MANAGED},
    {"only the sidecar requests CPU", "team-a", "",
     "\"initContainers\":[" SIDECAR(
         "s", "", REQ("50m")) "],"
                              "\"containers\":[" APPC("a",
                                                      "{\"requests\":{\"memory\":\"64Mi\"}}") "]",
     HR_MANAGED},
    {"only an init container requests CPU", "team-a", "",
     "\"initContainers\":[" INITC(
         "i", "", REQ("50m")) "],"
                              "\"containers\":[" APPC("a",
                                                      "{\"requests\":{\"memory\":\"64Mi\"}}") "]",
     HR_R_NO_CPU_REQUEST},
    /* The rest of design §4 that holds at birth. */
    {"mirror pod", "team-a", "\"annotations\":{\"kubernetes.io/config.mirror\":\"x\"}", ONE_APP,
     HR_R_MIRROR},
    {"pod-level resources", "team-a", "", "\"resources\":{\"requests\":{\"cpu\":\"1\"}}," ONE_APP,
     HR_R_POD_RESOURCES},
    {"invalid max-cpu", "team-a", "\"annotations\":{\"" HR_ANN_MAX_CPU "\":\"lots\"}", ONE_APP,
     HR_R_BAD_MAX_CPU},
    {"valid max-cpu", "team-a", "\"annotations\":{\"" HR_ANN_MAX_CPU "\":\"3\"}", ONE_APP,
     HR_MANAGED},
    {"owner excluded (a Job)", "team-a", OWNER("batch/v1", "Job"), ONE_APP, HR_R_OWNER_EXCLUDED},
    {"owner not excluded (a ReplicaSet)", "team-a", OWNER("apps/v1", "ReplicaSet"), ONE_APP,
     HR_MANAGED},
    /* Several rules fail: both report the first in the same order. */
    {"opted out, mirror and BestEffort", "team-a",
     "\"labels\":{\"" HR_LABEL_MODE "\":\"unmanaged\"},"
     "\"annotations\":{\"kubernetes.io/config.mirror\":\"x\"}",
     "\"containers\":[{\"name\":\"a\",\"image\":\"x\"}]", HR_R_OPTED_OUT},
    {"mirror and BestEffort", "team-a", "\"annotations\":{\"kubernetes.io/config.mirror\":\"x\"}",
     "\"containers\":[{\"name\":\"a\",\"image\":\"x\"}]", HR_R_BEST_EFFORT},
    {"mirror, RestartContainer and a bad max-cpu", "team-a",
     "\"annotations\":{\"kubernetes.io/config.mirror\":\"x\",\"" HR_ANN_MAX_CPU "\":\"x\"}",
     "\"containers\":[{\"name\":\"a\",\"image\":\"x\"," RESTART_CPU
     ",\"resources\":" REQ("500m") "}]",
     HR_R_RESTART_POLICY},
    {"pod-level resources and an excluded owner", "team-a", OWNER("batch/v1", "Job"),
     "\"resources\":{\"requests\":{\"cpu\":\"1\"}}," ONE_APP, HR_R_POD_RESOURCES},
};

#define N_CASES (sizeof cases / sizeof cases[0])

/* ------------------------------------------------------------ the world */

/* One cache for both paths: namespaces, a node, the HeadroomConfig, and
 * (for the controller path) every row's pod. */
typedef struct world {
    hr_cache *cache;
    const hr_config *cfg; /* the cache's config in force */
} world;

static yyjson_doc *parse_or_fail(const char *json)
{
    yyjson_doc *d = yyjson_read(json, strlen(json), 0);
    if (d == NULL)
        fail_msg("test JSON does not parse: %s", json);
    return d;
}

static void put_namespace(hr_cache *c, const char *json)
{
    yyjson_doc *d = parse_or_fail(json);
    hr_arena a;
    hr_arena_init(&a, 4096);
    hr_knamespace kn;
    hr_err err;
    if (hr_decode_namespace(yyjson_doc_get_root(d), &a, &kn, &err) != HR_OK ||
        hr_cache_put_namespace(c, &kn, &err) != HR_OK)
        fail_msg("namespace: %s", err.msg);
    hr_arena_free(&a);
    yyjson_doc_free(d);
}

static void world_init(world *w)
{
    hr_err err;
    assert_int_equal(hr_cache_new(&w->cache, &err), HR_OK);
    put_namespace(w->cache, "{\"metadata\":{\"name\":\"team-a\",\"labels\":{\"" HR_LABEL_MODE
                            "\":\"managed\"}}}");
    put_namespace(w->cache, "{\"metadata\":{\"name\":\"plain\",\"labels\":{\"team\":\"b\"}}}");
    put_namespace(w->cache, "{\"metadata\":{\"name\":\"kube-system\",\"labels\":{\"" HR_LABEL_MODE
                            "\":\"managed\"}}}");
    put_namespace(w->cache, "{\"metadata\":{\"name\":\"" OWN_NS "\",\"labels\":{\"" HR_LABEL_MODE
                            "\":\"managed\"}}}");

    yyjson_doc *d = parse_or_fail("{\"metadata\":{\"name\":\"" NODE
                                  "\",\"labels\":{\"kubernetes.io/os\":\"linux\"}},"
                                  "\"status\":{\"allocatable\":{\"cpu\":\"8\",\"memory\":\"32Gi\"},"
                                  "\"conditions\":[{\"type\":\"Ready\",\"status\":\"True\"}]}}");
    hr_arena a;
    hr_arena_init(&a, 4096);
    hr_knode kn;
    if (hr_decode_node(yyjson_doc_get_root(d), &a, &kn, &err) != HR_OK ||
        hr_cache_put_node(w->cache, &kn, &err) != HR_OK)
        fail_msg("node: %s", err.msg);
    hr_arena_free(&a);
    yyjson_doc_free(d);

    /* Live, with an excluded owner; kube-system stays excluded by default. */
    d = parse_or_fail("{\"kind\":\"HeadroomConfig\",\"metadata\":{\"name\":\"cluster\","
                      "\"generation\":1},\"spec\":{\"dryRun\":false,"
                      "\"excludedOwners\":[{\"kind\":\"Job\",\"apiGroup\":\"batch\"}]}}");
    hr_arena_init(&a, 4096);
    hr_kconfig kc;
    if (hr_decode_config(yyjson_doc_get_root(d), &a, &kc, &err) != HR_OK ||
        hr_cache_put_config(w->cache, &kc, 1, &a, &err) != HR_OK)
        fail_msg("config: %s", err.msg);
    hr_arena_free(&a); /* emptied by put_config */
    yyjson_doc_free(d);
    const char *invalid = NULL;
    w->cfg = hr_cache_config(w->cache, &invalid);
    assert_null(invalid);
    assert_true(w->cfg->present);
    assert_int_equal(w->cfg->n_excluded_owners, 1);
}

/* ----------------------------------------------------------- pod texts */

static char *text(size_t cap)
{
    char *s = malloc(cap);
    assert_non_null(s);
    return s;
}

/* The pod at birth: what a CREATE review carries. */
static char *birth_pod(const parity_case *c)
{
    size_t cap = strlen(c->meta) + strlen(c->spec) + 256;
    char *s = text(cap);
    snprintf(s, cap,
             "{\"apiVersion\":\"v1\",\"kind\":\"Pod\",\"metadata\":{\"generateName\":\"job-\","
             "\"namespace\":\"%s\"%s%s},\"spec\":{%s}}",
             c->ns, c->meta[0] ? "," : "", c->meta, c->spec);
    return s;
}

/* Statuses with resources for every container of one spec array. */
static void statuses(hr_buf *b, yyjson_val *arr)
{
    size_t i, max;
    yyjson_val *e;
    hr_buf_putc(b, '[');
    yyjson_arr_foreach(arr, i, max, e)
    {
        hr_buf_printf(b, "%s{\"name\":\"%s\",\"ready\":true,\"resources\":{}}", i ? "," : "",
                      yyjson_get_str(yyjson_obj_get(e, "name")));
    }
    hr_buf_putc(b, ']');
}

/* The same pod once stored and running: named, bound, Running, its kubelet
 * reporting container resources (so the rules about a pod's life on a
 * node all pass, and only the row's own rule can fail). */
static char *running_pod(const parity_case *c, size_t idx)
{
    size_t cap = strlen(c->spec) + 8;
    char *spec = text(cap);
    snprintf(spec, cap, "{%s}", c->spec);
    yyjson_doc *d = parse_or_fail(spec);
    yyjson_val *root = yyjson_doc_get_root(d);
    hr_buf st;
    hr_buf_init(&st, 256);
    hr_buf_puts(&st, "{\"phase\":\"Running\",\"containerStatuses\":");
    statuses(&st, yyjson_obj_get(root, "containers"));
    hr_buf_puts(&st, ",\"initContainerStatuses\":");
    statuses(&st, yyjson_obj_get(root, "initContainers"));
    hr_buf_putc(&st, '}');
    assert_false(hr_buf_failed(&st));
    yyjson_doc_free(d);
    free(spec);

    cap = strlen(c->meta) + strlen(c->spec) + st.len + 256;
    char *s = text(cap);
    snprintf(s, cap,
             "{\"apiVersion\":\"v1\",\"kind\":\"Pod\",\"metadata\":{\"name\":\"p%02zu\","
             "\"namespace\":\"%s\",\"uid\":\"00000000-0000-0000-0000-0000000000%02zu\","
             "\"resourceVersion\":\"%zu\"%s%s},\"spec\":{\"nodeName\":\"" NODE "\",%s},"
             "\"status\":%s}",
             idx, c->ns, idx, 100 + idx, c->meta[0] ? "," : "", c->meta, c->spec, hr_buf_str(&st));
    hr_buf_free(&st);
    return s;
}

static char *review(const parity_case *c)
{
    char *pod = birth_pod(c);
    size_t cap = strlen(pod) + 512;
    char *s = text(cap);
    snprintf(s, cap,
             "{\"apiVersion\":\"admission.k8s.io/v1\",\"kind\":\"AdmissionReview\","
             "\"request\":{\"uid\":\"u\",\"kind\":{\"group\":\"\",\"version\":\"v1\","
             "\"kind\":\"Pod\"},\"resource\":{\"group\":\"\",\"version\":\"v1\","
             "\"resource\":\"pods\"},\"namespace\":\"%s\",\"operation\":\"CREATE\","
             "\"object\":%s}}",
             c->ns, pod);
    free(pod);
    return s;
}

/* ------------------------------------------------------- the two paths */

/* What `headroom run` gives the webhook: the namespace's labels and
 * LimitRange bounds from the cache, copied into the review's arena. */
static bool ns_lookup(void *ud, const char *ns, hr_arena *a, hr_labels *labels,
                      hr_limit_bounds *bounds)
{
    world *w = ud;
    bool ok = false;
    hr_cache_lock(w->cache);
    hr_cns_view v;
    if (hr_cache_ns_get(w->cache, ns, &v)) {
        const char **kv = hr_arena_calloc(a, 2 * (size_t)v.labels.n + 1, sizeof *kv);
        ok = kv != NULL;
        for (uint32_t i = 0; ok && i < 2 * v.labels.n; i++)
            ok = (kv[i] = hr_arena_strdup(a, v.labels.kv[i])) != NULL;
        if (ok) {
            *labels = (hr_labels){kv, v.labels.n};
            *bounds = hr_cache_ns_bounds(w->cache, ns);
        }
    }
    hr_cache_unlock(w->cache);
    return ok;
}

typedef struct webhook_answer {
    hr_reason reason;
    hr_wh_outcome outcome;
    char why[HR_WH_WHY_MAX];
} webhook_answer;

static webhook_answer webhook_path(world *w, const parity_case *c)
{
    char *in = review(c);
    hr_wh_env env = {.cfg = w->cfg, .own_ns = OWN_NS, .ns_lookup = ns_lookup, .ns_ud = w};
    hr_wh_result r;
    hr_err err;
    assert_int_equal(hr_admission_review(&env, in, strlen(in), &r, &err), HR_OK);
    if (r.http_status != 200 || !r.has_reason)
        fail_msg("%s: webhook did not reach the rules: HTTP %d, %s", c->what, r.http_status, r.why);
    webhook_answer a = {r.reason, r.outcome, ""};
    snprintf(a.why, sizeof a.why, "%s", r.why);
    hr_wh_result_free(&r);
    free(in);
    return a;
}

/* Every row's pod into the cache, then one snapshot of the node and one
 * reconcile, as the controller's worker does; reasons[i] for row i. */
static void controller_path(world *w, hr_reason *reasons)
{
    hr_err err;
    for (size_t i = 0; i < N_CASES; i++) {
        char *json = running_pod(&cases[i], i);
        yyjson_doc *d = parse_or_fail(json);
        hr_arena a;
        hr_arena_init(&a, 4096);
        hr_kpod kp;
        hr_cpod_status cs = {0, false, 0, 0};
        if (hr_decode_pod(yyjson_doc_get_root(d), &a, &kp, &err) != HR_OK ||
            hr_cache_put_pod(w->cache, &kp, &cs, &err) != HR_OK)
            fail_msg("%s: controller path: %s", cases[i].what, err.msg);
        hr_arena_free(&a);
        yyjson_doc_free(d);
        free(json);
    }
    hr_arena a;
    hr_arena_init(&a, 65536);
    hr_nodesnap snap;
    hr_nodesnap_opts o = {OWN_NS, NULL, 0, false, 0};
    assert_int_equal(hr_nodesnap_take(w->cache, NODE, &o, &a, &snap, &err), HR_OK);
    assert_int_equal(snap.node.n, N_CASES);
    hr_reconcile rec;
    assert_int_equal(hr_reconcile_node(&snap.cfg, &snap.node, 0, &a, &rec, &err), HR_OK);
    for (size_t i = 0; i < N_CASES; i++)
        reasons[i] = HR_R_COUNT_;
    for (size_t k = 0; k < snap.node.n; k++) {
        unsigned idx;
        assert_int_equal(sscanf(snap.node.pods[k].name, "p%u", &idx), 1);
        assert_true(idx < N_CASES);
        reasons[idx] = rec.pods[k].reason;
    }
    hr_arena_free(&a);
}

/* ---------------------------------------------------------------- tests */

static void same_answer_same_reason(void **state)
{
    (void)state;
    world w;
    world_init(&w);
    hr_reason ctl[N_CASES];
    controller_path(&w, ctl);
    int bad = 0;
    for (size_t i = 0; i < N_CASES; i++) {
        const parity_case *c = &cases[i];
        webhook_answer wh = webhook_path(&w, c);
        bool ok = wh.reason == c->want && ctl[i] == c->want;
        /* Not managed means no patch; managed means a patch unless every
         * request already has its limit. */
        if (c->want != HR_MANAGED && wh.outcome != HR_WH_UNCHANGED)
            ok = false;
        printf("%-4s %-58s webhook %-26s controller %s\n", ok ? "ok" : "FAIL", c->what,
               hr_reason_str(wh.reason), hr_reason_str(ctl[i]));
        if (!ok) {
            printf("     want %s; webhook said \"%s\" (%s)\n", hr_reason_str(c->want), wh.why,
                   hr_wh_outcome_str(wh.outcome));
            bad++;
        }
    }
    hr_cache_free(w.cache);
    if (bad)
        fail_msg("%d of %zu pods: the webhook and the controller disagree (or the table does)", bad,
                 N_CASES);
}

/* The one rule the webhook does not share, on purpose: a Windows pod is
 * not managed (its kubelet cannot resize in place), but it is given its
 * birth limit (which needs no resize). If this changes, it is a decision:
 * move the row into the table above. */
static void windows_is_birth_only(void **state)
{
    (void)state;
    world w;
    world_init(&w);
    const parity_case c = {"windows pod", "team-a", "", "\"os\":{\"name\":\"windows\"}," ONE_APP,
                           HR_R_WINDOWS};
    webhook_answer wh = webhook_path(&w, &c);
    assert_int_equal(wh.reason, HR_MANAGED);
    assert_int_equal(wh.outcome, HR_WH_MUTATED);

    char *json = running_pod(&c, 0);
    yyjson_doc *d = parse_or_fail(json);
    hr_arena a;
    hr_arena_init(&a, 4096);
    hr_kpod kp;
    hr_cpod_status cs = {0, false, 0, 0};
    hr_err err;
    assert_int_equal(hr_decode_pod(yyjson_doc_get_root(d), &a, &kp, &err), HR_OK);
    assert_int_equal(hr_cache_put_pod(w.cache, &kp, &cs, &err), HR_OK);
    hr_arena_free(&a);
    yyjson_doc_free(d);
    free(json);
    hr_arena_init(&a, 16384);
    hr_nodesnap snap;
    hr_nodesnap_opts o = {OWN_NS, NULL, 0, false, 0};
    assert_int_equal(hr_nodesnap_take(w.cache, NODE, &o, &a, &snap, &err), HR_OK);
    assert_int_equal(snap.node.n, 1);
    hr_reconcile rec;
    assert_int_equal(hr_reconcile_node(&snap.cfg, &snap.node, 0, &a, &rec, &err), HR_OK);
    assert_int_equal(rec.pods[0].reason, HR_R_WINDOWS);
    hr_arena_free(&a);
    hr_cache_free(w.cache);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(same_answer_same_reason),
        cmocka_unit_test(windows_is_birth_only),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
