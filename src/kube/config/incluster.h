/*
 * incluster.h — the configuration of a pod without a kubeconfig
 * (kubeconfig.h's last rule): the service account's token, CA and
 * namespace, and KUBERNETES_SERVICE_HOST/PORT.
 */
#ifndef HR_KUBE_INCLUSTER_H
#define HR_KUBE_INCLUSTER_H

#include "kube/config/kubeconfig.h"
#include "util/err.h"

/* The pod's own configuration from sa_dir (NULL: HR_KSA_DIR) and the
 * service's host and port. */
HR_MUST_CHECK hr_status hr_kincluster(const char *sa_dir, const char *host, const char *port,
                                      hr_kubeconfig **out, hr_err *err);

#endif
