/*
 * preflight.c — `headroom preflight`: is this cluster ready for kube-headroom
 * (design §12)?
 *
 * One line per check, PASS / WARN / FAIL, each saying what was found and
 * what to do; exit 1 when anything fails. Read-only: lists, discovery and
 * SelfSubjectAccessReviews (which write nothing). It reads through the same
 * decoders and cache as the controller, so "managed namespace" means exactly
 * what it means to the controller — including the HeadroomConfig's
 * namespaceSelector when one exists.
 */
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <yyjson.h>

#include "cmd/conn.h"
#include "cmd/live.h"
#include "cmd/output.h"
#include "cmd/preflight.h"
#include "core/eligibility.h"
#include "core/names.h"
#include "core/vpa.h"
#include "kube/decode/vpa.h"
#include "kube/kname.h"
#include "kube/kversion.h"
#include "util/jsonstr.h"
#include "util/strmap.h"

#define MAX_LISTED 8 /* names shown per line, then "and N more" */

typedef enum verdict { V_PASS, V_WARN, V_FAIL } verdict;

typedef struct pf {
    hr_kclient *k;
    hr_cache *c;
    const char *own_ns;
    int fails, warns;
    const char *check; /* the check the next lines belong to (-o json's "name") */
    hr_buf *items;     /* -o json and the rest: the lines as JSON objects; NULL: text */
} pf;

static void line(pf *p, verdict v, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
static void line(pf *p, verdict v, const char *fmt, ...)
{
    static const char *const tag[] = {"PASS", "WARN", "FAIL"};
    if (v == V_FAIL)
        p->fails++;
    if (v == V_WARN)
        p->warns++;
    va_list ap;
    va_start(ap, fmt);
    char *msg = NULL;
    int n = vasprintf(&msg, fmt, ap);
    va_end(ap);
    if (p->items) { /* {"name","verdict","message"} */
        hr_buf_puts(p->items, p->items->len ? ",{\"name\":" : "{\"name\":");
        hr_buf_json_str(p->items, p->check);
        hr_buf_printf(p->items, ",\"verdict\":\"%s\",\"message\":", tag[v]);
        hr_buf_json_str(p->items, n < 0 ? "" : msg);
        hr_buf_putc(p->items, '}');
    } else {
        printf("%s  %s\n", tag[v], n < 0 ? "" : msg);
    }
    free(msg);
}

/* A list of names for one line: "a, b, c and 4 more". */
typedef struct names {
    hr_buf b;
    size_t n;
} names;

static void names_add(names *l, const char *s)
{
    if (l->n < MAX_LISTED)
        hr_buf_printf(&l->b, "%s%s", l->n ? ", " : "", s);
    l->n++;
}

static const char *names_str(names *l)
{
    if (l->n > MAX_LISTED)
        hr_buf_printf(&l->b, " and %zu more", l->n - MAX_LISTED);
    return hr_buf_str(&l->b);
}

/* ------------------------------------------------------------ checks */

/* GET path as a JSON document; NULL (with err set) when it cannot be had. */
static yyjson_doc *get_doc(pf *p, const char *path, hr_err *err)
{
    hr_buf b;
    hr_buf_init(&b, 16 << 20);
    yyjson_doc *d = NULL;
    if (hr_live_get(p->k, path, &b, err) == HR_OK && !(d = yyjson_read(hr_buf_str(&b), b.len, 0)))
        HR_IGNORE(hr_err_set(err, HR_E_INPUT, "GET %s: not JSON", path)); /* NULL says it */
    hr_buf_free(&b);
    return d;
}

static void check_version(pf *p)
{
    hr_err err;
    yyjson_doc *d = get_doc(p, "/version", &err);
    if (!d) {
        line(p, V_FAIL, "server version: %s", err.msg);
        return;
    }
    yyjson_val *r = yyjson_doc_get_root(d);
    const char *git = yyjson_get_str(yyjson_obj_get(r, "gitVersion"));
    const char *major = yyjson_get_str(yyjson_obj_get(r, "major"));
    const char *minor = yyjson_get_str(yyjson_obj_get(r, "minor"));
    hr_kversion_verdict v = hr_kversion_check(major, minor);
    if (!git || v == HR_KVERSION_UNREADABLE)
        line(p, V_FAIL,
             "server version: /version has no gitVersion, or no numeric major and minor");
    else if (v == HR_KVERSION_SUPPORTED)
        line(p, V_PASS, "server version %s: supported (kube-headroom supports Kubernetes %s)", git,
             HR_KVERSION_RANGE);
    else
        line(p, V_FAIL,
             "server version %s: not supported; kube-headroom supports Kubernetes %s, where "
             "in-place resize through pods/resize is GA (1.33 and 1.34 serve it in beta, which is "
             "not supported)",
             git, HR_KVERSION_RANGE);
    yyjson_doc_free(d);
}

static void check_resize(pf *p)
{
    hr_err err;
    yyjson_doc *d = get_doc(p, "/api/v1", &err);
    if (!d) {
        line(p, V_FAIL, "pods/resize: cannot read the core API's discovery: %s", err.msg);
        return;
    }
    yyjson_val *res = yyjson_obj_get(yyjson_doc_get_root(d), "resources");
    bool found = false, patch = false;
    size_t i, max;
    yyjson_val *e;
    yyjson_arr_foreach(res, i, max, e)
    {
        if (!yyjson_equals_str(yyjson_obj_get(e, "name"), "pods/resize"))
            continue;
        found = true;
        size_t j, vmax;
        yyjson_val *v;
        yyjson_arr_foreach(yyjson_obj_get(e, "verbs"), j, vmax, v) patch |=
            yyjson_equals_str(v, "patch");
    }
    if (found && patch)
        line(p, V_PASS, "the pods/resize subresource is served and takes patch");
    else
        line(p, V_FAIL, "the pods/resize subresource is %s: limits cannot be changed in place",
             found ? "served without patch" : "not served (InPlacePodVerticalScaling off?)");
    yyjson_doc_free(d);
}

typedef struct need {
    const char *group, *resource, *sub, *verb;
    bool in_own_ns;   /* leases live in the controller's namespace */
    const char *name; /* the one object the role names (resourceNames), or NULL */
} need;

/* What the controller does with each permission is in charts/kube-headroom/templates/rbac.yaml. */
static const need NEEDS[] = {
    {"", "pods", NULL, "list", false, NULL},
    {"", "pods", NULL, "watch", false, NULL},
    {"", "pods", NULL, "patch", false, NULL},
    {"", "pods", "resize", "patch", false, NULL},
    {"", "nodes", NULL, "get", false, NULL},
    {"", "nodes", NULL, "watch", false, NULL},
    {"", "namespaces", NULL, "watch", false, NULL},
    {"", "limitranges", NULL, "watch", false, NULL},
    {"", "resourcequotas", NULL, "watch", false, NULL},
    {"events.k8s.io", "events", NULL, "create", false, NULL},
    {HR_GROUP, "headroomconfigs", NULL, "watch", false, NULL},
    {HR_GROUP, "headroomconfigs", "status", "patch", false, NULL},
    {"coordination.k8s.io", "leases", NULL, "update", true, HR_LEASE_NAME},
};

/* A SelfSubjectAccessReview: 1 allowed, 0 denied, -1 could not ask. */
static int allowed(pf *p, const need *n, hr_err *err)
{
    hr_buf body, resp;
    hr_buf_init(&body, 0);
    hr_buf_init(&resp, 1 << 20);
    hr_buf_puts(&body,
                "{\"apiVersion\":\"authorization.k8s.io/v1\",\"kind\":\"SelfSubjectAccessReview\","
                "\"spec\":{\"resourceAttributes\":{\"group\":");
    hr_buf_json_str(&body, n->group);
    hr_buf_puts(&body, ",\"resource\":");
    hr_buf_json_str(&body, n->resource);
    hr_buf_puts(&body, ",\"verb\":");
    hr_buf_json_str(&body, n->verb);
    if (n->sub) {
        hr_buf_puts(&body, ",\"subresource\":");
        hr_buf_json_str(&body, n->sub);
    }
    if (n->in_own_ns) {
        hr_buf_puts(&body, ",\"namespace\":");
        hr_buf_json_str(&body, p->own_ns);
    }
    if (n->name) {
        hr_buf_puts(&body, ",\"name\":");
        hr_buf_json_str(&body, n->name);
    }
    hr_buf_puts(&body, "}}}");
    hr_kresult res = {0};
    int out = -1;
    /* A create that stores nothing; it goes through the write limiter like
     * any POST, which at a dozen requests does not matter. */
    if (hr_kclient_do(p->k, "POST", "/apis/authorization.k8s.io/v1/selfsubjectaccessreviews",
                      "application/json", hr_buf_str(&body), body.len, &resp, &res, err) == HR_OK) {
        yyjson_doc *d = yyjson_read(hr_buf_str(&resp), resp.len, 0);
        yyjson_val *a = yyjson_ptr_get(yyjson_doc_get_root(d), "/status/allowed");
        out = yyjson_is_true(a) ? 1 : 0;
        yyjson_doc_free(d);
    }
    hr_buf_free(&body);
    hr_buf_free(&resp);
    return out;
}

static void check_rbac(pf *p)
{
    names missing = {0};
    hr_buf_init(&missing.b, 0);
    hr_err err;
    for (size_t i = 0; i < sizeof NEEDS / sizeof *NEEDS; i++) {
        const need *n = &NEEDS[i];
        int a = allowed(p, n, &err);
        if (a < 0) {
            line(p, V_FAIL, "RBAC: cannot ask the API server (SelfSubjectAccessReview): %s",
                 err.msg);
            hr_buf_free(&missing.b);
            return;
        }
        if (a == 0) {
            char what[160];
            snprintf(what, sizeof what, "%s %s%s%s%s%s%s", n->verb, n->resource, n->sub ? "/" : "",
                     n->sub ? n->sub : "", n->group[0] ? "." : "", n->group,
                     n->in_own_ns ? " (in --namespace)" : "");
            names_add(&missing, what);
        }
    }
    if (missing.n == 0)
        line(p, V_PASS, "RBAC: this identity may do all %zu things the controller does",
             sizeof NEEDS / sizeof *NEEDS);
    else
        line(p, V_FAIL,
             "RBAC: this identity may not %s (bind the kube-headroom ClusterRole and Role of the "
             "chart to it)",
             names_str(&missing));
    hr_buf_free(&missing.b);
}

static bool ns_managed(pf *p, const char *ns)
{
    hr_cns_view v;
    const hr_config *cfg = hr_cache_config(p->c, NULL);
    return hr_cache_ns_get(p->c, ns, &v) &&
           hr_namespace_state(cfg, ns, &v.labels, p->own_ns) == HR_NS_MANAGED;
}

static void check_namespaces(pf *p)
{
    hr_cache_lock(p->c);
    names managed = {0}, quota = {0}, capped = {0};
    hr_buf_init(&managed.b, 0);
    hr_buf_init(&quota.b, 0);
    hr_buf_init(&capped.b, 0);
    uint32_t it = 0;
    hr_cns_view v;
    while (hr_cache_ns_next(p->c, &it, &v)) {
        if (!ns_managed(p, v.name))
            continue;
        names_add(&managed, v.name);
        hr_limit_bounds b = hr_cache_ns_bounds(p->c, v.name);
        if (b.ctr_max != HR_NONE || b.pod_max != HR_NONE || b.ctr_ratio_milli != HR_NONE)
            names_add(&capped, v.name);
    }
    const char **qns;
    size_t nq;
    hr_err err;
    hr_status qst = hr_cache_managed_quota_ns(p->c, p->own_ns, &qns, &nq, &err);
    for (size_t i = 0; qst == HR_OK && i < nq; i++)
        names_add(&quota, qns[i]);
    free(qns);
    hr_cache_unlock(p->c);

    if (managed.n == 0)
        line(p, V_WARN, "no namespace is managed yet (label one %s=%s)", HR_LABEL_MODE,
             HR_MODE_MANAGED);
    else
        line(p, V_PASS, "%zu managed namespace%s: %s", managed.n, managed.n == 1 ? "" : "s",
             names_str(&managed));
    if (qst != HR_OK)
        line(p, V_FAIL, "ResourceQuotas: %s", err.msg);
    else if (quota.n)
        line(p, V_PASS,
             "a ResourceQuota bounds limits.cpu in managed namespace%s %s: raises there fit "
             "the quota (the quota cap, spec.quotaReservePercent kept for new pods)",
             quota.n == 1 ? "" : "s", names_str(&quota));
    else
        line(p, V_PASS, "no managed namespace has a ResourceQuota on limits.cpu");
    if (capped.n)
        line(p, V_WARN, "LimitRanges cap CPU limits in %s: limits there stop at the cap",
             names_str(&capped));
    else
        line(p, V_PASS, "no LimitRange caps CPU limits in a managed namespace");
    hr_buf_free(&managed.b);
    hr_buf_free(&quota.b);
    hr_buf_free(&capped.b);
}

static void check_nodes(pf *p)
{
    hr_cache_lock(p->c);
    names win = {0};
    hr_buf_init(&win.b, 0);
    size_t n = 0;
    uint32_t it = 0;
    hr_cnode_view v;
    while (hr_cache_node_next(p->c, &it, &v)) {
        if (!v.present)
            continue;
        n++;
        if (v.windows)
            names_add(&win, v.name);
    }
    hr_cache_unlock(p->c);
    if (win.n)
        line(p, V_WARN, "%zu Windows node%s (%s): pods there are never managed", win.n,
             win.n == 1 ? "" : "s", names_str(&win));
    else
        line(p, V_PASS, "%zu node%s, none running Windows", n, n == 1 ? "" : "s");
    hr_buf_free(&win.b);
}

/* Running pods whose status has no container resources: their kubelet
 * does not report them, and the API server refuses to resize such pods. */
typedef struct no_res {
    names nodes;
    hr_strmap seen; /* nodes already named */
    size_t running;
} no_res;

static hr_status pod_reports(void *ud, yyjson_val *pod, hr_err *err)
{
    no_res *r = ud;
    yyjson_val *st = yyjson_obj_get(pod, "status");
    if (!yyjson_equals_str(yyjson_obj_get(st, "phase"), "Running"))
        return HR_OK;
    r->running++;
    size_t i, max;
    yyjson_val *cs;
    bool all = true;
    yyjson_arr_foreach(yyjson_obj_get(st, "containerStatuses"), i, max, cs) all &=
        yyjson_is_obj(yyjson_obj_get(cs, "resources"));
    if (all)
        return HR_OK;
    const char *node = yyjson_get_str(yyjson_ptr_get(pod, "/spec/nodeName"));
    if (!node)
        return HR_OK;
    if (hr_strmap_get(&r->seen, node))
        return HR_OK;
    if (!hr_strmap_put(&r->seen, node, 1))
        return hr_err_set(err, HR_E_NOMEM, "preflight: out of memory");
    names_add(&r->nodes, node);
    return HR_OK;
}

static void check_kubelets(pf *p)
{
    no_res r;
    memset(&r, 0, sizeof r);
    hr_buf_init(&r.nodes.b, 0);
    hr_strmap_init(&r.seen);
    hr_err err;
    if (hr_live_each(p->k, "/api/v1/pods", "fieldSelector=status.phase%3DRunning", false,
                     pod_reports, &r, &err) != HR_OK)
        line(p, V_FAIL, "kubelets: cannot list pods: %s", err.msg);
    else if (r.nodes.n)
        line(p, V_WARN,
             "kubelets on %s do not report container resources: pods there cannot be "
             "resized",
             names_str(&r.nodes));
    else
        line(p, V_PASS, "every kubelet reports container resources (%zu running pods)", r.running);
    hr_buf_free(&r.nodes.b);
    hr_strmap_free(&r.seen);
}

/* A VPA that sets limits on a managed workload is a second writer of the
 * same field: the controller leaves its pods to it (design §4,
 * foreign-writer). Read by the controller's decoder and rule (core/vpa.h). */
static hr_status vpa_item(void *ud, yyjson_val *vpa, hr_err *err)
{
    (void)err;
    names *l = ((void **)ud)[0];
    pf *p = ((void **)ud)[1];
    hr_arena a;
    hr_arena_init(&a, 1024);
    hr_kvpa v;
    hr_err derr;
    if (hr_decode_vpa(vpa, &a, &v, &derr) == HR_OK && hr_vpa_writes_limits(&v.vpa)) {
        hr_cache_lock(p->c);
        bool managed = ns_managed(p, v.meta.ns);
        hr_cache_unlock(p->c);
        if (managed) {
            char who[300];
            snprintf(who, sizeof who, "%s/%s", v.meta.ns, v.meta.name);
            names_add(l, who);
        }
    }
    hr_arena_free(&a);
    return HR_OK;
}

static void check_vpa(pf *p)
{
    names l = {0};
    hr_buf_init(&l.b, 0);
    void *ud[2] = {&l, p};
    hr_err err;
    yyjson_doc *group = get_doc(p, "/apis/autoscaling.k8s.io/v1", &err);
    bool installed = group != NULL;
    yyjson_doc_free(group);
    if (!installed)
        line(p, V_PASS, "no VerticalPodAutoscaler API (VPA not installed)");
    else if (hr_live_each(p->k, "/apis/autoscaling.k8s.io/v1/verticalpodautoscalers", NULL, true,
                          vpa_item, ud, &err) != HR_OK)
        line(p, V_FAIL, "VerticalPodAutoscalers: cannot list them: %s", err.msg);
    else if (l.n)
        line(p, V_WARN,
             "VerticalPodAutoscalers set limits in managed namespaces (%s): kube-headroom leaves "
             "their pods' CPU limits to them (foreign-writer); use controlledValues: RequestsOnly "
             "to have kube-headroom set the limits",
             names_str(&l));
    else
        line(p, V_PASS, "no VerticalPodAutoscaler sets CPU limits in a managed namespace");
    hr_buf_free(&l.b);
}

/* ------------------------------------------------------------ command */

enum {
    F_NAMESPACE,
    F_OUTPUT,
    F_NO_HEADERS,
    F_ALLOW_MISSING,
    F_CONN,
    F_TIMEOUT = F_CONN + HR_CONN_N,
    F_N
};

static const hr_flag preflight_flags[F_N] = {
    [F_NAMESPACE] = {"namespace", 'n', HR_FLAG_STRING, "NAMESPACE",
                     "where the controller will run (its Lease; never managed), default "
                     "kube-headroom",
                     NULL},
    [F_OUTPUT] = {"output", 'o', HR_FLAG_STRING, "FORMAT",
                  "text (default), json: {kind: Preflight, server, items: [{name, verdict, "
                  "message}],\n"
                  "                           failed, warnings}; yaml, jsonpath=TEMPLATE, "
                  "custom-columns=SPEC of it",
                  "text json yaml jsonpath= custom-columns="},
    [F_NO_HEADERS] = HR_FLAG_NO_HEADERS,
    [F_ALLOW_MISSING] = HR_FLAG_ALLOW_MISSING,
    [F_CONN] = HR_CONN_FLAGS,
    [F_TIMEOUT] = HR_FLAG_REQUEST_TIMEOUT,
};
HR_FLAGS_FIT(F_N);

const hr_command hr_preflight_command = {
    "preflight",
    "[-n NAMESPACE] [-o text|json|yaml|jsonpath=TEMPLATE|custom-columns=SPEC]",
    "Is this cluster ready for kube-headroom? (read-only; exit 1 on a FAIL)",
    "One PASS/WARN/FAIL line per check: server version, pods/resize, RBAC of your identity,\n"
    "limits.cpu quotas and capping LimitRanges in managed namespaces, Windows nodes,\n"
    "kubelets that do not report container resources, VPAs that set limits.\n",
    preflight_flags,
    F_N,
    0,
    hr_cmd_preflight,
};

int hr_cmd_preflight(const char *prog, int argc, char **argv)
{
    hr_args args;
    int rc = hr_args_parse(prog, &hr_preflight_command, argc, argv, &args);
    hr_conn conn;
    hr_output out = {.kind = HR_OUTPUT_TEXT, .allow_missing = true};
    if (rc == HR_EXIT_OK && !args.help)
        rc = hr_conn_opts(prog, &hr_preflight_command, &args, F_CONN, &conn);
    if (rc == HR_EXIT_OK && !args.help &&
        (rc = hr_output_parse(prog, &hr_preflight_command, args.val[F_OUTPUT], HR_OUTPUT_ALLOW_DOC,
                              &out)) == HR_EXIT_OK)
        hr_output_flags(&out, &args, F_NO_HEADERS, F_ALLOW_MISSING);
    const char *own_ns = args.val[F_NAMESPACE] ? args.val[F_NAMESPACE] : "kube-headroom";
    long timeout_ms = args.val[F_TIMEOUT] ? hr_duration_ms(args.val[F_TIMEOUT]) : 0;
    hr_args_free(&args);
    if (rc != HR_EXIT_OK || args.help)
        return rc;
    if (timeout_ms < 0)
        return hr_usage_error(prog, &hr_preflight_command,
                              "--request-timeout takes 30s, 2m, 1h or 0");
    if (!hr_kname_label(own_ns))
        return hr_usage_error(prog, &hr_preflight_command, "\"%s\" is not a namespace name",
                              own_ns);
    hr_err err;
    pf p = {.own_ns = own_ns};
    if (hr_live_client(&conn.o, timeout_ms, &p.k, &err) != HR_OK) {
        fprintf(stderr, "%s preflight: %s\n", prog, err.msg);
        return HR_EXIT_INPUT;
    }
    hr_buf items;
    hr_buf_init(&items, 0);
    if (out.kind != HR_OUTPUT_TEXT)
        p.items = &items;
    else
        printf("preflight of %s (%s)\n", hr_kclient_server(p.k), hr_kclient_origin(p.k));
    p.check = "version";
    check_version(&p);
    p.check = "pods-resize";
    check_resize(&p);
    p.check = "rbac";
    check_rbac(&p);
    /* Pods are not cached: only the kubelet check reads them, page by page. */
    static const hr_ckind kinds[] = {HR_CK_CONFIG, HR_CK_NAMESPACE, HR_CK_NODE, HR_CK_LIMITRANGE,
                                     HR_CK_QUOTA};
    hr_status st = hr_cache_new(&p.c, &err);
    for (size_t i = 0; st == HR_OK && i < sizeof kinds / sizeof *kinds; i++)
        st = hr_live_load_kind(p.k, p.c, kinds[i], &err);
    if (st != HR_OK) {
        p.check = "read";
        line(&p, V_FAIL, "cannot read the cluster: %s", err.msg);
    } else {
        p.check = "namespaces";
        check_namespaces(&p);
        p.check = "nodes";
        check_nodes(&p);
        p.check = "kubelets";
        check_kubelets(&p);
        p.check = "vpa";
        check_vpa(&p);
    }
    if (p.items) { /* the object, printed as -o asks (cmd/output.h) */
        hr_buf doc, o;
        hr_buf_init(&doc, 0);
        hr_buf_init(&o, 0);
        hr_buf_puts(&doc, "{\"apiVersion\":\"kube-headroom.dev/v1alpha1\",\"kind\":\"Preflight\","
                          "\"server\":");
        hr_buf_json_str(&doc, hr_kclient_server(p.k));
        hr_buf_puts(&doc, ",\"origin\":");
        hr_buf_json_str(&doc, hr_kclient_origin(p.k));
        hr_buf_printf(&doc, ",\"items\":[%s],\"failed\":%d,\"warnings\":%d}", hr_buf_str(&items),
                      p.fails, p.warns);
        /* JSON indented as plan's is: through yyjson */
        yyjson_doc *d = hr_buf_failed(&doc) ? NULL : yyjson_read(hr_buf_str(&doc), doc.len, 0);
        size_t len = 0;
        char *pretty = d ? yyjson_write(d, YYJSON_WRITE_PRETTY_TWO_SPACES, &len) : NULL;
        yyjson_doc_free(d);
        st = pretty ? hr_output_doc(&out, pretty, len, &o, &err)
                    : hr_err_set(&err, HR_E_NOMEM, "out of memory");
        free(pretty);
        if (st == HR_OK && fwrite(hr_buf_str(&o), 1, o.len, stdout) != o.len)
            st = hr_err_set(&err, HR_E_IO, "writing the output failed");
        if (st != HR_OK)
            fprintf(stderr, "%s preflight: %s\n", prog, err.msg);
        hr_buf_free(&doc);
        hr_buf_free(&o);
        if (st != HR_OK)
            p.fails++;
    } else {
        printf("%d failed, %d warning%s\n", p.fails, p.warns, p.warns == 1 ? "" : "s");
    }
    hr_buf_free(&items);
    hr_cache_free(p.c);
    hr_kclient_free(p.k);
    return p.fails ? HR_EXIT_INPUT : HR_EXIT_OK;
}
