/*
 * test_statusnote.c — the status annotation read back (kube/decode/statusnote.h):
 * the schema's v2 example whole, a v1 note (node figures only), and what it
 * refuses: not an object, a wrong type, a bad quantity, too many containers,
 * a word a terminal should not print.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <cmocka.h>

#include "core/pod.h"
#include "kube/decode/statusnote.h"

static const char v2[] =
    "{\"factor\":\"4.43\",\"slack\":\"7540m\",\"managedRequests\":\"2200m\",\"nodePods\":12,"
    "\"allocatable\":\"15890m\",\"booked\":\"8350m\",\"managedPods\":3,"
    "\"request\":\"500m\",\"floor\":\"1000m\",\"burst\":\"1710m\","
    "\"targetLimit\":\"2210m\",\"limits\":{\"app\":\"1700m\",\"sidecar\":\"510m\"},"
    "\"cap\":\"multiplier\",\"capLimit\":\"5000m\","
    "\"caps\":{\"multiplier\":\"5000m\",\"allocatable\":\"15890m\",\"max-cpu\":\"3000m\","
    "\"limitrange\":\"4000m\"},\"reason\":\"pressure\","
    "\"computedAt\":\"2026-12-05T05:00:00Z\",\"policy\":\"proportional-v1\",\"dryRun\":false}";

static hr_status decode(const char *s, hr_knote *n, hr_err *err)
{
    hr_arena a;
    hr_arena_init(&a, 0);
    hr_status st = hr_decode_status_note(s, strlen(s), "team-a", "web-0", &a, n, err);
    hr_arena_free(&a); /* the strings are checked before this in the tests that read them */
    return st;
}

static void schema_example(void **state)
{
    (void)state;
    hr_arena a;
    hr_arena_init(&a, 0);
    hr_knote n;
    hr_err err;
    assert_int_equal(hr_decode_status_note(v2, strlen(v2), "team-a", "web-0", &a, &n, &err), HR_OK);
    assert_int_equal(n.version, 2);
    assert_int_equal(n.factor_milli, 4430);
    assert_int_equal(n.slack, 7540);
    assert_int_equal(n.managed_requests, 2200);
    assert_int_equal(n.node_pods, 12);
    assert_int_equal(n.allocatable, 15890);
    assert_int_equal(n.booked, 8350);
    assert_int_equal(n.managed_pods, 3);
    assert_int_equal(n.request, 500);
    assert_int_equal(n.floor, 1000);
    assert_int_equal(n.burst, 1710);
    assert_int_equal(n.target_limit, 2210);
    assert_int_equal(n.n_limits, 2);
    assert_string_equal(n.limits[0].container, "app");
    assert_int_equal(n.limits[0].milli, 1700);
    assert_string_equal(n.limits[1].container, "sidecar");
    assert_int_equal(n.limits[1].milli, 510);
    assert_int_equal(n.limits_omitted, -1);
    assert_string_equal(n.cap, "multiplier");
    assert_int_equal(n.cap_limit, 5000);
    assert_int_equal(n.caps[HR_KNOTE_CAP_MULTIPLIER], 5000);
    assert_int_equal(n.caps[HR_KNOTE_CAP_ALLOCATABLE], 15890);
    assert_int_equal(n.caps[HR_KNOTE_CAP_MAX_CPU], 3000);
    assert_int_equal(n.caps[HR_KNOTE_CAP_LIMITRANGE], 4000);
    assert_string_equal(n.reason, "pressure");
    assert_string_equal(n.computed_at, "2026-12-05T05:00:00Z");
    assert_string_equal(n.policy, "proportional-v1");
    assert_int_equal(n.dry_run, 0);
    hr_arena_free(&a);
}

static void v1_has_node_figures_only(void **state)
{
    (void)state;
    static const char v1[] = "{\"factor\":\"1.00\",\"slack\":\"0m\",\"managedRequests\":\"500m\","
                             "\"nodePods\":2,\"computedAt\":\"2026-12-05T05:00:00Z\","
                             "\"policy\":\"proportional-v1\",\"dryRun\":true}";
    hr_knote n;
    hr_err err;
    assert_int_equal(decode(v1, &n, &err), HR_OK);
    assert_int_equal(n.version, 1);
    assert_int_equal(n.factor_milli, 1000);
    assert_int_equal(n.slack, 0);
    assert_int_equal(n.node_pods, 2);
    assert_int_equal(n.dry_run, 1);
    assert_int_equal(n.target_limit, HR_NONE);
    assert_int_equal(n.allocatable, HR_NONE);
    assert_int_equal(n.n_limits, 0);
    assert_int_equal(n.managed_pods, -1);
    for (int k = 0; k < HR_KNOTE_CAP_COUNT_; k++)
        assert_int_equal(n.caps[k], HR_NONE);
    /* An empty object is a v1 note with nothing in it. */
    assert_int_equal(decode("{}", &n, &err), HR_OK);
    assert_int_equal(n.version, 1);
    assert_int_equal(n.dry_run, -1);
}

static void refused(const char *s, const char *msg)
{
    hr_knote n;
    hr_err err;
    if (decode(s, &n, &err) != HR_E_INPUT)
        fail_msg("\"%s\" was accepted", s);
    if (strstr(err.msg, msg) == NULL)
        fail_msg("\"%s\": got \"%s\", want \"%s\" in it", s, err.msg, msg);
    assert_non_null(strstr(err.msg, "status annotation of pod team-a/web-0"));
}

static void refusals(void **state)
{
    (void)state;
    refused("", "not JSON");
    refused("[1]", "expected an object, got an array");
    refused("{\"slack\":true}", "slack");
    refused("{\"targetLimit\":\"2x\"}", "targetLimit");
    refused("{\"nodePods\":\"12\"}", "nodePods");
    refused("{\"limits\":[]}", "limits");
    refused("{\"limits\":{\"app\":null}}", "limits.app");
    refused("{\"caps\":{\"max-cpu\":\"-1\"}}", "caps.max-cpu");
    refused("{\"cap\":\"\\u001b[31m\"}", "cap");
    refused("{\"reason\":\"Pressure\"}", "reason");
    refused("{\"computedAt\":\"now; rm\"}", "computedAt");
    refused("{\"dryRun\":\"no\"}", "dryRun");
    char big[2048] = "{\"limits\":{";
    for (int i = 0; i < HR_KNOTE_LIMITS_MAX + 1; i++)
        snprintf(big + strlen(big), sizeof big - strlen(big), "%s\"c%d\":\"1m\"", i ? "," : "", i);
    strcat(big, "}}");
    refused(big, "33 containers, at most 32");
}

static void unknown_keys_are_skipped(void **state)
{
    (void)state;
    hr_knote n;
    hr_err err;
    assert_int_equal(decode("{\"factor\":\"2.00\",\"later\":{\"x\":[1]}}", &n, &err), HR_OK);
    assert_int_equal(n.factor_milli, 2000);
    assert_int_equal(decode("{\"limitsOmitted\":3}", &n, &err), HR_OK);
    assert_int_equal(n.version, 2);
    assert_int_equal(n.limits_omitted, 3);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(schema_example),
        cmocka_unit_test(v1_has_node_figures_only),
        cmocka_unit_test(refusals),
        cmocka_unit_test(unknown_keys_are_skipped),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
