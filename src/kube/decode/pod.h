/*
 * pod.h — a Pod into the core's hr_pod, with the names and owner around it
 * (decode/decode.h says how every decoder works).
 */
#ifndef HR_KUBE_DECODE_POD_H
#define HR_KUBE_DECODE_POD_H

#include <stdbool.h>
#include <stddef.h>

#include "core/pod.h"
#include "kube/decode/common.h"
#include "util/arena.h"
#include "util/err.h"

/* The direct owner: the reference with controller: true, else the first. */
typedef struct hr_kowner {
    const char *kind;      /* NULL when the object has no owner */
    const char *api_group; /* group of apiVersion: "apps" for apps/v1, "" for v1 */
    const char *name;
    bool controller;
    const char *uid; /* metadata.uid of the owner, NULL when absent */
} hr_kowner;

typedef struct hr_kpod {
    hr_kmeta meta;
    const char *node_name; /* spec.nodeName, NULL when not bound */
    hr_kowner owner;
    bool deleting;                /* metadata.deletionTimestamp set */
    const char *const *ctr_names; /* parallel to pod.ctr (pod.n_ctr entries) */
    /* Set only by hr_decode_pod_undecodable: why hr_decode_pod refused the
     * object (its one-line message naming the field), and whether
     * spec.nodeName is there but cannot be read (then node_name is NULL and
     * the pod may be bound anywhere). NULL / false for a decoded pod. */
    const char *undecodable;
    bool node_unreadable;
    /* The core view. Context fields (ns_state, node_excluded, node_windows,
     * owner_excluded, in_backoff, limits) are left neutral as hr_pod_init()
     * sets them: they depend on other objects, the caller fills them. */
    hr_pod pod;
} hr_kpod;

/* The pod's group (design §2.10): out->pod.group from its labels, the
 * kube-headroom.dev/group-uniform annotation (uniform_ann, may be NULL)
 * and its controlling owner, copied into c's arena. Both decoders call it
 * once the metadata is read. */
HR_MUST_CHECK hr_status hr_kpod_group(const hr_kctx *c, const char *uniform_ann, hr_kpod *out);

/* design §4, foreign-writer: is entry (one of metadata.managedFields) a
 * resize by a field manager other than ours (HR_FIELD_MANAGER)? The pod's
 * creator owns limits.cpu through its create (subresource ""), which is
 * never another writer; only the resize subresource changes the limit of a
 * pod afterwards. manager/subresource: the entry's strings, len bytes. */
bool hr_kpod_foreign_entry(const char *manager, size_t manager_len, const char *subresource,
                           size_t subresource_len);

/* Is a pod-level memory of request req and limit lim (bytes, HR_NONE or
 * HR_UNBOUNDED) fixed: a limit, and a request equal to it or defaulted to
 * it (hr_pod.pod_mem_fixed)? One rule for both decoders. */
bool hr_kpod_mem_fixed(int64_t req, int64_t lim);

/* Does fields (an entry's fieldsV1) own spec.containers[name].resources
 * .limits.cpu, or initContainers[name]'s for a sidecar, of a container of
 * p the policy manages (hr_ctr_managed)? Whatever is malformed owns
 * nothing. */
bool hr_kpod_fields_own_limit(yyjson_val *fields, const hr_kpod *p);

HR_MUST_CHECK hr_status hr_decode_pod(yyjson_val *obj, hr_arena *a, hr_kpod *out, hr_err *err);
/* A pod as a CREATE admission request carries it: the same reading, but
 * metadata.name may be absent (generateName) and so may metadata.namespace
 * (the request names it); meta.name and meta.ns are then "". */
HR_MUST_CHECK hr_status hr_decode_pod_created(yyjson_val *obj, hr_arena *a, hr_kpod *out,
                                              hr_err *err);

/* What can still be read of a pod hr_decode_pod refused (design §15: it is
 * kept, never silently dropped): metadata.namespace, .name, .uid,
 * .resourceVersion and .deletionTimestamp, spec.nodeName and status.phase,
 * each when it has the right type. The core view has no containers and
 * pod.undecodable set; why (may be NULL) is copied as out->undecodable.
 * Never fails on a field (an unreadable string is ""); false only when the
 * arena is full. */
bool hr_decode_pod_undecodable(yyjson_val *obj, hr_arena *a, const char *why, hr_kpod *out);

/* The kubelet's verdict on a pending resize (pod condition PodResizePending),
 * design §7. */
typedef enum hr_resize_state {
    HR_RS_NONE = 0,
    HR_RS_DEFERRED,
    HR_RS_INFEASIBLE,
} hr_resize_state;

/* What the watch cache keeps of a pod beyond hr_kpod: read apart, so the
 * planner and the webhook, which share hr_decode_pod, do not pay for it. */
typedef struct hr_kpod_status {
    hr_resize_state resize; /* condition PodResizePending's reason */
    bool resizing;          /* condition PodResizeInProgress present */
    /* The kube-headroom.dev/status annotation, left in the document (valid
     * while it lives; NULL when absent or not a string). The cache keeps
     * only its fingerprint (write/status_note.h). */
    const char *status_note;
    size_t status_note_len;
} hr_kpod_status;

/* Never fails: whatever is malformed reads as absent. */
void hr_decode_pod_status(yyjson_val *obj, hr_kpod_status *out);

#endif
