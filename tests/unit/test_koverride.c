/*
 * test_koverride.c — kubectl's connection flags over the kubeconfig
 * (kube/config/kubeconfig.h, hr_koverrides) and impersonation, from the
 * flags and from the kubeconfig's as, as-uid, as-groups, as-user-extra,
 * down to the Impersonate-* headers every request carries
 * (kube/transport/headers.h).
 *
 * The expectations are kubectl's: a flag beats the kubeconfig field it
 * names; `--server --token --certificate-authority` works with no
 * kubeconfig at all; --insecure-skip-tls-verify and --certificate-authority
 * each replace both of the file's; --cluster and --user pick entries the
 * context does not name. And a hostile kubeconfig cannot add a header:
 * every value with a control character (CR, LF) is refused at load, and
 * again where the headers are built.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cmocka.h>

#include "kube/config/kubeconfig.h"
#include "kube/config/override.h"
#include "kube/transport/headers.h"

static char g_dir[256];

static const char *path_of(const char *name)
{
    static char p[4][512];
    static int i;
    i = (i + 1) % 4;
    snprintf(p[i], sizeof p[i], "%s/%s", g_dir, name);
    return p[i];
}

static void put_file(const char *name, const char *content)
{
    FILE *f = fopen(path_of(name), "w");
    assert_non_null(f);
    assert_true(fputs(content, f) >= 0);
    assert_int_equal(fclose(f), 0);
}

static int setup_dir(void **state)
{
    (void)state;
    snprintf(g_dir, sizeof g_dir, "/tmp/hr-kover-XXXXXX");
    if (!mkdtemp(g_dir))
        return -1;
    char home[300];
    snprintf(home, sizeof home, "%s/home", g_dir);
    return mkdir(home, 0700);
}

static int teardown_dir(void **state)
{
    (void)state;
    char cmd[300];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", g_dir);
    return system(cmd) == 0 ? 0 : -1;
}

#define B64_CA "LS0tLS1CRUdJTiBDRVJUSUZJQ0FURS0tLS0tCkNBCg==" /* ...\nCA\n */

/* Two clusters, three users, two contexts. */
static const char KCFG[] =
    "apiVersion: v1\n"
    "current-context: main\n"
    "contexts:\n"
    "- name: main\n"
    "  context: {cluster: a, user: alice, namespace: team}\n"
    "- name: other\n"
    "  context: {cluster: b, user: bob}\n"
    "clusters:\n"
    "- name: a\n"
    "  cluster: {server: 'https://a.example:6443', certificate-authority-data: " B64_CA "}\n"
    "- name: b\n"
    "  cluster: {server: 'https://b.example', insecure-skip-tls-verify: true,\n"
    "            tls-server-name: b-internal}\n"
    "users:\n"
    "- name: alice\n"
    "  user:\n"
    "    token: alice-token\n"
    "    as: tenant-a\n"
    "    as-uid: '1001'\n"
    "    as-groups: [team-a, viewers]\n"
    "    as-user-extra: {scopes: [read, list], 'example.com/x y': [v]}\n"
    "- name: bob\n"
    "  user: {username: bob, password: pw}\n"
    "- name: carol\n"
    "  user: {token: carol-token}\n";

static hr_kubeconfig *load(const hr_koverrides *ov, const char *context, hr_err *e)
{
    hr_kubeconfig_opts o = {
        .kubeconfig = path_of("config"), .context = context, .no_in_cluster = true};
    if (ov)
        o.ov = *ov;
    hr_kubeconfig *c = NULL;
    hr_status st = hr_kubeconfig_load(&o, &c, e);
    return st == HR_OK ? c : NULL;
}

static hr_kubeconfig *load_ok(const hr_koverrides *ov, const char *context)
{
    hr_err e;
    hr_kubeconfig *c = load(ov, context, &e);
    if (!c)
        fail_msg("load failed: %s", e.msg);
    return c;
}

static void load_fails(const hr_koverrides *ov, const char *want)
{
    hr_err e;
    hr_kubeconfig *c = load(ov, NULL, &e);
    if (c) {
        hr_kubeconfig_free(c);
        fail_msg("loaded, wanted an error with \"%s\"", want);
    }
    if (!strstr(e.msg, want))
        fail_msg("error \"%s\" does not contain \"%s\"", e.msg, want);
}

/* The kubeconfig's own impersonation, and nothing changed without flags. */
static void test_kubeconfig_impersonation(void **state)
{
    (void)state;
    put_file("config", KCFG);
    hr_kubeconfig *c = load_ok(NULL, NULL);
    assert_string_equal(c->server, "https://a.example:6443");
    assert_string_equal(c->token, "alice-token");
    assert_string_equal(c->ns, "team");
    assert_string_equal(c->as_user, "tenant-a");
    assert_string_equal(c->as_uid, "1001");
    assert_int_equal(c->n_as_groups, 2);
    assert_string_equal(c->as_groups[0], "team-a");
    assert_string_equal(c->as_groups[1], "viewers");
    assert_int_equal(c->n_as_extra, 3);
    assert_string_equal(c->as_extra_keys[0], "scopes");
    assert_string_equal(c->as_extra_values[1], "list");
    assert_string_equal(c->as_extra_keys[2], "example.com/x y");
    hr_kubeconfig_free(c);
}

/* Each flag beats the field it names; the rest stays the file's. */
static void test_flags_over_kubeconfig(void **state)
{
    (void)state;
    put_file("config", KCFG);
    put_file("ca.crt", "-----BEGIN CERTIFICATE-----\nFLAGCA\n");
    const char *groups[] = {"system:masters"};
    hr_koverrides ov = {.server = "b.example:8443/",
                        .token = "flag-token",
                        .as = "tenant-x",
                        .as_groups = groups,
                        .n_as_groups = 1,
                        .ca_file = path_of("ca.crt")};
    hr_kubeconfig *c = load_ok(&ov, NULL);
    assert_string_equal(c->server, "https://b.example:8443"); /* kubectl's https default */
    assert_string_equal(c->token, "flag-token");
    assert_string_equal(c->as_user, "tenant-x");
    assert_string_equal(c->as_uid, "1001"); /* not given: the file's */
    assert_int_equal(c->n_as_groups, 1);
    assert_string_equal(c->as_groups[0], "system:masters");
    assert_memory_equal(c->ca, "-----BEGIN CERTIFICATE-----\nFLAGCA\n", c->ca_len);
    assert_string_equal(c->cluster_name, "a");
    assert_string_equal(c->ns, "team");
    hr_kubeconfig_free(c);
}

/* kubectl --server=https://x --token=T --certificate-authority=ca.crt with
 * no kubeconfig anywhere, and never in-cluster then. */
static void test_no_kubeconfig(void **state)
{
    (void)state;
    put_file("ca.crt", "-----BEGIN CERTIFICATE-----\nFLAGCA\n");
    char home[300];
    snprintf(home, sizeof home, "%s/home", g_dir);
    hr_kubeconfig_opts o = {.env_kubeconfig = "",
                            .home = home,
                            .svc_host = "10.0.0.1",
                            .svc_port = "443",
                            .sa_dir = path_of("no-sa")};
    o.ov = (hr_koverrides){.server = "https://x:6443", .token = "T", .ca_file = path_of("ca.crt")};
    hr_kubeconfig *c = NULL;
    hr_err e;
    if (hr_kubeconfig_load(&o, &c, &e) != HR_OK)
        fail_msg("%s", e.msg);
    assert_string_equal(c->server, "https://x:6443");
    assert_string_equal(c->token, "T");
    assert_false(c->in_cluster);
    assert_false(c->insecure);
    assert_memory_equal(c->ca, "-----BEGIN CERTIFICATE-----\nFLAGCA\n", c->ca_len);
    assert_string_equal(c->ns, "default");
    assert_string_equal(c->context, "");
    hr_kubeconfig_free(c);

    /* --insecure-skip-tls-verify instead of the CA. */
    o.ov.ca_file = NULL;
    o.ov.insecure = true;
    assert_int_equal(hr_kubeconfig_load(&o, &c, &e), HR_OK);
    assert_true(c->insecure);
    assert_null(c->ca);
    hr_kubeconfig_free(c);

    /* No --server: nothing to connect to (no in-cluster token here). */
    o.ov.server = NULL;
    o.no_in_cluster = true;
    assert_int_equal(hr_kubeconfig_load(&o, &c, &e), HR_E_NOTFOUND);
    /* --user with no kubeconfig to find it in. */
    o.ov.server = "https://x";
    o.ov.user = "alice";
    assert_int_not_equal(hr_kubeconfig_load(&o, &c, &e), HR_OK);
    assert_non_null(strstr(e.msg, "--user \"alice\""));
}

/* Either TLS flag replaces both of the file's fields; both at once: an error. */
static void test_tls_flags(void **state)
{
    (void)state;
    put_file("config", KCFG);
    put_file("ca.crt", "-----BEGIN CERTIFICATE-----\nFLAGCA\n");
    hr_koverrides ov = {.insecure = true};
    hr_kubeconfig *c = load_ok(&ov, NULL); /* a's CA data dropped, not an error */
    assert_true(c->insecure);
    assert_null(c->ca);
    hr_kubeconfig_free(c);
    ov = (hr_koverrides){.ca_file = path_of("ca.crt")};
    c = load_ok(&ov, "other"); /* b's insecure dropped */
    assert_false(c->insecure);
    assert_non_null(c->ca);
    assert_string_equal(c->tls_server_name, "b-internal"); /* no --server: the file's stays */
    hr_kubeconfig_free(c);
    ov = (hr_koverrides){.server = "https://b2.example"};
    c = load_ok(&ov, "other");
    assert_null(c->tls_server_name); /* it was for the file's server */
    hr_kubeconfig_free(c);
    ov = (hr_koverrides){.server = "https://b2.example", .tls_server_name = "b2"};
    c = load_ok(&ov, "other");
    assert_string_equal(c->tls_server_name, "b2");
    hr_kubeconfig_free(c);
    ov = (hr_koverrides){.insecure = true, .ca_file = path_of("ca.crt")};
    load_fails(&ov, "use one");
    ov = (hr_koverrides){.ca_file = path_of("missing.crt")};
    load_fails(&ov, "--certificate-authority");
}

/* --cluster and --user: entries the context does not name. */
static void test_cluster_and_user(void **state)
{
    (void)state;
    put_file("config", KCFG);
    hr_koverrides ov = {.cluster = "b", .user = "carol"};
    hr_kubeconfig *c = load_ok(&ov, NULL);
    assert_string_equal(c->server, "https://b.example");
    assert_true(c->insecure);
    assert_string_equal(c->cluster_name, "b");
    assert_string_equal(c->user_name, "carol");
    assert_string_equal(c->token, "carol-token");
    assert_null(c->as_user);            /* alice's impersonation went with alice */
    assert_string_equal(c->ns, "team"); /* the context's namespace stays */
    hr_kubeconfig_free(c);
    ov = (hr_koverrides){.cluster = "nope"};
    load_fails(&ov, "cluster \"nope\" (--cluster) not found");
    ov = (hr_koverrides){.user = "nope"};
    load_fails(&ov, "user \"nope\" (--user) not found");

    /* No current-context: --cluster (or --server) is enough. */
    put_file("config", strstr(KCFG, "contexts:"));
    ov = (hr_koverrides){.cluster = "a", .user = "carol"};
    c = load_ok(&ov, NULL);
    assert_string_equal(c->server, "https://a.example:6443");
    assert_string_equal(c->token, "carol-token");
    assert_string_equal(c->context, "");
    hr_kubeconfig_free(c);
    load_fails(NULL, "current-context");
}

/* --token replaces the user's other bearer and basic credentials. */
static void test_token_replaces(void **state)
{
    (void)state;
    put_file("config", KCFG);
    hr_koverrides ov = {.token = "T"};
    hr_kubeconfig *c = load_ok(&ov, "other");
    assert_string_equal(c->token, "T");
    assert_null(c->username);
    assert_null(c->password);
    hr_kubeconfig_free(c);
    /* A client certificate from the flags needs its key. */
    put_file("c.crt", "CRT\n");
    put_file("c.key", "KEY\n");
    ov = (hr_koverrides){.cert_file = path_of("c.crt")};
    load_fails(&ov, "a client certificate without its key");
    ov.key_file = path_of("c.key");
    c = load_ok(&ov, NULL);
    assert_memory_equal(c->cert, "CRT\n", 4);
    assert_memory_equal(c->key, "KEY\n", 4);
    hr_kubeconfig_free(c);
}

/* A group or uid with no user to impersonate: kubectl refuses it too. */
static void test_groups_without_user(void **state)
{
    (void)state;
    put_file("config", KCFG);
    const char *groups[] = {"g"};
    hr_koverrides ov = {.user = "carol", .as_groups = groups, .n_as_groups = 1};
    load_fails(&ov, "impersonating a group without a user");
    ov = (hr_koverrides){.user = "carol", .as_uid = "7"};
    load_fails(&ov, "impersonating a uid without a user");
    ov.as = "u";
    hr_kubeconfig *c = load_ok(&ov, NULL);
    assert_string_equal(c->as_uid, "7");
    hr_kubeconfig_free(c);
}

/* A value that would end its header and start another is refused, from
 * the file (each field) and from the flags. */
static void test_header_injection(void **state)
{
    (void)state;
    static const char *const users[] = {
        "{token: t, as: \"evil\\r\\nX-Injected: 1\"}",
        "{token: t, as: u, as-uid: \"1\\n2\"}",
        "{token: t, as: u, as-groups: [ok, \"g\\r\\nX: y\"]}",
        "{token: t, as: u, as-user-extra: {k: [\"v\\nX: y\"]}}",
        "{token: t, as: u, as-user-extra: {\"k\\nX\": [v]}}",
        "{token: t, as: \"tab\\tor\\x7fdel\"}",
    };
    for (size_t i = 0; i < sizeof users / sizeof users[0]; i++) {
        char doc[600];
        snprintf(doc, sizeof doc,
                 "current-context: x\ncontexts:\n- name: x\n  context: {cluster: c, user: u}\n"
                 "clusters:\n- name: c\n  cluster: {server: 'https://c'}\n"
                 "users:\n- name: u\n  user: %s\n",
                 users[i]);
        put_file("config", doc);
        load_fails(NULL, "not a valid HTTP header value");
    }
    put_file("config", KCFG);
    hr_koverrides ov = {.as = "x\r\nImpersonate-Group: system:masters"};
    load_fails(&ov, "not a valid HTTP header value");
    const char *groups[] = {"system:masters\n"};
    ov = (hr_koverrides){.as = "x", .as_groups = groups, .n_as_groups = 1};
    load_fails(&ov, "not a valid HTTP header value");
    assert_false(hr_kheader_value_ok(""));
    assert_false(hr_kheader_value_ok("\xff\xfe"));
    assert_true(hr_kheader_value_ok("system:serviceaccount:ns:name é"));
}

static bool has_line(const struct curl_slist *l, const char *line)
{
    for (; l; l = l->next)
        if (!strcmp(l->data, line))
            return true;
    return false;
}

static int count_prefix(const struct curl_slist *l, const char *p)
{
    int n = 0;
    for (; l; l = l->next)
        n += !strncmp(l->data, p, strlen(p));
    return n;
}

/* The headers of a request: one per group and per extra value, the extra's
 * key escaped as client-go escapes it; a bad value refused here too. */
static void test_headers(void **state)
{
    (void)state;
    put_file("config", KCFG);
    hr_kubeconfig *c = load_ok(NULL, NULL);
    hr_kcred_snap snap = {0};
    struct curl_slist *l = NULL;
    hr_err e;
    assert_int_equal(hr_kheaders_build(&snap, c, NULL, "application/json", &l, &e), HR_OK);
    assert_true(has_line(l, "Impersonate-User: tenant-a"));
    assert_true(has_line(l, "Impersonate-Uid: 1001"));
    assert_true(has_line(l, "Impersonate-Group: team-a"));
    assert_true(has_line(l, "Impersonate-Group: viewers"));
    assert_int_equal(count_prefix(l, "Impersonate-Group:"), 2);
    assert_true(has_line(l, "Impersonate-Extra-scopes: read"));
    assert_true(has_line(l, "Impersonate-Extra-scopes: list"));
    assert_true(has_line(l, "Impersonate-Extra-example.com%2Fx%20y: v"));
    assert_true(has_line(l, "Content-Type: application/json"));
    hr_kheaders_free(l);
    /* Bypassing the load's checks, the builder still refuses. */
    const char *bad[] = {"g\r\nX-Injected: 1"};
    c->as_groups = bad;
    c->n_as_groups = 1;
    l = NULL;
    assert_int_equal(hr_kheaders_build(&snap, c, NULL, NULL, &l, &e), HR_E_INPUT);
    assert_null(l);
    /* A token that would add a header (the kubeconfig's, a token file's,
     * a plugin's: all reach the request here). */
    char tok[] = "Bearer t\r\nX-Injected: 1";
    snap.authorization = tok;
    assert_int_equal(hr_kheaders_build(&snap, c, NULL, NULL, &l, &e), HR_E_INPUT);
    assert_null(l);
    snap.authorization = NULL;
    /* No impersonation: no Impersonate-* header. */
    c->as_user = NULL;
    assert_int_equal(hr_kheaders_build(&snap, c, NULL, NULL, &l, &e), HR_OK);
    assert_int_equal(count_prefix(l, "Impersonate-"), 0);
    hr_kheaders_free(l);
    hr_kubeconfig_free(c);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_kubeconfig_impersonation),
        cmocka_unit_test(test_flags_over_kubeconfig),
        cmocka_unit_test(test_no_kubeconfig),
        cmocka_unit_test(test_tls_flags),
        cmocka_unit_test(test_cluster_and_user),
        cmocka_unit_test(test_token_replaces),
        cmocka_unit_test(test_groups_without_user),
        cmocka_unit_test(test_header_injection),
        cmocka_unit_test(test_headers),
    };
    return cmocka_run_group_tests(tests, setup_dir, teardown_dir);
}
