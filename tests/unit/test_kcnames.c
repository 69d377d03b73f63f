/*
 * test_kcnames.c — the names of a kubeconfig's contexts, clusters and users
 * (kube/config/kcnames.h), what `headroom __complete --context ''` offers:
 * the files found by kubectl's rules (--kubeconfig, else $KUBECONFIG's in
 * order, missing ones skipped, else ~/.kube/config), each name once, the
 * first file's; nothing an entry names is read, so a broken entry is still
 * named; no file: HR_E_NOTFOUND; a file that is not YAML: an error.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cmocka.h>

#include "kube/config/kcnames.h"

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

/* The names given, space-separated, in order. */
static void collect(void *ud, const char *name)
{
    char *s = ud;
    size_t n = strlen(s);
    snprintf(s + n, 512 - n, "%s%s", n ? " " : "", name);
}

static hr_status names(const hr_kubeconfig_opts *o, const char *key, char *out, hr_err *err)
{
    out[0] = '\0';
    return hr_kubeconfig_names(o, key, collect, out, err);
}

static const char A[] = "apiVersion: v1\n"
                        "kind: Config\n"
                        "clusters:\n"
                        "- {name: c1, cluster: {server: \"https://a\"}}\n"
                        "users:\n"
                        "- {name: u1, user: {client-key: /does/not/exist}}\n"
                        "contexts:\n"
                        "- {name: alpha, context: {cluster: c1, user: u1}}\n"
                        "- {name: beta, context: {cluster: gone, user: nobody}}\n"
                        "- {context: {cluster: c1}}\n"
                        "current-context: alpha\n";
static const char B[] = "contexts:\n"
                        "- name: beta\n"
                        "  context: {cluster: c2}\n"
                        "- name: gamma\n"
                        "  context: {cluster: c2}\n"
                        "clusters:\n"
                        "- {name: c2, cluster: {server: \"https://b\"}}\n";

static int setup(void **state)
{
    (void)state;
    snprintf(g_dir, sizeof g_dir, "/tmp/hr-kcnames-%d", (int)getpid());
    if (mkdir(g_dir, 0700) != 0)
        return -1;
    put_file("a", A);
    put_file("b", B);
    put_file("bad", "contexts: [unclosed\n");
    if (mkdir(path_of(".kube"), 0700) != 0)
        return -1;
    put_file(".kube/config", B);
    return 0;
}

static int teardown(void **state)
{
    (void)state;
    static const char *const files[] = {"a", "b", "bad", ".kube/config"};
    for (size_t i = 0; i < sizeof files / sizeof files[0]; i++)
        unlink(path_of(files[i]));
    rmdir(path_of(".kube"));
    rmdir(g_dir);
    return 0;
}

static void explicit_file(void **state)
{
    (void)state;
    char out[512];
    hr_err err;
    hr_kubeconfig_opts o = {.kubeconfig = path_of("a"), .env_kubeconfig = path_of("b")};
    assert_int_equal(names(&o, "contexts", out, &err), HR_OK);
    assert_string_equal(out, "alpha beta"); /* beta's cluster is missing: named all the same */
    assert_int_equal(names(&o, "clusters", out, &err), HR_OK);
    assert_string_equal(out, "c1");
    assert_int_equal(names(&o, "users", out, &err), HR_OK);
    assert_string_equal(out, "u1"); /* its key file is never read */
    assert_int_equal(names(&o, "nosuch", out, &err), HR_OK);
    assert_string_equal(out, "");
}

static void env_merge(void **state)
{
    (void)state;
    char out[512], env[1200];
    hr_err err;
    snprintf(env, sizeof env, "%s:%s:%s:%s", path_of("missing"), path_of("a"), path_of("b"),
             path_of("a"));
    hr_kubeconfig_opts o = {.env_kubeconfig = env, .home = g_dir};
    assert_int_equal(names(&o, "contexts", out, &err), HR_OK);
    assert_string_equal(out, "alpha beta gamma");
    assert_int_equal(names(&o, "clusters", out, &err), HR_OK);
    assert_string_equal(out, "c1 c2");
}

static void home_and_none(void **state)
{
    (void)state;
    char out[512];
    hr_err err;
    hr_kubeconfig_opts o = {.env_kubeconfig = "", .home = g_dir};
    assert_int_equal(names(&o, "contexts", out, &err), HR_OK);
    assert_string_equal(out, "beta gamma");
    hr_kubeconfig_opts none = {.env_kubeconfig = path_of("missing"), .home = "/nonexistent"};
    assert_int_equal(names(&none, "contexts", out, &err), HR_E_NOTFOUND);
    assert_string_equal(out, "");
}

static void bad_files(void **state)
{
    (void)state;
    char out[512];
    hr_err err;
    hr_kubeconfig_opts o = {.kubeconfig = path_of("bad")};
    assert_int_not_equal(names(&o, "contexts", out, &err), HR_OK);
    assert_non_null(strstr(err.msg, "bad"));
    hr_kubeconfig_opts gone = {.kubeconfig = path_of("missing")};
    assert_int_not_equal(names(&gone, "contexts", out, &err), HR_OK);
    /* The names of the files before a bad one are given, then its error. */
    char env[1200];
    snprintf(env, sizeof env, "%s:%s", path_of("a"), path_of("bad"));
    hr_kubeconfig_opts merged = {.env_kubeconfig = env};
    assert_int_not_equal(names(&merged, "contexts", out, &err), HR_OK);
    assert_string_equal(out, "alpha beta");
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(explicit_file),
        cmocka_unit_test(env_merge),
        cmocka_unit_test(home_and_none),
        cmocka_unit_test(bad_files),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
