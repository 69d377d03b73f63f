/*
 * pbpod.h — a Pod in protobuf into the hr_kpod and hr_kpod_status that
 * pod.h's decoders give for its JSON (pb.h says how the protobuf decoders
 * work).
 */
#ifndef HR_KUBE_DECODE_PBPOD_H
#define HR_KUBE_DECODE_PBPOD_H

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

#endif
