/*
 * cred.h — the credentials a request carries right now.
 *
 * Some credentials never change (a client certificate from the kubeconfig,
 * a static token); others do: a token file is rotated by the kubelet
 * (in-cluster tokens live about an hour), an exec plugin's token expires.
 * This keeps the current ones, refreshes them when they are due (token
 * file: every 60 s; exec: at expirationTimestamp) and after a 401 — a 401
 * with credentials that were already replaced triggers nothing, so a burst
 * of failing requests runs the plugin once, not once per request.
 *
 * Thread-safe: one mutex, held while a refresh runs, so concurrent
 * requests wait for one plugin run instead of starting several.
 *
 * A client certificate and its key reach the transport as the paths of
 * sealed memory files (util/memfile.h: libcurl 7.88 with GnuTLS takes them
 * only by file name, kube/transport/tls.h), never as files on disk. Each
 * file has one owner, which closes it: the kubeconfig's certificate and key
 * are hr_kcred's, open from hr_kcred_init to hr_kcred_destroy (they never
 * change); an exec plugin's are the snapshot's, written from the plugin's
 * current answer by hr_kcred_get and closed by hr_kcred_snap_free, so a
 * refresh by another thread never closes a file a request still uses. The
 * plugin's files are spelled with the credential generation: one path
 * string never names two different certificates, so libcurl, which matches
 * connections and TLS sessions by path, never reuses one made with a
 * certificate the plugin has since replaced.
 */
#ifndef HR_KUBE_CRED_H
#define HR_KUBE_CRED_H

#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>
#include <time.h>

#include "kube/config/execcred.h"
#include "kube/config/kubeconfig.h"
#include "util/err.h"
#include "util/memfile.h"

#define HR_KCRED_FILE_REREAD_S 60

typedef struct hr_kcred {
    pthread_mutex_t mu;
    const hr_kubeconfig *cfg; /* borrowed; outlives this */
    hr_memfile cert_file;     /* cfg's client certificate; closed when it has none */
    hr_memfile key_file;      /* ... and its key */
    long exec_timeout_ms;
    int file_reread_s;    /* HR_KCRED_FILE_REREAD_S; tests shorten it */
    char *file_token;     /* last good token from cfg->token_file */
    int64_t file_read_ns; /* when it was read (monotonic); 0: never */
    hr_kexec_result ex;   /* last plugin answer */
    bool ex_valid;
    uint64_t gen;                        /* bumped whenever the credentials change */
    unsigned long exec_runs, file_reads; /* for tests and metrics */
} hr_kcred;

/* What one request uses: its own copies of whatever may change, so a
 * refresh by another thread cannot pull them away mid-request (the
 * kubeconfig's certificate paths are hr_kcred's: they never change). */
typedef struct hr_kcred_snap {
    char *authorization;   /* "Bearer …" or "Basic …", NULL: none */
    const char *cert_path; /* client certificate PEM (a memory file), NULL: none */
    const char *key_path;  /* its key, the same way */
    hr_memfile exec_cert;  /* an exec plugin's certificate: this snapshot's own */
    hr_memfile exec_key;
    uint64_t gen;
    bool refreshable; /* a 401 may be cured by hr_kcred_unauthorized */
} hr_kcred_snap;

/* Also opens cfg's client certificate and key as memory files; fails on a
 * mutex or a memory file that cannot be made (err says which). */
HR_MUST_CHECK hr_status hr_kcred_init(hr_kcred *c, const hr_kubeconfig *cfg, hr_err *err);
void hr_kcred_destroy(hr_kcred *c);

HR_MUST_CHECK hr_status hr_kcred_get(hr_kcred *c, hr_kcred_snap *s, hr_err *err);
void hr_kcred_snap_free(hr_kcred_snap *s);

/* A request made with credentials of generation gen got 401. Returns true
 * when fresh credentials were fetched (or were already newer), i.e. a
 * retry is worth it. */
bool hr_kcred_unauthorized(hr_kcred *c, uint64_t gen);

#endif
