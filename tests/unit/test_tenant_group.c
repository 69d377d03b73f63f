/*
 * test_tenant_group.c — TenantFair's tenants span namespaces (design §2.9):
 * a namespace's tenant is the value of its tenant label (spec.tenantLabel,
 * default kube-headroom.dev/tenant), or the namespace itself without one.
 *
 * The property: for random nodes (several tenants, some named by the label,
 * some unlabelled namespaces, random weights, requests, floors and caps),
 * spreading one labelled tenant's pods at random over 1..NSPLIT namespaces
 * that carry its label leaves every ceiling on the node exactly where it
 * was — every other tenant's (splitting gains the tenant nothing) and, since
 * a tenant's pods share its slack by request whatever their namespace, its
 * own. The pods go through hr_pod_in_context, the one place that names a
 * pod's tenant, as the controller's snapshot and the planner do. Seeded
 * from HR_SEED (or the clock), printed; HR_SEED=<seed> replays.
 *
 * The table tests hold the label fallback: no label, an empty value, a
 * configured key, a namespace named like another tenant's label value.
 */
#include <inttypes.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "core/config.h"
#include "core/names.h"
#include "core/pod.h"
#include "core/podctx.h"
#include "core/policy.h"
#include "core/tenant.h"
#include "hr_check.h"
#include "hr_prop.h"

#define CASES 10000
#define MAXP 100
#define TENANTS 5 /* tenant 0 is the one that splits */
#define NSPLIT 6  /* at most this many namespaces for it */

static const char *const TNAME[TENANTS] = {"acme", "globex", "initech", "team-d", "team-e"};
/* Tenants 0–2 are named by the label; 3 and 4 are unlabelled namespaces. */
static const bool BY_LABEL[TENANTS] = {true, true, true, false, false};
/* The namespace of tenants 1–4 (tenant 0's are SPLIT_NS). */
static const char *const NSNAME[TENANTS] = {"acme-0", "globex-prod", "initech-ci", "team-d",
                                            "team-e"};
static const char *const SPLIT_NS[NSPLIT] = {"acme-0", "acme-1", "acme-2",
                                             "acme-3", "acme-4", "acme-5"};

/* One namespace: name, labels (the tenant label and a weight), as the cache
 * or a dump would hand them to hr_pod_in_context. */
typedef struct gen_ns {
    const char *name;
    const char *kv[6];
    char weight[16];
    hr_labels labels;
} gen_ns;

typedef struct gen_node {
    hr_config c;
    hr_node node;
    size_t n;
    uint32_t weight[TENANTS];
    int tenant[MAXP];      /* each pod's tenant */
    int64_t req[MAXP];     /* and request */
    bool opted_out[MAXP];  /* books, is no tenant */
    int64_t max_cpu[MAXP]; /* HR_NONE or a cap */
    gen_ns ns[TENANTS];    /* tenant 0's is unused: run() spreads it */
} gen_node;

typedef struct result {
    hr_pod pods[MAXP];
    hr_container ctr[MAXP];
    hr_node_plan np;
    hr_pod_plan out[MAXP];
    int64_t lim[MAXP];
} result;

static gen_node G;
static result RA, RB;

static void set_ns(gen_ns *n, const char *name, const char *key, const char *tenant, uint32_t w)
{
    n->name = name;
    snprintf(n->weight, sizeof n->weight, "%" PRIu32, w);
    size_t k = 0;
    n->kv[k++] = HR_LABEL_MODE; /* selected by the default namespaceSelector */
    n->kv[k++] = HR_MODE_MANAGED;
    n->kv[k++] = HR_LABEL_WEIGHT;
    n->kv[k++] = n->weight;
    if (tenant != NULL) {
        n->kv[k++] = key;
        n->kv[k++] = tenant;
    }
    n->labels = (hr_labels){n->kv, (uint32_t)(k / 2)};
}

static void rand_node(gen_node *g)
{
    hr_config_defaults(&g->c);
    g->c.policy = HR_POLICY_TENANT_FAIR;
    /* The default key, or Capsule's. */
    g->c.tenant_label = chance(50) ? HR_LABEL_TENANT : "capsule.clastix.io/tenant";
    static const int64_t quanta[] = {1, 5, 10, 25, 100};
    g->c.quantum = quanta[below(5)];
    g->c.grow_percent = (int)below(101);
    g->c.shrink_percent = (int)below(101);
    g->c.min_burst_floor = chance(30) ? 0 : chance(50) ? 1000 : below(4000);
    g->c.max_multiplier_milli = chance(30) ? 0 : chance(50) ? 10000 : between(1000, 100000);
    g->node = (hr_node){chance(60) ? 1000 * between(1, 128) : between(0, 200000), true, false,
                        false, false};
    for (int t = 0; t < TENANTS; t++) {
        g->weight[t] = chance(60) ? 1 : (uint32_t)between(1, chance(90) ? 10 : 1000000);
        /* An unlabelled tenant is its namespace, named as the tenant. */
        set_ns(&g->ns[t], NSNAME[t], g->c.tenant_label, BY_LABEL[t] ? TNAME[t] : NULL,
               g->weight[t]);
    }
    g->n = (size_t)below(MAXP + 1);
    int n_t = (int)between(1, TENANTS);
    for (size_t i = 0; i < g->n; i++) {
        g->tenant[i] = chance(40) ? 0 : (int)below(n_t);
        int bits = (int)between(0, 14);
        g->req[i] = chance(20) ? 10 * between(1, 400) : between(1, INT64_C(1) << bits);
        g->opted_out[i] = chance(10);
        g->max_cpu[i] = chance(10) ? between(1, 20000) : HR_NONE;
    }
}

/* Plan g's node with tenant 0's pods in the namespaces ns_of[] gives
 * (indexes into SPLIT_NS, each labelled as tenant 0). */
static void run(const gen_node *g, const int *ns_of, result *r)
{
    gen_ns split[NSPLIT];
    for (int k = 0; k < NSPLIT; k++)
        set_ns(&split[k], SPLIT_NS[k], g->c.tenant_label, TNAME[0], g->weight[0]);
    for (size_t i = 0; i < g->n; i++) {
        r->ctr[i] = (hr_container){g->req[i], HR_NONE, HR_NONE, HR_NONE, HR_CTR_APP, false};
        hr_pod bare = hr_pod_init();
        bare.ctr = &r->ctr[i];
        bare.n_ctr = 1;
        bare.opted_out = g->opted_out[i];
        bare.max_cpu = g->max_cpu[i];
        int t = g->tenant[i];
        const gen_ns *ns = t == 0 ? &split[ns_of[i]] : &g->ns[t];
        hr_pod_ctx cx = {
            .cfg = &g->c, .ns = ns->name, .ns_labels = &ns->labels, .limits = HR_LIMIT_BOUNDS_NONE};
        r->pods[i] = hr_pod_in_context(&bare, &cx);
    }
    r->np = hr_plan_node(&g->c, &g->node, r->pods, g->n, r->out, r->lim);
}

/* Spreading tenant 0's pods over 1..NSPLIT namespaces with its label moves
 * no ceiling on the node, and leaves W and the shares as they were. */
static void prop_split_namespaces(void)
{
    int one[MAXP] = {0}, spread[MAXP];
    int contested = 0; /* cases with tenant 0 and another tenant planned */
    for (int k = 0; k < CASES; k++) {
        hr_prop_start("split-namespaces", k);
        rand_node(&G);
        run(&G, one, &RA);
        int m = (int)between(1, NSPLIT);
        for (size_t i = 0; i < G.n; i++)
            spread[i] = (int)below(m);
        run(&G, spread, &RB);
        bool t0 = false;
        for (size_t i = 0; i < G.n; i++)
            t0 = t0 || (G.tenant[i] == 0 && RA.out[i].reason == HR_MANAGED);
        contested += t0 && RA.np.n_tenants >= 2 && RA.np.slack > 0;
        if (RB.np.weight_total != RA.np.weight_total || RB.np.n_tenants != RA.np.n_tenants)
            PFAIL("over %d namespaces: W %" PRIu64 " → %" PRIu64 ", tenants %u → %u", m,
                  RA.np.weight_total, RB.np.weight_total, RA.np.n_tenants, RB.np.n_tenants);
        for (size_t i = 0; i < G.n; i++) {
            const hr_pod_plan *a = &RA.out[i], *b = &RB.out[i];
            if (a->target != b->target || a->share != b->share || a->write != b->write)
                PFAIL("tenant %s over %d namespaces moved pod %zu (tenant %s, %" PRId64
                      "m): target %" PRId64 " → %" PRId64 ", share %" PRId64 " → %" PRId64,
                      TNAME[0], m, i, TNAME[G.tenant[i]], G.req[i], a->target, b->target, a->share,
                      b->share);
        }
    }
    /* The generator must give the property something to hold. */
    if (contested < CASES / 3)
        PFAIL("only %d of %d cases had tenant %s beside another with slack", contested, CASES,
              TNAME[0]);
}

PROP(prop_split_namespaces)

/* ---- the label fallback ------------------------------------------------ */

static hr_pod in_ns(const hr_config *c, const char *ns, const hr_labels *l)
{
    hr_pod_ctx cx = {.cfg = c, .ns = ns, .ns_labels = l, .limits = HR_LIMIT_BOUNDS_NONE};
    hr_pod bare = hr_pod_init();
    return hr_pod_in_context(&bare, &cx);
}

static void test_label_fallback(void **state)
{
    (void)state;
    hr_config c;
    hr_config_defaults(&c);
    assert_string_equal(c.tenant_label, "kube-headroom.dev/tenant");

    /* The default key names the tenant. */
    const char *kv[] = {HR_LABEL_TENANT, "acme", "capsule.clastix.io/tenant", "other"};
    hr_labels l = {kv, 2};
    hr_pod p = in_ns(&c, "acme-prod", &l);
    assert_string_equal(p.tenant, "acme");
    assert_true(p.tenant_by_label);

    /* No label, no labels at all, an unknown Namespace: its own tenant. */
    hr_labels none = {kv, 0};
    p = in_ns(&c, "team-a", &none);
    assert_string_equal(p.tenant, "team-a");
    assert_false(p.tenant_by_label);
    p = in_ns(&c, "team-a", NULL);
    assert_string_equal(p.tenant, "team-a");
    assert_false(p.tenant_by_label);

    /* An empty value is no label. */
    const char *empty[] = {HR_LABEL_TENANT, ""};
    hr_labels le = {empty, 1};
    p = in_ns(&c, "team-b", &le);
    assert_string_equal(p.tenant, "team-b");
    assert_false(p.tenant_by_label);

    /* A configured key (Capsule's) replaces the default: the default
     * label then means nothing. */
    c.tenant_label = "capsule.clastix.io/tenant";
    p = in_ns(&c, "acme-prod", &l);
    assert_string_equal(p.tenant, "other");
    assert_true(p.tenant_by_label);
    const char *only_default[] = {HR_LABEL_TENANT, "acme"};
    hr_labels ld = {only_default, 1};
    p = in_ns(&c, "acme-prod", &ld);
    assert_string_equal(p.tenant, "acme-prod");
    assert_false(p.tenant_by_label);

    /* hr_tenant_of: a NULL key reads as the default. */
    bool by;
    assert_string_equal(hr_tenant_of(NULL, "x", &l, &by), "acme");
    assert_true(by);
}

/* A namespace named "acme" without the label is not the tenant "acme" of
 * the label: two tenants, two shares. */
static void test_namespace_is_not_a_label_tenant(void **state)
{
    (void)state;
    hr_config c;
    hr_config_defaults(&c);
    c.policy = HR_POLICY_TENANT_FAIR;
    c.min_burst_floor = 0;
    const char *kv[] = {HR_LABEL_TENANT, "acme", HR_LABEL_MODE, HR_MODE_MANAGED};
    hr_labels l = {kv, 2}, plain = {kv + 2, 1};
    hr_container ctr[3];
    hr_pod pods[3];
    const char *ns[3] = {"acme-prod", "acme-dev", "acme"};
    for (int i = 0; i < 3; i++) {
        ctr[i] = (hr_container){1000, HR_NONE, HR_NONE, HR_NONE, HR_CTR_APP, false};
        hr_pod bare = hr_pod_init();
        bare.ctr = &ctr[i];
        bare.n_ctr = 1;
        hr_pod_ctx cx = {.cfg = &c,
                         .ns = ns[i],
                         .ns_labels = i < 2 ? &l : &plain,
                         .limits = HR_LIMIT_BOUNDS_NONE};
        pods[i] = hr_pod_in_context(&bare, &cx);
    }
    hr_node node = {9000, true, false, false, false};
    hr_pod_plan out[3];
    int64_t lim[3];
    hr_node_plan np = hr_plan_node(&c, &node, pods, 3, out, lim);
    /* S = 6000 over two tenants: acme (two namespaces) 3000, "acme" 3000. */
    assert_int_equal(np.n_tenants, 2);
    assert_int_equal(out[0].share, 3000);
    assert_int_equal(out[0].tenant, out[1].tenant);
    assert_int_not_equal(out[0].tenant, out[2].tenant);
    assert_int_equal(out[0].target, 2500); /* 1000 + 3000·1000/2000 */
    assert_int_equal(out[1].target, 2500);
    assert_int_equal(out[2].target, 4000); /* 1000 + 3000 */
}

/* Design §2.9's property 8 example: five 1-core pods of one tenant over five namespaces
 * leave a victim what one namespace would (design §2.9's 6,000m). */
static void test_spread_example(void **state)
{
    (void)state;
    hr_config c;
    hr_config_defaults(&c);
    c.policy = HR_POLICY_TENANT_FAIR;
    static const char *const names[6] = {"evil-0", "evil-1", "evil-2",
                                         "evil-3", "evil-4", "victim"};
    const char *kv[] = {HR_LABEL_TENANT, "evil", HR_LABEL_MODE, HR_MODE_MANAGED};
    hr_labels l = {kv, 2}, plain = {kv + 2, 1};
    hr_container ctr[6];
    hr_pod pods[6];
    for (int i = 0; i < 6; i++) {
        ctr[i] = (hr_container){1000, HR_NONE, HR_NONE, HR_NONE, HR_CTR_APP, false};
        hr_pod bare = hr_pod_init();
        bare.ctr = &ctr[i];
        bare.n_ctr = 1;
        hr_pod_ctx cx = {.cfg = &c,
                         .ns = names[i],
                         .ns_labels = i < 5 ? &l : &plain,
                         .limits = HR_LIMIT_BOUNDS_NONE};
        pods[i] = hr_pod_in_context(&bare, &cx);
    }
    hr_node node = {16000, true, false, false, false};
    hr_pod_plan out[6];
    int64_t lim[6];
    hr_node_plan np = hr_plan_node(&c, &node, pods, 6, out, lim);
    assert_int_equal(np.n_tenants, 2);
    assert_int_equal(out[5].share, 5000);
    assert_int_equal(out[5].target, 6000);
}

static void test_label_key_valid(void **state)
{
    (void)state;
    assert_true(hr_label_key_valid("kube-headroom.dev/tenant"));
    assert_true(hr_label_key_valid("capsule.clastix.io/tenant"));
    assert_true(hr_label_key_valid("tenant"));
    assert_true(hr_label_key_valid("a.b/C_d.e-f"));
    assert_false(hr_label_key_valid(NULL));
    assert_false(hr_label_key_valid(""));
    assert_false(hr_label_key_valid("/tenant"));
    assert_false(hr_label_key_valid("example.com/"));
    assert_false(hr_label_key_valid("Example.com/tenant"));
    assert_false(hr_label_key_valid("a/b/c"));
    assert_false(hr_label_key_valid("-tenant"));
    assert_false(hr_label_key_valid("ten ant"));
    char long_name[80];
    memset(long_name, 'a', 64);
    long_name[64] = '\0';
    assert_false(hr_label_key_valid(long_name));
    long_name[63] = '\0';
    assert_true(hr_label_key_valid(long_name));

    hr_config c;
    hr_config_defaults(&c);
    assert_null(hr_config_validate(&c));
    c.tenant_label = "not a key";
    assert_non_null(hr_config_validate(&c));
}

int main(void)
{
    g_seed = hr_prop_seed_from_env();
    printf("tenant grouping: seed %" PRIu64 " (replay with HR_SEED=%" PRIu64 ")\n", g_seed, g_seed);
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_prop_split_namespaces),
        cmocka_unit_test(test_label_fallback),
        cmocka_unit_test(test_namespace_is_not_a_label_tenant),
        cmocka_unit_test(test_spread_example),
        cmocka_unit_test(test_label_key_valid),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
