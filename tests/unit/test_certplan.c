/*
 * test_certplan.c — the self-managed webhook certificate (design §8):
 *  - when to make, renew and re-root it (server/certplan.h), a table of
 *    states and the action and next look each gets;
 *  - what a Secret holds, read from real certificates made by
 *    server/selfsigned.h (server/certinfo.h): a CA and a pair it issued are
 *    usable; the wrong key, other names, another CA, garbage are not; the
 *    caBundle trusts the signing CA or not; a bundle of two CAs re-roots;
 *  - the Secret and the webhook configuration as the API server returns
 *    them (kube/write/tlssecret.h): base64 values decoded, bad ones refused,
 *    caBundles compared.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <cmocka.h>

#include "kube/write/tlssecret.h"
#include "server/certinfo.h"
#include "server/certplan.h"
#include "server/selfsigned.h"
#include "util/base64.h"
#include "util/buf.h"

#define DAY 86400
static const hr_certplan_policy POL = {
    .ca_renew_before = 90 * DAY, .leaf_renew_before = 30 * DAY, .drop_old_after = 900};
#define NOW INT64_C(1800000000)

/* A good state: CA for a year, leaf for 90 days from NOW - 1 day. */
static hr_certplan_in good(void)
{
    return (hr_certplan_in){.ca_ok = true,
                            .ca_not_after = NOW + 365 * DAY,
                            .n_bundle = 1,
                            .leaf_ok = true,
                            .leaf_by_ca = true,
                            .leaf_not_before = NOW - DAY,
                            .leaf_not_after = NOW + 89 * DAY,
                            .webhook_trusts_ca = true};
}

typedef struct row {
    const char *name;
    hr_certplan_in in;
    hr_certplan_action want;
} row;

static void decide_table(void **state)
{
    (void)state;
    row rows[8];
    size_t n = 0;
    rows[n] = (row){"all good", good(), HR_CERTPLAN_KEEP};
    n++;
    rows[n] = (row){"empty Secret", {0}, HR_CERTPLAN_NEW_CA};
    n++;
    hr_certplan_in in = good();
    in.ca_not_after = NOW + 90 * DAY; /* exactly at the CA's renewal */
    rows[n++] = (row){"CA due", in, HR_CERTPLAN_ADD_CA};
    in = good();
    in.leaf_ok = false;
    in.leaf_by_ca = false;
    rows[n++] = (row){"leaf broken", in, HR_CERTPLAN_NEW_LEAF};
    in = good();
    in.leaf_not_after = NOW + 30 * DAY;
    rows[n++] = (row){"leaf due", in, HR_CERTPLAN_NEW_LEAF};
    in = good();
    in.n_bundle = 2;
    in.leaf_by_ca = false;
    in.webhook_trusts_ca = false;
    rows[n++] = (row){"re-rooting, caBundle not yet", in, HR_CERTPLAN_KEEP};
    in.webhook_trusts_ca = true;
    rows[n++] = (row){"re-rooting, caBundle trusts", in, HR_CERTPLAN_NEW_LEAF};
    in = good();
    in.n_bundle = 2;
    in.leaf_not_before = NOW - 900;
    rows[n++] = (row){"old CA dropped after the grace", in, HR_CERTPLAN_DROP_OLD_CA};
    for (size_t i = 0; i < n; i++) {
        int64_t next = 0;
        hr_certplan_action a = hr_certplan_decide(&rows[i].in, &POL, NOW, &next);
        if (a != rows[i].want)
            fail_msg("%s: %s, want %s", rows[i].name, hr_certplan_action_name(a),
                     hr_certplan_action_name(rows[i].want));
        if (a != HR_CERTPLAN_KEEP)
            assert_int_equal(next, NOW); /* look again at once */
    }
}

static void decide_next(void **state)
{
    (void)state;
    hr_certplan_in in = good();
    int64_t next;
    assert_int_equal(hr_certplan_decide(&in, &POL, NOW, &next), HR_CERTPLAN_KEEP);
    assert_int_equal(next, NOW + 59 * DAY); /* the leaf's renewal comes first */
    in.n_bundle = 2;
    in.leaf_not_before = NOW - 100;
    assert_int_equal(hr_certplan_decide(&in, &POL, NOW, &next), HR_CERTPLAN_KEEP);
    assert_int_equal(next, NOW + 800); /* then the old CA's drop */
    in = good();
    in.ca_not_after = NOW + 91 * DAY;
    assert_int_equal(hr_certplan_decide(&in, &POL, NOW, &next), HR_CERTPLAN_KEEP);
    assert_int_equal(next, NOW + DAY); /* the CA's renewal */
    /* one second before a renewal: keep; at it: renew */
    in = good();
    in.leaf_not_after = NOW + 30 * DAY + 1;
    assert_int_equal(hr_certplan_decide(&in, &POL, NOW, NULL), HR_CERTPLAN_KEEP);
    assert_int_equal(hr_certplan_decide(&in, &POL, NOW + 1, NULL), HR_CERTPLAN_NEW_LEAF);
}

/* Real certificates: PEM of a CA and of a leaf it issues. */
typedef struct pems {
    hr_buf ca, ca_key, crt, key;
} pems;

static const char *const DNS[] = {"hr-webhook", "hr-webhook.ns.svc"};
static const char *const IPS[] = {"127.0.0.1"};
static const hr_certnames WANT = {DNS, 2, IPS, 1};

static hr_selfsigned *make_ca(pems *p)
{
    hr_selfsigned_opts co = {.common_name = "test-ca", .seconds = 3600, .is_ca = true};
    hr_selfsigned *ca;
    hr_err err;
    assert_int_equal(hr_selfsigned_new(&co, &ca, &err), HR_OK);
    assert_int_equal(hr_selfsigned_pem(ca, &p->ca, &p->ca_key, &err), HR_OK);
    return ca;
}

static void make_leaf(const hr_selfsigned *ca, const hr_certnames *w, long seconds, pems *p)
{
    hr_selfsigned_opts lo = {.dns = w->dns,
                             .n_dns = w->n_dns,
                             .ips = w->ips,
                             .n_ips = w->n_ips,
                             .seconds = seconds,
                             .issuer = ca};
    hr_selfsigned *leaf;
    hr_err err;
    assert_int_equal(hr_selfsigned_new(&lo, &leaf, &err), HR_OK);
    hr_buf_reset(&p->crt);
    hr_buf_reset(&p->key);
    assert_int_equal(hr_selfsigned_pem(leaf, &p->crt, &p->key, &err), HR_OK);
    hr_selfsigned_free(leaf);
}

static hr_certsrc src_of(const pems *p)
{
    return (hr_certsrc){p->crt.data, p->key.data, p->ca.data, p->ca_key.data,
                        p->crt.len,  p->key.len,  p->ca.len,  p->ca_key.len};
}

static void pems_free(pems *p)
{
    hr_buf_free(&p->ca);
    hr_buf_free(&p->ca_key);
    hr_buf_free(&p->crt);
    hr_buf_free(&p->key);
}

static void read_real(void **state)
{
    (void)state;
    pems p = {0};
    hr_selfsigned *ca = make_ca(&p);
    make_leaf(ca, &WANT, 600, &p);
    int64_t now = (int64_t)time(NULL);
    hr_certsrc src = src_of(&p);
    hr_certplan_in in;
    char serial[HR_CERTINFO_SERIAL_LEN];
    hr_certinfo_read(&src, &WANT, p.ca.data, p.ca.len, now, &in, serial);
    assert_true(in.ca_ok);
    assert_true(in.leaf_ok);
    assert_true(in.leaf_by_ca);
    assert_true(in.webhook_trusts_ca);
    assert_int_equal(in.n_bundle, 1);
    assert_true(in.leaf_not_after > now + 500 && in.leaf_not_after <= now + 601);
    assert_int_equal(strlen(serial), 32);
    const hr_certplan_policy short_pol = {
        .ca_renew_before = 60, .leaf_renew_before = 900, .drop_old_after = 900};
    assert_int_equal(hr_certplan_decide(&in, &short_pol, now, NULL), HR_CERTPLAN_NEW_LEAF);

    /* no caBundle yet; another name wanted; the key of another pair */
    hr_certinfo_read(&src, &WANT, NULL, 0, now, &in, serial);
    assert_false(in.webhook_trusts_ca);
    static const char *const OTHER[] = {"other.ns.svc"};
    hr_certnames w2 = {OTHER, 1, NULL, 0};
    hr_certinfo_read(&src, &w2, p.ca.data, p.ca.len, now, &in, serial);
    assert_true(in.ca_ok);
    assert_false(in.leaf_ok);
    pems q = {0};
    hr_selfsigned *ca2 = make_ca(&q);
    make_leaf(ca2, &WANT, 600, &q);
    hr_certsrc mixed = src;
    mixed.key = q.key.data;
    mixed.key_len = q.key.len;
    hr_certinfo_read(&mixed, &WANT, p.ca.data, p.ca.len, now, &in, serial);
    assert_false(in.leaf_ok);
    /* a leaf of another CA than the bundle's */
    hr_certsrc foreign = src;
    foreign.crt = q.crt.data;
    foreign.crt_len = q.crt.len;
    foreign.key = q.key.data;
    foreign.key_len = q.key.len;
    hr_certinfo_read(&foreign, &WANT, p.ca.data, p.ca.len, now, &in, serial);
    assert_true(in.ca_ok);
    assert_false(in.leaf_ok);
    /* ca.key of no CA in the bundle */
    hr_certsrc nokey = src;
    nokey.ca_key = q.ca_key.data;
    nokey.ca_key_len = q.ca_key.len;
    hr_certinfo_read(&nokey, &WANT, p.ca.data, p.ca.len, now, &in, serial);
    assert_false(in.ca_ok);
    hr_selfsigned *s;
    hr_err err;
    assert_int_equal(hr_certinfo_signing_ca(&nokey, &s, &err), HR_E_INPUT);

    /* re-rooting: the bundle old + new, ca.key the new one's, the leaf the old CA's */
    hr_buf both;
    hr_buf_init(&both, 0);
    hr_buf_append(&both, p.ca.data, p.ca.len);
    hr_buf_append(&both, q.ca.data, q.ca.len);
    hr_certsrc reroot = src;
    reroot.ca = both.data;
    reroot.ca_len = both.len;
    reroot.ca_key = q.ca_key.data;
    reroot.ca_key_len = q.ca_key.len;
    hr_certinfo_read(&reroot, &WANT, p.ca.data, p.ca.len, now, &in, serial);
    assert_true(in.ca_ok);
    assert_true(in.leaf_ok);
    assert_false(in.leaf_by_ca);
    assert_false(in.webhook_trusts_ca);
    assert_int_equal(in.n_bundle, 2);
    assert_int_equal(hr_certplan_decide(&in, &short_pol, now, NULL), HR_CERTPLAN_KEEP);
    hr_certinfo_read(&reroot, &WANT, both.data, both.len, now, &in, serial);
    assert_true(in.webhook_trusts_ca);
    /* the signing CA signs a leaf that verifies under the bundle */
    assert_int_equal(hr_certinfo_signing_ca(&reroot, &s, &err), HR_OK);
    make_leaf(s, &WANT, 600, &p);
    hr_selfsigned_free(s);
    reroot.crt = p.crt.data;
    reroot.crt_len = p.crt.len;
    reroot.key = p.key.data;
    reroot.key_len = p.key.len;
    hr_certinfo_read(&reroot, &WANT, both.data, both.len, now, &in, serial);
    assert_true(in.leaf_ok);
    assert_true(in.leaf_by_ca);

    /* garbage everywhere: nothing usable, no crash */
    hr_certsrc junk = {"junk", "junk", "-----BEGIN CERTIFICATE-----\nxx\n", "", 4, 4, 31, 0};
    hr_certinfo_read(&junk, &WANT, "junk", 4, now, &in, serial);
    assert_false(in.ca_ok);
    assert_false(in.leaf_ok);
    assert_int_equal(in.n_bundle, 0);
    hr_buf_free(&both);
    hr_selfsigned_free(ca);
    hr_selfsigned_free(ca2);
    pems_free(&p);
    pems_free(&q);
}

static void secret_parse(void **state)
{
    (void)state;
    hr_ktls_secret s;
    hr_err err;
    const char *ok = "{\"kind\":\"Secret\",\"metadata\":{\"resourceVersion\":\"42\"},"
                     "\"data\":{\"tls.crt\":\"Y3J0\",\"tls.key\":\"a2V5\",\"ca.crt\":\"\"}}";
    assert_int_equal(hr_ktls_secret_parse(ok, strlen(ok), &s, &err), HR_OK);
    assert_string_equal(s.rv, "42");
    assert_string_equal(s.crt, "crt");
    assert_int_equal(s.key_len, 3);
    assert_null(s.ca); /* empty: as absent */
    assert_null(s.ca_key);
    hr_ktls_secret_free(&s);
    const char *empty = "{\"kind\":\"Secret\",\"metadata\":{\"resourceVersion\":\"1\"}}";
    assert_int_equal(hr_ktls_secret_parse(empty, strlen(empty), &s, &err), HR_OK);
    assert_null(s.crt);
    hr_ktls_secret_free(&s);
    const char *bad[] = {
        ("{\"kind\":\"Secret\",\"metadata\":{\"resourceVersion\":\"1\"},"
         "\"data\":{\"tls.crt\":\"%%%\"}}"),
        "{\"kind\":\"ConfigMap\",\"metadata\":{\"resourceVersion\":\"1\"}}",
        "{\"kind\":\"Secret\",\"metadata\":{}}",
        "{\"kind\":\"Secret\",\"metadata\":{\"resourceVersion\":\"1\"},\"data\":[]}", "not json"};
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        assert_int_equal(hr_ktls_secret_parse(bad[i], strlen(bad[i]), &s, &err), HR_E_INPUT);
        assert_null(s.crt);
    }
}

static void mwc_parse(void **state)
{
    (void)state;
    hr_kmwc m;
    hr_err err;
    const char *two =
        "{\"kind\":\"MutatingWebhookConfiguration\",\"metadata\":{\"resourceVersion\":"
        "\"7\"},\"webhooks\":[{\"clientConfig\":{\"caBundle\":\"Y2E=\"}},"
        "{\"clientConfig\":{\"url\":\"https://x\"}}]}";
    assert_int_equal(hr_kmwc_parse(two, strlen(two), "ca", 2, &m, &err), HR_OK);
    assert_int_equal(m.n_webhooks, 2);
    assert_false(m.all_match); /* the second has none */
    assert_string_equal(m.first_bundle, "ca");
    assert_string_equal(m.rv, "7");
    hr_kmwc_free(&m);
    const char *one =
        "{\"kind\":\"MutatingWebhookConfiguration\",\"metadata\":{\"resourceVersion\":"
        "\"7\"},\"webhooks\":[{\"clientConfig\":{\"caBundle\":\"Y2E=\"}}]}";
    assert_int_equal(hr_kmwc_parse(one, strlen(one), "ca", 2, &m, &err), HR_OK);
    assert_true(m.all_match);
    hr_kmwc_free(&m);
    assert_int_equal(hr_kmwc_parse(one, strlen(one), "cb", 2, &m, &err), HR_OK);
    assert_false(m.all_match);
    hr_kmwc_free(&m);
    const char *bad =
        "{\"kind\":\"MutatingWebhookConfiguration\",\"metadata\":{\"resourceVersion\":"
        "\"7\"},\"webhooks\":[{\"clientConfig\":{\"caBundle\":7}}]}";
    assert_int_equal(hr_kmwc_parse(bad, strlen(bad), "ca", 2, &m, &err), HR_E_INPUT);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(decide_table), cmocka_unit_test(decide_next), cmocka_unit_test(read_real),
        cmocka_unit_test(secret_parse), cmocka_unit_test(mwc_parse),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
