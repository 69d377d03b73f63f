/*
 * node.h — a Node into the core's hr_node (allocatable, pressures), and a
 * Namespace (its metadata: labels decide selection).
 */
#ifndef HR_KUBE_DECODE_NODE_H
#define HR_KUBE_DECODE_NODE_H

#include <stdbool.h>

#include "core/gates.h"
#include "kube/decode/common.h"
#include "util/arena.h"
#include "util/err.h"

typedef struct hr_knode {
    hr_kmeta meta;
    hr_node node;         /* allocatable (0 when absent), known, pressures */
    bool has_allocatable; /* status.allocatable.cpu was there */
    bool ready;           /* condition Ready is True */
    bool windows;         /* label kubernetes.io/os = windows */
    bool pod_resize;      /* status.declaredFeatures names HR_FEATURE_POD_RESIZE:
                             its kubelet resizes pod-level resources (§2.13) */
} hr_knode;

/* The node feature the API server requires of a pod's node before it
 * accepts a resize of the pod's pod-level resources (KEP-5419, Node
 * Declared Features). */
#define HR_FEATURE_POD_RESIZE "InPlacePodLevelResourcesVerticalScaling"

typedef struct hr_knamespace {
    hr_kmeta meta;
} hr_knamespace;

HR_MUST_CHECK hr_status hr_decode_node(yyjson_val *obj, hr_arena *a, hr_knode *out, hr_err *err);
HR_MUST_CHECK hr_status hr_decode_namespace(yyjson_val *obj, hr_arena *a, hr_knamespace *out,
                                            hr_err *err);

#endif
