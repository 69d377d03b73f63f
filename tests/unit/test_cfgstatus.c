/*
 * test_cfgstatus.c — the HeadroomConfig status the controller applies.
 *
 * The round trip is the point: a body is built, read back through the same
 * decoder the watch uses (as if the API server had stored it), and built
 * again. Then nothing may be left to write; a count moving is a "counts"
 * change (written at a slower pace); a refused spec flips Ready with a new
 * lastTransitionTime while the other condition keeps its own.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <cmocka.h>
#include <yyjson.h>

#include "controller/cfgstatus.h"
#include "kube/decode/decode.h"

typedef struct world {
    hr_arena a;
    hr_kcfg_status st;
    yyjson_doc *doc;
} world;

/* Store a body as the API server would: the object, with its generation. */
static void store(world *w, const char *body, int64_t generation)
{
    yyjson_mut_doc *m = yyjson_mut_doc_new(NULL);
    yyjson_doc *d = yyjson_read(body, strlen(body), 0);
    assert_non_null(d);
    yyjson_mut_val *root = yyjson_val_mut_copy(m, yyjson_doc_get_root(d));
    yyjson_mut_doc_set_root(m, root);
    yyjson_mut_val *meta = yyjson_mut_obj_get(root, "metadata");
    yyjson_mut_obj_add_int(m, meta, "generation", generation);
    if (w->doc)
        yyjson_doc_free(w->doc);
    w->doc = yyjson_mut_doc_imut_copy(m, NULL);
    yyjson_mut_doc_free(m);
    yyjson_doc_free(d);
    hr_err err;
    assert_int_equal(hr_decode_config_status(yyjson_doc_get_root(w->doc), &w->a, &w->st, &err),
                     HR_OK);
}

static hr_cfgstatus_diff build(const hr_cfgstatus_in *in, char **out)
{
    hr_buf b;
    hr_buf_init(&b, 0);
    hr_cfgstatus_diff d = hr_cfgstatus_build(in, &b);
    assert_false(hr_buf_failed(&b));
    *out = strdup(hr_buf_str(&b));
    hr_buf_free(&b);
    return d;
}

static const hr_kcondition *cond_of(const hr_kcfg_status *s, const char *type)
{
    for (size_t i = 0; i < s->n_cond; i++)
        if (strcmp(s->cond[i].type, type) == 0)
            return &s->cond[i];
    return NULL;
}

static void round_trip_and_transitions(void **state)
{
    (void)state;
    world w = {0};
    hr_arena_init(&w.a, 0);
    const char *quota_ns[] = {"team-a", "team-b"};
    hr_cfgstatus_in in = {
        .generation = 3,
        .gen_in_force = 3,
        .invalid = NULL,
        .dry_run = false,
        .managed_pods = 12,
        .managed_nodes = 2,
        .quota_ns = quota_ns,
        .n_quota_ns = 2,
        .observed = NULL,
        .now_unix = 1796025600, /* 2026-11-30T08:00:00Z */
    };
    char *body;
    /* Nothing observed yet: write. */
    assert_int_equal(build(&in, &body), HR_CFGST_CHANGED);
    store(&w, body, 3);
    free(body);
    assert_int_equal(w.st.observed_generation, 3);
    assert_int_equal(w.st.managed_pods, 12);
    assert_int_equal(w.st.managed_nodes, 2);
    const hr_kcondition *r = cond_of(&w.st, "Ready");
    assert_non_null(r);
    assert_string_equal(r->status, "True");
    assert_string_equal(r->reason, "Applied");
    assert_string_equal(r->last_transition, "2026-11-30T08:00:00Z");
    assert_int_equal(r->observed_generation, 3);
    const hr_kcondition *q = cond_of(&w.st, "LimitsCPUQuota");
    assert_non_null(q);
    assert_string_equal(q->status, "True");
    assert_non_null(strstr(q->message, ": team-a, team-b"));

    /* Stored and read back: nothing to write, an hour later too. */
    in.observed = &w.st;
    in.now_unix += 3600;
    assert_int_equal(build(&in, &body), HR_CFGST_SAME);
    free(body);

    /* Pods come and go: a counts-only change. */
    in.managed_pods = 13;
    assert_int_equal(build(&in, &body), HR_CFGST_COUNTS);
    store(&w, body, 3);
    free(body);
    assert_int_equal(w.st.managed_pods, 13);
    assert_string_equal(cond_of(&w.st, "Ready")->last_transition, "2026-11-30T08:00:00Z");

    /* A spec the controller refuses (generation 4): Ready flips, with a new
     * transition time and the reason; the quota condition keeps its time. */
    in.generation = 4;
    in.invalid = "headroomconfig cluster: spec.debouncePeriod: not a duration";
    in.now_unix += 60;
    assert_int_equal(build(&in, &body), HR_CFGST_CHANGED);
    store(&w, body, 4);
    free(body);
    r = cond_of(&w.st, "Ready");
    assert_string_equal(r->status, "False");
    assert_string_equal(r->reason, "InvalidSpec");
    assert_string_equal(r->message, "headroomconfig cluster: spec.debouncePeriod: not a duration; "
                                    "generation 3 stays in force");
    assert_string_equal(r->last_transition, "2026-11-30T09:01:00Z");
    assert_int_equal(r->observed_generation, 4);
    q = cond_of(&w.st, "LimitsCPUQuota");
    assert_string_equal(q->last_transition, "2026-11-30T08:00:00Z");
    assert_int_equal(q->observed_generation, 4);
    assert_int_equal(w.st.observed_generation, 4);

    /* Fixed, in dry run: True again (DryRun), another transition. */
    in.generation = 5;
    in.gen_in_force = 5;
    in.invalid = NULL;
    in.dry_run = true;
    in.n_quota_ns = 0;
    in.now_unix += 60;
    assert_int_equal(build(&in, &body), HR_CFGST_CHANGED);
    store(&w, body, 5);
    free(body);
    r = cond_of(&w.st, "Ready");
    assert_string_equal(r->status, "True");
    assert_string_equal(r->reason, "DryRun");
    assert_non_null(strstr(r->message, "spec.dryRun"));
    assert_string_equal(r->last_transition, "2026-11-30T09:02:00Z");
    q = cond_of(&w.st, "LimitsCPUQuota");
    assert_string_equal(q->status, "False");
    assert_string_equal(q->reason, "NoQuotaOnLimitsCPU");
    assert_string_equal(q->last_transition, "2026-11-30T09:02:00Z");

    /* The --dry-run flag says so. */
    in.dry_run_flag = true;
    assert_int_equal(build(&in, &body), HR_CFGST_CHANGED);
    assert_non_null(strstr(body, "--dry-run flag"));
    free(body);

    yyjson_doc_free(w.doc);
    hr_arena_free(&w.a);
}

static void invalid_before_any_good_config(void **state)
{
    (void)state;
    hr_cfgstatus_in in = {.generation = 1,
                          .gen_in_force = -1,
                          .invalid = "bad \"x\"\n",
                          .dry_run = true,
                          .now_unix = 0};
    char *body;
    assert_int_equal(build(&in, &body), HR_CFGST_CHANGED);
    /* Valid JSON whatever the message holds. */
    yyjson_doc *d = yyjson_read(body, strlen(body), 0);
    assert_non_null(d);
    yyjson_val *c0 = yyjson_arr_get(
        yyjson_obj_get(yyjson_obj_get(yyjson_doc_get_root(d), "status"), "conditions"), 0);
    assert_string_equal(yyjson_get_str(yyjson_obj_get(c0, "message")),
                        "bad \"x\"\n; defaults stay in force, in dry run");
    assert_string_equal(yyjson_get_str(yyjson_obj_get(c0, "lastTransitionTime")),
                        "1970-01-01T00:00:00Z");
    yyjson_doc_free(d);
    free(body);
}

static void many_quota_namespaces_are_cut(void **state)
{
    (void)state;
    char names[30][16];
    const char *ns[30];
    for (int i = 0; i < 30; i++) {
        snprintf(names[i], sizeof names[i], "ns-%02d", i);
        ns[i] = names[i];
    }
    hr_cfgstatus_in in = {.generation = 1, .gen_in_force = 1, .quota_ns = ns, .n_quota_ns = 30};
    char *body;
    build(&in, &body);
    assert_non_null(strstr(body, "ns-19 and 10 more"));
    assert_null(strstr(body, "ns-20"));
    free(body);
}

/* Design §2.11: status.nodePools round-trips; a pool's node count moving is
 * a counts change, another set of pools a change; no pools, no field. */
static void node_pools_round_trip(void **state)
{
    (void)state;
    world w = {0};
    hr_arena_init(&w.a, 0);
    static const hr_node_pool pools[] = {{.name = "batch"}, {.name = "latency"}};
    int64_t nodes[] = {3, 0};
    hr_cfgstatus_in in = {
        .generation = 2,
        .gen_in_force = 2,
        .managed_pods = 1,
        .managed_nodes = 1,
        .pools = pools,
        .pool_nodes = nodes,
        .n_pools = 2,
        .now_unix = 1796025600,
    };
    char *body;
    assert_int_equal(build(&in, &body), HR_CFGST_CHANGED);
    assert_non_null(strstr(
        body,
        "\"nodePools\":[{\"name\":\"batch\",\"nodes\":3},{\"name\":\"latency\",\"nodes\":0}]"));
    store(&w, body, 2);
    free(body);
    assert_int_equal(w.st.n_pools, 2);
    assert_string_equal(w.st.pools[1].name, "latency");
    assert_int_equal(w.st.pools[0].nodes, 3);
    in.observed = &w.st;
    assert_int_equal(build(&in, &body), HR_CFGST_SAME); /* stored: nothing to write */
    free(body);
    nodes[1] = 1;
    assert_int_equal(build(&in, &body), HR_CFGST_COUNTS); /* a node moved pools */
    store(&w, body, 2);
    free(body);
    assert_int_equal(w.st.pools[1].nodes, 1);
    in.n_pools = 1; /* a pool removed (with a new generation in life) */
    assert_int_equal(build(&in, &body), HR_CFGST_CHANGED);
    free(body);
    in.n_pools = 0;
    assert_int_equal(build(&in, &body), HR_CFGST_CHANGED);
    assert_null(strstr(body, "nodePools"));
    store(&w, body, 2);
    free(body);
    assert_int_equal(build(&in, &body), HR_CFGST_SAME);
    free(body);
    yyjson_doc_free(w.doc);
    hr_arena_free(&w.a);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(round_trip_and_transitions),
        cmocka_unit_test(invalid_before_any_good_config),
        cmocka_unit_test(many_quota_namespaces_are_cut),
        cmocka_unit_test(node_pools_round_trip),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
