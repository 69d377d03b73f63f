/*
 * pb.h — Kubernetes objects in their protobuf encoding
 * (application/vnd.kubernetes.protobuf) into the same views the JSON
 * decoders give (decode.h): the wire-format reader for exactly the fields
 * the cache needs.
 *
 * Why: the API server serializes protobuf at a fraction of JSON's CPU and
 * bytes (design §5 "Wire format"), and reading it is cheaper here too: fields are
 * length-prefixed, so everything not needed (managedFields, volumes,
 * probes, images, most of the status) is skipped by a pointer jump,
 * without a parser building a tree.
 *
 * How: pbwire.h reads tags, varints and lengths in place; pbobj.h opens
 * the envelopes (the "k8s\0" magic + runtime.Unknown of a body, the
 * length-prefixed WatchEvent of a watch stream, a List's items, a Status);
 * pbpod.h and pbkinds.h decode Pod, Node, Namespace, LimitRange and
 * ResourceQuota into hr_kpod (+ hr_kpod_status), hr_knode, hr_knamespace,
 * hr_klimitrange and hr_kquota, by the rules of pod.c, node.c,
 * limitrange.c and resourcequota.c, so a cache record is the same byte
 * for byte whichever encoding the object came in
 * (tests/e2e/e2e_protobuf_equal.sh checks it on the real API server).
 *
 * No object tree and no allocation per object: strings the view keeps
 * are copied into the caller's arena, as with JSON; the rest is read in
 * place. Unknown and unneeded fields are skipped. Bounded: every length
 * stays inside its parent, varints are at most 10 bytes without overflow,
 * nothing recurses beyond the fixed schema, at most 4096 containers.
 * Errors are values naming the object and the field, as decode.h's
 * ("pod team-a/web: spec.containers[0].resources.requests.cpu: ...";
 * "malformed protobuf" for broken wire format).
 *
 * Field numbers are Kubernetes' (k8s.io/api core/v1, apimachinery
 * meta/v1 and runtime generated.proto); each file lists the ones it reads.
 * This header declares nothing itself.
 */
#ifndef HR_KUBE_DECODE_PB_H
#define HR_KUBE_DECODE_PB_H

#include "kube/decode/pbkinds.h"
#include "kube/decode/pbobj.h"
#include "kube/decode/pbpod.h"

#endif
