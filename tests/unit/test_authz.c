/*
 * test_authz.c — the secured /metrics' pieces without an API server: the
 * bearer token parser, the verdict cache's bounds (allowed and denied
 * TTLs, errors never cached, the entry limit, verb and path in the key),
 * and the TokenReview → SubjectAccessReview JSON (kube/write/review.h).
 * The whole path against the real API server is tests/e2e/e2e_metrics_auth.sh.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include "kube/write/review.h"
#include "server/authz.h"

static void bearer(void **state)
{
    (void)state;
    size_t n = 0;
    const char *t = hr_authz_bearer("Bearer abc.def", &n);
    assert_non_null(t);
    assert_int_equal(n, 7);
    assert_memory_equal(t, "abc.def", 7);
    t = hr_authz_bearer("  bearer   xyz  ", &n);
    assert_non_null(t);
    assert_int_equal(n, 3);
    assert_null(hr_authz_bearer(NULL, &n));
    assert_null(hr_authz_bearer("", &n));
    assert_null(hr_authz_bearer("Bearer", &n));
    assert_null(hr_authz_bearer("Bearer ", &n));
    assert_null(hr_authz_bearer("Basic dXNlcjpwdw==", &n));
    assert_null(hr_authz_bearer("Bearerabc", &n));
    assert_null(hr_authz_bearer("Bearer a b", &n));
}

typedef struct fake {
    int calls;
    hr_authz_verdict answer;
    char last[64];
} fake;

static hr_authz_verdict review(void *ud, const char *token, const char *verb, const char *path,
                               int64_t until_ms, const atomic_bool *cancel, char *user, size_t cap)
{
    (void)cancel;
    (void)until_ms;
    fake *f = ud;
    f->calls++;
    snprintf(f->last, sizeof f->last, "%s %s %s", verb, path, token);
    snprintf(user, cap, "u");
    return f->answer;
}

static void cache_bounds(void **state)
{
    (void)state;
    fake f = {0, HR_AUTHZ_ALLOWED, ""};
    hr_authz_opts o = {
        .review = review, .ud = &f, .max_entries = 2, .allow_ttl_ms = 400, .deny_ttl_ms = 100};
    hr_authz *a;
    hr_err err;
    assert_int_equal(hr_authz_new(&o, &a, &err), HR_OK);

    /* No token: 401 without a call. */
    assert_int_equal(hr_authz_check(a, NULL, "get", "/metrics"), HR_AUTHZ_UNAUTHENTICATED);
    assert_int_equal(f.calls, 0);

    /* Allowed: one call, then cached until the TTL. */
    assert_int_equal(hr_authz_check(a, "Bearer t1", "get", "/metrics"), HR_AUTHZ_ALLOWED);
    assert_string_equal(f.last, "get /metrics t1");
    assert_int_equal(hr_authz_check(a, "Bearer t1", "get", "/metrics"), HR_AUTHZ_ALLOWED);
    assert_int_equal(f.calls, 1);
    /* Verb and path are part of the key. */
    assert_int_equal(hr_authz_check(a, "Bearer t1", "get", "/other"), HR_AUTHZ_ALLOWED);
    assert_int_equal(f.calls, 2);

    /* Denied: cached for the shorter TTL only. */
    f.answer = HR_AUTHZ_DENIED;
    assert_int_equal(hr_authz_check(a, "Bearer t2", "get", "/metrics"), HR_AUTHZ_DENIED);
    assert_int_equal(hr_authz_check(a, "Bearer t2", "get", "/metrics"), HR_AUTHZ_DENIED);
    assert_int_equal(f.calls, 3);
    usleep(150000);
    assert_int_equal(hr_authz_check(a, "Bearer t2", "get", "/metrics"), HR_AUTHZ_DENIED);
    assert_int_equal(f.calls, 4);

    /* Two entries at most: t1's /metrics verdict was evicted by now (t1
     * /other and t2 are newer), so it is asked again. */
    f.answer = HR_AUTHZ_ALLOWED;
    assert_int_equal(hr_authz_check(a, "Bearer t1", "get", "/metrics"), HR_AUTHZ_ALLOWED);
    assert_int_equal(f.calls, 5);

    /* Allowed expires too. */
    usleep(450000);
    assert_int_equal(hr_authz_check(a, "Bearer t1", "get", "/metrics"), HR_AUTHZ_ALLOWED);
    assert_int_equal(f.calls, 6);

    /* An error is never cached. */
    f.answer = HR_AUTHZ_ERROR;
    assert_int_equal(hr_authz_check(a, "Bearer t3", "get", "/metrics"), HR_AUTHZ_ERROR);
    assert_int_equal(hr_authz_check(a, "Bearer t3", "get", "/metrics"), HR_AUTHZ_ERROR);
    assert_int_equal(f.calls, 8);

    hr_authz_stats s;
    hr_authz_get_stats(a, &s);
    assert_int_equal(s.reviews, 8);
    assert_int_equal(s.hits, 2);
    assert_int_equal(hr_authz_status(HR_AUTHZ_ALLOWED), 0);
    assert_int_equal(hr_authz_status(HR_AUTHZ_DENIED), 403);
    assert_int_equal(hr_authz_status(HR_AUTHZ_UNAUTHENTICATED), 401);
    assert_int_equal(hr_authz_status(HR_AUTHZ_ERROR), 500);
    hr_authz_free(a);
}

static void review_json(void **state)
{
    (void)state;
    hr_buf b;
    hr_err err;
    hr_buf_init(&b, 0);
    assert_int_equal(hr_kreview_token_json("to\"ken", &b, &err), HR_OK);
    assert_string_equal(hr_buf_str(&b),
                        "{\"apiVersion\":\"authentication.k8s.io/v1\","
                        "\"kind\":\"TokenReview\",\"spec\":{\"token\":\"to\\\"ken\"}}");
    hr_buf_reset(&b);

    static const char tr[] =
        "{\"kind\":\"TokenReview\",\"apiVersion\":\"authentication.k8s.io/v1\",\"status\":{"
        "\"authenticated\":true,\"user\":{\"username\":\"system:serviceaccount:m:reader\","
        "\"uid\":\"42\",\"groups\":[\"system:serviceaccounts\",\"system:authenticated\"],"
        "\"extra\":{\"authentication.kubernetes.io/pod-name\":[\"p\"]}}}}";
    bool authn = false;
    char user[64];
    assert_int_equal(hr_kreview_sar_json(tr, sizeof tr - 1, "get", "/metrics", &authn, user,
                                         sizeof user, &b, &err),
                     HR_OK);
    assert_true(authn);
    assert_string_equal(user, "system:serviceaccount:m:reader");
    assert_string_equal(
        hr_buf_str(&b),
        "{\"apiVersion\":\"authorization.k8s.io/v1\",\"kind\":\"SubjectAccessReview\",\"spec\":{"
        "\"user\":\"system:serviceaccount:m:reader\",\"uid\":\"42\",\"groups\":["
        "\"system:serviceaccounts\",\"system:authenticated\"],\"extra\":{"
        "\"authentication.kubernetes.io/pod-name\":[\"p\"]},\"nonResourceAttributes\":{"
        "\"path\":\"/metrics\",\"verb\":\"get\"}}}");
    hr_buf_reset(&b);

    static const char no[] = "{\"kind\":\"TokenReview\",\"status\":{\"authenticated\":false,"
                             "\"error\":\"invalid bearer token\"}}";
    assert_int_equal(hr_kreview_sar_json(no, sizeof no - 1, "get", "/metrics", &authn, user,
                                         sizeof user, &b, &err),
                     HR_OK);
    assert_false(authn);
    assert_int_equal(b.len, 0);
    assert_int_equal(
        hr_kreview_sar_json("[1]", 3, "get", "/metrics", &authn, user, sizeof user, &b, &err),
        HR_E_INPUT);
    assert_int_equal(
        hr_kreview_sar_json("{", 1, "get", "/metrics", &authn, user, sizeof user, &b, &err),
        HR_E_INPUT);

    bool allowed = true;
    static const char yes[] = "{\"kind\":\"SubjectAccessReview\",\"status\":{\"allowed\":true}}";
    static const char den[] =
        "{\"kind\":\"SubjectAccessReview\",\"status\":{\"allowed\":true,\"denied\":true}}";
    static const char nope[] = "{\"kind\":\"SubjectAccessReview\",\"status\":{}}";
    assert_int_equal(hr_kreview_sar_allowed(yes, sizeof yes - 1, &allowed, &err), HR_OK);
    assert_true(allowed);
    assert_int_equal(hr_kreview_sar_allowed(den, sizeof den - 1, &allowed, &err), HR_OK);
    assert_false(allowed);
    assert_int_equal(hr_kreview_sar_allowed(nope, sizeof nope - 1, &allowed, &err), HR_OK);
    assert_false(allowed);
    assert_int_equal(hr_kreview_sar_allowed(tr, sizeof tr - 1, &allowed, &err), HR_E_INPUT);
    assert_false(allowed);
    hr_buf_free(&b);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(bearer),
        cmocka_unit_test(cache_bounds),
        cmocka_unit_test(review_json),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
