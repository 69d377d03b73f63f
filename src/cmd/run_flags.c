/*
 * run_flags.c — `headroom run`'s flags (run_flags.h): the table, the
 * defaults, and the Go kube-headroom's flags mapped onto ours.
 */
#include "cmd/run_flags.h"

#include <stdlib.h>
#include <string.h>

#include "cmd/cmd.h"
#include "cmd/cmd_run.h"
#include "controller/controller.h"

/* The one table for run's help, parsing and completion (flags.h). */
enum {
    F_METRICS_ADDR,
    F_METRICS_SECURE,
    F_PROBE_ADDR,
    F_WEBHOOK_ADDR,
    F_CERT_DIR,
    F_METRICS_CERT_DIR,
    F_CONN,
    F_NAMESPACE = F_CONN + HR_CONN_N,
    F_DRY_RUN,
    F_LEADER_ELECT,
    F_CONTROLLER,
    F_STREAMING_LISTS,
    F_PROTOBUF,
    F_WRITE_CONCURRENCY,
    F_NODE_WORKERS,
    F_LOG_FORMAT,
    F_VERBOSE,
    F_PROBE_ADDR_FILE,
    F_REUSE_PORT,
    F_CERT_SELF,
    F_CERT_SECRET,
    F_WEBHOOK_CONFIG,
    F_CERT_DNS,
    F_CERT_IPS,
    F_CERT_VALIDITY,
    F_CERT_RENEW,
    F_CA_VALIDITY,
    F_CA_RENEW,
    /* The Go kube-headroom's manager flags (controller-runtime's), so its
     * Deployments switch unchanged: each sets one of ours (run_go_flags). */
    F_GO_METRICS_BIND,
    F_GO_PROBE_BIND,
    F_GO_METRICS_CERT_PATH,
    F_GO_METRICS_CERT_NAME,
    F_GO_METRICS_CERT_KEY,
    F_GO_WEBHOOK_CERT_PATH,
    F_GO_WEBHOOK_CERT_NAME,
    F_GO_WEBHOOK_CERT_KEY,
    F_GO_HTTP2,
    F_GO_ZAP_LEVEL,
    F_GO_ZAP_DEVEL,
    F_GO_ZAP_ENCODER,
    F_GO_ZAP_STACKTRACE,
    F_GO_ZAP_TIME,
    F_N
};

#define NUM_(x) #x
#define NUM(x) NUM_(x) /* a numeric macro as a literal: the help states the controller's bounds */
static const hr_flag run_flags[F_N] = {
    [F_METRICS_ADDR] = {"metrics-addr", 0, HR_FLAG_STRING, "ADDR",
                        "/metrics over HTTPS with the serving certificate, for a\n"
                        "                           token RBAC lets get /metrics (default :8443)",
                        NULL},
    [F_METRICS_SECURE] = {"metrics-secure", 0, HR_FLAG_BOOL, NULL,
                          "=false: /metrics, /healthz, /readyz over plain HTTP, no\n"
                          "                           authentication (tests, trusted networks)",
                          NULL},
    [F_PROBE_ADDR] = {"probe-addr", 0, HR_FLAG_STRING, "ADDR",
                      "plain /healthz, /readyz for the kubelet (default :8081;\n"
                      "                           \"\" disables it)",
                      NULL},
    [F_WEBHOOK_ADDR] = {"webhook-addr", 0, HR_FLAG_STRING, "ADDR",
                        "HTTPS admission webhook (default :9443; \"\" disables it)", NULL},
    [F_CERT_DIR] = {"webhook-cert-dir", 0, HR_FLAG_STRING, "DIR",
                    "tls.crt and tls.key (webhook and metrics), re-read when\n"
                    "                           they change (default "
                    "/tmp/k8s-webhook-server/serving-certs)",
                    "@dir"},
    [F_METRICS_CERT_DIR] = {"metrics-cert-dir", 0, HR_FLAG_STRING, "DIR",
                            "tls.crt and tls.key for /metrics alone, re-read when\n"
                            "                           they change (default: --webhook-cert-dir)",
                            "@dir"},
    [F_CONN] = HR_CONN_FLAGS,
    [F_NAMESPACE] = {"namespace", 0, HR_FLAG_STRING, "NS",
                     "the controller's own namespace, never managed (default\n"
                     "                           $POD_NAMESPACE)",
                     NULL},
    [F_DRY_RUN] = {"dry-run", 0, HR_FLAG_BOOL, NULL,
                   "override the HeadroomConfig's dryRun (--dry-run=false too)", NULL},
    [F_LEADER_ELECT] = {"leader-elect", 0, HR_FLAG_BOOL, NULL,
                        "write only while holding the Lease \"kube-headroom\" in\n"
                        "                           --namespace (run several replicas)",
                        NULL},
    [F_CONTROLLER] = {"controller", 0, HR_FLAG_BOOL, NULL,
                      "=false: no controller; webhook, metrics and health only", NULL},
    [F_STREAMING_LISTS] = {"streaming-lists", 0, HR_FLAG_BOOL, NULL,
                           "=false: list by pages (limit=500) instead of a watch\n"
                           "                           with sendInitialEvents (design §5)",
                           NULL},
    [F_PROTOBUF] =
        {"protobuf", 0, HR_FLAG_BOOL, NULL,
         "=false: ask for JSON instead of protobuf when listing,\n"
         "                           watching and writing the built-in kinds (design §11)",
         NULL},
    [F_WRITE_CONCURRENCY] = {"write-concurrency", 0, HR_FLAG_STRING, "N",
                             "writes in flight at once, 1-64 (default 16; 1: one\n"
                             "                           request at a time per worker)",
                             NULL},
    [F_NODE_WORKERS] = {"node-workers", 0, HR_FLAG_STRING, "N",
                        "nodes reconciled at once, 1-" NUM(
                            HR_CTL_NODE_WORKERS_MAX) " (default " NUM(HR_CTL_NODE_WORKERS) ")",
                        NULL},
    [F_LOG_FORMAT] = {"log-format", 0, HR_FLAG_STRING, "FORMAT",
                      "logfmt or json: one line per event (default logfmt)", "logfmt json"},
    [F_VERBOSE] = {"v", 'v', HR_FLAG_LEVEL, NULL, "debug logs (-v, -v=1, --v=1; --v=0: info)",
                   NULL},
    [F_PROBE_ADDR_FILE] = {"probe-addr-file", 0, HR_FLAG_STRING, "FILE",
                           "write the probe listener's host:port there once it\n"
                           "                           listens (what `headroom probe` reads)",
                           "@file"},
    [F_REUSE_PORT] = {"reuse-port", 0, HR_FLAG_BOOL, NULL,
                      "open the webhook and metrics listeners with SO_REUSEPORT:\n"
                      "                           replicas on one host share their ports",
                      NULL},
    [F_CERT_SELF] =
        {"webhook-cert-self-managed", 0, HR_FLAG_BOOL, NULL,
         "make and rotate the serving certificate (a CA and a pair it\n"
         "                           issues) in --webhook-cert-secret, keep the CA in\n"
         "                           --webhook-config-name's caBundle, serve it from memory",
         NULL},
    [F_CERT_SECRET] = {"webhook-cert-secret", 0, HR_FLAG_STRING, "NAME",
                       "the self-managed certificate's Secret in our namespace", NULL},
    [F_WEBHOOK_CONFIG] =
        {"webhook-config-name", 0, HR_FLAG_STRING, "NAME",
         "the MutatingWebhookConfiguration whose caBundle is kept\n"
         "                           (none: the certificate serves /metrics alone)",
         NULL},
    [F_CERT_DNS] = {"webhook-cert-dns", 0, HR_FLAG_STRING, "LIST",
                    "the certificate's DNS names, comma-separated; a name without\n"
                    "                           a dot is a Service's (also NAME.NS.svc...)",
                    NULL},
    [F_CERT_IPS] = {"webhook-cert-ips", 0, HR_FLAG_STRING, "LIST",
                    "the certificate's IP addresses, comma-separated", NULL},
    [F_CERT_VALIDITY] = {"webhook-cert-validity", 0, HR_FLAG_STRING, "DURATION",
                         "the serving certificate's validity (default 2160h)", NULL},
    [F_CERT_RENEW] = {"webhook-cert-renew-before", 0, HR_FLAG_STRING, "DURATION",
                      "renewed this long before it ends (default 720h)", NULL},
    [F_CA_VALIDITY] = {"webhook-ca-validity", 0, HR_FLAG_STRING, "DURATION",
                       "the self-managed CA's validity (default 8760h, at most a year)", NULL},
    [F_CA_RENEW] = {"webhook-ca-renew-before", 0, HR_FLAG_STRING, "DURATION",
                    "a new CA this long before it ends (default 2160h)", NULL},
    [F_GO_METRICS_BIND] = {"metrics-bind-address", 0, HR_FLAG_STRING, "ADDR",
                           "= --metrics-addr; \"0\" disables /metrics", NULL},
    [F_GO_PROBE_BIND] = {"health-probe-bind-address", 0, HR_FLAG_STRING, "ADDR",
                         "= --probe-addr; \"0\" disables it", NULL},
    [F_GO_METRICS_CERT_PATH] = {"metrics-cert-path", 0, HR_FLAG_STRING, "DIR",
                                "= --metrics-cert-dir", "@dir"},
    [F_GO_METRICS_CERT_NAME] = {"metrics-cert-name", 0, HR_FLAG_STRING, "FILE",
                                "the certificate's file in --metrics-cert-dir\n"
                                "                           (default tls.crt)",
                                NULL},
    [F_GO_METRICS_CERT_KEY] = {"metrics-cert-key", 0, HR_FLAG_STRING, "FILE",
                               "the key's file in --metrics-cert-dir (default tls.key)", NULL},
    [F_GO_WEBHOOK_CERT_PATH] = {"webhook-cert-path", 0, HR_FLAG_STRING, "DIR",
                                "= --webhook-cert-dir", "@dir"},
    [F_GO_WEBHOOK_CERT_NAME] = {"webhook-cert-name", 0, HR_FLAG_STRING, "FILE",
                                "the certificate's file in --webhook-cert-dir\n"
                                "                           (default tls.crt)",
                                NULL},
    [F_GO_WEBHOOK_CERT_KEY] = {"webhook-cert-key", 0, HR_FLAG_STRING, "FILE",
                               "the key's file in --webhook-cert-dir (default tls.key)", NULL},
    [F_GO_HTTP2] = {"enable-http2", 0, HR_FLAG_BOOL, NULL,
                    "accepted, no effect: our listeners speak HTTP/1.1 only\n"
                    "                           (=true is logged at start)",
                    NULL},
    [F_GO_ZAP_LEVEL] = {"zap-log-level", 0, HR_FLAG_STRING, "LEVEL",
                        "= -v: debug or a number > 0 is -v=1; info, error,\n"
                        "                           panic are -v=0 (every info line still prints)",
                        "debug info error panic"},
    [F_GO_ZAP_DEVEL] = {"zap-devel", 0, HR_FLAG_BOOL, NULL,
                        "= -v=1 unless --zap-log-level says otherwise", NULL},
    [F_GO_ZAP_ENCODER] = {"zap-encoder", 0, HR_FLAG_STRING, "ENCODER",
                          "= --log-format: json is json, console is logfmt", "json console"},
    [F_GO_ZAP_STACKTRACE] = {"zap-stacktrace-level", 0, HR_FLAG_STRING, "LEVEL",
                             "accepted, no effect (no stack traces): info, error,\n"
                             "                           panic",
                             "info error panic"},
    [F_GO_ZAP_TIME] = {"zap-time-encoding", 0, HR_FLAG_STRING, "ENCODING",
                       "accepted, no effect (times are RFC 3339 UTC, ms):\n"
                       "                           epoch, millis, nano, iso8601, rfc3339, "
                       "rfc3339nano",
                       "epoch millis nano iso8601 rfc3339 rfc3339nano"},
};
HR_FLAGS_FIT(F_N);

const hr_command hr_run_command = {
    "run",
    "[flags]",
    "The controller daemon (and the admission webhook, /metrics, health).",
    "Precedence: flags, then the HeadroomConfig \"cluster\", then the defaults; without\n"
    "a HeadroomConfig (and without --dry-run=false) nothing is written (design §1.2).\n"
    "SIGTERM or SIGINT stops it (the Lease is released).\n"
    "From --metrics-bind-address on: the Go kube-headroom's flags, each the flag of\n"
    "ours it names, so its Deployments run this one unchanged; given with that flag\n"
    "too, both must say the same (docs/cli.md).\n",
    run_flags,
    F_N,
    0,
    hr_cmd_run,
};

/* A flag given replaces the default. */
static void take(const char *given, const char **into)
{
    if (given != NULL)
        *into = given;
}

/* Whether s is one of the space-separated words. */
static bool one_of(const char *s, const char *words)
{
    size_t n = strlen(s);
    for (const char *w = words; *w != '\0';) {
        size_t k = strcspn(w, " ");
        if (k == n && strncmp(w, s, n) == 0)
            return true;
        w += k;
        w += *w == ' ';
    }
    return false;
}

/* A Go flag's value (val: already in our terms, NULL: not given) for our
 * flag ours: given alone it is ours; given with ours the two must agree. */
static int go_alias(const char *prog, const char *const *v, size_t go, size_t ours, const char *val,
                    const char **into)
{
    if (val == NULL)
        return 0;
    if (v[ours] != NULL && strcmp(v[ours], val) != 0)
        return hr_usage_error(prog, &hr_run_command, "--%s \"%s\" and --%s \"%s\" disagree",
                              run_flags[go].name, v[go], run_flags[ours].name, v[ours]);
    *into = val;
    return 0;
}

/* Controller-runtime's "0": the listener is off. */
static const char *go_addr(const char *v)
{
    return v != NULL && strcmp(v, "0") == 0 ? "" : v;
}

/* The Go kube-headroom's manager flags, each onto one of ours: a
 * Deployment of it runs this binary unchanged (docs/cli.md). */
static int run_go_flags(const char *prog, const hr_args *a, hr_run_opts *o)
{
    const char *const *v = a->val;
    int rc;
    if ((rc = go_alias(prog, v, F_GO_METRICS_BIND, F_METRICS_ADDR, go_addr(v[F_GO_METRICS_BIND]),
                       &o->metrics_addr)) ||
        (rc = go_alias(prog, v, F_GO_PROBE_BIND, F_PROBE_ADDR, go_addr(v[F_GO_PROBE_BIND]),
                       &o->probe_addr)) ||
        (rc = go_alias(prog, v, F_GO_WEBHOOK_CERT_PATH, F_CERT_DIR, v[F_GO_WEBHOOK_CERT_PATH],
                       &o->cert_dir)) ||
        (rc = go_alias(prog, v, F_GO_METRICS_CERT_PATH, F_METRICS_CERT_DIR,
                       v[F_GO_METRICS_CERT_PATH], &o->metrics_cert_dir)))
        return rc;
    /* File names in their directory: a name, not a path. */
    static const size_t names[] = {F_GO_METRICS_CERT_NAME, F_GO_METRICS_CERT_KEY,
                                   F_GO_WEBHOOK_CERT_NAME, F_GO_WEBHOOK_CERT_KEY};
    for (size_t i = 0; i < sizeof names / sizeof names[0]; i++)
        if (v[names[i]] && (v[names[i]][0] == '\0' || strchr(v[names[i]], '/') != NULL))
            return hr_usage_error(prog, &hr_run_command,
                                  "--%s takes a file name in its directory, not \"%s\"",
                                  run_flags[names[i]].name, v[names[i]]);
    take(v[F_GO_METRICS_CERT_NAME], &o->metrics_cert_name);
    take(v[F_GO_METRICS_CERT_KEY], &o->metrics_cert_key);
    take(v[F_GO_WEBHOOK_CERT_NAME], &o->cert_name);
    take(v[F_GO_WEBHOOK_CERT_KEY], &o->cert_key);
    o->http2_ignored = hr_args_on(a, F_GO_HTTP2);
    /* zap's level: debug or a number > 0 is our debug; the rest info. */
    int verbosity = -1;
    const char *lv = v[F_GO_ZAP_LEVEL];
    if (lv != NULL) {
        size_t d = strspn(lv, "0123456789");
        if (!strcmp(lv, "debug") || (d > 0 && d < 10 && lv[d] == '\0' && strtol(lv, NULL, 10) > 0))
            verbosity = 1;
        else if (one_of(lv, "info error panic"))
            verbosity = 0;
        else
            return hr_usage_error(prog, &hr_run_command,
                                  "--zap-log-level takes debug, info, error, panic or a number "
                                  "above 0, not \"%s\"",
                                  lv);
    } else if (hr_args_on(a, F_GO_ZAP_DEVEL)) {
        verbosity = 1;
    }
    if (verbosity >= 0) {
        if (v[F_VERBOSE] && o->verbosity != verbosity)
            return hr_usage_error(prog, &hr_run_command,
                                  "--zap-log-level or --zap-devel and -v disagree");
        o->verbosity = verbosity;
    }
    const char *enc = v[F_GO_ZAP_ENCODER];
    if (enc != NULL) {
        if (!one_of(enc, "json console"))
            return hr_usage_error(prog, &hr_run_command,
                                  "--zap-encoder takes json or console, not \"%s\"", enc);
        bool json = enc[0] == 'j';
        if (v[F_LOG_FORMAT] && o->log_json != json)
            return hr_usage_error(prog, &hr_run_command, "--zap-encoder and --log-format disagree");
        o->log_json = json;
    }
    static const struct {
        size_t flag;
        const char *takes;
    } noop[] = {{F_GO_ZAP_STACKTRACE, "info error panic"},
                {F_GO_ZAP_TIME, "epoch millis nano iso8601 rfc3339 rfc3339nano"}};
    for (size_t i = 0; i < sizeof noop / sizeof noop[0]; i++)
        if (v[noop[i].flag] && !one_of(v[noop[i].flag], noop[i].takes))
            return hr_usage_error(prog, &hr_run_command, "--%s takes one of %s, not \"%s\"",
                                  run_flags[noop[i].flag].name, noop[i].takes, v[noop[i].flag]);
    return 0;
}

/* 0 to run, -1 after --help (exit 0), else the exit status. */
int hr_run_parse_flags(const char *prog, int argc, char **argv, hr_run_opts *o)
{
    *o = (hr_run_opts){.metrics_addr = ":8443",
                       .metrics_secure = true,
                       .probe_addr = ":8081",
                       .webhook_addr = ":9443",
                       .cert_dir = "/tmp/k8s-webhook-server/serving-certs",
                       .cert_name = "tls.crt",
                       .cert_key = "tls.key",
                       .metrics_cert_name = "tls.crt",
                       .metrics_cert_key = "tls.key",
                       .cert_validity_s = 2160L * 3600,
                       .cert_renew_s = 720L * 3600,
                       .ca_validity_s = 8760L * 3600,
                       .ca_renew_s = 2160L * 3600,
                       .dry_run = HR_DRY_RUN_UNSET,
                       .controller = true,
                       .streaming_lists = true,
                       .protobuf = true};
    const char *env_ns = getenv("POD_NAMESPACE");
    if (env_ns && env_ns[0])
        o->ns = env_ns;
    hr_args a;
    int rc = hr_args_parse(prog, &hr_run_command, argc, argv, &a);
    if (rc == HR_EXIT_OK && !a.help) /* before the free: it keeps --as-group's values */
        rc = hr_conn_opts(prog, &hr_run_command, &a, F_CONN, &o->conn);
    hr_args_free(&a); /* the values stay: they point into argv */
    if (rc != HR_EXIT_OK)
        return rc;
    if (a.help)
        return -1;
    const char *const *v = a.val;
    const char *fmt = v[F_LOG_FORMAT];
    if (fmt && strcmp(fmt, "json") != 0 && strcmp(fmt, "logfmt") != 0)
        return hr_usage_error(prog, &hr_run_command,
                              "--log-format: \"%s\" is neither logfmt nor json", fmt);
    o->log_json = fmt && fmt[0] == 'j';
    take(v[F_METRICS_ADDR], &o->metrics_addr);
    take(v[F_PROBE_ADDR], &o->probe_addr);
    take(v[F_PROBE_ADDR_FILE], &o->probe_addr_file);
    o->reuse_port = hr_args_on(&a, F_REUSE_PORT);
    take(v[F_WEBHOOK_ADDR], &o->webhook_addr);
    take(v[F_CERT_DIR], &o->cert_dir);
    take(v[F_METRICS_CERT_DIR], &o->metrics_cert_dir);
    o->cert_self_managed = hr_args_on(&a, F_CERT_SELF);
    take(v[F_CERT_SECRET], &o->cert_secret);
    take(v[F_WEBHOOK_CONFIG], &o->webhook_config);
    take(v[F_CERT_DNS], &o->cert_dns);
    take(v[F_CERT_IPS], &o->cert_ips);
    const struct {
        size_t flag;
        long *into;
    } durs[] = {{F_CERT_VALIDITY, &o->cert_validity_s},
                {F_CERT_RENEW, &o->cert_renew_s},
                {F_CA_VALIDITY, &o->ca_validity_s},
                {F_CA_RENEW, &o->ca_renew_s}};
    for (size_t i = 0; i < sizeof durs / sizeof durs[0]; i++) {
        const char *d = v[durs[i].flag];
        long ms = d ? hr_duration_ms(d) : 0;
        if (d && ms < 1000)
            return hr_usage_error(prog, &hr_run_command,
                                  "--%s: \"%s\" is not a duration of a second or more",
                                  run_flags[durs[i].flag].name, d);
        if (d)
            *durs[i].into = ms / 1000;
    }
    if (o->cert_renew_s >= o->cert_validity_s || o->ca_renew_s >= o->ca_validity_s)
        return hr_usage_error(prog, &hr_run_command,
                              "--webhook-cert-renew-before must be shorter than "
                              "--webhook-cert-validity, --webhook-ca-renew-before than "
                              "--webhook-ca-validity");
    if (o->cert_self_managed && (!o->cert_secret || !o->cert_secret[0]))
        return hr_usage_error(prog, &hr_run_command,
                              "--webhook-cert-self-managed needs --webhook-cert-secret");
    take(v[F_NAMESPACE], &o->ns);
    if (v[F_METRICS_SECURE])
        o->metrics_secure = hr_args_on(&a, F_METRICS_SECURE);
    if (v[F_CONTROLLER])
        o->controller = hr_args_on(&a, F_CONTROLLER);
    if (v[F_STREAMING_LISTS])
        o->streaming_lists = hr_args_on(&a, F_STREAMING_LISTS);
    if (v[F_PROTOBUF])
        o->protobuf = hr_args_on(&a, F_PROTOBUF);
    if (v[F_WRITE_CONCURRENCY] && !hr_count_arg(v[F_WRITE_CONCURRENCY], 64, &o->write_concurrency))
        return hr_usage_error(prog, &hr_run_command,
                              "--write-concurrency: \"%s\" is not a number from 1 to 64",
                              v[F_WRITE_CONCURRENCY]);
    if (v[F_NODE_WORKERS] &&
        !hr_count_arg(v[F_NODE_WORKERS], HR_CTL_NODE_WORKERS_MAX, &o->node_workers))
        return hr_usage_error(prog, &hr_run_command,
                              "--node-workers: \"%s\" is not a number from 1 to %d",
                              v[F_NODE_WORKERS], HR_CTL_NODE_WORKERS_MAX);
    o->leader_elect = hr_args_on(&a, F_LEADER_ELECT);
    if (v[F_DRY_RUN])
        o->dry_run = hr_args_on(&a, F_DRY_RUN) ? HR_DRY_RUN_ON : HR_DRY_RUN_OFF;
    o->verbosity = v[F_VERBOSE] && strcmp(v[F_VERBOSE], "0") != 0 ? 1 : 0;
    return run_go_flags(prog, &a, o);
}

int hr_run_flags_text(const char *prog, int argc, char **argv, hr_buf *out)
{
    hr_run_opts o;
    int rc = hr_run_parse_flags(prog, argc, argv, &o);
    if (rc != 0)
        return rc < 0 ? HR_EXIT_OK : rc;
    const struct {
        const char *name, *value;
    } s[] = {{"metrics_addr", o.metrics_addr},
             {"probe_addr", o.probe_addr},
             {"probe_addr_file", o.probe_addr_file},
             {"webhook_addr", o.webhook_addr},
             {"cert_dir", o.cert_dir},
             {"metrics_cert_dir", o.metrics_cert_dir},
             {"cert_name", o.cert_name},
             {"cert_key", o.cert_key},
             {"metrics_cert_name", o.metrics_cert_name},
             {"metrics_cert_key", o.metrics_cert_key},
             {"cert_secret", o.cert_secret},
             {"webhook_config", o.webhook_config},
             {"cert_dns", o.cert_dns},
             {"cert_ips", o.cert_ips},
             {"kubeconfig", o.conn.o.kubeconfig},
             {"context", o.conn.o.context},
             {"server", o.conn.o.ov.server},
             {"as", o.conn.o.ov.as},
             {"namespace", o.ns}};
    for (size_t i = 0; i < sizeof s / sizeof s[0]; i++)
        hr_buf_printf(out, "%s=%s\n", s[i].name, s[i].value ? s[i].value : "(unset)");
    const struct {
        const char *name;
        int value;
    } n[] = {{"metrics_secure", o.metrics_secure},
             {"reuse_port", o.reuse_port},
             {"dry_run", (int)o.dry_run},
             {"leader_elect", o.leader_elect},
             {"controller", o.controller},
             {"streaming_lists", o.streaming_lists},
             {"protobuf", o.protobuf},
             {"write_concurrency", o.write_concurrency},
             {"node_workers", o.node_workers},
             {"verbosity", o.verbosity},
             {"log_json", o.log_json},
             {"http2_ignored", o.http2_ignored},
             {"cert_self_managed", o.cert_self_managed},
             {"cert_validity_s", (int)o.cert_validity_s},
             {"cert_renew_s", (int)o.cert_renew_s},
             {"ca_validity_s", (int)o.ca_validity_s},
             {"ca_renew_s", (int)o.ca_renew_s}};
    for (size_t i = 0; i < sizeof n / sizeof n[0]; i++)
        hr_buf_printf(out, "%s=%d\n", n[i].name, n[i].value);
    return HR_EXIT_OK;
}
