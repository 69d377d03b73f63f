/*
 * pod.c — a Pod object into hr_kpod (design §3, §4).
 *
 * Container order matters to the core: init containers first (sidecars are
 * the ones with restartPolicy: Always), in spec order, then the app
 * containers — that is how the scheduler walks them when it books a pod.
 * Labels and annotations that decide management are read fail-closed: a
 * kube-headroom.dev/mode value other than "managed" opts the pod out, and a
 * max-cpu annotation that is not a CPU quantity is remembered as invalid
 * (eligibility then refuses the pod) rather than ignored.
 *
 * The admission webhook reads the pod of a CREATE request through here too
 * (hr_decode_pod_created), so the webhook and the controller see the same
 * fields the same way — resizePolicy included.
 *
 * hr_decode_pod_status reads, apart, what only the watch cache keeps: the
 * resize conditions of the status and our status annotation. It never
 * fails, because it runs after hr_decode_pod has accepted the object and
 * nothing in it may turn a good pod into a refused one.
 */
#include <string.h>

#include "core/grace.h"
#include "core/group.h"
#include "core/names.h"
#include "core/quantity.h"
#include "kube/decode/common.h"
#include "kube/decode/pod.h"
#include "kube/ktime.h"

#define ANN_MIRROR "kubernetes.io/config.mirror"

static hr_status decode_resources(const hr_kctx *c, const hr_jpath *p, yyjson_val *res,
                                  hr_container *ctr)
{
    yyjson_val *obj, *req, *lim;
    hr_status st = hr_jobj(c, p, res, &obj);
    if (st || !obj)
        return st;
    hr_jpath preq = HR_JP_KEY(p, "requests");
    hr_jpath plim = HR_JP_KEY(p, "limits");
    if ((st = hr_jobj(c, &preq, hr_jget(obj, "requests"), &req)) ||
        (st = hr_jobj(c, &plim, hr_jget(obj, "limits"), &lim)))
        return st;
    hr_jpath p1 = HR_JP_KEY(&preq, "cpu"), p2 = HR_JP_KEY(&preq, "memory");
    hr_jpath p3 = HR_JP_KEY(&plim, "cpu"), p4 = HR_JP_KEY(&plim, "memory");
    /* Only the CPU request is booked: the rest reads softly (design §15). */
    if ((st = hr_jquantity(c, &p1, hr_jget(req, "cpu"), HR_QK_CPU, &ctr->cpu_req)) ||
        (st = hr_jquantity_soft(c, &p2, hr_jget(req, "memory"), HR_QK_MEM, &ctr->mem_req)) ||
        (st = hr_jquantity_soft(c, &p3, hr_jget(lim, "cpu"), HR_QK_CPU, &ctr->cpu_lim)) ||
        (st = hr_jquantity_soft(c, &p4, hr_jget(lim, "memory"), HR_QK_MEM, &ctr->mem_lim)))
        return st;
    /* The API server defaults a missing request to the limit; a dump of
     * stored objects already has it, but a hand-written one may not (and
     * then a limit that does not read is a request that does not). */
    if (ctr->cpu_req == HR_NONE && ctr->cpu_lim == HR_UNBOUNDED)
        return hr_jquantity(c, &p3, hr_jget(lim, "cpu"), HR_QK_CPU, &ctr->cpu_lim);
    if (ctr->cpu_req == HR_NONE && ctr->cpu_lim != HR_NONE)
        ctr->cpu_req = ctr->cpu_lim;
    if (ctr->mem_req == HR_NONE && ctr->mem_lim != HR_NONE)
        ctr->mem_req = ctr->mem_lim;
    return HR_OK;
}

static hr_status decode_resize_policy(const hr_kctx *c, const hr_jpath *p, yyjson_val *v,
                                      bool *cpu_restart)
{
    yyjson_val *arr;
    hr_status st = hr_jarr(c, p, v, &arr);
    if (st || !arr)
        return st;
    size_t i, max;
    yyjson_val *e;
    yyjson_arr_foreach(arr, i, max, e)
    {
        hr_jpath pe = HR_JP_IDX(p, i);
        if (!yyjson_is_obj(e))
            return hr_kfail(c, &pe, HR_E_INPUT, "expected an object, got %s", hr_jtype_str(e));
        hr_jpath pr = HR_JP_KEY(&pe, "resourceName");
        hr_jpath pp = HR_JP_KEY(&pe, "restartPolicy");
        const char *rn, *rp;
        size_t rnl, rpl;
        if ((st = hr_jstr_ref(c, &pr, hr_jget(e, "resourceName"), &rn, &rnl)) ||
            (st = hr_jstr_ref(c, &pp, hr_jget(e, "restartPolicy"), &rp, &rpl)))
            return st;
        if (rn && rnl == 3 && memcmp(rn, "cpu", 3) == 0 && rp && rpl == 16 &&
            memcmp(rp, "RestartContainer", 16) == 0)
            *cpu_restart = true;
    }
    return HR_OK;
}

/* One container of spec.<field>[i]. */
static hr_status decode_container(const hr_kctx *c, const hr_jpath *p, yyjson_val *e, bool init,
                                  hr_container *ctr, const char **name)
{
    if (!yyjson_is_obj(e))
        return hr_kfail(c, p, HR_E_INPUT, "expected an object, got %s", hr_jtype_str(e));
    *ctr = (hr_container){HR_NONE, HR_NONE, HR_NONE, HR_NONE, HR_CTR_APP, false};
    hr_jpath pn = HR_JP_KEY(p, "name");
    hr_jpath pres = HR_JP_KEY(p, "resources");
    hr_jpath prp = HR_JP_KEY(p, "resizePolicy");
    hr_jpath prestart = HR_JP_KEY(p, "restartPolicy");
    hr_status st;
    if ((st = hr_jstr(c, &pn, hr_jget(e, "name"), "", name)) ||
        (st = decode_resources(c, &pres, hr_jget(e, "resources"), ctr)) ||
        (st = decode_resize_policy(c, &prp, hr_jget(e, "resizePolicy"), &ctr->cpu_restart)))
        return st;
    if (init) {
        const char *rp;
        size_t rpl;
        if ((st = hr_jstr_ref(c, &prestart, hr_jget(e, "restartPolicy"), &rp, &rpl)))
            return st;
        ctr->kind = rp && rpl == 6 && memcmp(rp, "Always", 6) == 0 ? HR_CTR_SIDECAR : HR_CTR_INIT;
    }
    return HR_OK;
}

/* Does statuses[] hold an entry named name with a resources object? */
static bool status_has_resources(yyjson_val *statuses, const char *name)
{
    size_t i, max;
    yyjson_val *e;
    yyjson_arr_foreach(statuses, i, max, e)
    {
        if (yyjson_equals_str(hr_jget(e, "name"), name))
            return yyjson_is_obj(hr_jget(e, "resources"));
    }
    return false;
}

static hr_status decode_owner(const hr_kctx *c, yyjson_val *meta, hr_kowner *o)
{
    *o = (hr_kowner){NULL, "", "", false, NULL};
    hr_jpath pm = HR_JP_KEY(NULL, "metadata");
    hr_jpath po = HR_JP_KEY(&pm, "ownerReferences");
    yyjson_val *arr;
    hr_status st = hr_jarr(c, &po, hr_jget(meta, "ownerReferences"), &arr);
    if (st || !arr)
        return st;
    yyjson_val *pick = NULL;
    size_t i, max, pick_i = 0;
    yyjson_val *e;
    yyjson_arr_foreach(arr, i, max, e)
    {
        if (!yyjson_is_obj(e)) {
            hr_jpath pe = HR_JP_IDX(&po, i);
            return hr_kfail(c, &pe, HR_E_INPUT, "expected an object, got %s", hr_jtype_str(e));
        }
        if (!pick) {
            pick = e;
            pick_i = i;
        }
        if (yyjson_get_bool(hr_jget(e, "controller"))) {
            pick = e;
            pick_i = i;
            o->controller = true;
            break;
        }
    }
    if (!pick)
        return HR_OK;
    hr_jpath pe = HR_JP_IDX(&po, pick_i);
    hr_jpath pk = HR_JP_KEY(&pe, "kind"), pn = HR_JP_KEY(&pe, "name");
    hr_jpath pv = HR_JP_KEY(&pe, "apiVersion"), pu = HR_JP_KEY(&pe, "uid");
    const char *av;
    size_t avl;
    if ((st = hr_jstr(c, &pk, hr_jget(pick, "kind"), NULL, &o->kind)) ||
        (st = hr_jstr(c, &pn, hr_jget(pick, "name"), "", &o->name)) ||
        (st = hr_jstr(c, &pu, hr_jget(pick, "uid"), NULL, &o->uid)) ||
        (st = hr_jstr_ref(c, &pv, hr_jget(pick, "apiVersion"), &av, &avl)))
        return st;
    if (!o->kind)
        return hr_kfail(c, &pk, HR_E_INPUT, "missing");
    /* "apps/v1" -> "apps"; "v1" (the core group) -> "". */
    const char *slash = av ? memchr(av, '/', avl) : NULL;
    if (slash) {
        o->api_group = hr_arena_strndup(c->a, av, (size_t)(slash - av));
        if (!o->api_group)
            return hr_knomem(c);
    }
    return HR_OK;
}

hr_status hr_kpod_group(const hr_kctx *c, const char *uniform_ann, hr_kpod *out)
{
    const char *ul = hr_labels_get(&out->meta.labels, HR_LABEL_GROUP_UNIFORM);
    bool uniform = hr_group_uniform_value(ul) || hr_group_uniform_value(uniform_ann);
    char key[768];
    out->pod.group = NULL;
    if (!hr_group_key(out->meta.ns, uniform, hr_labels_get(&out->meta.labels, HR_LABEL_GROUP_NAME),
                      out->owner.uid, out->owner.controller, key, sizeof key))
        return HR_OK;
    out->pod.group = hr_arena_strdup(c->a, key);
    return out->pod.group ? HR_OK : hr_knomem(c);
}

static hr_status decode_annotations(const hr_kctx *c, yyjson_val *meta, hr_pod *pod,
                                    const char **mode_ann, const char **uniform_ann,
                                    const char **grace_ann)
{
    hr_jpath pm = HR_JP_KEY(NULL, "metadata");
    hr_jpath pa = HR_JP_KEY(&pm, "annotations");
    yyjson_val *ann;
    hr_status st = hr_jobj(c, &pa, hr_jget(meta, "annotations"), &ann);
    if (st || !ann)
        return st;
    pod->mirror = hr_jget(ann, ANN_MIRROR) != NULL;
    hr_jpath pmode = HR_JP_KEY(&pa, HR_LABEL_MODE);
    size_t len;
    if ((st = hr_jstr_ref(c, &pmode, hr_jget(ann, HR_LABEL_MODE), mode_ann, &len)))
        return st;
    hr_jpath pgu = HR_JP_KEY(&pa, HR_LABEL_GROUP_UNIFORM);
    if ((st = hr_jstr_ref(c, &pgu, hr_jget(ann, HR_LABEL_GROUP_UNIFORM), uniform_ann, &len)))
        return st;
    hr_jpath pgr = HR_JP_KEY(&pa, HR_LABEL_GRACE);
    if ((st = hr_jstr_ref(c, &pgr, hr_jget(ann, HR_LABEL_GRACE), grace_ann, &len)))
        return st;
    yyjson_val *mc = hr_jget(ann, HR_ANN_MAX_CPU);
    if (mc && !yyjson_is_null(mc)) {
        int64_t v = 0;
        if (yyjson_is_str(mc) &&
            hr_cpu_parse_milli(yyjson_get_str(mc), yyjson_get_len(mc), &v) == HR_Q_OK)
            pod->max_cpu = v;
        else
            pod->max_cpu_invalid = true;
    }
    return HR_OK;
}

static uint8_t parse_phase(yyjson_val *v)
{
    if (!v || !yyjson_is_str(v))
        return HR_PHASE_PENDING;
    if (yyjson_equals_str(v, "Pending"))
        return HR_PHASE_PENDING;
    if (yyjson_equals_str(v, "Running"))
        return HR_PHASE_RUNNING;
    if (yyjson_equals_str(v, "Succeeded"))
        return HR_PHASE_SUCCEEDED;
    if (yyjson_equals_str(v, "Failed"))
        return HR_PHASE_FAILED;
    return HR_PHASE_UNKNOWN;
}

bool hr_kpod_mem_fixed(int64_t req, int64_t lim)
{
    if (lim == HR_NONE || lim == HR_UNBOUNDED)
        return false;
    return req == HR_NONE || req == lim;
}

bool hr_kpod_foreign_entry(const char *manager, size_t manager_len, const char *subresource,
                           size_t subresource_len)
{
    static const char ours[] = HR_FIELD_MANAGER;
    if (subresource == NULL || subresource_len != 6 || memcmp(subresource, "resize", 6) != 0)
        return false;
    return manager != NULL &&
           !(manager_len == sizeof ours - 1 && memcmp(manager, ours, sizeof ours - 1) == 0);
}

bool hr_kpod_fields_own_limit(yyjson_val *fields, const hr_kpod *p)
{
    yyjson_val *spec = yyjson_obj_get(fields, "f:spec");
    if (spec == NULL)
        return false;
    for (uint32_t k = 0; k < p->pod.n_ctr; k++) {
        const char *name = p->ctr_names[k];
        if (!hr_ctr_managed(&p->pod.ctr[k]) || strpbrk(name, "\\\"") != NULL)
            continue;
        char key[320];
        int n = snprintf(key, sizeof key, "k:{\"name\":\"%s\"}", name);
        if (n < 0 || (size_t)n >= sizeof key)
            continue;
        yyjson_val *list = yyjson_obj_get(
            spec, p->pod.ctr[k].kind == HR_CTR_SIDECAR ? "f:initContainers" : "f:containers");
        yyjson_val *res = yyjson_obj_get(yyjson_obj_getn(list, key, (size_t)n), "f:resources");
        if (yyjson_obj_get(yyjson_obj_get(res, "f:limits"), "f:cpu") != NULL)
            return true;
    }
    return false;
}

/* metadata.managedFields, read softly (a malformed entry owns nothing): the
 * first other resizer of a managed container's limits.cpu. */
static hr_status decode_foreign_writer(const hr_kctx *c, yyjson_val *meta, hr_kpod *out)
{
    yyjson_val *mf = yyjson_obj_get(meta, "managedFields");
    if (!yyjson_is_arr(mf))
        return HR_OK;
    size_t i, max;
    yyjson_val *e;
    yyjson_arr_foreach(mf, i, max, e)
    {
        yyjson_val *m = yyjson_obj_get(e, "manager");
        yyjson_val *sub = yyjson_obj_get(e, "subresource");
        if (!yyjson_is_str(m) || !yyjson_is_str(sub) ||
            !hr_kpod_foreign_entry(yyjson_get_str(m), yyjson_get_len(m), yyjson_get_str(sub),
                                   yyjson_get_len(sub)) ||
            !hr_kpod_fields_own_limit(yyjson_obj_get(e, "fieldsV1"), out))
            continue;
        out->pod.foreign_writer = hr_arena_strndup(c->a, yyjson_get_str(m), yyjson_get_len(m));
        return out->pod.foreign_writer ? HR_OK : hr_knomem(c);
    }
    return HR_OK;
}

/* What the startup grace reads of the status (design §2.12), softly: a
 * start time that does not read is absent, and only a Ready condition whose
 * status is "True" makes the pod Ready. Nothing here is booked, so nothing
 * here refuses the pod (design §15). */
static void decode_grace_status(yyjson_val *status, hr_pod *pod)
{
    yyjson_val *stt = hr_jget(status, "startTime");
    if (yyjson_is_str(stt)) {
        time_t t = hr_krfc3339(yyjson_get_str(stt), yyjson_get_len(stt));
        pod->start_s = t > 0 && (uint64_t)t <= UINT32_MAX ? (uint32_t)t : 0;
    }
    yyjson_val *conds = hr_jget(status, "conditions");
    size_t i, max;
    yyjson_val *e;
    yyjson_arr_foreach(conds, i, max, e)
    {
        if (yyjson_is_obj(e) && yyjson_equals_str(yyjson_obj_get(e, "type"), "Ready"))
            pod->ready = yyjson_equals_str(yyjson_obj_get(e, "status"), "True");
    }
}

/* created: the object of a CREATE request (no name or namespace yet). */
static hr_status decode_pod(yyjson_val *obj, hr_arena *a, bool created, hr_kpod *out, hr_err *err)
{
    hr_kctx c = {a, err, "pod", NULL, NULL};
    memset(out, 0, sizeof *out);
    out->pod = hr_pod_init();
    hr_pod *pod = &out->pod;
    yyjson_val *meta;
    hr_status st = created ? hr_decode_meta_unnamed(&c, obj, &out->meta, &meta)
                           : hr_decode_meta(&c, obj, true, &out->meta, &meta);
    if (st)
        return st;
    hr_jpath pm = HR_JP_KEY(NULL, "metadata");
    hr_jpath pdel = HR_JP_KEY(&pm, "deletionTimestamp");
    yyjson_val *del = hr_jget(meta, "deletionTimestamp");
    if (del && !yyjson_is_null(del) && !yyjson_is_str(del))
        return hr_kfail(&c, &pdel, HR_E_INPUT, "expected a string, got %s", hr_jtype_str(del));
    out->deleting = del && yyjson_is_str(del);
    if ((st = decode_owner(&c, meta, &out->owner)))
        return st;
    const char *mode_ann = NULL, *uniform_ann = NULL, *grace_ann = NULL;
    if ((st = decode_annotations(&c, meta, pod, &mode_ann, &uniform_ann, &grace_ann)) ||
        (st = hr_kpod_group(&c, uniform_ann, out)))
        return st;
    const char *mode_label = hr_labels_get(&out->meta.labels, HR_LABEL_MODE);
    /* Fail closed: only an absent mode or "managed" keeps the pod in. */
    pod->opted_out = (mode_label && strcmp(mode_label, HR_MODE_MANAGED) != 0) ||
                     (mode_ann && strcmp(mode_ann, HR_MODE_MANAGED) != 0);
    /* The startup grace (design §2.12): the annotation wins over the label. */
    pod->grace_opt = (uint8_t)hr_grace_opt_parse(
        grace_ann ? grace_ann : hr_labels_get(&out->meta.labels, HR_LABEL_GRACE));

    hr_jpath ps = HR_JP_KEY(NULL, "spec");
    yyjson_val *spec;
    if ((st = hr_jobj(&c, &ps, hr_jget(obj, "spec"), &spec)))
        return st;
    if (!spec)
        return hr_kfail(&c, &ps, HR_E_INPUT, "missing");

    hr_jpath pnn = HR_JP_KEY(&ps, "nodeName");
    if ((st = hr_jstr(&c, &pnn, hr_jget(spec, "nodeName"), NULL, &out->node_name)))
        return st;
    if (out->node_name && !out->node_name[0])
        out->node_name = NULL;
    pod->bound = out->node_name != NULL;

    hr_jpath pic = HR_JP_KEY(&ps, "initContainers");
    hr_jpath pac = HR_JP_KEY(&ps, "containers");
    yyjson_val *ic, *ac;
    if ((st = hr_jarr(&c, &pic, hr_jget(spec, "initContainers"), &ic)) ||
        (st = hr_jarr(&c, &pac, hr_jget(spec, "containers"), &ac)))
        return st;
    if (!ac)
        return hr_kfail(&c, &pac, HR_E_INPUT, "missing");
    size_t n_ic = ic ? yyjson_arr_size(ic) : 0;
    size_t n_ac = yyjson_arr_size(ac);
    if (n_ac == 0)
        return hr_kfail(&c, &pac, HR_E_INPUT, "empty");
    if (n_ic + n_ac > 4096)
        return hr_kfail(&c, &pac, HR_E_INPUT, "%zu containers: more than 4096", n_ic + n_ac);
    size_t n = n_ic + n_ac;
    hr_container *ctr = hr_arena_alloc(a, n * sizeof *ctr);
    const char **names = hr_arena_alloc(a, n * sizeof *names);
    if (!ctr || !names)
        return hr_knomem(&c);
    size_t i, max, k = 0;
    yyjson_val *e;
    if (ic) {
        yyjson_arr_foreach(ic, i, max, e)
        {
            hr_jpath pe = HR_JP_IDX(&pic, i);
            if ((st = decode_container(&c, &pe, e, true, &ctr[k], &names[k])))
                return st;
            k++;
        }
    }
    yyjson_arr_foreach(ac, i, max, e)
    {
        hr_jpath pe = HR_JP_IDX(&pac, i);
        if ((st = decode_container(&c, &pe, e, false, &ctr[k], &names[k])))
            return st;
        k++;
    }
    pod->ctr = ctr;
    pod->n_ctr = (uint32_t)n;
    out->ctr_names = names;
    if ((st = decode_foreign_writer(&c, meta, out)))
        return st;

    hr_jpath pov = HR_JP_KEY(&ps, "overhead");
    hr_jpath povc = HR_JP_KEY(&pov, "cpu");
    yyjson_val *ov;
    if ((st = hr_jobj(&c, &pov, hr_jget(spec, "overhead"), &ov)) ||
        (st = hr_jquantity(&c, &povc, hr_jget(ov, "cpu"), HR_QK_CPU, &pod->overhead_cpu)))
        return st;

    hr_jpath pr = HR_JP_KEY(&ps, "resources");
    yyjson_val *pres;
    if ((st = hr_jobj(&c, &pr, hr_jget(spec, "resources"), &pres)))
        return st;
    pod->pod_resources = pres != NULL;
    if (pres) {
        hr_jpath prr = HR_JP_KEY(&pr, "requests");
        hr_jpath prl = HR_JP_KEY(&pr, "limits");
        hr_jpath prrc = HR_JP_KEY(&prr, "cpu");
        hr_jpath prlc = HR_JP_KEY(&prl, "cpu");
        hr_jpath prrm = HR_JP_KEY(&prr, "memory");
        hr_jpath prlm = HR_JP_KEY(&prl, "memory");
        yyjson_val *rr, *rl;
        int64_t lim = HR_NONE, mreq = HR_NONE, mlim = HR_NONE;
        if ((st = hr_jobj(&c, &prr, hr_jget(pres, "requests"), &rr)) ||
            (st = hr_jobj(&c, &prl, hr_jget(pres, "limits"), &rl)) ||
            (st = hr_jquantity(&c, &prrc, hr_jget(rr, "cpu"), HR_QK_CPU, &pod->pod_cpu_req)) ||
            (st = hr_jquantity_soft(&c, &prlc, hr_jget(rl, "cpu"), HR_QK_CPU, &lim)) ||
            (st = hr_jquantity_soft(&c, &prrm, hr_jget(rr, "memory"), HR_QK_MEM, &mreq)) ||
            (st = hr_jquantity_soft(&c, &prlm, hr_jget(rl, "memory"), HR_QK_MEM, &mlim)))
            return st;
        /* As for containers, a pod-level request defaults to the limit. */
        if (pod->pod_cpu_req == HR_NONE && lim == HR_UNBOUNDED)
            return hr_jquantity(&c, &prlc, hr_jget(rl, "cpu"), HR_QK_CPU, &lim);
        if (pod->pod_cpu_req == HR_NONE)
            pod->pod_cpu_req = lim;
        pod->pod_cpu_lim = lim;
        pod->pod_mem_fixed = hr_kpod_mem_fixed(mreq, mlim);
    }

    hr_jpath pos = HR_JP_KEY(&ps, "os");
    hr_jpath posn = HR_JP_KEY(&pos, "name");
    yyjson_val *os;
    const char *osname;
    size_t osl;
    if ((st = hr_jobj(&c, &pos, hr_jget(spec, "os"), &os)) ||
        (st = hr_jstr_ref(&c, &posn, hr_jget(os, "name"), &osname, &osl)))
        return st;
    pod->windows = osname && osl == 7 && memcmp(osname, "windows", 7) == 0;

    hr_jpath pst = HR_JP_KEY(NULL, "status");
    hr_jpath pph = HR_JP_KEY(&pst, "phase");
    hr_jpath pcs = HR_JP_KEY(&pst, "containerStatuses");
    hr_jpath pis = HR_JP_KEY(&pst, "initContainerStatuses");
    yyjson_val *status, *cs, *is;
    const char *phase;
    size_t phl;
    if ((st = hr_jobj(&c, &pst, hr_jget(obj, "status"), &status)) ||
        (st = hr_jstr_ref(&c, &pph, hr_jget(status, "phase"), &phase, &phl)) ||
        (st = hr_jarr(&c, &pcs, hr_jget(status, "containerStatuses"), &cs)) ||
        (st = hr_jarr(&c, &pis, hr_jget(status, "initContainerStatuses"), &is)))
        return st;
    pod->phase = parse_phase(hr_jget(status, "phase"));
    decode_grace_status(status, pod);

    /* Only a Running pod's kubelet must prove it can resize (design §4). */
    pod->status_resources = true;
    if (pod->phase == HR_PHASE_RUNNING) {
        for (k = 0; k < n; k++) {
            if (!hr_ctr_resizable(&ctr[k]))
                continue;
            yyjson_val *list = ctr[k].kind == HR_CTR_SIDECAR ? is : cs;
            if (!list || !status_has_resources(list, names[k])) {
                pod->status_resources = false;
                break;
            }
        }
    }
    return HR_OK;
}

hr_status hr_decode_pod(yyjson_val *obj, hr_arena *a, hr_kpod *out, hr_err *err)
{
    return decode_pod(obj, a, false, out, err);
}

hr_status hr_decode_pod_created(yyjson_val *obj, hr_arena *a, hr_kpod *out, hr_err *err)
{
    return decode_pod(obj, a, true, out, err);
}

/* A string field copied into the arena, "" when absent or not a string;
 * NULL only when the arena is full. */
static const char *str_or_empty(yyjson_val *v, hr_arena *a)
{
    return yyjson_is_str(v) ? hr_arena_strndup(a, yyjson_get_str(v), yyjson_get_len(v)) : "";
}

bool hr_decode_pod_undecodable(yyjson_val *obj, hr_arena *a, const char *why, hr_kpod *out)
{
    memset(out, 0, sizeof *out);
    out->pod = hr_pod_init();
    out->pod.undecodable = true;
    out->owner = (hr_kowner){NULL, "", "", false, NULL};
    yyjson_val *meta = yyjson_obj_get(obj, "metadata");
    out->meta.ns = str_or_empty(yyjson_obj_get(meta, "namespace"), a);
    out->meta.name = str_or_empty(yyjson_obj_get(meta, "name"), a);
    out->meta.uid = str_or_empty(yyjson_obj_get(meta, "uid"), a);
    out->meta.resource_version = str_or_empty(yyjson_obj_get(meta, "resourceVersion"), a);
    out->undecodable = why ? hr_arena_strdup(a, why) : NULL;
    if (!out->meta.ns || !out->meta.name || !out->meta.uid || !out->meta.resource_version ||
        (why && !out->undecodable))
        return false;
    out->deleting = yyjson_is_str(yyjson_obj_get(meta, "deletionTimestamp"));

    /* spec.nodeName: absent or null (or "") is unbound, a string is the
     * node, anything else (or a spec that is not an object) is unreadable:
     * the pod may be bound to any node. */
    yyjson_val *spec = yyjson_obj_get(obj, "spec");
    yyjson_val *nn = yyjson_obj_get(spec, "nodeName");
    if (yyjson_is_str(nn) && yyjson_get_len(nn) > 0) {
        out->node_name = hr_arena_strndup(a, yyjson_get_str(nn), yyjson_get_len(nn));
        if (!out->node_name)
            return false;
    } else if ((spec != NULL && !yyjson_is_null(spec) && !yyjson_is_obj(spec)) ||
               (nn != NULL && !yyjson_is_null(nn) && !yyjson_is_str(nn))) {
        out->node_unreadable = true;
    }
    out->pod.bound = out->node_name != NULL || out->node_unreadable;
    yyjson_val *status = yyjson_obj_get(obj, "status");
    out->pod.phase = parse_phase(yyjson_is_obj(status) ? yyjson_obj_get(status, "phase") : NULL);
    return true;
}

void hr_decode_pod_status(yyjson_val *obj, hr_kpod_status *out)
{
    *out = (hr_kpod_status){HR_RS_NONE, false, NULL, 0};
    yyjson_val *note = yyjson_obj_get(
        yyjson_obj_get(yyjson_obj_get(obj, "metadata"), "annotations"), HR_ANN_STATUS);
    if (yyjson_is_str(note)) {
        out->status_note = yyjson_get_str(note);
        out->status_note_len = yyjson_get_len(note);
    }
    yyjson_val *conds = yyjson_obj_get(yyjson_obj_get(obj, "status"), "conditions");
    size_t i, max;
    yyjson_val *e;
    yyjson_arr_foreach(conds, i, max, e)
    {
        yyjson_val *t = yyjson_obj_get(e, "type");
        if (yyjson_equals_str(t, "PodResizePending")) {
            yyjson_val *r = yyjson_obj_get(e, "reason");
            if (yyjson_equals_str(r, "Infeasible"))
                out->resize = HR_RS_INFEASIBLE;
            else if (yyjson_equals_str(r, "Deferred"))
                out->resize = HR_RS_DEFERRED;
        } else if (yyjson_equals_str(t, "PodResizeInProgress")) {
            out->resizing = true;
        }
    }
}
