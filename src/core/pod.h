/*
 * pod.h — what the core knows about a pod, and the accounting on it.
 *
 * These are plain views, filled by whoever holds the real objects (the dump
 * reader, the cache). The core never owns or frees any pointer it is given.
 * CPU is always in millicores, memory in bytes; HR_NONE marks a quantity the
 * pod does not set, which is different from an explicit zero.
 *
 * design §3: the booked request (what the scheduler reserved: sidecars, init
 * containers, overhead, pod-level resources), the managed request (what the
 * policy distributes over), and the QoS class as the API server computes it.
 */
#ifndef HR_CORE_POD_H
#define HR_CORE_POD_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define HR_NONE ((int64_t)-1)
/* A quantity that is set but does not read (out of range, e.g. a memory
 * request of 1e30): only ever a memory quantity or a CPU limit, which
 * cannot change what the scheduler books (design §15). Such a pod books its
 * CPU requests as usual and is not managed (quantity-out-of-range). */
#define HR_UNBOUNDED INT64_MAX

typedef enum hr_ctr_kind {
    HR_CTR_APP = 0,     /* spec.containers[] */
    HR_CTR_SIDECAR = 1, /* spec.initContainers[] with restartPolicy: Always */
    HR_CTR_INIT = 2,    /* any other init container */
} hr_ctr_kind;

typedef struct hr_container {
    int64_t cpu_req, cpu_lim; /* millicores or HR_NONE */
    int64_t mem_req, mem_lim; /* bytes or HR_NONE */
    uint8_t kind;             /* hr_ctr_kind */
    bool cpu_restart;         /* resizePolicy for cpu is RestartContainer */
} hr_container;

typedef enum hr_phase {
    HR_PHASE_PENDING = 0,
    HR_PHASE_RUNNING,
    HR_PHASE_SUCCEEDED,
    HR_PHASE_FAILED,
    HR_PHASE_UNKNOWN,
} hr_phase;

/* LimitRange bounds that apply to a pod's namespace, folded over every
 * LimitRange there (the tightest wins). HR_NONE when nothing bounds. */
typedef struct hr_limit_bounds {
    int64_t ctr_max;         /* type Container max.cpu, millicores */
    int64_t ctr_ratio_milli; /* type Container maxLimitRequestRatio.cpu x1000 */
    int64_t pod_max;         /* type Pod max.cpu, millicores */
} hr_limit_bounds;

#define HR_LIMIT_BOUNDS_NONE ((hr_limit_bounds){HR_NONE, HR_NONE, HR_NONE})

/* Fold one more bound into b (the smaller one wins). */
void hr_limit_bounds_merge(hr_limit_bounds *b, const hr_limit_bounds *more);

/* Why a pod's namespace is or is not under management (see eligibility.h). */
typedef enum hr_ns_state {
    HR_NS_MANAGED = 0,
    HR_NS_NOT_SELECTED,
    HR_NS_EXCLUDED,
} hr_ns_state;

typedef struct hr_pod {
    /* Laid out widest first (pointers and 64-bit figures, then 32-bit, then
     * flags and bytes) so that it packs without padding: the planner and the
     * snapshot hold one per pod (test_dump's budget). */
    /* Init containers (sidecars included) first, in spec order, then the
     * app containers in spec order: booked-request accounting needs it. */
    const hr_container *ctr;
    int64_t overhead_cpu; /* spec.overhead.cpu or HR_NONE */
    int64_t pod_cpu_req;  /* spec.resources.requests.cpu (pod-level) or HR_NONE */
    int64_t pod_cpu_lim;  /* spec.resources.limits.cpu (pod-level) or HR_NONE */
    int64_t max_cpu;      /* kube-headroom.dev/max-cpu or HR_NONE */
    /* What the caller decided about the pod's surroundings. */
    hr_limit_bounds limits;
    int64_t quota_cap;          /* when quota_on: the quota cap (design §2.3, quota.h) */
    const char *tenant;         /* its tenant under TenantFair (design §2.9,
                                   hr_tenant_of): the namespace's tenant label,
                                   or the namespace; pods with equal strings
                                   (or both NULL) and equal tenant_by_label are
                                   one tenant */
    const char *group;          /* the key of its group (design §2.10, hr_group_key),
                                   NULL: in none */
    const char *foreign_writer; /* another writer of a managed container's
                                   limits.cpu (design §4, foreign-writer): a
                                   field manager's name, NULL: none */
    uint32_t n_ctr;
    uint32_t start_s;       /* status.startTime, Unix seconds, 0: none; for a pod in
                               its startup grace, what it counts from (design §2.12,
                               hr_pod_in_context) */
    uint32_t tenant_weight; /* the namespace's weight (§2.9), >= 1; 0 reads as 1 */

    bool pod_resources;    /* spec.resources present at all */
    uint8_t phase;         /* hr_phase */
    bool bound;            /* spec.nodeName set */
    bool mirror;           /* static pod (kubernetes.io/config.mirror) */
    bool windows;          /* spec.os.name == windows */
    bool opted_out;        /* kube-headroom.dev/mode set on the pod (label or
                              annotation) to anything but "managed" */
    bool status_resources; /* every container status reports resources */
    uint8_t grace_opt;     /* hr_grace_opt: kube-headroom.dev/startup-grace on
                              the pod (design §2.12) */
    bool pod_mem_fixed;    /* pod-level memory limit set and equal to its request
                              (the memory half of a Guaranteed pod-level QoS) */
    bool max_cpu_invalid;  /* the annotation is there but not a CPU quantity */
    bool undecodable;      /* the object could not be decoded (design §15): no
                              containers, books nothing it can prove, and makes
                              its node's booking unknown (hr_plan_node) */
    bool ready;            /* condition Ready is True (design §2.12) */
    /* What the caller decided about the pod's surroundings (with limits,
     * quota_cap, tenant, group and tenant_weight above). */
    uint8_t ns_state;           /* hr_ns_state */
    bool node_excluded;         /* node matched excludedNodeSelector */
    bool node_windows;          /* node label kubernetes.io/os=windows */
    bool pod_resize;            /* its node and API server accept a resize of pod-level
                                   resources (design §2.13, hr_pod_ctx) */
    bool owner_excluded;        /* direct owner in excludedOwners */
    bool in_backoff;            /* a recent resize was refused (design §7) */
    bool in_grace;              /* in its startup grace (design §2.12, hr_grace_end) */
    bool quota_on;              /* a ResourceQuota bounds limits.cpu in its namespace */
    bool tenant_by_label;       /* tenant is a label's value, not a namespace */
    bool tenant_weight_invalid; /* the weight label was there but not a weight:
                                   read as 1 (fail closed), and reported */
    bool group_too_large;       /* its group has more members than
                                   spec.maxGroupSize: refused whole (§2.10) */
} hr_pod;

/* A pod with every field "neutral": no containers, bound, Running,
 * namespace managed, no bounds, tenant NULL of weight 1. Tests and readers start from it. */
hr_pod hr_pod_init(void);

static inline bool hr_ctr_resizable(const hr_container *c)
{
    return c->kind == HR_CTR_APP || c->kind == HR_CTR_SIDECAR;
}

/* A container whose CPU limit the policy sets: resizable, CPU request > 0. */
static inline bool hr_ctr_managed(const hr_container *c)
{
    return hr_ctr_resizable(c) && c->cpu_req > 0;
}

/* design §2.13: the pod's CPU is set at pod level (a pod-level CPU request,
 * KEP-2837). Such a pod is managed, when at all, as one member through its
 * pod-level limits.cpu: its containers are never written. */
static inline bool hr_pod_level(const hr_pod *p)
{
    return p->pod_resources && p->pod_cpu_req > 0;
}

/* The pod-level resources of p as a pod of one app container (*one, which
 * the view points to): the policy's view of a pod-level pod (design
 * §2.13). No container LimitRange bounds apply to it; everything else
 * (caps, context) is p's. */
hr_pod hr_pod_level_view(const hr_pod *p, hr_container *one);

bool hr_pod_terminal(const hr_pod *p);

/* Does any container carry an HR_UNBOUNDED quantity? */
bool hr_pod_unbounded_quantity(const hr_pod *p);

/* design §3.1: CPU the scheduler booked for the pod (0 for terminal pods). */
int64_t hr_pod_booked_cpu(const hr_pod *p);

/* design §3.2: sum of CPU requests of the managed containers; a pod-level
 * pod's pod-level CPU request (§2.13). */
int64_t hr_pod_managed_cpu(const hr_pod *p);

/* Sum of current CPU limits over the managed containers, 0 when any of
 * them has no limit (a write is then always due); a pod-level pod's
 * pod-level CPU limit, 0 when unset (§2.13). */
int64_t hr_pod_current_limit(const hr_pod *p);

typedef enum hr_qos {
    HR_QOS_BEST_EFFORT = 0,
    HR_QOS_BURSTABLE,
    HR_QOS_GUARANTEED,
} hr_qos;

/* The QoS class as the API server computes it (from the pod-level
 * resources when the pod sets a pod-level CPU request). When cpu_lim_override is
 * not NULL it holds one CPU limit per container (HR_NONE = keep the
 * container's own), letting the caller ask "what would the class be if
 * these limits were written". */
hr_qos hr_pod_qos(const hr_pod *p, const int64_t *cpu_lim_override);

const char *hr_qos_str(hr_qos q);

#endif
