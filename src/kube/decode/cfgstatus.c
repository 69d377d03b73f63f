/*
 * cfgstatus.c — the status block of the HeadroomConfig, as written
 * by (some replica of) the controller before.
 *
 * Separate from cfgspec.c because it must work when the spec does
 * not: an invalid spec is exactly when the status has something to say.
 */
#include <string.h>

#include "kube/decode/cfgstatus.h"
#include "kube/decode/common.h"

static hr_status decode_condition(hr_kctx *c, const hr_jpath *p, yyjson_val *e, hr_kcondition *out)
{
    if (!yyjson_is_obj(e))
        return hr_kfail(c, p, HR_E_INPUT, "expected an object, got %s", hr_jtype_str(e));
    hr_jpath pt = HR_JP_KEY(p, "type"), pst = HR_JP_KEY(p, "status");
    hr_jpath pr = HR_JP_KEY(p, "reason"), pm = HR_JP_KEY(p, "message");
    hr_jpath pl = HR_JP_KEY(p, "lastTransitionTime");
    hr_jpath pg = HR_JP_KEY(p, "observedGeneration");
    out->observed_generation = -1;
    hr_status st;
    if ((st = hr_jstr(c, &pt, hr_jget(e, "type"), "", &out->type)) ||
        (st = hr_jstr(c, &pst, hr_jget(e, "status"), "", &out->status)) ||
        (st = hr_jstr(c, &pr, hr_jget(e, "reason"), "", &out->reason)) ||
        (st = hr_jstr(c, &pm, hr_jget(e, "message"), "", &out->message)) ||
        (st = hr_jstr(c, &pl, hr_jget(e, "lastTransitionTime"), "", &out->last_transition)) ||
        (st = hr_jint(c, &pg, hr_jget(e, "observedGeneration"), 0, INT64_MAX,
                      &out->observed_generation)))
        return st;
    return HR_OK;
}

hr_status hr_decode_config_status(yyjson_val *obj, hr_arena *a, hr_kcfg_status *out, hr_err *err)
{
    hr_kctx c = {a, err, "headroomconfig", NULL, NULL};
    memset(out, 0, sizeof *out);
    out->generation = out->observed_generation = -1;
    out->managed_pods = out->managed_nodes = -1;
    yyjson_val *meta;
    hr_kmeta m;
    hr_status st = hr_decode_meta(&c, obj, false, &m, &meta);
    if (st)
        return st;
    hr_jpath pm = HR_JP_KEY(NULL, "metadata");
    hr_jpath pgen = HR_JP_KEY(&pm, "generation");
    hr_jpath ps = HR_JP_KEY(NULL, "status");
    hr_jpath pog = HR_JP_KEY(&ps, "observedGeneration");
    hr_jpath pp = HR_JP_KEY(&ps, "managedPods");
    hr_jpath pn = HR_JP_KEY(&ps, "managedNodes");
    hr_jpath pc = HR_JP_KEY(&ps, "conditions");
    yyjson_val *status, *conds;
    if ((st = hr_jint(&c, &pgen, hr_jget(meta, "generation"), 0, INT64_MAX, &out->generation)) ||
        (st = hr_jobj(&c, &ps, hr_jget(obj, "status"), &status)) ||
        (st = hr_jint(&c, &pog, hr_jget(status, "observedGeneration"), 0, INT64_MAX,
                      &out->observed_generation)) ||
        (st = hr_jint(&c, &pp, hr_jget(status, "managedPods"), 0, INT64_MAX, &out->managed_pods)) ||
        (st = hr_jint(&c, &pn, hr_jget(status, "managedNodes"), 0, INT64_MAX,
                      &out->managed_nodes)) ||
        (st = hr_jarr(&c, &pc, hr_jget(status, "conditions"), &conds)))
        return st;
    size_t i, max;
    yyjson_val *e;
    yyjson_arr_foreach(conds, i, max, e)
    {
        if (out->n_cond == HR_KCOND_MAX)
            break;
        hr_jpath pe = HR_JP_IDX(&pc, i);
        if ((st = decode_condition(&c, &pe, e, &out->cond[out->n_cond])))
            return st;
        out->n_cond++;
    }
    hr_jpath pnp = HR_JP_KEY(&ps, "nodePools");
    yyjson_val *pools;
    if ((st = hr_jarr(&c, &pnp, hr_jget(status, "nodePools"), &pools)))
        return st;
    yyjson_arr_foreach(pools, i, max, e)
    {
        if (out->n_pools == HR_KPOOL_MAX)
            break;
        hr_jpath pe = HR_JP_IDX(&pnp, i);
        hr_jpath pname = HR_JP_KEY(&pe, "name"), pc2 = HR_JP_KEY(&pe, "nodes");
        hr_kpool_count *k = &out->pools[out->n_pools];
        k->nodes = -1;
        if (!yyjson_is_obj(e))
            return hr_kfail(&c, &pe, HR_E_INPUT, "expected an object, got %s", hr_jtype_str(e));
        if ((st = hr_jstr(&c, &pname, hr_jget(e, "name"), "", &k->name)) ||
            (st = hr_jint(&c, &pc2, hr_jget(e, "nodes"), 0, INT64_MAX, &k->nodes)))
            return st;
        out->n_pools++;
    }
    return HR_OK;
}
