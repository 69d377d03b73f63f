/*
 * vpa.c — design §4, foreign-writer: a VerticalPodAutoscaler that writes a
 * pod's CPU limit (vpa.h).
 */
#include "vpa.h"

#include <string.h>

static bool eq(const char *a, const char *b)
{
    return a != NULL && strcmp(a, b) == 0;
}

bool hr_vpa_is_writer(const char *foreign_writer)
{
    return foreign_writer != NULL &&
           strncmp(foreign_writer, HR_VPA_WRITER_PREFIX, strlen(HR_VPA_WRITER_PREFIX)) == 0;
}

hr_vpa_target hr_vpa_target_of(const char *kind)
{
    static const struct {
        const char *kind;
        hr_vpa_target t;
    } k[] = {{"Deployment", HR_VT_DEPLOYMENT},    {"StatefulSet", HR_VT_STATEFULSET},
             {"DaemonSet", HR_VT_DAEMONSET},      {"ReplicaSet", HR_VT_REPLICASET},
             {"ReplicationController", HR_VT_RC}, {"Job", HR_VT_JOB},
             {"CronJob", HR_VT_CRONJOB}};
    for (size_t i = 0; i < sizeof k / sizeof k[0]; i++)
        if (eq(kind, k[i].kind))
            return k[i].t;
    return HR_VT_OTHER;
}

bool hr_vpa_policy_limits(const char *mode, const char *values, bool has_resources, bool cpu)
{
    if (eq(mode, "Off"))
        return false;
    /* controlledValues: RequestsAndLimits unless it says RequestsOnly. */
    if (eq(values, "RequestsOnly"))
        return false;
    return !has_resources || cpu;
}

bool hr_vpa_mode_writes(const char *update_mode)
{
    /* Off only recommends; every other mode (an unknown one too: fail
     * closed, we yield) writes pods. */
    return !eq(update_mode, "Off");
}

/* Is name "<prefix>-<suffix>", the suffix all digits when digits (a
 * CronJob's Job) or equal to suffix (a Deployment's ReplicaSet)? */
static bool named_after(const char *name, const char *prefix, const char *suffix, bool digits)
{
    size_t pl = strlen(prefix);
    if (name == NULL || pl == 0 || strncmp(name, prefix, pl) != 0 || name[pl] != '-')
        return false;
    const char *s = name + pl + 1;
    if (!digits)
        return suffix != NULL && suffix[0] != '\0' && strcmp(s, suffix) == 0;
    if (*s == '\0')
        return false;
    for (; *s; s++)
        if (*s < '0' || *s > '9')
            return false;
    return true;
}

bool hr_vpa_targets(const hr_vpa *v, const hr_vpa_owner *o)
{
    if (o->kind == NULL || v->target_name == NULL || o->name == NULL)
        return false;
    const char *g = o->group != NULL ? o->group : "";
    bool apps = strcmp(g, "apps") == 0, batch = strcmp(g, "batch") == 0;
    switch ((hr_vpa_target)v->target) {
    case HR_VT_DEPLOYMENT:
        return apps && eq(o->kind, "ReplicaSet") &&
               named_after(o->name, v->target_name, o->template_hash, false);
    case HR_VT_CRONJOB:
        return batch && eq(o->kind, "Job") && named_after(o->name, v->target_name, NULL, true);
    case HR_VT_STATEFULSET:
        return apps && eq(o->kind, "StatefulSet") && eq(o->name, v->target_name);
    case HR_VT_DAEMONSET: return apps && eq(o->kind, "DaemonSet") && eq(o->name, v->target_name);
    case HR_VT_REPLICASET: return apps && eq(o->kind, "ReplicaSet") && eq(o->name, v->target_name);
    case HR_VT_RC:
        return g[0] == '\0' && eq(o->kind, "ReplicationController") && eq(o->name, v->target_name);
    case HR_VT_JOB: return batch && eq(o->kind, "Job") && eq(o->name, v->target_name);
    case HR_VT_OTHER:
    default: return false;
    }
}

bool hr_vpa_writes_limits(const hr_vpa *v)
{
    return v->writes && (v->dflt_limits || (v->exceptions != NULL && v->exceptions[0] != '\0'));
}

bool hr_vpa_controls(const hr_vpa *v, const char *ctr)
{
    bool listed = false;
    size_t n = ctr != NULL ? strlen(ctr) : 0;
    for (const char *e = v->exceptions; e != NULL && *e != '\0' && !listed;) {
        const char *end = strchr(e, ',');
        size_t l = end != NULL ? (size_t)(end - e) : strlen(e);
        listed = l == n && n > 0 && strncmp(e, ctr, n) == 0;
        e = end != NULL ? end + 1 : e + l;
    }
    return listed ? !v->dflt_limits : v->dflt_limits;
}

bool hr_vpa_writes_pod(const hr_vpa *v, const hr_vpa_owner *o, const hr_pod *p,
                       const char *const *names)
{
    if (!v->writes || !hr_vpa_targets(v, o))
        return false;
    for (uint32_t i = 0; i < p->n_ctr; i++)
        if (hr_ctr_managed(&p->ctr[i]) && hr_vpa_controls(v, names != NULL ? names[i] : NULL))
            return true;
    /* A pod-level pod (design §2.13) is written through its pod-level
     * limit; a VPA that writes any of its containers writes its CPU. */
    if (hr_pod_level(p))
        for (uint32_t i = 0; i < p->n_ctr; i++)
            if (hr_ctr_resizable(&p->ctr[i]) && hr_vpa_controls(v, names != NULL ? names[i] : NULL))
                return true;
    return false;
}
