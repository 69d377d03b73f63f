/*
 * test_kubeconfig.c — kubeconfig loading (kube/config/kubeconfig.h), base64, exec
 * credential plugins (kube/config/execcred.h) and the credential cache
 * (kube/config/cred.h).
 *
 * The expectations are kubectl's behaviour, because users switch between
 * the two with the same files: the first file of $KUBECONFIG to name an
 * entry wins it whole, relative paths are relative to their file, an
 * explicit --kubeconfig must exist, both a file and inline data for one
 * credential is an error. Exec plugins are real processes (small shell
 * scripts in a temporary directory), so argument, environment and
 * KUBERNETES_EXEC_INFO passing are tested end to end.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include <cmocka.h>

#include "hr_testfile.h"
#include "kube/config/cred.h"
#include "kube/config/execcred.h"
#include "kube/config/kubeconfig.h"
#include "util/base64.h"
#include "util/file.h"
#include "util/memfile.h"

static char g_dir[256];

static void put_file(const char *name, const char *content, mode_t mode)
{
    char p[512];
    snprintf(p, sizeof p, "%s/%s", g_dir, name);
    FILE *f = fopen(p, "w");
    assert_non_null(f);
    assert_int_equal(fputs(content, f) >= 0, 1);
    assert_int_equal(fclose(f), 0);
    assert_int_equal(chmod(p, mode), 0);
}

static const char *path_of(const char *name)
{
    static char p[4][512];
    static int i;
    i = (i + 1) % 4;
    snprintf(p[i], sizeof p[i], "%s/%s", g_dir, name);
    return p[i];
}

static int setup_dir(void **state)
{
    (void)state;
    snprintf(g_dir, sizeof g_dir, "/tmp/hr-kcfg-XXXXXX");
    return mkdtemp(g_dir) ? 0 : -1;
}

static int teardown_dir(void **state)
{
    (void)state;
    char cmd[300];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", g_dir);
    return system(cmd) == 0 ? 0 : -1;
}

/* "hello world\n" and friends. */
#define B64_CA \
    "LS0tLS1CRUdJTiBDRVJUSUZJQ0FURS0tLS0tCkNBCg==" /* -----BEGIN CERTIFICATE-----\nCA\n */
#define B64_CRT "LS0tLS1CRUdJTiBDRVJUSUZJQ0FURS0tLS0tCkNSVAo=" /* ...\nCRT\n */
#define B64_KEY "LS0tLS1CRUdJTiBQUklWQVRFIEtFWS0tLS0tCktFWQo=" /* ...KEY */

static const char *BASIC = "apiVersion: v1\n"
                           "kind: Config\n"
                           "current-context: dev\n"
                           "clusters:\n"
                           "- name: c1\n"
                           "  cluster:\n"
                           "    server: https://127.0.0.1:6443/\n"
                           "    certificate-authority-data: " B64_CA "\n"
                           "    tls-server-name: kubernetes\n"
                           "- name: c2\n"
                           "  cluster:\n"
                           "    server: 10.0.0.1:443\n"
                           "    insecure-skip-tls-verify: true\n"
                           "users:\n"
                           "- name: u1\n"
                           "  user:\n"
                           "    client-certificate-data: " B64_CRT "\n"
                           "    client-key-data: " B64_KEY "\n"
                           "- name: u2\n"
                           "  user:\n"
                           "    token: abc.def\n"
                           "contexts:\n"
                           "- name: dev\n"
                           "  context: {cluster: c1, user: u1, namespace: team-a}\n"
                           "- name: other\n"
                           "  context:\n"
                           "    cluster: c2\n"
                           "    user: u2\n";

static hr_kubeconfig *parse_ok(const char *y, const char *ctx)
{
    hr_kubeconfig *c = NULL;
    hr_err e = {0};
    hr_status st = hr_kubeconfig_parse(y, strlen(y), "t.yaml", g_dir, ctx, 0, &c, &e);
    if (st != HR_OK)
        fail_msg("parse failed: %s", e.msg);
    return c;
}

static void parse_fails(const char *y, const char *ctx, const char *want_substr)
{
    hr_kubeconfig *c = NULL;
    hr_err e = {0};
    hr_status st = hr_kubeconfig_parse(y, strlen(y), "t.yaml", g_dir, ctx, 0, &c, &e);
    if (st == HR_OK) {
        hr_kubeconfig_free(c);
        fail_msg("parse succeeded, wanted an error containing \"%s\"", want_substr);
    }
    assert_null(c);
    if (!strstr(e.msg, want_substr))
        fail_msg("error \"%s\" does not contain \"%s\"", e.msg, want_substr);
    if (!strstr(e.msg, "t.yaml"))
        fail_msg("error \"%s\" does not name the file", e.msg);
}

static void test_basic_current_context(void **state)
{
    (void)state;
    hr_kubeconfig *c = parse_ok(BASIC, NULL);
    assert_string_equal(c->context, "dev");
    assert_string_equal(c->cluster_name, "c1");
    assert_string_equal(c->user_name, "u1");
    assert_string_equal(c->ns, "team-a");
    assert_string_equal(c->server, "https://127.0.0.1:6443"); /* trailing '/' gone */
    assert_string_equal(c->tls_server_name, "kubernetes");
    assert_false(c->insecure);
    assert_int_equal(c->ca_len, strlen("-----BEGIN CERTIFICATE-----\nCA\n"));
    assert_memory_equal(c->ca, "-----BEGIN CERTIFICATE-----\nCA\n", c->ca_len);
    assert_memory_equal(c->cert, "-----BEGIN CERTIFICATE-----\nCRT\n", c->cert_len);
    assert_memory_equal(c->key, "-----BEGIN PRIVATE KEY-----\nKEY\n", c->key_len);
    assert_null(c->token);
    assert_null(c->exec);
    hr_kubeconfig_free(c);
}

static void test_explicit_context(void **state)
{
    (void)state;
    hr_kubeconfig *c = parse_ok(BASIC, "other");
    assert_string_equal(c->server, "https://10.0.0.1:443"); /* bare host: https */
    assert_true(c->insecure);
    assert_null(c->ca);
    assert_string_equal(c->token, "abc.def");
    assert_string_equal(c->ns, "default");
    assert_null(c->cert);
    hr_kubeconfig_free(c);
    parse_fails(BASIC, "nope", "context \"nope\" not found");

    /* Single-quoted scalars: '' escapes and line folding (decoded by us,
     * not libfyaml, which leaks and misfolds them). */
    c = parse_ok("current-context: x\ncontexts:\n- name: x\n  context: {cluster: c, user: u}\n"
                 "clusters:\n- name: c\n  cluster: {server: 'https://a'}\n"
                 "users:\n- name: u\n  user:\n    token: 'it''''s''''''''''''\n\n"
                 "      two  \n      three'\n",
                 NULL);
    assert_string_equal(c->token, "it''s''''''\ntwo three");
    hr_kubeconfig_free(c);
}

static void test_errors_name_field(void **state)
{
    (void)state;
    parse_fails("clusters: [\n", NULL, "line ");
    parse_fails("- a\n- b\n", NULL, "top level must be a mapping");
    parse_fails("apiVersion: v1\n", NULL, "current-context");
    parse_fails("current-context: x\ncontexts:\n- name: x\n  context: {cluster: c}\n", NULL,
                "cluster \"c\" (of context \"x\") not found");
    parse_fails("current-context: x\ncontexts:\n- name: x\n  context: {cluster: c, user: u}\n"
                "clusters:\n- name: c\n  cluster: {server: https://a}\n",
                NULL, "user \"u\" (of context \"x\") not found");
    /* Bad base64 names the entry and the field. */
    parse_fails("current-context: x\ncontexts:\n- name: x\n  context: {cluster: c}\n"
                "clusters:\n- name: c\n  cluster:\n    server: https://a\n"
                "    certificate-authority-data: 'ab$d'\n",
                NULL,
                "clusters[name=c].cluster: certificate-authority-data: invalid base64 at byte 2");
    parse_fails("current-context: x\ncontexts:\n- name: x\n  context: {cluster: c}\n"
                "clusters:\n- name: c\n  cluster:\n    server: https://a\n"
                "    insecure-skip-tls-verify: maybe\n",
                NULL, "insecure-skip-tls-verify: expected true or false");
    parse_fails("current-context: x\ncontexts:\n- name: x\n  context: {cluster: c}\n"
                "clusters:\n- name: c\n  cluster:\n    server: [a]\n",
                NULL, "server: expected a string");
    parse_fails("current-context: x\ncontexts:\n- name: x\n  context: {cluster: c}\n"
                "clusters:\n- name: c\n  cluster: {}\n",
                NULL, "server: no server is set");
    parse_fails("current-context: x\ncontexts:\n- name: x\n  context: {cluster: c}\n"
                "clusters:\n- name: c\n  cluster: {server: 'ftp://x'}\n",
                NULL, "only https:// and http://");
    /* A scheme with no host, however many slashes follow, is refused (the
     * fuzzer found "https://" shrinking to "https:" and being accepted). */
    static const char *const hostless[] = {"https://",    "http://", "https:///",
                                           "https:////x", "/",       "//"};
    for (size_t i = 0; i < sizeof hostless / sizeof *hostless; i++) {
        char doc[256];
        snprintf(doc, sizeof doc,
                 "current-context: x\ncontexts:\n- name: x\n  context: {cluster: c}\n"
                 "clusters:\n- name: c\n  cluster: {server: '%s'}\n",
                 hostless[i]);
        parse_fails(doc, NULL, "server: no host");
    }
    /* kubectl refuses a CA together with insecure. */
    parse_fails("current-context: x\ncontexts:\n- name: x\n  context: {cluster: c}\n"
                "clusters:\n- name: c\n  cluster: {server: 'https://x', insecure-skip-tls-verify: "
                "true, certificate-authority-data: " B64_CA "}\n",
                NULL, "insecure-skip-tls-verify is set together");
    /* Both file and data for one credential. */
    parse_fails(
        "current-context: x\ncontexts:\n- name: x\n  context: {cluster: c, user: u}\n"
        "clusters:\n- name: c\n  cluster: {server: 'https://x'}\n"
        "users:\n- name: u\n  user: {client-certificate: a.crt, client-certificate-data: " B64_CRT
        ", client-key-data: " B64_KEY "}\n",
        NULL, "both client-certificate and client-certificate-data");
    parse_fails("current-context: x\ncontexts:\n- name: x\n  context: {cluster: c, user: u}\n"
                "clusters:\n- name: c\n  cluster: {server: 'https://x'}\n"
                "users:\n- name: u\n  user: {client-certificate-data: " B64_CRT "}\n",
                NULL, "users[name=u].user: client-certificate(-data) is set without client-key");
    parse_fails(
        "current-context: x\ncontexts:\n- name: x\n  context: {cluster: c, user: u}\n"
        "clusters:\n- name: c\n  cluster: {server: 'https://x'}\n"
        "users:\n- name: u\n  user: {client-key: missing.key, client-certificate-data: " B64_CRT
        "}\n",
        NULL, "client-key: ");
    parse_fails("current-context: x\ncontexts:\n- name: x\n  context: {cluster: c, user: u}\n"
                "clusters:\n- name: c\n  cluster: {server: 'https://x'}\n"
                "users:\n- name: u\n  user: {auth-provider: {name: gcp}}\n",
                NULL, "auth-provider");
    parse_fails("a: &x 1\nb: *x\ncurrent-context: *x\n", NULL, "aliases are not supported");
    parse_fails("current-context: x\ncurrent-context: y\n", NULL, "line");
    /* libfyaml loops on invalid UTF-8 in a directive: refused first. */
    parse_fails("% name:rp \xff\xffx", NULL, "byte 10: not UTF-8");
    parse_fails("a: \xc0\x80\n", NULL, "not UTF-8");     /* overlong NUL */
    parse_fails("a: \xed\xa0\x80\n", NULL, "not UTF-8"); /* surrogate */
    parse_fails("current-context: x\ncontexts: {a: 1}\n", NULL, "contexts: expected a list");
}

static void test_files_relative_to_kubeconfig(void **state)
{
    (void)state;
    put_file("ca.pem", "-----BEGIN CERTIFICATE-----\nFILECA\n", 0600);
    put_file("c.crt", "CRT-FILE", 0600);
    put_file("c.key", "KEY-FILE", 0600);
    put_file(
        "rel.yaml",
        "current-context: x\ncontexts:\n- name: x\n  context: {cluster: c, user: u}\n"
        "clusters:\n- name: c\n  cluster: {server: 'https://x:1', certificate-authority: ca.pem}\n"
        "users:\n- name: u\n  user: {client-certificate: c.crt, client-key: c.key,"
        " tokenFile: tok}\n",
        0600);
    hr_kubeconfig_opts o = {.kubeconfig = path_of("rel.yaml")};
    hr_kubeconfig *c = NULL;
    hr_err e = {0};
    if (hr_kubeconfig_load(&o, &c, &e) != HR_OK)
        fail_msg("%s", e.msg);
    assert_memory_equal(c->ca, "-----BEGIN CERTIFICATE-----\nFILECA\n", c->ca_len);
    assert_memory_equal(c->cert, "CRT-FILE", 8);
    assert_memory_equal(c->key, "KEY-FILE", 8);
    assert_string_equal(c->token_file, path_of("tok"));
    assert_non_null(strstr(c->origin, "rel.yaml"));
    hr_kubeconfig_free(c);

    /* An explicit --kubeconfig that does not exist is an error. */
    o.kubeconfig = path_of("missing.yaml");
    assert_int_not_equal(hr_kubeconfig_load(&o, &c, &e), HR_OK);
    assert_non_null(strstr(e.msg, "missing.yaml"));
}

static void test_merge_first_wins(void **state)
{
    (void)state;
    /* a: sets current-context and cluster c; b: redefines c (ignored),
     * adds context y and user u. */
    put_file("a.yaml",
             "current-context: y\n"
             "clusters:\n- name: c\n  cluster: {server: 'https://from-a'}\n",
             0600);
    put_file("b.yaml",
             "current-context: z\n"
             "clusters:\n- name: c\n  cluster: {server: 'https://from-b', "
             "insecure-skip-tls-verify: true}\n"
             "- name: d\n  cluster: {server: 'https://d-from-b'}\n"
             "contexts:\n- name: y\n  context: {cluster: c, user: u}\n"
             "- name: z\n  context: {cluster: d, user: u, namespace: zz}\n"
             "users:\n- name: u\n  user: {token: tok-b}\n",
             0600);
    char env[1200];
    snprintf(env, sizeof env, "%s::%s:%s:%s", path_of("missing.yaml"), path_of("a.yaml"),
             path_of("b.yaml"), path_of("a.yaml"));
    hr_kubeconfig_opts o = {.env_kubeconfig = env, .no_in_cluster = true};
    hr_kubeconfig *c = NULL;
    hr_err e = {0};
    if (hr_kubeconfig_load(&o, &c, &e) != HR_OK)
        fail_msg("%s", e.msg);
    assert_string_equal(c->context, "y");
    assert_string_equal(c->server, "https://from-a");
    assert_false(c->insecure); /* whole entry from a: b's fields do not leak in */
    assert_string_equal(c->token, "tok-b");
    assert_non_null(strstr(c->origin, "a.yaml:"));
    hr_kubeconfig_free(c);

    o.context = "z";
    if (hr_kubeconfig_load(&o, &c, &e) != HR_OK)
        fail_msg("%s", e.msg);
    assert_string_equal(c->server, "https://d-from-b");
    assert_string_equal(c->ns, "zz");
    hr_kubeconfig_free(c);

    /* Nothing found and no in-cluster: a clear error. */
    hr_kubeconfig_opts none = {.env_kubeconfig = path_of("missing.yaml"), .no_in_cluster = true};
    assert_int_equal(hr_kubeconfig_load(&none, &c, &e), HR_E_NOTFOUND);
    assert_non_null(strstr(e.msg, "no kubeconfig found"));

    /* $HOME/.kube/config when $KUBECONFIG is unset. */
    char kd[600];
    snprintf(kd, sizeof kd, "%s/.kube", g_dir);
    mkdir(kd, 0700);
    put_file(".kube/config",
             "current-context: y\ncontexts:\n- name: y\n  context: {cluster: c}\n"
             "clusters:\n- name: c\n  cluster: {server: 'https://home'}\n",
             0600);
    hr_kubeconfig_opts home = {.env_kubeconfig = "", .home = g_dir, .no_in_cluster = true};
    if (hr_kubeconfig_load(&home, &c, &e) != HR_OK)
        fail_msg("%s", e.msg);
    assert_string_equal(c->server, "https://home");
    hr_kubeconfig_free(c);
}

static void test_in_cluster(void **state)
{
    (void)state;
    char sa[600];
    snprintf(sa, sizeof sa, "%s/sa", g_dir);
    mkdir(sa, 0700);
    put_file("sa/token", "sa-token-1\n", 0600);
    put_file("sa/ca.crt", "-----BEGIN CERTIFICATE-----\nINCLUSTER\n", 0600);
    put_file("sa/namespace", "headroom-system", 0600);
    hr_kubeconfig_opts o = {.env_kubeconfig = path_of("missing.yaml"),
                            .sa_dir = sa,
                            .svc_host = "fd00::1",
                            .svc_port = "443"};
    hr_kubeconfig *c = NULL;
    hr_err e = {0};
    if (hr_kubeconfig_load(&o, &c, &e) != HR_OK)
        fail_msg("%s", e.msg);
    assert_true(c->in_cluster);
    assert_string_equal(c->server, "https://[fd00::1]:443");
    assert_string_equal(c->ns, "headroom-system");
    assert_string_equal(c->token_file, path_of("sa/token"));
    assert_memory_equal(c->ca, "-----BEGIN CERTIFICATE-----\nINCLUSTER\n", c->ca_len);

    /* The token is read through the credential cache, and re-read after a
     * 401 once it rotated. */
    hr_kcred cr;
    assert_int_equal(hr_kcred_init(&cr, c, &e), HR_OK);
    hr_kcred_snap s;
    assert_int_equal(hr_kcred_get(&cr, &s, &e), HR_OK);
    assert_string_equal(s.authorization, "Bearer sa-token-1");
    assert_true(s.refreshable);
    uint64_t gen = s.gen;
    hr_kcred_snap_free(&s);
    put_file("sa/token", "sa-token-2\n", 0600);
    assert_int_equal(hr_kcred_get(&cr, &s, &e), HR_OK);
    assert_string_equal(s.authorization, "Bearer sa-token-1"); /* cached for 60 s */
    hr_kcred_snap_free(&s);
    assert_true(hr_kcred_unauthorized(&cr, gen));
    assert_int_equal(hr_kcred_get(&cr, &s, &e), HR_OK);
    assert_string_equal(s.authorization, "Bearer sa-token-2");
    hr_kcred_snap_free(&s);
    /* Rotation is picked up by the periodic re-read too (60 s in
     * production; 1 s here). */
    cr.file_reread_s = 1;
    put_file("sa/token", "sa-token-3\n", 0600);
    usleep(1100 * 1000);
    assert_int_equal(hr_kcred_get(&cr, &s, &e), HR_OK);
    assert_string_equal(s.authorization, "Bearer sa-token-3");
    hr_kcred_snap_free(&s);
    put_file("sa/token", "sa-token-2\n", 0600);
    assert_true(hr_kcred_unauthorized(&cr, cr.gen));
    /* A vanished token file keeps the last good token. */
    unlink(path_of("sa/token"));
    assert_false(hr_kcred_unauthorized(&cr, cr.gen));
    assert_int_equal(hr_kcred_get(&cr, &s, &e), HR_OK);
    assert_string_equal(s.authorization, "Bearer sa-token-2");
    hr_kcred_snap_free(&s);
    hr_kcred_destroy(&cr);
    hr_kubeconfig_free(c);

    /* No token: in-cluster config fails clearly. */
    assert_int_not_equal(hr_kubeconfig_load(&o, &c, &e), HR_OK);
    assert_non_null(strstr(e.msg, "token"));
}

static void test_base64(void **state)
{
    (void)state;
    unsigned char out[64];
    size_t bad = 0;
    assert_int_equal(hr_b64_decode("aGVsbG8=", 8, out, &bad), 5);
    assert_memory_equal(out, "hello", 5);
    assert_int_equal(hr_b64_decode("aGVsbG8", 7, out, &bad), 5); /* no padding */
    assert_int_equal(hr_b64_decode("aGVs\nbG8g\r\n d29y bGQ=", 21, out, &bad), 11);
    assert_memory_equal(out, "hello world", 11);
    assert_int_equal(hr_b64_decode("", 0, out, &bad), 0);
    assert_int_equal(hr_b64_decode("aGV*", 4, out, &bad), (size_t)-1);
    assert_int_equal(bad, 3);
    assert_int_equal(hr_b64_decode("aGVsbG8=x", 9, out, &bad), (size_t)-1); /* after pad */
    assert_int_equal(hr_b64_decode("a", 1, out, &bad), (size_t)-1);         /* truncated */
    assert_int_equal(hr_b64_decode("a===", 4, out, &bad), (size_t)-1);
    char enc[64];
    for (size_t n = 0; n < 20; n++) {
        unsigned char raw[20];
        for (size_t i = 0; i < n; i++)
            raw[i] = (unsigned char)(i * 37 + 11);
        size_t el = hr_b64_encode(raw, n, enc);
        assert_int_equal(el, hr_b64_enc_len(n));
        assert_int_equal(hr_b64_decode(enc, el, out, NULL), n);
        assert_memory_equal(out, raw, n);
    }
}

static void test_rfc3339(void **state)
{
    (void)state;
    const char *s = "2026-11-30T08:00:00Z";
    assert_int_equal(hr_krfc3339(s, strlen(s)), 1796025600);
    s = "2026-11-30T09:30:00.123456+01:30";
    assert_int_equal(hr_krfc3339(s, strlen(s)), 1796025600);
    s = "2026-11-30 08:00:00Z";
    assert_int_equal(hr_krfc3339(s, strlen(s)), -1);
    s = "2026-13-30T08:00:00Z";
    assert_int_equal(hr_krfc3339(s, strlen(s)), -1);
    s = "2026-11-30T08:00:00";
    assert_int_equal(hr_krfc3339(s, strlen(s)), -1);
}

static void test_exec_parse(void **state)
{
    (void)state;
    const char *v1 = "client.authentication.k8s.io/v1";
    hr_kexec_result r;
    hr_err e = {0};
    const char *ok = "{\"apiVersion\":\"client.authentication.k8s.io/v1\",\"kind\":"
                     "\"ExecCredential\",\"status\":{\"token\":\"t0k\","
                     "\"expirationTimestamp\":\"2030-01-01T00:00:00Z\"}}";
    assert_int_equal(hr_kexec_parse(ok, strlen(ok), v1, &r, &e), HR_OK);
    assert_string_equal(r.token, "t0k");
    assert_int_equal(r.expiry, 1893456000);
    hr_kexec_result_free(&r);
    const char *cert = "{\"apiVersion\":\"client.authentication.k8s.io/v1beta1\",\"kind\":"
                       "\"ExecCredential\",\"status\":{\"clientCertificateData\":\"C\","
                       "\"clientKeyData\":\"K\"}}";
    assert_int_equal(
        hr_kexec_parse(cert, strlen(cert), "client.authentication.k8s.io/v1beta1", &r, &e), HR_OK);
    assert_null(r.token);
    assert_string_equal((char *)r.cert, "C");
    assert_string_equal((char *)r.key, "K");
    assert_int_equal(r.expiry, 0);
    hr_kexec_result_free(&r);
    /* Version mismatch, missing pieces, junk. */
    assert_int_equal(hr_kexec_parse(cert, strlen(cert), v1, &r, &e), HR_E_INPUT);
    assert_non_null(strstr(e.msg, "does not match"));
    const char *half = "{\"apiVersion\":\"client.authentication.k8s.io/v1\",\"kind\":"
                       "\"ExecCredential\",\"status\":{\"clientCertificateData\":\"C\"}}";
    assert_int_equal(hr_kexec_parse(half, strlen(half), v1, &r, &e), HR_E_INPUT);
    assert_non_null(strstr(e.msg, "without status.clientKeyData"));
    const char *none = "{\"apiVersion\":\"client.authentication.k8s.io/v1\",\"kind\":"
                       "\"ExecCredential\",\"status\":{}}";
    assert_int_equal(hr_kexec_parse(none, strlen(none), v1, &r, &e), HR_E_INPUT);
    const char *crlf = "{\"apiVersion\":\"client.authentication.k8s.io/v1\",\"kind\":"
                       "\"ExecCredential\",\"status\":{\"token\":\"a\\r\\nX-Evil: 1\"}}";
    assert_int_equal(hr_kexec_parse(crlf, strlen(crlf), v1, &r, &e), HR_E_INPUT);
    assert_int_equal(hr_kexec_parse("nope", 4, v1, &r, &e), HR_E_INPUT);
    assert_non_null(strstr(e.msg, "not JSON"));
    const char *badexp = "{\"apiVersion\":\"client.authentication.k8s.io/v1\",\"kind\":"
                         "\"ExecCredential\",\"status\":{\"token\":\"t\","
                         "\"expirationTimestamp\":\"tomorrow\"}}";
    assert_int_equal(hr_kexec_parse(badexp, strlen(badexp), v1, &r, &e), HR_E_INPUT);
    assert_non_null(strstr(e.msg, "expirationTimestamp"));
}

/* A plugin that records its arguments, environment and exec info, counts
 * its runs, and answers with a token that expires at $EXP. */
static const char *PLUGIN =
    "#!/bin/sh\n"
    "d=$(dirname \"$0\")\n"
    "n=$(cat \"$d/runs\" 2>/dev/null || echo 0); n=$((n+1)); echo $n > \"$d/runs\"\n"
    "printf '%s|%s|%s\\n' \"$1\" \"$2\" \"$PLUGIN_VAR\" > \"$d/seen\"\n"
    "printf '%s' \"$KUBERNETES_EXEC_INFO\" > \"$d/info\"\n"
    "echo 'plugin says hi on stderr' >&2\n"
    "printf '{\"apiVersion\":\"client.authentication.k8s.io/v1\",\"kind\":\"ExecCredential\","
    "\"status\":{\"token\":\"tok-%s\",\"expirationTimestamp\":\"%s\"}}' \"$n\" \"$EXP\"\n";

static hr_kubeconfig *exec_config(const char *exp, const char *cmd)
{
    char y[2048];
    snprintf(y, sizeof y,
             "current-context: x\ncontexts:\n- name: x\n  context: {cluster: c, user: u}\n"
             "clusters:\n- name: c\n  cluster: {server: 'https://x:1', "
             "certificate-authority-data: " B64_CA "}\n"
             "users:\n- name: u\n  user:\n    exec:\n"
             "      apiVersion: client.authentication.k8s.io/v1\n"
             "      command: %s\n"
             "      args: [first, 'second arg']\n"
             "      env:\n      - {name: PLUGIN_VAR, value: from-kubeconfig}\n"
             "      - {name: EXP, value: '%s'}\n"
             "      provideClusterInfo: true\n"
             "      interactiveMode: Never\n",
             cmd, exp);
    return parse_ok(y, NULL);
}

static char *slurp(const char *name)
{
    char *b;
    size_t n;
    hr_err e;
    if (hr_file_slurp(path_of(name), 1 << 20, 1, &b, &n, &e) != HR_OK)
        fail_msg("%s", e.msg);
    b[n] = '\0';
    return b;
}

static void fmt_time(time_t t, char *out, size_t cap)
{
    struct tm tm;
    gmtime_r(&t, &tm);
    strftime(out, cap, "%Y-%m-%dT%H:%M:%SZ", &tm);
}

static void test_exec_plugin_and_cache(void **state)
{
    (void)state;
    put_file("plugin.sh", PLUGIN, 0700);
    unlink(path_of("runs"));
    char exp[40];
    fmt_time(time(NULL) + 3600, exp, sizeof exp);
    /* Relative command with a '/': resolved against the kubeconfig's dir. */
    hr_kubeconfig *c = exec_config(exp, "./plugin.sh");
    assert_string_equal(c->exec->command, path_of("./plugin.sh"));
    assert_int_equal(c->exec->n_args, 2);

    hr_kcred cr;
    hr_err e = {0};
    assert_int_equal(hr_kcred_init(&cr, c, &e), HR_OK);
    hr_kcred_snap s;
    if (hr_kcred_get(&cr, &s, &e) != HR_OK)
        fail_msg("%s", e.msg);
    assert_string_equal(s.authorization, "Bearer tok-1");
    uint64_t gen = s.gen;
    hr_kcred_snap_free(&s);
    char *seen = slurp("seen");
    assert_string_equal(seen, "first|second arg|from-kubeconfig\n");
    free(seen);
    char *info = slurp("info");
    assert_non_null(strstr(info, "\"kind\":\"ExecCredential\""));
    assert_non_null(strstr(info, "\"interactive\":false"));
    assert_non_null(strstr(info, "\"server\":\"https://x:1\""));
    assert_non_null(strstr(info, "\"certificate-authority-data\":\"" B64_CA "\""));
    free(info);

    /* Cached until expiry: no second run. */
    assert_int_equal(hr_kcred_get(&cr, &s, &e), HR_OK);
    assert_string_equal(s.authorization, "Bearer tok-1");
    hr_kcred_snap_free(&s);
    assert_int_equal(cr.exec_runs, 1);

    /* A 401 reruns it once; a second 401 for the same old generation does
     * not run it again. */
    assert_true(hr_kcred_unauthorized(&cr, gen));
    assert_true(hr_kcred_unauthorized(&cr, gen));
    assert_int_equal(cr.exec_runs, 2);
    assert_int_equal(hr_kcred_get(&cr, &s, &e), HR_OK);
    assert_string_equal(s.authorization, "Bearer tok-2");
    hr_kcred_snap_free(&s);
    hr_kcred_destroy(&cr);
    hr_kubeconfig_free(c);

    /* An expired token is replaced on the next request. */
    fmt_time(time(NULL) - 5, exp, sizeof exp);
    c = exec_config(exp, path_of("plugin.sh"));
    assert_int_equal(hr_kcred_init(&cr, c, &e), HR_OK);
    assert_int_equal(hr_kcred_get(&cr, &s, &e), HR_OK);
    hr_kcred_snap_free(&s);
    assert_int_equal(hr_kcred_get(&cr, &s, &e), HR_OK);
    hr_kcred_snap_free(&s);
    assert_int_equal(cr.exec_runs, 2);
    hr_kcred_destroy(&cr);
    hr_kubeconfig_free(c);
}

static void test_exec_failures(void **state)
{
    (void)state;
    hr_kubeconfig *c = exec_config("2030-01-01T00:00:00Z", "/nonexistent/plugin");
    hr_kexec_result r;
    hr_err e = {0};
    assert_int_equal(hr_kexec_run(c, c->exec, 5000, &r, &e), HR_E_IO);
    assert_non_null(strstr(e.msg, "/nonexistent/plugin"));
    hr_kubeconfig_free(c);

    put_file("fail.sh", "#!/bin/sh\necho broken >&2\nexit 3\n", 0700);
    c = exec_config("x", path_of("fail.sh"));
    assert_int_equal(hr_kexec_run(c, c->exec, 5000, &r, &e), HR_E_IO);
    assert_non_null(strstr(e.msg, "exited with status 3"));
    hr_kubeconfig_free(c);

    put_file("junk.sh", "#!/bin/sh\necho '{not json'\n", 0700);
    c = exec_config("x", path_of("junk.sh"));
    assert_int_equal(hr_kexec_run(c, c->exec, 5000, &r, &e), HR_E_INPUT);
    assert_non_null(strstr(e.msg, "not JSON"));
    hr_kubeconfig_free(c);

    put_file("hang.sh", "#!/bin/sh\nexec sleep 30\n", 0700);
    c = exec_config("x", path_of("hang.sh"));
    time_t t0 = time(NULL);
    assert_int_equal(hr_kexec_run(c, c->exec, 300, &r, &e), HR_E_IO);
    assert_true(time(NULL) - t0 < 5);
    assert_non_null(strstr(e.msg, "killed"));
    hr_kubeconfig_free(c);

    parse_fails("current-context: x\ncontexts:\n- name: x\n  context: {cluster: c, user: u}\n"
                "clusters:\n- name: c\n  cluster: {server: 'https://x'}\n"
                "users:\n- name: u\n  user:\n    exec: {command: foo, apiVersion: "
                "client.authentication.k8s.io/v1alpha1}\n",
                NULL, "is not supported");
    parse_fails("current-context: x\ncontexts:\n- name: x\n  context: {cluster: c, user: u}\n"
                "clusters:\n- name: c\n  cluster: {server: 'https://x'}\n"
                "users:\n- name: u\n  user:\n    exec: {apiVersion: "
                "client.authentication.k8s.io/v1}\n",
                NULL, "users[name=u].user.exec: command is required");
    parse_fails("current-context: x\ncontexts:\n- name: x\n  context: {cluster: c, user: u}\n"
                "clusters:\n- name: c\n  cluster: {server: 'https://x'}\n"
                "users:\n- name: u\n  user:\n    exec: {command: a, apiVersion: "
                "client.authentication.k8s.io/v1, args: [[x]]}\n",
                NULL, "exec.args[0]: expected a string");
}

/* A plugin answering with a client certificate and key that name its run. */
static const char *CERT_PLUGIN =
    "#!/bin/sh\n"
    "d=$(dirname \"$0\")\n"
    "n=$(cat \"$d/certruns\" 2>/dev/null || echo 0); n=$((n+1)); echo $n > \"$d/certruns\"\n"
    "printf '{\"apiVersion\":\"client.authentication.k8s.io/v1\",\"kind\":\"ExecCredential\","
    "\"status\":{\"clientCertificateData\":\"CERT-%s\",\"clientKeyData\":\"KEY-%s\"}}' \"$n\" "
    "\"$n\"\n";

/* Client certificates reach the transport as sealed memory files (cred.h):
 * the kubeconfig's for the life of the hr_kcred, under one path for every
 * request (so warm connections are reused); an exec plugin's per snapshot,
 * kept by a snapshot across a refresh, and spelled with the generation so
 * that one path string never names two certificates, even when the
 * descriptor number comes back. */
static void test_cred_client_cert_files(void **state)
{
    (void)state;
    hr_kubeconfig *c = parse_ok(BASIC, NULL);
    hr_kcred cr;
    hr_err e = {0};
    assert_int_equal(hr_kcred_init(&cr, c, &e), HR_OK);
    hr_kcred_snap s, s2;
    char buf[256], p1[HR_MEMFILE_PATH_MAX];
    assert_int_equal(hr_kcred_get(&cr, &s, &e), HR_OK);
    assert_non_null(s.cert_path);
    assert_int_equal(strncmp(s.cert_path, "/proc/self/fd/", 14), 0);
    assert_int_equal(read_path(s.cert_path, buf, sizeof buf), (ssize_t)c->cert_len);
    assert_memory_equal(buf, c->cert, c->cert_len);
    assert_int_equal(read_path(s.key_path, buf, sizeof buf), (ssize_t)c->key_len);
    assert_memory_equal(buf, c->key, c->key_len);
    assert_int_equal(hr_kcred_get(&cr, &s2, &e), HR_OK);
    assert_string_equal(s2.cert_path, s.cert_path);
    assert_string_equal(s2.key_path, s.key_path);
    hr_kcred_snap_free(&s2);
    snprintf(p1, sizeof p1, "%s", s.key_path);
    hr_kcred_snap_free(&s);
    assert_true(read_path(p1, buf, sizeof buf) > 0); /* the hr_kcred's, still open */
    hr_kcred_destroy(&cr);
    assert_int_equal(read_path(p1, buf, sizeof buf), -1); /* closed with its owner */
    hr_kubeconfig_free(c);

    /* No client certificate: no file. */
    c = parse_ok(BASIC, "other");
    assert_int_equal(hr_kcred_init(&cr, c, &e), HR_OK);
    assert_int_equal(hr_kcred_get(&cr, &s, &e), HR_OK);
    assert_null(s.cert_path);
    assert_null(s.key_path);
    hr_kcred_snap_free(&s);
    hr_kcred_destroy(&cr);
    hr_kubeconfig_free(c);

    /* An exec plugin's certificate: the snapshot's own files. */
    put_file("certplugin.sh", CERT_PLUGIN, 0700);
    unlink(path_of("certruns"));
    c = exec_config("x", path_of("certplugin.sh"));
    assert_int_equal(hr_kcred_init(&cr, c, &e), HR_OK);
    if (hr_kcred_get(&cr, &s, &e) != HR_OK)
        fail_msg("%s", e.msg);
    assert_null(s.authorization);
    assert_int_equal(read_path(s.cert_path, buf, sizeof buf), 6);
    assert_string_equal(buf, "CERT-1");
    assert_int_equal(read_path(s.key_path, buf, sizeof buf), 5);
    assert_string_equal(buf, "KEY-1");
    snprintf(p1, sizeof p1, "%s", s.cert_path);
    /* A 401 reruns the plugin while s's request still runs: s keeps its
     * files, the next snapshot has the new certificate. */
    assert_true(hr_kcred_unauthorized(&cr, s.gen));
    assert_int_equal(read_path(s.cert_path, buf, sizeof buf), 6);
    assert_string_equal(buf, "CERT-1");
    hr_kcred_snap_free(&s);
    assert_int_equal(read_path(p1, buf, sizeof buf), -1); /* closed with the snapshot */
    assert_int_equal(hr_kcred_get(&cr, &s, &e), HR_OK);
    assert_int_equal(read_path(s.cert_path, buf, sizeof buf), 6);
    assert_string_equal(buf, "CERT-2");
    /* The lowest free number again, as the first snapshot had; but not its
     * path string (libcurl would take a connection made with CERT-1). */
    assert_string_equal(strrchr(s.cert_path, '/'), strrchr(p1, '/'));
    assert_string_not_equal(s.cert_path, p1);
    hr_kcred_snap_free(&s);
    hr_kcred_destroy(&cr);
    hr_kubeconfig_free(c);
}

/* Processes of group pgid that still run (a zombie, dead but not yet
 * reaped by init, does not count): /proc/<pid>/stat is "pid (comm) S ppid pgrp". */
static int group_running(pid_t pgid)
{
    DIR *d = opendir("/proc");
    assert_non_null(d);
    int n = 0;
    struct dirent *de;
    while ((de = readdir(d)) != NULL) {
        if (de->d_name[0] < '0' || de->d_name[0] > '9')
            continue;
        char p[300], line[512];
        snprintf(p, sizeof p, "/proc/%s/stat", de->d_name);
        FILE *f = fopen(p, "r");
        if (!f)
            continue;
        size_t len = fread(line, 1, sizeof line - 1, f);
        fclose(f);
        line[len] = '\0';
        const char *rp = strrchr(line, ')');
        char state;
        long ppid, pgrp;
        if (rp && sscanf(rp + 1, " %c %ld %ld", &state, &ppid, &pgrp) == 3 && pgrp == pgid &&
            state != 'Z' && state != 'X')
            n++;
    }
    closedir(d);
    return n;
}

/* A plugin that closes its stdout and keeps running must not hold the
 * caller (and the credential lock) past the deadline: the client gets an
 * error at it, and neither the plugin nor what it started is left behind. */
static void test_exec_closes_stdout_and_sleeps(void **state)
{
    (void)state;
    char script[700];
    snprintf(script, sizeof script,
             "#!/bin/sh\necho $$ > '%s/lingerer.pid'\nexec 1>&-\nsleep 600\n", g_dir);
    put_file("lingerer.sh", script, 0700);
    unlink(path_of("lingerer.pid"));
    hr_kubeconfig *c = exec_config("x", path_of("lingerer.sh"));
    hr_kcred cr;
    hr_err e = {0};
    assert_int_equal(hr_kcred_init(&cr, c, &e), HR_OK);
    cr.exec_timeout_ms = 1000;
    hr_kcred_snap s;
    struct timespec t0, t1;
    clock_gettime(CLOCK_MONOTONIC, &t0);
    assert_int_equal(hr_kcred_get(&cr, &s, &e), HR_E_IO);
    clock_gettime(CLOCK_MONOTONIC, &t1);
    double took = (double)(t1.tv_sec - t0.tv_sec) + (double)(t1.tv_nsec - t0.tv_nsec) / 1e9;
    assert_true(took >= 0.9 && took < 3.0);
    assert_non_null(strstr(e.msg, "did not exit within 1000 ms"));
    assert_non_null(strstr(e.msg, "killed"));

    /* The plugin is reaped (no such process, not even a zombie) and its
     * process group — the sleep it started — is gone too. */
    char *pid_s = slurp("lingerer.pid");
    pid_t pid = (pid_t)atol(pid_s);
    free(pid_s);
    assert_true(pid > 1);
    assert_int_equal(kill(pid, 0), -1);
    assert_int_equal(errno, ESRCH);
    int live = 1;
    for (int i = 0; i < 200 && live; i++) { /* SIGKILL lands asynchronously */
        live = group_running(pid);
        if (live)
            usleep(10 * 1000);
    }
    assert_int_equal(live, 0);
    hr_kcred_destroy(&cr);
    hr_kubeconfig_free(c);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_basic_current_context),
        cmocka_unit_test(test_explicit_context),
        cmocka_unit_test(test_errors_name_field),
        cmocka_unit_test(test_files_relative_to_kubeconfig),
        cmocka_unit_test(test_merge_first_wins),
        cmocka_unit_test(test_in_cluster),
        cmocka_unit_test(test_base64),
        cmocka_unit_test(test_rfc3339),
        cmocka_unit_test(test_exec_parse),
        cmocka_unit_test(test_exec_plugin_and_cache),
        cmocka_unit_test(test_exec_failures),
        cmocka_unit_test(test_cred_client_cert_files),
        cmocka_unit_test(test_exec_closes_stdout_and_sleeps),
    };
    return cmocka_run_group_tests(tests, setup_dir, teardown_dir);
}
