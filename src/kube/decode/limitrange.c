/*
 * limitrange.c — a LimitRange into the CPU bounds it puts on limits
 * (design §3.4). Only type Container (max.cpu, maxLimitRequestRatio.cpu) and
 * type Pod (max.cpu) constrain a CPU limit; min and default do not bound
 * what we write, and other types (PersistentVolumeClaim) are skipped.
 */
#include <string.h>

#include "kube/decode/common.h"
#include "kube/decode/limitrange.h"

hr_status hr_decode_limitrange(yyjson_val *obj, hr_arena *a, hr_klimitrange *out, hr_err *err)
{
    hr_kctx c = {a, err, "limitrange", NULL, NULL};
    memset(out, 0, sizeof *out);
    out->bounds = HR_LIMIT_BOUNDS_NONE;
    yyjson_val *meta;
    hr_status st = hr_decode_meta(&c, obj, true, &out->meta, &meta);
    if (st)
        return st;
    hr_jpath ps = HR_JP_KEY(NULL, "spec");
    hr_jpath pl = HR_JP_KEY(&ps, "limits");
    yyjson_val *spec, *limits;
    if ((st = hr_jobj(&c, &ps, hr_jget(obj, "spec"), &spec)) ||
        (st = hr_jarr(&c, &pl, hr_jget(spec, "limits"), &limits)))
        return st;
    if (!limits)
        return HR_OK;
    size_t i, max;
    yyjson_val *e;
    yyjson_arr_foreach(limits, i, max, e)
    {
        hr_jpath pe = HR_JP_IDX(&pl, i);
        if (!yyjson_is_obj(e))
            return hr_kfail(&c, &pe, HR_E_INPUT, "expected an object, got %s", hr_jtype_str(e));
        hr_jpath pt = HR_JP_KEY(&pe, "type");
        hr_jpath pmax = HR_JP_KEY(&pe, "max");
        hr_jpath pmaxc = HR_JP_KEY(&pmax, "cpu");
        hr_jpath pr = HR_JP_KEY(&pe, "maxLimitRequestRatio");
        hr_jpath prc = HR_JP_KEY(&pr, "cpu");
        const char *type;
        size_t tl;
        yyjson_val *mx, *ratio;
        int64_t max_cpu = HR_NONE, ratio_milli = HR_NONE;
        if ((st = hr_jstr_ref(&c, &pt, hr_jget(e, "type"), &type, &tl)) ||
            (st = hr_jobj(&c, &pmax, hr_jget(e, "max"), &mx)) ||
            (st = hr_jobj(&c, &pr, hr_jget(e, "maxLimitRequestRatio"), &ratio)) ||
            (st = hr_jquantity(&c, &pmaxc, hr_jget(mx, "cpu"), HR_QK_CPU, &max_cpu)) ||
            (st = hr_jquantity(&c, &prc, hr_jget(ratio, "cpu"), HR_QK_MILLI, &ratio_milli)))
            return st;
        if (!type)
            return hr_kfail(&c, &pt, HR_E_INPUT, "missing");
        hr_limit_bounds b = HR_LIMIT_BOUNDS_NONE;
        if (tl == 9 && memcmp(type, "Container", 9) == 0) {
            b.ctr_max = max_cpu;
            b.ctr_ratio_milli = ratio_milli;
        } else if (tl == 3 && memcmp(type, "Pod", 3) == 0) {
            b.pod_max = max_cpu;
        } else {
            continue;
        }
        hr_limit_bounds_merge(&out->bounds, &b);
    }
    return HR_OK;
}
