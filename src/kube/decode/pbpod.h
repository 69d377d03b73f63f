/*
 * pbpod.h — a Pod in protobuf into the hr_kpod and hr_kpod_status that
 * pod.h's decoders give for its JSON (pb.h says how the protobuf decoders
 * work).
 */
#ifndef HR_KUBE_DECODE_PBPOD_H
#define HR_KUBE_DECODE_PBPOD_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "kube/decode/pod.h"
#include "util/arena.h"
#include "util/err.h"

/* raw: a Pod message (runtime.Unknown's raw, pbobj.h). ps (may be NULL)
 * receives what hr_decode_pod_status reads of the JSON: the resize
 * conditions and the status annotation, left in raw (valid while it
 * lives). */
HR_MUST_CHECK hr_status hr_pbdecode_pod(const uint8_t *raw, size_t len, hr_arena *a, hr_kpod *out,
                                        hr_kpod_status *ps, hr_err *err);

/* What hr_decode_pod_undecodable reads of the JSON, from the protobuf of
 * a pod hr_pbdecode_pod refused: metadata.namespace, .name, .uid,
 * .resourceVersion and .deletionTimestamp, spec.nodeName (a spec that
 * cannot be walked: node_unreadable) and status.phase. False only when
 * the arena is full. */
bool hr_pbdecode_pod_undecodable(const uint8_t *raw, size_t len, hr_arena *a, const char *why,
                                 hr_kpod *out);

#endif
