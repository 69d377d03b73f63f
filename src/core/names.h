/*
 * names.h — the names users put in manifests and dashboards (design §1).
 * They are compatibility surface: never change one.
 */
#ifndef HR_CORE_NAMES_H
#define HR_CORE_NAMES_H

#define HR_GROUP "kube-headroom.dev"
#define HR_VERSION "v1alpha1"
#define HR_CONFIG_KIND "HeadroomConfig"
#define HR_CONFIG_NAME "cluster"
#define HR_LABEL_MODE HR_GROUP "/mode"
#define HR_MODE_MANAGED "managed"
#define HR_MODE_UNMANAGED "unmanaged"
#define HR_ANN_MAX_CPU HR_GROUP "/max-cpu"
#define HR_ANN_STATUS HR_GROUP "/status"
#define HR_FIELD_MANAGER "headroom"
#define HR_POLICY_NAME "proportional-v1"
#define HR_POLICY_NAME_TENANT_FAIR "tenantfair-v1"
#define HR_LABEL_WEIGHT HR_GROUP "/weight" /* on a namespace: its TenantFair weight */
/* spec.tenantLabel's default: the namespace label naming its tenant (§2.9). */
#define HR_LABEL_TENANT HR_GROUP "/tenant"
/* On a pod (label or annotation), "true": one ceiling for its group (§2.10). */
#define HR_LABEL_GROUP_UNIFORM HR_GROUP "/group-uniform"
/* On a pod (label): its group, in place of its controlling owner (§2.10). */
#define HR_LABEL_GROUP_NAME HR_GROUP "/group"
/* On a pod (label or annotation) or a namespace (label), "true": the pod
 * keeps its birth limit until Ready, within spec.startupGrace (§2.12). */
#define HR_LABEL_GRACE HR_GROUP "/startup-grace"
/* The action of every Event the controller posts (§9.2): the Go version's word. */
#define HR_EVENT_ACTION "Resizing"
/* The leader election Lease, in the controller's namespace: the chart's Role names it
 * (resourceNames), so another name would be refused. */
#define HR_LEASE_NAME "kube-headroom"

#endif
