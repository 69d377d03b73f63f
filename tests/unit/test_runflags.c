/*
 * test_runflags.c — `headroom run` takes the Go kube-headroom's manager
 * flags (docs/cli.md): each parses to exactly the options the flag of ours
 * it stands for gives (controller-runtime's "0" address: off; zap's
 * levels and encoders: ours), the ones without an equivalent are accepted
 * and change nothing, and what is wrong is refused by name — a
 * certificate file name that is a path, an alias that disagrees with our
 * flag given beside it.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "cmd/cmd.h"
#include "cmd/run_flags.h"

#define MAX_ARGS 8

/* The options argv (NULL-terminated, at most MAX_ARGS) parses to; *rc its status. */
static char *opts(const char *const *args, int *rc)
{
    char *argv[MAX_ARGS + 1] = {0};
    int argc = 0;
    while (args[argc] != NULL) {
        assert_true(argc < MAX_ARGS);
        argv[argc] = (char *)args[argc];
        argc++;
    }
    hr_buf b;
    hr_buf_init(&b, 0);
    *rc = hr_run_flags_text("headroom", argc, argv, &b);
    assert_false(hr_buf_failed(&b));
    char *s = strdup(b.data != NULL ? hr_buf_str(&b) : "");
    hr_buf_free(&b);
    assert_non_null(s);
    return s;
}

typedef struct pair {
    const char *theirs[MAX_ARGS + 1];
    const char *ours[MAX_ARGS + 1];
    const char *shows; /* a line the options must have, or NULL */
} pair;

static const pair pairs[] = {
    {{"--metrics-bind-address", ":8443", NULL},
     {"--metrics-addr", ":8443", NULL},
     "metrics_addr=:8443\n"},
    {{"--metrics-bind-address=127.0.0.1:9000", NULL},
     {"--metrics-addr=127.0.0.1:9000", NULL},
     "metrics_addr=127.0.0.1:9000\n"},
    {{"--metrics-bind-address=0", NULL}, {"--metrics-addr=", NULL}, "metrics_addr=\n"},
    {{"--health-probe-bind-address", ":8082", NULL},
     {"--probe-addr", ":8082", NULL},
     "probe_addr=:8082\n"},
    {{"--health-probe-bind-address=0", NULL}, {"--probe-addr=", NULL}, "probe_addr=\n"},
    {{"--leader-elect", NULL}, {"--leader-elect=true", NULL}, "leader_elect=1\n"},
    {{"--metrics-secure=false", NULL}, {"--metrics-secure=false", NULL}, "metrics_secure=0\n"},
    {{"--webhook-cert-path", "/certs", NULL},
     {"--webhook-cert-dir", "/certs", NULL},
     "cert_dir=/certs\n"},
    {{"--metrics-cert-path=/certs", NULL},
     {"--metrics-cert-dir=/certs", NULL},
     "metrics_cert_dir=/certs\n"},
    {{"--metrics-cert-path=/c", "--webhook-cert-path=/c", "--metrics-cert-name=tls.crt",
      "--metrics-cert-key=tls.key", "--webhook-cert-name=tls.crt", "--webhook-cert-key=tls.key",
      NULL},
     {"--webhook-cert-dir=/c", "--metrics-cert-dir=/c", NULL},
     "cert_dir=/c\n"},
    {{"--webhook-cert-name=cert.pem", "--webhook-cert-key", "key.pem", NULL},
     {"--webhook-cert-name", "cert.pem", "--webhook-cert-key=key.pem", NULL},
     "cert_name=cert.pem\ncert_key=key.pem\n"},
    {{"--metrics-cert-path=/m", "--metrics-cert-name=m.crt", "--metrics-cert-key=m.key", NULL},
     {"--metrics-cert-dir=/m", "--metrics-cert-name=m.crt", "--metrics-cert-key=m.key", NULL},
     "metrics_cert_name=m.crt\nmetrics_cert_key=m.key\n"},
    {{"--metrics-cert-path", "/m", "--webhook-cert-path", "/w", NULL},
     {"--metrics-cert-dir", "/m", "--webhook-cert-dir", "/w", NULL},
     "metrics_cert_dir=/m\n"},
    {{"--webhook-cert-path=/c", "--webhook-cert-dir=/c", NULL},
     {"--webhook-cert-dir=/c", NULL},
     NULL},
    {{"--zap-log-level=debug", NULL}, {"-v", NULL}, "verbosity=1\n"},
    {{"--zap-log-level", "5", NULL}, {"--v=1", NULL}, "verbosity=1\n"},
    {{"--zap-log-level=info", NULL}, {"--v=0", NULL}, "verbosity=0\n"},
    {{"--zap-log-level=error", NULL}, {NULL}, "verbosity=0\n"},
    {{"--zap-log-level=panic", "--v=0", NULL}, {NULL}, "verbosity=0\n"},
    {{"--zap-devel", NULL}, {"-v", NULL}, "verbosity=1\n"},
    {{"--zap-devel", "--zap-log-level=info", NULL}, {NULL}, "verbosity=0\n"},
    {{"--zap-devel=false", NULL}, {NULL}, "verbosity=0\n"},
    {{"--zap-encoder=json", NULL}, {"--log-format=json", NULL}, "log_json=1\n"},
    {{"--zap-encoder", "console", NULL}, {"--log-format", "logfmt", NULL}, "log_json=0\n"},
    {{"--zap-stacktrace-level=error", "--zap-time-encoding=iso8601", NULL}, {NULL}, NULL},
    {{"--enable-http2=false", NULL}, {NULL}, "http2_ignored=0\n"},
    {{"--metrics-bind-address=:8443", "--metrics-addr=:8443", NULL},
     {"--metrics-addr=:8443", NULL},
     NULL},
};

static void alias_parses_as_ours(void **state)
{
    (void)state;
    for (size_t i = 0; i < sizeof pairs / sizeof pairs[0]; i++) {
        int rc_t, rc_o;
        char *t = opts(pairs[i].theirs, &rc_t);
        char *o = opts(pairs[i].ours, &rc_o);
        if (rc_t != 0 || rc_o != 0 || strcmp(t, o) != 0)
            fail_msg("%s ...: exit %d\n%s\nbut %s ...: exit %d\n%s", pairs[i].theirs[0], rc_t, t,
                     pairs[i].ours[0] ? pairs[i].ours[0] : "(nothing)", rc_o, o);
        if (pairs[i].shows != NULL && strstr(t, pairs[i].shows) == NULL)
            fail_msg("%s ...: no \"%s\" in\n%s", pairs[i].theirs[0], pairs[i].shows, t);
        free(t);
        free(o);
    }
}

/* --enable-http2 is accepted and only remembered, to be logged: nothing
 * else moves. */
static void http2_only_noted(void **state)
{
    (void)state;
    int rc;
    const char *on[] = {"--enable-http2", NULL};
    const char *none[] = {NULL};
    char *t = opts(on, &rc);
    assert_int_equal(rc, 0);
    char *o = opts(none, &rc);
    assert_int_equal(rc, 0);
    char *p = strstr(t, "http2_ignored=1\n");
    assert_non_null(p);
    p[strlen("http2_ignored=")] = '0';
    assert_string_equal(t, o);
    free(t);
    free(o);
}

static void refused(void **state)
{
    (void)state;
    static const char *const bad[][MAX_ARGS + 1] = {
        {"--metrics-cert-path=/a", "--metrics-cert-dir=/b", NULL},
        {"--webhook-cert-path=/a", "--webhook-cert-dir=/b", NULL},
        {"--metrics-cert-name=", NULL},
        {"--metrics-cert-key=/etc/key.pem", NULL},
        {"--webhook-cert-name=a/b", NULL},
        {"--webhook-cert-key=", NULL},
        {"--metrics-bind-address=:1", "--metrics-addr=:2", NULL},
        {"--metrics-bind-address=0", "--metrics-addr=:8443", NULL},
        {"--health-probe-bind-address=:1", "--probe-addr=:2", NULL},
        {"--zap-log-level=verbose", NULL},
        {"--zap-log-level=0", NULL},
        {"--zap-log-level=debug", "--v=0", NULL},
        {"--zap-devel", "--v=0", NULL},
        {"--zap-encoder=xml", NULL},
        {"--zap-encoder=json", "--log-format=logfmt", NULL},
        {"--zap-stacktrace-level=warn", NULL},
        {"--zap-time-encoding=unix", NULL},
        {"--enable-http2=maybe", NULL},
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        int rc;
        free(opts(bad[i], &rc));
        if (rc != HR_EXIT_USAGE)
            fail_msg("%s %s: exit %d, not the usage error", bad[i][0], bad[i][1] ? bad[i][1] : "",
                     rc);
    }
}

/* kubectl's connection flags on run (flags.h, HR_CONN_FLAGS): each into
 * the client's options, --as-group repeatable and kept after the parser's
 * memory is gone; -s is --server; an empty value is not given. */
static void connection_flags(void **state)
{
    (void)state;
    char *argv[] = {"--as-group",
                    "g1",
                    "--as=u",
                    "-s",
                    "https://x:6443",
                    "--as-group",
                    "g2",
                    "--token=",
                    "--insecure-skip-tls-verify",
                    "--cluster",
                    "c",
                    "--as-uid=7",
                    NULL};
    hr_run_opts o;
    assert_int_equal(hr_run_parse_flags("headroom", 12, argv, &o), 0);
    const hr_koverrides *ov = &o.conn.o.ov;
    assert_string_equal(ov->as, "u");
    assert_string_equal(ov->as_uid, "7");
    assert_int_equal(ov->n_as_groups, 2);
    assert_string_equal(ov->as_groups[0], "g1");
    assert_string_equal(ov->as_groups[1], "g2");
    assert_string_equal(ov->server, "https://x:6443");
    assert_string_equal(ov->cluster, "c");
    assert_null(ov->token);
    assert_true(ov->insecure);
    char *both[] = {"--insecure-skip-tls-verify", "--certificate-authority=ca.crt", NULL};
    assert_int_equal(hr_run_parse_flags("headroom", 2, both, &o), HR_EXIT_USAGE);
}

/* Two list flags in one command keep their values apart, each in order. */
static void lists_apart(void **state)
{
    (void)state;
    static const hr_flag fl[] = {{"set", 0, HR_FLAG_LIST, "X", "", NULL},
                                 {"name", 'n', HR_FLAG_STRING, "N", "", NULL},
                                 {"group", 0, HR_FLAG_LIST, "G", "", NULL}};
    static const hr_command c = {"t", "", "", NULL, fl, 3, 0, NULL};
    char *argv[] = {"--group=a", "--set", "1", "-n", "x", "--group", "b", "--set=2", "--group=c"};
    hr_args a;
    assert_int_equal(hr_args_parse("headroom", &c, 9, argv, &a), HR_EXIT_OK);
    int n;
    const char **v = hr_args_list(&a, 0, &n);
    assert_int_equal(n, 2);
    assert_string_equal(v[0], "1");
    assert_string_equal(v[1], "2");
    v = hr_args_list(&a, 2, &n);
    assert_int_equal(n, 3);
    assert_string_equal(v[0], "a");
    assert_string_equal(v[2], "c");
    assert_null(hr_args_list(&a, 1, &n));
    assert_int_equal(n, 0);
    hr_args_free(&a);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(alias_parses_as_ours),
        cmocka_unit_test(http2_only_noted),
        cmocka_unit_test(refused),
        cmocka_unit_test(connection_flags),
        cmocka_unit_test(lists_apart),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
