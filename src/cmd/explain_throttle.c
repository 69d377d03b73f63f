/*
 * explain_throttle.c — the throttling view of `explain` (explain_throttle.h,
 * design §9.7).
 *
 * Range queries over the window, one value per step (at most 240 steps, at
 * least 15 s apart), each series summed over the pod's containers:
 *
 *   cAdvisor: rate of container_cpu_cfs_periods_total,
 *             container_cpu_cfs_throttled_periods_total,
 *             container_cpu_usage_seconds_total and
 *             container_cpu_cfs_throttled_seconds_total, over the pod's
 *             containers (container not "" nor "POD"), or, when cAdvisor
 *             labels only the pod's cgroup (container=""), over that;
 *   ours:     headroom_pod_limit_cores and _target_cores of the pod, and
 *             headroom_node_slack_cores, _factor and _allocatable_cores of
 *             its node (the leader's; max() over replicas).
 *
 * The share of CFS periods throttled over the window says whether it was
 * throttled. Its worst step — the most CPU wanted while throttled, wanted =
 * used + throttled time (a lower bound for a container of several threads:
 * the kernel counts the cgroup's throttled wall time once) — gives the
 * ceiling it hit, what that ceiling was (the slack share r·F of that step,
 * maxMultiplier, a held write, another cap) and, by core/throttle.h on the
 * node of that step (S, M = S/(F − 1), A), the least request that would
 * have given it what it wanted.
 */
#include <math.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <yyjson.h>

#include "cmd/explain.h"
#include "cmd/explain_json.h"
#include "cmd/explain_throttle.h"
#include "cmd/httpc.h"
#include "core/pod.h"
#include "core/quantity.h"
#include "core/throttle.h"
#include "util/buf.h"
#include "util/file.h"
#include "util/urlenc.h"
#include "util/wipe.h"

#define MAX_STEPS 240
#define BODY_MAX (8u << 20)
#define THROTTLED_STEP 0.05 /* a step counts as throttled from 5 % of its periods */
#define THROTTLED_WINDOW 0.01

enum {
    S_PERIODS,
    S_THROTTLED,
    S_USAGE,
    S_THROTTLED_S,
    S_LIMIT,
    S_TARGET,
    S_SLACK,
    S_FACTOR,
    S_ALLOC,
    S_N
};

/* x to the nearest integer, half away from zero (the binary links no libm). */
static int64_t nearest(double x)
{
    return (int64_t)(x < 0 ? x - 0.5 : x + 0.5);
}

typedef struct series {
    double v[MAX_STEPS + 1];
    size_t found; /* values read */
} series;

typedef struct query_ctx {
    const hr_throttle_opts *o;
    char *auth; /* "Authorization: Bearer …" or NULL */
    int64_t start;
    long step;
    size_t n; /* steps + 1 */
} query_ctx;

/* One range query into s (NaN where no value). HR_EXIT_OK, or HR_EXIT_INPUT
 * with the reason on stderr. */
static int range_query(const query_ctx *q, const char *expr, series *s)
{
    for (size_t i = 0; i <= MAX_STEPS; i++)
        s->v[i] = NAN;
    s->found = 0;
    hr_buf url, body;
    hr_buf_init(&url, 0);
    hr_buf_init(&body, BODY_MAX);
    const char *base = q->o->url;
    size_t bl = strlen(base);
    hr_buf_printf(&url,
                  "%.*s/api/v1/query_range?query=", (int)(bl && base[bl - 1] == '/' ? bl - 1 : bl),
                  base);
    hr_buf_urlenc(&url, expr);
    int64_t last = q->start + (int64_t)q->step * (int64_t)(q->n - 1);
    hr_buf_printf(&url, "&start=%lld&end=%lld&step=%ld", (long long)q->start, (long long)last,
                  q->step);
    char why[512] = "";
    int rc = HR_EXIT_INPUT;
    yyjson_doc *d = NULL;
    if (hr_buf_failed(&url)) {
        fprintf(stderr, "explain: out of memory\n");
        goto out;
    }
    hr_httpc_req r = {hr_buf_str(&url), q->o->ca,          q->auth, NULL,
                      q->o->timeout_ms, "headroom-explain"};
    long status = hr_httpc_do(&r, &body, why, sizeof why);
    if (status == 0) {
        fprintf(stderr, "explain: Prometheus at %s: %s\n", base, why[0] ? why : "no answer");
        goto out;
    }
    d = hr_buf_failed(&body) ? NULL : yyjson_read(body.data, body.len, 0);
    yyjson_val *root = yyjson_doc_get_root(d);
    const char *st = yyjson_get_str(yyjson_obj_get(root, "status"));
    if (status != 200 || !st || strcmp(st, "success") != 0) {
        const char *e = yyjson_get_str(yyjson_obj_get(root, "error"));
        fprintf(stderr, "explain: Prometheus at %s answered HTTP %ld%s%s\n", base, status,
                e ? ": " : "", e ? e : "");
        goto out;
    }
    yyjson_val *res = yyjson_obj_get(yyjson_obj_get(root, "data"), "result");
    yyjson_val *ser = yyjson_arr_get_first(res); /* sum()/max(): one series or none */
    yyjson_val *vals = yyjson_obj_get(ser, "values"), *pt;
    size_t i, max;
    yyjson_arr_foreach(vals, i, max, pt)
    {
        double t = yyjson_get_num(yyjson_arr_get(pt, 0));
        const char *v = yyjson_get_str(yyjson_arr_get(pt, 1));
        if (!v)
            continue;
        double k = (t - (double)q->start) / (double)q->step;
        if (k < 0 || k > (double)(q->n - 1))
            continue;
        char *end;
        double x = strtod(v, &end);
        if (end == v || !isfinite(x))
            continue;
        s->v[(size_t)nearest(k)] = x;
        s->found++;
    }
    rc = HR_EXIT_OK;
out:
    yyjson_doc_free(d);
    hr_buf_free(&url);
    hr_buf_free(&body);
    return rc;
}

/* The selector of the pod's cAdvisor series: its containers, or its cgroup. */
static void cadvisor_expr(char *buf, size_t cap, const char *metric, const hr_throttle_pod *p,
                          bool pod_cgroup, long range_s)
{
    snprintf(buf, cap, "sum(rate(%s{namespace=\"%s\",pod=\"%s\",%s}[%lds]))", metric, p->ns,
             p->name, pod_cgroup ? "container=\"\"" : "container!=\"\",container!=\"POD\"",
             range_s);
}

static int64_t milli_of(double cores)
{
    return isfinite(cores) ? nearest(cores * 1000.0) : HR_NONE;
}

typedef struct verdict {
    bool pod_cgroup;
    double periods, throttled; /* over the window */
    size_t samples, throttled_samples;
    bool throttled_now; /* ≥ THROTTLED_WINDOW of the periods */
    size_t worst;       /* the step of the most CPU wanted while throttled */
    int64_t ceiling, target, used, wanted, max_used, last_limit;
    const char *source; /* what the ceiling was */
    int64_t share;      /* r·F at that step, HR_NONE if unknown */
    int64_t slack, managed, allocatable;
    int64_t need; /* the least request that avoids it, HR_NONE if unknown */
    bool no_room; /* even a request of `wanted` is above the node */
} verdict;

static void judge(const series *s, size_t n, long step, const hr_throttle_pod *p, verdict *v)
{
    v->worst = n;
    double best = -1;
    v->max_used = HR_NONE;
    v->last_limit = HR_NONE;
    for (size_t i = 0; i < n; i++) {
        double per = s[S_PERIODS].v[i], thr = s[S_THROTTLED].v[i];
        if (isfinite(s[S_LIMIT].v[i]))
            v->last_limit = milli_of(s[S_LIMIT].v[i]);
        if (isfinite(s[S_USAGE].v[i]) && milli_of(s[S_USAGE].v[i]) > v->max_used)
            v->max_used = milli_of(s[S_USAGE].v[i]);
        if (!isfinite(per))
            continue;
        v->samples++;
        v->periods += per * (double)step;
        if (!isfinite(thr))
            continue;
        v->throttled += thr * (double)step;
        if (per <= 0 || thr / per < THROTTLED_STEP)
            continue;
        v->throttled_samples++;
        double want = (isfinite(s[S_USAGE].v[i]) ? s[S_USAGE].v[i] : 0) +
                      (isfinite(s[S_THROTTLED_S].v[i]) ? s[S_THROTTLED_S].v[i] : 0);
        if (want > best) {
            best = want;
            v->worst = i;
        }
    }
    v->throttled_now =
        v->periods > 0 && v->throttled / v->periods >= THROTTLED_WINDOW && v->throttled_samples > 0;
    v->ceiling = v->target = v->used = v->wanted = v->share = v->need = HR_NONE;
    v->slack = v->managed = v->allocatable = HR_NONE;
    v->source = "unknown";
    if (!v->throttled_now || v->worst == n)
        return;
    size_t w = v->worst;
    v->used = milli_of(s[S_USAGE].v[w]);
    v->wanted = milli_of(best);
    v->ceiling = milli_of(s[S_LIMIT].v[w]);
    v->target = milli_of(s[S_TARGET].v[w]);
    v->slack = milli_of(s[S_SLACK].v[w]);
    v->allocatable = milli_of(s[S_ALLOC].v[w]);
    double f = s[S_FACTOR].v[w];
    if (v->slack != HR_NONE && v->slack > 0 && isfinite(f) && f > 1.0005)
        v->managed = nearest((double)v->slack / (f - 1.0));
    if (isfinite(f))
        v->share = nearest((double)p->request * (f > 1 ? f : 1));
    int64_t mm =
        p->max_multiplier_milli > 0 ? p->request * p->max_multiplier_milli / 1000 : HR_NONE;
    int64_t tol = 10;
    bool fixed = false;
    if (v->ceiling == HR_NONE) {
        v->source = "unknown";
    } else if (v->target != HR_NONE && v->ceiling + tol < v->target) {
        v->source = "held"; /* below the target the controller wanted: a write held */
    } else if (mm != HR_NONE && llabs(v->ceiling - mm) <= tol &&
               (v->share == HR_NONE || v->ceiling + tol < v->share)) {
        v->source = "maxMultiplier";
    } else if (v->share != HR_NONE && llabs(v->ceiling - v->share) <= tol + v->share / 50) {
        v->source = "slack-share";
    } else if (v->share != HR_NONE && v->ceiling < v->share) {
        v->source = "cap";
        fixed = true;
    } else {
        v->source = "other";
    }
    if (v->wanted == HR_NONE || v->wanted < 1)
        return;
    hr_throttle_node tn = {
        .slack = v->slack == HR_NONE ? 0 : v->slack,
        .managed = v->managed == HR_NONE ? p->request : v->managed,
        .allocatable = v->allocatable == HR_NONE ? v->wanted : v->allocatable,
        .request = p->request,
        .max_multiplier_milli = p->max_multiplier_milli,
        .fixed_cap = fixed,
    };
    v->need = hr_throttle_request_for(&tn, v->wanted);
    v->no_room = v->allocatable != HR_NONE && v->wanted > v->allocatable;
}

static const char *when(int64_t t, char *buf, size_t cap)
{
    time_t tt = (time_t)t;
    struct tm tm;
    if (!gmtime_r(&tt, &tm) || !strftime(buf, cap, "%Y-%m-%dT%H:%M:%SZ", &tm))
        snprintf(buf, cap, "%lld", (long long)t);
    return buf;
}

static const char *source_words(const verdict *v, const hr_throttle_pod *p, char *buf, size_t cap)
{
    char a[HR_CPU_FMT_MAX], b[HR_CPU_FMT_MAX];
    if (!strcmp(v->source, "slack-share"))
        snprintf(buf, cap, "its slack share on %s (request %s x factor %.2f)", p->node,
                 hr_explain_cpu(p->request, a),
                 p->request > 0 ? (double)v->share / (double)p->request : 0.0);
    else if (!strcmp(v->source, "maxMultiplier"))
        snprintf(buf, cap, "the maxMultiplier cap (request %s x %.2f)",
                 hr_explain_cpu(p->request, a), (double)p->max_multiplier_milli / 1000.0);
    else if (!strcmp(v->source, "held"))
        snprintf(buf, cap, "below its target %s: the write was held (explain says why now)",
                 hr_explain_cpu(v->target, a));
    else if (!strcmp(v->source, "cap"))
        snprintf(buf, cap,
                 "a cap below its slack share %s (max-cpu, a LimitRange or a quota: "
                 "explain names it now)",
                 hr_explain_cpu(v->share, b));
    else if (!strcmp(v->source, "other"))
        snprintf(buf, cap, "above its slack share %s (a grace or a limit not yet lowered)",
                 hr_explain_cpu(v->share, b));
    else
        snprintf(buf, cap, "unknown: no headroom_pod_limit_cores in Prometheus then");
    return buf;
}

static void print_text(const hr_throttle_opts *o, const hr_throttle_pod *p, const verdict *v,
                       int64_t at)
{
    char a[HR_CPU_FMT_MAX], b[HR_CPU_FMT_MAX], c[HR_CPU_FMT_MAX], t[32], words[256];
    printf("throttling of %s/%s over the last %lds (Prometheus %s; cAdvisor's %s)\n", p->ns,
           p->name, o->window_s, o->url, v->pod_cgroup ? "pod cgroup" : "container series");
    double pct = v->periods > 0 ? 100.0 * v->throttled / v->periods : 0.0;
    printf("  throttled     %.1f%% of %.0f CFS periods (%zu of %zu samples): %s\n", pct, v->periods,
           v->throttled_samples, v->samples, v->throttled_now ? "THROTTLED" : "not throttled");
    if (!v->throttled_now) {
        printf("  ceiling       %s now; it used at most %s\n", hr_explain_cpu(v->last_limit, a),
               hr_explain_cpu(v->max_used, b));
        return;
    }
    printf("  ceiling       %s when it was throttled: %s\n", hr_explain_cpu(v->ceiling, a),
           source_words(v, p, words, sizeof words));
    printf("  wanted        at least %s at %s (used %s + throttled %s)\n",
           hr_explain_cpu(v->wanted, a), when(at, t, sizeof t), hr_explain_cpu(v->used, b),
           hr_explain_cpu(v->wanted - v->used, c));
    if (v->need == HR_NONE)
        printf("  to avoid it   unknown\n");
    else if (v->no_room)
        printf("  to avoid it   no request on %s: it wanted more than the node's %s\n", p->node,
               hr_explain_cpu(v->allocatable, a));
    else
        printf("  to avoid it   a request of at least %s (now %s), on %s as it was: slack %s, "
               "managed %s\n",
               hr_explain_cpu(v->need, a), hr_explain_cpu(p->request, b), p->node,
               hr_explain_cpu(v->slack, c), hr_explain_cpu(v->managed, t));
}

static void jcpu(yyjson_mut_doc *d, yyjson_mut_val *obj, const char *k, int64_t milli)
{
    char b[HR_CPU_FMT_MAX];
    if (milli == HR_NONE)
        yyjson_mut_obj_add_null(d, obj, k);
    else
        yyjson_mut_obj_add_strcpy(d, obj, k, hr_explain_cpu(milli, b));
}

static int print_json(const hr_throttle_opts *o, const hr_throttle_pod *p, const verdict *v,
                      int64_t at, const hr_output *fmt)
{
    yyjson_mut_doc *d = yyjson_mut_doc_new(NULL);
    if (!d) {
        fprintf(stderr, "explain: out of memory\n");
        return HR_EXIT_INPUT;
    }
    yyjson_mut_val *r = yyjson_mut_obj(d);
    char t[32];
    yyjson_mut_obj_add_str(d, r, "kind", "Throttling");
    yyjson_mut_obj_add_strcpy(d, r, "namespace", p->ns);
    yyjson_mut_obj_add_strcpy(d, r, "pod", p->name);
    yyjson_mut_obj_add_strcpy(d, r, "node", p->node);
    yyjson_mut_obj_add_int(d, r, "windowSeconds", o->window_s);
    yyjson_mut_obj_add_str(d, r, "cadvisor", v->pod_cgroup ? "pod-cgroup" : "containers");
    yyjson_mut_obj_add_int(d, r, "periods", nearest(v->periods));
    yyjson_mut_obj_add_int(d, r, "throttledPeriods", nearest(v->throttled));
    yyjson_mut_obj_add_real(d, r, "throttledRatio",
                            v->periods > 0 ? (double)nearest(1e4 * v->throttled / v->periods) / 1e4
                                           : 0.0);
    yyjson_mut_obj_add_uint(d, r, "samples", v->samples);
    yyjson_mut_obj_add_uint(d, r, "throttledSamples", v->throttled_samples);
    yyjson_mut_obj_add_bool(d, r, "throttled", v->throttled_now);
    jcpu(d, r, "request", p->request);
    jcpu(d, r, "limitNow", v->last_limit);
    jcpu(d, r, "maxUsed", v->max_used);
    if (v->throttled_now) {
        yyjson_mut_obj_add_strcpy(d, r, "at", when(at, t, sizeof t));
        jcpu(d, r, "ceiling", v->ceiling);
        yyjson_mut_obj_add_str(d, r, "ceilingSource", v->source);
        jcpu(d, r, "slackShare", v->share);
        jcpu(d, r, "target", v->target);
        jcpu(d, r, "used", v->used);
        jcpu(d, r, "wanted", v->wanted);
        jcpu(d, r, "nodeSlack", v->slack);
        jcpu(d, r, "nodeManaged", v->managed);
        jcpu(d, r, "nodeAllocatable", v->allocatable);
        jcpu(d, r, "requestToAvoid", v->no_room ? HR_NONE : v->need);
    }
    int rc = hr_explain_emit(d, r, fmt);
    yyjson_mut_doc_free(d);
    return rc;
}

static char *read_bearer(const char *file)
{
    char *tok = NULL;
    size_t len = 0;
    hr_err err;
    if (hr_file_slurp(file, 64 * 1024, 1, &tok, &len, &err) != HR_OK) {
        fprintf(stderr, "explain: --prometheus-token-file: %s\n", err.msg);
        return NULL;
    }
    while (len && (tok[len - 1] == '\n' || tok[len - 1] == '\r'))
        tok[--len] = '\0';
    hr_buf b;
    hr_buf_init(&b, 0);
    hr_buf_printf(&b, "Authorization: Bearer %s", tok);
    hr_wipe(tok, len);
    free(tok);
    if (hr_buf_failed(&b)) {
        hr_buf_free(&b);
        return NULL;
    }
    return b.data; /* the buffer's string, owned by the caller */
}

int hr_explain_throttle(const hr_throttle_opts *o, const hr_throttle_pod *p, const hr_output *fmt)
{
    query_ctx q = {.o = o};
    q.step = o->window_s / MAX_STEPS;
    if (q.step < 15)
        q.step = 15;
    q.n = (size_t)(o->window_s / q.step) + 1;
    if (q.n > MAX_STEPS + 1)
        q.n = MAX_STEPS + 1;
    q.start = o->end - (int64_t)q.step * (int64_t)(q.n - 1);
    if (o->bearer && !(q.auth = read_bearer(o->bearer)))
        return HR_EXIT_INPUT;
    long range = 4 * q.step > 60 ? 4 * q.step : 60; /* rate() over at least a minute */
    series *s = calloc(S_N, sizeof *s);
    verdict v = {0};
    int rc = s ? HR_EXIT_OK : HR_EXIT_INPUT;
    char e[1024];
    /* The pod's containers, else its cgroup (cAdvisor without the runtime's
     * container labels). */
    for (int cg = 0; rc == HR_EXIT_OK && cg < 2; cg++) {
        v.pod_cgroup = cg == 1;
        cadvisor_expr(e, sizeof e, "container_cpu_cfs_periods_total", p, v.pod_cgroup, range);
        rc = range_query(&q, e, &s[S_PERIODS]);
        if (s[S_PERIODS].found)
            break;
    }
    if (rc == HR_EXIT_OK && !s[S_PERIODS].found) {
        fprintf(stderr,
                "explain: Prometheus at %s holds no container_cpu_cfs_periods_total of %s/%s in "
                "the last %lds (does it scrape the kubelet's cAdvisor, and has the pod a CPU "
                "limit?)\n",
                o->url, p->ns, p->name, o->window_s);
        rc = HR_EXIT_INPUT;
    }
    static const char *const cad[] = {[S_THROTTLED] = "container_cpu_cfs_throttled_periods_total",
                                      [S_USAGE] = "container_cpu_usage_seconds_total",
                                      [S_THROTTLED_S] =
                                          "container_cpu_cfs_throttled_seconds_total"};
    for (int k = S_THROTTLED; rc == HR_EXIT_OK && k <= S_THROTTLED_S; k++) {
        cadvisor_expr(e, sizeof e, cad[k], p, v.pod_cgroup, range);
        rc = range_query(&q, e, &s[k]);
    }
    static const char *const pod_m[] = {
        [S_LIMIT] = "headroom_pod_limit_cores", [S_TARGET] = "headroom_pod_target_cores"};
    for (int k = S_LIMIT; rc == HR_EXIT_OK && k <= S_TARGET; k++) {
        snprintf(e, sizeof e, "max(%s{namespace=\"%s\",pod=\"%s\"})", pod_m[k], p->ns, p->name);
        rc = range_query(&q, e, &s[k]);
    }
    static const char *const node_m[] = {[S_SLACK] = "headroom_node_slack_cores",
                                         [S_FACTOR] = "headroom_node_factor",
                                         [S_ALLOC] = "headroom_node_allocatable_cores"};
    for (int k = S_SLACK; rc == HR_EXIT_OK && k <= S_ALLOC; k++) {
        snprintf(e, sizeof e, "max(%s{node=\"%s\"})", node_m[k], p->node);
        rc = range_query(&q, e, &s[k]);
    }
    if (rc == HR_EXIT_OK) {
        judge(s, q.n, q.step, p, &v);
        int64_t at = q.start + (int64_t)q.step * (int64_t)(v.worst < q.n ? v.worst : q.n - 1);
        if (fmt->kind == HR_OUTPUT_TEXT)
            print_text(o, p, &v, at);
        else
            rc = print_json(o, p, &v, at, fmt);
    }
    free(s);
    if (q.auth) {
        hr_wipe(q.auth, strlen(q.auth));
        free(q.auth);
    }
    return rc;
}
