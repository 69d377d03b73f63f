/*
 * kubeconfig.h — where to connect and who to be: kubectl's rules for
 * finding and merging kubeconfig files, and the in-cluster fallback.
 *
 * Users expect `headroom` to reach exactly the cluster `kubectl` reaches
 * with the same flags and environment, so the rules are kubectl's:
 *   --kubeconfig FILE        only that file (it must exist);
 *   else $KUBECONFIG         colon-separated list, missing files skipped,
 *                            merged: for every cluster/user/context name and
 *                            for current-context the FIRST file that sets
 *                            it wins, as a whole entry;
 *   else ~/.kube/config;
 *   none of these exists and KUBERNETES_SERVICE_HOST/PORT are set
 *                          ⇒ in-cluster (service-account token, CA and
 *                            namespace under /var/run/secrets/...).
 * The context is --context, else current-context. Relative file paths in a
 * file are relative to that file's directory (exec commands only when they
 * contain a '/', as kubectl).
 *
 * Everything is resolved here, once: files named by certificate-authority,
 * client-certificate and client-key are read into memory (they reach
 * libcurl as sealed memory files, kube/transport/tls.h; nothing secret is
 * ever written to disk).
 * Tokens from tokenFile and exec plugins change over time, so they are only
 * described here and fetched by kube/config/cred.h.
 *
 * Errors name the file and the field: "kubeconfig /x/config:
 * users[name=dev].user.client-key-data: invalid base64 at byte 17".
 *
 * Subsystem config (src/kube/config/: kubeconfig, execcred, cred): where to
 * connect and who to be, resolved before any request is made. It is the
 * bottom of kube (only kube/ktime.h below it, and util/'s base64 and
 * clock): it reads files, the environment and plugins, never HTTP, so
 * kubectl's rules are tested and fuzzed without a server. The transport is its only user.
 */
#ifndef HR_KUBE_KUBECONFIG_H
#define HR_KUBE_KUBECONFIG_H

#include <stdbool.h>
#include <stddef.h>

#include "util/arena.h"
#include "util/err.h"

#define HR_KSA_DIR "/var/run/secrets/kubernetes.io/serviceaccount"

/* An exec credential plugin (client.authentication.k8s.io/v1 or v1beta1). */
typedef struct hr_kexec {
    const char *api_version;
    const char *command;
    const char *const *args; /* n_args entries */
    size_t n_args;
    const char *const *env_names; /* n_env entries each */
    const char *const *env_values;
    size_t n_env;
    bool provide_cluster_info;
    bool interactive_always;  /* interactiveMode: Always (we cannot) */
    const char *install_hint; /* NULL when absent */
} hr_kexec;

typedef struct hr_kubeconfig {
    hr_arena arena;      /* owns every string and blob below */
    const char *origin;  /* "kubeconfig /a:/b" or "in-cluster config" */
    const char *context; /* "" in-cluster */
    const char *cluster_name;
    const char *user_name;
    const char *ns; /* context namespace, "default" when unset */

    const char *server;          /* scheme://host[:port][/prefix], no trailing '/' */
    const char *tls_server_name; /* NULL: the server's host */
    const char *proxy_url;       /* NULL: libcurl's environment rules */
    bool insecure;               /* insecure-skip-tls-verify: true */
    const unsigned char *ca;     /* PEM; NULL: the system trust store */
    size_t ca_len;

    const unsigned char *cert; /* client certificate PEM, NULL when none */
    size_t cert_len;
    const unsigned char *key; /* client key PEM */
    size_t key_len;

    const char *token;               /* static bearer token, NULL when none */
    const char *token_file;          /* re-read periodically; NULL when none */
    const char *username, *password; /* basic auth (kept for old clusters) */
    const hr_kexec *exec;            /* NULL when none */
    bool in_cluster;

    /* Impersonation (the user's as, as-uid, as-groups, as-user-extra, or
     * --as, --as-uid, --as-group): sent on every request as Impersonate-User,
     * Impersonate-Uid, one Impersonate-Group per group and one
     * Impersonate-Extra-KEY per value (kube/transport/headers.h). Every
     * value is a valid header value (override.h, hr_kheader_value_ok): a kubeconfig
     * cannot add headers of its own. as_user NULL: no impersonation. */
    const char *as_user;
    const char *as_uid;                 /* NULL when none */
    const char *const *as_groups;       /* n_as_groups entries */
    size_t n_as_groups;                 /* */
    const char *const *as_extra_keys;   /* one entry per value: key, value */
    const char *const *as_extra_values; /* n_as_extra entries each */
    size_t n_as_extra;
} hr_kubeconfig;

/* kubectl's connection flags (clientcmd's overrides of the kubeconfig),
 * each NULL (false, 0) when not given; applied with kubectl's rules:
 *   cluster, user      these entries instead of the context's (an entry
 *                      that does not exist is an error);
 *   server             the cluster's server; with it no kubeconfig is
 *                      needed (no file, no current-context: the flags
 *                      alone, never in-cluster);
 *   tls_server_name    the name the certificate is checked against; given
 *                      a server, the file's tls-server-name is dropped;
 *   ca_file, insecure  either one replaces both of the file's
 *                      certificate-authority(-data) and
 *                      insecure-skip-tls-verify (both given: an error);
 *   token              the bearer token, instead of the user's token,
 *                      tokenFile, basic auth and exec plugin (a client
 *                      certificate stays, as in kubectl);
 *   cert_file, key_file the client certificate and key (files);
 *   as, as_uid, as_groups  impersonation, each replacing the user's as,
 *                      as-uid, as-groups; a uid or a group without a user
 *                      to impersonate is refused, as kubectl refuses it.
 * Paths are relative to the working directory. */
typedef struct hr_koverrides {
    const char *cluster, *user;
    const char *server, *tls_server_name, *ca_file;
    bool insecure;
    const char *token, *cert_file, *key_file;
    const char *as, *as_uid;
    const char *const *as_groups; /* n_as_groups entries */
    size_t n_as_groups;
} hr_koverrides;

typedef struct hr_kubeconfig_opts {
    const char *kubeconfig; /* --kubeconfig; NULL: the rules above */
    const char *context;    /* --context; NULL: current-context */
    hr_koverrides ov;       /* the other connection flags; {0}: none */
    /* For tests; NULL means the real thing. */
    const char *env_kubeconfig;      /* instead of getenv("KUBECONFIG"); "" = unset */
    const char *home;                /* instead of $HOME */
    const char *sa_dir;              /* instead of HR_KSA_DIR */
    const char *svc_host, *svc_port; /* instead of KUBERNETES_SERVICE_HOST/PORT */
    bool no_in_cluster;              /* never fall back to in-cluster */
} hr_kubeconfig_opts;

/* Find, merge and resolve. *out is freed with hr_kubeconfig_free. */
HR_MUST_CHECK hr_status hr_kubeconfig_load(const hr_kubeconfig_opts *o, hr_kubeconfig **out,
                                           hr_err *err);

/* Files named in the document are not read (blobs stay NULL): for the
 * fuzzer, which must not open whatever path it invents. */
#define HR_KUBECONFIG_NO_FILES 1u

/* Resolve from one in-memory document (the fuzz target's entry, and a way
 * to use a kubeconfig held in a Secret). Relative paths resolve against
 * base_dir (NULL: the working directory); origin names it in errors. */
HR_MUST_CHECK hr_status hr_kubeconfig_parse(const char *yaml, size_t len, const char *origin,
                                            const char *base_dir, const char *context,
                                            unsigned flags, hr_kubeconfig **out, hr_err *err);

/* An empty configuration with its arena (for the in-cluster one and the
 * flags alone); NULL when out of memory. */
hr_kubeconfig *hr_kubeconfig_new(void);

/* Clears secrets (key, tokens, password) before freeing. NULL is fine. */
void hr_kubeconfig_free(hr_kubeconfig *c);

#endif
