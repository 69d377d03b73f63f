/*
 * decode.h — Kubernetes objects (as yyjson values) into the core's views.
 *
 * One decoder per kind the planner and the watch cache need: Pod, Node,
 * Namespace, LimitRange, ResourceQuota, HeadroomConfig (spec and status),
 * and label selectors; plus the few readings that never fail which the
 * watch cache needs besides them (an object's key and generation:
 * common.h; a pod's resize verdict and status annotation: pod.h), so the
 * cache reads no JSON of its own. Each takes a
 * yyjson_val* holding one object and an arena; everything it returns
 * (strings, label pairs, container arrays) is copied into that arena, so the
 * yyjson document can be freed right after decoding — the cache keeps the
 * compact result, never the JSON.
 *
 * Only the fields the policy, eligibility, gates and `explain` need are
 * extracted (design §3, §4, §6); everything else, managedFields included, is
 * skipped without being looked at.
 *
 * Errors are values: HR_E_INPUT with one line naming the object and the
 * field, e.g.
 *   pod team-a/web-1: spec.containers[1].resources.requests.cpu: unknown suffix "1x"
 * or HR_E_NOMEM when the arena cannot grow. On error *out is unspecified and
 * whatever was taken from the arena stays there (freed with it).
 *
 * Subsystem decode (src/kube/decode/): one file per kind, each with its
 * header (pod, node — Node and Namespace —, limitrange, config, cfgstatus,
 * resourcequota; statusnote, a pod's status annotation read back for
 * `explain`), on common.{c,h} (metadata, selectors and the typed field
 * access they are written with). It depends on nothing else in kube: it
 * reads JSON already received, never the network, so the planner reading a
 * file, the watch cache and the fuzzers all use it alike. This header
 * declares nothing itself; it gathers the decoders for callers that use
 * several.
 */
#ifndef HR_KUBE_DECODE_H
#define HR_KUBE_DECODE_H

#include "kube/decode/cfgspec.h"
#include "kube/decode/cfgstatus.h"
#include "kube/decode/common.h"
#include "kube/decode/limitrange.h"
#include "kube/decode/node.h"
#include "kube/decode/pod.h"
#include "kube/decode/resourcequota.h"
#include "kube/decode/statusnote.h"
#include "kube/decode/vpa.h"

#endif
