/*
 * admission.c — the AdmissionReview v1 handler for pods (see admission.h
 * for the rules and why each exists).
 *
 * The pod is read here rather than through kube/decode/pod.c because
 * admission sees objects the stored-object decoder rightly refuses (no
 * metadata.name yet when generateName is used, often no
 * metadata.namespace), and because the patch must know the exact JSON
 * shape of each container (is there a limits map to add into?), which the
 * core view deliberately forgets. The arithmetic and the QoS class are the
 * core's (hr_cpu_parse_milli, hr_pod_qos, hr_namespace_state,
 * hr_owner_excluded), so the webhook and the controller agree.
 */
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <yyjson.h>

#include "core/eligibility.h"
#include "core/names.h"
#include "core/quantity.h"
#include "core/wide.h"
#include "webhook/admission.h"

#define REVIEW_API "admission.k8s.io/v1"
#define MAX_CONTAINERS 4096
#define MAX_UID 1024
/* Per-review scratch: a pod spec's strings and arrays fit many times over;
 * the bound only stops a hostile review from growing it without end. */
#define ARENA_LIMIT (16u << 20)

const char *hr_wh_outcome_str(hr_wh_outcome o)
{
    switch (o) {
    case HR_WH_MUTATED: return "mutated";
    case HR_WH_UNCHANGED: return "unchanged";
    case HR_WH_DRY_RUN: return "dry-run";
    case HR_WH_ERROR: return "error";
    case HR_WH_OUTCOME_COUNT_: break;
    }
    return "unknown";
}

void hr_wh_result_free(hr_wh_result *r)
{
    hr_buf_free(&r->body);
    hr_buf_free(&r->patch);
}

static void why(hr_wh_result *r, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));
static void why(hr_wh_result *r, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(r->why, sizeof r->why, fmt, ap);
    va_end(ap);
}

/* A printable copy of a JSON string for the log fields. */
static void copy_field(char *dst, size_t cap, yyjson_val *v, const char *sfx)
{
    if (!yyjson_is_str(v)) {
        dst[0] = '\0';
        return;
    }
    hr_err_quote(dst, cap - strlen(sfx), yyjson_get_str(v), yyjson_get_len(v),
                 cap - strlen(sfx) - 4);
    strcat(dst, sfx);
}

static void json_str(hr_buf *b, const char *s, size_t len)
{
    static const char hex[] = "0123456789abcdef";
    hr_buf_putc(b, '"');
    size_t run = 0;
    for (size_t i = 0; i < len; i++) {
        unsigned char c = (unsigned char)s[i];
        if (c >= 0x20 && c != '"' && c != '\\')
            continue;
        hr_buf_append(b, s + run, i - run);
        run = i + 1;
        if (c == '"' || c == '\\') {
            hr_buf_putc(b, '\\');
            hr_buf_putc(b, (char)c);
        } else {
            char u[6] = {'\\', 'u', '0', '0', hex[c >> 4], hex[c & 15]};
            hr_buf_append(b, u, sizeof u);
        }
    }
    hr_buf_append(b, s + run, len - run);
    hr_buf_putc(b, '"');
}

/* One JSON-pointer reference token (RFC 6901: "~" is "~0", "/" is "~1"). */
static void ptr_token(hr_buf *b, const char *tok)
{
    hr_buf_putc(b, '/');
    for (const char *p = tok; *p; p++) {
        if (*p == '~')
            hr_buf_puts(b, "~0");
        else if (*p == '/')
            hr_buf_puts(b, "~1");
        else
            hr_buf_putc(b, *p);
    }
}

static void base64(hr_buf *b, const unsigned char *s, size_t len)
{
    static const char tab[] =
        "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
    size_t i = 0;
    for (; i + 3 <= len; i += 3) {
        uint32_t v = (uint32_t)s[i] << 16 | (uint32_t)s[i + 1] << 8 | s[i + 2];
        char o[4] = {tab[v >> 18], tab[(v >> 12) & 63], tab[(v >> 6) & 63],
                     tab[v & 63]};
        hr_buf_append(b, o, 4);
    }
    if (len - i == 1) {
        uint32_t v = (uint32_t)s[i] << 16;
        char o[4] = {tab[v >> 18], tab[(v >> 12) & 63], '=', '='};
        hr_buf_append(b, o, 4);
    } else if (len - i == 2) {
        uint32_t v = (uint32_t)s[i] << 16 | (uint32_t)s[i + 1] << 8;
        char o[4] = {tab[v >> 18], tab[(v >> 12) & 63], tab[(v >> 6) & 63],
                     '='};
        hr_buf_append(b, o, 4);
    }
}

/* ------------------------------------------------------------ the pod */

/* Where a container lives in the JSON, for the patch. */
typedef struct wh_ctr {
    uint32_t index;   /* in its array */
    bool init;        /* spec.initContainers (else spec.containers) */
    bool has_limits;  /* resources.limits is an object */
} wh_ctr;

typedef struct wh_pod {
    hr_pod pod;           /* the core's view (QoS) */
    hr_container *ctr;    /* = pod.ctr, writable */
    wh_ctr *at;           /* parallel to ctr */
    bool opted_out;
    bool mirror;
    bool pod_resources;
    int64_t max_cpu;      /* HR_NONE when not annotated */
    bool max_cpu_invalid;
    const char *owner_kind, *owner_group, *owner_name;
} wh_pod;

/* A quantity field: absent/null → HR_NONE; false (with *bad) when it cannot
 * be read. Stored objects carry quantities as strings; a bare integer is
 * taken too, as the API server would. */
static bool read_qty(yyjson_val *v, bool cpu, int64_t *out, const char **bad)
{
    *out = HR_NONE;
    if (v == NULL || yyjson_is_null(v))
        return true;
    if (yyjson_is_str(v)) {
        hr_qerr e = cpu ? hr_cpu_parse_milli(yyjson_get_str(v),
                                             yyjson_get_len(v), out)
                        : hr_mem_parse_bytes(yyjson_get_str(v),
                                             yyjson_get_len(v), out);
        if (e != HR_Q_OK) {
            *out = HR_NONE;
            *bad = hr_qerr_str(e);
            return false;
        }
        return true;
    }
    if (yyjson_is_uint(v)) {
        uint64_t u = yyjson_get_uint(v);
        if (u > (uint64_t)INT64_MAX / 1000) {
            *bad = "out of range";
            return false;
        }
        *out = cpu ? (int64_t)u * 1000 : (int64_t)u;
        return true;
    }
    *bad = "not a quantity";
    return false;
}

/* Read spec.<field>[i] into c/at. On failure writes why and returns false. */
static bool read_container(yyjson_val *e, const char *field, size_t i,
                           bool init, hr_container *c, wh_ctr *at,
                           hr_wh_result *r)
{
    *c = (hr_container){HR_NONE, HR_NONE, HR_NONE, HR_NONE, HR_CTR_APP, false};
    *at = (wh_ctr){(uint32_t)i, init, false};
    if (!yyjson_is_obj(e)) {
        why(r, "cannot decide: spec.%s[%zu]: not an object", field, i);
        return false;
    }
    if (init) {
        yyjson_val *rp = yyjson_obj_get(e, "restartPolicy");
        c->kind = yyjson_equals_str(rp, "Always") ? HR_CTR_SIDECAR
                                                   : HR_CTR_INIT;
    }
    yyjson_val *res = yyjson_obj_get(e, "resources");
    if (res == NULL || yyjson_is_null(res))
        return true;
    if (!yyjson_is_obj(res)) {
        why(r, "cannot decide: spec.%s[%zu].resources: not an object", field,
            i);
        return false;
    }
    yyjson_val *req = yyjson_obj_get(res, "requests");
    yyjson_val *lim = yyjson_obj_get(res, "limits");
    if ((req && !yyjson_is_null(req) && !yyjson_is_obj(req)) ||
        (lim && !yyjson_is_null(lim) && !yyjson_is_obj(lim))) {
        why(r, "cannot decide: spec.%s[%zu].resources: requests/limits not "
               "objects", field, i);
        return false;
    }
    at->has_limits = yyjson_is_obj(lim);
    const char *bad = NULL, *what = NULL;
    if (!read_qty(yyjson_obj_get(req, "cpu"), true, &c->cpu_req, &bad))
        what = "requests.cpu";
    else if (!read_qty(yyjson_obj_get(req, "memory"), false, &c->mem_req,
                       &bad))
        what = "requests.memory";
    else if (!read_qty(yyjson_obj_get(lim, "cpu"), true, &c->cpu_lim, &bad))
        what = "limits.cpu";
    else if (!read_qty(yyjson_obj_get(lim, "memory"), false, &c->mem_lim,
                       &bad))
        what = "limits.memory";
    if (what) {
        why(r, "cannot decide: spec.%s[%zu].resources.%s: %s", field, i, what,
            bad);
        return false;
    }
    /* The API server defaults a missing request to the limit before
     * admission; do the same for reviews built by hand. */
    if (c->cpu_req == HR_NONE && c->cpu_lim != HR_NONE)
        c->cpu_req = c->cpu_lim;
    if (c->mem_req == HR_NONE && c->mem_lim != HR_NONE)
        c->mem_req = c->mem_lim;
    return true;
}

/* A string label/annotation value; false when present but not a string. */
static bool str_or_absent(yyjson_val *map, const char *key, yyjson_val **out)
{
    *out = map ? yyjson_obj_get(map, key) : NULL;
    if (*out && yyjson_is_null(*out))
        *out = NULL;
    return *out == NULL || yyjson_is_str(*out);
}

static bool read_owner(yyjson_val *meta, hr_arena *a, wh_pod *p,
                       hr_wh_result *r)
{
    yyjson_val *refs = yyjson_obj_get(meta, "ownerReferences");
    if (refs == NULL || yyjson_is_null(refs))
        return true;
    if (!yyjson_is_arr(refs)) {
        why(r, "cannot decide: metadata.ownerReferences: not an array");
        return false;
    }
    yyjson_val *pick = NULL, *e;
    size_t i, max;
    yyjson_arr_foreach(refs, i, max, e) {
        if (!yyjson_is_obj(e))
            continue;
        if (pick == NULL)
            pick = e;
        if (yyjson_get_bool(yyjson_obj_get(e, "controller"))) {
            pick = e;
            break;
        }
    }
    if (pick == NULL)
        return true;
    p->owner_kind = yyjson_get_str(yyjson_obj_get(pick, "kind"));
    p->owner_name = yyjson_get_str(yyjson_obj_get(pick, "name"));
    const char *av = yyjson_get_str(yyjson_obj_get(pick, "apiVersion"));
    p->owner_group = "";
    const char *slash = av ? strchr(av, '/') : NULL;
    if (slash) {
        p->owner_group = hr_arena_strndup(a, av, (size_t)(slash - av));
        if (p->owner_group == NULL)
            return false;
    }
    return true;
}

/* Read the parts of the pod the rules need. false: why is set (or out of
 * memory, which the caller tells apart by checking the arena). */
static bool read_pod(yyjson_val *obj, hr_arena *a, wh_pod *p, hr_wh_result *r)
{
    memset(p, 0, sizeof *p);
    p->pod = hr_pod_init();
    p->max_cpu = HR_NONE;
    if (!yyjson_is_obj(obj)) {
        why(r, "cannot decide: request.object: not an object");
        return false;
    }
    yyjson_val *meta = yyjson_obj_get(obj, "metadata");
    if (meta != NULL && !yyjson_is_obj(meta)) {
        why(r, "cannot decide: metadata: not an object");
        return false;
    }
    yyjson_val *name = yyjson_obj_get(meta, "name");
    if (yyjson_is_str(name) && yyjson_get_len(name) > 0)
        copy_field(r->pod, sizeof r->pod, name, "");
    else
        copy_field(r->pod, sizeof r->pod, yyjson_obj_get(meta, "generateName"),
                   "*");
    yyjson_val *labels = yyjson_obj_get(meta, "labels");
    yyjson_val *ann = yyjson_obj_get(meta, "annotations");
    if ((labels && !yyjson_is_null(labels) && !yyjson_is_obj(labels)) ||
        (ann && !yyjson_is_null(ann) && !yyjson_is_obj(ann))) {
        why(r, "cannot decide: metadata.labels/annotations: not objects");
        return false;
    }
    if (!yyjson_is_obj(labels))
        labels = NULL;
    if (!yyjson_is_obj(ann))
        ann = NULL;
    yyjson_val *ml, *ma, *mc;
    if (!str_or_absent(labels, HR_LABEL_MODE, &ml) ||
        !str_or_absent(ann, HR_LABEL_MODE, &ma) ||
        !str_or_absent(ann, HR_ANN_MAX_CPU, &mc)) {
        why(r, "cannot decide: a " HR_GROUP " label or annotation is not a "
               "string");
        return false;
    }
    /* Fail closed: only an absent mode or "managed" keeps the pod in. */
    p->opted_out = (ml && !yyjson_equals_str(ml, HR_MODE_MANAGED)) ||
                   (ma && !yyjson_equals_str(ma, HR_MODE_MANAGED));
    p->mirror = ann && yyjson_obj_get(ann, "kubernetes.io/config.mirror");
    if (mc) {
        int64_t v;
        if (hr_cpu_parse_milli(yyjson_get_str(mc), yyjson_get_len(mc), &v) ==
            HR_Q_OK)
            p->max_cpu = v;
        else
            p->max_cpu_invalid = true;
    }
    if (!read_owner(meta, a, p, r))
        return false;

    yyjson_val *spec = yyjson_obj_get(obj, "spec");
    if (!yyjson_is_obj(spec)) {
        why(r, "cannot decide: spec: missing or not an object");
        return false;
    }
    yyjson_val *pres = yyjson_obj_get(spec, "resources");
    p->pod_resources = pres && !yyjson_is_null(pres);
    yyjson_val *ic = yyjson_obj_get(spec, "initContainers");
    yyjson_val *ac = yyjson_obj_get(spec, "containers");
    if (ic && yyjson_is_null(ic))
        ic = NULL;
    if ((ic && !yyjson_is_arr(ic)) || !yyjson_is_arr(ac) ||
        yyjson_arr_size(ac) == 0) {
        why(r, "cannot decide: spec.containers/initContainers: missing or "
               "not arrays");
        return false;
    }
    size_t n_ic = ic ? yyjson_arr_size(ic) : 0, n_ac = yyjson_arr_size(ac);
    if (n_ic + n_ac > MAX_CONTAINERS) {
        why(r, "cannot decide: %zu containers", n_ic + n_ac);
        return false;
    }
    size_t n = n_ic + n_ac;
    p->ctr = hr_arena_calloc(a, n, sizeof *p->ctr);
    p->at = hr_arena_calloc(a, n, sizeof *p->at);
    if (p->ctr == NULL || p->at == NULL)
        return false;
    size_t i, max, k = 0;
    yyjson_val *e;
    /* Init containers first, as the core's view wants them. */
    if (ic) {
        yyjson_arr_foreach(ic, i, max, e) {
            if (!read_container(e, "initContainers", i, true, &p->ctr[k],
                                &p->at[k], r))
                return false;
            k++;
        }
    }
    yyjson_arr_foreach(ac, i, max, e) {
        if (!read_container(e, "containers", i, false, &p->ctr[k], &p->at[k],
                            r))
            return false;
        k++;
    }
    p->pod.ctr = p->ctr;
    p->pod.n_ctr = (uint32_t)n;
    return true;
}

/* ------------------------------------------------------------ the rules */

static bool ns_listed(const hr_config *cfg, const char *ns, const char *own)
{
    if (own != NULL && strcmp(own, ns) == 0)
        return true;
    for (uint32_t i = 0; i < cfg->n_excluded_ns; i++)
        if (cfg->excluded_ns[i] && strcmp(cfg->excluded_ns[i], ns) == 0)
            return true;
    return false;
}

static int64_t min64(int64_t a, int64_t b) { return a < b ? a : b; }

/* a*b/d in 128 bits, saturated to int64 (d > 0, a, b >= 0). */
static int64_t muldiv(int64_t a, int64_t b, int64_t d)
{
    hr_i128 v = (hr_i128)a * b / d;
    return v > INT64_MAX ? INT64_MAX : (int64_t)v;
}

/* The birth limits: lim[k] = the new CPU limit of container k, or HR_NONE.
 * Returns how many containers get one. */
static int compute_limits(const hr_config *cfg, const wh_pod *p,
                          const hr_limit_bounds *lb, int64_t *lim)
{
    int64_t mult = cfg->initial_multiplier_milli;
    if (cfg->max_multiplier_milli > 0 && cfg->max_multiplier_milli < mult)
        mult = cfg->max_multiplier_milli;
    if (mult < 1000)
        mult = 1000; /* the floor at the request would win anyway */

    /* A budget for the whole pod: max-cpu and a LimitRange's Pod max bound
     * the sum of the limits, and limits already set are part of it. */
    int64_t budget = HR_NONE;
    if (p->max_cpu != HR_NONE)
        budget = p->max_cpu;
    if (lb->pod_max != HR_NONE)
        budget = budget == HR_NONE ? lb->pod_max : min64(budget, lb->pod_max);
    int64_t sum_new_req = 0;
    int n = 0;
    for (uint32_t k = 0; k < p->pod.n_ctr; k++) {
        const hr_container *c = &p->ctr[k];
        lim[k] = HR_NONE;
        if (!hr_ctr_resizable(c))
            continue;
        if (c->cpu_lim != HR_NONE) {
            if (budget != HR_NONE)
                budget -= min64(c->cpu_lim, budget);
            continue;
        }
        if (c->cpu_req <= 0)
            continue;
        lim[k] = muldiv(c->cpu_req, mult, 1000);
        sum_new_req += c->cpu_req; /* each <= 2^63/1000: no overflow */
        n++;
    }
    if (n == 0)
        return 0;
    int64_t sum_lim = 0;
    for (uint32_t k = 0; k < p->pod.n_ctr; k++)
        if (lim[k] != HR_NONE)
            sum_lim = sum_lim > INT64_MAX - lim[k] ? INT64_MAX
                                                   : sum_lim + lim[k];
    for (uint32_t k = 0; k < p->pod.n_ctr; k++) {
        if (lim[k] == HR_NONE)
            continue;
        int64_t r = p->ctr[k].cpu_req;
        /* Pro-rata share of the budget; floor division keeps the sum
         * within it. */
        if (budget != HR_NONE && sum_lim > budget)
            lim[k] = min64(lim[k], muldiv(r, budget, sum_new_req));
        if (lb->ctr_max != HR_NONE)
            lim[k] = min64(lim[k], lb->ctr_max);
        if (lb->ctr_ratio_milli != HR_NONE)
            lim[k] = min64(lim[k], muldiv(r, lb->ctr_ratio_milli, 1000));
        if (lim[k] < r)
            lim[k] = r; /* never below the request: that would be invalid */
    }
    return n;
}

static void render_patch(const wh_pod *p, const int64_t *lim, hr_buf *b)
{
    hr_buf_putc(b, '[');
    bool first = true;
    for (uint32_t k = 0; k < p->pod.n_ctr; k++) {
        if (lim[k] == HR_NONE)
            continue;
        char q[HR_CPU_FMT_MAX], idx[24];
        hr_cpu_format_milli(lim[k], q, sizeof q);
        snprintf(idx, sizeof idx, "%" PRIu32, p->at[k].index);
        if (!first)
            hr_buf_putc(b, ',');
        first = false;
        hr_buf_puts(b, "{\"op\":\"add\",\"path\":\"");
        ptr_token(b, "spec");
        ptr_token(b, p->at[k].init ? "initContainers" : "containers");
        ptr_token(b, idx);
        ptr_token(b, "resources");
        ptr_token(b, "limits");
        /* "add" into a map that exists; otherwise create the map itself
         * (an "add" below a missing member fails the whole patch). */
        if (p->at[k].has_limits) {
            ptr_token(b, "cpu");
            hr_buf_puts(b, "\",\"value\":");
            json_str(b, q, strlen(q));
        } else {
            hr_buf_puts(b, "\",\"value\":{\"cpu\":");
            json_str(b, q, strlen(q));
            hr_buf_putc(b, '}');
        }
        hr_buf_putc(b, '}');
    }
    hr_buf_putc(b, ']');
}

/* Decide for a well-formed review. Returns false only when out of memory.
 * On return r->outcome, r->why and (when due) r->patch are set. */
static bool decide(const hr_wh_env *env, yyjson_val *req, hr_arena *a,
                   hr_wh_result *r)
{
    const hr_config *cfg = env->cfg;
    r->outcome = HR_WH_UNCHANGED;
    if (!cfg->webhook_enabled) {
        why(r, "webhook disabled in the config");
        return true;
    }
    yyjson_val *kind = yyjson_obj_get(req, "kind");
    yyjson_val *res = yyjson_obj_get(req, "resource");
    yyjson_val *sub = yyjson_obj_get(req, "subResource");
    yyjson_val *op = yyjson_obj_get(req, "operation");
    if (!yyjson_equals_str(op, "CREATE")) {
        why(r, "not a CREATE");
        return true;
    }
    yyjson_val *kg = yyjson_obj_get(kind, "group");
    if (!yyjson_equals_str(yyjson_obj_get(kind, "kind"), "Pod") ||
        (kg && !yyjson_equals_str(kg, "")) ||
        (res && !yyjson_equals_str(yyjson_obj_get(res, "resource"), "pods")) ||
        (sub && !yyjson_is_null(sub) && !yyjson_equals_str(sub, ""))) {
        why(r, "not a pod");
        return true;
    }
    yyjson_val *obj = yyjson_obj_get(req, "object");
    yyjson_val *nsv = yyjson_obj_get(req, "namespace");
    if (!yyjson_is_str(nsv) || yyjson_get_len(nsv) == 0)
        nsv = yyjson_obj_get(yyjson_obj_get(obj, "metadata"), "namespace");
    if (!yyjson_is_str(nsv) || yyjson_get_len(nsv) == 0) {
        why(r, "cannot decide: no namespace");
        return true;
    }
    copy_field(r->ns, sizeof r->ns, nsv, "");
    /* yyjson strings may hold NULs; a namespace with one is not ours. */
    const char *ns = yyjson_get_str(nsv);
    if (strlen(ns) != yyjson_get_len(nsv)) {
        why(r, "cannot decide: bad namespace");
        return true;
    }
    hr_labels labels = {NULL, 0};
    hr_limit_bounds lb = HR_LIMIT_BOUNDS_NONE;
    bool known = env->ns_lookup &&
                 env->ns_lookup(env->ns_ud, ns, a, &labels, &lb);
    if (known) {
        hr_ns_state st = hr_namespace_state(cfg, ns, &labels, env->own_ns);
        if (st != HR_NS_MANAGED) {
            why(r, "namespace %s", st == HR_NS_EXCLUDED ? "excluded"
                                                        : "not selected");
            return true;
        }
    } else if (ns_listed(cfg, ns, env->own_ns)) {
        why(r, "namespace excluded");
        return true;
    }

    wh_pod p;
    if (!read_pod(obj, a, &p, r))
        return r->why[0] != '\0'; /* no reason given: out of memory */
    if (p.opted_out) {
        why(r, "pod opted out (" HR_LABEL_MODE ")");
        return true;
    }
    if (p.mirror) {
        why(r, "mirror pod");
        return true;
    }
    if (p.pod_resources) {
        why(r, "pod-level resources");
        return true;
    }
    if (p.max_cpu_invalid) {
        why(r, HR_ANN_MAX_CPU " is not a CPU quantity");
        return true;
    }
    if (cfg->n_excluded_owners > 0 &&
        hr_owner_excluded(cfg, p.owner_kind, p.owner_group, p.owner_name)) {
        why(r, "owner excluded");
        return true;
    }
    hr_qos before = hr_pod_qos(&p.pod, NULL);
    if (before != HR_QOS_BURSTABLE) {
        why(r, "QoS %s", hr_qos_str(before));
        return true;
    }
    int64_t *lim = hr_arena_calloc(a, p.pod.n_ctr, sizeof *lim);
    if (lim == NULL)
        return false;
    int n = compute_limits(cfg, &p, &lb, lim);
    if (n == 0) {
        why(r, "no container with a CPU request and no CPU limit");
        return true;
    }
    hr_qos after = hr_pod_qos(&p.pod, lim);
    if (after != before) {
        why(r, "would change QoS %s -> %s", hr_qos_str(before),
            hr_qos_str(after));
        return true;
    }
    render_patch(&p, lim, &r->patch);
    if (hr_buf_failed(&r->patch))
        return false;
    r->n_patched = n;
    if (cfg->dry_run) {
        r->outcome = HR_WH_DRY_RUN;
        why(r, "dry-run: would set %d CPU limit(s)", n);
    } else {
        r->outcome = HR_WH_MUTATED;
        why(r, "set %d CPU limit(s)", n);
    }
    return true;
}

static hr_status bad_review(hr_wh_result *r, const char *msg)
{
    r->http_status = 400;
    r->outcome = HR_WH_ERROR;
    r->content_type = "text/plain; charset=utf-8";
    why(r, "malformed AdmissionReview: %s", msg);
    hr_buf_reset(&r->body);
    hr_buf_puts(&r->body, r->why);
    hr_buf_putc(&r->body, '\n');
    return HR_OK;
}

hr_status hr_admission_review(const hr_wh_env *env, const char *in, size_t len,
                              hr_wh_result *r, hr_err *err)
{
    memset(r, 0, sizeof *r);
    hr_buf_init(&r->body, 0);
    hr_buf_init(&r->patch, 0);
    r->http_status = 200;
    r->content_type = "application/json";

    yyjson_read_err rerr;
    yyjson_doc *doc = yyjson_read_opts((char *)(uintptr_t)in, len, 0, NULL,
                                       &rerr);
    if (doc == NULL) {
        if (rerr.code == YYJSON_READ_ERROR_MEMORY_ALLOCATION)
            return hr_err_set(err, HR_E_NOMEM, "admission: out of memory");
        char m[160];
        snprintf(m, sizeof m, "not JSON: %s at byte %zu", rerr.msg, rerr.pos);
        return bad_review(r, m);
    }
    yyjson_val *root = yyjson_doc_get_root(doc);
    yyjson_val *req = yyjson_obj_get(root, "request");
    yyjson_val *uid = yyjson_obj_get(req, "uid");
    hr_status st = HR_OK;
    if (!yyjson_is_obj(root))
        st = bad_review(r, "not a JSON object");
    else if (!yyjson_equals_str(yyjson_obj_get(root, "apiVersion"),
                                REVIEW_API))
        st = bad_review(r, "apiVersion: want " REVIEW_API);
    else if (!yyjson_equals_str(yyjson_obj_get(root, "kind"),
                                "AdmissionReview"))
        st = bad_review(r, "kind: want AdmissionReview");
    else if (!yyjson_is_obj(req))
        st = bad_review(r, "request: missing or not an object");
    else if (!yyjson_is_str(uid) || yyjson_get_len(uid) == 0)
        st = bad_review(r, "request.uid: missing or not a string");
    else if (yyjson_get_len(uid) > MAX_UID)
        st = bad_review(r, "request.uid: too long");
    if (r->outcome == HR_WH_ERROR) {
        yyjson_doc_free(doc);
        return st;
    }
    copy_field(r->uid, sizeof r->uid, uid, "");

    hr_arena a;
    hr_arena_init(&a, 16384);
    hr_arena_set_limit(&a, ARENA_LIMIT);
    if (!decide(env, req, &a, r)) {
        hr_arena_free(&a);
        yyjson_doc_free(doc);
        return hr_err_set(err, HR_E_NOMEM, "admission: out of memory");
    }
    hr_arena_free(&a);

    hr_buf *b = &r->body;
    hr_buf_puts(b, "{\"apiVersion\":\"" REVIEW_API "\",\"kind\":"
                   "\"AdmissionReview\",\"response\":{\"uid\":");
    json_str(b, yyjson_get_str(uid), yyjson_get_len(uid));
    hr_buf_puts(b, ",\"allowed\":true");
    if (r->outcome == HR_WH_MUTATED) {
        hr_buf_puts(b, ",\"patchType\":\"JSONPatch\",\"patch\":\"");
        base64(b, (const unsigned char *)hr_buf_str(&r->patch), r->patch.len);
        hr_buf_putc(b, '"');
    }
    hr_buf_puts(b, "}}");
    yyjson_doc_free(doc);
    if (hr_buf_failed(b))
        return hr_err_set(err, HR_E_NOMEM, "admission: out of memory");
    return HR_OK;
}
