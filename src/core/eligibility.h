/*
 * eligibility.h — is a pod managed, and if not, why (design §4).
 *
 * Every rule yields one reason keyword; the first rule that fails wins, in
 * the order design §4 lists them, so `headroom explain` and `headroom plan`
 * give one stable answer. Ineligible pods still book slack.
 */
#ifndef HR_CORE_ELIGIBILITY_H
#define HR_CORE_ELIGIBILITY_H

#include "config.h"
#include "pod.h"

typedef enum hr_reason {
    HR_MANAGED = 0,
    HR_R_NOT_BOUND,
    HR_R_TERMINAL,
    HR_R_NS_NOT_SELECTED,
    HR_R_NS_EXCLUDED,
    HR_R_OPTED_OUT,
    HR_R_UNBOUNDED_QUANTITY, /* a memory quantity or CPU limit does not read */
    HR_R_BEST_EFFORT,
    HR_R_GUARANTEED,
    HR_R_NO_CPU_REQUEST,
    HR_R_RESTART_POLICY,
    HR_R_MIRROR,
    HR_R_WINDOWS,
    HR_R_POD_RESOURCES,
    HR_R_NODE_EXCLUDED,
    HR_R_OWNER_EXCLUDED,
    HR_R_GROUP_TOO_LARGE, /* its group has more members than spec.maxGroupSize */
    HR_R_NO_STATUS_RESOURCES,
    HR_R_BACKOFF,
    HR_R_BAD_MAX_CPU,
    HR_R_UNDECODABLE,    /* rule 0: the pod object could not be decoded */
    HR_R_FOREIGN_WRITER, /* another field manager writes a limits.cpu */
    HR_R_COUNT_
} hr_reason;

/* The keyword printed for a reason: "managed", "namespace-not-selected"… */
const char *hr_reason_str(hr_reason r);

/* design §4 applied to one pod (its context fields included). */
hr_reason hr_pod_eligibility(const hr_pod *p);

/* The same rules for a pod being created (design §8: the webhook's birth
 * limits). Those about a pod's life on a node — bound, terminal, Windows
 * (no in-place resize there; a birth limit needs none), node excluded,
 * kubelet resize status, back-off — do not apply, and the fields they read
 * are ignored. Every other rule, RestartContainer included, is the
 * controller's, in its order, with its reason. */
hr_reason hr_pod_birth_eligibility(const hr_pod *p);

/* Is ns out whatever its labels: in excludedNamespaces, or the
 * controller's own namespace (own_ns may be NULL)? */
bool hr_namespace_excluded(const hr_config *c, const char *ns, const char *own_ns);

/* Namespace state under a config: excluded (the excludedNamespaces list or
 * the controller's own namespace, own_ns may be NULL) wins over selected. */
hr_ns_state hr_namespace_state(const hr_config *c, const char *ns, const hr_labels *labels,
                               const char *own_ns);

/* Does the direct owner (kind, apiVersion's group, name) match
 * excludedOwners? api_group is "" for the core group. */
bool hr_owner_excluded(const hr_config *c, const char *kind, const char *api_group,
                       const char *name);

#endif
