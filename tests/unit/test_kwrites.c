/*
 * test_kwrites.c — the bodies of the controller's small writes: Event
 * (events.k8s.io/v1) and Lease (coordination.k8s.io/v1) JSON, and the
 * MicroTime text they carry.
 *
 * The API server validates these strictly; what matters is that required
 * fields are there, names stay DNS subdomains, notes are cut without
 * splitting a UTF-8 character, and times round-trip to the microsecond
 * (leader election compares renew times). The real server accepting them
 * is tested in tests/integration/it_client.c.
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

#include "hr_check.h"
#include "kube/ktime.h"
#include "kube/write/events.h"
#include "kube/write/lease.h"

static void test_micro_time(void **state)
{
    (void)state;
    char s[HR_KTIME_MICRO_MAX];
    hr_ktime_format_micro(INT64_C(1796025600123456), s);
    assert_string_equal(s, "2026-11-30T08:00:00.123456Z");
    CHECK_I64("round trip", hr_ktime_parse_us(s, strlen(s)), INT64_C(1796025600123456));
    hr_ktime_format_micro(0, s);
    assert_string_equal(s, "1970-01-01T00:00:00.000000Z");
    const char *t = "2026-11-30T08:00:00.5Z";
    CHECK_I64("short fraction", hr_ktime_parse_us(t, strlen(t)), INT64_C(1796025600500000));
    t = "2026-11-30T08:00:00.1234567891Z";
    CHECK_I64("long fraction", hr_ktime_parse_us(t, strlen(t)), INT64_C(1796025600123456));
    t = "2026-11-30T08:00:00.Z";
    CHECK_TRUE("empty fraction", hr_ktime_parse_us(t, strlen(t)) == INT64_MIN);
    t = "2026-11-30T08:00:00Zjunk";
    CHECK_TRUE("trailing junk", hr_ktime_parse_us(t, strlen(t)) == INT64_MIN);
    CHECK_TRUE("now is sane", hr_ktime_now_us() > INT64_C(1700000000000000));
}

static void test_event_json(void **state)
{
    (void)state;
    char note[1100];
    memset(note, 'a', sizeof note);
    /* A 2-byte character straddling the 1024-byte cut. */
    note[1023] = (char)0xC3;
    note[1024] = (char)0xA9;
    note[sizeof note - 1] = '\0';
    hr_kevent e = {.ns = "team-a",
                   .kind = "Pod",
                   .api_version = "v1",
                   .name = "web-1",
                   .uid = "u-1",
                   .type = "Normal",
                   .reason = "CPULimitAdjusted",
                   .action = "Resizing",
                   .note = note,
                   .controller = "kube-headroom.dev/headroom",
                   .instance = "headroom-0"};
    hr_buf b;
    hr_buf_init(&b, 0);
    hr_err err = {0};
    assert_int_equal(hr_kevent_json(&e, INT64_C(1796025600123456), &b, &err), HR_OK);
    yyjson_doc *d = yyjson_read(b.data, b.len, 0);
    assert_non_null(d);
    yyjson_val *r = yyjson_doc_get_root(d);
    assert_string_equal(yyjson_get_str(yyjson_obj_get(r, "apiVersion")), "events.k8s.io/v1");
    assert_string_equal(yyjson_get_str(yyjson_obj_get(r, "eventTime")),
                        "2026-11-30T08:00:00.123456Z");
    const char *name = yyjson_get_str(yyjson_obj_getn(yyjson_obj_get(r, "metadata"), "name", 4));
    assert_true(strncmp(name, "web-1.", 6) == 0);
    assert_int_equal(yyjson_get_len(yyjson_obj_get(r, "note")), 1023);
    yyjson_val *reg = yyjson_obj_get(r, "regarding");
    assert_string_equal(yyjson_get_str(yyjson_obj_get(reg, "uid")), "u-1");
    assert_null(yyjson_obj_get(reg, "resourceVersion"));
    yyjson_doc_free(d);
    hr_buf_free(&b);

    /* Missing and bad fields are named. */
    hr_kevent bad = e;
    bad.reason = NULL;
    hr_buf_init(&b, 0);
    assert_int_equal(hr_kevent_json(&bad, 1, &b, &err), HR_E_INPUT);
    assert_non_null(strstr(err.msg, "reason"));
    bad = e;
    bad.type = "Info";
    assert_int_equal(hr_kevent_json(&bad, 1, &b, &err), HR_E_INPUT);
    assert_non_null(strstr(err.msg, "Normal or Warning"));
    hr_buf_free(&b);
}

static void test_lease_json_round_trip(void **state)
{
    (void)state;
    hr_klease in = {.duration_s = 15,
                    .acquire_us = INT64_C(1796025600000001),
                    .renew_us = INT64_C(1796025602500000),
                    .transitions = 3};
    snprintf(in.holder, sizeof in.holder, "headroom-0_abc");
    snprintf(in.rv, sizeof in.rv, "12345");
    hr_buf b;
    hr_buf_init(&b, 0);
    hr_err err = {0};
    assert_int_equal(hr_klease_json("headroom", "headroom-leader", &in, true, &b, &err), HR_OK);
    assert_non_null(strstr(b.data, "\"resourceVersion\":\"12345\""));
    hr_klease out;
    assert_int_equal(hr_klease_parse(b.data, b.len, &out, &err), HR_OK);
    assert_string_equal(out.holder, "headroom-0_abc");
    assert_string_equal(out.rv, "12345");
    CHECK_I64("duration", out.duration_s, 15);
    CHECK_I64("acquire", out.acquire_us, in.acquire_us);
    CHECK_I64("renew", out.renew_us, in.renew_us);
    CHECK_I64("transitions", out.transitions, 3);
    hr_buf_reset(&b);
    /* Create carries no resourceVersion; a released lease has no holder. */
    in.holder[0] = '\0';
    assert_int_equal(hr_klease_json("headroom", "l", &in, false, &b, &err), HR_OK);
    assert_null(strstr(b.data, "resourceVersion"));
    assert_null(strstr(b.data, "holderIdentity"));
    hr_buf_free(&b);

    const char *bad = "{\"kind\":\"Lease\",\"metadata\":{\"resourceVersion\":\"1\"},"
                      "\"spec\":{\"renewTime\":\"yesterday\"}}";
    assert_int_equal(hr_klease_parse(bad, strlen(bad), &out, &err), HR_E_INPUT);
    assert_non_null(strstr(err.msg, "renewTime"));
    bad = "{\"kind\":\"Lease\",\"metadata\":{},\"spec\":{}}";
    assert_int_equal(hr_klease_parse(bad, strlen(bad), &out, &err), HR_E_INPUT);
    assert_int_equal(hr_klease_parse("[", 1, &out, &err), HR_E_INPUT);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_micro_time),
        cmocka_unit_test(test_event_json),
        cmocka_unit_test(test_lease_json_round_trip),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
