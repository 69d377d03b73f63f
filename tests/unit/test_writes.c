/*
 * test_writes.c — the documents the controller sends: the resize apply body
 * names only our containers and only limits.cpu; the status annotation has
 * design §9's shape; the event text reads as the design shows; two
 * annotations differing only in computedAt compare equal.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>
#include <yyjson.h>

#include "controller/writes.h"
#include "kube/write/status_note.h"

static void apply_body_names_only_our_fields(void **state)
{
    (void)state;
    hr_container c[3] = {
        {200, HR_NONE, 64, 128, HR_CTR_SIDECAR, false}, /* sidecar, managed */
        {HR_NONE, HR_NONE, 64, 128, HR_CTR_APP, false}, /* no request: untouched */
        {800, 1000, 64, 128, HR_CTR_APP, false},
    };
    hr_pod p = hr_pod_init();
    p.ctr = c;
    p.n_ctr = 3;
    const char *names[] = {"proxy", "logger", "app\"x"};
    int64_t lim[] = {600, HR_NONE, 2400};
    hr_buf b;
    hr_buf_init(&b, 0);
    hr_resize_apply_body(&b, "team-a", "web-0", &p, names, lim);
    assert_false(hr_buf_failed(&b));
    assert_string_equal(
        hr_buf_str(&b),
        "{\"apiVersion\":\"v1\",\"kind\":\"Pod\",\"metadata\":{\"namespace\":\"team-a\","
        "\"name\":\"web-0\"},\"spec\":{\"containers\":[{\"name\":\"app\\\"x\",\"resources\":"
        "{\"limits\":{\"cpu\":\"2400m\"}}}],\"initContainers\":[{\"name\":\"proxy\","
        "\"resources\":{\"limits\":{\"cpu\":\"600m\"}}}]}}");
    /* and it is valid JSON */
    yyjson_doc *d = yyjson_read(hr_buf_str(&b), b.len, 0);
    assert_non_null(d);
    yyjson_doc_free(d);

    /* no sidecar written: no initContainers key at all */
    int64_t lim2[] = {HR_NONE, HR_NONE, 3000};
    hr_buf_reset(&b);
    hr_resize_apply_body(&b, "ns", "p", &p, names, lim2);
    assert_null(strstr(hr_buf_str(&b), "initContainers"));
    assert_non_null(strstr(hr_buf_str(&b), "\"cpu\":\"3\""));
    hr_buf_free(&b);
}

static void status_annotation_shape(void **state)
{
    (void)state;
    hr_node_plan np = {.allocatable = 16000,
                       .booked = 8000,
                       .slack = 8000,
                       .managed = 8000,
                       .n_managed = 3,
                       .n_pods = 14};
    hr_buf b;
    hr_buf_init(&b, 0);
    hr_status_annotation(&b, &np, 1795000000, false);
    assert_string_equal(
        hr_buf_str(&b),
        "{\"factor\":\"2.00\",\"slack\":\"8000m\",\"managedRequests\":\"8000m\",\"nodePods\":14,"
        "\"computedAt\":\"2026-11-18T11:06:40Z\",\"policy\":\"proportional-v1\",\"dryRun\":false}");

    hr_buf later;
    hr_buf_init(&later, 0);
    hr_status_annotation(&later, &np, 1795000999, false);
    assert_true(hr_status_same(hr_buf_str(&b), hr_buf_str(&later)));
    np.slack = 7000;
    hr_buf_reset(&later);
    hr_status_annotation(&later, &np, 1795000000, false);
    assert_false(hr_status_same(hr_buf_str(&b), hr_buf_str(&later)));
    hr_buf_reset(&later);
    np.slack = 8000;
    hr_status_annotation(&later, &np, 1795000000, true);
    assert_false(hr_status_same(hr_buf_str(&b), hr_buf_str(&later)));
    assert_false(hr_status_same(hr_buf_str(&b), NULL));

    /* The cache's fingerprint agrees with hr_status_same. */
    hr_buf other;
    hr_buf_init(&other, 0);
    np.slack = 8000;
    hr_status_annotation(&other, &np, 1795009999, false);
    assert_int_equal(hr_status_note_hash(hr_buf_str(&b), b.len),
                     hr_status_note_hash(hr_buf_str(&other), other.len));
    hr_buf_reset(&other);
    np.slack = 7990;
    hr_status_annotation(&other, &np, 1795000000, false);
    assert_int_not_equal(hr_status_note_hash(hr_buf_str(&b), b.len),
                         hr_status_note_hash(hr_buf_str(&other), other.len));
    assert_int_equal(hr_status_note_hash(NULL, 0), 0);
    assert_int_not_equal(hr_status_note_hash("", 0), 0);
    hr_buf_free(&other);

    hr_buf patch;
    hr_buf_init(&patch, 0);
    hr_status_patch(&patch, hr_buf_str(&b));
    yyjson_doc *d = yyjson_read(hr_buf_str(&patch), patch.len, 0);
    assert_non_null(d);
    yyjson_val *v =
        yyjson_ptr_get(yyjson_doc_get_root(d), "/metadata/annotations/kube-headroom.dev~1status");
    assert_non_null(v);
    assert_string_equal(yyjson_get_str(v), hr_buf_str(&b));
    yyjson_doc_free(d);
    hr_buf_free(&b);
    hr_buf_free(&later);
    hr_buf_free(&patch);
}

static void event_text(void **state)
{
    (void)state;
    hr_node_plan np = {.allocatable = 16000, .slack = 8000, .managed = 8000};
    hr_buf b;
    hr_buf_init(&b, 0);
    hr_event_message(&b, 1500, 3000, &np);
    assert_string_equal(hr_buf_str(&b), "1500m \xe2\x86\x92 3000m (factor 2.00, slack 8/16 cores)");
    hr_buf_reset(&b);
    np.slack = -500;
    hr_event_message(&b, 0, 250, &np);
    assert_string_equal(hr_buf_str(&b), "none \xe2\x86\x92 250m (factor 1.00, slack 0/16 cores)");
    hr_buf_free(&b);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(apply_body_names_only_our_fields),
        cmocka_unit_test(status_annotation_shape),
        cmocka_unit_test(event_text),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
