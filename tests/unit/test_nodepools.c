/*
 * test_nodepools.c — spec.nodePools (design §2.11): the one effective-config
 * per-node rule (first matching pool, else the top level; an unknown node
 * is the top level; only the overrides a pool sets replace the top-level
 * values), its validation (unique names, a selector, the top-level
 * bounds), the decoder (a bad pool makes the whole spec invalid, naming
 * the field) and what counts as a change that re-plans only some nodes.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <cmocka.h>
#include <yyjson.h>

#include "core/config.h"
#include "kube/decode/decode.h"

static const char *const v_batch[] = {"batch"};
static const char *const v_lat[] = {"latency"};
static const hr_requirement req_batch[] = {{"pool", HR_SEL_IN, v_batch, 1}};
static const hr_requirement req_lat[] = {{"pool", HR_SEL_IN, v_lat, 1}};
static const hr_requirement req_gpu[] = {{"gpu", HR_SEL_EXISTS, NULL, 0}};

/* batch: unbounded multiplier; latency: 2x and a wider deadband; gpu:
 * matches any node with a gpu label, after the others. */
static const hr_node_pool pools[] = {
    {"batch", {true, req_batch, 1}, HR_POOL_MULT, 0, 0, 0, 0, 0},
    {"latency",
     {true, req_lat, 1},
     HR_POOL_MULT | HR_POOL_FLOOR | HR_POOL_GROW,
     200,
     2000,
     0,
     25,
     0},
    {"gpu", {true, req_gpu, 1}, HR_POOL_QUANTUM | HR_POOL_SHRINK, 0, 0, 50, 0, 1},
};

static hr_config with_pools(void)
{
    hr_config c;
    hr_config_defaults(&c);
    c.present = true;
    c.pools = pools;
    c.n_pools = 3;
    return c;
}

static void effective_config_per_node(void **state)
{
    (void)state;
    hr_config top = with_pools();
    const char *kv_batch[] = {"pool", "batch", "gpu", "a100"};
    const char *kv_lat[] = {"pool", "latency"};
    const char *kv_gpu[] = {"gpu", "h100"};
    const char *kv_none[] = {"pool", "web"};
    hr_labels l_batch = {kv_batch, 2}, l_lat = {kv_lat, 1}, l_gpu = {kv_gpu, 1},
              l_none = {kv_none, 1};
    static const struct {
        const char *what;
        int labels; /* 0 batch, 1 latency, 2 gpu, 3 none, 4 unknown node */
        const char *pool;
        int64_t floor, mult, quantum;
        int grow, shrink;
    } rows[] = {
        /* the first match wins: batch also has a gpu label */
        {"batch (first match)", 0, "batch", 1000, 0, 10, 10, 5},
        {"latency", 1, "latency", 200, 2000, 10, 25, 5},
        {"gpu", 2, "gpu", 1000, 10000, 50, 10, 1},
        {"no pool matches", 3, NULL, 1000, 10000, 10, 10, 5},
        {"unknown node", 4, NULL, 1000, 10000, 10, 10, 5},
    };
    const hr_labels *ls[] = {&l_batch, &l_lat, &l_gpu, &l_none, NULL};
    for (size_t i = 0; i < sizeof rows / sizeof rows[0]; i++) {
        hr_config out;
        const hr_node_pool *p = hr_config_for_node(&top, ls[rows[i].labels], &out);
        if (rows[i].pool == NULL)
            assert_null(p);
        else
            assert_string_equal(p->name, rows[i].pool);
        assert_string_equal(hr_pool_name(p), rows[i].pool ? rows[i].pool : "(top level)");
        if (out.min_burst_floor != rows[i].floor || out.max_multiplier_milli != rows[i].mult ||
            out.quantum != rows[i].quantum || out.grow_percent != rows[i].grow ||
            out.shrink_percent != rows[i].shrink)
            fail_msg("%s: floor %lld mult %lld quantum %lld grow %d shrink %d", rows[i].what,
                     (long long)out.min_burst_floor, (long long)out.max_multiplier_milli,
                     (long long)out.quantum, out.grow_percent, out.shrink_percent);
        /* everything else is the top level's */
        assert_int_equal(out.debounce_ms, top.debounce_ms);
        assert_int_equal(out.n_pools, 3);
    }
    /* out may be the config itself */
    hr_config self = top;
    assert_string_equal(hr_config_for_node(&self, &l_lat, &self)->name, "latency");
    assert_int_equal(self.max_multiplier_milli, 2000);
    assert_int_equal(hr_config_pool_index(&top, &l_gpu), 2);
    assert_int_equal(hr_config_pool_index(&top, NULL), -1);
}

static void validation(void **state)
{
    (void)state;
    hr_config c = with_pools();
    assert_null(hr_config_validate(&c));
    hr_node_pool bad[2] = {pools[0], pools[1]};
    c.pools = bad;
    c.n_pools = 2;
    bad[1].name = "batch";
    assert_string_equal(hr_config_validate(&c), "spec.nodePools[].name must be unique");
    bad[1] = pools[1];
    bad[1].max_multiplier_milli = 500; /* between 0 and 1, as at the top level */
    assert_string_equal(
        hr_config_validate(&c),
        "spec.nodePools[].overrides.maxMultiplier must be 0 (no cap) or at least 1");
    bad[1] = pools[1];
    bad[1].max_multiplier_milli = 100001;
    assert_string_equal(hr_config_validate(&c),
                        "spec.nodePools[].overrides.maxMultiplier must be between 0 and 100");
    bad[1] = pools[1];
    bad[1].set |= HR_POOL_QUANTUM; /* quantum 0, now set */
    assert_string_equal(hr_config_validate(&c),
                        "spec.nodePools[].overrides.quantum must be at least 1m");
    bad[1] = pools[1];
    bad[1].selector.set = false;
    assert_string_equal(hr_config_validate(&c), "spec.nodePools[].nodeSelector is required");
    /* a value not set is not checked: it is the top level's */
    bad[1] = pools[1];
    bad[1].quantum = -5;
    assert_null(hr_config_validate(&c));
}

static void same_but_node_settings(void **state)
{
    (void)state;
    hr_config a = with_pools(), b = a;
    assert_true(hr_config_same_but_node_settings(&a, &b));
    b.max_multiplier_milli = 3000;
    b.n_pools = 1; /* the pools and the settings they override do not count */
    assert_true(hr_config_same_but_node_settings(&a, &b));
    b = a;
    b.debounce_ms = 1;
    assert_false(hr_config_same_but_node_settings(&a, &b));
    b = a;
    b.dry_run = !a.dry_run;
    assert_false(hr_config_same_but_node_settings(&a, &b));
    b = a;
    static const char *const other[] = {"ops"};
    b.excluded_ns = other;
    assert_false(hr_config_same_but_node_settings(&a, &b));
}

typedef struct parsed {
    yyjson_doc *doc;
    hr_arena arena;
    hr_err err;
} parsed;

static hr_status decode(parsed *p, const char *spec, hr_kconfig *kc)
{
    char json[2048];
    snprintf(json, sizeof json,
             "{\"kind\":\"HeadroomConfig\",\"metadata\":{\"name\":\"cluster\"},\"spec\":%s}", spec);
    p->doc = yyjson_read(json, strlen(json), 0);
    if (!p->doc)
        fail_msg("test JSON does not parse: %s", json);
    hr_arena_init(&p->arena, 0);
    hr_err_clear(&p->err);
    return hr_decode_config(yyjson_doc_get_root(p->doc), &p->arena, kc, &p->err);
}

static void done(parsed *p)
{
    yyjson_doc_free(p->doc);
    hr_arena_free(&p->arena);
}

static void decoder(void **state)
{
    (void)state;
    parsed p;
    hr_kconfig kc;
    if (decode(&p,
               "{\"maxMultiplier\":\"4\",\"nodePools\":["
               "{\"name\":\"batch\",\"nodeSelector\":{\"matchLabels\":{\"pool\":\"batch\"}},"
               "\"overrides\":{\"maxMultiplier\":\"0\",\"minBurstFloor\":\"2\","
               "\"quantum\":\"5m\",\"deadband\":{\"growPercent\":30,\"shrinkPercent\":1}}},"
               "{\"name\":\"latency\",\"nodeSelector\":{\"matchExpressions\":[{\"key\":\"pool\","
               "\"operator\":\"In\",\"values\":[\"latency\"]}]},"
               "\"overrides\":{\"maxMultiplier\":\"1.5\"}},"
               "{\"name\":\"rest\",\"nodeSelector\":{}}]}",
               &kc) != HR_OK)
        fail_msg("%s", p.err.msg);
    const hr_config *c = &kc.cfg;
    assert_int_equal(c->n_pools, 3);
    assert_string_equal(c->pools[0].name, "batch");
    assert_int_equal(c->pools[0].set, HR_POOL_MULT | HR_POOL_FLOOR | HR_POOL_QUANTUM |
                                          HR_POOL_GROW | HR_POOL_SHRINK);
    assert_int_equal(c->pools[0].max_multiplier_milli, 0);
    assert_int_equal(c->pools[0].min_burst_floor, 2000);
    assert_int_equal(c->pools[0].quantum, 5);
    assert_int_equal(c->pools[0].grow_percent, 30);
    assert_int_equal(c->pools[0].shrink_percent, 1);
    assert_int_equal(c->pools[1].set, HR_POOL_MULT);
    assert_int_equal(c->pools[1].max_multiplier_milli, 1500);
    assert_int_equal(c->pools[2].set, 0);
    const char *kv[] = {"pool", "latency"};
    hr_labels l = {kv, 1};
    hr_config eff;
    assert_string_equal(hr_config_for_node(c, &l, &eff)->name, "latency");
    assert_int_equal(eff.max_multiplier_milli, 1500);
    assert_int_equal(eff.min_burst_floor, 1000); /* the top level's */
    const char *kv2[] = {"pool", "web"};
    hr_labels l2 = {kv2, 1};
    assert_string_equal(hr_config_for_node(c, &l2, &eff)->name, "rest"); /* {} matches all */
    assert_int_equal(eff.max_multiplier_milli, 4000);
    done(&p);

    /* A bad pool refuses the whole spec (the last good config stays in
     * force, design §11), naming the field. */
    static const struct {
        const char *pools, *want;
    } bad[] = {
        {"[{\"name\":\"a\",\"nodeSelector\":{}},{\"name\":\"a\",\"nodeSelector\":{}}]",
         "spec.nodePools[1].name: duplicate pool name \"a\""},
        {"[{\"nodeSelector\":{}}]", "spec.nodePools[0].name: missing"},
        {"[{\"name\":\"a\"}]", "spec.nodePools[0].nodeSelector: missing"},
        {"[{\"name\":\"a\",\"nodeSelector\":{\"matchExpressions\":[{\"key\":\"k\","
         "\"operator\":\"In\"}]}}]",
         "spec.nodePools[0].nodeSelector.matchExpressions[0].values: must not be empty for "
         "operator In"},
        {"[{\"name\":\"a\",\"nodeSelector\":{},\"overrides\":{\"maxMultiplier\":\"101\"}}]",
         "invalid: spec.nodePools[].overrides.maxMultiplier must be between 0 and 100"},
        {"[{\"name\":\"a\",\"nodeSelector\":{},\"overrides\":{\"maxMultiplier\":\"0.5\"}}]",
         "invalid: spec.nodePools[].overrides.maxMultiplier must be 0 (no cap) or at least 1"},
        {"[{\"name\":\"a\",\"nodeSelector\":{},\"overrides\":{\"quantum\":\"0\"}}]",
         "invalid: spec.nodePools[].overrides.quantum must be at least 1m"},
        {"[{\"name\":\"a\",\"nodeSelector\":{},\"overrides\":{\"minBurstFloor\":\"-1\"}}]",
         "spec.nodePools[0].overrides.minBurstFloor: negative quantity \"-1\""},
        {"[{\"name\":\"a\",\"nodeSelector\":{},\"overrides\":{\"deadband\":"
         "{\"growPercent\":101}}}]",
         "spec.nodePools[0].overrides.deadband.growPercent: 101 is out of range [0, 100]"},
        {"[{\"name\":\"a\",\"nodeSelector\":{},\"overrides\":{\"quantum\":\"lots\"}}]",
         "spec.nodePools[0].overrides.quantum: not a number \"lots\""},
        {"{\"name\":\"a\"}", "spec.nodePools: expected an array, got an object"},
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        char spec[512];
        snprintf(spec, sizeof spec, "{\"nodePools\":%s}", bad[i].pools);
        assert_int_equal(decode(&p, spec, &kc), HR_E_INPUT);
        char want[512];
        snprintf(want, sizeof want, "headroomconfig cluster: %s", bad[i].want);
        assert_string_equal(p.err.msg, want);
        done(&p);
    }
    /* 33 pools: more than HR_POOLS_MAX */
    char many[4096] = "{\"nodePools\":[";
    for (int i = 0; i <= HR_POOLS_MAX; i++) {
        char one[64];
        snprintf(one, sizeof one, "%s{\"name\":\"p%d\",\"nodeSelector\":{}}", i ? "," : "", i);
        strcat(many, one);
    }
    strcat(many, "]}");
    assert_int_equal(decode(&p, many, &kc), HR_E_INPUT);
    assert_string_equal(p.err.msg, "headroomconfig cluster: spec.nodePools: 33 pools, at most 32");
    done(&p);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(effective_config_per_node),
        cmocka_unit_test(validation),
        cmocka_unit_test(same_but_node_settings),
        cmocka_unit_test(decoder),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
