/*
 * resourcequota.c — a ResourceQuota into its limits.cpu: spec.hard and
 * status.used.
 *
 * That is all the controller needs: a quota on limits.cpu bounds what the
 * namespace's managed pods may raise their limits to (the quota cap, design
 * §2.3), and the HeadroomConfig status names the managed namespaces that
 * have one. Scopes are not looked at: a scoped quota may or may not cover a
 * given pod, and counting it errs on the side of fitting.
 */
#include <string.h>

#include "kube/decode/common.h"
#include "kube/decode/resourcequota.h"

hr_status hr_decode_resourcequota(yyjson_val *obj, hr_arena *a, hr_kquota *out, hr_err *err)
{
    hr_kctx c = {a, err, "resourcequota", NULL, NULL};
    memset(out, 0, sizeof *out);
    yyjson_val *meta;
    hr_status st = hr_decode_meta(&c, obj, true, &out->meta, &meta);
    if (st)
        return st;
    hr_jpath ps = HR_JP_KEY(NULL, "spec");
    hr_jpath ph = HR_JP_KEY(&ps, "hard");
    hr_jpath pl = HR_JP_KEY(&ph, "limits.cpu");
    hr_jpath pst = HR_JP_KEY(NULL, "status");
    hr_jpath pu = HR_JP_KEY(&pst, "used");
    hr_jpath pul = HR_JP_KEY(&pu, "limits.cpu");
    yyjson_val *spec, *hard, *status, *used;
    int64_t lim = HR_NONE, use = HR_NONE;
    if ((st = hr_jobj(&c, &ps, hr_jget(obj, "spec"), &spec)) ||
        (st = hr_jobj(&c, &ph, hr_jget(spec, "hard"), &hard)) ||
        (st = hr_jquantity(&c, &pl, hr_jget(hard, "limits.cpu"), HR_QK_CPU, &lim)) ||
        (st = hr_jobj(&c, &pst, hr_jget(obj, "status"), &status)) ||
        (st = hr_jobj(&c, &pu, hr_jget(status, "used"), &used)) ||
        (st = hr_jquantity(&c, &pul, hr_jget(used, "limits.cpu"), HR_QK_CPU, &use)))
        return st;
    out->limits_cpu = lim != HR_NONE;
    out->hard_cpu = lim;
    out->used_cpu = out->limits_cpu ? use : HR_NONE;
    return HR_OK;
}
