/*
 * it_client.c — the Kubernetes client (kube/transport/client.h, kubeconfig.h,
 * events.h, lease.h) against the REAL test control plane (tests/cluster:
 * kube-apiserver + etcd + kwok). No imitation server anywhere: what the
 * client must survive is what a real API server says.
 *
 * Needs KUBECONFIG = the cluster's admin kubeconfig (CTest sets it, and
 * HEADROOM_CLUSTER_DIR for the PKI files). Covers: /version; paginated
 * lists; 404/409/422 carrying the server's Status message; server-side
 * apply to pods/NAME/resize on a running (kwok) pod, with and without
 * force; merge patch; Events; Lease create/get/update with resourceVersion
 * preconditions; watch streams (events as they happen, callback stop, stop
 * flag); concurrent requests from threads; and authentication with client
 * certificates (inline data and files), a bearer token, a token file, and
 * exec plugins returning a token or a certificate — including an exec
 * token that the server rejects, which must rerun the plugin once.
 *
 * Everything it creates is named hr-it-<pid>... and deleted at the end.
 * It prints a few measured figures (request latency, threads throughput).
 */
#include <inttypes.h>
#include <pthread.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include <cmocka.h>
#include <yyjson.h>

#include "kube/config/kubeconfig.h"
#include "kube/ktime.h"
#include "kube/transport/client.h"
#include "kube/write/events.h"
#include "kube/write/lease.h"
#include "kube/write/patch.h"
#include "server/apimetrics.h"
#include "util/base64.h"
#include "util/clock.h"

static hr_kclient *g_admin;
static char g_ns[64], g_node[64], g_pod[64] = "web-0", g_crb[64];
static char g_dir[128]; /* temp dir for kubeconfigs and plugins */
static char *g_ca_b64;  /* the cluster CA, base64, from the admin kubeconfig */
static char *g_server;
static char g_sa_token[4096];

/* ------------------------------------------------------------- helpers */

static hr_kclient *client_for(const char *kubeconfig, const char *ua)
{
    hr_kclient_opts o = {
        .kubeconfig = kubeconfig, .user_agent = ua, .qps = 500, .burst = 500, .timeout_ms = 20000};
    hr_kclient *c = NULL;
    hr_err e = {0};
    if (hr_kclient_new(&o, &c, &e) != HR_OK)
        fail_msg("client for %s: %s", kubeconfig ? kubeconfig : "$KUBECONFIG", e.msg);
    return c;
}

/* Run a request, return the HTTP status; *doc gets the parsed body when
 * wanted. Transport failures fail the test. */
static long req(hr_kclient *c, const char *method, const char *path, const char *ct,
                const char *body, yyjson_doc **doc, hr_err *e)
{
    hr_buf b;
    hr_buf_init(&b, 64 << 20);
    hr_kresult r = {0};
    hr_err local;
    if (!e)
        e = &local;
    hr_err_clear(e);
    hr_status st = hr_kclient_do(c, method, path, ct, body, body ? strlen(body) : 0, &b, &r, e);
    if (st != HR_OK && r.status == 0)
        fail_msg("%s %s: transport error: %s", method, path, e->msg);
    if (doc)
        *doc = b.len ? yyjson_read(b.data, b.len, 0) : NULL;
    hr_buf_free(&b);
    return r.status;
}

static long post_json(hr_kclient *c, const char *path, const char *body, hr_err *e)
{
    return req(c, "POST", path, "application/json", body, NULL, e);
}

static const char *jstr(yyjson_doc *d, const char *ptr)
{
    return yyjson_get_str(yyjson_doc_ptr_get(d, ptr));
}

static void must(long got, long want, const char *what, const hr_err *e)
{
    if (got != want)
        fail_msg("%s: HTTP %ld, want %ld (%s)", what, got, want, e ? e->msg : "");
}

static void put_file(const char *name, const char *content, mode_t mode)
{
    char p[512];
    snprintf(p, sizeof p, "%s/%s", g_dir, name);
    FILE *f = fopen(p, "w");
    assert_non_null(f);
    fputs(content, f);
    assert_int_equal(fclose(f), 0);
    assert_int_equal(chmod(p, mode), 0);
}

static const char *path_of(const char *name)
{
    static char p[4][512];
    static int i;
    i = (i + 1) % 4;
    snprintf(p[i], sizeof p[i], "%s/%s", g_dir, name);
    return p[i];
}

/* A kubeconfig for the cluster with the given user: section. */
static const char *kubeconfig_with(const char *name, const char *user_yaml)
{
    char *y = malloc(16384);
    assert_non_null(y);
    snprintf(y, 16384,
             "apiVersion: v1\nkind: Config\ncurrent-context: it\n"
             "clusters:\n- name: c\n  cluster:\n    server: %s\n"
             "    certificate-authority-data: %s\n"
             "contexts:\n- name: it\n  context: {cluster: c, user: u, namespace: %s}\n"
             "users:\n- name: u\n  user:\n%s",
             g_server, g_ca_b64, g_ns, user_yaml);
    put_file(name, y, 0600);
    free(y);
    return path_of(name);
}

/* Who the server thinks we are (SelfSubjectReview needs no RBAC). */
static void whoami(hr_kclient *c, char *out, size_t cap)
{
    yyjson_doc *d = NULL;
    hr_err e;
    long s =
        req(c, "POST", "/apis/authentication.k8s.io/v1/selfsubjectreviews", "application/json",
            "{\"apiVersion\":\"authentication.k8s.io/v1\",\"kind\":\"SelfSubjectReview\"}", &d, &e);
    must(s, 201, "selfsubjectreview", &e);
    const char *u = jstr(d, "/status/userInfo/username");
    snprintf(out, cap, "%s", u ? u : "?");
    yyjson_doc_free(d);
}

static double now_ms(void)
{
    return (double)hr_mono_ns() / 1e6;
}

/* --------------------------------------------------------------- setup */

static int setup(void **state)
{
    (void)state;
    if (!getenv("KUBECONFIG")) {
        fprintf(stderr, "it_client: KUBECONFIG is not set (run through ctest -L e2e)\n");
        return -1;
    }
    snprintf(g_dir, sizeof g_dir, "/tmp/hr-it-client-XXXXXX");
    if (!mkdtemp(g_dir))
        return -1;
    int pid = (int)getpid();
    snprintf(g_ns, sizeof g_ns, "hr-it-%d", pid);
    snprintf(g_node, sizeof g_node, "hr-it-node-%d", pid);
    snprintf(g_crb, sizeof g_crb, "hr-it-view-%d", pid);

    /* The CA and server for the kubeconfigs we write, from the admin one. */
    hr_kubeconfig *k = NULL;
    hr_err e = {0};
    if (hr_kubeconfig_load(NULL, &k, &e) != HR_OK) {
        fprintf(stderr, "it_client: %s\n", e.msg);
        return -1;
    }
    g_ca_b64 = malloc(hr_b64_enc_len(k->ca_len) + 1);
    hr_b64_encode(k->ca, k->ca_len, g_ca_b64);
    g_server = strdup(k->server);
    hr_kubeconfig_free(k);

    g_admin = client_for(NULL, "it-client/1");
    char body[2048];
    snprintf(body, sizeof body,
             "{\"apiVersion\":\"v1\",\"kind\":\"Namespace\",\"metadata\":{\"name\":\"%s\"}}", g_ns);
    if (post_json(g_admin, "/api/v1/namespaces", body, &e) != 201) {
        fprintf(stderr, "it_client: create namespace: %s\n", e.msg);
        return -1;
    }
    return 0;
}

static int teardown(void **state)
{
    (void)state;
    char p[256];
    if (g_admin) {
        /* The pod first and at once: with its node gone nobody would
         * finish its graceful deletion and the namespace would hang. */
        snprintf(p, sizeof p, "/api/v1/namespaces/%s/pods/%s?gracePeriodSeconds=0", g_ns, g_pod);
        req(g_admin, "DELETE", p, NULL, NULL, NULL, NULL);
        snprintf(p, sizeof p, "/api/v1/namespaces/%s", g_ns);
        req(g_admin, "DELETE", p, NULL, NULL, NULL, NULL);
        snprintf(p, sizeof p, "/api/v1/nodes/%s", g_node);
        req(g_admin, "DELETE", p, NULL, NULL, NULL, NULL);
        snprintf(p, sizeof p, "/apis/rbac.authorization.k8s.io/v1/clusterrolebindings/%s", g_crb);
        req(g_admin, "DELETE", p, NULL, NULL, NULL, NULL);
        snprintf(p, sizeof p, "/apis/flowcontrol.apiserver.k8s.io/v1/flowschemas/%s", g_ns);
        req(g_admin, "DELETE", p, NULL, NULL, NULL, NULL);
        snprintf(p, sizeof p,
                 "/apis/flowcontrol.apiserver.k8s.io/v1/prioritylevelconfigurations/%s", g_ns);
        req(g_admin, "DELETE", p, NULL, NULL, NULL, NULL);
        hr_kclient_free(g_admin);
    }
    free(g_ca_b64);
    free(g_server);
    char cmd[300];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", g_dir);
    return system(cmd) == 0 ? 0 : -1;
}

/* ---------------------------------------------------------------- reads */

static void test_version_and_latency(void **state)
{
    (void)state;
    yyjson_doc *d = NULL;
    double t0 = now_ms();
    must(req(g_admin, "GET", "/version", NULL, NULL, &d, NULL), 200, "/version", NULL);
    double first = now_ms() - t0;
    const char *v = jstr(d, "/gitVersion");
    assert_non_null(v);
    assert_true(strncmp(v, "v1.", 3) == 0);
    printf("# server %s\n", v);
    yyjson_doc_free(d);
    /* Warm: the pooled handle keeps its connection. */
    int n = 200;
    t0 = now_ms();
    for (int i = 0; i < n; i++)
        must(req(g_admin, "GET", "/version", NULL, NULL, NULL, NULL), 200, "/version", NULL);
    double avg = (now_ms() - t0) / n;
    printf("# GET /version: first %.2f ms, then %.3f ms each over %d sequential requests\n", first,
           avg, n);
    hr_kclient_stats st;
    hr_kclient_get_stats(g_admin, &st);
    printf("# so far: %" PRIu64 " responses, %" PRIu64 " over HTTP/2, %" PRIu64
           " new connections\n",
           st.responses, st.http2, st.new_connections);
    assert_true(st.http2 == st.responses); /* the API server offers h2 */
    assert_true(st.new_connections <= 2);  /* warm connections are reused */
}

static void test_list_paginated(void **state)
{
    (void)state;
    yyjson_doc *d = NULL;
    must(req(g_admin, "GET", "/api/v1/namespaces", NULL, NULL, &d, NULL), 200, "list", NULL);
    size_t all = yyjson_arr_size(yyjson_doc_ptr_get(d, "/items"));
    yyjson_doc_free(d);
    assert_true(all >= 5); /* default, kube-system, kube-public, kube-node-lease, ours */
    size_t seen = 0, pages = 0;
    char cont[1024] = "";
    do {
        char p[1200];
        snprintf(p, sizeof p, "/api/v1/namespaces?limit=2%s%s", cont[0] ? "&continue=" : "", cont);
        must(req(g_admin, "GET", p, NULL, NULL, &d, NULL), 200, p, NULL);
        seen += yyjson_arr_size(yyjson_doc_ptr_get(d, "/items"));
        const char *c = jstr(d, "/metadata/continue");
        snprintf(cont, sizeof cont, "%s", c ? c : "");
        yyjson_doc_free(d);
        pages++;
    } while (cont[0] && pages < 100);
    assert_int_equal(seen, all);
    assert_true(pages >= 3);
}

static void test_errors_carry_server_message(void **state)
{
    (void)state;
    hr_err e;
    char p[256];
    snprintf(p, sizeof p, "/api/v1/namespaces/%s/pods/does-not-exist", g_ns);
    hr_kresult r;
    hr_buf b;
    hr_buf_init(&b, 0);
    assert_int_equal(hr_kclient_do(g_admin, "GET", p, NULL, NULL, 0, &b, &r, &e), HR_E_NOTFOUND);
    assert_int_equal(r.status, 404);
    if (!strstr(e.msg, "404 Not Found: pods \"does-not-exist\" not found"))
        fail_msg("404 message: %s", e.msg);
    hr_buf_free(&b);

    /* 422: an invalid name, the server's own words. */
    snprintf(p, sizeof p, "/api/v1/namespaces/%s/configmaps", g_ns);
    assert_int_equal(post_json(g_admin, p,
                               "{\"apiVersion\":\"v1\",\"kind\":\"ConfigMap\",\"metadata\":"
                               "{\"name\":\"Bad_Name\"}}",
                               &e),
                     422);
    assert_int_equal(e.code, HR_E_INPUT);
    if (!strstr(e.msg, "422 Unprocessable Entity: ConfigMap \"Bad_Name\" is invalid"))
        fail_msg("422 message: %s", e.msg);
    printf("# 422 reads: %s\n", e.msg);

    /* 409: exists already. */
    char body[256];
    snprintf(body, sizeof body,
             "{\"apiVersion\":\"v1\",\"kind\":\"Namespace\",\"metadata\":{\"name\":\"%s\"}}", g_ns);
    assert_int_equal(post_json(g_admin, "/api/v1/namespaces", body, &e), 409);
    assert_non_null(strstr(e.msg, "already exists"));

    /* Not a Status body: a path the server does not serve. */
    assert_int_equal(req(g_admin, "GET", "/no/such/path", NULL, NULL, NULL, &e), 404);
    assert_non_null(strstr(e.msg, "GET /no/such/path: 404"));
}

/* --------------------------------------------------------------- resize */

static void wait_pod(const char *what, int (*ok)(yyjson_doc *), int timeout_s)
{
    char p[256];
    snprintf(p, sizeof p, "/api/v1/namespaces/%s/pods/%s", g_ns, g_pod);
    double t0 = now_ms();
    for (;;) {
        yyjson_doc *d = NULL;
        long s = req(g_admin, "GET", p, NULL, NULL, &d, NULL);
        int done = s == 200 && ok(d);
        yyjson_doc_free(d);
        if (done) {
            printf("# pod %s after %.0f ms\n", what, now_ms() - t0);
            return;
        }
        if (now_ms() - t0 > timeout_s * 1000.0)
            fail_msg("pod not %s within %d s", what, timeout_s);
        usleep(200 * 1000);
    }
}

static int is_running(yyjson_doc *d)
{
    const char *ph = jstr(d, "/status/phase");
    return ph && strcmp(ph, "Running") == 0;
}

static int resize_acked(yyjson_doc *d)
{
    const char *c = jstr(d, "/status/containerStatuses/0/resources/limits/cpu");
    return c && strcmp(c, "750m") == 0;
}

static void test_resize_running_pod(void **state)
{
    (void)state;
    hr_err e;
    char body[4096], p[512];
    snprintf(body, sizeof body,
             "{\"apiVersion\":\"v1\",\"kind\":\"Node\",\"metadata\":{\"name\":\"%s\","
             "\"annotations\":{\"kwok.x-k8s.io/node\":\"fake\"},\"labels\":{\"type\":\"kwok\","
             "\"kubernetes.io/os\":\"linux\"}},\"spec\":{},\"status\":{\"allocatable\":{\"cpu\":"
             "\"16\",\"memory\":\"64Gi\",\"pods\":\"110\"},\"capacity\":{\"cpu\":\"16\","
             "\"memory\":\"64Gi\",\"pods\":\"110\"}}}",
             g_node);
    must(post_json(g_admin, "/api/v1/nodes", body, &e), 201, "create node", &e);
    /* kwok must have taken the node on before a pod lands there: a pod
     * bound to a node kwok does not know yet can be missed for good. */
    snprintf(p, sizeof p, "/api/v1/nodes/%s", g_node);
    double t0 = now_ms();
    for (;;) {
        yyjson_doc *d = NULL;
        int ready = 0;
        if (req(g_admin, "GET", p, NULL, NULL, &d, NULL) == 200) {
            yyjson_val *c;
            size_t i, max;
            yyjson_arr_foreach(yyjson_doc_ptr_get(d, "/status/conditions"), i, max, c)
            {
                ready |= yyjson_equals_str(yyjson_obj_get(c, "type"), "Ready") &&
                         yyjson_equals_str(yyjson_obj_get(c, "status"), "True");
            }
        }
        yyjson_doc_free(d);
        if (ready)
            break;
        if (now_ms() - t0 > 60000)
            fail_msg("node %s not Ready within 60 s (is kwok running?)", g_node);
        usleep(100 * 1000);
    }
    printf("# node Ready after %.0f ms\n", now_ms() - t0);
    snprintf(body, sizeof body,
             "{\"apiVersion\":\"v1\",\"kind\":\"Pod\",\"metadata\":{\"name\":\"%s\"},"
             "\"spec\":{\"nodeName\":\"%s\",\"tolerations\":[{\"operator\":\"Exists\"}],"
             "\"containers\":[{\"name\":\"app\",\"image\":\"registry.invalid/app:1\","
             "\"resources\":{\"requests\":{\"cpu\":\"250m\",\"memory\":\"64Mi\"},"
             "\"limits\":{\"cpu\":\"500m\",\"memory\":\"128Mi\"}}}]}}",
             g_pod, g_node);
    snprintf(p, sizeof p, "/api/v1/namespaces/%s/pods", g_ns);
    must(post_json(g_admin, p, body, &e), 201, "create pod", &e);
    wait_pod("Running", is_running, 60);

    /* SSA to the resize subresource: only limits.cpu, as the controller
     * does. Without force the field belongs to the creator: conflict. */
    snprintf(p, sizeof p, "/api/v1/namespaces/%s/pods/%s/resize", g_ns, g_pod);
    snprintf(body, sizeof body,
             "{\"apiVersion\":\"v1\",\"kind\":\"Pod\",\"metadata\":{\"name\":\"%s\","
             "\"namespace\":\"%s\"},\"spec\":{\"containers\":[{\"name\":\"app\",\"resources\":"
             "{\"limits\":{\"cpu\":\"750m\"}}}]}}",
             g_pod, g_ns);
    hr_kresult r;
    hr_buf b;
    hr_buf_init(&b, 0);
    assert_int_equal(
        hr_kclient_apply(g_admin, p, "headroom", false, body, strlen(body), &b, &r, &e),
        HR_E_INPUT);
    assert_int_equal(r.status, 409);
    if (!strstr(e.msg, "conflict"))
        fail_msg("409 message: %s", e.msg);
    hr_buf_reset(&b);
    if (hr_kclient_apply(g_admin, p, "headroom", true, body, strlen(body), &b, &r, &e) != HR_OK)
        fail_msg("apply resize: %s", e.msg);
    assert_int_equal(r.status, 200);
    yyjson_doc *d = yyjson_read(b.data, b.len, 0);
    assert_string_equal(jstr(d, "/spec/containers/0/resources/limits/cpu"), "750m");
    /* Untouched: the request and the memory limit. */
    assert_string_equal(jstr(d, "/spec/containers/0/resources/requests/cpu"), "250m");
    assert_string_equal(jstr(d, "/spec/containers/0/resources/limits/memory"), "128Mi");
    /* The manager "headroom" owns the field now. */
    yyjson_val *mf = yyjson_doc_ptr_get(d, "/metadata/managedFields");
    size_t i, max;
    yyjson_val *m;
    int found = 0;
    yyjson_arr_foreach(mf, i, max, m)
    {
        found |= yyjson_equals_str(yyjson_obj_get(m, "manager"), "headroom") &&
                 yyjson_equals_str(yyjson_obj_get(m, "operation"), "Apply") &&
                 yyjson_equals_str(yyjson_obj_get(m, "subresource"), "resize");
    }
    assert_true(found);
    yyjson_doc_free(d);
    hr_buf_free(&b);
    /* kwok's kubelet acknowledges it in the status. */
    wait_pod("resize acknowledged (status resources 750m)", resize_acked, 60);

    /* Merge patch of an annotation (the status annotation path). */
    snprintf(p, sizeof p, "/api/v1/namespaces/%s/pods/%s", g_ns, g_pod);
    const char *mp = "{\"metadata\":{\"annotations\":{\"kube-headroom.dev/status\":\"{}\"}}}";
    hr_buf_init(&b, 0);
    if (hr_kclient_merge_patch(g_admin, p, mp, strlen(mp), &b, &r, &e) != HR_OK)
        fail_msg("merge patch: %s", e.msg);
    d = yyjson_read(b.data, b.len, 0);
    assert_string_equal(jstr(d, "/metadata/annotations/kube-headroom.dev~1status"), "{}");
    yyjson_doc_free(d);
    hr_buf_free(&b);

    /* A resize the API server refuses (limit below request): 422 with its
     * message, as design §7 wants for the Warning event. */
    snprintf(p, sizeof p, "/api/v1/namespaces/%s/pods/%s/resize", g_ns, g_pod);
    snprintf(body, sizeof body,
             "{\"apiVersion\":\"v1\",\"kind\":\"Pod\",\"metadata\":{\"name\":\"%s\","
             "\"namespace\":\"%s\"},\"spec\":{\"containers\":[{\"name\":\"app\",\"resources\":"
             "{\"limits\":{\"cpu\":\"100m\"}}}]}}",
             g_pod, g_ns);
    assert_int_equal(
        hr_kclient_apply(g_admin, p, "headroom", true, body, strlen(body), NULL, &r, &e),
        HR_E_INPUT);
    assert_int_equal(r.status, 422);
    if (!strstr(e.msg, "must be less than or equal to cpu limit"))
        fail_msg("422 resize message: %s", e.msg);
    printf("# invalid resize reads: %s\n", e.msg);
}

/* ------------------------------------------------------- events, lease */

static void test_event_create(void **state)
{
    (void)state;
    hr_kevent ev = {.ns = g_ns,
                    .kind = "Pod",
                    .api_version = "v1",
                    .name = g_pod,
                    .type = "Normal",
                    .reason = "CPULimitAdjusted",
                    .action = "Resizing",
                    .note = "500m → 750m (factor 3.00, slack 15750m/16 cores)",
                    .controller = "kube-headroom.dev/headroom",
                    .instance = "it-client"};
    hr_kresult r;
    hr_err e;
    if (hr_kevent_create(g_admin, &ev, &r, &e) != HR_OK)
        fail_msg("event: %s", e.msg);
    assert_int_equal(r.status, 201);
    char p[256];
    snprintf(p, sizeof p, "/apis/events.k8s.io/v1/namespaces/%s/events", g_ns);
    yyjson_doc *d = NULL;
    must(req(g_admin, "GET", p, NULL, NULL, &d, NULL), 200, "list events", NULL);
    yyjson_val *it;
    size_t i, max;
    int found = 0;
    yyjson_arr_foreach(yyjson_doc_ptr_get(d, "/items"), i, max, it)
    {
        found |= yyjson_equals_str(yyjson_obj_get(it, "reason"), "CPULimitAdjusted") &&
                 yyjson_equals_str(yyjson_obj_get(it, "note"), ev.note);
    }
    yyjson_doc_free(d);
    assert_true(found);
}

static void test_lease(void **state)
{
    (void)state;
    hr_klease l = {.duration_s = 15, .transitions = 0};
    snprintf(l.holder, sizeof l.holder, "it-a");
    l.acquire_us = l.renew_us = hr_ktime_now_us();
    hr_klease got;
    hr_kresult r;
    hr_err e;
    assert_int_equal(hr_klease_get(g_admin, g_ns, "leader", &got, &r, &e), HR_E_NOTFOUND);
    assert_int_equal(r.status, 404);
    if (hr_klease_create(g_admin, g_ns, "leader", &l, &got, &r, &e) != HR_OK)
        fail_msg("lease create: %s", e.msg);
    assert_string_equal(got.holder, "it-a");
    assert_true(got.rv[0]);
    /* Two candidates read the same version; only the first update wins. */
    hr_klease a, b;
    assert_int_equal(hr_klease_get(g_admin, g_ns, "leader", &a, &r, &e), HR_OK);
    b = a;
    assert_int_equal(a.renew_us, l.renew_us); /* MicroTime round trip through the server */
    a.renew_us += 2000000;
    if (hr_klease_update(g_admin, g_ns, "leader", &a, &a, &r, &e) != HR_OK)
        fail_msg("lease renew: %s", e.msg);
    snprintf(b.holder, sizeof b.holder, "it-b");
    b.transitions++;
    assert_int_equal(hr_klease_update(g_admin, g_ns, "leader", &b, NULL, &r, &e), HR_E_INPUT);
    assert_int_equal(r.status, 409);
    assert_non_null(strstr(e.msg, "the object has been modified"));
    assert_int_equal(hr_klease_create(g_admin, g_ns, "leader", &l, NULL, &r, &e), HR_E_INPUT);
    assert_int_equal(r.status, 409);
    assert_int_equal(hr_klease_get(g_admin, g_ns, "leader", &got, &r, &e), HR_OK);
    assert_string_equal(got.holder, "it-a");
}

/* --------------------------------------------------------------- watch */

typedef struct watch_ctx {
    int events;
    int saw_cm;
    char name[64];
} watch_ctx;

static int on_event(void *ud, const char *line, size_t len)
{
    watch_ctx *w = ud;
    w->events++;
    if (line[len] != '\0')
        return 1;
    yyjson_doc *d = yyjson_read(line, len, 0);
    const char *type = jstr(d, "/type");
    const char *name = jstr(d, "/object/metadata/name");
    if (type && name && !strcmp(type, "ADDED") && !strcmp(name, w->name))
        w->saw_cm = 1;
    yyjson_doc_free(d);
    return w->saw_cm; /* stop once seen */
}

typedef struct later {
    int delay_ms;
    atomic_bool *flag;
    const char *post_path, *post_body;
} later;

static void *do_later(void *p)
{
    later *l = p;
    usleep((useconds_t)l->delay_ms * 1000);
    if (l->post_path) {
        hr_err e;
        post_json(g_admin, l->post_path, l->post_body, &e);
    }
    if (l->flag)
        atomic_store(l->flag, true);
    return NULL;
}

static void test_watch_stream(void **state)
{
    (void)state;
    char p[512], body[512];
    yyjson_doc *d = NULL;
    snprintf(p, sizeof p, "/api/v1/namespaces/%s/configmaps", g_ns);
    must(req(g_admin, "GET", p, NULL, NULL, &d, NULL), 200, "list configmaps", NULL);
    char rv[64];
    snprintf(rv, sizeof rv, "%s", jstr(d, "/metadata/resourceVersion"));
    yyjson_doc_free(d);

    /* A configmap created while we watch arrives as ADDED; the callback
     * stops the stream. */
    watch_ctx w = {0};
    snprintf(w.name, sizeof w.name, "cm-watch");
    snprintf(body, sizeof body,
             "{\"apiVersion\":\"v1\",\"kind\":\"ConfigMap\",\"metadata\":{\"name\":\"cm-watch\"},"
             "\"data\":{\"k\":\"v\"}}");
    later l = {300, NULL, p, body};
    pthread_t th;
    assert_int_equal(pthread_create(&th, NULL, do_later, &l), 0);
    char wp[700];
    snprintf(wp, sizeof wp,
             "/api/v1/namespaces/%s/configmaps?watch=1&allowWatchBookmarks=true"
             "&resourceVersion=%s&timeoutSeconds=30",
             g_ns, rv);
    hr_kresult r;
    hr_err e;
    double t0 = now_ms();
    if (hr_kclient_stream(g_admin, wp, 40, on_event, &w, NULL, &r, &e) != HR_OK)
        fail_msg("watch: %s", e.msg);
    pthread_join(th, NULL);
    assert_int_equal(r.status, 200);
    assert_true(w.saw_cm);
    printf("# watch: ADDED seen %.0f ms after the watch started (create at +300 ms)\n",
           now_ms() - t0);

    /* A quiet watch ends promptly on the stop flag. */
    atomic_bool stop = false;
    later s = {300, &stop, NULL, NULL};
    watch_ctx q = {0};
    snprintf(q.name, sizeof q.name, "never");
    assert_int_equal(pthread_create(&th, NULL, do_later, &s), 0);
    t0 = now_ms();
    assert_int_equal(hr_kclient_stream(g_admin, wp, 60, on_event, &q, &stop, &r, &e), HR_OK);
    double took = now_ms() - t0;
    pthread_join(th, NULL);
    printf("# stop flag: stream ended %.0f ms after start (flag set at +300 ms)\n", took);
    assert_true(took < 1200);

    /* The server's timeoutSeconds ends the body cleanly: HR_OK. */
    snprintf(wp, sizeof wp,
             "/api/v1/namespaces/%s/configmaps?watch=1&resourceVersion=%s"
             "&timeoutSeconds=1",
             g_ns, rv);
    q.saw_cm = 0;
    t0 = now_ms();
    if (hr_kclient_stream(g_admin, wp, 10, on_event, &q, NULL, &r, &e) != HR_OK)
        fail_msg("watch with server timeout: %s", e.msg);
    assert_true(now_ms() - t0 < 5000);

    /* A watch the server refuses: HTTP error with its message. */
    snprintf(wp, sizeof wp, "/api/v1/namespaces/%s/nosuchresource?watch=1", g_ns);
    assert_int_equal(hr_kclient_stream(g_admin, wp, 10, on_event, &q, NULL, &r, &e), HR_E_NOTFOUND);
    assert_int_equal(r.status, 404);
}

/* Several watches at once, each on its own thread and connection, while
 * writes go out on the main thread. */
typedef struct watcher {
    char path[512];
    watch_ctx w;
    hr_status st;
    hr_err e;
} watcher;

static void *watch_thread(void *p)
{
    watcher *t = p;
    hr_kresult r;
    t->st = hr_kclient_stream(g_admin, t->path, 30, on_event, &t->w, NULL, &r, &t->e);
    return NULL;
}

static void test_concurrent_watches(void **state)
{
    (void)state;
    enum { W = 4 };
    char p[512], body[512];
    yyjson_doc *d = NULL;
    snprintf(p, sizeof p, "/api/v1/namespaces/%s/configmaps", g_ns);
    must(req(g_admin, "GET", p, NULL, NULL, &d, NULL), 200, "list configmaps", NULL);
    char rv[64];
    snprintf(rv, sizeof rv, "%s", jstr(d, "/metadata/resourceVersion"));
    yyjson_doc_free(d);
    watcher t[W];
    pthread_t th[W];
    for (int i = 0; i < W; i++) {
        memset(&t[i], 0, sizeof t[i]);
        snprintf(t[i].w.name, sizeof t[i].w.name, "multi-%d", i);
        snprintf(t[i].path, sizeof t[i].path,
                 "/api/v1/namespaces/%s/configmaps?watch=1&resourceVersion=%s"
                 "&labelSelector=w%%3D%d&timeoutSeconds=25",
                 g_ns, rv, i);
        assert_int_equal(pthread_create(&th[i], NULL, watch_thread, &t[i]), 0);
    }
    usleep(200 * 1000);
    for (int i = W - 1; i >= 0; i--) {
        hr_err e;
        snprintf(body, sizeof body,
                 "{\"apiVersion\":\"v1\",\"kind\":\"ConfigMap\",\"metadata\":{\"name\":"
                 "\"multi-%d\",\"labels\":{\"w\":\"%d\"}}}",
                 i, i);
        must(post_json(g_admin, p, body, &e), 201, "create", &e);
    }
    for (int i = 0; i < W; i++) {
        pthread_join(th[i], NULL);
        if (t[i].st != HR_OK)
            fail_msg("watch %d: %s", i, t[i].e.msg);
        assert_true(t[i].w.saw_cm);
        assert_int_equal(t[i].w.events, 1); /* the selector kept the others out */
    }
}

/* --------------------------------------------------------- concurrency */

typedef struct worker {
    hr_kclient *c;
    int n, ok;
} worker;

static void *get_many(void *p)
{
    worker *w = p;
    char path[256];
    snprintf(path, sizeof path, "/api/v1/namespaces/%s/configmaps?limit=5", g_ns);
    for (int i = 0; i < w->n; i++) {
        hr_buf b;
        hr_buf_init(&b, 0);
        hr_kresult r;
        hr_err e;
        if (hr_kclient_do(w->c, "GET", path, NULL, NULL, 0, &b, &r, &e) == HR_OK)
            w->ok++;
        hr_buf_free(&b);
    }
    return NULL;
}

static void test_threads(void **state)
{
    (void)state;
    enum { T = 8, N = 100 };
    pthread_t th[T];
    worker w[T];
    hr_kclient_stats s0, s1;
    hr_kclient_get_stats(g_admin, &s0);
    double t0 = now_ms();
    for (int i = 0; i < T; i++) {
        w[i] = (worker){g_admin, N, 0};
        assert_int_equal(pthread_create(&th[i], NULL, get_many, &w[i]), 0);
    }
    int ok = 0;
    for (int i = 0; i < T; i++) {
        pthread_join(th[i], NULL);
        ok += w[i].ok;
    }
    double ms = now_ms() - t0;
    assert_int_equal(ok, T * N);
    hr_kclient_get_stats(g_admin, &s1);
    printf("# %d threads x %d GETs: %.0f ms, %.0f requests/s, %" PRIu64 " new connections\n", T, N,
           ms, T * N * 1000.0 / ms, s1.new_connections - s0.new_connections);
    /* Every request is a stream of the one warm connection (mux.h), not one
     * connection per thread. */
    assert_true(s1.new_connections - s0.new_connections == 0);

    /* Writes go through the limiter: 20 creates at 10/s burst 5 take ~1.5 s. */
    hr_kclient_set_rate(g_admin, 10, 5);
    char p[256], body[256];
    snprintf(p, sizeof p, "/api/v1/namespaces/%s/configmaps", g_ns);
    t0 = now_ms();
    for (int i = 0; i < 20; i++) {
        hr_err e;
        snprintf(body, sizeof body,
                 "{\"apiVersion\":\"v1\",\"kind\":\"ConfigMap\",\"metadata\":{\"name\":"
                 "\"lim-%d\"}}",
                 i);
        must(post_json(g_admin, p, body, &e), 201, "create", &e);
    }
    ms = now_ms() - t0;
    printf("# 20 writes at qps 10 burst 5: %.0f ms\n", ms);
    assert_true(ms >= 1400);
    hr_kclient_set_rate(g_admin, 500, 500);
}

/* A request ended by its own stop flag (the token reviews at shutdown)
 * leaves its neighbours on the shared connection alone: only a failure in
 * transport resets the connection (client.h). Both are watches held open
 * by the server; the stopped one goes first. */
typedef struct {
    int timeout_s;
    const atomic_bool *stop;
    hr_status st;
    long status;
    double ms;
    char msg[sizeof(hr_err){0}.msg];
} held;

static void *hold_watch(void *p)
{
    held *h = p;
    char path[256];
    snprintf(path, sizeof path, "/api/v1/namespaces/%s/configmaps?watch=1&timeoutSeconds=%d", g_ns,
             h->timeout_s);
    hr_buf b;
    hr_buf_init(&b, 64 << 20);
    hr_kresult r = {0};
    hr_err e = {0};
    double t0 = now_ms();
    h->st = hr_kclient_do_unlimited_until(g_admin, (int64_t)now_ms() + 30000, h->stop, "GET", path,
                                          NULL, NULL, 0, &b, &r, &e);
    h->ms = now_ms() - t0;
    h->status = r.status;
    snprintf(h->msg, sizeof h->msg, "%s", h->st ? e.msg : "");
    hr_buf_free(&b);
    return NULL;
}

static void test_stop_spares_neighbours(void **state)
{
    (void)state;
    atomic_bool stop = false;
    held a = {.timeout_s = 20, .stop = &stop}, b = {.timeout_s = 3};
    hr_kclient_stats s0, s1;
    hr_kclient_get_stats(g_admin, &s0);
    pthread_t ta, tb;
    assert_int_equal(pthread_create(&ta, NULL, hold_watch, &a), 0);
    assert_int_equal(pthread_create(&tb, NULL, hold_watch, &b), 0);
    usleep(500 * 1000);
    atomic_store(&stop, true);
    pthread_join(ta, NULL);
    pthread_join(tb, NULL);
    hr_kclient_get_stats(g_admin, &s1);
    printf("# stopped request: %.0f ms (%s); its neighbour: status %ld after %.0f ms%s%s; %" PRIu64
           " new connections\n",
           a.ms, a.msg, b.status, b.ms, b.st ? ": " : "", b.msg,
           s1.new_connections - s0.new_connections);
    assert_true(a.st != HR_OK);
    assert_true(a.ms < 2500);
    if (b.st != HR_OK || b.status != 200)
        fail_msg("the neighbour of a stopped request failed: %s", b.msg);
    assert_true(b.ms >= 2500);
    assert_true(s1.new_connections - s0.new_connections == 0);
}

/* ------------------------------------------------------- authentication */

static void setup_service_account(void)
{
    char p[512], body[1024];
    hr_err e;
    snprintf(p, sizeof p, "/api/v1/namespaces/%s/serviceaccounts", g_ns);
    must(post_json(g_admin, p,
                   "{\"apiVersion\":\"v1\",\"kind\":\"ServiceAccount\",\"metadata\":{\"name\":"
                   "\"reader\"}}",
                   &e),
         201, "create SA", &e);
    snprintf(
        body, sizeof body,
        "{\"apiVersion\":\"rbac.authorization.k8s.io/v1\",\"kind\":\"ClusterRoleBinding\","
        "\"metadata\":{\"name\":\"%s\"},\"roleRef\":{\"apiGroup\":"
        "\"rbac.authorization.k8s.io\",\"kind\":\"ClusterRole\",\"name\":\"view\"},"
        "\"subjects\":[{\"kind\":\"ServiceAccount\",\"name\":\"reader\",\"namespace\":\"%s\"}]}",
        g_crb, g_ns);
    must(post_json(g_admin, "/apis/rbac.authorization.k8s.io/v1/clusterrolebindings", body, &e),
         201, "create binding", &e);
    /* TokenRequest: a bound token, as `kubectl create token` gets. */
    snprintf(p, sizeof p, "/api/v1/namespaces/%s/serviceaccounts/reader/token", g_ns);
    yyjson_doc *d = NULL;
    must(req(g_admin, "POST", p, "application/json",
             "{\"apiVersion\":\"authentication.k8s.io/v1\",\"kind\":\"TokenRequest\","
             "\"spec\":{\"expirationSeconds\":3600}}",
             &d, &e),
         201, "token request", &e);
    snprintf(g_sa_token, sizeof g_sa_token, "%s", jstr(d, "/status/token"));
    yyjson_doc_free(d);
    assert_true(strlen(g_sa_token) > 20);
}

static void expect_identity(const char *kubeconfig, const char *want)
{
    hr_kclient *c = client_for(kubeconfig, NULL);
    char who[256];
    whoami(c, who, sizeof who);
    if (strcmp(who, want) != 0)
        fail_msg("%s: authenticated as \"%s\", want \"%s\"", kubeconfig, who, want);
    hr_kclient_free(c);
}

static void test_auth_client_certs(void **state)
{
    (void)state;
    char who[256];
    whoami(g_admin, who, sizeof who);
    printf("# admin kubeconfig (client-certificate-data) is \"%s\"\n", who);
    assert_true(who[0] != '?');
    /* The same certificate from files, by relative path. */
    const char *dir = getenv("HEADROOM_CLUSTER_DIR");
    if (!dir)
        dir = "/tmp/kube-headroom-cluster";
    char cmd[1024];
    snprintf(cmd, sizeof cmd, "cp '%s/pki/admin.crt' '%s/pki/admin.key' '%s/'", dir, dir, g_dir);
    assert_int_equal(system(cmd), 0);
    const char *kc = kubeconfig_with("certfiles.yaml", "    client-certificate: admin.crt\n"
                                                       "    client-key: admin.key\n");
    expect_identity(kc, who);
}

static void test_auth_token_tokenfile(void **state)
{
    (void)state;
    setup_service_account();
    char want[256], y[8192];
    snprintf(want, sizeof want, "system:serviceaccount:%s:reader", g_ns);
    snprintf(y, sizeof y, "    token: %s\n", g_sa_token);
    const char *kc = kubeconfig_with("token.yaml", y);
    expect_identity(kc, want);

    /* The token allows reads (view), not writes: 403 with the server's
     * words naming the identity. */
    hr_kclient *c = client_for(kc, NULL);
    hr_err e;
    must(req(c, "GET", "/api/v1/namespaces", NULL, NULL, NULL, &e), 200, "list as SA", &e);
    assert_int_equal(post_json(c, "/api/v1/namespaces",
                               "{\"apiVersion\":\"v1\",\"kind\":\"Namespace\",\"metadata\":"
                               "{\"name\":\"hr-it-forbidden\"}}",
                               &e),
                     403);
    assert_non_null(strstr(e.msg, want));
    hr_kclient_free(c);

    put_file("sa.token", g_sa_token, 0600);
    kc = kubeconfig_with("tokenfile.yaml", "    tokenFile: sa.token\n");
    expect_identity(kc, want);

    /* A wrong token: 401 from the server, no retry loop. */
    kc = kubeconfig_with("badtoken.yaml", "    token: not-a-valid-token\n");
    c = client_for(kc, NULL);
    assert_int_equal(req(c, "GET", "/api/v1/namespaces", NULL, NULL, NULL, &e), 401);
    assert_non_null(strstr(e.msg, "401 Unauthorized"));
    /* kube-apiserver closes the connection after a 401, often while a
     * request body is still being sent: still a 401, not a transport
     * error (it was one, in 3 of 4 tries, before the client knew). */
    for (int i = 0; i < 20; i++)
        assert_int_equal(post_json(c, "/api/v1/namespaces",
                                   "{\"apiVersion\":\"v1\",\"kind\":\"Namespace\"}", &e),
                         401);
    hr_kclient_free(c);
}

static void test_auth_exec(void **state)
{
    (void)state;
    char want[256], script[8192];
    snprintf(want, sizeof want, "system:serviceaccount:%s:reader", g_ns);
    /* A plugin that prints the service-account token, counting its runs;
     * with FIRST_BAD set its first answer is a token the server rejects,
     * so the client must rerun it after the 401 and succeed. */
    put_file("sa.token", g_sa_token, 0600);
    snprintf(
        script, sizeof script,
        "#!/bin/sh\n"
        "d=$(dirname \"$0\")\n"
        "n=$(cat \"$d/exec.runs\" 2>/dev/null || echo 0); n=$((n+1)); echo $n > \"$d/exec.runs\"\n"
        "tok=$(cat \"$d/sa.token\")\n"
        "if [ -n \"$FIRST_BAD\" ] && [ $n = 1 ]; then tok=rejected; fi\n"
        "exp=$(date -u -d '+1 hour' +%%Y-%%m-%%dT%%H:%%M:%%SZ)\n"
        "av=${API_VERSION:-client.authentication.k8s.io/v1}\n"
        "printf '{\"apiVersion\":\"%%s\",\"kind\":"
        "\"ExecCredential\",\"status\":{\"token\":\"%%s\",\"expirationTimestamp\":\"%%s\"}}'"
        " \"$av\" \"$tok\" \"$exp\"\n");
    put_file("plugin.sh", script, 0700);
    const char *kc =
        kubeconfig_with("exec.yaml", "    exec:\n"
                                     "      apiVersion: client.authentication.k8s.io/v1\n"
                                     "      command: ./plugin.sh\n"
                                     "      interactiveMode: Never\n");
    unlink(path_of("exec.runs"));
    hr_kclient *c = client_for(kc, NULL);
    char who[256];
    for (int i = 0; i < 5; i++)
        whoami(c, who, sizeof who);
    assert_string_equal(who, want);
    hr_kclient_free(c);
    FILE *f = fopen(path_of("exec.runs"), "r");
    int runs = 0;
    assert_int_equal(fscanf(f, "%d", &runs), 1);
    fclose(f);
    assert_int_equal(runs, 1); /* cached until expiry */

    kc = kubeconfig_with("exec-bad-first.yaml",
                         "    exec:\n"
                         "      apiVersion: client.authentication.k8s.io/v1beta1\n"
                         "      command: ./plugin.sh\n"
                         "      env: [{name: FIRST_BAD, value: '1'}, {name: API_VERSION, value: "
                         "client.authentication.k8s.io/v1beta1}]\n");
    unlink(path_of("exec.runs"));
    c = client_for(kc, NULL);
    whoami(c, who, sizeof who);
    assert_string_equal(who, want);
    hr_kclient_free(c);
    f = fopen(path_of("exec.runs"), "r");
    assert_int_equal(fscanf(f, "%d", &runs), 1);
    fclose(f);
    assert_int_equal(runs, 2); /* rejected once, rerun once */
}

static void test_auth_exec_client_cert(void **state)
{
    (void)state;
    const char *dir = getenv("HEADROOM_CLUSTER_DIR");
    if (!dir)
        dir = "/tmp/kube-headroom-cluster";
    char script[4096];
    /* jq -Rs turns the PEM files into JSON strings. */
    snprintf(script, sizeof script,
             "#!/bin/sh\n"
             "printf '{\"apiVersion\":\"client.authentication.k8s.io/v1\",\"kind\":"
             "\"ExecCredential\",\"status\":{\"clientCertificateData\":%%s,\"clientKeyData\":%%s}}'"
             " \"$(jq -Rs . < '%s/pki/admin.crt')\" \"$(jq -Rs . < '%s/pki/admin.key')\"\n",
             dir, dir);
    put_file("certplugin.sh", script, 0700);
    const char *kc =
        kubeconfig_with("exec-cert.yaml", "    exec:\n"
                                          "      apiVersion: client.authentication.k8s.io/v1\n"
                                          "      command: ./certplugin.sh\n"
                                          "      interactiveMode: IfAvailable\n");
    char admin[256];
    whoami(g_admin, admin, sizeof admin);
    expect_identity(kc, admin);
}

/* In-cluster configuration, as a pod sees it: KUBERNETES_SERVICE_HOST/PORT
 * and a service-account directory with token, ca.crt and namespace (here a
 * temporary directory holding the reader account's token). */
static void test_in_cluster_config(void **state)
{
    (void)state;
    char sa[300], cmd[1024];
    snprintf(sa, sizeof sa, "%s/serviceaccount", g_dir);
    assert_int_equal(mkdir(sa, 0700), 0);
    put_file("serviceaccount/token", g_sa_token, 0600);
    put_file("serviceaccount/namespace", g_ns, 0600);
    const char *dir = getenv("HEADROOM_CLUSTER_DIR");
    snprintf(cmd, sizeof cmd, "cp '%s/pki/ca.crt' '%s/ca.crt'",
             dir ? dir : "/tmp/kube-headroom-cluster", sa);
    assert_int_equal(system(cmd), 0);
    const char *port = strrchr(g_server, ':') + 1;
    hr_kubeconfig_opts ko = {.env_kubeconfig = path_of("no-such-kubeconfig"),
                             .home = g_dir,
                             .sa_dir = sa,
                             .svc_host = "127.0.0.1",
                             .svc_port = port};
    hr_kubeconfig *cfg = NULL;
    hr_err e;
    if (hr_kubeconfig_load(&ko, &cfg, &e) != HR_OK)
        fail_msg("in-cluster config: %s", e.msg);
    assert_true(cfg->in_cluster);
    hr_kclient *c = NULL;
    if (hr_kclient_new_from_config(cfg, NULL, &c, &e) != HR_OK)
        fail_msg("in-cluster client: %s", e.msg);
    assert_string_equal(hr_kclient_namespace(c), g_ns);
    assert_string_equal(hr_kclient_origin(c), "in-cluster config");
    char who[256], want[256];
    snprintf(want, sizeof want, "system:serviceaccount:%s:reader", g_ns);
    whoami(c, who, sizeof who);
    assert_string_equal(who, want);
    hr_kclient_free(c);
}

/* API Priority and Fairness throttling: a priority level with no shares
 * that rejects instead of queueing, for one service account, turns a burst
 * of its requests into 429s carrying Retry-After (design §7: back off for
 * that long). */
typedef struct flood {
    hr_kclient *c;
    int n200, n429, wrong_code;
    long retry_after_ms;
    char msg[HR_ERR_MSG_MAX];
} flood;

static void *flood_thread(void *p)
{
    flood *f = p;
    for (int i = 0; i < 30; i++) {
        hr_kresult r;
        hr_err e;
        if (hr_kclient_do(f->c, "GET", "/api/v1/pods", NULL, NULL, 0, NULL, &r, &e) == HR_OK) {
            f->n200++;
        } else if (r.status == 429) {
            f->n429++;
            f->retry_after_ms = r.retry_after_ms;
            snprintf(f->msg, sizeof f->msg, "%s", e.msg);
            if (e.code != HR_E_IO) /* 429 means retry: HR_E_IO */
                f->wrong_code++;
        }
    }
    return NULL;
}

static void test_throttled_429(void **state)
{
    (void)state;
    char p[512], body[2048];
    hr_err e;
    snprintf(p, sizeof p, "/api/v1/namespaces/%s/serviceaccounts", g_ns);
    must(post_json(g_admin, p,
                   "{\"apiVersion\":\"v1\",\"kind\":\"ServiceAccount\",\"metadata\":{\"name\":"
                   "\"jailed\"}}",
                   &e),
         201, "create SA", &e);
    snprintf(body, sizeof body,
             "{\"apiVersion\":\"flowcontrol.apiserver.k8s.io/v1\",\"kind\":"
             "\"PriorityLevelConfiguration\",\"metadata\":{\"name\":\"%s\"},\"spec\":{\"type\":"
             "\"Limited\",\"limited\":{\"nominalConcurrencyShares\":0,\"lendablePercent\":0,"
             "\"borrowingLimitPercent\":0,\"limitResponse\":{\"type\":\"Reject\"}}}}",
             g_ns);
    must(post_json(g_admin, "/apis/flowcontrol.apiserver.k8s.io/v1/prioritylevelconfigurations",
                   body, &e),
         201, "create priority level", &e);
    snprintf(body, sizeof body,
             "{\"apiVersion\":\"flowcontrol.apiserver.k8s.io/v1\",\"kind\":\"FlowSchema\","
             "\"metadata\":{\"name\":\"%s\"},\"spec\":{\"priorityLevelConfiguration\":{\"name\":"
             "\"%s\"},\"matchingPrecedence\":10,\"distinguisherMethod\":{\"type\":\"ByUser\"},"
             "\"rules\":[{\"subjects\":[{\"kind\":\"ServiceAccount\",\"serviceAccount\":{\"name\":"
             "\"jailed\",\"namespace\":\"%s\"}}],\"resourceRules\":[{\"verbs\":[\"*\"],"
             "\"apiGroups\":[\"*\"],\"resources\":[\"*\"],\"namespaces\":[\"*\"],"
             "\"clusterScope\":true}]}]}}",
             g_ns, g_ns, g_ns);
    must(post_json(g_admin, "/apis/flowcontrol.apiserver.k8s.io/v1/flowschemas", body, &e), 201,
         "create flow schema", &e);
    snprintf(p, sizeof p, "/api/v1/namespaces/%s/serviceaccounts/jailed/token", g_ns);
    yyjson_doc *d = NULL;
    must(req(g_admin, "POST", p, "application/json",
             "{\"apiVersion\":\"authentication.k8s.io/v1\",\"kind\":\"TokenRequest\","
             "\"spec\":{\"expirationSeconds\":3600}}",
             &d, &e),
         201, "token request", &e);
    char y[4096];
    snprintf(y, sizeof y, "    token: %s\n", jstr(d, "/status/token"));
    yyjson_doc_free(d);
    hr_kclient *c = client_for(kubeconfig_with("jailed.yaml", y), NULL);
    enum { T = 16 };
    flood f[T];
    pthread_t th[T];
    int n429 = 0, n200 = 0;
    long ra = 0;
    /* The API server applies new APF objects within a moment: retry the
     * burst a few times until it bites. */
    int rounds = 0;
    for (int round = 0; round < 10 && n429 == 0; round++, rounds++) {
        if (round)
            usleep(500 * 1000);
        for (int i = 0; i < T; i++) {
            f[i] = (flood){.c = c};
            assert_int_equal(pthread_create(&th[i], NULL, flood_thread, &f[i]), 0);
        }
        for (int i = 0; i < T; i++) {
            pthread_join(th[i], NULL);
            n429 += f[i].n429;
            n200 += f[i].n200;
            assert_int_equal(f[i].wrong_code, 0);
            if (f[i].n429 && !ra) {
                ra = f[i].retry_after_ms;
                printf("# 429 reads: %s\n", f[i].msg);
            }
        }
    }
    hr_kclient_free(c);
    /* Requests APF lets through meet RBAC (the account has no role): 403. */
    printf("# APF: %d of %d requests got 429, %d got 200 (the rest 403), Retry-After %ld ms\n",
           n429, T * 30 * rounds, n200, ra);
    assert_true(n429 > 0);
    assert_true(ra >= 1000);
}

/* A kubeconfig whose cluster: section is given whole (user: the admin
 * certificate files copied by test_auth_client_certs). */
static const char *kubeconfig_cluster(const char *name, const char *cluster_yaml)
{
    char y[16384];
    snprintf(y, sizeof y,
             "apiVersion: v1\nkind: Config\ncurrent-context: it\n"
             "clusters:\n- name: c\n  cluster:\n%s"
             "contexts:\n- name: it\n  context: {cluster: c, user: u}\n"
             "users:\n- name: u\n  user:\n    client-certificate: admin.crt\n"
             "    client-key: admin.key\n",
             cluster_yaml);
    put_file(name, y, 0600);
    return path_of(name);
}

static void test_tls_options(void **state)
{
    (void)state;
    char y[8192], who[256], admin[256];
    whoami(g_admin, admin, sizeof admin);
    /* tls-server-name: the serving certificate names localhost, not the
     * address we connect to; SNI and verification use the name. */
    snprintf(y, sizeof y,
             "    server: %s\n    certificate-authority-data: %s\n"
             "    tls-server-name: localhost\n",
             g_server, g_ca_b64);
    const char *kc = kubeconfig_cluster("sni.yaml", y);
    hr_kclient *c = client_for(kc, NULL);
    whoami(c, who, sizeof who);
    assert_string_equal(who, admin);
    hr_kclient_free(c);
    /* A name the certificate does not carry fails verification. */
    snprintf(y, sizeof y,
             "    server: %s\n    certificate-authority-data: %s\n"
             "    tls-server-name: not-in-the-cert.example\n",
             g_server, g_ca_b64);
    kc = kubeconfig_cluster("badsni.yaml", y);
    c = client_for(kc, NULL);
    hr_kresult r;
    hr_err e;
    assert_int_equal(hr_kclient_do(c, "GET", "/version", NULL, NULL, 0, NULL, &r, &e), HR_E_IO);
    assert_int_equal(r.status, 0);
    printf("# wrong tls-server-name reads: %s\n", e.msg);
    hr_kclient_free(c);
    /* No CA at all: the system store does not know the test CA. */
    snprintf(y, sizeof y, "    server: %s\n", g_server);
    kc = kubeconfig_cluster("noca.yaml", y);
    c = client_for(kc, NULL);
    assert_int_equal(hr_kclient_do(c, "GET", "/version", NULL, NULL, 0, NULL, &r, &e), HR_E_IO);
    hr_kclient_free(c);
    /* ... unless the kubeconfig asks for no verification. */
    snprintf(y, sizeof y, "    server: %s\n    insecure-skip-tls-verify: true\n", g_server);
    kc = kubeconfig_cluster("insecure.yaml", y);
    c = client_for(kc, NULL);
    whoami(c, who, sizeof who);
    assert_string_equal(who, admin);
    hr_kclient_free(c);
}

static atomic_bool g_watch_counted_early;

/* The first line of a watch: is the watch counted already (at its
 * headers, not when it ends)? Then stop. */
static int first_line_stops(void *ud, const char *line, size_t len)
{
    (void)line, (void)len;
    hr_buf b;
    hr_buf_init(&b, 0);
    hr_apimetrics_render(ud, &b);
    if (strstr(hr_buf_str(&b), "headroom_api_requests_total{verb=\"watch\",code=\"200\"} 1\n"))
        atomic_store(&g_watch_counted_early, true);
    hr_buf_free(&b);
    return 1;
}

/* headroom_api_requests_total and headroom_api_request_duration_seconds
 * (design §9.3) from real answers: each verb as the API server's
 * authorizer would name it, each status as it came. */
static void test_request_metrics(void **state)
{
    (void)state;
    hr_apimetrics *m = malloc(sizeof *m);
    assert_non_null(m);
    hr_apimetrics_init(m);
    hr_kclient_opts o = {.qps = 500,
                         .burst = 500,
                         .timeout_ms = 20000,
                         .on_request = hr_apimetrics_observe,
                         .on_request_ud = m};
    hr_kclient *c = NULL;
    hr_err e = {0};
    if (hr_kclient_new(&o, &c, &e) != HR_OK)
        fail_msg("client: %s", e.msg);
    char p[512], one[600];
    snprintf(p, sizeof p, "/api/v1/namespaces/%s/configmaps", g_ns);
    snprintf(one, sizeof one, "%s/cm-metrics", p);
    must(req(c, "GET", "/version", NULL, NULL, NULL, NULL), 200, "version", NULL);
    must(req(c, "GET", p, NULL, NULL, NULL, NULL), 200, "list", NULL);
    must(req(c, "GET", one, NULL, NULL, NULL, NULL), 404, "get missing", NULL);
    must(post_json(c, p,
                   "{\"apiVersion\":\"v1\",\"kind\":\"ConfigMap\",\"metadata\":{\"name\":"
                   "\"cm-metrics\"},\"data\":{\"k\":\"v\"}}",
                   &e),
         201, "create", &e);
    must(req(c, "PATCH", one, "application/merge-patch+json", "{\"data\":{\"k\":\"w\"}}", NULL, &e),
         200, "patch", &e);
    must(req(c, "PUT", one, "application/json",
             "{\"apiVersion\":\"v1\",\"kind\":\"ConfigMap\",\"metadata\":{\"name\":"
             "\"cm-metrics\"},\"data\":{\"k\":\"x\"}}",
             NULL, &e),
         200, "update", &e);
    must(req(c, "DELETE", one, NULL, NULL, NULL, &e), 200, "delete", &e);
    char wp[600];
    snprintf(wp, sizeof wp, "%s?watch=1&timeoutSeconds=5", p);
    hr_kresult r;
    if (hr_kclient_stream(c, wp, 10, first_line_stops, m, NULL, &r, &e) != HR_OK)
        fail_msg("watch: %s", e.msg);
    assert_true(atomic_load(&g_watch_counted_early));
    hr_kclient_free(c);

    hr_buf b;
    hr_buf_init(&b, 0);
    hr_apimetrics_render(m, &b);
    assert_false(hr_buf_failed(&b));
    static const char *const want[] = {
        "headroom_api_requests_total{verb=\"get\",code=\"200\"} 1\n",
        "headroom_api_requests_total{verb=\"get\",code=\"404\"} 1\n",
        "headroom_api_requests_total{verb=\"list\",code=\"200\"} 1\n",
        "headroom_api_requests_total{verb=\"watch\",code=\"200\"} 1\n",
        "headroom_api_requests_total{verb=\"create\",code=\"201\"} 1\n",
        "headroom_api_requests_total{verb=\"update\",code=\"200\"} 1\n",
        "headroom_api_requests_total{verb=\"patch\",code=\"200\"} 1\n",
        "headroom_api_requests_total{verb=\"delete\",code=\"200\"} 1\n",
        "headroom_api_request_duration_seconds_count{verb=\"get\"} 2\n",
        "headroom_api_request_duration_seconds_count{verb=\"watch\"} 1\n",
    };
    for (size_t i = 0; i < sizeof want / sizeof want[0]; i++)
        if (strstr(b.data, want[i]) == NULL)
            fail_msg("no %s in:\n%s", want[i], b.data);
    /* nine requests (two of them get 200), eight series: nothing else counted */
    size_t lines = 0;
    for (const char *q = b.data; (q = strstr(q, "\nheadroom_api_requests_total{")) != NULL; q++)
        lines++;
    assert_int_equal(lines, 8);
    hr_buf_free(&b);
    free(m);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_version_and_latency),
        cmocka_unit_test(test_list_paginated),
        cmocka_unit_test(test_errors_carry_server_message),
        cmocka_unit_test(test_resize_running_pod),
        cmocka_unit_test(test_event_create),
        cmocka_unit_test(test_lease),
        cmocka_unit_test(test_watch_stream),
        cmocka_unit_test(test_concurrent_watches),
        cmocka_unit_test(test_threads),
        cmocka_unit_test(test_stop_spares_neighbours),
        cmocka_unit_test(test_auth_client_certs),
        cmocka_unit_test(test_auth_token_tokenfile),
        cmocka_unit_test(test_auth_exec),
        cmocka_unit_test(test_auth_exec_client_cert),
        cmocka_unit_test(test_in_cluster_config),
        cmocka_unit_test(test_tls_options),
        cmocka_unit_test(test_throttled_429),
        cmocka_unit_test(test_request_metrics),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
