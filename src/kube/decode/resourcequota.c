/*
 * resourcequota.c — a ResourceQuota into "does it bound limits.cpu".
 *
 * That is all the controller needs: a quota on limits.cpu turns raises into
 * 403s (design §7), and the HeadroomConfig status names the managed
 * namespaces that have one so a platform team sees it before the events
 * pile up. Scopes are not looked at: a scoped quota may or may not cover a
 * given pod, and naming its namespace errs on the side of telling.
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
    yyjson_val *spec, *hard;
    int64_t lim = HR_NONE;
    if ((st = hr_jobj(&c, &ps, hr_jget(obj, "spec"), &spec)) ||
        (st = hr_jobj(&c, &ph, hr_jget(spec, "hard"), &hard)) ||
        (st = hr_jquantity(&c, &pl, hr_jget(hard, "limits.cpu"), HR_QK_CPU, &lim)))
        return st;
    out->limits_cpu = lim != HR_NONE;
    return HR_OK;
}
