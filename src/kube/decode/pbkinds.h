/*
 * pbkinds.h — Node, Namespace, LimitRange and ResourceQuota in protobuf
 * into the same views node.h, limitrange.h and resourcequota.h give for
 * their JSON (pb.h says how the protobuf decoders work).
 */
#ifndef HR_KUBE_DECODE_PBKINDS_H
#define HR_KUBE_DECODE_PBKINDS_H

#include <stddef.h>
#include <stdint.h>

#include "kube/decode/limitrange.h"
#include "kube/decode/node.h"
#include "kube/decode/resourcequota.h"
#include "util/arena.h"
#include "util/err.h"

/* raw: the object's message (runtime.Unknown's raw, pbobj.h). */
HR_MUST_CHECK hr_status hr_pbdecode_node(const uint8_t *raw, size_t len, hr_arena *a, hr_knode *out,
                                         hr_err *err);
HR_MUST_CHECK hr_status hr_pbdecode_namespace(const uint8_t *raw, size_t len, hr_arena *a,
                                              hr_knamespace *out, hr_err *err);
HR_MUST_CHECK hr_status hr_pbdecode_limitrange(const uint8_t *raw, size_t len, hr_arena *a,
                                               hr_klimitrange *out, hr_err *err);
HR_MUST_CHECK hr_status hr_pbdecode_resourcequota(const uint8_t *raw, size_t len, hr_arena *a,
                                                  hr_kquota *out, hr_err *err);

#endif
