/*
 * incluster.c — the configuration of a pod without a kubeconfig: the
 * service account's token (a file, re-read: kube/config/cred.h), CA and
 * namespace, and KUBERNETES_SERVICE_HOST/PORT (kubeconfig.h's rules).
 */
#include "kube/config/incluster.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "kube/config/kubeconfig.h"
#include "util/file.h"

#define MAX_FILE_BYTES ((size_t)16 << 20) /* a CA bundle */

static bool file_exists(const char *p)
{
    struct stat sb;
    return stat(p, &sb) == 0 && !S_ISDIR(sb.st_mode);
}

hr_status hr_kincluster(const char *sa_dir, const char *host, const char *port, hr_kubeconfig **out,
                        hr_err *err)
{
    const char *dir = sa_dir ? sa_dir : HR_KSA_DIR;
    hr_kubeconfig *c = hr_kubeconfig_new();
    if (!c)
        return hr_err_set(err, HR_E_NOMEM, "in-cluster config: out of memory");
    hr_arena *a = &c->arena;
    c->in_cluster = true;
    c->origin = "in-cluster config";
    c->context = c->cluster_name = c->user_name = "";
    size_t n = strlen(dir) + 32;
    char *tok = hr_arena_alloc(a, n), *ca = hr_arena_alloc(a, n), *nsf = hr_arena_alloc(a, n);
    size_t sl = strlen(host) + strlen(port) + 16;
    char *server = hr_arena_alloc(a, sl);
    hr_status st = HR_OK;
    if (!tok || !ca || !nsf || !server) {
        st = hr_err_set(err, HR_E_NOMEM, "in-cluster config: out of memory");
        goto out;
    }
    snprintf(tok, n, "%s/token", dir);
    snprintf(ca, n, "%s/ca.crt", dir);
    snprintf(nsf, n, "%s/namespace", dir);
    /* An IPv6 service address needs brackets in a URL. */
    bool v6 = strchr(host, ':') != NULL;
    snprintf(server, sl, "https://%s%s%s:%s", v6 ? "[" : "", host, v6 ? "]" : "", port);
    c->server = server;
    if (!file_exists(tok)) {
        st = hr_err_set(err, HR_E_IO, "in-cluster config: %s: no service-account token", tok);
        goto out;
    }
    c->token_file = tok;
    char *cab;
    size_t cal;
    hr_err e;
    if (hr_file_slurp(ca, MAX_FILE_BYTES, 1, &cab, &cal, &e) != HR_OK) {
        st = hr_err_set(err, e.code, "in-cluster config: service account: ca.crt: %s", e.msg);
        goto out;
    }
    unsigned char *cad = cal ? hr_arena_alloc(a, cal + 1) : NULL;
    if (cad) {
        memcpy(cad, cab, cal);
        cad[cal] = '\0';
    }
    free(cab);
    if (!cad) {
        st = cal ? hr_err_set(err, HR_E_NOMEM, "in-cluster config: out of memory")
                 : hr_err_set(err, HR_E_INPUT, "in-cluster config: %s is empty", ca);
        goto out;
    }
    c->ca = cad;
    c->ca_len = cal;
    c->ns = "default";
    char *nsb;
    size_t nsl;
    if (file_exists(nsf) && hr_file_slurp(nsf, 1024, 1, &nsb, &nsl, &e) == HR_OK) {
        while (nsl && (nsb[nsl - 1] == '\n' || nsb[nsl - 1] == ' '))
            nsl--;
        if (nsl && !(c->ns = hr_arena_strndup(a, nsb, nsl)))
            st = hr_err_set(err, HR_E_NOMEM, "in-cluster config: out of memory");
        free(nsb);
    }
out:
    if (st) {
        hr_kubeconfig_free(c);
        return st;
    }
    *out = c;
    return HR_OK;
}
