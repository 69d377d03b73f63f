/*
 * writes.c — resize apply body, status annotation and event text.
 */
#include "writes.h"

#include <stdio.h>
#include <string.h>
#include <time.h>

#include "core/names.h"
#include "core/quantity.h"
#include "core/wide.h"
#include "util/jsonstr.h"

static void put_cpu(hr_buf *b, int64_t milli)
{
    char q[HR_CPU_FMT_MAX];
    hr_cpu_format_milli(milli, q, sizeof q);
    hr_buf_json_str(b, q);
}

/* One list (containers or initContainers) of the apply body. */
static void put_list(hr_buf *b, const char *field, const hr_pod *p, const char *const *names,
                     const int64_t *limits, bool sidecars, bool *any_list)
{
    bool open = false;
    for (uint32_t i = 0; i < p->n_ctr; i++) {
        if (limits[i] == HR_NONE)
            continue;
        bool is_sidecar = p->ctr[i].kind == HR_CTR_SIDECAR;
        if (is_sidecar != sidecars)
            continue;
        if (!open) {
            hr_buf_printf(b, "%s\"%s\":[", *any_list ? "," : "", field);
            open = true;
            *any_list = true;
        } else {
            hr_buf_putc(b, ',');
        }
        hr_buf_puts(b, "{\"name\":");
        hr_buf_json_str(b, names[i]);
        hr_buf_puts(b, ",\"resources\":{\"limits\":{\"cpu\":");
        put_cpu(b, limits[i]);
        hr_buf_puts(b, "}}}");
    }
    if (open)
        hr_buf_putc(b, ']');
}

void hr_resize_apply_body(hr_buf *b, const char *ns, const char *name, const hr_pod *p,
                          const char *const *ctr_names, const int64_t *limits)
{
    hr_buf_puts(b, "{\"apiVersion\":\"v1\",\"kind\":\"Pod\",\"metadata\":{\"namespace\":");
    hr_buf_json_str(b, ns);
    hr_buf_puts(b, ",\"name\":");
    hr_buf_json_str(b, name);
    hr_buf_puts(b, "},\"spec\":{");
    bool any = false;
    put_list(b, "containers", p, ctr_names, limits, false, &any);
    put_list(b, "initContainers", p, ctr_names, limits, true, &any);
    hr_buf_puts(b, "}}");
}

void hr_pod_level_apply_body(hr_buf *b, const char *ns, const char *name, int64_t limit)
{
    hr_buf_puts(b, "{\"apiVersion\":\"v1\",\"kind\":\"Pod\",\"metadata\":{\"namespace\":");
    hr_buf_json_str(b, ns);
    hr_buf_puts(b, ",\"name\":");
    hr_buf_json_str(b, name);
    hr_buf_puts(b, "},\"spec\":{\"resources\":{\"limits\":{\"cpu\":");
    put_cpu(b, limit);
    hr_buf_puts(b, "}}}}");
}

static void fmt_factor(char *out, size_t cap, int64_t milli)
{
    /* two decimals, rounded half up, from x1000 fixed point */
    int64_t centi = (milli + 5) / 10;
    snprintf(out, cap, "%lld.%02lld", (long long)(centi / 100), (long long)(centi % 100));
}

/* "1500m": millicores always carry the m, as the design shows. */
static void put_milli(hr_buf *b, const char *key, int64_t v)
{
    hr_buf_printf(b, ",\"%s\":\"%lldm\"", key, (long long)v);
}

/* "caps": every bound that applies, the two LimitRange ones as their least. */
static void put_caps(hr_buf *b, const hr_pod_caps *caps)
{
    hr_buf_puts(b, ",\"caps\":{");
    bool first = true;
    for (int k = 0; k < HR_CAP_REQUEST; k++) {
        if (!caps->on[k])
            continue;
        int64_t v = caps->bound[k];
        if (k == HR_CAP_LR_POD && caps->on[HR_CAP_LR_CONTAINER])
            continue; /* said once, below, as the least of the two */
        if (k == HR_CAP_LR_CONTAINER && caps->on[HR_CAP_LR_POD])
            v = hr_min64(v, caps->bound[HR_CAP_LR_POD]);
        hr_buf_printf(b, "%s\"%s\":\"%lldm\"", first ? "" : ",", hr_cap_key((hr_cap_kind)k),
                      (long long)v);
        first = false;
    }
    hr_buf_putc(b, '}');
}

/* "cap" and "capLimit" (hr_cap_binding). */
static void put_cap(hr_buf *b, const hr_pod_caps *caps, int64_t raw)
{
    int64_t v;
    hr_cap_kind k = hr_cap_binding(caps, raw, &v);
    hr_buf_printf(b, ",\"cap\":\"%s\"", hr_cap_key(k));
    if (k != HR_CAP_COUNT_)
        put_milli(b, "capLimit", v);
}

/* "limits": the split the resize writes, at most HR_STATUS_MAX_LIMITS. */
static void put_limits(hr_buf *b, const hr_status_in *in)
{
    if (in->pp->pod_level) {
        put_milli(b, "podLimit", in->pp->target);
        return;
    }
    hr_buf_puts(b, ",\"limits\":{");
    uint32_t shown = 0, omitted = 0;
    for (uint32_t i = 0; i < in->pod->n_ctr; i++) {
        if (in->limits[i] == HR_NONE)
            continue;
        if (shown == HR_STATUS_MAX_LIMITS) {
            omitted++;
            continue;
        }
        if (shown++ > 0)
            hr_buf_putc(b, ',');
        hr_buf_json_str(b, in->ctr_names[i]);
        hr_buf_printf(b, ":\"%lldm\"", (long long)in->limits[i]);
    }
    hr_buf_putc(b, '}');
    if (omitted > 0)
        hr_buf_printf(b, ",\"limitsOmitted\":%u", omitted);
}

void hr_status_annotation(hr_buf *b, const hr_status_in *in)
{
    const hr_node_plan *np = in->np;
    const hr_pod_plan *pp = in->pp;
    char factor[32], when[32];
    fmt_factor(factor, sizeof factor, hr_node_factor_milli(np));
    hr_buf_printf(b, "{\"factor\":\"%s\"", factor);
    put_milli(b, "slack", np->slack > 0 ? np->slack : 0);
    put_milli(b, "managedRequests", np->managed);
    hr_buf_printf(b, ",\"nodePods\":%u", np->n_pods);
    put_milli(b, "allocatable", np->allocatable);
    put_milli(b, "booked", np->booked);
    hr_buf_printf(b, ",\"managedPods\":%u", np->n_managed);
    put_milli(b, "request", pp->request);
    /* The burst is a share of pp->share (S, or the tenant's S_t, §2.9). */
    hr_pod_caps caps;
    hr_pod_caps_of(in->cfg, np->allocatable, in->pod, pp->request, &caps);
    if (!in->target_unknown) {
        int64_t raw = hr_pod_raw(in->cfg, pp->share, pp->share_managed, pp->share_n, pp->request);
        put_milli(b, "floor", hr_pod_floor(in->cfg, pp->share, pp->share_managed, pp->share_n));
        put_milli(b, "burst", raw - pp->request);
        put_milli(b, "targetLimit", pp->target);
        put_limits(b, in);
        put_cap(b, &caps, raw);
    }
    put_caps(b, &caps);
    if (in->reason != NULL) {
        hr_buf_puts(b, ",\"reason\":");
        hr_buf_json_str(b, in->reason);
    }
    time_t t = (time_t)in->unix_s;
    struct tm tm;
    gmtime_r(&t, &tm);
    strftime(when, sizeof when, "%Y-%m-%dT%H:%M:%SZ", &tm);
    hr_buf_printf(b, ",\"computedAt\":\"%s\",\"policy\":\"%s\",\"dryRun\":%s}", when,
                  hr_policy_version((hr_policy)np->policy), in->dry_run ? "true" : "false");
}

void hr_status_patch(hr_buf *b, const char *annotation_value)
{
    hr_buf_puts(b, "{\"metadata\":{\"annotations\":{\"" HR_ANN_STATUS "\":");
    hr_buf_json_str(b, annotation_value);
    hr_buf_puts(b, "}}}");
}

/* Millicores always carry the m, whole cores too ("1500m → 3000m", design §7), as in the
 * status annotation: the two figures of one message read in one unit. */
void hr_event_message(hr_buf *b, int64_t current, int64_t target, const hr_node_plan *np)
{
    char from[32], to[32], factor[32];
    if (current > 0)
        snprintf(from, sizeof from, "%lldm", (long long)current);
    else
        snprintf(from, sizeof from, "none");
    snprintf(to, sizeof to, "%lldm", (long long)target);
    fmt_factor(factor, sizeof factor, hr_node_factor_milli(np));
    int64_t s = np->slack > 0 ? np->slack : 0;
    hr_buf_printf(b, "%s \xe2\x86\x92 %s (factor %s, slack %lld/%lld cores)", from, to, factor,
                  (long long)(s / 1000), (long long)(np->allocatable / 1000));
}

/* Split an annotation around its computedAt value. */
static bool cut_time(const char *s, size_t *pre, const char **post)
{
    static const char key[] = "\"computedAt\":\"";
    const char *k = strstr(s, key);
    if (k == NULL)
        return false;
    const char *v = k + sizeof key - 1;
    const char *end = strchr(v, '"');
    if (end == NULL)
        return false;
    *pre = (size_t)(v - s);
    *post = end;
    return true;
}

bool hr_status_same(const char *a, const char *b)
{
    if (a == NULL || b == NULL)
        return false;
    size_t pa, pb;
    const char *ta, *tb;
    if (!cut_time(a, &pa, &ta) || !cut_time(b, &pb, &tb))
        return strcmp(a, b) == 0;
    return pa == pb && memcmp(a, b, pa) == 0 && strcmp(ta, tb) == 0;
}
