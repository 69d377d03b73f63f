/*
 * test_eligibility.c — design §4: which pods are managed, and the one reason
 * given for each that is not; plus the namespace, owner and label-selector
 * decisions the caller feeds into a pod's context.
 *
 * One test per rule, each starting from a pod that is managed and breaking
 * exactly one thing, so a failure names the rule. A separate test breaks
 * every pair of rules at once and expects the one design §4 lists first:
 * `headroom explain` must give one stable answer, not whichever check the
 * code happened to run first.
 */
#include <inttypes.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <cmocka.h>

#include "core/config.h"
#include "core/eligibility.h"
#include "core/names.h"
#include "core/pod.h"
#include "core/selector.h"
#include "hr_check.h"
#include "hr_fixture.h"

/* A plainly managed pod: one app container with a CPU request and memory
 * request below its limit (Burstable), bound, Running, resources reported. */
static hr_container base_ctrs[] = {CTR(HR_CTR_APP, 500, HR_NONE, GiB, 2 * GiB)};

static hr_pod base_pod(void)
{
    hr_pod p = MKPOD(base_ctrs);
    p.status_resources = true;
    return p;
}

static void expect_reason(const char *label, const hr_pod *p, hr_reason want)
{
    hr_reason got = hr_pod_eligibility(p);
    if (got != want)
        fail_msg("%s: got %d (%s), want %d (%s)", label, (int)got, hr_reason_str(got), (int)want,
                 hr_reason_str(want));
}

static void test_base_is_managed(void **state)
{
    (void)state;
    hr_pod p = base_pod();
    expect_reason("base", &p, HR_MANAGED);
    /* hr_pod_init is documented as neutral (bound, Running, namespace
     * managed): with a Burstable container it must be managed as is. */
    hr_container c[] = {APP(100)};
    hr_pod q = mkpod(c, 1);
    expect_reason("hr_pod_init neutral", &q, HR_MANAGED);
    CHECK_I64("init max_cpu", q.max_cpu, HR_NONE);
    CHECK_I64("init overhead", q.overhead_cpu, HR_NONE);
    CHECK_I64("init pod request", q.pod_cpu_req, HR_NONE);
    CHECK_I64("init ctr_max", q.limits.ctr_max, HR_NONE);
    CHECK_I64("init ratio", q.limits.ctr_ratio_milli, HR_NONE);
    CHECK_I64("init pod_max", q.limits.pod_max, HR_NONE);
}

static void test_not_bound(void **state)
{
    (void)state;
    hr_pod p = base_pod();
    p.bound = false;
    expect_reason("no nodeName", &p, HR_R_NOT_BOUND);
}

static void test_terminal(void **state)
{
    (void)state;
    hr_pod p = base_pod();
    p.phase = HR_PHASE_SUCCEEDED;
    expect_reason("succeeded", &p, HR_R_TERMINAL);
    p.phase = HR_PHASE_FAILED;
    expect_reason("failed", &p, HR_R_TERMINAL);
    p.phase = HR_PHASE_PENDING;
    expect_reason("pending is not terminal", &p, HR_MANAGED);
}

static void test_namespace(void **state)
{
    (void)state;
    hr_pod p = base_pod();
    p.ns_state = HR_NS_NOT_SELECTED;
    expect_reason("namespace not selected", &p, HR_R_NS_NOT_SELECTED);
    p.ns_state = HR_NS_EXCLUDED;
    expect_reason("namespace excluded", &p, HR_R_NS_EXCLUDED);
}

static void test_opted_out(void **state)
{
    (void)state;
    hr_pod p = base_pod();
    p.opted_out = true;
    expect_reason("opted out", &p, HR_R_OPTED_OUT);
}

static void test_best_effort(void **state)
{
    (void)state;
    hr_container c[] = {CTR(HR_CTR_APP, HR_NONE, HR_NONE, HR_NONE, HR_NONE),
                        CTR(HR_CTR_APP, HR_NONE, HR_NONE, HR_NONE, HR_NONE)};
    hr_pod p = base_pod();
    p.ctr = c;
    p.n_ctr = 2;
    expect_reason("best effort", &p, HR_R_BEST_EFFORT);
}

static void test_guaranteed(void **state)
{
    (void)state;
    hr_container c[] = {CTR(HR_CTR_SIDECAR, 100, 100, GiB, GiB),
                        CTR(HR_CTR_APP, 500, 500, GiB, GiB)};
    hr_pod p = base_pod();
    p.ctr = c;
    p.n_ctr = 2;
    expect_reason("guaranteed", &p, HR_R_GUARANTEED);
}

static void test_no_cpu_request(void **state)
{
    (void)state;
    hr_pod p = base_pod();
    /* Memory only: Burstable, but nothing to distribute over. */
    hr_container mem[] = {CTR(HR_CTR_APP, HR_NONE, HR_NONE, GiB, 2 * GiB)};
    p.ctr = mem;
    p.n_ctr = 1;
    expect_reason("memory only", &p, HR_R_NO_CPU_REQUEST);
    /* A CPU request only on a (non-resizable) init container. */
    hr_container init[] = {INIT(500), CTR(HR_CTR_APP, HR_NONE, HR_NONE, GiB, 2 * GiB)};
    p.ctr = init;
    p.n_ctr = 2;
    expect_reason("cpu only on an init container", &p, HR_R_NO_CPU_REQUEST);
    /* An explicit zero request is not a request > 0. */
    hr_container zero[] = {CTR(HR_CTR_APP, 0, 500, GiB, 2 * GiB)};
    p.ctr = zero;
    p.n_ctr = 1;
    expect_reason("explicit 0 request", &p, HR_R_NO_CPU_REQUEST);
    /* A sidecar's request is enough. */
    hr_container sc[] = {SIDECAR(100), CTR(HR_CTR_APP, HR_NONE, HR_NONE, GiB, 2 * GiB)};
    p.ctr = sc;
    p.n_ctr = 2;
    expect_reason("sidecar request", &p, HR_MANAGED);
}

static void test_restart_policy(void **state)
{
    (void)state;
    hr_pod p = base_pod();
    hr_container c[] = {CTR(HR_CTR_APP, 500, HR_NONE, GiB, 2 * GiB)};
    c[0].cpu_restart = true;
    p.ctr = c;
    p.n_ctr = 1;
    expect_reason("app RestartContainer", &p, HR_R_RESTART_POLICY);

    hr_container s[] = {SIDECAR(100), APP(500)};
    s[0].cpu_restart = true;
    p.ctr = s;
    p.n_ctr = 2;
    expect_reason("sidecar RestartContainer", &p, HR_R_RESTART_POLICY);

    /* design §4 says "no resizable container" with it — not only the ones
     * with a CPU request. */
    hr_container other[] = {APP(500), CTR(HR_CTR_APP, HR_NONE, HR_NONE, GiB, 2 * GiB)};
    other[1].cpu_restart = true;
    p.ctr = other;
    p.n_ctr = 2;
    expect_reason("resizable container without request, RestartContainer", &p, HR_R_RESTART_POLICY);

    /* A plain init container is not resizable: its policy is irrelevant. */
    hr_container init[] = {INIT(100), APP(500)};
    init[0].cpu_restart = true;
    p.ctr = init;
    p.n_ctr = 2;
    expect_reason("init container RestartContainer", &p, HR_MANAGED);
}

static void test_mirror(void **state)
{
    (void)state;
    hr_pod p = base_pod();
    p.mirror = true;
    expect_reason("mirror pod", &p, HR_R_MIRROR);
}

static void test_windows(void **state)
{
    (void)state;
    hr_pod p = base_pod();
    p.windows = true;
    expect_reason("spec.os.name windows", &p, HR_R_WINDOWS);
    p = base_pod();
    p.node_windows = true;
    expect_reason("node kubernetes.io/os windows", &p, HR_R_WINDOWS);
}

static void test_pod_resources(void **state)
{
    (void)state;
    hr_pod p = base_pod();
    p.pod_resources = true;
    expect_reason("pod-level resources", &p, HR_R_POD_RESOURCES);
    p.pod_cpu_req = 1000;
    expect_reason("pod-level cpu request", &p, HR_R_POD_RESOURCES);
}

static void test_node_excluded(void **state)
{
    (void)state;
    hr_pod p = base_pod();
    p.node_excluded = true;
    expect_reason("node excluded", &p, HR_R_NODE_EXCLUDED);
}

static void test_owner_excluded_rule(void **state)
{
    (void)state;
    hr_pod p = base_pod();
    p.owner_excluded = true;
    expect_reason("owner excluded", &p, HR_R_OWNER_EXCLUDED);
}

/* Design §2.10: a group above spec.maxGroupSize is refused, but only once
 * the pod runs on a node: at birth the webhook cannot count the group. */
static void test_group_too_large_rule(void **state)
{
    (void)state;
    hr_pod p = base_pod();
    p.group_too_large = true;
    expect_reason("group too large", &p, HR_R_GROUP_TOO_LARGE);
    CHECK_TRUE("not at birth", hr_pod_birth_eligibility(&p) == HR_MANAGED);
}

static void test_status_resources(void **state)
{
    (void)state;
    hr_pod p = base_pod();
    p.status_resources = false;
    expect_reason("running without status resources", &p, HR_R_NO_STATUS_RESOURCES);
    /* Only a Running pod needs them (design §4: "if the pod is Running"). */
    p.phase = HR_PHASE_PENDING;
    expect_reason("pending without status resources", &p, HR_MANAGED);
}

static void test_backoff(void **state)
{
    (void)state;
    hr_pod p = base_pod();
    p.in_backoff = true;
    expect_reason("in back-off", &p, HR_R_BACKOFF);
}

static void test_bad_max_cpu(void **state)
{
    (void)state;
    hr_pod p = base_pod();
    p.max_cpu_invalid = true;
    expect_reason("unparsable max-cpu", &p, HR_R_BAD_MAX_CPU);
    p = base_pod();
    p.max_cpu = 200; /* a valid annotation, even below the request, is a cap, not a reason */
    expect_reason("valid max-cpu", &p, HR_MANAGED);
}

static void test_foreign_writer(void **state)
{
    (void)state;
    hr_pod p = base_pod();
    p.foreign_writer = "vpa-updater";
    expect_reason("another writer of limits.cpu", &p, HR_R_FOREIGN_WRITER);
    assert_string_equal(hr_reason_str(HR_R_FOREIGN_WRITER), "foreign-writer");
    /* At birth too: a webhook limit would be a second writer as well. */
    if (hr_pod_birth_eligibility(&p) != HR_R_FOREIGN_WRITER)
        fail_msg("foreign-writer not judged at birth");
    p.foreign_writer = NULL;
    expect_reason("no other writer", &p, HR_MANAGED);
}

/* ---- precedence: every pair of broken rules -------------------------- */

static hr_container be_ctrs[] = {CTR(HR_CTR_APP, HR_NONE, HR_NONE, HR_NONE, HR_NONE)};
static hr_container gu_ctrs[] = {CTR(HR_CTR_APP, 500, 500, GiB, GiB)};
static hr_container nocpu_ctrs[] = {CTR(HR_CTR_APP, HR_NONE, HR_NONE, GiB, 2 * GiB)};
static hr_container restart_ctrs[] = {{500, HR_NONE, GiB, 2 * GiB, HR_CTR_APP, true}};
static hr_container unbounded_ctrs[] = {CTR(HR_CTR_APP, 500, HR_UNBOUNDED, GiB, 2 * GiB)};

typedef struct breaker {
    hr_reason reason;
    bool containers; /* replaces the containers: cannot pair with another such */
} breaker;

static void apply(hr_pod *p, hr_reason r)
{
    switch (r) {
    case HR_R_NOT_BOUND: p->bound = false; break;
    case HR_R_TERMINAL: p->phase = HR_PHASE_FAILED; break;
    case HR_R_NS_NOT_SELECTED: p->ns_state = HR_NS_NOT_SELECTED; break;
    case HR_R_NS_EXCLUDED: p->ns_state = HR_NS_EXCLUDED; break;
    case HR_R_OPTED_OUT: p->opted_out = true; break;
    case HR_R_BEST_EFFORT:
        p->ctr = be_ctrs;
        p->n_ctr = 1;
        break;
    case HR_R_GUARANTEED:
        p->ctr = gu_ctrs;
        p->n_ctr = 1;
        break;
    case HR_R_NO_CPU_REQUEST:
        p->ctr = nocpu_ctrs;
        p->n_ctr = 1;
        break;
    case HR_R_RESTART_POLICY:
        p->ctr = restart_ctrs;
        p->n_ctr = 1;
        break;
    case HR_R_UNBOUNDED_QUANTITY:
        p->ctr = unbounded_ctrs;
        p->n_ctr = 1;
        break;
    case HR_R_MIRROR: p->mirror = true; break;
    case HR_R_WINDOWS: p->windows = true; break;
    case HR_R_POD_RESOURCES: p->pod_resources = true; break;
    case HR_R_NODE_EXCLUDED: p->node_excluded = true; break;
    case HR_R_OWNER_EXCLUDED: p->owner_excluded = true; break;
    case HR_R_GROUP_TOO_LARGE: p->group_too_large = true; break;
    case HR_R_NO_STATUS_RESOURCES: p->status_resources = false; break;
    case HR_R_BACKOFF: p->in_backoff = true; break;
    case HR_R_BAD_MAX_CPU: p->max_cpu_invalid = true; break;
    case HR_R_UNDECODABLE: p->undecodable = true; break;
    case HR_R_FOREIGN_WRITER: p->foreign_writer = "kubectl-patch"; break;
    default: fail_msg("no breaker for %d", (int)r);
    }
}

static bool changes_containers(hr_reason r)
{
    return r == HR_R_BEST_EFFORT || r == HR_R_GUARANTEED || r == HR_R_NO_CPU_REQUEST ||
           r == HR_R_RESTART_POLICY || r == HR_R_UNBOUNDED_QUANTITY;
}

static void test_first_rule_wins(void **state)
{
    (void)state;
    int pairs = 0;
    for (int a = 1; a < HR_R_COUNT_; a++) {
        hr_pod p = base_pod();
        apply(&p, (hr_reason)a);
        expect_reason("single breaker", &p, (hr_reason)a);
        for (int b = a + 1; b < HR_R_COUNT_; b++) {
            if (changes_containers((hr_reason)a) && changes_containers((hr_reason)b))
                continue;
            /* Both namespace states are one field: only one can be broken. */
            if (a == HR_R_NS_NOT_SELECTED && b == HR_R_NS_EXCLUDED)
                continue;
            p = base_pod();
            apply(&p, (hr_reason)b);
            apply(&p, (hr_reason)a);
            hr_reason got = hr_pod_eligibility(&p);
            /* Rule 0 (design §4): a pod that could not be decoded has
             * nothing else to judge, so undecodable beats every rule. */
            if (b == HR_R_UNDECODABLE) {
                if (got != HR_R_UNDECODABLE)
                    fail_msg("pod breaking %s and undecodable: got %s", hr_reason_str((hr_reason)a),
                             hr_reason_str(got));
                pairs++;
                continue;
            }
            /* Where invalid-max-cpu falls among the other rules is not
             * pinned here (design §4 lists it last but back-off); it must
             * still be one of the two broken. */
            if (b == HR_R_BAD_MAX_CPU) {
                if (got != (hr_reason)a && got != (hr_reason)b)
                    fail_msg("pod breaking %s and %s: got %s", hr_reason_str((hr_reason)a),
                             hr_reason_str((hr_reason)b), hr_reason_str(got));
                pairs++;
                continue;
            }
            if (got != (hr_reason)a)
                fail_msg("pod breaking %s and %s: got %s, want %s (design §4 order)",
                         hr_reason_str((hr_reason)a), hr_reason_str((hr_reason)b),
                         hr_reason_str(got), hr_reason_str((hr_reason)a));
            pairs++;
        }
    }
    printf("eligibility precedence: %d pairs checked\n", pairs);
}

static void test_reason_keywords(void **state)
{
    (void)state;
    assert_string_equal(hr_reason_str(HR_MANAGED), "managed");
    assert_string_equal(hr_reason_str(HR_R_NS_NOT_SELECTED), "namespace-not-selected");
    for (int a = 0; a < HR_R_COUNT_; a++) {
        const char *s = hr_reason_str((hr_reason)a);
        if (s == NULL || s[0] == '\0')
            fail_msg("reason %d has no keyword", a);
        /* Keywords are machine-readable (JSON, metrics): lower-case words
         * joined by '-'. */
        for (const char *q = s; *q; q++)
            if (!((*q >= 'a' && *q <= 'z') || (*q >= '0' && *q <= '9') || *q == '-'))
                fail_msg("reason %d keyword \"%s\" is not a keyword", a, s);
        for (int b = 0; b < a; b++)
            if (strcmp(s, hr_reason_str((hr_reason)b)) == 0)
                fail_msg("reasons %d and %d share the keyword \"%s\"", b, a, s);
    }
}

/* ---- selectors -------------------------------------------------------- */

static const char *const team_kv[] = {"team", "a", "tier", "web", HR_LABEL_MODE, "managed"};
static const hr_labels team = {team_kv, 3};
static const hr_labels nolabels = {NULL, 0};

static bool sel1(const hr_labels *l, const char *key, hr_sel_op op, const char *const *vals,
                 uint32_t nv)
{
    hr_requirement r = {key, (uint8_t)op, vals, nv};
    hr_selector s = {true, &r, 1};
    return hr_selector_matches(&s, l);
}

static void test_labels_get(void **state)
{
    (void)state;
    assert_string_equal(hr_labels_get(&team, "tier"), "web");
    assert_null(hr_labels_get(&team, "missing"));
    assert_null(hr_labels_get(&team, "tie"));
    assert_null(hr_labels_get(&nolabels, "tier"));
}

static void test_selector_ops(void **state)
{
    (void)state;
    const char *const web_only[] = {"web"};
    const char *const a[] = {"a"};
    const char *const bc[] = {"b", "c"};
    const char *const ab[] = {"b", "a"};
    CHECK_TRUE("In match", sel1(&team, "team", HR_SEL_IN, a, 1));
    CHECK_TRUE("In second value", sel1(&team, "team", HR_SEL_IN, ab, 2));
    CHECK_TRUE("In no match", !sel1(&team, "team", HR_SEL_IN, bc, 2));
    CHECK_TRUE("In absent key", !sel1(&team, "nope", HR_SEL_IN, a, 1));
    const char *const upper[] = {"A"};
    CHECK_TRUE("In is case-sensitive", !sel1(&team, "team", HR_SEL_IN, upper, 1));
    CHECK_TRUE("NotIn excludes", !sel1(&team, "team", HR_SEL_NOT_IN, a, 1));
    CHECK_TRUE("NotIn other values", sel1(&team, "team", HR_SEL_NOT_IN, bc, 2));
    CHECK_TRUE("NotIn absent key matches", sel1(&team, "nope", HR_SEL_NOT_IN, a, 1));
    CHECK_TRUE("Exists", sel1(&team, "tier", HR_SEL_EXISTS, NULL, 0));
    CHECK_TRUE("Exists absent", !sel1(&team, "nope", HR_SEL_EXISTS, NULL, 0));
    CHECK_TRUE("DoesNotExist absent", sel1(&team, "nope", HR_SEL_DOES_NOT_EXIST, NULL, 0));
    CHECK_TRUE("DoesNotExist present", !sel1(&team, "tier", HR_SEL_DOES_NOT_EXIST, NULL, 0));
    CHECK_TRUE("Exists on no labels", !sel1(&nolabels, "tier", HR_SEL_EXISTS, NULL, 0));
    /* An operator the decoder let through but nobody knows selects
     * nothing (fail closed: an unknown rule must not manage a namespace). */
    CHECK_TRUE("unknown operator", !sel1(&team, "tier", (hr_sel_op)42, web_only, 1));
    CHECK_TRUE("unknown operator, absent key", !sel1(&team, "nope", (hr_sel_op)42, web_only, 1));
}

static void test_selector_and_set_semantics(void **state)
{
    (void)state;
    const char *const a[] = {"a"};
    const char *const web[] = {"web"};
    const char *const db[] = {"db"};
    /* matchLabels {team: a, tier: web} as two In requirements: all must hold. */
    hr_requirement both[] = {{"team", HR_SEL_IN, a, 1}, {"tier", HR_SEL_IN, web, 1}};
    hr_selector s = {true, both, 2};
    CHECK_TRUE("matchLabels all", hr_selector_matches(&s, &team));
    hr_requirement mixed[] = {{"team", HR_SEL_IN, a, 1}, {"tier", HR_SEL_IN, db, 1}};
    s.req = mixed;
    CHECK_TRUE("one requirement fails", !hr_selector_matches(&s, &team));
    hr_requirement expr[] = {{"team", HR_SEL_EXISTS, NULL, 0},
                             {"tier", HR_SEL_NOT_IN, db, 1},
                             {"gpu", HR_SEL_DOES_NOT_EXIST, NULL, 0}};
    s.req = expr;
    s.n = 3;
    CHECK_TRUE("expressions", hr_selector_matches(&s, &team));

    /* {} matches everything, null matches nothing. */
    hr_selector empty = {true, NULL, 0};
    CHECK_TRUE("empty selector, labels", hr_selector_matches(&empty, &team));
    CHECK_TRUE("empty selector, no labels", hr_selector_matches(&empty, &nolabels));
    hr_selector unset = {false, NULL, 0};
    CHECK_TRUE("unset selector, labels", !hr_selector_matches(&unset, &team));
    CHECK_TRUE("unset selector, no labels", !hr_selector_matches(&unset, &nolabels));
}

/* ---- namespace state ---------------------------------------------------- */

static const char *const managed_kv[] = {HR_LABEL_MODE, HR_MODE_MANAGED};
static const hr_labels managed_ns = {managed_kv, 1};

static void test_namespace_state_defaults(void **state)
{
    (void)state;
    hr_config c;
    hr_config_defaults(&c);
    CHECK_I64("selected", hr_namespace_state(&c, "team-a", &managed_ns, NULL), HR_NS_MANAGED);
    CHECK_I64("no label", hr_namespace_state(&c, "team-a", &nolabels, NULL), HR_NS_NOT_SELECTED);
    const char *const unm_kv[] = {HR_LABEL_MODE, HR_MODE_UNMANAGED};
    hr_labels unm = {unm_kv, 1};
    CHECK_I64("mode=unmanaged", hr_namespace_state(&c, "team-a", &unm, NULL), HR_NS_NOT_SELECTED);
    /* Values are enum keywords; anything else is "not managed" (fail closed). */
    const char *const cap_kv[] = {HR_LABEL_MODE, "Managed"};
    hr_labels capl = {cap_kv, 1};
    CHECK_I64("mode=Managed", hr_namespace_state(&c, "team-a", &capl, NULL), HR_NS_NOT_SELECTED);
    const char *const other_kv[] = {"mode", HR_MODE_MANAGED};
    hr_labels other = {other_kv, 1};
    CHECK_I64("unprefixed key", hr_namespace_state(&c, "team-a", &other, NULL), HR_NS_NOT_SELECTED);

    /* kube-system is excluded by default even when labelled. */
    CHECK_I64("kube-system", hr_namespace_state(&c, "kube-system", &managed_ns, NULL),
              HR_NS_EXCLUDED);
    CHECK_TRUE("kube-system unlabelled not managed",
               hr_namespace_state(&c, "kube-system", &nolabels, NULL) != HR_NS_MANAGED);
    /* The controller's own namespace is always excluded. */
    CHECK_I64("own namespace", hr_namespace_state(&c, "headroom", &managed_ns, "headroom"),
              HR_NS_EXCLUDED);
    CHECK_I64("other than own", hr_namespace_state(&c, "team-a", &managed_ns, "headroom"),
              HR_NS_MANAGED);
    CHECK_I64("own ns prefix is not own ns",
              hr_namespace_state(&c, "headroom-x", &managed_ns, "headroom"), HR_NS_MANAGED);
}

static void test_namespace_state_custom(void **state)
{
    (void)state;
    hr_config c;
    hr_config_defaults(&c);
    static const char *const excl[] = {"batch", "infra"};
    c.excluded_ns = excl;
    c.n_excluded_ns = 2;
    const char *const tier[] = {"gold", "silver"};
    hr_requirement r = {"tier", HR_SEL_IN, tier, 2};
    c.ns_selector = (hr_selector){true, &r, 1};
    const char *const gold_kv[] = {"tier", "gold"};
    hr_labels gold = {gold_kv, 1};

    CHECK_I64("custom selector", hr_namespace_state(&c, "team-a", &gold, NULL), HR_NS_MANAGED);
    CHECK_I64("custom selector, default label no longer enough",
              hr_namespace_state(&c, "team-a", &managed_ns, NULL), HR_NS_NOT_SELECTED);
    CHECK_I64("excluded list", hr_namespace_state(&c, "infra", &gold, NULL), HR_NS_EXCLUDED);
    CHECK_I64("exact names only", hr_namespace_state(&c, "infra2", &gold, NULL), HR_NS_MANAGED);
    CHECK_I64("kube-system no longer listed", hr_namespace_state(&c, "kube-system", &gold, NULL),
              HR_NS_MANAGED);

    c.ns_selector = (hr_selector){true, NULL, 0};
    CHECK_I64("{} selects all", hr_namespace_state(&c, "team-b", &nolabels, NULL), HR_NS_MANAGED);
    c.ns_selector = (hr_selector){false, NULL, 0};
    CHECK_I64("null selects none", hr_namespace_state(&c, "team-b", &gold, NULL),
              HR_NS_NOT_SELECTED);
}

/* ---- owners ------------------------------------------------------------- */

static void test_owner_excluded(void **state)
{
    (void)state;
    hr_config c;
    hr_config_defaults(&c);
    CHECK_TRUE("no list", !hr_owner_excluded(&c, "ReplicaSet", "apps", "web-1"));
    static const hr_owner_ref owners[] = {
        {"Job", "batch", NULL},         /* every Job */
        {"DaemonSet", NULL, "fluentd"}, /* fluentd in any group */
        {"Node", "", ""},               /* core-group kind, any name */
    };
    c.excluded_owners = owners;
    c.n_excluded_owners = 3;
    CHECK_TRUE("Job any name", hr_owner_excluded(&c, "Job", "batch", "nightly"));
    CHECK_TRUE("Job in another group", !hr_owner_excluded(&c, "Job", "", "nightly"));
    CHECK_TRUE("kind differs", !hr_owner_excluded(&c, "CronJob", "batch", "nightly"));
    CHECK_TRUE("kind is case-sensitive", !hr_owner_excluded(&c, "job", "batch", "nightly"));
    CHECK_TRUE("DaemonSet fluentd", hr_owner_excluded(&c, "DaemonSet", "apps", "fluentd"));
    CHECK_TRUE("DaemonSet fluentd, any group",
               hr_owner_excluded(&c, "DaemonSet", "example.com", "fluentd"));
    CHECK_TRUE("DaemonSet other name",
               !hr_owner_excluded(&c, "DaemonSet", "apps", "node-exporter"));
    CHECK_TRUE("core-group Node", hr_owner_excluded(&c, "Node", "", "worker-1"));
    CHECK_TRUE("Node of another group", !hr_owner_excluded(&c, "Node", "example.com", "worker-1"));
    CHECK_TRUE("ReplicaSet", !hr_owner_excluded(&c, "ReplicaSet", "apps", "web-1"));
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_base_is_managed),
        cmocka_unit_test(test_not_bound),
        cmocka_unit_test(test_terminal),
        cmocka_unit_test(test_namespace),
        cmocka_unit_test(test_opted_out),
        cmocka_unit_test(test_best_effort),
        cmocka_unit_test(test_guaranteed),
        cmocka_unit_test(test_no_cpu_request),
        cmocka_unit_test(test_restart_policy),
        cmocka_unit_test(test_mirror),
        cmocka_unit_test(test_windows),
        cmocka_unit_test(test_pod_resources),
        cmocka_unit_test(test_node_excluded),
        cmocka_unit_test(test_owner_excluded_rule),
        cmocka_unit_test(test_group_too_large_rule),
        cmocka_unit_test(test_status_resources),
        cmocka_unit_test(test_backoff),
        cmocka_unit_test(test_bad_max_cpu),
        cmocka_unit_test(test_foreign_writer),
        cmocka_unit_test(test_first_rule_wins),
        cmocka_unit_test(test_reason_keywords),
        cmocka_unit_test(test_labels_get),
        cmocka_unit_test(test_selector_ops),
        cmocka_unit_test(test_selector_and_set_semantics),
        cmocka_unit_test(test_namespace_state_defaults),
        cmocka_unit_test(test_namespace_state_custom),
        cmocka_unit_test(test_owner_excluded),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
