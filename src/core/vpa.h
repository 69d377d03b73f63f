/*
 * vpa.h — design §4, foreign-writer: does a VerticalPodAutoscaler write the
 * CPU limit of a pod the policy would manage?
 *
 * A VPA (autoscaling.k8s.io/v1) writes a container's limits when its update
 * mode writes at all (Auto, Recreate, Initial, InPlaceOrRecreate; Off does
 * not) and the container's policy (containerPolicies by containerName, "*"
 * the default) has a mode other than Off, controlledValues
 * RequestsAndLimits (the default) and cpu among controlledResources (all by
 * default). Such a pod is left to it: the same foreign-writer reason as
 * another field manager, named "VerticalPodAutoscaler NS/NAME".
 *
 * Its target is found from the pod's direct owner, without a cache of
 * ReplicaSets or Jobs (hr_vpa_targets): the names the built-in controllers
 * give what they create. Pure: no I/O, no allocation.
 */
#ifndef HR_CORE_VPA_H
#define HR_CORE_VPA_H

#include <stdbool.h>
#include <stddef.h>

#include "pod.h"

/* spec.targetRef.kind, as far as a pod's owner can tell. */
typedef enum hr_vpa_target {
    HR_VT_OTHER = 0, /* any other kind: never matches a pod (design §4) */
    HR_VT_DEPLOYMENT,
    HR_VT_STATEFULSET,
    HR_VT_DAEMONSET,
    HR_VT_REPLICASET,
    HR_VT_RC, /* ReplicationController */
    HR_VT_JOB,
    HR_VT_CRONJOB,
} hr_vpa_target;

/* The prefix of a VPA's writer name (hr_pod.foreign_writer): "VerticalPodAutoscaler NS/NAME". */
#define HR_VPA_WRITER_PREFIX "VerticalPodAutoscaler "

/* Is a foreign writer's name (hr_pod.foreign_writer) a VPA's, not a field manager's? */
bool hr_vpa_is_writer(const char *foreign_writer);

/* One VPA, reduced to what the decision needs. */
typedef struct hr_vpa {
    const char *writer;      /* "VerticalPodAutoscaler NS/NAME" */
    const char *target_name; /* spec.targetRef.name */
    const char *exceptions;  /* names of the containers whose policy controls the CPU
                                limit the other way round from dflt_limits, each
                                followed by ',' ("" or NULL: none) */
    unsigned char target;    /* hr_vpa_target */
    bool writes;             /* spec.updatePolicy.updateMode writes (not Off) */
    bool dflt_limits;        /* a container without a policy of its own ("*", else
                                the defaults): its CPU limit is written */
} hr_vpa;

/* The target kind of spec.targetRef.kind (NULL: HR_VT_OTHER). */
hr_vpa_target hr_vpa_target_of(const char *kind);

/* Does a container policy with these fields write the CPU limit? mode,
 * values: the strings or NULL when unset; has_resources: controlledResources
 * is set, cpu: it names cpu. */
bool hr_vpa_policy_limits(const char *mode, const char *values, bool has_resources, bool cpu);

/* Does updateMode (NULL: unset, Auto) write pods? */
bool hr_vpa_mode_writes(const char *update_mode);

/* The pod's direct owner, as the cache keeps it. */
typedef struct hr_vpa_owner {
    const char *kind, *group, *name; /* NULL kind: no owner */
    const char *template_hash;       /* the pod's pod-template-hash label, NULL: none */
} hr_vpa_owner;

/* Does v target a pod whose direct owner is o (same namespace assumed)?
 * Deployment: owned by ReplicaSet "<name>-<pod-template-hash>"; CronJob:
 * owned by Job "<name>-<digits>"; the other kinds: the direct owner itself. */
bool hr_vpa_targets(const hr_vpa *v, const hr_vpa_owner *o);

/* Does v write the CPU limit of any container at all (its update mode
 * writes, and its default or one container's policy controls the limit)? */
bool hr_vpa_writes_limits(const hr_vpa *v);

/* Does v write the CPU limit of container ctr? */
bool hr_vpa_controls(const hr_vpa *v, const char *ctr);

/* Does v write the CPU limit of a container of p the policy manages
 * (hr_ctr_managed; names[i] container i's name)? */
bool hr_vpa_writes_pod(const hr_vpa *v, const hr_vpa_owner *o, const hr_pod *p,
                       const char *const *names);

#endif
