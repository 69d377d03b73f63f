/*
 * pbkinds.c — Node, Namespace, LimitRange and ResourceQuota in protobuf
 * (pbkinds.h), read by the rules node.c, limitrange.c and resourcequota.c
 * apply to their JSON: the same fields, the same defaults, the same
 * errors where the wire format can carry them.
 *
 * Field numbers (k8s.io/api core/v1 generated.proto): every object
 * metadata 1, spec 2, status 3; NodeStatus allocatable 2, conditions 4,
 * declaredFeatures 14;
 * NodeCondition type 1, status 2; LimitRangeSpec limits 1; LimitRangeItem
 * type 1, max 2, maxLimitRequestRatio 6; ResourceQuotaSpec hard 1.
 */
#include <string.h>

#include "kube/decode/pbkinds.h"
#include "kube/decode/pbmeta.h"

static hr_status node_condition(const hr_kctx *c, const hr_jpath *p, hr_pbr r, hr_knode *n)
{
    const uint8_t *type = NULL, *val = NULL;
    size_t tl = 0, vl = 0;
    hr_jpath pt = HR_JP_KEY(p, "type"), ps = HR_JP_KEY(p, "status");
    hr_status st;
    while (hr_pbr_more(&r)) {
        uint32_t f;
        hr_pbwt wt;
        if (!hr_pb_tag(&r, &f, &wt))
            return hr_pbfail(c, p);
        if (f == 1)
            st = hr_pb_bytes_at(c, &pt, &r, wt, &type, &tl);
        else if (f == 2)
            st = hr_pb_bytes_at(c, &ps, &r, wt, &val, &vl);
        else
            st = hr_pb_skip_at(c, p, &r, wt);
        if (st)
            return st;
    }
    bool is_true = val && hr_pb_eq(val, vl, "True");
    if (!type)
        return HR_OK;
    if (hr_pb_eq(type, tl, "DiskPressure"))
        n->node.disk_pressure = is_true;
    else if (hr_pb_eq(type, tl, "PIDPressure"))
        n->node.pid_pressure = is_true;
    else if (hr_pb_eq(type, tl, "Ready"))
        n->ready = is_true;
    return HR_OK;
}

hr_status hr_pbdecode_node(const uint8_t *raw, size_t len, hr_arena *a, hr_knode *out, hr_err *err)
{
    hr_kctx c = {a, err, "node", NULL, NULL};
    memset(out, 0, sizeof *out);
    out->node.known = true;
    hr_pbr parts[3];
    bool has[3];
    hr_status st = hr_pb_object(&c, hr_pbr_of(raw, len), parts, has);
    if (st || (st = hr_pb_meta(&c, parts[0], has[0], false, &out->meta, NULL)))
        return st;
    const char *os = hr_labels_get(&out->meta.labels, "kubernetes.io/os");
    out->windows = os && strcmp(os, "windows") == 0;
    hr_jpath pst = HR_JP_KEY(NULL, "status");
    hr_jpath pal = HR_JP_KEY(&pst, "allocatable");
    hr_jpath pc = HR_JP_KEY(&pst, "conditions");
    int64_t cpu = HR_NONE;
    if ((st = hr_pb_quantity_in(&c, &pal, parts[2], 2, "cpu", HR_QK_CPU, &cpu)))
        return st;
    out->has_allocatable = cpu != HR_NONE;
    out->node.allocatable = cpu == HR_NONE ? 0 : cpu;
    hr_pbr r = parts[2];
    uint32_t i = 0;
    while (hr_pbr_more(&r)) {
        uint32_t f;
        hr_pbwt wt;
        if (!hr_pb_tag(&r, &f, &wt))
            return hr_pbfail(&c, &pst);
        if (f == 14) { /* declaredFeatures (design §2.13) */
            const uint8_t *s;
            size_t l;
            hr_jpath pf = HR_JP_KEY(&pst, "declaredFeatures");
            if ((st = hr_pb_bytes_at(&c, &pf, &r, wt, &s, &l)))
                return st;
            if (hr_pb_eq(s, l, HR_FEATURE_POD_RESIZE))
                out->pod_resize = true;
            continue;
        }
        if (f != 4) {
            if ((st = hr_pb_skip_at(&c, &pst, &r, wt)))
                return st;
            continue;
        }
        hr_jpath pe = HR_JP_IDX(&pc, i++);
        hr_pbr e;
        if ((st = hr_pb_sub_at(&c, &pe, &r, wt, &e)) || (st = node_condition(&c, &pe, e, out)))
            return st;
    }
    return HR_OK;
}

hr_status hr_pbdecode_namespace(const uint8_t *raw, size_t len, hr_arena *a, hr_knamespace *out,
                                hr_err *err)
{
    hr_kctx c = {a, err, "namespace", NULL, NULL};
    memset(out, 0, sizeof *out);
    hr_pbr parts[3];
    bool has[3];
    hr_status st = hr_pb_object(&c, hr_pbr_of(raw, len), parts, has);
    return st ? st : hr_pb_meta(&c, parts[0], has[0], false, &out->meta, NULL);
}

static hr_status limit_item(const hr_kctx *c, const hr_jpath *p, hr_pbr item, hr_klimitrange *out)
{
    const uint8_t *type = NULL;
    size_t tl = 0;
    hr_jpath pt = HR_JP_KEY(p, "type");
    hr_jpath pmax = HR_JP_KEY(p, "max");
    hr_jpath pr = HR_JP_KEY(p, "maxLimitRequestRatio");
    hr_status st;
    hr_pbr r = item;
    while (hr_pbr_more(&r)) {
        uint32_t f;
        hr_pbwt wt;
        if (!hr_pb_tag(&r, &f, &wt))
            return hr_pbfail(c, p);
        st = f == 1 ? hr_pb_bytes_at(c, &pt, &r, wt, &type, &tl) : hr_pb_skip_at(c, p, &r, wt);
        if (st)
            return st;
    }
    int64_t max_cpu = HR_NONE, ratio_milli = HR_NONE;
    if ((st = hr_pb_quantity_in(c, &pmax, item, 2, "cpu", HR_QK_CPU, &max_cpu)) ||
        (st = hr_pb_quantity_in(c, &pr, item, 6, "cpu", HR_QK_MILLI, &ratio_milli)))
        return st;
    if (!type)
        return hr_kfail(c, &pt, HR_E_INPUT, "missing");
    hr_limit_bounds b = HR_LIMIT_BOUNDS_NONE;
    if (hr_pb_eq(type, tl, "Container")) {
        b.ctr_max = max_cpu;
        b.ctr_ratio_milli = ratio_milli;
    } else if (hr_pb_eq(type, tl, "Pod")) {
        b.pod_max = max_cpu;
    } else {
        return HR_OK;
    }
    hr_limit_bounds_merge(&out->bounds, &b);
    return HR_OK;
}

hr_status hr_pbdecode_limitrange(const uint8_t *raw, size_t len, hr_arena *a, hr_klimitrange *out,
                                 hr_err *err)
{
    hr_kctx c = {a, err, "limitrange", NULL, NULL};
    memset(out, 0, sizeof *out);
    out->bounds = HR_LIMIT_BOUNDS_NONE;
    hr_pbr parts[3];
    bool has[3];
    hr_status st = hr_pb_object(&c, hr_pbr_of(raw, len), parts, has);
    if (st || (st = hr_pb_meta(&c, parts[0], has[0], true, &out->meta, NULL)))
        return st;
    hr_jpath ps = HR_JP_KEY(NULL, "spec");
    hr_jpath pl = HR_JP_KEY(&ps, "limits");
    hr_pbr r = parts[1];
    uint32_t i = 0;
    while (hr_pbr_more(&r)) {
        uint32_t f;
        hr_pbwt wt;
        if (!hr_pb_tag(&r, &f, &wt))
            return hr_pbfail(&c, &ps);
        if (f != 1) {
            if ((st = hr_pb_skip_at(&c, &ps, &r, wt)))
                return st;
            continue;
        }
        hr_jpath pe = HR_JP_IDX(&pl, i++);
        hr_pbr e;
        if ((st = hr_pb_sub_at(&c, &pe, &r, wt, &e)) || (st = limit_item(&c, &pe, e, out)))
            return st;
    }
    return HR_OK;
}

hr_status hr_pbdecode_resourcequota(const uint8_t *raw, size_t len, hr_arena *a, hr_kquota *out,
                                    hr_err *err)
{
    hr_kctx c = {a, err, "resourcequota", NULL, NULL};
    memset(out, 0, sizeof *out);
    hr_pbr parts[3];
    bool has[3];
    hr_status st = hr_pb_object(&c, hr_pbr_of(raw, len), parts, has);
    if (st || (st = hr_pb_meta(&c, parts[0], has[0], true, &out->meta, NULL)))
        return st;
    hr_jpath ps = HR_JP_KEY(NULL, "spec");
    hr_jpath ph = HR_JP_KEY(&ps, "hard");
    hr_jpath pst = HR_JP_KEY(NULL, "status");
    hr_jpath pu = HR_JP_KEY(&pst, "used");
    int64_t lim = HR_NONE, use = HR_NONE;
    if ((st = hr_pb_quantity_in(&c, &ph, parts[1], 1, "limits.cpu", HR_QK_CPU, &lim)) ||
        (st = hr_pb_quantity_in(&c, &pu, parts[2], 2, "limits.cpu", HR_QK_CPU, &use)))
        return st;
    out->limits_cpu = lim != HR_NONE;
    out->hard_cpu = lim;
    out->used_cpu = out->limits_cpu ? use : HR_NONE;
    return HR_OK;
}
