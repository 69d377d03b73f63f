/*
 * tenant.h — a namespace's TenantFair weight (design §2.9), read from its
 * kube-headroom.dev/weight label.
 *
 * The weight says how many equal parts of a node's slack the namespace's
 * pods share among them, beside the other namespaces with managed pods on
 * that node. One parser, so the cache (which keeps it parsed), the offline
 * planner and the webhook read a label the same way. Pure.
 */
#ifndef HR_CORE_TENANT_H
#define HR_CORE_TENANT_H

#include <stdbool.h>
#include <stdint.h>

#include "selector.h"

/* The largest weight a label may give: beside weight 1 it already takes all
 * but a millionth of the slack. */
#define HR_TENANT_WEIGHT_MAX 1000000u

/* The weight a value of the label gives: a decimal integer from 1 to
 * HR_TENANT_WEIGHT_MAX, digits only (no sign, no space, no exponent).
 * NULL (no label) is 1. Anything else is invalid: 1, fail closed — never
 * more than the default — and *invalid (may be NULL) is set so that
 * explain, node and the controller's log can say so. */
uint32_t hr_tenant_weight_parse(const char *value, bool *invalid);

/* hr_tenant_weight_parse of the label in ns_labels (NULL: no labels). */
uint32_t hr_tenant_weight(const hr_labels *ns_labels, bool *invalid);

/* The tenant of namespace ns (design §2.9): the value of the label key
 * (spec.tenantLabel; NULL reads as HR_LABEL_TENANT) in ns_labels, or, when
 * the label is absent or empty, the namespace itself. *by_label (may be
 * NULL) says which: a namespace named "acme" and the tenant "acme" of a
 * label are different tenants. The result points into ns_labels or is ns. */
const char *hr_tenant_of(const char *key, const char *ns, const hr_labels *ns_labels,
                         bool *by_label);

/* Is key a Kubernetes label key: an optional DNS-subdomain prefix (at most
 * 253 characters) and "/", then a name of 1 to 63 characters of
 * [A-Za-z0-9-_.] that begins and ends with a letter or digit? */
bool hr_label_key_valid(const char *key);

#endif
