/*
 * test_whreply.c — an AdmissionReview answer as `headroom verify` reads it
 * (webhook/reply.h): the handler's own answers read back (a patch with
 * limits.cpu, none in dry-run), each shape of patch that sets a CPU limit,
 * and every answer it must refuse (not JSON, another kind or version, no
 * response, another uid, no boolean allowed, a patch that is not base64 of
 * a JSON array, a patch without patchType JSONPatch).
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "core/config.h"
#include "util/base64.h"
#include "util/buf.h"
#include "webhook/admission.h"
#include "webhook/reply.h"

#define REVIEW                                                                                \
    "{\"apiVersion\":\"admission.k8s.io/v1\",\"kind\":\"AdmissionReview\",\"request\":{"      \
    "\"uid\":\"u-1\",\"kind\":{\"group\":\"\",\"version\":\"v1\",\"kind\":\"Pod\"},"          \
    "\"resource\":{\"group\":\"\",\"version\":\"v1\",\"resource\":\"pods\"},"                 \
    "\"namespace\":\"team-a\",\"operation\":\"CREATE\",\"object\":{\"apiVersion\":\"v1\","    \
    "\"kind\":\"Pod\",\"metadata\":{\"name\":\"p\",\"namespace\":\"team-a\"},\"spec\":{"      \
    "\"containers\":[{\"name\":\"app\",\"image\":\"x\",\"resources\":{\"requests\":{\"cpu\":" \
    "\"100m\"}}}]}}}}"

/* The handler's answer to REVIEW under cfg, read back. */
static hr_status round_trip(bool dry_run, hr_wh_reply *out)
{
    hr_config c;
    hr_config_defaults(&c);
    c.present = true;
    c.dry_run = dry_run;
    hr_wh_env env = {.cfg = &c};
    hr_wh_result r;
    hr_err err;
    assert_int_equal(hr_admission_review(&env, REVIEW, strlen(REVIEW), &r, &err), HR_OK);
    assert_int_equal(r.http_status, 200);
    hr_status st = hr_wh_reply_parse(hr_buf_str(&r.body), r.body.len, "u-1", out, &err);
    hr_wh_result_free(&r);
    return st;
}

static void handler_answers(void **state)
{
    (void)state;
    hr_wh_reply rep;
    assert_int_equal(round_trip(false, &rep), HR_OK);
    assert_true(rep.allowed);
    assert_true(rep.has_patch);
    assert_int_equal(rep.n_cpu, 1);
    assert_int_equal(round_trip(true, &rep), HR_OK);
    assert_true(rep.allowed);
    assert_false(rep.has_patch);
    assert_int_equal(rep.n_cpu, 0);
}

/* An answer with response fields resp (inside {...}) and, when patch is not
 * NULL, that JSON as its base64 patch; the reason of a refusal in err. */
static hr_status parse(const char *resp, const char *patch, hr_wh_reply *out, hr_err *err)
{
    hr_buf b;
    hr_buf_init(&b, 0);
    hr_buf_printf(&b,
                  "{\"apiVersion\":\"admission.k8s.io/v1\",\"kind\":\"AdmissionReview\","
                  "\"response\":{%s",
                  resp);
    if (patch) {
        hr_buf_puts(&b, ",\"patchType\":\"JSONPatch\",\"patch\":\"");
        hr_buf_b64(&b, patch, strlen(patch));
        hr_buf_putc(&b, '"');
    }
    hr_buf_puts(&b, "}}");
    hr_status st = hr_wh_reply_parse(hr_buf_str(&b), b.len, "u-1", out, err);
    hr_buf_free(&b);
    return st;
}

static void patch_shapes(void **state)
{
    (void)state;
    hr_wh_reply r;
    hr_err err;
    const char *ok = "\"uid\":\"u-1\",\"allowed\":true";
    assert_int_equal(parse(ok,
                           "[{\"op\":\"add\",\"path\":\"/spec/containers/0/resources/limits/cpu\","
                           "\"value\":\"200m\"},"
                           "{\"op\":\"add\",\"path\":\"/spec/initContainers/1/resources/limits\","
                           "\"value\":{\"cpu\":\"1\"}},"
                           "{\"op\":\"replace\",\"path\":\"/spec/containers/2/resources\","
                           "\"value\":{\"limits\":{\"cpu\":\"2\"}}}]",
                           &r, &err),
                     HR_OK);
    assert_int_equal(r.n_cpu, 3);
    /* Not a CPU limit: memory, a remove, a number, another path, an op that is not an object. */
    assert_int_equal(
        parse(ok,
              "[{\"op\":\"add\",\"path\":\"/spec/containers/0/resources/limits/memory\","
              "\"value\":\"1Gi\"},"
              "{\"op\":\"remove\",\"path\":\"/spec/containers/0/resources/limits/cpu\"},"
              "{\"op\":\"add\",\"path\":\"/spec/containers/0/resources/limits/cpu\","
              "\"value\":2},"
              "{\"op\":\"add\",\"path\":\"/metadata/resources/limits/cpu\",\"value\":\"1\"},"
              "7]",
              &r, &err),
        HR_OK);
    assert_true(r.has_patch);
    assert_int_equal(r.n_cpu, 0);
    assert_int_equal(parse(ok, "[]", &r, &err), HR_OK);
    assert_true(r.allowed);
    assert_true(r.has_patch);
    assert_int_equal(parse("\"uid\":\"u-1\",\"allowed\":false", NULL, &r, &err), HR_OK);
    assert_false(r.allowed);
    assert_false(r.has_patch);
}

static void refused(void **state)
{
    (void)state;
    hr_wh_reply r;
    hr_err err;
    static const char *const bodies[] = {
        "",
        "not json",
        "[]",
        "{\"apiVersion\":\"admission.k8s.io/v1beta1\",\"kind\":\"AdmissionReview\","
        "\"response\":{\"uid\":\"u-1\",\"allowed\":true}}",
        "{\"apiVersion\":\"admission.k8s.io/v1\",\"kind\":\"Status\",\"response\":{\"uid\":\"u-1\","
        "\"allowed\":true}}",
        "{\"apiVersion\":\"admission.k8s.io/v1\",\"kind\":\"AdmissionReview\"}",
    };
    for (size_t i = 0; i < sizeof bodies / sizeof bodies[0]; i++)
        assert_int_equal(hr_wh_reply_parse(bodies[i], strlen(bodies[i]), "u-1", &r, &err),
                         HR_E_INPUT);
    assert_int_equal(parse("\"uid\":\"u-2\",\"allowed\":true", NULL, &r, &err), HR_E_INPUT);
    assert_non_null(strstr(err.msg, "uid"));
    assert_int_equal(parse("\"uid\":\"u-1\",\"allowed\":\"true\"", NULL, &r, &err), HR_E_INPUT);
    assert_non_null(strstr(err.msg, "allowed"));
    assert_int_equal(parse("\"uid\":\"u-1\",\"allowed\":true", "{\"op\":\"add\"}", &r, &err),
                     HR_E_INPUT);
    assert_non_null(strstr(err.msg, "array"));
    assert_int_equal(
        parse("\"uid\":\"u-1\",\"allowed\":true,\"patchType\":\"JSONPatch\",\"patch\":\"!!!!\"",
              NULL, &r, &err),
        HR_E_INPUT);
    assert_non_null(strstr(err.msg, "base64"));
    assert_int_equal(parse("\"uid\":\"u-1\",\"allowed\":true,\"patch\":\"W10=\"", NULL, &r, &err),
                     HR_E_INPUT);
    assert_non_null(strstr(err.msg, "patchType"));
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(handler_answers),
        cmocka_unit_test(patch_shapes),
        cmocka_unit_test(refused),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
