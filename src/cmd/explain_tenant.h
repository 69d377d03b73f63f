/*
 * explain_tenant.h — `headroom explain`'s tenant view: the figures of the
 * pod's status annotation, for a reader who may get and list pods in the
 * pod's namespace and nothing else (the chart's <release>-tenant
 * ClusterRole). Chosen by --from-annotation, or when the cluster-wide read
 * (the pod's Node, every pod on it) is refused with 403.
 */
#ifndef HR_CMD_EXPLAIN_TENANT_H
#define HR_CMD_EXPLAIN_TENANT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <yyjson.h>

#include "cmd/explain_json.h"
#include "kube/decode/pod.h"
#include "kube/transport/client.h"
#include "util/err.h"

/* A pod of the explained pod's namespace on its node. */
typedef struct hr_explain_neighbour {
    char name[254];
    int64_t booked;
} hr_explain_neighbour;

typedef struct hr_explain_neighbours {
    const char *ns, *node;
    hr_explain_neighbour *v; /* malloc'd: the caller frees v */
    size_t n, cap;
} hr_explain_neighbours;

/* An item of a pod list into nb when it is a pod of nb->ns bound to
 * nb->node (a finished one books nothing and is skipped): its name and the
 * CPU it books (HR_NONE when it cannot be decoded). An hr_live_each
 * callback; HR_E_NOMEM when nb cannot grow. */
HR_MUST_CHECK hr_status hr_explain_add_neighbour(void *ud, yyjson_val *item, hr_err *err);

/* Whether k may not read node nor the pods bound to it (403 Forbidden on
 * either); node is a valid DNS-1123 subdomain. */
bool hr_explain_cluster_forbidden(hr_kclient *k, const char *node);

/* Print the tenant view of pod ns/pod on node (kp: the pod decoded, or
 * NULL; status_ann: its annotation or NULL; resize_cond: the kubelet's
 * PodResizePending line or NULL; why: the reason for this view, shown).
 * With k it lists ns's pods on node into nb; without (a dump) nb is
 * already filled. HR_EXIT_OK, or HR_EXIT_INPUT with a message on stderr. */
int hr_explain_tenant(hr_kclient *k, const char *ns, const char *pod, const char *node,
                      const hr_kpod *kp, const char *status_ann, const char *resize_cond,
                      hr_explain_neighbours *nb, const char *why, const hr_output *o);

#endif
