/*
 * execcred.h — exec credential plugins (client.authentication.k8s.io v1 and
 * v1beta1): run the command a kubeconfig names and read the ExecCredential
 * it prints.
 *
 * This is how managed clusters hand out short-lived credentials (EKS, GKE,
 * AKS, OIDC helpers). The plugin gets the process environment plus the
 * kubeconfig's env entries and KUBERNETES_EXEC_INFO, no stdin (we are never
 * interactive), and our stderr (its messages are for the user); its stdout
 * is bounded and its run time limited, since a hung helper must not hang
 * the controller.
 */
#ifndef HR_KUBE_EXECCRED_H
#define HR_KUBE_EXECCRED_H

#include <stddef.h>
#include <time.h>

#include "kube/config/kubeconfig.h"
#include "kube/ktime.h"
#include "util/err.h"

typedef struct hr_kexec_result {
    char *token;         /* NULL when the plugin returned a certificate */
    unsigned char *cert; /* PEM, NUL-terminated; NULL with a token */
    size_t cert_len;
    unsigned char *key;
    size_t key_len;
    time_t expiry; /* 0: no expirationTimestamp (valid until a 401) */
} hr_kexec_result;

/* Run e (cfg supplies the cluster for provideClusterInfo). timeout_ms <= 0:
 * 60 s. The deadline covers the whole run, exit included: past it the
 * plugin's process group is killed, the plugin reaped, and an error
 * returned. On success *out owns fresh memory (hr_kexec_result_free). */
HR_MUST_CHECK hr_status hr_kexec_run(const hr_kubeconfig *cfg, const hr_kexec *e, long timeout_ms,
                                     hr_kexec_result *out, hr_err *err);

/* Parse a plugin's stdout; api_version is the one the kubeconfig asked
 * for, which the answer must repeat. */
HR_MUST_CHECK hr_status hr_kexec_parse(const char *json, size_t len, const char *api_version,
                                       hr_kexec_result *out, hr_err *err);

/* Frees and wipes. */
void hr_kexec_result_free(hr_kexec_result *r);

#endif
