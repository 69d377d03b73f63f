/*
 * admission.c — the AdmissionReview v1 handler for pods (see admission.h
 * for the rules and why each exists).
 *
 * This layer is the JSON at both ends and nothing between: the envelope is
 * checked here (apiVersion, uid, a pods CREATE, the namespace), the pod is
 * read by the kube layer's pod decoder (hr_decode_pod_created: the one the
 * controller's cache uses, told that a pod being created may have no name
 * or namespace yet), its context is filled in by the one pod-in-context
 * builder (hr_pod_in_context: namespace state, owner exclusion, LimitRange
 * bounds), and the decision — eligibility, the birth limits, the QoS guard
 * — is the core's (hr_admit_pod, core/admission.h), so the webhook and the
 * controller apply the same rules. What stays here is what the core
 * deliberately forgets: the JSON shape of each container (its index,
 * whether it has a limits map to add into), for the patch.
 */
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <yyjson.h>

#include "core/admission.h"
#include "core/eligibility.h"
#include "core/names.h"
#include "core/podctx.h"
#include "core/quantity.h"
#include "core/selector.h"
#include "core/vpa.h"
#include "core/wide.h"
#include "kube/decode/pod.h"
#include "util/base64.h"
#include "util/jsonstr.h"
#include "webhook/admission.h"

#define REVIEW_API "admission.k8s.io/v1"
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

static void why(hr_wh_result *r, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
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

/* ------------------------------------------------------------ the pod */

/* Where container k of the core view is in the JSON, for the patch: the
 * core view forgets the JSON's shape, the patch must not. */
typedef struct wh_ctr {
    uint32_t index;  /* in its array */
    bool init;       /* spec.initContainers (else spec.containers) */
    bool has_limits; /* resources.limits is an object */
} wh_ctr;

/* The shape of one container array, from k on in the core view's order. */
static void read_shape(yyjson_val *arr, bool init, wh_ctr *at, size_t k)
{
    size_t i, max;
    yyjson_val *e;
    yyjson_arr_foreach(arr, i, max, e)
    {
        yyjson_val *lim = yyjson_obj_get(yyjson_obj_get(e, "resources"), "limits");
        at[k + i] = (wh_ctr){(uint32_t)i, init, yyjson_is_obj(lim)};
    }
}

/* request.object into the core's view, through the decoder the controller
 * uses (so both read resizePolicy, opt-outs, quantities alike), plus the
 * shape the patch needs. false: why is set, or out of memory (why empty). */
static bool read_pod(yyjson_val *obj, hr_arena *a, hr_kpod *kp, wh_ctr **at, hr_wh_result *r)
{
    yyjson_val *meta = yyjson_obj_get(obj, "metadata");
    yyjson_val *name = yyjson_obj_get(meta, "name");
    if (yyjson_is_str(name) && yyjson_get_len(name) > 0)
        copy_field(r->pod, sizeof r->pod, name, "");
    else
        copy_field(r->pod, sizeof r->pod, yyjson_obj_get(meta, "generateName"), "*");
    hr_err err;
    hr_status st = hr_decode_pod_created(obj, a, kp, &err);
    if (st == HR_E_NOMEM)
        return false;
    if (st != HR_OK) {
        why(r, "cannot decide: %s", err.msg);
        return false;
    }
    /* The decoder has checked the types: spec is an object, the arrays are
     * arrays (or initContainers absent), init containers come first. */
    yyjson_val *spec = yyjson_obj_get(obj, "spec");
    yyjson_val *ic = yyjson_obj_get(spec, "initContainers");
    size_t n_ic = yyjson_is_arr(ic) ? yyjson_arr_size(ic) : 0;
    *at = hr_arena_calloc(a, kp->pod.n_ctr, sizeof **at);
    if (*at == NULL)
        return false;
    if (n_ic)
        read_shape(ic, true, *at, 0);
    read_shape(yyjson_obj_get(spec, "containers"), false, *at, n_ic);
    return true;
}

/* ------------------------------------------------------------ the rules */

/* The log line for a pod the core leaves alone. */
static void why_not(hr_wh_result *r, hr_reason reason)
{
    switch (reason) {
    case HR_R_NS_EXCLUDED: why(r, "namespace excluded"); return;
    case HR_R_NS_NOT_SELECTED: why(r, "namespace not selected"); return;
    case HR_R_OPTED_OUT: why(r, "pod opted out (" HR_LABEL_MODE ")"); return;
    case HR_R_BEST_EFFORT:
    case HR_R_GUARANTEED:
        why(r, "QoS %s",
            hr_qos_str(reason == HR_R_BEST_EFFORT ? HR_QOS_BEST_EFFORT : HR_QOS_GUARANTEED));
        return;
    case HR_R_NO_CPU_REQUEST: why(r, "no container with a CPU request and no CPU limit"); return;
    case HR_R_RESTART_POLICY: why(r, "a container's CPU resizePolicy is RestartContainer"); return;
    case HR_R_MIRROR: why(r, "mirror pod"); return;
    case HR_R_POD_RESOURCES: why(r, "pod-level resources"); return;
    case HR_R_OWNER_EXCLUDED: why(r, "owner excluded"); return;
    case HR_R_BAD_MAX_CPU: why(r, HR_ANN_MAX_CPU " is not a CPU quantity"); return;
    default: why(r, "not eligible: %s", hr_reason_str(reason)); return;
    }
}

/* The pod-level birth limit (design §2.13): into spec.resources.limits,
 * or that map itself when it is missing (spec.resources is there: the
 * pod is a pod-level one). */
/* The end of an "add" op whose path so far reaches .../resources/limits:
 * "add" into a map that exists; otherwise create the map itself (an "add"
 * below a missing member fails the whole patch). */
static void limits_cpu_value(hr_buf *b, bool has_limits, const char *q)
{
    if (has_limits) {
        ptr_token(b, "cpu");
        hr_buf_puts(b, "\",\"value\":");
        hr_buf_json_str(b, q);
    } else {
        hr_buf_puts(b, "\",\"value\":{\"cpu\":");
        hr_buf_json_str(b, q);
        hr_buf_putc(b, '}');
    }
    hr_buf_putc(b, '}');
}

static void render_pod_limit(int64_t limit, bool has_limits, hr_buf *b)
{
    char q[HR_CPU_FMT_MAX];
    hr_cpu_format_milli(limit, q, sizeof q);
    hr_buf_puts(b, "{\"op\":\"add\",\"path\":\"");
    ptr_token(b, "spec");
    ptr_token(b, "resources");
    ptr_token(b, "limits");
    limits_cpu_value(b, has_limits, q);
}

static void render_patch(const hr_pod *p, const wh_ctr *at, const int64_t *lim, int64_t pod_limit,
                         bool pod_has_limits, hr_buf *b)
{
    hr_buf_putc(b, '[');
    bool first = true;
    if (pod_limit != HR_NONE) {
        render_pod_limit(pod_limit, pod_has_limits, b);
        first = false;
    }
    for (uint32_t k = 0; k < p->n_ctr; k++) {
        if (lim[k] == HR_NONE)
            continue;
        char q[HR_CPU_FMT_MAX], idx[24];
        hr_cpu_format_milli(lim[k], q, sizeof q);
        snprintf(idx, sizeof idx, "%" PRIu32, at[k].index);
        if (!first)
            hr_buf_putc(b, ',');
        first = false;
        hr_buf_puts(b, "{\"op\":\"add\",\"path\":\"");
        ptr_token(b, "spec");
        ptr_token(b, at[k].init ? "initContainers" : "containers");
        ptr_token(b, idx);
        ptr_token(b, "resources");
        ptr_token(b, "limits");
        limits_cpu_value(b, at[k].has_limits, q);
    }
    hr_buf_putc(b, ']');
}

/* Decide for a well-formed review. Returns false only when out of memory.
 * On return r->outcome, r->why and (when due) r->patch are set. The request
 * is checked here (operation, kind, namespace); the pod is the core's. */
static bool decide(const hr_wh_env *env, yyjson_val *req, hr_arena *a, hr_wh_result *r)
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
    /* The namespace first: a pod in a namespace not ours is not read. When
     * the caller cannot tell the labels, the registration's
     * namespaceSelector has chosen and only the excluded names are out. */
    hr_labels labels = {NULL, 0};
    hr_limit_bounds lb = HR_LIMIT_BOUNDS_NONE;
    bool known = env->ns_lookup && env->ns_lookup(env->ns_ud, ns, a, &labels, &lb);
    hr_ns_state nst = known ? hr_namespace_state(cfg, ns, &labels, env->own_ns)
                      : hr_namespace_excluded(cfg, ns, env->own_ns) ? HR_NS_EXCLUDED
                                                                    : HR_NS_MANAGED;
    if (nst != HR_NS_MANAGED) {
        /* The reason is still the core's: the namespace rules come first,
         * so any pod there gets this one. */
        hr_pod none = hr_pod_init();
        none.ns_state = (uint8_t)nst;
        r->has_reason = true;
        r->reason = hr_pod_birth_eligibility(&none);
        why_not(r, r->reason);
        return true;
    }

    hr_kpod kp;
    wh_ctr *at;
    if (!read_pod(obj, a, &kp, &at, r))
        return r->why[0] != '\0'; /* no reason given: out of memory */
    /* The pod in its context, by the one builder every reader uses. There
     * is no node yet (node rules do not apply at birth), no history. */
    hr_pod_ctx cx = {
        .cfg = cfg,
        .own_ns = env->own_ns,
        .ns = ns,
        .ns_labels = &labels,
        .node_labels = NULL,
        .owner_kind = kp.owner.kind,
        .owner_group = kp.owner.api_group,
        .owner_name = kp.owner.name,
        .limits = lb,
        .node_pod_resize = env->pod_resize,
    };
    hr_pod in_ctx = hr_pod_in_context(&kp.pod, &cx);
    /* Managed, as decided above: from the labels when the caller knew them
     * (the builder agrees), else on the registration's word. */
    in_ctx.ns_state = (uint8_t)nst;
    const hr_pod *pod = &in_ctx;
    int64_t *lim = hr_arena_calloc(a, pod->n_ctr, sizeof *lim);
    if (lim == NULL)
        return false;
    /* The node's settings by the one rule (design §2.11). The node is
     * usually unknown at admission, and then that is the top level: a
     * pool's overrides reach the pod when the controller plans its node.
     * A pod created with spec.nodeName on a node we know gets its pool's
     * at once. */
    hr_labels node_labels = {NULL, 0};
    bool node_known = kp.node_name != NULL && kp.node_name[0] != '\0' && env->node_lookup != NULL &&
                      env->node_lookup(env->node_ud, kp.node_name, a, &node_labels);
    hr_config birth;
    (void)hr_config_for_node(cfg, node_known ? &node_labels : NULL, &birth);
    /* Design §2.10: a group member is born at its group's value in force.
     * The key was made with the object's namespace, which a CREATE may
     * leave out (then it starts with "/"). */
    if (pod->group != NULL && env->group_lookup != NULL) {
        const char *key = pod->group;
        if (key[0] == '/') {
            size_t ln = strlen(ns), lk = strlen(key);
            char *k = hr_arena_alloc(a, ln + lk + 1);
            if (k == NULL)
                return false;
            memcpy(k, ns, ln);
            memcpy(k + ln, key, lk + 1);
            key = k;
        }
        int64_t num, den;
        if (key != NULL && env->group_lookup(env->group_ud, key, &num, &den) && den > 0 &&
            num >= den) {
            birth.initial_multiplier_milli = hr_muldiv64(num, 1000, den);
        }
    }
    int64_t room = env->quota_room != NULL ? env->quota_room(env->quota_ud, ns) : HR_NONE;
    hr_birth b = hr_admit_pod(&birth, pod, room, lim);
    r->has_reason = true;
    r->reason = b.reason;
    switch (b.verdict) {
    case HR_BIRTH_INELIGIBLE: why_not(r, b.reason); return true;
    case HR_BIRTH_NOTHING_DUE:
        why(r, "no container with a CPU request and no CPU limit");
        return true;
    case HR_BIRTH_QOS_CHANGE:
        why(r, "would change QoS %s -> %s", hr_qos_str(b.qos_before), hr_qos_str(b.qos_after));
        return true;
    case HR_BIRTH_LIMITS: break;
    }
    /* Design §4, foreign-writer: a VPA that writes the CPU limit of a
     * container of the pod is left to it, as the controller leaves it. The
     * rule is the core's (hr_vpa_writes_pod, hr_pod_birth_eligibility: the
     * last one, so only a pod otherwise managed can meet it); asked only of
     * a pod a patch is due for, so no other answer's reason changes. */
    if (env->vpa_writer != NULL) {
        hr_vpa_owner owner = {
            .kind = kp.owner.kind,
            .group = kp.owner.api_group,
            .name = kp.owner.name,
            .template_hash = hr_labels_get(&kp.meta.labels, "pod-template-hash"),
        };
        const char *w = env->vpa_writer(env->vpa_ud, ns, &owner, pod, kp.ctr_names, a);
        if (w != NULL) {
            in_ctx.foreign_writer = w;
            r->reason = hr_pod_birth_eligibility(pod);
            why(r, "%s writes its CPU limits", w);
            return true;
        }
    }
    yyjson_val *plims =
        yyjson_obj_get(yyjson_obj_get(yyjson_obj_get(obj, "spec"), "resources"), "limits");
    render_patch(pod, at, lim, b.pod_limit, yyjson_is_obj(plims), &r->patch);
    if (hr_buf_failed(&r->patch))
        return false;
    int n = (int)b.n_limits;
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

hr_status hr_admission_review(const hr_wh_env *env, const char *in, size_t len, hr_wh_result *r,
                              hr_err *err)
{
    memset(r, 0, sizeof *r);
    hr_buf_init(&r->body, 0);
    hr_buf_init(&r->patch, 0);
    r->http_status = 200;
    r->content_type = "application/json";

    yyjson_read_err rerr;
    yyjson_doc *doc = yyjson_read_opts((char *)(uintptr_t)in, len, 0, NULL, &rerr);
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
    else if (!yyjson_equals_str(yyjson_obj_get(root, "apiVersion"), REVIEW_API))
        st = bad_review(r, "apiVersion: want " REVIEW_API);
    else if (!yyjson_equals_str(yyjson_obj_get(root, "kind"), "AdmissionReview"))
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
    hr_buf_json_strn(b, yyjson_get_str(uid), yyjson_get_len(uid));
    hr_buf_puts(b, ",\"allowed\":true");
    if (r->outcome == HR_WH_MUTATED) {
        hr_buf_puts(b, ",\"patchType\":\"JSONPatch\",\"patch\":\"");
        hr_buf_b64(b, hr_buf_str(&r->patch), r->patch.len);
        hr_buf_putc(b, '"');
    }
    hr_buf_puts(b, "}}");
    yyjson_doc_free(doc);
    if (hr_buf_failed(b))
        return hr_err_set(err, HR_E_NOMEM, "admission: out of memory");
    return HR_OK;
}
