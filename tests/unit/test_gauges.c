/*
 * test_gauges.c — the per-node and per-pod gauges: values as design §9 names
 * them, a pod that left its node loses its series, a gone node loses all
 * of its own, label values are escaped, and the managed totals move by the
 * right deltas.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "controller/gauges.h"

static char *page(hr_gauges *g)
{
    hr_buf b;
    hr_buf_init(&b, 0);
    hr_gauges_render(g, &b);
    return b.data;
}

static void record_render_remove(void **state)
{
    (void)state;
    hr_gauges *g = hr_gauges_new();
    assert_non_null(g);
    hr_node_plan plan = {
        .allocatable = 8000, .booked = 2000, .slack = 6000, .managed = 2000, .n_managed = 2};
    hr_gauge_pod pods[] = {
        {"team-a", "solo", 1200, 1200, NULL, false, false, false, NULL, 1800000000},
        {"team-a", "big", 7200, 7500, "deadband", false, false, false, NULL, 0},
        {"team-b", "parked", 600, HR_NONE, "quota-denied", true, false, false, NULL, 0},
        {"team-b", "lost", 700, HR_NONE, "node-unknown", false, false, false, NULL, 0},
        {"team-c", "odd", 0, HR_NONE, NULL, false, true, false, NULL, 0},
        {"team-d", "gang-7", 900, HR_NONE, NULL, false, false, true, NULL, 0},
        {"team-e", "vpa-1", 1500, HR_NONE, NULL, false, false, false, "vpa-updater", 0}};
    hr_gauge_delta d;
    assert_true(hr_gauges_record(g, "n0", NULL, &plan, 1, pods, 7, &d));
    assert_int_equal(d.pods, 2);
    assert_int_equal(d.nodes, 1);
    assert_int_equal(d.deferred, 1);
    char *p = page(g);
    assert_non_null(strstr(p, "\nheadroom_node_factor{node=\"n0\"} 4.000\n"));
    assert_non_null(strstr(p, "\nheadroom_node_slack_cores{node=\"n0\"} 6.000\n"));
    assert_non_null(strstr(p, "\nheadroom_node_booked_ratio{node=\"n0\"} 0.250\n"));
    /* design §2.11, §9.3: no pool applies: the top level */
    assert_non_null(strstr(p, "\nheadroom_node_pool_info{node=\"n0\",pool=\"(top level)\"} 1\n"));
    assert_non_null(strstr(p, "# TYPE headroom_node_managed_pods gauge\n"
                              "headroom_node_managed_pods{node=\"n0\"} 2\n"));
    assert_non_null(
        strstr(p, "\nheadroom_pod_limit_cores{namespace=\"team-a\",pod=\"big\"} 7.200\n"));
    /* design §2: A and R, in cores */
    assert_non_null(strstr(p, "# TYPE headroom_node_allocatable_cores gauge\n"
                              "headroom_node_allocatable_cores{node=\"n0\"} 8.000\n"));
    assert_non_null(strstr(p, "# TYPE headroom_node_booked_cores gauge\n"
                              "headroom_node_booked_cores{node=\"n0\"} 2.000\n"));
    /* the target of each managed pod that has one; none on an unknown node */
    assert_non_null(
        strstr(p, "\nheadroom_pod_target_cores{namespace=\"team-a\",pod=\"solo\"} 1.200\n"));
    assert_non_null(
        strstr(p, "\nheadroom_pod_target_cores{namespace=\"team-a\",pod=\"big\"} 7.500\n"));
    assert_null(strstr(p, "headroom_pod_target_cores{namespace=\"team-b\""));
    /* held: the held ones only, with their reasons; a parked pod has only that */
    assert_non_null(strstr(p, "\nheadroom_pod_held{namespace=\"team-a\",pod=\"big\","
                              "reason=\"deadband\"} 1\n"));
    assert_non_null(strstr(p, "\nheadroom_pod_held{namespace=\"team-b\",pod=\"parked\","
                              "reason=\"quota-denied\"} 1\n"));
    assert_non_null(strstr(p, "\nheadroom_pod_held{namespace=\"team-b\",pod=\"lost\","
                              "reason=\"node-unknown\"} 1\n"));
    assert_null(strstr(p, "headroom_pod_held{namespace=\"team-a\",pod=\"solo\""));
    assert_null(strstr(p, "pod=\"parked\"} "));
    assert_null(strstr(p, "pod=\"parked\",node"));
    /* one info series per managed pod, naming its node */
    const char *info = strstr(p, "# TYPE headroom_pod_info gauge\n");
    assert_non_null(info);
    assert_non_null(strstr(info,
                           "# TYPE headroom_pod_info gauge\n"
                           "headroom_pod_info{namespace=\"team-a\",pod=\"solo\",node=\"n0\"} 1\n"
                           "headroom_pod_info{namespace=\"team-a\",pod=\"big\",node=\"n0\"} 1\n"
                           "headroom_pod_info{namespace=\"team-b\",pod=\"lost\",node=\"n0\"} 1\n"
                           "# HELP headroom_pod_undecodable "));
    /* design §6: the pod that holds the node, named, in its own family only */
    const char *undec = strstr(p, "# TYPE headroom_pod_undecodable gauge\n");
    assert_non_null(undec);
    assert_non_null(
        strstr(undec, "# TYPE headroom_pod_undecodable gauge\n"
                      "headroom_pod_undecodable{namespace=\"team-c\",pod=\"odd\",node=\"n0\"} 1\n"
                      "# HELP headroom_pod_group_too_large "));
    assert_null(strstr(p, "headroom_pod_limit_cores{namespace=\"team-c\""));
    /* design §2.10: a member of a refused group, in its own family only */
    const char *big = strstr(p, "# TYPE headroom_pod_group_too_large gauge\n");
    assert_non_null(big);
    assert_non_null(strstr(big, "# TYPE headroom_pod_group_too_large gauge\n"
                                "headroom_pod_group_too_large{namespace=\"team-d\",pod=\"gang-7\","
                                "node=\"n0\"} 1\n"
                                "# HELP headroom_pod_foreign_writer "));
    assert_null(strstr(p, "headroom_pod_limit_cores{namespace=\"team-d\""));
    /* design §4 rule 20: a pod left to another writer, named, in its own family only */
    const char *fw = strstr(p, "# TYPE headroom_pod_foreign_writer gauge\n");
    assert_non_null(fw);
    assert_non_null(strstr(fw, "# TYPE headroom_pod_foreign_writer gauge\n"
                               "headroom_pod_foreign_writer{namespace=\"team-e\",pod=\"vpa-1\","
                               "node=\"n0\",manager=\"vpa-updater\"} 1\n"
                               "# HELP headroom_pod_startup_grace_until_seconds "));
    /* design §2.12: the end of a kept startup grace, a managed pod's only */
    const char *gr = strstr(p, "# TYPE headroom_pod_startup_grace_until_seconds gauge\n");
    assert_non_null(gr);
    assert_string_equal(gr, "# TYPE headroom_pod_startup_grace_until_seconds gauge\n"
                            "headroom_pod_startup_grace_until_seconds{namespace=\"team-a\","
                            "pod=\"solo\",node=\"n0\"} 1800000000\n");
    assert_null(strstr(p, "headroom_pod_limit_cores{namespace=\"team-e\""));
    assert_null(strstr(p, "headroom_pod_info{namespace=\"team-e\""));
    free(p);

    /* big left the node: its series goes with the next record */
    plan = (hr_node_plan){
        .allocatable = 8000, .booked = 200, .slack = 7800, .managed = 200, .n_managed = 1};
    assert_true(hr_gauges_record(g, "n0", "batch", &plan, 0, pods, 1, &d));
    assert_int_equal(d.pods, -1);
    assert_int_equal(d.nodes, 0);
    assert_int_equal(d.deferred, -1);
    p = page(g);
    assert_null(strstr(p, "pod=\"big\""));
    assert_null(strstr(p, "headroom_pod_held{")); /* nothing held: no series */
    assert_non_null(strstr(p, "headroom_node_factor{node=\"n0\"} 40.000\n"));
    /* the node's pool moved with its record: one info series, the new pool */
    assert_non_null(strstr(p, "headroom_node_pool_info{node=\"n0\",pool=\"batch\"} 1\n"));
    assert_non_null(strstr(p, "headroom_node_managed_pods{node=\"n0\"} 1\n"));
    assert_null(strstr(p, "pool=\"(top level)\""));
    free(p);

    /* an over-booked node has a negative slack; odd names are escaped */
    plan = (hr_node_plan){
        .allocatable = 4000, .booked = 5000, .slack = -1000, .managed = 500, .n_managed = 1};
    hr_gauge_pod odd[] = {{"ns", "we\"ird\\name", 510, 510, NULL, false, false, false, NULL, 0}};
    assert_true(hr_gauges_record(g, "n\"1", NULL, &plan, 0, odd, 1, &d));
    p = page(g);
    assert_non_null(strstr(p, "headroom_node_slack_cores{node=\"n\\\"1\"} -1.000\n"));
    assert_non_null(strstr(p, "pod=\"we\\\"ird\\\\name\"} 0.510\n"));
    assert_non_null(strstr(p, "headroom_node_factor{node=\"n\\\"1\"} 1.000\n"));
    free(p);

    /* n0 is gone */
    assert_true(hr_gauges_record(g, "n0", NULL, NULL, 0, NULL, 0, &d));
    assert_int_equal(d.pods, -1);
    assert_int_equal(d.nodes, -1);
    p = page(g);
    assert_null(strstr(p, "node=\"n0\""));
    assert_null(strstr(p, "pod=\"solo\""));
    free(p);
    hr_gauges_free(g);
}

/* The reason a pod is held (design §9.3), from its plan. */
static void hold_reasons(void **state)
{
    (void)state;
    static const struct {
        hr_pod_plan pp;
        bool dry_run;
        const char *want;
    } t[] = {
        /* at its target: nothing held, whatever the mode */
        {{.current = 1000, .target = 1000}, true, NULL},
        /* moved, but inside the deadband */
        {{.current = 1000, .target = 1040, .write = false}, false, "deadband"},
        {{.current = 1000, .target = 1040, .write = false}, true, "deadband"},
        /* to be written: live it is being written, dry-run holds it */
        {{.current = 1000, .target = 2000, .write = true}, false, NULL},
        {{.current = 1000, .target = 2000, .write = true}, true, "dry-run"},
        {{.current = 0, .target = 2000, .write = true}, true, "dry-run"},
        /* a gate holds an increase in either mode, and says which */
        {{.current = 1000, .target = 2000, .write = true, .gate = HR_GATE_PRESSURE},
         false,
         "pressure"},
        {{.current = 1000, .target = 2000, .write = true, .gate = HR_GATE_ALLOCATABLE},
         true,
         "allocatable"},
        {{.current = 1000, .target = 2000, .write = true, .gate = HR_GATE_BOOKING_UNKNOWN},
         false,
         "booking-unknown"},
        /* not planned: no target, held in both directions */
        {{.current = 1000, .target = HR_NONE, .gate = HR_GATE_NODE_UNKNOWN}, false, "node-unknown"},
    };
    for (size_t i = 0; i < sizeof t / sizeof t[0]; i++) {
        const char *got = hr_gauge_hold(&t[i].pp, t[i].dry_run);
        if (got == NULL ? t[i].want != NULL : t[i].want == NULL || strcmp(got, t[i].want) != 0)
            fail_msg("case %zu: %s, want %s", i, got ? got : "(none)",
                     t[i].want ? t[i].want : "(none)");
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {cmocka_unit_test(record_render_remove),
                                       cmocka_unit_test(hold_reasons)};
    return cmocka_run_group_tests(tests, NULL, NULL);
}
