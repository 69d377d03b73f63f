/*
 * test_cliparse.c — what the command line checks and computes before it
 * prints: DNS-1123 names (kube/kname.h), kubectl's string label selectors
 * (kube/lselector.h, evaluated by the core's matcher), and which design
 * §2.3 bound is the cap (core hr_pod_caps_of, what explain and -o wide
 * name).
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "core/config.h"
#include "core/policy.h"
#include "kube/kname.h"
#include "kube/lselector.h"

static void names(void **state)
{
    (void)state;
    assert_true(hr_kname_label("payments"));
    assert_true(hr_kname_label("a"));
    assert_true(hr_kname_label("team-2"));
    assert_false(hr_kname_label(""));
    assert_false(hr_kname_label("-a"));
    assert_false(hr_kname_label("a-"));
    assert_false(hr_kname_label("Payments"));
    assert_false(hr_kname_label("a.b")); /* a label has no dots */
    assert_false(hr_kname_label("a/b"));
    assert_false(hr_kname_label("a%2Fb"));
    char l63[64], l64[65];
    memset(l63, 'a', 63), l63[63] = '\0';
    memset(l64, 'a', 64), l64[64] = '\0';
    assert_true(hr_kname_label(l63));
    assert_false(hr_kname_label(l64));

    assert_true(hr_kname_subdomain("web-7d9f8b6c4-x2k9p"));
    assert_true(hr_kname_subdomain("node-1.example.com"));
    assert_false(hr_kname_subdomain("a..b"));
    assert_false(hr_kname_subdomain(".a"));
    assert_false(hr_kname_subdomain("a."));
    assert_false(hr_kname_subdomain("payments/web"));
    assert_false(hr_kname_subdomain("web?watch=1"));
    assert_false(hr_kname_subdomain("Web_1"));
    assert_false(hr_kname_subdomain(NULL));
    char s253[254], s254[255];
    for (int i = 0; i < 253; i++)
        s253[i] = (i % 2) ? '.' : 'a';
    s253[252] = 'a', s253[253] = '\0';
    assert_true(hr_kname_subdomain(s253));
    memcpy(s254, s253, 253), s254[253] = 'a', s254[254] = '\0';
    assert_false(hr_kname_subdomain(s254));
}

static bool sel(const char *expr, const char *const *kv, uint32_t n)
{
    hr_arena a;
    hr_arena_init(&a, 0);
    hr_selector s;
    hr_err err;
    assert_int_equal(hr_lselector_parse(expr, &a, &s, &err), HR_OK);
    hr_labels l = {kv, n};
    bool m = hr_selector_matches(&s, &l);
    hr_arena_free(&a);
    return m;
}

static void selectors(void **state)
{
    (void)state;
    static const char *const kv[] = {"app", "web", "tier", "front", "example.com/team", "a"};
    assert_true(sel("", kv, 3));
    assert_true(sel("app=web", kv, 3));
    assert_true(sel("app==web", kv, 3));
    assert_false(sel("app=api", kv, 3));
    assert_true(sel("app!=api", kv, 3));
    assert_true(sel("missing!=x", kv, 3)); /* Kubernetes: != matches a missing key */
    assert_true(sel("app", kv, 3));
    assert_false(sel("!app", kv, 3));
    assert_true(sel("!missing", kv, 3));
    assert_true(sel("app in (api, web)", kv, 3));
    assert_false(sel("app notin (api,web)", kv, 3));
    assert_true(sel("app in (web),tier=front", kv, 3));
    assert_false(sel("app in (web),tier=back", kv, 3));
    assert_true(sel(" app = web , example.com/team=a ", kv, 3));
    assert_true(sel("tier notin (back)", kv, 3));

    static const char *const bad[] = {"a b", "app in web", "app in (",      "=web",
                                      "!",   "app=w/x",    "app notin ()x", "a,,b"};
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        hr_arena a;
        hr_arena_init(&a, 0);
        hr_selector s;
        hr_err err;
        assert_int_equal(hr_lselector_parse(bad[i], &a, &s, &err), HR_E_INPUT);
        assert_non_null(strstr(err.msg, "selector"));
        hr_arena_free(&a);
    }
}

static hr_cap_kind cap_kind(const hr_config *c, int64_t A, const hr_pod *p, int64_t r, int64_t *cap)
{
    hr_pod_caps caps;
    hr_pod_caps_of(c, A, p, r, &caps);
    *cap = caps.cap;
    return caps.kind;
}

static void caps(void **state)
{
    (void)state;
    hr_config c;
    hr_config_defaults(&c); /* maxMultiplier 10 */
    hr_pod p = hr_pod_init();
    int64_t cap;
    assert_int_equal(cap_kind(&c, 64000, &p, 100, &cap), HR_CAP_MULTIPLIER);
    assert_int_equal(cap, 1000);
    assert_int_equal(cap_kind(&c, 8000, &p, 1000, &cap), HR_CAP_ALLOCATABLE);
    assert_int_equal(cap, 8000); /* min(10 cores, 8) */
    /* A tie goes to the first in design §2.3's order. */
    assert_int_equal(cap_kind(&c, 10000, &p, 1000, &cap), HR_CAP_MULTIPLIER);
    p.max_cpu = 1500;
    assert_int_equal(cap_kind(&c, 16000, &p, 1000, &cap), HR_CAP_MAX_CPU);
    assert_int_equal(cap, 1500);
    p.max_cpu = 200; /* under the request: the request wins */
    assert_int_equal(cap_kind(&c, 16000, &p, 500, &cap), HR_CAP_REQUEST);
    assert_int_equal(cap, 500);
    p.max_cpu = HR_NONE;
    p.limits.pod_max = 2000;
    assert_int_equal(cap_kind(&c, 16000, &p, 500, &cap), HR_CAP_LR_POD);
    assert_int_equal(cap, 2000);
    /* maxMultiplier 0 turns its bound off. */
    c.max_multiplier_milli = 0;
    p.limits.pod_max = HR_NONE;
    hr_pod_caps pc;
    hr_pod_caps_of(&c, 16000, &p, 100, &pc);
    assert_false(pc.on[HR_CAP_MULTIPLIER]);
    assert_int_equal(pc.kind, HR_CAP_ALLOCATABLE);
    assert_int_equal(pc.cap, 16000);
    /* The cap is what hr_pod_target applies. */
    hr_config_defaults(&c);
    p.max_cpu = 1500;
    int64_t tcap = 0;
    int64_t t = hr_pod_target(&c, 16000, 15000, 1000, 1, &p, 1000, &tcap);
    assert_int_equal(tcap, 1500);
    assert_int_equal(t, 1500);
    assert_int_equal(hr_pod_raw(&c, 15000, 1000, 1, 1000), 16000);
    assert_string_equal(hr_cap_str(HR_CAP_LR_CONTAINER), "LimitRange Container bounds");
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(names),
        cmocka_unit_test(selectors),
        cmocka_unit_test(caps),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
