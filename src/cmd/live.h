/*
 * live.h — one-shot reads of a live cluster for the commands that are not
 * the daemon (`explain`, `node`, `plan` without -f, `preflight`).
 *
 * They read through the same decoders and the same cache the controller
 * uses (list pages handed to the cache's sinks), so what they print is
 * what the controller would compute — not a second implementation.
 */
#ifndef HR_CMD_LIVE_H
#define HR_CMD_LIVE_H

#include <stdbool.h>
#include <yyjson.h>

#include "cache/cache.h"
#include "kube/transport/client.h"
#include "util/buf.h"
#include "util/err.h"

/* Connect like kubectl (conn: kubeconfig, context and the other
 * connection flags, cmd/conn.h; timeout_ms per request, 0 for the
 * client's default). */
HR_MUST_CHECK hr_status hr_live_client(const hr_kclient_opts *conn, long timeout_ms,
                                       hr_kclient **out, hr_err *err);

/* Fill a cache with nodes, namespaces, LimitRanges, the HeadroomConfig,
 * ResourceQuotas, VerticalPodAutoscalers (when their CRD is served) and
 * the pods — only those bound to `node` when it is not NULL. */
HR_MUST_CHECK hr_status hr_live_load(hr_kclient *k, hr_cache *c, const char *node, hr_err *err);

/* The same objects as one kubectl-style List document (for the planner). */
HR_MUST_CHECK hr_status hr_live_dump(hr_kclient *k, const char *node, hr_buf *out, hr_err *err);

/* The objects of a kubectl-style List (`kubectl get nodes,pods,... -o
 * json`, root is the document's root) into the cache, each through its
 * kind's sink as if it had been listed; items of other kinds are skipped. */
HR_MUST_CHECK hr_status hr_live_load_list(hr_cache *c, yyjson_val *root, hr_err *err);

/* One kind, whole cluster, into the cache (the HeadroomConfig may be
 * missing: its CRD not installed reads as no config). */
HR_MUST_CHECK hr_status hr_live_load_kind(hr_kclient *k, hr_cache *c, hr_ckind kind, hr_err *err);

/* Every item of a list, page by page, never all in memory. optional: a 404
 * (the API is not installed) is an empty list. */
HR_MUST_CHECK hr_status hr_live_each(hr_kclient *k, const char *path, const char *query,
                                     bool optional,
                                     hr_status (*fn)(void *ud, yyjson_val *item, hr_err *err),
                                     void *ud, hr_err *err);

/* GET one object as JSON (e.g. a pod, for its annotations and conditions). */
HR_MUST_CHECK hr_status hr_live_get(hr_kclient *k, const char *path, hr_buf *out, hr_err *err);

/* Does the API server resize pod-level resources (design §2.13)? From its
 * /version (hr_kversion_pod_resize); *version (may be NULL, 32 bytes)
 * receives "major.minor". A failure is HR_OK with *on false and err set
 * (fail closed: pod-level pods stay unmanaged) — the one rule for `run`,
 * `explain` and `plan`. */
void hr_live_server_pod_resize(hr_kclient *k, bool *on, char *version, hr_err *err);

#endif
