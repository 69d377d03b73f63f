/*
 * flags.h — the one flag parser of the commands (plan, node, explain,
 * preflight, completion), kubectl's conventions: `--flag value` and
 * `--flag=value` for every flag, `-f value`, `-f=value` and `-fvalue` for
 * short ones, booleans as `--flag`, `--flag=true|false`, `--` ends the
 * flags, flags and arguments in any order. Unknown flags are named in the
 * error. No abbreviations (getopt_long accepts `--name` for `--namespace`,
 * which we would then have to support forever), no reordering of argv.
 *
 * A command describes itself once (hr_command: name, synopsis, flags); the
 * same table prints its help, drives the parser, and feeds `headroom
 * completion` — so help, parsing and completion cannot drift apart.
 * `headroom run` is described and parsed the same way (cmd_run.c).
 */
#ifndef HR_CMD_FLAGS_H
#define HR_CMD_FLAGS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>

#include "util/err.h"

typedef enum hr_flag_type {
    HR_FLAG_STRING = 0, /* takes a value; the last one given wins */
    HR_FLAG_BOOL,       /* no value, or =true / =false */
    HR_FLAG_LIST,       /* takes a value; may repeat, every value kept */
    HR_FLAG_LEVEL,      /* klog's -v: "-v" is "1", "-v=N" / "--v=N" a level 0-99; never
                           "-v N" (a bare -v must not swallow the next argument) */
} hr_flag_type;

typedef struct hr_flag {
    const char *name;    /* long name without "--": "namespace" */
    char short_name;     /* 'n', or 0 */
    hr_flag_type type;   /* */
    const char *metavar; /* for help: "NAMESPACE"; NULL for booleans */
    const char *help;    /* one line (more lines: '\n' and 27 spaces) */
    const char *choices; /* completion candidates, space-separated, or NULL;
                            "@file" completes file names */
} hr_flag;

/* The most flags one command may have: hr_args holds a value per flag
 * index. Each command's table says so at compile time (HR_FLAGS_FIT), and
 * hr_args_parse refuses a table that does not fit: `run` outgrew 16 once,
 * and its last flags wrote past val[] into list and pos; 48 when it took
 * the Go kube-headroom's flags too, 64 with kubectl's connection flags. */
#define HR_FLAGS_MAX 64
#define HR_FLAGS_FIT(n) _Static_assert((n) <= HR_FLAGS_MAX, "more flags than hr_args holds")

/* The connection flags every command that talks to a cluster takes. */
#define HR_FLAG_KUBECONFIG                                                               \
    {                                                                                    \
        "kubeconfig", 0, HR_FLAG_STRING, "FILE",                                         \
            "kubeconfig file (default $KUBECONFIG, ~/.kube/config, in-cluster)", "@file" \
    }
#define HR_FLAG_CONTEXT                                                                           \
    {                                                                                             \
        "context", 0, HR_FLAG_STRING, "NAME", "kubeconfig context (default its current-context)", \
            NULL                                                                                  \
    }
#define HR_FLAG_REQUEST_TIMEOUT                                                            \
    {                                                                                      \
        "request-timeout", 0, HR_FLAG_STRING, "DURATION",                                  \
            "give up on one request after this long: 1s, 2m, 1h; 0: the default 30s", NULL \
    }

/* kubectl's connection flags: the one description every command that
 * talks to a cluster takes (plan, node, explain, preflight, verify, run),
 * so each has the same set, help and completion. A command reserves
 * HR_CONN_N indices of its table from its own F_CONN on (`F_CONN,
 * F_NEXT = F_CONN + HR_CONN_N, ...`), puts `[F_CONN] = HR_CONN_FLAGS` in
 * its table, and reads them with hr_conn_opts (cmd/conn.h). Their meaning and
 * precedence over the kubeconfig are kubectl's (kube/config/kubeconfig.h,
 * hr_koverrides). */
enum {
    HR_CONN_KUBECONFIG,
    HR_CONN_CONTEXT,
    HR_CONN_CLUSTER,
    HR_CONN_USER,
    HR_CONN_SERVER,
    HR_CONN_TLS_SERVER_NAME,
    HR_CONN_CA,
    HR_CONN_INSECURE,
    HR_CONN_TOKEN,
    HR_CONN_CERT,
    HR_CONN_KEY,
    HR_CONN_AS,
    HR_CONN_AS_GROUP,
    HR_CONN_AS_UID,
    HR_CONN_N
};
/* The flags in the enum's order, positional: a table puts them after its
 * own designator, `[F_CONN] = HR_CONN_FLAGS,`. (A designator in this
 * header would make clang-format take it for Objective-C.) */
#define HR_CONN_FLAGS                                                                               \
    HR_FLAG_KUBECONFIG, HR_FLAG_CONTEXT, {"cluster",                                                \
                                          0,                                                        \
                                          HR_FLAG_STRING,                                           \
                                          "NAME",                                                   \
                                          "kubeconfig cluster to use instead of the context's",     \
                                          NULL},                                                    \
        {"user", 0, HR_FLAG_STRING, "NAME", "kubeconfig user to use instead of the context's",      \
         NULL},                                                                                     \
        {"server", 's', HR_FLAG_STRING, "URL", "API server address (no kubeconfig needed with it)", \
         NULL},                                                                                     \
        {"tls-server-name",                                                                         \
         0,                                                                                         \
         HR_FLAG_STRING,                                                                            \
         "NAME",                                                                                    \
         "name to check the server's certificate against",                                          \
         NULL},                                                                                     \
        {"certificate-authority",                                                                   \
         0,                                                                                         \
         HR_FLAG_STRING,                                                                            \
         "FILE",                                                                                    \
         "CA file to check the server's certificate with",                                          \
         "@file"},                                                                                  \
        {"insecure-skip-tls-verify",                                                                \
         0,                                                                                         \
         HR_FLAG_BOOL,                                                                              \
         NULL,                                                                                      \
         "do not check the server's certificate (insecure)",                                        \
         NULL},                                                                                     \
        {"token", 0, HR_FLAG_STRING, "TOKEN", "bearer token to authenticate with", NULL},           \
        {"client-certificate",                                                                      \
         0,                                                                                         \
         HR_FLAG_STRING,                                                                            \
         "FILE",                                                                                    \
         "client certificate file for TLS",                                                         \
         "@file"},                                                                                  \
        {"client-key", 0, HR_FLAG_STRING, "FILE", "client key file for TLS", "@file"},              \
        {"as", 0, HR_FLAG_STRING, "USER", "act as this user (Impersonate-User; RBAC: impersonate)", \
         NULL},                                                                                     \
        {"as-group", 0, HR_FLAG_LIST, "GROUP", "... and as a member of this group (repeatable)",    \
         NULL},                                                                                     \
    {                                                                                               \
        "as-uid", 0, HR_FLAG_STRING, "UID", "... with this UID", NULL                               \
    }

typedef struct hr_command {
    const char *name;     /* "plan" */
    const char *synopsis; /* after the name: "[-f FILE|-] [flags]" */
    const char *summary;  /* one line for `headroom help` */
    const char *details;  /* printed after the flags, or NULL */
    const hr_flag *flags;
    size_t n_flags; /* <= HR_FLAGS_MAX */
    int max_args;   /* positional arguments allowed */
    int (*run)(const char *prog, int argc, char **argv);
} hr_command;

/* What was given. Values point into argv. */
typedef struct hr_args {
    const char *val[HR_FLAGS_MAX]; /* per flag index: the value (BOOL: "true"/"false"), NULL */
    const char **list;             /* every HR_FLAG_LIST value, grouped by flag: hr_args_list */
    int n_list;
    int list_at[HR_FLAGS_MAX], list_n[HR_FLAGS_MAX]; /* per flag index: where in list, how many */
    const char **pos;                                /* positional arguments, in order */
    int n_pos;
    bool help; /* -h / --help was given: the help is printed, exit 0 */
} hr_args;

/* Parse argv (the arguments after the command's name). HR_EXIT_OK, or
 * HR_EXIT_USAGE with the reason and the synopsis on stderr, or
 * HR_EXIT_INPUT (out of memory). On -h/--help the help goes to stdout and
 * a->help is set. hr_args_free always. */
int hr_args_parse(const char *prog, const hr_command *c, int argc, char **argv, hr_args *a);
void hr_args_free(hr_args *a);

/* The values of one HR_FLAG_LIST flag, in the order given; *n their count. */
const char **hr_args_list(const hr_args *a, size_t flag, int *n);

/* Whether the flag takes a value (`--flag value`): STRING and LIST. */
bool hr_flag_takes_value(const hr_flag *f);

/* The flag's boolean value (unset: false). */
bool hr_args_on(const hr_args *a, size_t flag);

/* A usage error: "PROG CMD: MSG" and the synopsis on stderr; HR_EXIT_USAGE. */
int hr_usage_error(const char *prog, const hr_command *c, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

/* The command's whole help (synopsis, summary, flags, details). */
void hr_command_help(FILE *f, const char *prog, const hr_command *c);

/* The flag a word names ("--name", "--name=v", "-x", "-xv", "-x=v"), or NULL;
 * *inline_val: the value after '=' (or after the short letter), NULL when
 * none. The parser's and completion's one reading of a flag word. */
const hr_flag *hr_flag_find(const hr_command *c, const char *arg, const char **inline_val);

/* kubectl's --request-timeout: "0" (the default timeout), a bare number of
 * seconds, or a number with ms, s, m or h ("1m30s" too). -1 when malformed. */
long hr_duration_ms(const char *s);

/* A count flag's value (--write-concurrency, --node-workers): a whole
 * number from 1 to max into *out; false (and *out untouched) otherwise. */
bool hr_count_arg(const char *s, int max, int *out);

#endif
