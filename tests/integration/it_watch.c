/*
 * it_watch.c — list/watch and the compact cache against the real control
 * plane (tests/cluster): a real kube-apiserver on a real etcd, kwok nodes.
 *
 *  1. 5,000 pods on 100 nodes (tests/cluster/mkload.sh; IT_WATCH_WORKLOADS=N
 *     makes it N×10 pods), list + watch them, each list a streaming one
 *     (sendInitialEvents; the real API server has WatchList on);
 *     the cache must equal a fresh list from the API server (same pods,
 *     same nodes, same resourceVersions).
 *  2. churn — deletes (the Deployments replace them), annotation updates,
 *     bare pod creates and deletes, scale-downs — then equality again.
 *  3. kube-apiserver killed (SIGKILL) and started again with the same
 *     command line: the watches resume (or relist) and the cache converges.
 *  4. the watches are held off while pods churn, etcd is compacted to its
 *     current revision and the API server restarted (dropping its watch
 *     cache): resuming from the old resourceVersion gets 410 Gone, the
 *     relist — a streaming list too — reconciles by difference: no
 *     duplicate, no leak (the observer's adds minus deletes always equals
 *     the cache's size).
 *
 * Environment (set by CTest): KUBECONFIG, HR_CLUSTER_SH,
 * HEADROOM_CLUSTER_DIR (etcd's port is read from its ports.env, written by
 * cluster.sh up). Prints what it does; exit 0 on success.
 */
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <curl/curl.h>
#include <yyjson.h>

#include "cache/cache.h"
#include "cache/sink.h"
#include "kube/transport/backoff.h"
#include "kube/transport/client.h"
#include "kube/watch/watch.h"
#include "kube/write/patch.h"
#include "util/clock.h"

#define NS_PREFIX "itw"
#define NODE_PREFIX "itw-node"
#define N_NS 5

static int failures;

static void say(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static void say(const char *fmt, ...)
{
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    struct tm tm;
    gmtime_r(&ts.tv_sec, &tm);
    printf("[%02d:%02d:%02d] ", tm.tm_hour, tm.tm_min, tm.tm_sec);
    va_list ap;
    va_start(ap, fmt);
    vprintf(fmt, ap);
    va_end(ap);
    putchar('\n');
    fflush(stdout);
}

#define CHECK(cond, ...)                                      \
    do {                                                      \
        if (!(cond)) {                                        \
            failures++;                                       \
            say("FAIL %s:%d: %s", __FILE__, __LINE__, #cond); \
            say(__VA_ARGS__);                                 \
        }                                                     \
    } while (0)

static double now_s(void)
{
    return (double)hr_mono_ns() / 1e9;
}

static void sleep_ms(long ms)
{
    struct timespec ts = {ms / 1000, (ms % 1000) * 1000000L};
    while (nanosleep(&ts, &ts) == -1 && errno == EINTR)
        ;
}

/* ------------------------------------------------ a holdable transport */

/* Wraps the real client so the test can cut every stream and refuse new
 * requests for a while, as a network partition would. */
typedef struct hold {
    hr_kclient *kc;
    atomic_bool held;
    atomic_bool cut; /* the stream's stop flag */
} hold;

static hr_status h_get(void *ud, const char *path, hr_buf *resp, hr_kresult *res, hr_err *err)
{
    hold *h = ud;
    if (h->held) {
        res->status = 0;
        return hr_err_set(err, HR_E_IO, "held by the test");
    }
    return hr_kclient_do(h->kc, "GET", path, NULL, NULL, 0, resp, res, err);
}

static hr_status h_stream(void *ud, const char *path, long timeout_s, hr_kline_fn fn, void *lud,
                          const atomic_bool *stop, hr_kresult *res, hr_err *err)
{
    hold *h = ud;
    (void)stop; /* the watch checks its own flag after we return */
    if (h->held) {
        res->status = 0;
        return hr_err_set(err, HR_E_IO, "held by the test");
    }
    h->cut = false;
    return hr_kclient_stream(h->kc, path, timeout_s, fn, lud, &h->cut, res, err);
}

/* ------------------------------------------------ observer bookkeeping */

typedef struct tally {
    long pods; /* adds - deletes, as reported */
} tally;

static void observe(void *ud, hr_ckind kind, hr_cchange what, const char *ns, const char *name)
{
    tally *t = ud;
    (void)ns, (void)name;
    if (kind != HR_CK_POD)
        return;
    if (what == HR_CC_ADDED)
        t->pods++;
    else if (what == HR_CC_DELETED)
        t->pods--;
}

/* ------------------------------------------------ what the server says */

typedef struct apipod {
    char key[256]; /* ns/name */
    char node[128];
    unsigned long long rv;
} apipod;

static int cmp_apipod(const void *a, const void *b)
{
    return strcmp(((const apipod *)a)->key, ((const apipod *)b)->key);
}

/* Every non-terminal pod, sorted by key. */
static apipod *list_pods(hr_kclient *kc, size_t *n, unsigned long long *list_rv)
{
    size_t cap = 8192;
    apipod *v = malloc(cap * sizeof *v);
    *n = 0;
    char cont[4096] = "";
    hr_buf body, path;
    hr_buf_init(&body, 0);
    hr_buf_init(&path, 0);
    do {
        hr_buf_reset(&path);
        hr_buf_puts(&path, "/api/v1/pods?limit=500");
        if (cont[0]) {
            hr_buf_puts(&path, "&continue=");
            char *e = curl_easy_escape(NULL, cont, 0);
            hr_buf_puts(&path, e);
            curl_free(e);
        }
        hr_buf_reset(&body);
        hr_kresult res;
        hr_err err;
        if (hr_kclient_do(kc, "GET", hr_buf_str(&path), NULL, NULL, 0, &body, &res, &err)) {
            say("list failed: %s", err.msg);
            free(v);
            v = NULL;
            break;
        }
        yyjson_doc *d = yyjson_read(body.data, body.len, 0);
        yyjson_val *root = yyjson_doc_get_root(d);
        yyjson_val *meta = yyjson_obj_get(root, "metadata");
        const char *c = yyjson_get_str(yyjson_obj_get(meta, "continue"));
        snprintf(cont, sizeof cont, "%s", c ? c : "");
        if (list_rv)
            *list_rv = strtoull(yyjson_get_str(yyjson_obj_get(meta, "resourceVersion")), NULL, 10);
        size_t i, max;
        yyjson_val *it;
        yyjson_arr_foreach(yyjson_obj_get(root, "items"), i, max, it)
        {
            yyjson_val *m = yyjson_obj_get(it, "metadata");
            const char *phase =
                yyjson_get_str(yyjson_obj_get(yyjson_obj_get(it, "status"), "phase"));
            if (phase && (!strcmp(phase, "Succeeded") || !strcmp(phase, "Failed")))
                continue;
            if (*n == cap)
                v = realloc(v, (cap *= 2) * sizeof *v);
            apipod *p = &v[(*n)++];
            const char *pns = yyjson_get_str(yyjson_obj_get(m, "namespace"));
            const char *pn = yyjson_get_str(yyjson_obj_get(m, "name"));
            snprintf(p->key, sizeof p->key, "%s/%s", pns ? pns : "", pn ? pn : "");
            const char *node =
                yyjson_get_str(yyjson_obj_get(yyjson_obj_get(it, "spec"), "nodeName"));
            snprintf(p->node, sizeof p->node, "%s", node ? node : "");
            p->rv = strtoull(yyjson_get_str(yyjson_obj_get(m, "resourceVersion")), NULL, 10);
        }
        yyjson_doc_free(d);
    } while (cont[0]);
    hr_buf_free(&body);
    hr_buf_free(&path);
    if (v)
        qsort(v, *n, sizeof *v, cmp_apipod);
    return v;
}

/* Mismatches between the cache and a fresh list (0: equal). */
static size_t compare(hr_kclient *kc, hr_cache *c, hr_cpod_scratch *scr, bool verbose)
{
    size_t n_api = 0;
    apipod *api = list_pods(kc, &n_api, NULL);
    if (!api)
        return (size_t)-1;
    size_t bad = 0, n_cache = 0;
    hr_cache_lock(c);
    uint32_t it = 0;
    hr_cpod_view v;
    while (hr_cache_pod_next(c, &it, &v, scr)) {
        n_cache++;
        apipod key;
        snprintf(key.key, sizeof key.key, "%s/%s", v.ns, v.name);
        apipod *a = bsearch(&key, api, n_api, sizeof *api, cmp_apipod);
        const char *why = NULL;
        if (!a)
            why = "in the cache, not on the server";
        else if (strcmp(a->node, v.node ? v.node : ""))
            why = "node differs";
        else if (a->rv != v.rv)
            why = "resourceVersion differs";
        if (why) {
            if (verbose && bad < 5)
                say("  mismatch %s: %s (cache rv %llu, server rv %llu)", key.key, why,
                    (unsigned long long)v.rv, a ? a->rv : 0ULL);
            bad++;
        }
    }
    hr_cache_unlock(c);
    if (n_cache != n_api) {
        if (verbose)
            say("  cache holds %zu pods, the server %zu", n_cache, n_api);
        bad += n_cache > n_api ? n_cache - n_api : n_api - n_cache;
    }
    free(api);
    return bad;
}

static bool converge(hr_kclient *kc, hr_cache *c, hr_cpod_scratch *scr, const char *what,
                     double limit_s)
{
    double t0 = now_s();
    size_t bad = 0;
    while (now_s() - t0 < limit_s) {
        bad = compare(kc, c, scr, false);
        if (bad == 0) {
            hr_cache_stats st;
            hr_cache_lock(c);
            hr_cache_get_stats(c, &st);
            hr_cache_unlock(c);
            say("%s: cache equals a fresh list (%zu pods, %zu nodes) after %.1f s", what, st.pods,
                st.nodes, now_s() - t0);
            return true;
        }
        sleep_ms(1000);
    }
    compare(kc, c, scr, true);
    CHECK(bad == 0, "%s: %zu mismatches after %.0f s", what, bad, limit_s);
    return false;
}

/* ------------------------------------------------ cluster operations */

static int run(const char *cmd)
{
    say("$ %s", cmd);
    int rc = system(cmd);
    return WIFEXITED(rc) ? WEXITSTATUS(rc) : -1;
}

static hr_status req(hr_kclient *kc, const char *method, const char *path, const char *ctype,
                     const char *body, long *status)
{
    hr_kresult res = {0, 0, false};
    hr_err err;
    hr_status st =
        hr_kclient_do(kc, method, path, ctype, body, body ? strlen(body) : 0, NULL, &res, &err);
    if (status)
        *status = res.status;
    if (st && res.status != 404 && res.status != 409)
        say("  %s %s: %s", method, path, err.msg);
    return st;
}

/* Names of the pods in one namespace (up to max). */
static size_t pod_names(hr_kclient *kc, const char *ns, char (*names)[128], size_t max)
{
    char path[256];
    snprintf(path, sizeof path, "/api/v1/namespaces/%s/pods?limit=%zu", ns, max);
    hr_buf body;
    hr_buf_init(&body, 0);
    hr_kresult res;
    hr_err err;
    size_t n = 0;
    if (hr_kclient_do(kc, "GET", path, NULL, NULL, 0, &body, &res, &err) == HR_OK) {
        yyjson_doc *d = yyjson_read(body.data, body.len, 0);
        size_t i, mx;
        yyjson_val *it;
        yyjson_arr_foreach(yyjson_obj_get(yyjson_doc_get_root(d), "items"), i, mx, it)
        {
            if (n < max)
                snprintf(names[n++], 128, "%s",
                         yyjson_get_str(yyjson_obj_get(yyjson_obj_get(it, "metadata"), "name")));
        }
        yyjson_doc_free(d);
    }
    hr_buf_free(&body);
    return n;
}

static void churn(hr_kclient *kc, int round, int scale)
{
    static char names[2000][128];
    char path[512], body[1024];
    int deleted = 0, patched = 0, created = 0, scaled = 0;
    for (int k = 0; k < N_NS; k++) {
        char ns[32];
        snprintf(ns, sizeof ns, NS_PREFIX "-%d", k);
        size_t n = pod_names(kc, ns, names, 2000);
        for (size_t i = 0; i < n; i++) {
            if (i % 17 == (size_t)round % 17 && deleted < 60 * scale) {
                snprintf(path, sizeof path, "/api/v1/namespaces/%s/pods/%.127s", ns, names[i]);
                if (!req(kc, "DELETE", path, NULL, NULL, NULL))
                    deleted++;
            } else if (i % 13 == (size_t)round % 13 && patched < 60 * scale) {
                snprintf(path, sizeof path, "/api/v1/namespaces/%s/pods/%.127s", ns, names[i]);
                snprintf(body, sizeof body,
                         "{\"metadata\":{\"annotations\":{\"kube-headroom.dev/max-cpu\":"
                         "\"%dm\"}}}",
                         500 + round * 10 + (int)i % 7);
                if (!hr_kclient_merge_patch(kc, path, body, strlen(body), NULL, NULL, NULL))
                    patched++;
            }
        }
    }
    for (int i = 0; i < 40 * scale; i++) {
        snprintf(path, sizeof path, "/api/v1/namespaces/" NS_PREFIX "-0/pods");
        snprintf(body, sizeof body,
                 "{\"apiVersion\":\"v1\",\"kind\":\"Pod\",\"metadata\":{\"name\":"
                 "\"bare-%d-%d\",\"labels\":{\"it\":\"watch\"}},\"spec\":{\"containers\":"
                 "[{\"name\":\"c\",\"image\":\"kwok.invalid/app:1\",\"resources\":"
                 "{\"requests\":{\"cpu\":\"%dm\"}}}]}}",
                 round, i, 50 + i);
        if (!req(kc, "POST", path, "application/json", body, NULL))
            created++;
    }
    /* half of the previous round's bare pods go again */
    for (int i = 0; round > 0 && i < 20 * scale; i++) {
        snprintf(path, sizeof path, "/api/v1/namespaces/" NS_PREFIX "-0/pods/bare-%d-%d", round - 1,
                 i);
        if (!req(kc, "DELETE", path, NULL, NULL, NULL))
            deleted++;
    }
    /* scale a few Deployments down: their ReplicaSets delete pods */
    for (int k = 0; k < N_NS && round < 3; k++) {
        char ns[32];
        snprintf(ns, sizeof ns, NS_PREFIX "-%d", k);
        snprintf(path, sizeof path, "/apis/apps/v1/namespaces/%s/deployments?limit=4", ns);
        hr_buf b;
        hr_buf_init(&b, 0);
        hr_kresult res;
        hr_err err;
        if (hr_kclient_do(kc, "GET", path, NULL, NULL, 0, &b, &res, &err) == HR_OK) {
            yyjson_doc *d = yyjson_read(b.data, b.len, 0);
            size_t i, mx;
            yyjson_val *it;
            yyjson_arr_foreach(yyjson_obj_get(yyjson_doc_get_root(d), "items"), i, mx, it)
            {
                const char *dn =
                    yyjson_get_str(yyjson_obj_get(yyjson_obj_get(it, "metadata"), "name"));
                snprintf(path, sizeof path, "/apis/apps/v1/namespaces/%s/deployments/%s", ns, dn);
                const char *pb = "{\"spec\":{\"replicas\":5}}";
                if (!hr_kclient_merge_patch(kc, path, pb, strlen(pb), NULL, NULL, NULL))
                    scaled++;
            }
            yyjson_doc_free(d);
        }
        hr_buf_free(&b);
    }
    say("churn round %d: %d deleted, %d annotated, %d created, %d deployments scaled to 5", round,
        deleted, patched, created, scaled);
}

static const char *state_dir(void)
{
    const char *s = getenv("HEADROOM_CLUSTER_DIR");
    return s && *s ? s : "/tmp/kube-headroom-cluster";
}

static bool wait_ready(hr_kclient *kc, double limit_s)
{
    double t0 = now_s();
    while (now_s() - t0 < limit_s) {
        hr_kresult res = {0, 0, false};
        hr_err err;
        hr_buf b;
        hr_buf_init(&b, 0);
        hr_status st = hr_kclient_do(kc, "GET", "/readyz", NULL, NULL, 0, &b, &res, &err);
        hr_buf_free(&b);
        if (st == HR_OK)
            return true;
        sleep_ms(500);
    }
    return false;
}

/* The API server's count of pods watchers its watch cache closed as too
 * slow to read (apiserver_terminated_watchers_total, since it started);
 * -1 when /metrics cannot be read. */
static long terminated_pod_watchers(hr_kclient *kc)
{
    hr_kresult res = {0, 0, false};
    hr_err err;
    hr_buf b;
    hr_buf_init(&b, 0);
    long n = -1;
    if (hr_kclient_do(kc, "GET", "/metrics", NULL, NULL, 0, &b, &res, &err) == HR_OK) {
        static const char name[] = "apiserver_terminated_watchers_total{";
        n = 0;
        for (const char *p = hr_buf_str(&b); p != NULL && *p != '\0';) {
            const char *eol = strchr(p, '\n');
            size_t len = eol ? (size_t)(eol - p) : strlen(p);
            const char *sp = memchr(p, ' ', len);
            if (strncmp(p, name, sizeof name - 1) == 0 && sp != NULL &&
                strstr(p, "resource=\"pods\"") != NULL && strstr(p, "resource=\"pods\"") < sp)
                n += strtol(sp + 1, NULL, 10);
            p = eol ? eol + 1 : NULL;
        }
    } else {
        say("GET /metrics: %s", err.msg);
    }
    hr_buf_free(&b);
    return n;
}

/* SIGKILL the API server cluster.sh started and start it again with the
 * same command line, recording the new PID where cluster.sh keeps it so
 * `cluster.sh down` still stops it. */
static bool restart_apiserver(hr_kclient *kc, long down_ms)
{
    char pidfile[512], cmdpath[64], logpath[512];
    snprintf(pidfile, sizeof pidfile, "%s/pids/kube-apiserver", state_dir());
    snprintf(logpath, sizeof logpath, "%s/logs/kube-apiserver.log", state_dir());
    FILE *f = fopen(pidfile, "r");
    long pid = 0;
    if (!f || fscanf(f, "%ld", &pid) != 1) {
        say("no API server PID in %s", pidfile);
        if (f)
            fclose(f);
        return false;
    }
    fclose(f);
    snprintf(cmdpath, sizeof cmdpath, "/proc/%ld/cmdline", pid);
    static char cmd[65536];
    int fd = open(cmdpath, O_RDONLY);
    ssize_t len = fd >= 0 ? read(fd, cmd, sizeof cmd - 1) : -1;
    if (fd >= 0)
        close(fd);
    if (len <= 0) {
        say("cannot read %s", cmdpath);
        return false;
    }
    cmd[len] = '\0';
    char *argv[512];
    int argc = 0;
    for (char *p = cmd; p < cmd + len && argc < 511; p += strlen(p) + 1)
        argv[argc++] = p;
    argv[argc] = NULL;
    say("killing kube-apiserver (pid %ld) with SIGKILL", pid);
    kill((pid_t)pid, SIGKILL);
    for (int i = 0; i < 100 && kill((pid_t)pid, 0) == 0; i++)
        sleep_ms(100);
    sleep_ms(down_ms);
    pid_t np = fork();
    if (np == 0) {
        setsid();
        int lf = open(logpath, O_WRONLY | O_APPEND | O_CREAT, 0644);
        int nul = open("/dev/null", O_RDONLY);
        if (lf >= 0) {
            dup2(lf, 1);
            dup2(lf, 2);
        }
        if (nul >= 0)
            dup2(nul, 0);
        execv(argv[0], argv);
        _exit(127);
    }
    f = fopen(pidfile, "w");
    if (f) {
        fprintf(f, "%ld\n", (long)np);
        fclose(f);
    }
    say("started kube-apiserver again (pid %ld)", (long)np);
    double t0 = now_s();
    bool ok = wait_ready(kc, 120);
    say("API server ready again after %.1f s: %s", now_s() - t0, ok ? "yes" : "NO");
    return ok;
}

/* Compact etcd to its current revision through its JSON gateway. */
static size_t sink_body(char *p, size_t sz, size_t n, void *ud)
{
    hr_buf_append(ud, p, sz * n);
    return sz * n;
}

/* etcd's client port: ETCD_PORT= in the cluster's ports.env; 0 when absent. */
static int etcd_port(void)
{
    char fn[512], line[128];
    int port = 0;
    snprintf(fn, sizeof fn, "%s/ports.env", state_dir());
    FILE *f = fopen(fn, "r");
    if (!f)
        return 0;
    while (fgets(line, sizeof line, f))
        if (strncmp(line, "ETCD_PORT=", 10) == 0)
            port = atoi(line + 10);
    fclose(f);
    return port;
}

static bool etcd_post(const char *path, const char *body, hr_buf *out)
{
    int port = etcd_port();
    if (port <= 0) {
        say("no ETCD_PORT in %s/ports.env", state_dir());
        return false;
    }
    char url[256];
    snprintf(url, sizeof url, "http://127.0.0.1:%d%s", port, path);
    CURL *h = curl_easy_init();
    if (!h)
        return false;
    curl_easy_setopt(h, CURLOPT_URL, url);
    curl_easy_setopt(h, CURLOPT_POSTFIELDS, body);
    curl_easy_setopt(h, CURLOPT_WRITEFUNCTION, sink_body);
    curl_easy_setopt(h, CURLOPT_WRITEDATA, out);
    curl_easy_setopt(h, CURLOPT_TIMEOUT, 30L);
    long code = 0;
    CURLcode rc = curl_easy_perform(h);
    curl_easy_getinfo(h, CURLINFO_RESPONSE_CODE, &code);
    curl_easy_cleanup(h);
    if (rc != CURLE_OK || code != 200)
        say("etcd %s: curl %d, HTTP %ld: %s", path, (int)rc, code, hr_buf_str(out));
    return rc == CURLE_OK && code == 200;
}

static bool etcd_compact(void)
{
    hr_buf b;
    hr_buf_init(&b, 0);
    bool ok = etcd_post("/v3/kv/range", "{\"key\":\"AA==\"}", &b);
    long long rev = 0;
    if (ok) {
        yyjson_doc *d = yyjson_read(b.data, b.len, 0);
        yyjson_val *r =
            yyjson_obj_get(yyjson_obj_get(yyjson_doc_get_root(d), "header"), "revision");
        rev = yyjson_is_str(r) ? atoll(yyjson_get_str(r)) : yyjson_get_sint(r);
        yyjson_doc_free(d);
    }
    hr_buf_reset(&b);
    char body[128];
    snprintf(body, sizeof body, "{\"revision\":\"%lld\",\"physical\":true}", rev);
    ok = ok && rev > 0 && etcd_post("/v3/kv/compaction", body, &b);
    say("etcd compacted to revision %lld: %s", rev, ok ? "ok" : "FAILED");
    hr_buf_free(&b);
    return ok;
}

/* ------------------------------------------------ the test */

typedef struct kindw {
    hr_ckind kind;
    hr_csink *sink;
    hr_watch *w;
    hold h;
} kindw;

static void stats_line(kindw *k, const char *when)
{
    hr_watch_stats s;
    hr_watch_get_stats(k->w, &s);
    say("  %-11s %s: events %llu, listed %llu, relists %llu, streamed %llu (cut %llu)%s, "
        "reconnects %llu, errors %llu, malformed %llu",
        hr_ckind_str(k->kind), when, (unsigned long long)s.events, (unsigned long long)s.listed,
        (unsigned long long)s.relists, (unsigned long long)s.streamed,
        (unsigned long long)s.stream_cut, s.paged ? " (paged)" : "",
        (unsigned long long)s.reconnects, (unsigned long long)s.errors,
        (unsigned long long)s.malformed);
}

int main(void)
{
    const char *kcfg = getenv("KUBECONFIG");
    const char *csh = getenv("HR_CLUSTER_SH");
    if (!kcfg || !csh) {
        fprintf(stderr,
                "it_watch: needs KUBECONFIG and HR_CLUSTER_SH (run through ctest -L e2e)\n");
        return 1;
    }
    char mkload[1024];
    snprintf(mkload, sizeof mkload, "%.*s/mkload.sh", (int)(strrchr(csh, '/') - csh), csh);
    curl_global_init(CURL_GLOBAL_DEFAULT);

    hr_kclient *kc;
    hr_err err;
    hr_kclient_opts ko = {.kubeconfig = kcfg, .qps = 500, .burst = 1000};
    if (hr_kclient_new(&ko, &kc, &err)) {
        fprintf(stderr, "it_watch: client: %s\n", err.msg);
        return 1;
    }
    /* IT_WATCH_WORKLOADS scales the load down (e.g. for a run under
     * valgrind); the full load is 5,000 pods on 100 nodes. */
    const char *wl = getenv("IT_WATCH_WORKLOADS");
    int workloads = wl && atoi(wl) > 0 ? atoi(wl) : 500;
    int want = workloads * 10, n_nodes = workloads / 5 < 10 ? 10 : workloads / 5;
    char cmd[2048];
    snprintf(cmd, sizeof cmd,
             "'%s' --nodes %d --node-prefix " NODE_PREFIX " --workloads %d --replicas 10 "
             "--namespaces %d --ns-prefix " NS_PREFIX " --managed --wait 1800 >/dev/null",
             mkload, n_nodes, workloads, N_NS);
    /* The load takes minutes to create on a busy machine; a rerun on the
     * same cluster reuses it. */
    size_t have = 0, n_all = 0;
    apipod *existing = list_pods(kc, &n_all, NULL);
    for (size_t i = 0; existing && i < n_all; i++)
        have += strncmp(existing[i].key, NS_PREFIX "-", strlen(NS_PREFIX "-")) == 0;
    free(existing);
    double t_load = now_s();
    if (have >= (size_t)want) {
        say("load: %zu pods already there, reused", have);
    } else if (run(cmd) != 0) {
        fprintf(stderr, "it_watch: mkload failed\n");
        return 1;
    } else {
        say("load: %d nodes, %d pods Running after %.0f s", n_nodes, want, now_s() - t_load);
    }

    hr_cache *c;
    if (hr_cache_new(&c, &err))
        return 1;
    tally t = {0};
    hr_cache_set_observer(c, observe, &t);
    hr_cpod_scratch *scr = malloc(sizeof *scr);
    atomic_bool stop = false;
    kindw kw[] = {{.kind = HR_CK_POD},
                  {.kind = HR_CK_NODE},
                  {.kind = HR_CK_NAMESPACE},
                  {.kind = HR_CK_LIMITRANGE}};
    const size_t nk = sizeof kw / sizeof kw[0];
    double t_sync = now_s();
    for (size_t i = 0; i < nk; i++) {
        kw[i].h.kc = kc;
        if (hr_csink_new(c, kw[i].kind, &kw[i].sink, &err))
            return 1;
        hr_watch_opts o = {
            .resource = hr_ckind_str(kw[i].kind),
            .path = hr_ckind_path(kw[i].kind),
            .sink = hr_csink_wsink(kw[i].sink),
            .transport = {&kw[i].h, h_get, h_stream, hr_kbackoff_ms, true, NULL, NULL, NULL},
            .timeout_min_s = 20, /* short, so resumes happen during the test */
            .timeout_max_s = 40,
            .backoff_base_ms = 200,
            .backoff_max_ms = 2000,
        };
        if (hr_watch_new(&o, &kw[i].w, &err) || hr_watch_start(kw[i].w, &stop, &err)) {
            fprintf(stderr, "it_watch: %s\n", err.msg);
            return 1;
        }
    }
    for (;;) {
        bool all = true;
        for (size_t i = 0; i < nk; i++) {
            hr_watch_stats s;
            hr_watch_get_stats(kw[i].w, &s);
            all = all && s.synced;
        }
        if (all)
            break;
        if (now_s() - t_sync > 120) {
            CHECK(false, "not synced after 120 s");
            break;
        }
        sleep_ms(50);
    }
    say("synced: first lists of all kinds in %.2f s", now_s() - t_sync);
    for (size_t i = 0; i < nk; i++) {
        hr_watch_stats s;
        hr_watch_get_stats(kw[i].w, &s);
        CHECK(s.streamed >= 1 && !s.paged, "%s: the first list was not a streaming list",
              hr_ckind_str(kw[i].kind));
    }

    /* 1. list + watch */
    converge(kc, c, scr, "after the first list", 60);
    CHECK(t.pods >= want, "only %ld pods reported added", t.pods);

    /* 2. churn */
    for (int r = 0; r < 3; r++)
        churn(kc, r, 1);
    converge(kc, c, scr, "after churn", 120);

    /* 3. API server killed and restarted */
    for (size_t i = 0; i < nk; i++)
        stats_line(&kw[i], "before the restart");
    if (restart_apiserver(kc, 3000)) {
        churn(kc, 3, 1);
        converge(kc, c, scr, "after an API server restart", 180);
    } else {
        CHECK(false, "could not restart the API server");
    }
    for (size_t i = 0; i < nk; i++)
        stats_line(&kw[i], "after the restart");

    /* 4. 410 Gone: hold the watches, churn, compact, drop the watch cache */
    hr_watch_stats before;
    hr_watch_get_stats(kw[0].w, &before);
    for (size_t i = 0; i < nk; i++) {
        kw[i].h.held = true;
        kw[i].h.cut = true;
    }
    sleep_ms(1500);
    char rv_held[64];
    hr_watch_get_rv(kw[0].w, rv_held, sizeof rv_held);
    say("watches held at pods resourceVersion %s", rv_held);
    churn(kc, 4, 2);
    bool compacted = etcd_compact();
    CHECK(compacted, "etcd compaction failed");
    bool restarted = restart_apiserver(kc, 500);
    CHECK(restarted, "API server restart failed");
    long closed0 = terminated_pod_watchers(kc); /* ours are all held: none open */
    for (size_t i = 0; i < nk; i++)
        kw[i].h.held = false;
    converge(kc, c, scr, "after 410 Gone and a relist", 180);
    hr_watch_stats after;
    hr_watch_get_stats(kw[0].w, &after);
    CHECK(after.relists > before.relists, "no relist happened (relists %llu -> %llu)",
          (unsigned long long)before.relists, (unsigned long long)after.relists);
    /* The relist streams. The one exception is the API server's: its
     * watch cache closes a watcher that reads its initial events too
     * slowly while new events queue behind them (this client under
     * ThreadSanitizer, right after the restart), and the client then lists
     * by pages once. That is allowed only when the server's own counter
     * says it did so, and it must not be remembered as a refusal. */
    CHECK(!after.paged, "the relist made the watch list by pages for good");
    if (after.stream_cut > before.stream_cut) {
        long closed = terminated_pod_watchers(kc);
        say("the streaming relist was ended before its bookmark %llu time(s); the API server "
            "closed %ld pods watcher(s) as too slow meanwhile (%ld -> %ld)",
            (unsigned long long)(after.stream_cut - before.stream_cut), closed - closed0, closed0,
            closed);
        CHECK(closed0 >= 0 && closed > closed0,
              "a streaming relist ended early and the API server closed no slow pods watcher");
    } else {
        CHECK(after.streamed > before.streamed,
              "the relist was not a streaming list (streamed %llu -> %llu)",
              (unsigned long long)before.streamed, (unsigned long long)after.streamed);
    }
    for (size_t i = 0; i < nk; i++)
        stats_line(&kw[i], "at the end");

    /* no duplicate, no leak */
    hr_cache_stats st;
    hr_cache_lock(c);
    hr_cache_drain(c, NULL, NULL);
    hr_cache_get_stats(c, &st);
    hr_cache_unlock(c);
    CHECK((long)st.pods == t.pods, "observer says %ld pods (adds - deletes), the cache holds %zu",
          t.pods, st.pods);
    say("cache: %zu pods, %zu nodes, %zu namespaces, %zu strings, %.1f MB by its accounting "
        "(%.0f B/pod)",
        st.pods, st.nodes, st.namespaces, st.strings, st.bytes / 1e6,
        st.pods ? (double)st.bytes / st.pods : 0.0);

    stop = true;
    for (size_t i = 0; i < nk; i++) {
        kw[i].h.cut = true;
        hr_watch_free(kw[i].w); /* joins */
        hr_csink_free(kw[i].sink);
    }
    hr_cache_free(c);
    free(scr);

    snprintf(cmd, sizeof cmd,
             "'%s' --delete --node-prefix " NODE_PREFIX " --ns-prefix " NS_PREFIX " >/dev/null",
             mkload);
    run(cmd);
    hr_kclient_free(kc);
    curl_global_cleanup();
    say("%s (%d failures)", failures ? "FAIL" : "PASS", failures);
    return failures ? 1 : 0;
}
