/*
 * explain_json.h — `headroom explain -o json|yaml`: the figures as one object
 * (docs/cli.md lists its keys), for the cluster-wide view (here) and the
 * tenant view (explain_tenant.h).
 */
#ifndef HR_CMD_EXPLAIN_JSON_H
#define HR_CMD_EXPLAIN_JSON_H

#include <stddef.h>
#include <stdint.h>
#include <yyjson.h>

#include "cmd/output.h"
#include "controller/nodesnap.h"
#include "controller/reconcile.h"

/* o[key] = "<milli>m"; nothing when milli is HR_NONE. */
void hr_explain_jq(yyjson_mut_doc *d, yyjson_mut_val *o, const char *key, int64_t milli);
/* o["factor"] = "2.13": a x1000 factor, two decimals, half up. */
void hr_explain_jfactor(yyjson_mut_doc *d, yyjson_mut_val *o, int64_t factor_milli);

/* Pod me of s's node as explain prints it: the node's booking (every pod by
 * name), the pod's share, floor, burst, caps, the binding cap in the status
 * annotation's words, the per-container targets, the write. NULL when d
 * cannot grow. */
yyjson_mut_val *hr_explain_cluster_json(yyjson_mut_doc *d, const hr_nodesnap *s,
                                        const hr_reconcile *r, size_t me, const char *status_ann,
                                        const char *resize_cond);

/* root printed on stdout as fmt says (JSON indented two spaces, or YAML by
 * plan/yaml.h, the writer of every -o yaml); root NULL: out of memory. HR_EXIT_OK or
 * HR_EXIT_INPUT (message on stderr). */
int hr_explain_emit(yyjson_mut_doc *d, yyjson_mut_val *root, const hr_output *o);
/* The object of a pod not bound to a node yet: its name, "node": null. */
int hr_explain_emit_unbound(const char *ns, const char *pod, const hr_output *o);

#endif
