/*
 * test_podctx.c — the one pod-in-context builder (core/podctx.h): each
 * context field of hr_pod from the facts its caller gathered, including
 * the "unknown" readings (a Namespace or a Node the caller does not hold).
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include "core/eligibility.h"
#include "core/names.h"
#include "core/podctx.h"
#include "hr_check.h"

static const char *const managed_kv[] = {HR_LABEL_MODE, HR_MODE_MANAGED};
static const hr_labels managed = {managed_kv, 1};
static const char *const gpu_kv[] = {"gpu", "yes"};
static const hr_labels gpu_node = {gpu_kv, 1};
static const hr_labels no_labels = {NULL, 0};

/* excludedNodeSelector: nodes without label "pool" (matches a label-less node). */
static const hr_requirement no_pool[] = {{"pool", HR_SEL_DOES_NOT_EXIST, NULL, 0}};
static const hr_owner_ref jobs[] = {{"Job", "batch", NULL}};

static hr_config config(void)
{
    hr_config c;
    hr_config_defaults(&c);
    c.excluded_nodes = (hr_selector){true, no_pool, 1};
    c.excluded_owners = jobs;
    c.n_excluded_owners = 1;
    return c;
}

static hr_pod_ctx ctx(const hr_config *c)
{
    return (hr_pod_ctx){.cfg = c,
                        .ns = "team-a",
                        .ns_labels = &managed,
                        .node_labels = NULL,
                        .limits = HR_LIMIT_BOUNDS_NONE};
}

static void namespace_state(void **state)
{
    (void)state;
    hr_config c = config();
    hr_pod bare = hr_pod_init();
    hr_pod_ctx cx = ctx(&c);
    CHECK_I64("labelled", hr_pod_in_context(&bare, &cx).ns_state, HR_NS_MANAGED);
    cx.ns_labels = NULL;
    CHECK_I64("unknown namespace", hr_pod_in_context(&bare, &cx).ns_state, HR_NS_NOT_SELECTED);
    cx.ns_labels = &managed;
    cx.own_ns = "team-a";
    CHECK_I64("own namespace", hr_pod_in_context(&bare, &cx).ns_state, HR_NS_EXCLUDED);
    cx.own_ns = NULL;
    cx.ns = "kube-system";
    CHECK_I64("excludedNamespaces", hr_pod_in_context(&bare, &cx).ns_state, HR_NS_EXCLUDED);
}

static void node_and_owner(void **state)
{
    (void)state;
    hr_config c = config();
    hr_pod bare = hr_pod_init();
    hr_pod_ctx cx = ctx(&c);
    CHECK_TRUE("unknown node: not excluded", !hr_pod_in_context(&bare, &cx).node_excluded);
    cx.node_labels = &no_labels;
    CHECK_TRUE("node without labels: excluded", hr_pod_in_context(&bare, &cx).node_excluded);
    cx.node_labels = &gpu_node;
    CHECK_TRUE("node without pool: excluded", hr_pod_in_context(&bare, &cx).node_excluded);
    c.excluded_nodes = (hr_selector){false, NULL, 0};
    CHECK_TRUE("no selector: not excluded", !hr_pod_in_context(&bare, &cx).node_excluded);
    cx.node_windows = true;
    CHECK_TRUE("windows node", hr_pod_in_context(&bare, &cx).node_windows);

    CHECK_TRUE("no owner", !hr_pod_in_context(&bare, &cx).owner_excluded);
    cx.owner_kind = "Job";
    cx.owner_group = "batch";
    cx.owner_name = "nightly";
    CHECK_TRUE("a Job", hr_pod_in_context(&bare, &cx).owner_excluded);
    cx.owner_kind = "ReplicaSet";
    cx.owner_group = "apps";
    CHECK_TRUE("a ReplicaSet", !hr_pod_in_context(&bare, &cx).owner_excluded);
}

static void bounds_backoff_and_the_rest(void **state)
{
    (void)state;
    hr_config c = config();
    hr_container ctr[1] = {{500, 1000, HR_NONE, HR_NONE, HR_CTR_APP, false}};
    hr_pod bare = hr_pod_init();
    bare.ctr = ctr;
    bare.n_ctr = 1;
    bare.max_cpu = 4000;
    hr_pod_ctx cx = ctx(&c);
    cx.limits = (hr_limit_bounds){2000, HR_NONE, 3000};
    cx.in_backoff = true;
    hr_pod p = hr_pod_in_context(&bare, &cx);
    CHECK_I64("container max", p.limits.ctr_max, 2000);
    CHECK_I64("pod max", p.limits.pod_max, 3000);
    CHECK_TRUE("backoff", p.in_backoff);
    CHECK_TRUE("containers shared", p.ctr == ctr && p.n_ctr == 1);
    CHECK_I64("own fields kept", p.max_cpu, 4000);
    CHECK_I64("reason", hr_pod_eligibility(&p), HR_R_BACKOFF);
    CHECK_TRUE("bare pod untouched", !bare.in_backoff && bare.limits.ctr_max == HR_NONE);
}

/* Design §2.10: a group counted above spec.maxGroupSize is refused; the
 * maximum itself is allowed; a pod in no group is never refused. */
static void group_size(void **state)
{
    (void)state;
    hr_config c = config();
    c.max_group_size = 4;
    hr_pod bare = hr_pod_init();
    bare.group = "team-a/owner:u1";
    hr_pod_ctx cx = ctx(&c);
    cx.group_size = 4;
    CHECK_TRUE("at the maximum", !hr_pod_in_context(&bare, &cx).group_too_large);
    cx.group_size = 5;
    CHECK_TRUE("above it", hr_pod_in_context(&bare, &cx).group_too_large);
    bare.group = NULL;
    CHECK_TRUE("in no group", !hr_pod_in_context(&bare, &cx).group_too_large);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(namespace_state),
        cmocka_unit_test(node_and_owner),
        cmocka_unit_test(bounds_backoff_and_the_rest),
        cmocka_unit_test(group_size),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
