/*
 * kname.h — the Kubernetes object-name rules (DNS-1123), checked before a
 * name a user typed goes into a request path or a field selector: a name
 * with a '/', '?', '%' or '&' in it would otherwise address another object
 * or another query (`explain payments/web` once requested
 * /namespaces/default/pods/payments/web).
 */
#ifndef HR_KUBE_KNAME_H
#define HR_KUBE_KNAME_H

#include <stdbool.h>

/* A DNS-1123 label (namespaces): 1–63 of [a-z0-9-], starting and ending
 * with [a-z0-9]. */
bool hr_kname_label(const char *s);

/* A DNS-1123 subdomain (pods, nodes): 1–253 characters, dot-separated
 * labels of [a-z0-9-] each starting and ending with [a-z0-9]. */
bool hr_kname_subdomain(const char *s);

#endif
