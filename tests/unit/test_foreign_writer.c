/*
 * test_foreign_writer.c — design §4, foreign-writer: who else writes a
 * container's limits.cpu, read from metadata.managedFields.
 *
 * The rule: an entry on the resize subresource, by a field manager other
 * than ours, that owns f:spec → f:containers (f:initContainers for a
 * sidecar) → k:{"name":…} → f:resources → f:limits → f:cpu of a container
 * the policy manages. The pod's creator (an Update or Apply on the main
 * resource, subresource "") is never another writer, nor are we. The same
 * pods are decoded from JSON and from protobuf (fields encoded here by
 * Kubernetes' numbers) and must give the same answer; the cache keeps it
 * (the pod blob) and gives it back; eligibility turns it into the reason.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <yyjson.h>

#include <cmocka.h>

#include "cache/cache.h"
#include "core/eligibility.h"
#include "core/names.h"
#include "hr_pbenc.h"
#include "kube/decode/pbpod.h"
#include "kube/decode/pod.h"

/* fieldsV1 that owns limits.cpu (and requests.cpu) of container name. */
#define OWNS_LIMIT(name)                                                              \
    "{\"f:spec\":{\"f:containers\":{\"k:{\\\"name\\\":\\\"" name "\\\"}\":{\".\":{}," \
    "\"f:resources\":{\"f:limits\":{\"f:cpu\":{}},\"f:requests\":{\"f:cpu\":{}}}}}}}"
#define OWNS_REQUEST(name)                                                   \
    "{\"f:spec\":{\"f:containers\":{\"k:{\\\"name\\\":\\\"" name "\\\"}\":{" \
    "\"f:resources\":{\"f:requests\":{\"f:cpu\":{}}}}}}}"
#define OWNS_SIDECAR_LIMIT(name)                                                 \
    "{\"f:spec\":{\"f:initContainers\":{\"k:{\\\"name\\\":\\\"" name "\\\"}\":{" \
    "\"f:resources\":{\"f:limits\":{\"f:cpu\":{}}}}}}}"

typedef struct entry {
    const char *manager, *operation, *subresource; /* subresource NULL: none */
    const char *fields;                            /* fieldsV1 JSON */
} entry;

typedef struct fcase {
    const char *what;
    entry e[3];
    size_t n;
    const char *want; /* the foreign writer, NULL: none */
} fcase;

static const fcase cases[] = {
    {"the creator (Update on the main resource) owns the limit",
     {{"kube-controller-manager", "Update", NULL, OWNS_LIMIT("app")}},
     1,
     NULL},
    {"the creator by server-side apply", {{"kubectl", "Apply", NULL, OWNS_LIMIT("app")}}, 1, NULL},
    {"our own resize",
     {{"kubectl", "Update", NULL, OWNS_LIMIT("app")},
      {HR_FIELD_MANAGER, "Apply", "resize", OWNS_LIMIT("app")}},
     2,
     NULL},
    {"a second resizer (kubectl patch --subresource resize)",
     {{"kubectl", "Update", NULL, OWNS_LIMIT("app")},
      {"kubectl-patch", "Update", "resize", OWNS_LIMIT("app")}},
     2,
     "kubectl-patch"},
    {"a resizer that took the field from us",
     {{HR_FIELD_MANAGER, "Apply", "resize", "{\"f:spec\":{}}"},
      {"vpa-updater", "Apply", "resize", OWNS_LIMIT("app")}},
     2,
     "vpa-updater"},
    {"a resizer of the request only",
     {{"autoscaler", "Update", "resize", OWNS_REQUEST("app")}},
     1,
     NULL},
    {"a resizer of a container we do not manage (init)",
     {{"other", "Update", "resize",
       "{\"f:spec\":{\"f:initContainers\":{\"k:{\\\"name\\\":\\\"migrate\\\"}\":{"
       "\"f:resources\":{\"f:limits\":{\"f:cpu\":{}}}}}}}"}},
     1,
     NULL},
    {"a resizer of a sidecar's limit",
     {{"mesh", "Update", "resize", OWNS_SIDECAR_LIMIT("envoy")}},
     1,
     "mesh"},
    {"a resizer of a container of another name",
     {{"other", "Update", "resize", OWNS_LIMIT("nope")}},
     1,
     NULL},
    {"a status writer is not a resizer",
     {{"kubelet", "Update", "status", OWNS_LIMIT("app")}},
     1,
     NULL},
};

/* ------------------------------------------------------------ JSON */

static int json_pod(char *out, size_t cap, const fcase *fc)
{
    char mf[4096];
    size_t n = 0;
    mf[0] = '\0';
    for (size_t i = 0; i < fc->n; i++) {
        const entry *e = &fc->e[i];
        char sub[64] = "";
        if (e->subresource)
            snprintf(sub, sizeof sub, ",\"subresource\":\"%s\"", e->subresource);
        n += (size_t)snprintf(mf + n, sizeof mf - n,
                              "%s{\"manager\":\"%s\",\"operation\":\"%s\",\"apiVersion\":\"v1\","
                              "\"fieldsType\":\"FieldsV1\",\"fieldsV1\":%s%s}",
                              i ? "," : "", e->manager, e->operation, e->fields, sub);
    }
    return snprintf(
        out, cap,
        "{\"apiVersion\":\"v1\",\"kind\":\"Pod\",\"metadata\":{\"name\":\"web-0\","
        "\"namespace\":\"team\",\"managedFields\":[%s]},\"spec\":{\"nodeName\":\"n1\","
        "\"initContainers\":[{\"name\":\"migrate\",\"resources\":{\"requests\":{\"cpu\":\"1\"}}},"
        "{\"name\":\"envoy\",\"restartPolicy\":\"Always\",\"resources\":{\"requests\":"
        "{\"cpu\":\"100m\"},\"limits\":{\"cpu\":\"200m\"}}}],"
        "\"containers\":[{\"name\":\"app\",\"resources\":{\"requests\":{\"cpu\":\"500m\"},"
        "\"limits\":{\"cpu\":\"1\"}}}]},\"status\":{\"phase\":\"Running\","
        "\"containerStatuses\":[{\"name\":\"app\",\"resources\":{}}],"
        "\"initContainerStatuses\":[{\"name\":\"envoy\",\"resources\":{}}]}}",
        mf);
}

static void expect_writer(const char *what, const char *how, const hr_kpod *kp, const char *want)
{
    const char *got = kp->pod.foreign_writer;
    if ((got == NULL) != (want == NULL) || (got && strcmp(got, want) != 0))
        fail_msg("%s (%s): foreign writer %s, want %s", what, how, got ? got : "(none)",
                 want ? want : "(none)");
    hr_reason r = hr_pod_eligibility(&kp->pod);
    if (r != (want ? HR_R_FOREIGN_WRITER : HR_MANAGED))
        fail_msg("%s (%s): eligibility %s", what, how, hr_reason_str(r));
}

static void test_json(void **state)
{
    (void)state;
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        char json[8192];
        assert_true(json_pod(json, sizeof json, &cases[i]) < (int)sizeof json);
        yyjson_doc *d = yyjson_read(json, strlen(json), 0);
        if (!d)
            fail_msg("%s: test JSON does not parse: %s", cases[i].what, json);
        hr_arena a;
        hr_arena_init(&a, 0);
        hr_err err;
        hr_err_clear(&err);
        hr_kpod kp;
        if (hr_decode_pod(yyjson_doc_get_root(d), &a, &kp, &err) != HR_OK)
            fail_msg("%s: %s", cases[i].what, err.msg);
        expect_writer(cases[i].what, "JSON", &kp, cases[i].want);
        hr_arena_free(&a);
        yyjson_doc_free(d);
    }
}

/* managedFields the server would never send read as no writer: the pod
 * still decodes (design §15 keeps its requests). */
static void test_json_malformed(void **state)
{
    (void)state;
    static const char *const bad[] = {
        "\"x\"",
        "[1,\"a\",null]",
        "[{\"manager\":3,\"subresource\":\"resize\",\"fieldsV1\":{}}]",
        "[{\"manager\":\"m\",\"subresource\":\"resize\",\"fieldsV1\":[]}]",
        ("[{\"manager\":\"m\",\"subresource\":\"resize\",\"fieldsV1\":{\"f:spec\":{"
         "\"f:containers\":[]}}}]"),
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        char json[2048];
        snprintf(json, sizeof json,
                 "{\"metadata\":{\"name\":\"p\",\"namespace\":\"n\",\"managedFields\":%s},"
                 "\"spec\":{\"containers\":[{\"name\":\"app\",\"resources\":{\"requests\":"
                 "{\"cpu\":\"1\"}}}]}}",
                 bad[i]);
        yyjson_doc *d = yyjson_read(json, strlen(json), 0);
        assert_non_null(d);
        hr_arena a;
        hr_arena_init(&a, 0);
        hr_err err;
        hr_err_clear(&err);
        hr_kpod kp;
        if (hr_decode_pod(yyjson_doc_get_root(d), &a, &kp, &err) != HR_OK)
            fail_msg("managedFields %s: %s", bad[i], err.msg);
        assert_null(kp.pod.foreign_writer);
        hr_arena_free(&a);
        yyjson_doc_free(d);
    }
}

/* ------------------------------------------------------------ protobuf */

/* map<string, Quantity> entry {key 1, value 2 {string 1}}. */
static void put_qty(pbb *o, uint32_t field, const char *key, const char *q)
{
    pbb qm = {.n = 0}, e = {.n = 0};
    put_str(&qm, 1, q);
    put_str(&e, 1, key);
    put_msg(&e, 2, &qm);
    put_msg(o, field, &e);
}

/* Container {name 1, resources 8 {limits 1, requests 2}, restartPolicy 24}. */
static void put_ctr(pbb *spec, uint32_t field, const char *name, const char *req, const char *lim,
                    const char *restart)
{
    pbb c = {.n = 0}, r = {.n = 0};
    put_str(&c, 1, name);
    if (lim)
        put_qty(&r, 1, "cpu", lim);
    put_qty(&r, 2, "cpu", req);
    put_msg(&c, 8, &r);
    if (restart)
        put_str(&c, 24, restart);
    put_msg(spec, field, &c);
}

static void pb_pod(pbb *out, const fcase *fc)
{
    pbb meta = {.n = 0}, spec = {.n = 0}, status = {.n = 0};
    put_str(&meta, 1, "web-0");
    put_str(&meta, 3, "team");
    for (size_t i = 0; i < fc->n; i++) {
        const entry *e = &fc->e[i];
        pbb m = {.n = 0}, fv = {.n = 0};
        put_str(&m, 1, e->manager);
        put_str(&m, 2, e->operation);
        put_str(&m, 3, "v1");
        put_str(&m, 6, "FieldsV1");
        put_str(&fv, 1, e->fields);
        put_msg(&m, 7, &fv);
        if (e->subresource)
            put_str(&m, 8, e->subresource);
        put_msg(&meta, 17, &m);
    }
    put_ctr(&spec, 2, "app", "500m", "1", NULL);
    put_str(&spec, 10, "n1");
    put_ctr(&spec, 20, "migrate", "1", NULL, NULL);
    put_ctr(&spec, 20, "envoy", "100m", "200m", "Always");
    put_str(&status, 1, "Running");
    pbb cs = {.n = 0}, res = {.n = 0};
    put_str(&cs, 1, "app");
    put_msg(&cs, 11, &res);
    put_msg(&status, 8, &cs);
    pbb is = {.n = 0};
    put_str(&is, 1, "envoy");
    put_msg(&is, 11, &res);
    put_msg(&status, 10, &is);
    out->n = 0;
    put_msg(out, 1, &meta);
    put_msg(out, 2, &spec);
    put_msg(out, 3, &status);
}

static void test_protobuf(void **state)
{
    (void)state;
    static pbb raw;
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        pb_pod(&raw, &cases[i]);
        hr_arena a;
        hr_arena_init(&a, 0);
        hr_err err;
        hr_err_clear(&err);
        hr_kpod kp;
        if (hr_pbdecode_pod(raw.b, raw.n, &a, &kp, NULL, &err) != HR_OK)
            fail_msg("%s: %s", cases[i].what, err.msg);
        expect_writer(cases[i].what, "protobuf", &kp, cases[i].want);
        hr_arena_free(&a);
    }
}

/* A fieldsV1 whose Raw is not JSON owns nothing; the pod decodes. */
static void test_protobuf_bad_raw(void **state)
{
    (void)state;
    static pbb raw;
    fcase fc = {"bad raw", {{"other", "Update", "resize", "{\"f:spec\":"}}, 1, NULL};
    pb_pod(&raw, &fc);
    hr_arena a;
    hr_arena_init(&a, 0);
    hr_err err;
    hr_err_clear(&err);
    hr_kpod kp;
    if (hr_pbdecode_pod(raw.b, raw.n, &a, &kp, NULL, &err) != HR_OK)
        fail_msg("%s", err.msg);
    assert_null(kp.pod.foreign_writer);
    hr_arena_free(&a);
}

/* ------------------------------------------------------------ cache */

/* The cache keeps the writer's name with the pod, and forgets it when the
 * other manager's entry goes (an update that changes only that is seen). */
static void test_cache_keeps_it(void **state)
{
    (void)state;
    hr_cache *c;
    hr_err err;
    hr_err_clear(&err);
    assert_int_equal(hr_cache_new(&c, &err), HR_OK);
    static pbb raw;
    const fcase *with = &cases[3], *without = &cases[0];
    for (int round = 0; round < 3; round++) {
        const fcase *fc = round == 1 ? without : with;
        pb_pod(&raw, fc);
        hr_arena a;
        hr_arena_init(&a, 0);
        hr_kpod kp;
        assert_int_equal(hr_pbdecode_pod(raw.b, raw.n, &a, &kp, NULL, &err), HR_OK);
        assert_int_equal(hr_cache_put_pod(c, &kp, NULL, &err), HR_OK);
        hr_cache_lock(c);
        hr_cpod_view v;
        static hr_cpod_scratch s;
        assert_true(hr_cache_pod_get(c, "team", "web-0", &v, &s));
        if (fc->want)
            assert_string_equal(v.pod.foreign_writer ? v.pod.foreign_writer : "(none)", fc->want);
        else
            assert_null(v.pod.foreign_writer);
        hr_cache_unlock(c);
        hr_arena_free(&a);
    }
    hr_cache_free(c);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_json),           cmocka_unit_test(test_json_malformed),
        cmocka_unit_test(test_protobuf),       cmocka_unit_test(test_protobuf_bad_raw),
        cmocka_unit_test(test_cache_keeps_it),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
