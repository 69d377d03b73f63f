/*
 * stress_churn.c — the controller under heavy churn, for a race detector
 * (the loop of design §5, the lifecycle of design §10).
 *
 * Why: every piece of the controller has unit tests on one thread, but the
 * product is six watch threads writing the cache while a feeder drains it,
 * workers snapshot it, an executor writes, a status thread reads it and
 * configuration is pushed through it. Only running all of that at once,
 * for a while, under ThreadSanitizer shows whether the locking contract of
 * cache.h and controller.h holds. A plain build of this program is a
 * crash test too: a broken contract typically segfaults in the cache.
 *
 * What runs is the real thing, end to end, minus the network:
 *  - the real informers (cache/informers.h), one hr_watch thread per kind
 *    with the real sink (cache/sink.c) into one real cache, fed through an
 *    in-process transport (hr_wtransport) that plays an API server under
 *    churn: pods ADDED/MODIFIED/DELETED/turned terminal across ten node
 *    names (two only ever known from their pods), nodes added, changed and
 *    removed, namespaces relabelled, LimitRanges and the HeadroomConfig
 *    changed (live or dry run, debounce and node rate moving), 410 Gone
 *    with changes missed while "disconnected" (a relist by difference),
 *    paginated lists and failed list pages;
 *  - the real controller (feeder, workers, executor, config-status
 *    thread) with a real API client pointed at a no-op API server on
 *    loopback, which answers every write 200 and every Node read with a
 *    roomy Ready node;
 *  - the real leader election (controller/leader.h) on a Lease of the
 *    same no-op server, which refuses every eighth read so leadership is
 *    lost and regained several times a second, each gain calling
 *    hr_controller_enqueue_all from the election thread;
 *  - what `headroom run` does around them: the cache observer pushing the
 *    configuration (cache lock → cfg_mu → executor lock, controller.h),
 *    and /metrics scrapes rendering the controller's gauges.
 *
 * It runs for HR_STRESS_SECONDS (default 10), stops everything in the
 * order `headroom run` does (election thread, controller, Lease, watches),
 * then checks that the churn really happened
 * (events, reconciles, writes), that no generated object was refused as
 * malformed, and that the cache ends up holding exactly the world the
 * transport last delivered (every pod with its node and request, every
 * Node present or not). Exit 0: nothing went wrong. Under TSan
 * (TSAN_OPTIONS=halt_on_error=1:exitcode=66) a race ends it at once.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <inttypes.h>
#include <netinet/in.h>
#include <poll.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include "cache/cache.h"
#include "cache/informers.h"
#include "cache/sink.h"
#include "controller/controller.h"
#include "controller/ctlmetrics.h"
#include "controller/leader.h"
#include "core/config.h"
#include "core/names.h"
#include "kube/transport/client.h"
#include "kube/watch/watch.h"
#include "util/buf.h"
#include "util/clock.h"
#include "util/prng.h"

#define N_NODES 8       /* node-0 .. node-7 exist as Node objects, at times */
#define N_NODE_NAMES 10 /* pods also land on node-8 and node-9: placeholders */
#define N_PODS 400
#define N_NS 4
#define N_LR 2
#define MAX_SLOTS N_PODS
#define LIST_PAGE 150

static void sleep_ms(long ms)
{
    hr_mono_sleep_until(hr_mono_ns() + (int64_t)ms * 1000000);
}

/* ------------------------------------------------- the world of a kind */

/* One kind's objects as the fake API server has them. Each kind's state
 * is touched only by its own watch thread (the transport is called on
 * it), and read by main once the informers are joined. */
typedef struct kind_world {
    hr_ckind kind;
    int n_slots;
    hr_prng rng;
    uint64_t rv; /* this kind's resourceVersion counter */
    bool exists[MAX_SLOTS];
    uint32_t variant[MAX_SLOTS]; /* what the object looks like */
    uint64_t obj_rv[MAX_SLOTS];
    int64_t generation; /* the HeadroomConfig's */
    /* Changes made while no watch was open: only a relist shows them. */
    bool unseen;
    long per_stream;          /* events before a stream ends cleanly */
    long pace_every, pace_ms; /* sleep pace_ms after every pace_every events */
    long gone_every;          /* a 410 Gone every this many events; 0: never */
    uint64_t events, lists, gones, failed_pages;
} kind_world;

typedef struct world {
    kind_world k[HR_CK_COUNT_];
} world;

static const char *kind_path(hr_ckind k)
{
    return hr_ckind_path(k);
}

/* What a pod's variant means. */
static unsigned pod_node(uint32_t v)
{
    return v % N_NODE_NAMES;
}
static unsigned pod_cpu(uint32_t v)
{
    return 50 + (v / N_NODE_NAMES % 20) * 25;
}
static unsigned pod_ns(int slot)
{
    return (unsigned)slot % N_NS;
}

static void render(const kind_world *k, int i, const char *phase, hr_buf *b)
{
    uint32_t v = k->variant[i];
    unsigned long long rv = (unsigned long long)k->obj_rv[i];
    switch (k->kind) {
    case HR_CK_POD: {
        unsigned ctrs = 1 + v / 997 % 2;
        hr_buf_printf(
            b,
            "{\"kind\":\"Pod\",\"apiVersion\":\"v1\",\"metadata\":{\"namespace\":\"team-%u\","
            "\"name\":\"p-%d\",\"uid\":\"%08x-0000-4000-8000-%012llx\","
            "\"resourceVersion\":\"%llu\",%s"
            "\"ownerReferences\":[{\"apiVersion\":\"apps/v1\",\"kind\":\"ReplicaSet\","
            "\"name\":\"rs-%d\",\"uid\":\"00000000-0000-4000-8000-%012d\","
            "\"controller\":true}]},"
            "\"spec\":{\"nodeName\":\"node-%u\",\"restartPolicy\":\"Always\",\"containers\":[",
            pod_ns(i), i, (unsigned)i, rv, rv,
            v % 11 == 0 ? "\"deletionTimestamp\":\"2026-01-01T00:00:00Z\"," : "", i / 10, i / 10,
            pod_node(v));
        for (unsigned c = 0; c < ctrs; c++)
            hr_buf_printf(b,
                          "%s{\"name\":\"c%u\",\"resources\":{\"requests\":{\"cpu\":\"%um\","
                          "\"memory\":\"64Mi\"}%s},\"resizePolicy\":[{\"resourceName\":\"cpu\","
                          "\"restartPolicy\":\"NotRequired\"}]}",
                          c ? "," : "", c, c ? 100 : pod_cpu(v),
                          v % 5 == 0 ? ",\"limits\":{\"cpu\":\"2\"}" : "");
        hr_buf_printf(
            b, "]},\"status\":{\"phase\":\"%s\",\"conditions\":[%s],\"containerStatuses\":[", phase,
            v % 13 == 0
                ? "{\"type\":\"PodResizePending\",\"status\":\"True\",\"reason\":\"Infeasible\"}"
            : v % 17 == 0
                ? "{\"type\":\"PodResizePending\",\"status\":\"True\",\"reason\":\"Deferred\"}"
                : "");
        for (unsigned c = 0; c < ctrs; c++)
            hr_buf_printf(b, "%s{\"name\":\"c%u\",\"resources\":{\"requests\":{\"cpu\":\"%um\"}}}",
                          c ? "," : "", c, c ? 100 : pod_cpu(v));
        hr_buf_puts(b, "]}}");
        break;
    }
    case HR_CK_NODE:
        hr_buf_printf(b,
                      "{\"kind\":\"Node\",\"apiVersion\":\"v1\",\"metadata\":{\"name\":\"node-%d\","
                      "\"resourceVersion\":\"%llu\",\"labels\":{\"kubernetes.io/os\":\"linux\"}},"
                      "\"status\":{\"allocatable\":{\"cpu\":\"%u\"},\"conditions\":["
                      "{\"type\":\"Ready\",\"status\":\"%s\"},"
                      "{\"type\":\"DiskPressure\",\"status\":\"%s\"}]}}",
                      i, rv, 4 + v % 13, v % 7 ? "True" : "False", v % 9 ? "False" : "True");
        break;
    case HR_CK_NAMESPACE:
        hr_buf_printf(
            b,
            "{\"kind\":\"Namespace\",\"apiVersion\":\"v1\",\"metadata\":{\"name\":\"team-%d\","
            "\"resourceVersion\":\"%llu\",\"labels\":{\"" HR_LABEL_MODE "\":\"%s\"}}}",
            i, rv, v % 5 ? HR_MODE_MANAGED : HR_MODE_UNMANAGED);
        break;
    case HR_CK_LIMITRANGE:
        hr_buf_printf(
            b,
            "{\"kind\":\"LimitRange\",\"apiVersion\":\"v1\",\"metadata\":{\"namespace\":"
            "\"team-%d\",\"name\":\"lr\",\"resourceVersion\":\"%llu\"},\"spec\":{\"limits\":"
            "[{\"type\":\"Container\",\"max\":{\"cpu\":\"%u\"}}]}}",
            i, rv, 1 + v % 4);
        break;
    case HR_CK_CONFIG: {
        static const char *const debounce[] = {"0s", "10ms", "50ms", "200ms"};
        static const int pps[] = {5, 20, 100};
        hr_buf_printf(
            b,
            "{\"apiVersion\":\"" HR_GROUP "/" HR_VERSION "\",\"kind\":\"" HR_CONFIG_KIND "\","
            "\"metadata\":{\"name\":\"" HR_CONFIG_NAME "\",\"resourceVersion\":\"%llu\","
            "\"generation\":%" PRId64 "},\"spec\":{\"dryRun\":%s,\"debouncePeriod\":\"%s\","
            "\"rateLimits\":{\"perNodePatchesPerSecond\":%d,\"clientQPS\":1000,"
            "\"clientBurst\":100}}}",
            rv, k->generation, v % 3 == 0 ? "true" : "false", debounce[v % 4], pps[v / 4 % 3]);
        break;
    }
    default: hr_buf_puts(b, "{}"); break;
    }
}

/* One change to the world. Returns the event type, or NULL when the kind
 * has nothing to change; *slot and *phase say what to render. */
static const char *mutate(kind_world *k, int *slot, const char **phase)
{
    if (k->n_slots == 0)
        return NULL;
    int i = (int)hr_prng_below(&k->rng, (uint64_t)k->n_slots);
    unsigned r = (unsigned)hr_prng_below(&k->rng, 100);
    *slot = i;
    *phase = "Running";
    k->obj_rv[i] = ++k->rv;
    if (!k->exists[i]) {
        k->exists[i] = true;
        k->variant[i] = (uint32_t)hr_prng_next(&k->rng);
        if (k->kind == HR_CK_CONFIG)
            k->generation++;
        return "ADDED";
    }
    /* Namespaces, LimitRanges and the config are changed, never removed
     * for long: most nodes keep managed pods. */
    bool removable = k->kind == HR_CK_POD || k->kind == HR_CK_NODE;
    if (removable && r < 25) {
        k->exists[i] = false;
        return "DELETED";
    }
    if (k->kind == HR_CK_POD && r < 30) {
        k->exists[i] = false; /* terminal pods leave the cache */
        *phase = r < 28 ? "Succeeded" : "Failed";
        return "MODIFIED";
    }
    if (k->kind == HR_CK_CONFIG)
        k->generation++;
    k->variant[i] = (uint32_t)hr_prng_next(&k->rng);
    return "MODIFIED";
}

static kind_world *kind_of(world *w, const char *path)
{
    for (int k = 0; k < HR_CK_COUNT_; k++) {
        const char *p = kind_path((hr_ckind)k);
        size_t n = strlen(p);
        if (strncmp(path, p, n) == 0 && path[n] == '?')
            return &w->k[k];
    }
    return NULL;
}

/* --------------------------------------------------- the fake transport */

static bool stop_requested(const atomic_bool *stop)
{
    return stop != NULL && atomic_load(stop);
}

static hr_status fake_get(void *ud, const char *path, hr_buf *resp, hr_kresult *res, hr_err *err)
{
    kind_world *k = kind_of(ud, path);
    res->status = 0;
    res->retry_after_ms = 0;
    if (k == NULL)
        return hr_err_set(err, HR_E_INPUT, "stress: unexpected GET %s", path);
    int from = 0;
    const char *c = strstr(path, "&continue=");
    if (c != NULL)
        from = atoi(c + strlen("&continue="));
    else
        k->lists++;
    /* Now and then a list page fails, and the whole list starts over. */
    if (k->kind == HR_CK_POD && from > 0 && k->lists % 5 == 0 && k->failed_pages < k->lists / 5) {
        k->failed_pages++;
        res->status = 500;
        return hr_err_set(err, HR_E_IO, "stress: page refused (500)");
    }
    int to = from + LIST_PAGE < k->n_slots ? from + LIST_PAGE : k->n_slots;
    res->status = 200;
    hr_buf_printf(resp, "{\"kind\":\"List\",\"metadata\":{\"resourceVersion\":\"%llu\"",
                  (unsigned long long)k->rv);
    if (to < k->n_slots)
        hr_buf_printf(resp, ",\"continue\":\"%d\"", to);
    hr_buf_puts(resp, "},\"items\":[");
    bool first = true;
    for (int i = from; i < to; i++) {
        if (!k->exists[i])
            continue;
        if (!first)
            hr_buf_putc(resp, ',');
        first = false;
        render(k, i, "Running", resp);
    }
    hr_buf_puts(resp, "]}");
    if (to >= k->n_slots)
        k->unseen = false; /* the sink gets the last page */
    return HR_OK;
}

static hr_status fake_stream(void *ud, const char *path, long timeout_s, hr_kline_fn on_line,
                             void *line_ud, const atomic_bool *stop, hr_kresult *res, hr_err *err)
{
    (void)timeout_s;
    kind_world *k = kind_of(ud, path);
    res->status = 0;
    res->retry_after_ms = 0;
    if (k == NULL)
        return hr_err_set(err, HR_E_INPUT, "stress: unexpected stream %s", path);
    res->status = 200;
    hr_buf line;
    hr_buf_init(&line, 0);
    for (long n = 0; n < k->per_stream && !stop_requested(stop); n++) {
        if (k->n_slots == 0 || k->pace_every == 0) {
            sleep_ms(50); /* a quiet kind: an idle stream */
            continue;
        }
        hr_buf_reset(&line);
        if (k->gone_every > 0 && k->events > 0 && k->events % (uint64_t)k->gone_every == 0) {
            /* The server compacted past us, and changed things meanwhile. */
            for (int j = 0; j < 20; j++) {
                int slot;
                const char *phase;
                mutate(k, &slot, &phase);
            }
            k->unseen = true;
            k->events++;
            k->gones++;
            hr_buf_puts(&line, "{\"type\":\"ERROR\",\"object\":{\"kind\":\"Status\",\"code\":410,"
                               "\"reason\":\"Expired\",\"message\":\"too old resource version\"}}");
            on_line(line_ud, hr_buf_str(&line), line.len);
            break;
        }
        int slot;
        const char *phase;
        const char *type = mutate(k, &slot, &phase);
        hr_buf_printf(&line, "{\"type\":\"%s\",\"object\":", type);
        render(k, slot, phase, &line);
        hr_buf_putc(&line, '}');
        k->events++;
        if (hr_buf_failed(&line)) {
            hr_buf_free(&line);
            return hr_err_set(err, HR_E_NOMEM, "stress: out of memory");
        }
        if (on_line(line_ud, hr_buf_str(&line), line.len) != 0)
            break;
        if (k->events % (uint64_t)k->pace_every == 0)
            sleep_ms(k->pace_ms);
        if (n % 64 == 63) {
            /* A bookmark now and then, as the real server sends them. */
            hr_buf_reset(&line);
            hr_buf_printf(
                &line,
                "{\"type\":\"BOOKMARK\",\"object\":{\"metadata\":{\"resourceVersion\":\"%llu\"}}}",
                (unsigned long long)k->rv);
            if (on_line(line_ud, hr_buf_str(&line), line.len) != 0)
                break;
        }
    }
    hr_buf_free(&line);
    return HR_OK;
}

static long fast_backoff(int attempt, long base_ms, long max_ms, long retry_after_ms)
{
    (void)attempt, (void)base_ms, (void)max_ms, (void)retry_after_ms;
    return 5;
}

static void world_init(world *w, uint64_t seed)
{
    memset(w, 0, sizeof *w);
    static const struct {
        int slots;
        long per_stream, pace_every, pace_ms, gone_every;
    } shape[HR_CK_COUNT_] = {
        [HR_CK_POD] = {N_PODS, 1000, 4, 1, 1500},  [HR_CK_NODE] = {N_NODES, 50, 1, 15, 120},
        [HR_CK_NAMESPACE] = {N_NS, 10, 1, 150, 0}, [HR_CK_LIMITRANGE] = {N_LR, 10, 1, 300, 0},
        [HR_CK_CONFIG] = {1, 10, 1, 400, 0},       [HR_CK_QUOTA] = {0, 20, 0, 0, 0},
    };
    for (int k = 0; k < HR_CK_COUNT_; k++) {
        kind_world *kw = &w->k[k];
        kw->kind = (hr_ckind)k;
        kw->n_slots = shape[k].slots;
        kw->per_stream = shape[k].per_stream;
        kw->pace_every = shape[k].pace_every;
        kw->pace_ms = shape[k].pace_ms;
        kw->gone_every = shape[k].gone_every;
        hr_prng_seed(&kw->rng, seed ^ ((uint64_t)k << 56));
        /* Everything exists at the start; the churn takes it from there. */
        for (int i = 0; i < kw->n_slots; i++) {
            kw->exists[i] = true;
            kw->variant[i] = (uint32_t)hr_prng_next(&kw->rng);
            kw->obj_rv[i] = ++kw->rv;
        }
        if (k == HR_CK_CONFIG) {
            kw->generation = 1;
            kw->variant[0] = 1; /* live at the start: the executor writes */
        }
        if (k == HR_CK_NAMESPACE)
            for (int i = 0; i < kw->n_slots; i++)
                kw->variant[i] = 1; /* managed */
    }
}

/* ------------------------------------------------- a no-op API server */

/* Answers every request on loopback, one request per connection: a Node
 * read gets a roomy Ready node (so increases pass the live gate), a Lease
 * read a released Lease (so the elector takes it over; every eighth read
 * fails with 500, and the leader steps down until the next round), a Lease
 * write the Lease, any other write {"metadata":{"resourceVersion":"1"}}. */
typedef struct apiserver {
    int fd;
    uint16_t port;
    pthread_t thread;
    atomic_bool stop;
    atomic_uint_fast64_t gets, writes, lease_reads;
} apiserver;

#define LEASE_JSON                                                                                \
    "{\"kind\":\"Lease\",\"apiVersion\":\"coordination.k8s.io/v1\",\"metadata\":{\"name\":"       \
    "\"kube-headroom\",\"namespace\":\"headroom-system\",\"resourceVersion\":\"7\"},\"spec\":"    \
    "{\"leaseDurationSeconds\":15,\"acquireTime\":\"2026-01-01T00:00:00.000000Z\",\"renewTime\":" \
    "\"2026-01-01T00:00:00.000000Z\",\"leaseTransitions\":1}}"

static void serve_one(apiserver *s, int c)
{
    struct timeval tv = {2, 0};
    setsockopt(c, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv);
    char buf[65536];
    size_t len = 0;
    char *end = NULL;
    while (len < sizeof buf - 1) {
        ssize_t n = recv(c, buf + len, sizeof buf - 1 - len, 0);
        if (n <= 0)
            return;
        len += (size_t)n;
        buf[len] = '\0';
        if ((end = strstr(buf, "\r\n\r\n")) != NULL)
            break;
    }
    if (end == NULL)
        return;
    size_t body = 0;
    const char *cl = strcasestr(buf, "\r\ncontent-length:");
    if (cl != NULL && cl < end)
        body = (size_t)strtoul(cl + 17, NULL, 10);
    size_t want = (size_t)(end + 4 - buf) + body;
    while (len < want && len < sizeof buf - 1) {
        ssize_t n = recv(c, buf + len, sizeof buf - 1 - len, 0);
        if (n <= 0)
            return;
        len += (size_t)n;
    }
    char resp[1024];
    const char *json = "{\"metadata\":{\"resourceVersion\":\"1\"}}";
    const char *status = "200 OK";
    bool lease =
        strstr(buf, "/apis/coordination.k8s.io/v1/") != NULL && strstr(buf, "/leases") != NULL;
    if (lease && strncmp(buf, "GET ", 4) == 0) {
        if (atomic_fetch_add(&s->lease_reads, 1) % 8 == 7) {
            status = "500 Internal Server Error";
            json = "{\"kind\":\"Status\",\"code\":500,\"message\":\"stress: lease read refused\"}";
        } else {
            json = LEASE_JSON;
        }
    } else if (lease) {
        json = LEASE_JSON;
    } else if (strncmp(buf, "GET ", 4) == 0) {
        atomic_fetch_add(&s->gets, 1);
        json = "{\"kind\":\"Node\",\"metadata\":{\"name\":\"n\",\"resourceVersion\":\"1\"},"
               "\"status\":{\"allocatable\":{\"cpu\":\"64\"},\"conditions\":["
               "{\"type\":\"Ready\",\"status\":\"True\"}]}}";
    } else {
        atomic_fetch_add(&s->writes, 1);
    }
    int n = snprintf(resp, sizeof resp,
                     "HTTP/1.1 %s\r\nContent-Type: application/json\r\nContent-Length: %zu\r\n"
                     "Connection: close\r\n\r\n%s",
                     status, strlen(json), json);
    for (size_t off = 0; n > 0 && off < (size_t)n;) {
        ssize_t w = send(c, resp + off, (size_t)n - off, MSG_NOSIGNAL);
        if (w <= 0)
            break;
        off += (size_t)w;
    }
}

static void *apiserver_main(void *ud)
{
    apiserver *s = ud;
    while (!atomic_load(&s->stop)) {
        struct pollfd p = {s->fd, POLLIN, 0};
        if (poll(&p, 1, 100) <= 0)
            continue;
        int c = accept(s->fd, NULL, NULL);
        if (c < 0)
            continue;
        serve_one(s, c);
        close(c);
    }
    return NULL;
}

static hr_status apiserver_start(apiserver *s, hr_err *err)
{
    memset(s, 0, sizeof *s);
    atomic_init(&s->stop, false);
    s->fd = socket(AF_INET, SOCK_STREAM, 0);
    if (s->fd < 0)
        return hr_err_set(err, HR_E_IO, "socket: %s", strerror(errno));
    struct sockaddr_in a = {.sin_family = AF_INET, .sin_port = 0};
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    socklen_t al = sizeof a;
    if (bind(s->fd, (struct sockaddr *)&a, sizeof a) != 0 || listen(s->fd, 128) != 0 ||
        getsockname(s->fd, (struct sockaddr *)&a, &al) != 0) {
        close(s->fd);
        return hr_err_set(err, HR_E_IO, "no-op API server: %s", strerror(errno));
    }
    s->port = ntohs(a.sin_port);
    if (pthread_create(&s->thread, NULL, apiserver_main, s) != 0) {
        close(s->fd);
        return hr_err_set(err, HR_E_IO, "no-op API server: cannot start its thread");
    }
    return HR_OK;
}

static void apiserver_stop(apiserver *s)
{
    atomic_store(&s->stop, true);
    pthread_join(s->thread, NULL);
    close(s->fd);
}

/* ------------------------------------------------------ what run does */

typedef struct run {
    hr_cache *cache;
    hr_informers *inf;
    hr_controller *ctl; /* set and cleared under the cache lock */
    atomic_uint_fast64_t gains, errors_logged;
} run;

static void on_change(void *ud, hr_ckind kind, hr_cchange what, const char *ns, const char *name)
{
    (void)what, (void)ns, (void)name;
    run *r = ud;
    if (kind != HR_CK_CONFIG || r->ctl == NULL)
        return;
    /* As `headroom run` does: with the cache lock held, push (controller.h). */
    hr_config eff;
    hr_config_effective(hr_cache_config(r->cache, NULL), HR_DRY_RUN_UNSET, &eff);
    hr_controller_config_changed(r->ctl, &eff);
}

static bool synced(void *ud)
{
    return hr_informers_synced(((run *)ud)->inf);
}

/* As `headroom run` does on a gain: every node, from the election thread
 * (the controller outlives the thread: shutdown joins it first). */
static void on_leadership(void *ud, bool leading)
{
    run *r = ud;
    if (!leading)
        return;
    atomic_fetch_add(&r->gains, 1);
    hr_cache_lock(r->cache);
    hr_controller *ctl = r->ctl;
    hr_cache_unlock(r->cache);
    if (ctl != NULL)
        hr_controller_enqueue_all(ctl);
}

static void ctl_log(void *ud, int level, const char *msg)
{
    run *r = ud;
    if (level == 0) {
        atomic_fetch_add(&r->errors_logged, 1);
        if (getenv("HR_STRESS_VERBOSE"))
            fprintf(stderr, "controller: %s\n", msg);
    }
}

static void watch_log(void *ud, int level, const char *msg)
{
    (void)ud;
    if (getenv("HR_STRESS_VERBOSE") && level <= HR_LV_WARN)
        fprintf(stderr, "watch: %s\n", msg);
}

static int fails;

#define EXPECT(cond, ...)                                        \
    do {                                                         \
        if (!(cond)) {                                           \
            fails++;                                             \
            fprintf(stderr, "stress_churn: FAIL: " __VA_ARGS__); \
            fputc('\n', stderr);                                 \
        }                                                        \
    } while (0)

/* The cache holds exactly what the transport last delivered. */
static void check_cache(hr_cache *c, const world *w)
{
    const kind_world *pods = &w->k[HR_CK_POD], *nodes = &w->k[HR_CK_NODE];
    if (pods->unseen || nodes->unseen) {
        printf("stress_churn: stopped inside a relist: cache contents not compared\n");
        return;
    }
    hr_cpod_scratch *s = malloc(sizeof *s);
    EXPECT(s != NULL, "out of memory");
    if (s == NULL)
        return;
    size_t want = 0, wrong = 0;
    hr_cache_lock(c);
    for (int i = 0; i < pods->n_slots; i++) {
        char ns[32], name[32], node[32];
        snprintf(ns, sizeof ns, "team-%u", pod_ns(i));
        snprintf(name, sizeof name, "p-%d", i);
        hr_cpod_view v;
        bool have = hr_cache_pod_get(c, ns, name, &v, s);
        if (!pods->exists[i]) {
            wrong += have;
            continue;
        }
        want++;
        snprintf(node, sizeof node, "node-%u", pod_node(pods->variant[i]));
        if (!have || v.node == NULL || strcmp(v.node, node) != 0 || v.pod.n_ctr < 1 ||
            v.pod.ctr[0].cpu_req != (int64_t)pod_cpu(pods->variant[i]) || v.rv != pods->obj_rv[i])
            wrong++;
    }
    hr_cache_stats st;
    hr_cache_get_stats(c, &st);
    size_t node_wrong = 0;
    for (int i = 0; i < N_NODE_NAMES; i++) {
        char node[32];
        snprintf(node, sizeof node, "node-%d", i);
        hr_cnode_view nv;
        bool present = hr_cache_node_get(c, node, &nv) && nv.present;
        if (present != (i < nodes->n_slots && nodes->exists[i]))
            node_wrong++;
    }
    hr_cache_unlock(c);
    free(s);
    EXPECT(wrong == 0, "%zu pods differ between the cache and the world", wrong);
    EXPECT(st.pods == want, "the cache holds %zu pods, the world %zu", st.pods, want);
    EXPECT(node_wrong == 0, "%zu nodes differ between the cache and the world", node_wrong);
}

int main(void)
{
    setvbuf(stdout, NULL, _IOLBF, 0);
    const char *e = getenv("HR_STRESS_SECONDS");
    long seconds = e != NULL && atol(e) > 0 ? atol(e) : 10;
    e = getenv("HR_STRESS_SEED");
    uint64_t seed =
        e != NULL && strtoull(e, NULL, 0) != 0 ? strtoull(e, NULL, 0) : (uint64_t)time(NULL);
    printf("stress_churn: %ld s, seed %" PRIu64 " (HR_STRESS_SECONDS, HR_STRESS_SEED)\n", seconds,
           seed);

    hr_err err;
    hr_err_clear(&err);
    static world w;
    world_init(&w, seed);
    apiserver api;
    if (apiserver_start(&api, &err) != HR_OK) {
        fprintf(stderr, "stress_churn: %s\n", err.msg);
        return 1;
    }
    char kc[64];
    snprintf(kc, sizeof kc, "/tmp/hr-stress-%d.kubeconfig", (int)getpid());
    FILE *f = fopen(kc, "w");
    if (f == NULL) {
        fprintf(stderr, "stress_churn: %s: %s\n", kc, strerror(errno));
        return 1;
    }
    fprintf(f,
            "current-context: x\ncontexts:\n- name: x\n  context: {cluster: c, user: u}\n"
            "clusters:\n- name: c\n  cluster: {server: 'http://127.0.0.1:%u'}\n"
            "users:\n- name: u\n  user: {token: stress}\n",
            (unsigned)api.port);
    if (fclose(f) != 0) {
        fprintf(stderr, "stress_churn: %s: cannot write\n", kc);
        return 1;
    }
    hr_kclient_opts ko = {.kubeconfig = kc, .qps = 5000, .burst = 500, .timeout_ms = 5000};
    hr_kclient *k = NULL;
    hr_status st = hr_kclient_new(&ko, &k, &err);
    unlink(kc);
    if (st != HR_OK) {
        fprintf(stderr, "stress_churn: client: %s\n", err.msg);
        return 1;
    }

    static run r;
    atomic_init(&r.gains, 0);
    atomic_init(&r.errors_logged, 0);
    if (hr_cache_new(&r.cache, &err) != HR_OK) {
        fprintf(stderr, "stress_churn: %s\n", err.msg);
        return 1;
    }
    hr_cache_set_observer(r.cache, on_change, &r);
    hr_wtransport tr = {&w, fake_get, fake_stream, fast_backoff, false, NULL, NULL, NULL};
    hr_informers_opts io = {.timeout_min_s = 60,
                            .timeout_max_s = 120,
                            .backoff_base_ms = 5,
                            .backoff_max_ms = 20,
                            .log = watch_log,
                            /* The fake serves list pages, not streaming
                             * lists (test_watch.c has those). */
                            .paged_lists = true,
                            .transport = &tr};
    if (hr_informers_start(r.cache, NULL, &io, &r.inf, &err) != HR_OK) {
        fprintf(stderr, "stress_churn: informers: %s\n", err.msg);
        return 1;
    }
    hr_leader_opts lo = {.client = k,
                         .ns = "headroom-system",
                         .name = "kube-headroom",
                         .identity = "stress",
                         .retry_ms = 50,
                         .on_change = on_leadership,
                         .ud = &r,
                         .log = ctl_log,
                         .log_ud = &r};
    hr_leader *leader = NULL;
    if (hr_leader_start(&lo, &leader, &err) != HR_OK) {
        fprintf(stderr, "stress_churn: leader election: %s\n", err.msg);
        return 1;
    }
    hr_config eff;
    hr_cache_lock(r.cache);
    hr_config_effective(hr_cache_config(r.cache, NULL), HR_DRY_RUN_UNSET, &eff);
    hr_cache_unlock(r.cache);
    hr_controller_opts co = {.client = k,
                             .cache = r.cache,
                             .own_ns = "headroom-system",
                             .config = &eff,
                             .leading = hr_leader_leading,
                             .leading_until = hr_leader_until_ms,
                             .leading_ud = leader,
                             .instance = "stress",
                             .workers = 4,
                             .status_interval_ms = 100,
                             .synced = synced,
                             .synced_ud = &r,
                             .log = ctl_log,
                             .log_ud = &r};
    hr_controller *ctl = NULL;
    if (hr_controller_start(&co, &ctl, &err) != HR_OK) {
        fprintf(stderr, "stress_churn: controller: %s\n", err.msg);
        return 1;
    }
    hr_cache_lock(r.cache);
    r.ctl = ctl;
    hr_config_effective(hr_cache_config(r.cache, NULL), HR_DRY_RUN_UNSET, &eff);
    hr_controller_config_changed(ctl, &eff);
    hr_cache_unlock(r.cache);

    /* Main plays /metrics meanwhile. */
    int64_t t0 = hr_mono_ms(), end = t0 + seconds * 1000;
    uint64_t scrapes = 0;
    hr_buf b;
    hr_buf_init(&b, 0);
    while (hr_mono_ms() < end) {
        sleep_ms(20);
        hr_buf_reset(&b);
        hr_ctlmetrics_render(hr_controller_metrics(ctl), &b);
        hr_controller_render_gauges(ctl, &b);
        for (int kk = 0; kk < HR_CK_COUNT_; kk++) {
            hr_watch_stats ws;
            hr_informers_stats(r.inf, (hr_ckind)kk, &ws);
        }
        scrapes++;
        (void)hr_leader_leading(leader); /* the headroom_leader gauge */
    }
    hr_buf_free(&b);

    /* Shutdown in `headroom run`'s order: the election thread (nothing
     * calls into the controller after it), the controller, the Lease, the
     * watches. */
    hr_leader_halt(leader);
    hr_cache_lock(r.cache);
    r.ctl = NULL;
    hr_cache_unlock(r.cache);
    hr_ctlmetrics *m = hr_controller_metrics(ctl);
    uint64_t reconciles = atomic_load(&m->reconciles), writes = 0;
    for (int i = 0; i < HR_WK_COUNT_; i++)
        writes += atomic_load(&m->writes[i]);
    hr_controller_stop(ctl);
    hr_leader_stop(leader);
    hr_watch_stats ws[HR_CK_COUNT_];
    for (int kk = 0; kk < HR_CK_COUNT_; kk++)
        hr_informers_stats(r.inf, (hr_ckind)kk, &ws[kk]);
    hr_informers_free(r.inf);
    apiserver_stop(&api);
    hr_kclient_free(k);

    printf("stress_churn: %.1f s: %" PRIu64 " pod events, %" PRIu64 " node events, %" PRIu64
           " pod relists (%" PRIu64 " after 410), %" PRIu64 " reconciles, %" PRIu64
           " writes (%" PRIu64 " reached the API server, %" PRIu64 " node reads), %" PRIu64
           " scrapes, %" PRIu64 " leadership gains\n",
           (double)(hr_mono_ms() - t0) / 1000.0, w.k[HR_CK_POD].events, w.k[HR_CK_NODE].events,
           w.k[HR_CK_POD].lists, w.k[HR_CK_POD].gones, reconciles, writes,
           (uint64_t)atomic_load(&api.writes), (uint64_t)atomic_load(&api.gets), scrapes,
           (uint64_t)atomic_load(&r.gains));

    uint64_t malformed = 0;
    for (int kk = 0; kk < HR_CK_COUNT_; kk++)
        malformed += ws[kk].malformed;
    EXPECT(malformed == 0, "%" PRIu64 " generated objects refused as malformed", malformed);
    for (int kk = 0; kk < HR_CK_COUNT_; kk++)
        EXPECT(ws[kk].synced, "the %s watch never listed", hr_ckind_str((hr_ckind)kk));
    EXPECT(w.k[HR_CK_POD].events >= 1000, "too little pod churn (%" PRIu64 " events)",
           w.k[HR_CK_POD].events);
    EXPECT(w.k[HR_CK_POD].gones >= 1 || seconds < 5, "no 410 Gone was played");
    EXPECT(reconciles >= 50, "too few reconciles (%" PRIu64 ")", reconciles);
    EXPECT(atomic_load(&api.writes) > 0, "no write reached the API server");
    EXPECT(atomic_load(&r.gains) >= 2 || seconds < 3,
           "leadership was not regained (%" PRIu64 " gains)", (uint64_t)atomic_load(&r.gains));
    EXPECT(atomic_load(&r.errors_logged) == 0,
           "%" PRIu64 " controller errors logged (HR_STRESS_VERBOSE=1 shows them)",
           (uint64_t)atomic_load(&r.errors_logged));
    check_cache(r.cache, &w);
    hr_cache_free(r.cache);
    if (fails)
        return 1;
    printf("stress_churn: ok\n");
    return 0;
}
