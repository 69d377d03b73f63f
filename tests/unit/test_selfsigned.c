/*
 * test_selfsigned.c — the self-signed certificate of the secured /metrics
 * (server/selfsigned.h): it parses, carries the SANs asked for and no
 * others, its key matches the served private key, its validity is a year
 * from (a little before) now, its serial differs from one start to the
 * next, it is signed by itself, the daemon's names are in it, and a bad
 * IP is an error value. Then a TLS listener with no certificate files
 * serves it (only with tls_fallback: never the webhook's), and gives it up
 * for the provided pair the moment that one loads.
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
#include <unistd.h>

#include <cmocka.h>
#include <curl/curl.h>
#include <gnutls/abstract.h>
#include <gnutls/gnutls.h>
#include <gnutls/x509.h>

#include "server/certs.h"
#include "server/http.h"
#include "server/selfsigned.h"

#include "hr_testcert.h"

static const char *const DNS[] = {"hr-kube-headroom-metrics", "hr-kube-headroom-metrics.ns.svc",
                                  "localhost", ""};
static const char *const IPS[] = {"127.0.0.1", "10.1.2.3", "::1"};

static hr_selfsigned *make(void)
{
    hr_selfsigned_opts o = {.dns = DNS, .n_dns = 4, .ips = IPS, .n_ips = 3};
    hr_selfsigned *s = NULL;
    hr_err err;
    assert_int_equal(hr_selfsigned_new(&o, &s, &err), HR_OK);
    assert_non_null(s);
    return s;
}

static gnutls_x509_crt_t parse(const hr_selfsigned *s)
{
    gnutls_x509_crt_t crt;
    assert_true(gnutls_x509_crt_init(&crt) >= 0);
    assert_true(gnutls_x509_crt_import(crt, hr_selfsigned_der(s), GNUTLS_X509_FMT_DER) >= 0);
    return crt;
}

static void parses_with_sans(void **state)
{
    (void)state;
    hr_selfsigned *s = make();
    gnutls_x509_crt_t crt = parse(s);
    assert_int_equal(gnutls_x509_crt_get_version(crt), 3);
    assert_int_equal(gnutls_x509_crt_get_pk_algorithm(crt, NULL), GNUTLS_PK_ECDSA);
    unsigned n_dns = 0, n_ip = 0;
    for (unsigned i = 0;; i++) {
        char buf[256];
        size_t len = sizeof buf;
        int t = gnutls_x509_crt_get_subject_alt_name(crt, i, buf, &len, NULL);
        if (t == GNUTLS_E_REQUESTED_DATA_NOT_AVAILABLE)
            break;
        assert_true(t >= 0);
        if (t == GNUTLS_SAN_DNSNAME)
            n_dns++;
        else if (t == GNUTLS_SAN_IPADDRESS)
            n_ip++;
        else
            fail_msg("unexpected SAN type %d", t);
    }
    assert_int_equal(n_dns, 3); /* the empty name is skipped */
    assert_int_equal(n_ip, 3);
    assert_true(gnutls_x509_crt_check_hostname(crt, "hr-kube-headroom-metrics.ns.svc"));
    assert_true(gnutls_x509_crt_check_hostname(crt, "localhost"));
    assert_true(gnutls_x509_crt_check_hostname(crt, "127.0.0.1"));
    assert_true(gnutls_x509_crt_check_hostname(crt, "10.1.2.3"));
    assert_false(gnutls_x509_crt_check_hostname(crt, "example.com"));
    assert_false(gnutls_x509_crt_check_hostname(crt, "10.1.2.4"));
    /* Not a CA; for TLS servers. */
    unsigned critical = 0;
    assert_int_equal(gnutls_x509_crt_get_basic_constraints(crt, &critical, NULL, NULL), 0);
    char oid[128];
    size_t oid_len = sizeof oid;
    assert_true(gnutls_x509_crt_get_key_purpose_oid(crt, 0, oid, &oid_len, NULL) >= 0);
    assert_string_equal(oid, GNUTLS_KP_TLS_WWW_SERVER);
    /* Signed by itself. */
    unsigned status = 1;
    assert_true(gnutls_x509_crt_verify(crt, &crt, 1, GNUTLS_VERIFY_DISABLE_CA_SIGN, &status) >= 0);
    assert_int_equal(status, 0);
    gnutls_x509_crt_deinit(crt);
    hr_selfsigned_free(s);
}

static void key_validity_serial(void **state)
{
    (void)state;
    hr_selfsigned *a = make(), *b = make();
    gnutls_pcert_st *pc;
    unsigned n;
    gnutls_privkey_t key;
    hr_selfsigned_pair(a, &pc, &n, &key);
    assert_int_equal(n, 1);
    /* The served key is the certificate's: same public key DER. */
    gnutls_pubkey_t kp;
    gnutls_datum_t d1 = {NULL, 0}, d2 = {NULL, 0};
    assert_true(gnutls_pubkey_init(&kp) >= 0);
    assert_true(gnutls_pubkey_import_privkey(kp, key, 0, 0) >= 0);
    assert_true(gnutls_pubkey_export2(kp, GNUTLS_X509_FMT_DER, &d1) >= 0);
    assert_true(gnutls_pubkey_export2(pc[0].pubkey, GNUTLS_X509_FMT_DER, &d2) >= 0);
    assert_int_equal(d1.size, d2.size);
    assert_memory_equal(d1.data, d2.data, d1.size);
    gnutls_free(d1.data);
    gnutls_free(d2.data);
    gnutls_pubkey_deinit(kp);
    /* And it signs what the certificate's key verifies. */
    gnutls_datum_t msg = {(unsigned char *)"headroom", 8}, sig = {NULL, 0};
    assert_true(gnutls_privkey_sign_data(key, GNUTLS_DIG_SHA256, 0, &msg, &sig) >= 0);
    assert_true(gnutls_pubkey_verify_data2(pc[0].pubkey, GNUTLS_SIGN_ECDSA_SHA256, 0, &msg, &sig) >=
                0);
    gnutls_free(sig.data);

    gnutls_x509_crt_t ca = parse(a), cb = parse(b);
    time_t now = time(NULL);
    time_t nb = gnutls_x509_crt_get_activation_time(ca);
    time_t na = gnutls_x509_crt_get_expiration_time(ca);
    assert_true(nb <= now && nb >= now - 3600);
    assert_true(na >= now + 364L * 86400 && na <= now + 366L * 86400);
    unsigned char sa[40], sb[40];
    size_t la = sizeof sa, lb = sizeof sb;
    assert_true(gnutls_x509_crt_get_serial(ca, sa, &la) >= 0);
    assert_true(gnutls_x509_crt_get_serial(cb, sb, &lb) >= 0);
    assert_true(la >= 8 && (sa[0] & 0x80) == 0);
    assert_false(la == lb && memcmp(sa, sb, la) == 0);
    /* The fingerprint is the DER's SHA-256, as openssl prints it. */
    unsigned char fp[32];
    size_t fl = sizeof fp;
    assert_true(gnutls_x509_crt_get_fingerprint(ca, GNUTLS_DIG_SHA256, fp, &fl) >= 0);
    char hex[8];
    snprintf(hex, sizeof hex, "%02X:%02X", fp[0], fp[1]);
    assert_int_equal(strlen(hr_selfsigned_fingerprint(a)), 32 * 3 - 1);
    assert_memory_equal(hr_selfsigned_fingerprint(a), hex, 5);
    assert_string_not_equal(hr_selfsigned_fingerprint(a), hr_selfsigned_fingerprint(b));
    gnutls_x509_crt_deinit(ca);
    gnutls_x509_crt_deinit(cb);
    hr_selfsigned_free(a);
    hr_selfsigned_free(b);
}

/* The daemon's names: the Service's in its namespace, the pod's IP. */
static void for_pod(void **state)
{
    (void)state;
    hr_selfsigned *s = NULL;
    hr_err err;
    assert_int_equal(hr_selfsigned_for_pod("hr-metrics", "mon", "10.9.8.7", &s, &err), HR_OK);
    gnutls_x509_crt_t crt = parse(s);
    static const char *const yes[] = {"hr-metrics",
                                      "hr-metrics.mon",
                                      "hr-metrics.mon.svc",
                                      "hr-metrics.mon.svc.cluster.local",
                                      "localhost",
                                      "127.0.0.1",
                                      "::1",
                                      "10.9.8.7"};
    for (size_t i = 0; i < sizeof yes / sizeof *yes; i++)
        assert_true(gnutls_x509_crt_check_hostname(crt, yes[i]));
    assert_false(gnutls_x509_crt_check_hostname(crt, "hr-metrics.other.svc"));
    gnutls_x509_crt_deinit(crt);
    hr_selfsigned_free(s);
    /* Nothing known but the host: still made, for localhost. */
    assert_int_equal(hr_selfsigned_for_pod(NULL, NULL, NULL, &s, &err), HR_OK);
    crt = parse(s);
    assert_true(gnutls_x509_crt_check_hostname(crt, "localhost"));
    gnutls_x509_crt_deinit(crt);
    hr_selfsigned_free(s);
}

static void bad_input(void **state)
{
    (void)state;
    static const char *const bad[] = {"127.0.0.1", "not-an-ip"};
    hr_selfsigned_opts o = {.ips = bad, .n_ips = 2};
    hr_selfsigned *s = (hr_selfsigned *)&o; /* must be reset to NULL */
    hr_err err;
    assert_int_equal(hr_selfsigned_new(&o, &s, &err), HR_E_INPUT);
    assert_null(s);
    assert_non_null(strstr(err.msg, "not-an-ip"));
    hr_selfsigned_opts o2 = {.days = 100000};
    assert_int_equal(hr_selfsigned_new(&o2, &s, &err), HR_E_INPUT);
    assert_null(s);
}

static void ok(void *ud, const hr_http_req *req, hr_http_resp *resp)
{
    (void)ud;
    (void)req;
    hr_buf_puts(&resp->body, "ok\n");
}

/* GET url over TLS without verification; the served certificate's serial
 * (hex digits) in serial. Returns the curl code. */
static CURLcode get(const char *url, long *status, char *serial, size_t cap)
{
    CURL *h = curl_easy_init();
    assert_non_null(h);
    FILE *sink = fopen("/dev/null", "w");
    assert_non_null(sink);
    curl_easy_setopt(h, CURLOPT_URL, url);
    curl_easy_setopt(h, CURLOPT_WRITEDATA, sink);
    curl_easy_setopt(h, CURLOPT_TIMEOUT_MS, 30000L);
    curl_easy_setopt(h, CURLOPT_FRESH_CONNECT, 1L);
    curl_easy_setopt(h, CURLOPT_SSL_VERIFYPEER, 0L);
    curl_easy_setopt(h, CURLOPT_SSL_VERIFYHOST, 0L);
    curl_easy_setopt(h, CURLOPT_CERTINFO, 1L);
    CURLcode rc = curl_easy_perform(h);
    *status = 0;
    serial[0] = '\0';
    curl_easy_getinfo(h, CURLINFO_RESPONSE_CODE, status);
    struct curl_certinfo *ci = NULL;
    if (rc == CURLE_OK && curl_easy_getinfo(h, CURLINFO_CERTINFO, &ci) == CURLE_OK && ci &&
        ci->num_of_certs > 0)
        for (struct curl_slist *s = ci->certinfo[0]; s; s = s->next)
            if (strncmp(s->data, "Serial Number:", 14) == 0)
                for (size_t i = 14, n = 0; s->data[i] && n + 1 < cap; i++)
                    if (s->data[i] != ':' && s->data[i] != ' ')
                        serial[n++] = s->data[i], serial[n] = '\0';
    curl_easy_cleanup(h);
    fclose(sink);
    return rc;
}

/* No files: the fallback is served (and without one, no handshake); the
 * provided pair wins once it loads. */
static void listener_fallback(void **state)
{
    (void)state;
    char dir[] = "/tmp/hr-selfsigned-XXXXXX";
    assert_non_null(mkdtemp(dir));
    hr_certs *certs;
    hr_err err;
    assert_int_equal(hr_certs_new(dir, NULL, &certs, &err), HR_OK);
    assert_false(hr_certs_ready(certs));
    assert_int_equal(hr_certs_fallback_selfsigned(certs, "m", "ns", NULL, &err), HR_OK);
    assert_false(hr_certs_ready(certs)); /* the webhook's readiness: still none */
    hr_route routes[] = {{"GET", "/metrics", ok, NULL, 0, false}};
    hr_listener_opts o = {.name = "m",
                          .addr = "127.0.0.1:0",
                          .tls = certs,
                          .tls_fallback = true,
                          .routes = routes,
                          .n_routes = 1};
    hr_listener *with, *without;
    assert_int_equal(hr_listener_start(&o, &with, &err), HR_OK);
    o.tls_fallback = false;
    assert_int_equal(hr_listener_start(&o, &without, &err), HR_OK);
    char url[128], serial[128];
    long status;

    snprintf(url, sizeof url, "https://127.0.0.1:%u/metrics", hr_listener_port(with));
    assert_int_equal(get(url, &status, serial, sizeof serial), CURLE_OK);
    assert_int_equal(status, 200);
    assert_true(strlen(serial) >= 16);
    assert_false(strncmp(serial, "4201", 4) == 0); /* not the provided pair's */
    char url2[128];
    snprintf(url2, sizeof url2, "https://127.0.0.1:%u/metrics", hr_listener_port(without));
    assert_int_not_equal(get(url2, &status, serial, sizeof serial), CURLE_OK);

    /* The provided pair appears: both listeners serve it. */
    assert_int_equal(hr_testcert_write(dir, 1, HR_TC_BOTH), 0);
    assert_int_equal(hr_certs_check(certs), 1);
    assert_int_equal(get(url, &status, serial, sizeof serial), CURLE_OK);
    assert_int_equal(status, 200);
    assert_true(strncmp(serial, "4201", 4) == 0);
    assert_int_equal(get(url2, &status, serial, sizeof serial), CURLE_OK);
    assert_int_equal(status, 200);

    hr_listener_stop(with);
    hr_listener_stop(without);
    hr_certs_free(certs); /* and the fallback with it */
    char p[512];
    snprintf(p, sizeof p, "%s/tls.crt", dir);
    unlink(p);
    snprintf(p, sizeof p, "%s/tls.key", dir);
    unlink(p);
    rmdir(dir);
}

int main(void)
{
    curl_global_init(CURL_GLOBAL_DEFAULT);
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(parses_with_sans),  cmocka_unit_test(key_validity_serial),
        cmocka_unit_test(for_pod),           cmocka_unit_test(bad_input),
        cmocka_unit_test(listener_fallback),
    };
    int rc = cmocka_run_group_tests(tests, NULL, NULL);
    curl_global_cleanup();
    return rc;
}
