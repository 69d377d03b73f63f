/*
 * admission.h — the mutating admission review for pods (design §8), as a pure
 * function: the bytes of an AdmissionReview v1 in, the bytes of the answer
 * out. No I/O, no clock, no global state, so it can be unit-tested and
 * fuzzed on its own and the HTTP server stays a thin shell around it.
 *
 * What it does: on pods CREATE, for each app container and sidecar that
 * has a CPU request and no CPU limit, add limits.cpu = request ×
 * webhook.initialMultiplier, capped by maxMultiplier and by the pod's
 * kube-headroom.dev/max-cpu annotation (a budget for the whole pod, shared
 * pro-rata), floored at the request. The answer carries a base64 JSONPatch
 * that only adds what is missing.
 *
 * It leaves the pod alone (allowed, no patch) when: the webhook is disabled
 * in the config; the operation is not a pods CREATE; the namespace is not
 * managed (checked when the caller can tell the namespace's labels,
 * otherwise the registration's namespaceSelector is trusted and only the
 * excluded names are checked); the pod fails the controller's eligibility
 * (design §4, as it applies to a pod not yet on a node: opt-out by the
 * kube-headroom.dev/mode label or annotation, BestEffort or Guaranteed, a
 * CPU resizePolicy of RestartContainer, no CPU request, a mirror pod,
 * pod-level resources, an excluded owner, a max-cpu annotation that is not
 * a quantity); a VerticalPodAutoscaler writes the CPU limit of a container
 * of it that would get one (design §4, foreign-writer: checked when the
 * caller can tell the namespace's VPAs, and only for a pod otherwise due a
 * patch); the patch would change its QoS class; or anything in the object
 * cannot be read (a review we cannot decide must never block a pod). Those decisions and the arithmetic are the core's
 * (core/admission.h); this is the JSON around them.
 *
 * Dry-run (config dryRun, which is also what "no HeadroomConfig" means)
 * changes nothing: the patch is computed and returned in result.patch for
 * the log, but the answer carries none.
 *
 * Only an envelope that is not an AdmissionReview v1 with a request.uid is
 * refused: HTTP 400 with a one-line message (the API server then applies
 * failurePolicy: Ignore).
 */
#ifndef HR_WEBHOOK_ADMISSION_H
#define HR_WEBHOOK_ADMISSION_H

#include <stdbool.h>
#include <stddef.h>

#include "core/config.h"
#include "core/eligibility.h"
#include "core/pod.h"
#include "core/selector.h"
#include "core/vpa.h"
#include "util/arena.h"
#include "util/buf.h"
#include "util/err.h"

/* What the caller knows about a namespace (from the cache). Returns false
 * when it does not know it; labels and bounds are then ignored. Anything
 * returned may be allocated in `a` (freed when the review is done). */
typedef bool (*hr_wh_ns_lookup_fn)(void *ud, const char *ns, hr_arena *a, hr_labels *labels,
                                   hr_limit_bounds *bounds);

/* Design §2.10: the value in force of the group of key (the smallest
 * current limit / request among its cached members with a limit), as the
 * fraction *num / *den. false when the group has no such member (or the
 * caller cannot tell). */
typedef bool (*hr_wh_group_lookup_fn)(void *ud, const char *key, int64_t *num, int64_t *den);

/* What the caller knows about a node (from the cache): its labels, for a
 * pod created with spec.nodeName already set. Returns false when it does
 * not know the node; anything returned may be allocated in `a`. */
typedef bool (*hr_wh_node_lookup_fn)(void *ud, const char *node, hr_arena *a, hr_labels *labels);

/* Design §8: the room the namespace's limits.cpu ResourceQuota leaves for a
 * pod being created (hr_quota_birth_room); HR_NONE when none bounds it or
 * the caller cannot tell. */
typedef int64_t (*hr_wh_quota_room_fn)(void *ud, const char *ns);

/* Design §4, foreign-writer: the writer name ("VerticalPodAutoscaler
 * NS/NAME", copied into a) of the first VPA of namespace ns that writes
 * the CPU limit of a container of pod the policy manages (hr_vpa_writes_pod;
 * owner: the pod's direct owner and pod-template-hash label, ctr_names[i]:
 * container i's name). NULL: none, or the caller cannot tell. */
typedef const char *(*hr_wh_vpa_writer_fn)(void *ud, const char *ns, const hr_vpa_owner *owner,
                                           const hr_pod *pod, const char *const *ctr_names,
                                           hr_arena *a);

typedef struct hr_wh_env {
    const hr_config *cfg;         /* required: a snapshot for this review */
    const char *own_ns;           /* the controller's namespace, or NULL */
    hr_wh_ns_lookup_fn ns_lookup; /* optional */
    void *ns_ud;
    /* optional: a group member's birth limit is its group's value in force
     * (request × that ratio, within its caps) instead of request ×
     * initialMultiplier, when the group has members with limits */
    hr_wh_group_lookup_fn group_lookup;
    void *group_ud;
    /* optional: a pod created with spec.nodeName (a DaemonSet's, one
     * placed by hand) is born under its node's settings (design §2.11:
     * the node pool that applies there) when the node is known */
    hr_wh_node_lookup_fn node_lookup;
    void *node_ud;
    /* optional: the birth limits of a pod share what the namespace's
     * limits.cpu quota has left, so that the API server takes the pod */
    hr_wh_quota_room_fn quota_room;
    void *quota_ud;
    /* optional: a pod whose VerticalPodAutoscaler writes its CPU limit is
     * left to it (unchanged, foreign-writer), as the controller leaves it */
    hr_wh_vpa_writer_fn vpa_writer;
    void *vpa_ud;
    /* the API server resizes pod-level resources (design §2.13): a pod
     * with a pod-level CPU request gets a pod-level birth limit; false:
     * such a pod is left alone (pod-level-resources) */
    bool pod_resize;
} hr_wh_env;

typedef enum hr_wh_outcome {
    HR_WH_MUTATED = 0, /* allowed with a patch */
    HR_WH_UNCHANGED,   /* allowed, nothing to do or not ours to do */
    HR_WH_DRY_RUN,     /* allowed unchanged; a patch was due */
    HR_WH_ERROR,       /* HTTP 400: not a review we can answer */
    HR_WH_OUTCOME_COUNT_
} hr_wh_outcome;

/* The metric label for an outcome: "mutated", "unchanged", "dry-run",
 * "error". */
const char *hr_wh_outcome_str(hr_wh_outcome o);

#define HR_WH_WHY_MAX 256

typedef struct hr_wh_result {
    int http_status; /* 200, or 400 */
    hr_wh_outcome outcome;
    const char *content_type; /* static: application/json or text/plain */
    hr_buf body;              /* the response body */
    hr_buf patch;             /* the JSONPatch (not base64), "" when none */
    int n_patched;            /* containers given a limit */
    /* The core's eligibility answer, once the review got that far (a pods
     * CREATE with a namespace, and for a managed namespace a pod that could
     * be read): HR_MANAGED when the pod is one the controller would manage
     * (a patch may still not be due), else the first rule it fails — the
     * reason the controller gives for the same pod. */
    bool has_reason;
    hr_reason reason;
    char why[HR_WH_WHY_MAX]; /* one line for the log */
    char uid[64];            /* request.uid (cut), for the log */
    char ns[64];             /* namespace (cut), for the log */
    char pod[80];            /* name, or generateName + "*" (cut) */
} hr_wh_result;

/* Answer one review. Only out-of-memory is an error return (HR_E_NOMEM);
 * every other problem is an answer in *out. *out must be freed with
 * hr_wh_result_free whatever is returned. */
HR_MUST_CHECK hr_status hr_admission_review(const hr_wh_env *env, const char *in, size_t len,
                                            hr_wh_result *out, hr_err *err);

void hr_wh_result_free(hr_wh_result *r);

#endif
