/*
 * pbpod.c — a Pod in Kubernetes' protobuf encoding into the same hr_kpod
 * and hr_kpod_status that pod.c gives for its JSON (design §3, §4; pb.h).
 *
 * Same fields, same rules, same order: init containers (sidecars are the
 * ones with restartPolicy Always) first in spec order, then the app
 * containers; a missing request defaults to the limit; mode, max-cpu and
 * the mirror annotation read fail-closed; a Running pod's kubelet must
 * report resources for every resizable container. Only the fields named
 * below are looked at; everything else (volumes, probes, env, most of the
 * status, every managedFields entry but another manager's resize) is
 * skipped by its length.
 *
 * Field numbers (k8s.io/api core/v1 and apimachinery meta/v1
 * generated.proto): Pod metadata 1, spec 2, status 3; ObjectMeta
 * deletionTimestamp 9, annotations 12, ownerReferences 13; OwnerReference
 * kind 1, name 3, apiVersion 5, controller 6; PodSpec containers 2,
 * nodeName 10, initContainers 20, overhead 32, os 36, resources 40;
 * Container name 1, resources 8, resizePolicy 23, restartPolicy 24;
 * ResourceRequirements limits 1, requests 2; ContainerResizePolicy
 * resourceName 1, restartPolicy 2; PodOS name 1; PodStatus phase 1,
 * conditions 2, containerStatuses 8, initContainerStatuses 10;
 * startTime 7 (Time: seconds 1); PodCondition type 1, status 2, reason 5;
 * ContainerStatus name 1, resources 11;
 * ObjectMeta managedFields 17; ManagedFieldsEntry manager 1, fieldsV1 7,
 * subresource 8; FieldsV1 Raw 1 (JSON, parsed only for another manager's
 * resize: design §4, foreign-writer).
 */
#include <string.h>

#include "core/grace.h"
#include "core/names.h"
#include "core/quantity.h"
#include "kube/decode/pbmeta.h"
#include "kube/decode/pbpod.h"

#define ANN_MIRROR "kubernetes.io/config.mirror"
#define MAX_CONTAINERS 4096

/* A quantity's text seen in a map, parsed once the map is read. */
typedef struct qtext {
    const uint8_t *s; /* NULL: not there */
    size_t len;
} qtext;

static hr_status qparse(const hr_kctx *c, const hr_jpath *p, const char *key, qtext q,
                        hr_qkind kind, int64_t *out)
{
    *out = HR_NONE;
    if (!q.s)
        return HR_OK;
    hr_jpath pk = HR_JP_KEY(p, key);
    return hr_kquantity(c, &pk, (const char *)q.s, q.len, kind, out);
}

/* The same for what is not booked (pod.c, design §15): HR_UNBOUNDED when it
 * does not read. */
static hr_status qsoft(qtext q, hr_qkind kind, int64_t *out)
{
    *out = HR_NONE;
    return q.s ? hr_kquantity_soft((const char *)q.s, q.len, kind, out) : HR_OK;
}

/* One entry of a map<string, Quantity>: into cpu or memory by its key. */
static hr_status qentry(const hr_kctx *c, const hr_jpath *p, hr_pbr *r, hr_pbwt wt, qtext *cpu,
                        qtext *mem)
{
    hr_pbr e;
    hr_status st = hr_pb_sub_at(c, p, r, wt, &e);
    if (st)
        return st;
    const uint8_t *k, *v;
    size_t kl, vl;
    if (!hr_pb_map_entry(e, true, &k, &kl, &v, &vl))
        return hr_pbfail(c, p);
    if (hr_pb_eq(k, kl, "cpu"))
        *cpu = (qtext){v, vl};
    else if (mem && hr_pb_eq(k, kl, "memory"))
        *mem = (qtext){v, vl};
    return HR_OK;
}

/* ResourceRequirements: the cpu and memory of limits (1) and requests (2). */
typedef struct res_text {
    qtext req_cpu, req_mem, lim_cpu, lim_mem;
} res_text;

static hr_status read_resources(const hr_kctx *c, const hr_jpath *p, hr_pbr r, bool mem,
                                res_text *t)
{
    *t = (res_text){{NULL, 0}, {NULL, 0}, {NULL, 0}, {NULL, 0}};
    hr_jpath plim = HR_JP_KEY(p, "limits"), preq = HR_JP_KEY(p, "requests");
    hr_status st;
    while (hr_pbr_more(&r)) {
        uint32_t f;
        hr_pbwt wt;
        if (!hr_pb_tag(&r, &f, &wt))
            return hr_pbfail(c, p);
        if (f == 1)
            st = qentry(c, &plim, &r, wt, &t->lim_cpu, mem ? &t->lim_mem : NULL);
        else if (f == 2)
            st = qentry(c, &preq, &r, wt, &t->req_cpu, mem ? &t->req_mem : NULL);
        else
            st = hr_pb_skip_at(c, p, &r, wt);
        if (st)
            return st;
    }
    return HR_OK;
}

static hr_status decode_resources(const hr_kctx *c, const hr_jpath *p, hr_pbr r, hr_container *ctr)
{
    res_text t;
    hr_status st = read_resources(c, p, r, true, &t);
    if (st)
        return st;
    /* In the order pod.c reads them, so the first bad one is named. */
    hr_jpath preq = HR_JP_KEY(p, "requests");
    hr_jpath plim = HR_JP_KEY(p, "limits");
    if ((st = qparse(c, &preq, "cpu", t.req_cpu, HR_QK_CPU, &ctr->cpu_req)) ||
        (st = qsoft(t.req_mem, HR_QK_MEM, &ctr->mem_req)) ||
        (st = qsoft(t.lim_cpu, HR_QK_CPU, &ctr->cpu_lim)) ||
        (st = qsoft(t.lim_mem, HR_QK_MEM, &ctr->mem_lim)))
        return st;
    if (ctr->cpu_req == HR_NONE && ctr->cpu_lim == HR_UNBOUNDED)
        return qparse(c, &plim, "cpu", t.lim_cpu, HR_QK_CPU, &ctr->cpu_lim);
    if (ctr->cpu_req == HR_NONE && ctr->cpu_lim != HR_NONE)
        ctr->cpu_req = ctr->cpu_lim;
    if (ctr->mem_req == HR_NONE && ctr->mem_lim != HR_NONE)
        ctr->mem_req = ctr->mem_lim;
    return HR_OK;
}

/* One ContainerResizePolicy: is it cpu: RestartContainer? */
static hr_status resize_policy(const hr_kctx *c, const hr_jpath *p, hr_pbr r, bool *cpu_restart)
{
    const uint8_t *rn = NULL, *rp = NULL;
    size_t rnl = 0, rpl = 0;
    hr_status st;
    while (hr_pbr_more(&r)) {
        uint32_t f;
        hr_pbwt wt;
        if (!hr_pb_tag(&r, &f, &wt))
            return hr_pbfail(c, p);
        hr_jpath pf = HR_JP_KEY(p, f == 1 ? "resourceName" : "restartPolicy");
        if (f == 1)
            st = hr_pb_bytes_at(c, &pf, &r, wt, &rn, &rnl);
        else if (f == 2)
            st = hr_pb_bytes_at(c, &pf, &r, wt, &rp, &rpl);
        else
            st = hr_pb_skip_at(c, p, &r, wt);
        if (st)
            return st;
    }
    if (rn && rp && hr_pb_eq(rn, rnl, "cpu") && hr_pb_eq(rp, rpl, "RestartContainer"))
        *cpu_restart = true;
    return HR_OK;
}

static hr_status decode_container(const hr_kctx *c, const hr_jpath *p, hr_pbr r, bool init,
                                  hr_container *ctr, const char **name)
{
    *ctr = (hr_container){HR_NONE, HR_NONE, HR_NONE, HR_NONE, HR_CTR_APP, false};
    *name = "";
    hr_jpath pn = HR_JP_KEY(p, "name");
    hr_jpath pres = HR_JP_KEY(p, "resources");
    hr_jpath prp = HR_JP_KEY(p, "resizePolicy");
    hr_jpath prestart = HR_JP_KEY(p, "restartPolicy");
    const uint8_t *rp = NULL;
    size_t rpl = 0;
    hr_pbr res = hr_pbr_of(NULL, 0);
    uint32_t i_rp = 0;
    hr_status st;
    while (hr_pbr_more(&r)) {
        uint32_t f;
        hr_pbwt wt;
        if (!hr_pb_tag(&r, &f, &wt))
            return hr_pbfail(c, p);
        switch (f) {
        case 1: st = hr_pb_str_at(c, &pn, &r, wt, name); break;
        case 8: st = hr_pb_sub_at(c, &pres, &r, wt, &res); break;
        case 23: {
            hr_jpath pe = HR_JP_IDX(&prp, i_rp++);
            hr_pbr e;
            if (!(st = hr_pb_sub_at(c, &pe, &r, wt, &e)))
                st = resize_policy(c, &pe, e, &ctr->cpu_restart);
            break;
        }
        case 24: st = hr_pb_bytes_at(c, &prestart, &r, wt, &rp, &rpl); break;
        default: st = hr_pb_skip_at(c, p, &r, wt); break;
        }
        if (st)
            return st;
    }
    if ((st = decode_resources(c, &pres, res, ctr)))
        return st;
    if (init)
        ctr->kind = rp && hr_pb_eq(rp, rpl, "Always") ? HR_CTR_SIDECAR : HR_CTR_INIT;
    return HR_OK;
}

/* The owner: the reference with controller true, else the first. */
static hr_status decode_owner(const hr_kctx *c, const hr_jpath *p, hr_pbr r, hr_kowner *o)
{
    const uint8_t *kind = NULL, *name = NULL, *av = NULL, *uid = NULL;
    size_t kl = 0, nl = 0, avl = 0, ul = 0;
    uint64_t ctl = 0;
    hr_status st;
    hr_jpath pk = HR_JP_KEY(p, "kind");
    while (hr_pbr_more(&r)) {
        uint32_t f;
        hr_pbwt wt;
        if (!hr_pb_tag(&r, &f, &wt))
            return hr_pbfail(c, p);
        hr_jpath pf = HR_JP_KEY(p, f == 3   ? "name"
                                   : f == 4 ? "uid"
                                   : f == 5 ? "apiVersion"
                                            : "controller");
        switch (f) {
        case 1: st = hr_pb_bytes_at(c, &pk, &r, wt, &kind, &kl); break;
        case 3: st = hr_pb_bytes_at(c, &pf, &r, wt, &name, &nl); break;
        case 4: st = hr_pb_bytes_at(c, &pf, &r, wt, &uid, &ul); break;
        case 5: st = hr_pb_bytes_at(c, &pf, &r, wt, &av, &avl); break;
        case 6: st = hr_pb_varint_at(c, &pf, &r, wt, &ctl); break;
        default: st = hr_pb_skip_at(c, p, &r, wt); break;
        }
        if (st)
            return st;
    }
    if (!kind)
        return hr_kfail(c, &pk, HR_E_INPUT, "missing");
    o->controller = ctl != 0;
    o->kind = hr_arena_strndup(c->a, (const char *)kind, kl);
    o->name = hr_arena_strndup(c->a, name ? (const char *)name : "", nl);
    const uint8_t *slash = av ? memchr(av, '/', avl) : NULL;
    o->api_group = slash ? hr_arena_strndup(c->a, (const char *)av, (size_t)(slash - av)) : "";
    o->uid = uid ? hr_arena_strndup(c->a, (const char *)uid, ul) : NULL;
    if (!o->kind || !o->name || !o->api_group || (uid && !o->uid))
        return hr_knomem(c);
    return HR_OK;
}

/* Is this OwnerReference's controller field true? (Malformed: no; the
 * full reading that follows for the one picked reports it.) */
static bool owner_is_controller(hr_pbr r)
{
    bool ctl = false;
    while (hr_pbr_more(&r)) {
        uint32_t f;
        hr_pbwt wt;
        uint64_t v;
        if (!hr_pb_tag(&r, &f, &wt))
            return false;
        if (f == 6 && wt == HR_PB_VARINT) {
            if (!hr_pb_varint(&r, &v))
                return false;
            ctl = v != 0;
        } else if (!hr_pb_skip(&r, wt)) {
            return false;
        }
    }
    return ctl;
}

/* metadata: deletionTimestamp, annotations, ownerReferences. */
static hr_status decode_pod_meta(const hr_kctx *c, hr_pbr m, hr_kpod *out, hr_kpod_status *ps,
                                 const char **mode_ann, const char **uniform_ann,
                                 const char **grace_ann)
{
    hr_pod *pod = &out->pod;
    hr_jpath pm = HR_JP_KEY(NULL, "metadata");
    hr_jpath pa = HR_JP_KEY(&pm, "annotations");
    hr_jpath po = HR_JP_KEY(&pm, "ownerReferences");
    hr_jpath pdel = HR_JP_KEY(&pm, "deletionTimestamp");
    hr_pbr pick = hr_pbr_of(NULL, 0);
    bool picked = false, pick_ctl = false;
    uint32_t i_owner = 0, pick_i = 0;
    const uint8_t *maxcpu = NULL;
    size_t maxcpu_l = 0;
    hr_status st;
    while (hr_pbr_more(&m)) {
        uint32_t f;
        hr_pbwt wt;
        if (!hr_pb_tag(&m, &f, &wt))
            return hr_pbfail(c, &pm);
        if (f == 9) {
            hr_pbr t;
            if ((st = hr_pb_sub_at(c, &pdel, &m, wt, &t)))
                return st;
            out->deleting = true;
        } else if (f == 12) {
            hr_pbr e;
            const uint8_t *k, *v;
            size_t kl, vl;
            if ((st = hr_pb_sub_at(c, &pa, &m, wt, &e)))
                return st;
            if (!hr_pb_map_entry(e, false, &k, &kl, &v, &vl))
                return hr_pbfail(c, &pa);
            if (hr_pb_eq(k, kl, ANN_MIRROR)) {
                pod->mirror = true;
            } else if (hr_pb_eq(k, kl, HR_LABEL_MODE)) {
                if (!(*mode_ann = hr_arena_strndup(c->a, (const char *)v, vl)))
                    return hr_knomem(c);
            } else if (hr_pb_eq(k, kl, HR_LABEL_GROUP_UNIFORM)) {
                if (!(*uniform_ann = hr_arena_strndup(c->a, (const char *)v, vl)))
                    return hr_knomem(c);
            } else if (hr_pb_eq(k, kl, HR_LABEL_GRACE)) {
                if (!(*grace_ann = hr_arena_strndup(c->a, (const char *)v, vl)))
                    return hr_knomem(c);
            } else if (hr_pb_eq(k, kl, HR_ANN_MAX_CPU)) {
                maxcpu = v;
                maxcpu_l = vl;
            } else if (ps && hr_pb_eq(k, kl, HR_ANN_STATUS)) {
                ps->status_note = (const char *)v;
                ps->status_note_len = vl;
            }
        } else if (f == 13) {
            hr_jpath pe = HR_JP_IDX(&po, i_owner);
            hr_pbr e;
            if ((st = hr_pb_sub_at(c, &pe, &m, wt, &e)))
                return st;
            if (!pick_ctl && (!picked || owner_is_controller(e))) {
                pick_ctl = picked ? true : owner_is_controller(e);
                pick = e;
                pick_i = i_owner;
                picked = true;
            }
            i_owner++;
        } else if ((st = hr_pb_skip_at(c, &pm, &m, wt))) {
            return st;
        }
    }
    if (maxcpu) {
        int64_t v = 0;
        if (hr_cpu_parse_milli((const char *)maxcpu, maxcpu_l, &v) == HR_Q_OK)
            pod->max_cpu = v;
        else
            pod->max_cpu_invalid = true;
    }
    if (!picked)
        return HR_OK;
    hr_jpath pe = HR_JP_IDX(&po, pick_i);
    return decode_owner(c, &pe, pick, &out->owner);
}

static uint8_t parse_phase(const uint8_t *s, size_t n)
{
    if (!s || hr_pb_eq(s, n, "Pending"))
        return HR_PHASE_PENDING;
    if (hr_pb_eq(s, n, "Running"))
        return HR_PHASE_RUNNING;
    if (hr_pb_eq(s, n, "Succeeded"))
        return HR_PHASE_SUCCEEDED;
    if (hr_pb_eq(s, n, "Failed"))
        return HR_PHASE_FAILED;
    return HR_PHASE_UNKNOWN;
}

/* Count spec's init containers (20) and containers (2), as a first look. */
static hr_status count_containers(const hr_kctx *c, const hr_jpath *ps, hr_pbr r, size_t *n_ic,
                                  size_t *n_ac)
{
    *n_ic = *n_ac = 0;
    while (hr_pbr_more(&r)) {
        uint32_t f;
        hr_pbwt wt;
        if (!hr_pb_tag(&r, &f, &wt) || !hr_pb_skip(&r, wt))
            return hr_pbfail(c, ps);
        if (f == 20)
            (*n_ic)++;
        else if (f == 2)
            (*n_ac)++;
    }
    return HR_OK;
}

static hr_status decode_spec(const hr_kctx *c, hr_pbr spec, hr_kpod *out)
{
    hr_pod *pod = &out->pod;
    hr_jpath ps = HR_JP_KEY(NULL, "spec");
    hr_jpath pic = HR_JP_KEY(&ps, "initContainers");
    hr_jpath pac = HR_JP_KEY(&ps, "containers");
    size_t n_ic, n_ac;
    hr_status st = count_containers(c, &ps, spec, &n_ic, &n_ac);
    if (st)
        return st;
    if (n_ac == 0)
        return hr_kfail(c, &pac, HR_E_INPUT, "missing");
    if (n_ic + n_ac > MAX_CONTAINERS)
        return hr_kfail(c, &pac, HR_E_INPUT, "%zu containers: more than 4096", n_ic + n_ac);
    size_t n = n_ic + n_ac;
    hr_container *ctr = hr_arena_alloc(c->a, n * sizeof *ctr);
    const char **names = hr_arena_alloc(c->a, n * sizeof *names);
    if (!ctr || !names)
        return hr_knomem(c);
    size_t ki = 0, ka = 0;
    qtext ov = {NULL, 0};
    hr_pbr res = hr_pbr_of(NULL, 0), os = hr_pbr_of(NULL, 0);
    bool has_res = false;
    hr_jpath pnn = HR_JP_KEY(&ps, "nodeName");
    hr_jpath pov = HR_JP_KEY(&ps, "overhead");
    hr_jpath pr = HR_JP_KEY(&ps, "resources");
    hr_jpath pos = HR_JP_KEY(&ps, "os");
    while (hr_pbr_more(&spec)) {
        uint32_t f;
        hr_pbwt wt;
        if (!hr_pb_tag(&spec, &f, &wt))
            return hr_pbfail(c, &ps);
        hr_pbr e;
        switch (f) {
        case 20:
        case 2: {
            bool init = f == 20;
            size_t k = init ? ki++ : n_ic + ka++;
            hr_jpath pe = HR_JP_IDX(init ? &pic : &pac, init ? k : k - n_ic);
            if (!(st = hr_pb_sub_at(c, &pe, &spec, wt, &e)))
                st = decode_container(c, &pe, e, init, &ctr[k], &names[k]);
            break;
        }
        case 10: st = hr_pb_str_at(c, &pnn, &spec, wt, &out->node_name); break;
        case 32: st = qentry(c, &pov, &spec, wt, &ov, NULL); break;
        case 36: st = hr_pb_sub_at(c, &pos, &spec, wt, &os); break;
        case 40:
            st = hr_pb_sub_at(c, &pr, &spec, wt, &res);
            has_res = true;
            break;
        default: st = hr_pb_skip_at(c, &ps, &spec, wt); break;
        }
        if (st)
            return st;
    }
    pod->ctr = ctr;
    pod->n_ctr = (uint32_t)n;
    out->ctr_names = names;
    if (out->node_name && !out->node_name[0])
        out->node_name = NULL;
    pod->bound = out->node_name != NULL;
    if ((st = qparse(c, &pov, "cpu", ov, HR_QK_CPU, &pod->overhead_cpu)))
        return st;
    pod->pod_resources = has_res;
    if (has_res) {
        res_text t;
        int64_t lim = HR_NONE;
        hr_jpath prr = HR_JP_KEY(&pr, "requests");
        hr_jpath prl = HR_JP_KEY(&pr, "limits");
        int64_t mreq = HR_NONE, mlim = HR_NONE;
        if ((st = read_resources(c, &pr, res, true, &t)) ||
            (st = qparse(c, &prr, "cpu", t.req_cpu, HR_QK_CPU, &pod->pod_cpu_req)) ||
            (st = qsoft(t.lim_cpu, HR_QK_CPU, &lim)) || (st = qsoft(t.req_mem, HR_QK_MEM, &mreq)) ||
            (st = qsoft(t.lim_mem, HR_QK_MEM, &mlim)))
            return st;
        if (pod->pod_cpu_req == HR_NONE && lim == HR_UNBOUNDED)
            return qparse(c, &prl, "cpu", t.lim_cpu, HR_QK_CPU, &lim);
        if (pod->pod_cpu_req == HR_NONE)
            pod->pod_cpu_req = lim;
        pod->pod_cpu_lim = lim;
        pod->pod_mem_fixed = hr_kpod_mem_fixed(mreq, mlim);
    }
    const uint8_t *osname = NULL;
    size_t osl = 0;
    hr_jpath posn = HR_JP_KEY(&pos, "name");
    while (hr_pbr_more(&os)) {
        uint32_t f;
        hr_pbwt wt;
        if (!hr_pb_tag(&os, &f, &wt))
            return hr_pbfail(c, &pos);
        st = f == 1 ? hr_pb_bytes_at(c, &posn, &os, wt, &osname, &osl)
                    : hr_pb_skip_at(c, &pos, &os, wt);
        if (st)
            return st;
    }
    pod->windows = osname && hr_pb_eq(osname, osl, "windows");
    return HR_OK;
}

/* The first ContainerStatus in list field `field` of status named name:
 * does it carry resources (11)? */
static bool status_has_resources(hr_pbr status, uint32_t field, const char *name)
{
    size_t nl = strlen(name);
    while (hr_pbr_more(&status)) {
        uint32_t f;
        hr_pbwt wt;
        hr_pbr e;
        if (!hr_pb_tag(&status, &f, &wt))
            return false;
        if (f != field || wt != HR_PB_LEN) {
            if (!hr_pb_skip(&status, wt))
                return false;
            continue;
        }
        if (!hr_pb_sub(&status, &e))
            return false;
        const uint8_t *n = NULL;
        size_t l = 0;
        bool res = false;
        while (hr_pbr_more(&e)) {
            uint32_t g;
            hr_pbwt gw;
            if (!hr_pb_tag(&e, &g, &gw))
                return false;
            if (g == 1 && gw == HR_PB_LEN) {
                if (!hr_pb_len(&e, &n, &l))
                    return false;
            } else {
                if (g == 11 && gw == HR_PB_LEN)
                    res = true;
                if (!hr_pb_skip(&e, gw))
                    return false;
            }
        }
        if (n && l == nl && memcmp(n, name, nl) == 0)
            return res;
    }
    return false;
}

/* One PodCondition into the resize verdict (hr_decode_pod_status's rule;
 * ps may be NULL) and the Ready condition (pod.c's decode_grace_status). */
static void condition(hr_pbr r, hr_kpod_status *ps, hr_pod *pod)
{
    const uint8_t *t = NULL, *reason = NULL, *status = NULL;
    size_t tl = 0, rl = 0, sl = 0;
    while (hr_pbr_more(&r)) {
        uint32_t f;
        hr_pbwt wt;
        if (!hr_pb_tag(&r, &f, &wt))
            return;
        if ((f == 1 || f == 2 || f == 5) && wt == HR_PB_LEN) {
            bool ok = f == 1   ? hr_pb_len(&r, &t, &tl)
                      : f == 2 ? hr_pb_len(&r, &status, &sl)
                               : hr_pb_len(&r, &reason, &rl);
            if (!ok)
                return;
        } else if (!hr_pb_skip(&r, wt)) {
            return;
        }
    }
    if (t && hr_pb_eq(t, tl, "Ready"))
        pod->ready = status && hr_pb_eq(status, sl, "True");
    if (ps == NULL)
        return;
    if (t && hr_pb_eq(t, tl, "PodResizePending")) {
        if (reason && hr_pb_eq(reason, rl, "Infeasible"))
            ps->resize = HR_RS_INFEASIBLE;
        else if (reason && hr_pb_eq(reason, rl, "Deferred"))
            ps->resize = HR_RS_DEFERRED;
    } else if (t && hr_pb_eq(t, tl, "PodResizeInProgress")) {
        ps->resizing = true;
    }
}

/* status.startTime's seconds (metav1.Time), softly: 0 when they do not
 * read or do not fit, as pod.c reads a start time that does not parse. */
static uint32_t start_seconds(hr_pbr r)
{
    uint32_t secs = 0;
    while (hr_pbr_more(&r)) {
        uint32_t f;
        hr_pbwt wt;
        uint64_t v;
        if (!hr_pb_tag(&r, &f, &wt))
            return 0;
        if (f == 1 && wt == HR_PB_VARINT) {
            if (!hr_pb_varint(&r, &v))
                return 0;
            secs = v > 0 && v <= UINT32_MAX ? (uint32_t)v : 0;
        } else if (!hr_pb_skip(&r, wt)) {
            return 0;
        }
    }
    return secs;
}

static hr_status decode_status(const hr_kctx *c, hr_pbr status, hr_kpod *out, hr_kpod_status *ps)
{
    hr_pod *pod = &out->pod;
    hr_jpath pst = HR_JP_KEY(NULL, "status");
    hr_jpath pph = HR_JP_KEY(&pst, "phase");
    const uint8_t *phase = NULL;
    size_t phl = 0;
    hr_status st;
    hr_pbr r = status;
    while (hr_pbr_more(&r)) {
        uint32_t f;
        hr_pbwt wt;
        if (!hr_pb_tag(&r, &f, &wt))
            return hr_pbfail(c, &pst);
        if (f == 1) {
            st = hr_pb_bytes_at(c, &pph, &r, wt, &phase, &phl);
        } else if (f == 2 && wt == HR_PB_LEN) {
            hr_pbr e;
            st = hr_pb_sub_at(c, &pst, &r, wt, &e);
            if (!st)
                condition(e, ps, pod);
        } else if (f == 7 && wt == HR_PB_LEN) {
            hr_pbr e;
            st = hr_pb_sub_at(c, &pst, &r, wt, &e);
            if (!st)
                pod->start_s = start_seconds(e);
        } else {
            st = hr_pb_skip_at(c, &pst, &r, wt);
        }
        if (st)
            return st;
    }
    pod->phase = parse_phase(phase, phl);
    pod->status_resources = true;
    if (pod->phase != HR_PHASE_RUNNING)
        return HR_OK;
    for (uint32_t k = 0; k < pod->n_ctr; k++) {
        if (!hr_ctr_resizable(&pod->ctr[k]))
            continue;
        uint32_t field = pod->ctr[k].kind == HR_CTR_SIDECAR ? 10 : 8;
        if (!status_has_resources(status, field, out->ctr_names[k])) {
            pod->status_resources = false;
            break;
        }
    }
    return HR_OK;
}

/* One ManagedFieldsEntry: is it another manager's resize owning a managed
 * container's limits.cpu? Malformed reads as no (softly, as in pod.c);
 * *nomem when the JSON of fieldsV1 could not be parsed for memory. */
static bool foreign_entry(hr_pbr e, const hr_kpod *out, const uint8_t **mgr, size_t *mgr_l,
                          bool *nomem)
{
    const uint8_t *sub = NULL, *fv = NULL;
    size_t sub_l = 0, fv_l = 0;
    *mgr = NULL;
    *mgr_l = 0;
    while (hr_pbr_more(&e)) {
        uint32_t f;
        hr_pbwt wt;
        if (!hr_pb_tag(&e, &f, &wt))
            return false;
        const uint8_t *s;
        size_t n;
        if ((f == 1 || f == 7 || f == 8) && wt == HR_PB_LEN) {
            if (!hr_pb_len(&e, &s, &n))
                return false;
            if (f == 1) {
                *mgr = s;
                *mgr_l = n;
            } else if (f == 7) {
                fv = s;
                fv_l = n;
            } else {
                sub = s;
                sub_l = n;
            }
        } else if (!hr_pb_skip(&e, wt)) {
            return false;
        }
    }
    if (!hr_kpod_foreign_entry((const char *)*mgr, *mgr_l, (const char *)sub, sub_l) || !fv)
        return false;
    /* FieldsV1{Raw = 1}: the JSON the JSON decoder reads as fieldsV1. */
    const uint8_t *js = NULL;
    size_t js_l = 0;
    hr_pbr r = hr_pbr_of(fv, fv_l);
    while (hr_pbr_more(&r)) {
        uint32_t f;
        hr_pbwt wt;
        if (!hr_pb_tag(&r, &f, &wt))
            return false;
        if (f == 1 && wt == HR_PB_LEN) {
            if (!hr_pb_len(&r, &js, &js_l))
                return false;
        } else if (!hr_pb_skip(&r, wt)) {
            return false;
        }
    }
    if (!js)
        return false;
    yyjson_read_err rerr;
    yyjson_doc *d = yyjson_read_opts((char *)(uintptr_t)js, js_l, 0, NULL, &rerr);
    if (!d) {
        *nomem = rerr.code == YYJSON_READ_ERROR_MEMORY_ALLOCATION;
        return false;
    }
    bool owns = hr_kpod_fields_own_limit(yyjson_doc_get_root(d), out);
    yyjson_doc_free(d);
    return owns;
}

/* metadata.managedFields (in m, the bytes decode_pod_meta read): the first
 * other resizer of a managed container's limits.cpu (design §4). */
static hr_status decode_foreign_writer(const hr_kctx *c, hr_pbr m, hr_kpod *out)
{
    while (hr_pbr_more(&m)) {
        uint32_t f;
        hr_pbwt wt;
        /* decode_pod_meta has walked these bytes: they are well formed. */
        if (!hr_pb_tag(&m, &f, &wt))
            return HR_OK;
        hr_pbr e;
        if (f != 17 || wt != HR_PB_LEN) {
            if (!hr_pb_skip(&m, wt))
                return HR_OK;
            continue;
        }
        if (!hr_pb_sub(&m, &e))
            return HR_OK;
        const uint8_t *mgr;
        size_t mgr_l;
        bool nomem = false;
        if (foreign_entry(e, out, &mgr, &mgr_l, &nomem)) {
            out->pod.foreign_writer = hr_arena_strndup(c->a, (const char *)mgr, mgr_l);
            return out->pod.foreign_writer ? HR_OK : hr_knomem(c);
        }
        if (nomem)
            return hr_knomem(c);
    }
    return HR_OK;
}

hr_status hr_pbdecode_pod(const uint8_t *raw, size_t len, hr_arena *a, hr_kpod *out,
                          hr_kpod_status *ps, hr_err *err)
{
    hr_kctx c = {a, err, "pod", NULL, NULL};
    memset(out, 0, sizeof *out);
    out->pod = hr_pod_init();
    out->owner = (hr_kowner){NULL, "", "", false, NULL};
    if (ps)
        *ps = (hr_kpod_status){HR_RS_NONE, false, NULL, 0};
    hr_pbr parts[3];
    bool has[3];
    hr_status st = hr_pb_object(&c, hr_pbr_of(raw, len), parts, has);
    hr_pbr pod_part;
    if (st || (st = hr_pb_meta(&c, parts[0], has[0], true, &out->meta, &pod_part)))
        return st;
    const char *mode_ann = NULL, *uniform_ann = NULL, *grace_ann = NULL;
    if ((st = decode_pod_meta(&c, pod_part, out, ps, &mode_ann, &uniform_ann, &grace_ann)) ||
        (st = hr_kpod_group(&c, uniform_ann, out)))
        return st;
    const char *mode_label = hr_labels_get(&out->meta.labels, HR_LABEL_MODE);
    out->pod.opted_out = (mode_label && strcmp(mode_label, HR_MODE_MANAGED) != 0) ||
                         (mode_ann && strcmp(mode_ann, HR_MODE_MANAGED) != 0);
    out->pod.grace_opt = (uint8_t)hr_grace_opt_parse(
        grace_ann ? grace_ann : hr_labels_get(&out->meta.labels, HR_LABEL_GRACE));
    if (!has[1]) {
        hr_jpath ps_ = HR_JP_KEY(NULL, "spec");
        return hr_kfail(&c, &ps_, HR_E_INPUT, "missing");
    }
    if ((st = decode_spec(&c, parts[1], out)) || (st = decode_foreign_writer(&c, pod_part, out)))
        return st;
    return decode_status(&c, parts[2], out, ps);
}

/* The last field f (wire type LEN) of message r, in place; *bad when r or
 * the field is malformed. NULL when not there. */
static const uint8_t *last_len_field(hr_pbr r, uint32_t want, size_t *len, bool *bad)
{
    const uint8_t *v = NULL;
    *len = 0;
    while (hr_pbr_more(&r)) {
        uint32_t f;
        hr_pbwt wt;
        const uint8_t *s;
        size_t n;
        if (!hr_pb_tag(&r, &f, &wt)) {
            *bad = true;
            return v;
        }
        if (f == want && wt == HR_PB_LEN && hr_pb_len(&r, &s, &n)) {
            v = s;
            *len = n;
        } else if (f == want || !hr_pb_skip(&r, wt)) {
            *bad = true;
            return v;
        }
    }
    return v;
}

/* A string field of r into the arena ("" when absent or malformed). */
static const char *str_field(hr_arena *a, hr_pbr r, uint32_t f)
{
    size_t n;
    bool bad = false;
    const uint8_t *s = last_len_field(r, f, &n, &bad);
    return hr_arena_strndup(a, s ? (const char *)s : "", s ? n : 0);
}

bool hr_pbdecode_pod_undecodable(const uint8_t *raw, size_t len, hr_arena *a, const char *why,
                                 hr_kpod *out)
{
    memset(out, 0, sizeof *out);
    out->pod = hr_pod_init();
    out->pod.undecodable = true;
    out->owner = (hr_kowner){NULL, "", "", false, NULL};
    hr_pbr obj = hr_pbr_of(raw, len);
    size_t ml, sl, stl;
    bool bad_meta = false, bad_spec = false, bad_status = false;
    const uint8_t *m = last_len_field(obj, 1, &ml, &bad_meta);
    const uint8_t *sp = last_len_field(obj, 2, &sl, &bad_spec);
    const uint8_t *stt = last_len_field(obj, 3, &stl, &bad_status);
    hr_pbr meta = hr_pbr_of(m, m ? ml : 0);
    /* ObjectMeta name 1, namespace 3, uid 5, resourceVersion 6. */
    out->meta.name = str_field(a, meta, 1);
    out->meta.ns = str_field(a, meta, 3);
    out->meta.uid = str_field(a, meta, 5);
    out->meta.resource_version = str_field(a, meta, 6);
    out->undecodable = why ? hr_arena_strdup(a, why) : NULL;
    if (!out->meta.ns || !out->meta.name || !out->meta.uid || !out->meta.resource_version ||
        (why && !out->undecodable))
        return false;
    size_t dl;
    bool bad = false;
    out->deleting = last_len_field(meta, 9, &dl, &bad) != NULL;
    /* spec.nodeName (10): "" or absent is unbound; an object or spec we
     * cannot walk may be bound anywhere. */
    size_t nl = 0;
    bool bad_nn = false;
    const uint8_t *nn = sp ? last_len_field(hr_pbr_of(sp, sl), 10, &nl, &bad_nn) : NULL;
    if (nn && nl > 0) {
        out->node_name = hr_arena_strndup(a, (const char *)nn, nl);
        if (!out->node_name)
            return false;
    } else if (bad_spec || bad_nn || bad_meta) {
        out->node_unreadable = true;
    }
    out->pod.bound = out->node_name != NULL || out->node_unreadable;
    size_t phl = 0;
    bool bad_ph = false;
    const uint8_t *ph = stt ? last_len_field(hr_pbr_of(stt, stl), 1, &phl, &bad_ph) : NULL;
    out->pod.phase = parse_phase(ph, phl);
    return true;
}
