/*
 * vpa.c — a VerticalPodAutoscaler into the core's hr_vpa: its target
 * (spec.targetRef kind and name), whether its update mode writes pods
 * (spec.updatePolicy.updateMode), and which containers' CPU limits it
 * writes (spec.resourcePolicy.containerPolicies: the "*" entry, else the
 * defaults, for every container, and the containers whose own entry says
 * otherwise). The rules themselves are the core's (core/vpa.h); this file
 * only reads the fields.
 *
 * A VPA is a custom resource: JSON only. As VPA itself, the first entry of
 * a containerName wins.
 */
#include "kube/decode/vpa.h"

#include <stdio.h>
#include <string.h>

/* One containerPolicies entry: its name and whether it writes the CPU limit. */
static hr_status policy(const hr_kctx *c, const hr_jpath *p, yyjson_val *e, const char **name,
                        bool *limits)
{
    if (!yyjson_is_obj(e))
        return hr_kfail(c, p, HR_E_INPUT, "expected an object, got %s", hr_jtype_str(e));
    hr_jpath pn = HR_JP_KEY(p, "containerName");
    hr_jpath pm = HR_JP_KEY(p, "mode");
    hr_jpath pv = HR_JP_KEY(p, "controlledValues");
    hr_jpath pr = HR_JP_KEY(p, "controlledResources");
    const char *mode, *values;
    size_t nl, ml, vl;
    const char *const *res;
    uint32_t n_res;
    bool has_res;
    hr_status st;
    if ((st = hr_jstr_ref(c, &pn, hr_jget(e, "containerName"), name, &nl)) ||
        (st = hr_jstr_ref(c, &pm, hr_jget(e, "mode"), &mode, &ml)) ||
        (st = hr_jstr_ref(c, &pv, hr_jget(e, "controlledValues"), &values, &vl)) ||
        (st = hr_jstr_array(c, &pr, hr_jget(e, "controlledResources"), &res, &n_res, &has_res)))
        return st;
    if (*name == NULL || nl == 0)
        return hr_kfail(c, &pn, HR_E_INPUT, "missing");
    if (strlen(*name) != nl || memchr(*name, ',', nl) != NULL)
        return hr_kfail(c, &pn, HR_E_INPUT, "not a container name");
    bool cpu = false;
    for (uint32_t i = 0; i < n_res; i++)
        cpu = cpu || strcmp(res[i], "cpu") == 0;
    *limits = hr_vpa_policy_limits(mode, values, has_res, cpu);
    return HR_OK;
}

static hr_status policies(const hr_kctx *c, yyjson_val *spec, hr_vpa *v)
{
    hr_jpath ps = HR_JP_KEY(NULL, "spec");
    hr_jpath prp = HR_JP_KEY(&ps, "resourcePolicy");
    hr_jpath pcp = HR_JP_KEY(&prp, "containerPolicies");
    yyjson_val *rp, *arr;
    void *items;
    hr_status st;
    if ((st = hr_jobj(c, &prp, hr_jget(spec, "resourcePolicy"), &rp)) ||
        (st = hr_jarr_items(c, &pcp, hr_jget(rp, "containerPolicies"), HR_KVPA_MAX_POLICIES,
                            "container policies", sizeof(bool), &arr, &items)))
        return st;
    v->dflt_limits = true;
    v->exceptions = "";
    if (arr == NULL)
        return HR_OK;
    size_t n = yyjson_arr_size(arr), i, max, total = 1;
    const char **names = hr_arena_calloc(c->a, n ? n : 1, sizeof *names);
    bool *lim = items;
    if (names == NULL)
        return hr_knomem(c);
    yyjson_val *e;
    bool star = false;
    yyjson_arr_foreach(arr, i, max, e)
    {
        hr_jpath pe = HR_JP_IDX(&pcp, i);
        if ((st = policy(c, &pe, e, &names[i], &lim[i])))
            return st;
        if (strcmp(names[i], "*") == 0 && !star) {
            star = true;
            v->dflt_limits = lim[i];
        }
        total += strlen(names[i]) + 1;
    }
    char *out = hr_arena_alloc(c->a, total), *w = out;
    if (out == NULL)
        return hr_knomem(c);
    for (i = 0; i < n; i++) {
        bool first = strcmp(names[i], "*") != 0;
        for (size_t j = 0; j < i && first; j++)
            first = strcmp(names[j], names[i]) != 0;
        if (!first || lim[i] == v->dflt_limits)
            continue;
        size_t l = strlen(names[i]);
        memcpy(w, names[i], l);
        w[l] = ',';
        w += l + 1;
    }
    *w = '\0';
    v->exceptions = out;
    return HR_OK;
}

hr_status hr_decode_vpa(yyjson_val *obj, hr_arena *a, hr_kvpa *out, hr_err *err)
{
    hr_kctx c = {a, err, "verticalpodautoscaler", NULL, NULL};
    memset(out, 0, sizeof *out);
    yyjson_val *meta;
    hr_status st = hr_decode_meta(&c, obj, true, &out->meta, &meta);
    if (st)
        return st;
    hr_jpath ps = HR_JP_KEY(NULL, "spec");
    hr_jpath pt = HR_JP_KEY(&ps, "targetRef");
    hr_jpath ptk = HR_JP_KEY(&pt, "kind");
    hr_jpath ptn = HR_JP_KEY(&pt, "name");
    hr_jpath pu = HR_JP_KEY(&ps, "updatePolicy");
    hr_jpath pum = HR_JP_KEY(&pu, "updateMode");
    yyjson_val *spec, *target, *upd;
    const char *kind, *mode;
    size_t kl, ml;
    if ((st = hr_jobj(&c, &ps, hr_jget(obj, "spec"), &spec)) ||
        (st = hr_jobj(&c, &pt, hr_jget(spec, "targetRef"), &target)) ||
        (st = hr_jstr_ref(&c, &ptk, hr_jget(target, "kind"), &kind, &kl)) ||
        (st = hr_jstr(&c, &ptn, hr_jget(target, "name"), "", &out->vpa.target_name)) ||
        (st = hr_jobj(&c, &pu, hr_jget(spec, "updatePolicy"), &upd)) ||
        (st = hr_jstr_ref(&c, &pum, hr_jget(upd, "updateMode"), &mode, &ml)) ||
        (st = policies(&c, spec, &out->vpa)))
        return st;
    out->vpa.target =
        (unsigned char)(kind != NULL && strlen(kind) == kl ? hr_vpa_target_of(kind) : HR_VT_OTHER);
    out->vpa.writes = hr_vpa_mode_writes(mode != NULL && strlen(mode) == ml ? mode : NULL);
    size_t wl = strlen(HR_VPA_WRITER_PREFIX) + strlen(out->meta.ns) + strlen(out->meta.name) + 2;
    char *w = hr_arena_alloc(a, wl);
    if (w == NULL)
        return hr_knomem(&c);
    snprintf(w, wl, "%s%s/%s", HR_VPA_WRITER_PREFIX, out->meta.ns, out->meta.name);
    out->vpa.writer = w;
    return HR_OK;
}
