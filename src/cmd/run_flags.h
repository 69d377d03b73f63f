/*
 * run_flags.h — `headroom run`'s command line: its flag table (the one
 * flags.h parses, prints as help and completes), what it parses to, and
 * the Go kube-headroom's manager flags, each onto one of ours
 * (docs/cli.md).
 */
#ifndef HR_CMD_RUN_FLAGS_H
#define HR_CMD_RUN_FLAGS_H

#include <stdbool.h>

#include "cmd/conn.h"
#include "cmd/flags.h"
#include "core/config.h"
#include "util/buf.h"
#include "util/err.h"

/* What `headroom run` runs with. The strings point into argv or the
 * environment. */
typedef struct hr_run_opts {
    const char *metrics_addr;
    bool metrics_secure;         /* HTTPS + TokenReview/SubjectAccessReview (default) */
    const char *probe_addr;      /* plain /healthz, /readyz; "" disables it */
    const char *probe_addr_file; /* where the probe listener's address is written, or NULL */
    bool reuse_port;             /* SO_REUSEPORT on the webhook and metrics listeners */
    const char *webhook_addr;    /* "" disables the webhook listener */
    const char *cert_dir;
    const char *cert_name, *cert_key; /* the pair's file names in cert_dir */
    const char *metrics_cert_dir;     /* the secured /metrics' pair; NULL: cert_dir's */
    const char *metrics_cert_name, *metrics_cert_key; /* in metrics_cert_dir */
    bool cert_self_managed;          /* --webhook-cert-self-managed: the pair from cert_secret */
    const char *cert_secret;         /* its Secret in ns (kept by selfcert.h) */
    const char *webhook_config;      /* the MutatingWebhookConfiguration whose caBundle is kept */
    const char *cert_dns, *cert_ips; /* the serving certificate's names, comma-separated */
    long cert_validity_s, cert_renew_s; /* the serving certificate's validity, renewal */
    long ca_validity_s, ca_renew_s;     /* the CA's */
    hr_conn conn;                       /* kubeconfig, context, --server, --as...: in place */
    const char *ns;                     /* our own namespace (always excluded) */
    hr_dry_run_flag dry_run;            /* --dry-run as given */
    bool leader_elect;                  /* --leader-elect: hold a Lease to write */
    bool controller;                    /* --controller=false: webhook + metrics only */
    bool streaming_lists;               /* --streaming-lists=false: every list by pages */
    bool protobuf;                      /* --protobuf=false: the built-in kinds in JSON too */
    int write_concurrency;              /* --write-concurrency; 0: the controller's default */
    int node_workers;                   /* --node-workers; 0: the controller's default */
    int verbosity;                      /* 0 info, 1 debug */
    bool log_json;                      /* --log-format=json */
    bool http2_ignored;                 /* --enable-http2: logged, HTTP/1.1 only */
} hr_run_opts;

/* Parse run's argv into *o (defaults for what is not given): 0 to run, -1
 * after --help (printed, exit 0), else the usage error's exit status. */
HR_MUST_CHECK int hr_run_parse_flags(const char *prog, int argc, char **argv, hr_run_opts *o);

/* What `headroom run` would run with, one "name=value" line per option,
 * after parsing argv as hr_cmd_run does (tests: an alias and the flag it
 * stands for parse alike). HR_EXIT_OK, or the usage error's status. */
HR_MUST_CHECK int hr_run_flags_text(const char *prog, int argc, char **argv, hr_buf *out);

#endif
