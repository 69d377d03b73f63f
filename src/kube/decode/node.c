/*
 * node.c — Node and Namespace objects.
 *
 * For a Node the gates need allocatable CPU and the two pressure conditions
 * that block increases (design §6); Ready and the OS label are kept for
 * eligibility (Windows nodes) and for `preflight`/`explain`. A Node without
 * status.allocatable (just registered) decodes with allocatable 0, which
 * gives its pods no slack: the safe reading, not an error.
 */
#include <string.h>

#include "kube/decode/common.h"
#include "kube/decode/node.h"

static hr_status decode_conditions(const hr_kctx *c, yyjson_val *status, hr_knode *n)
{
    hr_jpath pst = HR_JP_KEY(NULL, "status");
    hr_jpath pc = HR_JP_KEY(&pst, "conditions");
    yyjson_val *arr;
    hr_status st = hr_jarr(c, &pc, hr_jget(status, "conditions"), &arr);
    if (st || !arr)
        return st;
    size_t i, max;
    yyjson_val *e;
    yyjson_arr_foreach(arr, i, max, e)
    {
        hr_jpath pe = HR_JP_IDX(&pc, i);
        if (!yyjson_is_obj(e))
            return hr_kfail(c, &pe, HR_E_INPUT, "expected an object, got %s", hr_jtype_str(e));
        hr_jpath pt = HR_JP_KEY(&pe, "type"), ps = HR_JP_KEY(&pe, "status");
        const char *type, *val;
        size_t tl, vl;
        if ((st = hr_jstr_ref(c, &pt, hr_jget(e, "type"), &type, &tl)) ||
            (st = hr_jstr_ref(c, &ps, hr_jget(e, "status"), &val, &vl)))
            return st;
        bool is_true = val && vl == 4 && memcmp(val, "True", 4) == 0;
        yyjson_val *tv = hr_jget(e, "type");
        if (yyjson_equals_str(tv, "DiskPressure"))
            n->node.disk_pressure = is_true;
        else if (yyjson_equals_str(tv, "PIDPressure"))
            n->node.pid_pressure = is_true;
        else if (yyjson_equals_str(tv, "Ready"))
            n->ready = is_true;
    }
    return HR_OK;
}

/* status.declaredFeatures: does it name HR_FEATURE_POD_RESIZE? */
static hr_status decode_features(const hr_kctx *c, yyjson_val *status, hr_knode *n)
{
    hr_jpath pst = HR_JP_KEY(NULL, "status");
    hr_jpath pf = HR_JP_KEY(&pst, "declaredFeatures");
    yyjson_val *arr;
    hr_status st = hr_jarr(c, &pf, hr_jget(status, "declaredFeatures"), &arr);
    if (st || !arr)
        return st;
    size_t i, max;
    yyjson_val *e;
    yyjson_arr_foreach(arr, i, max, e)
    {
        hr_jpath pe = HR_JP_IDX(&pf, i);
        const char *s;
        size_t l;
        if ((st = hr_jstr_ref(c, &pe, e, &s, &l)))
            return st;
        if (s && l == sizeof HR_FEATURE_POD_RESIZE - 1 && memcmp(s, HR_FEATURE_POD_RESIZE, l) == 0)
            n->pod_resize = true;
    }
    return HR_OK;
}

hr_status hr_decode_node(yyjson_val *obj, hr_arena *a, hr_knode *out, hr_err *err)
{
    hr_kctx c = {a, err, "node", NULL, NULL};
    memset(out, 0, sizeof *out);
    out->node.known = true;
    yyjson_val *meta;
    hr_status st = hr_decode_meta(&c, obj, false, &out->meta, &meta);
    if (st)
        return st;
    const char *os = hr_labels_get(&out->meta.labels, "kubernetes.io/os");
    out->windows = os && strcmp(os, "windows") == 0;
    hr_jpath pst = HR_JP_KEY(NULL, "status");
    hr_jpath pal = HR_JP_KEY(&pst, "allocatable");
    hr_jpath pcpu = HR_JP_KEY(&pal, "cpu");
    yyjson_val *status, *alloc;
    int64_t cpu = HR_NONE;
    if ((st = hr_jobj(&c, &pst, hr_jget(obj, "status"), &status)) ||
        (st = hr_jobj(&c, &pal, hr_jget(status, "allocatable"), &alloc)) ||
        (st = hr_jquantity(&c, &pcpu, hr_jget(alloc, "cpu"), HR_QK_CPU, &cpu)))
        return st;
    out->has_allocatable = cpu != HR_NONE;
    out->node.allocatable = cpu == HR_NONE ? 0 : cpu;
    if ((st = decode_features(&c, status, out)))
        return st;
    return decode_conditions(&c, status, out);
}

hr_status hr_decode_namespace(yyjson_val *obj, hr_arena *a, hr_knamespace *out, hr_err *err)
{
    hr_kctx c = {a, err, "namespace", NULL, NULL};
    memset(out, 0, sizeof *out);
    yyjson_val *meta;
    return hr_decode_meta(&c, obj, false, &out->meta, &meta);
}
