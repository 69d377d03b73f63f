/*
 * cmd_run.c — `headroom run`, the daemon (design §0, §8–§11).
 *
 * What runs: the node-scoped controller (controller/: cache change feed,
 * debounced node queue, reconcile, rate-limited writes to pods/resize), the
 * HTTPS admission webhook (/mutate-pods) with its serving certificate
 * re-read from --webhook-cert-dir when it changes, /metrics over HTTPS with
 * the same certificate (or --metrics-cert-dir's) for tokens RBAC allows (TokenReview +
 * SubjectAccessReview, cached; --metrics-secure=false: plain HTTP with the
 * probes beside it), and plain /healthz, /readyz on --probe-addr. One set of informers (cache/)
 * watches every kind; the controller and the webhook read the same cache,
 * and every HeadroomConfig change is published to the config holder the
 * webhook reads per request. The controller writes only after every watch
 * has listed once. With --leader-elect only the replica holding the Lease
 * writes (controller/leader.h); every replica serves webhook and metrics.
 *
 * Shutdown: SIGTERM or SIGINT stops the listeners (in-flight requests are
 * answered or dropped; the API server's failurePolicy Ignore covers a
 * dropped review; a scrape waiting for its token review gets 503 at once),
 * then the controller (a write waiting in the limiter is abandoned) and the
 * Lease is released, then the informers (each notices within 0.5 s); a
 * token review still in flight, told to give up when the listeners
 * stopped, is joined last (within about a second). A watchdog exits the process if all that takes longer
 * than 10 s. The signals are blocked in every thread and taken by the main
 * thread with sigtimedwait: no handler runs, and every flag another thread
 * reads is a C11 atomic (each part owns its own stop flag).
 *
 * Precedence (design §11): flags, then the HeadroomConfig, then defaults;
 * --dry-run=true|false overrides the config's dryRun (hr_config_effective).
 *
 * A HeadroomConfig change is pushed when the cache applies it: the cache's
 * observer runs apply_config under the cache lock, which hands the
 * configuration in force to the config holder (the webhook's) and to the
 * controller once. The main loop only logs it: the observer rings it with
 * SIGUSR1 (blocked like the others, so it waits for sigwaitinfo), and
 * nothing wakes the main thread otherwise — no periodic tick (design §5:
 * idle means idle).
 */
#include <errno.h>
#include <malloc.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "cache/cache.h"
#include "cache/informers.h"
#include "cmd/cmd_run.h"
#include "cmd/commands.h"
#include "cmd/live.h"
#include "cmd/run_flags.h"
#include "cmd/selfcert.h"
#include "controller/controller.h"
#include "controller/leader.h"
#include "core/config.h"
#include "core/group.h"
#include "core/names.h"
#include "kube/transport/client.h"
#include "kube/write/review.h"
#include "server/apimetrics.h"
#include "server/authz.h"
#include "server/certs.h"
#include "server/gzip.h"
#include "server/health.h"
#include "server/http.h"
#include "server/metrics.h"
#include "server/procmetrics.h"
#include "util/clock.h"
#include "util/log.h"
#include "util/logfmt.h"
#include "util/tname.h"
#include "webhook/config_holder.h"
#include "webhook/endpoint.h"

/* The controller needs every kind; the webhook only namespaces, LimitRanges
 * and the config, a subset. VerticalPodAutoscalers are watched whether
 * their CRD is installed or not: while it is not, none exist
 * (hr_ckind_optional). */
#define WATCHED_KINDS ((1u << HR_CK_COUNT_) - 1)
#define SHUTDOWN_BUDGET_S 10

/* Everything the daemon's parts share; the controller gets it too. */
typedef struct run_ctx {
    hr_run_opts o;
    hr_logger log;
    hr_kclient *k;
    hr_cache *cache;
    hr_informers *inf;
    hr_cfg_holder *cfg;
    hr_metrics metrics;
    hr_apimetrics api;  /* the client's requests, filled from its first */
    hr_buildinfo build; /* headroom_build_info */
    hr_readiness ready;
    hr_certs *certs;
    hr_certs *metrics_certs; /* --metrics-cert-dir's, when not cert_dir: /metrics' own */
    hr_selfcert *selfcert;   /* --webhook-cert-self-managed: feeds certs from its Secret */
    hr_wh_endpoint wh;
    hr_authz *authz; /* the secured /metrics' reviews (NULL when plain) */
    hr_listener *metrics_l, *webhook_l, *probe_l;
    /* Set and cleared under the cache lock: the observer, which runs with
     * that lock held, pushes config changes to it. */
    hr_controller *ctl;
    /* NULL without --leader-elect. Set once the metrics listener, which
     * reads it (render_run_metrics), is running: an atomic pointer. */
    _Atomic(hr_leader *) leader;
    /* Set by the observer (a watch thread), taken by the main loop. */
    atomic_bool cfg_dirty;
    /* What was last published, to log changes only. */
    hr_config last;
    bool have_last;
} run_ctx;

/* ------------------------------------------------------------------ log */

static void log_sink(void *ud, int level, const char *msg)
{
    const hr_run_opts *o = ud;
    if (level > HR_LV_INFO + o->verbosity)
        return;
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    struct tm tm;
    gmtime_r(&ts.tv_sec, &tm);
    char when[32];
    strftime(when, sizeof when, "%Y-%m-%dT%H:%M:%S", &tm);
    const char *lv = hr_log_level_name(level);
    if (o->log_json) {
        char stamp[48];
        snprintf(stamp, sizeof stamp, "%s.%03ldZ", when, ts.tv_nsec / 1000000L);
        hr_buf b;
        hr_buf_init(&b, 64 * 1024);
        hr_log_json(&b, stamp, lv, msg);
        if (!hr_buf_failed(&b)) {
            ssize_t w = write(STDERR_FILENO, b.data, b.len);
            (void)w;
        }
        hr_buf_free(&b);
        return;
    }
    char line[1400];
    int n = snprintf(line, sizeof line, "time=%s.%03ldZ level=%s %s\n", when, ts.tv_nsec / 1000000L,
                     lv, msg);
    if (n < 0)
        return;
    if ((size_t)n >= sizeof line) {
        n = (int)sizeof line - 1;
        line[n - 1] = '\n';
    }
    /* One write per line: lines from many threads never interleave. */
    ssize_t w = write(STDERR_FILENO, line, (size_t)n);
    (void)w;
}

/* ------------------------------------------------------------- config */

/* The one "config changed" path. Called with the cache lock held (the
 * cache owns the strings the holder deep-copies, and the push reaches the
 * controller before any reconcile can see the new config). The controller
 * passes what changed on, once: the per-node rate to its executor, the
 * client rate to x->k (controller.h). *eff receives the configuration in
 * force. */
static hr_status apply_config_locked(run_ctx *x, hr_config *eff, hr_err *err)
{
    hr_config_effective(hr_cache_config(x->cache, NULL), x->o.dry_run, eff);
    hr_status st = hr_cfg_holder_set(x->cfg, eff, err);
    if (x->ctl != NULL)
        hr_controller_config_changed(x->ctl, eff);
    return st;
}

static void on_cache_change(void *ud, hr_ckind kind, hr_cchange what, const char *ns,
                            const char *name)
{
    (void)what;
    (void)ns;
    (void)name;
    run_ctx *x = ud;
    /* Called with the cache lock held: apply now, log from main. */
    if (kind != HR_CK_CONFIG)
        return;
    hr_config eff;
    hr_err err;
    hr_err_clear(&err);
    if (apply_config_locked(x, &eff, &err) != HR_OK)
        hr_logf(&x->log, HR_LV_ERROR, "msg=\"config not applied\" error=\"%s\"", err.msg);
    atomic_store(&x->cfg_dirty, true);
    /* The main thread's doorbell: process-directed, so it stays pending
     * until the main thread (the only one waiting for it) takes it. */
    (void)kill(getpid(), SIGUSR1); /* cannot fail for our own pid */
}

/* Log the configuration in force when it changed; with reapply, apply it
 * again first (once, at start: the configuration the daemon starts with). */
static void publish_config(run_ctx *x, bool reapply)
{
    hr_err err;
    hr_err_clear(&err);
    const char *invalid = NULL;
    hr_config c;
    hr_status st = HR_OK;
    hr_cache_lock(x->cache);
    if (reapply)
        st = apply_config_locked(x, &c, &err);
    else
        hr_config_effective(hr_cache_config(x->cache, NULL), x->o.dry_run, &c);
    hr_cache_config(x->cache, &invalid);
    /* The strings are the cache's: only scalars leave the lock. */
    bool refused = invalid != NULL;
    char reason[HR_ERR_MSG_MAX];
    snprintf(reason, sizeof reason, "%s", refused ? invalid : "");
    hr_cache_unlock(x->cache);
    if (st) {
        hr_logf(&x->log, HR_LV_ERROR, "msg=\"config not applied\" error=\"%s\"", err.msg);
        return;
    }
    if (refused)
        hr_logf(&x->log, HR_LV_WARN,
                "msg=\"HeadroomConfig refused, keeping the last good one\" "
                "reason=\"%s\"",
                reason);
    if (x->have_last && x->last.present == c.present && x->last.dry_run == c.dry_run &&
        x->last.webhook_enabled == c.webhook_enabled &&
        x->last.initial_multiplier_milli == c.initial_multiplier_milli &&
        x->last.max_multiplier_milli == c.max_multiplier_milli)
        return;
    x->last = c;
    x->have_last = true;
    hr_logf(&x->log, HR_LV_INFO,
            "msg=\"config applied\" source=%s dry_run=%s webhook_enabled=%s "
            "initial_multiplier=%lld.%03lld max_multiplier=%lld.%03lld",
            c.present ? "HeadroomConfig" : "defaults", c.dry_run ? "true" : "false",
            c.webhook_enabled ? "true" : "false", (long long)(c.initial_multiplier_milli / 1000),
            (long long)(c.initial_multiplier_milli % 1000),
            (long long)(c.max_multiplier_milli / 1000), (long long)(c.max_multiplier_milli % 1000));
}

/* Labels copied out of the cache into the review's arena (the cache's
 * memory may move once unlocked). false when out of memory. */
static bool copy_labels(const hr_labels *from, hr_arena *a, hr_labels *to)
{
    const char **kv = hr_arena_calloc(a, 2 * (size_t)from->n + 1, sizeof *kv);
    if (kv == NULL)
        return false;
    for (uint32_t i = 0; i < 2 * from->n; i++)
        if ((kv[i] = hr_arena_strdup(a, from->kv[i])) == NULL)
            return false;
    *to = (hr_labels){kv, from->n};
    return true;
}

/* Does the API server resize pod-level resources (design §2.13)? Asked
 * once, at start (hr_live_server_pod_resize); a failure reads as no: pods
 * with pod-level resources stay unmanaged (fail closed). */
static bool server_pod_resize(run_ctx *x)
{
    bool on;
    char version[32];
    hr_err err;
    hr_live_server_pod_resize(x->k, &on, version, &err);
    if (err.msg[0] != '\0')
        hr_logf(&x->log, HR_LV_WARN,
                "msg=\"server version unknown: pod-level resources stay unmanaged\" err=\"%s\"",
                err.msg);
    else
        hr_logf(&x->log, HR_LV_INFO, "msg=\"server version\" version=%s pod_level_resize=%s",
                version, on ? "true" : "false");
    return on;
}

/* What the webhook asks about a namespace: its labels and LimitRange
 * bounds. Until the first list has completed the cache does not know, and
 * the registration's namespaceSelector is trusted. */
static bool ns_lookup(void *ud, const char *ns, hr_arena *a, hr_labels *labels,
                      hr_limit_bounds *bounds)
{
    run_ctx *x = ud;
    if (!hr_informers_synced(x->inf))
        return false;
    bool ok = false;
    hr_cache_lock(x->cache);
    hr_cns_view v;
    if (hr_cache_ns_get(x->cache, ns, &v) && copy_labels(&v.labels, a, labels)) {
        *bounds = hr_cache_ns_bounds(x->cache, ns);
        ok = true;
    }
    hr_cache_unlock(x->cache);
    return ok;
}

/* What the webhook asks about a namespace's limits.cpu quota: the room it
 * leaves a pod being born (design §8). Not synced yet: the cache cannot
 * tell, and the pod is born as without a quota (the API server still
 * refuses one that does not fit, as it would without us). */
static int64_t quota_room(void *ud, const char *ns)
{
    run_ctx *x = ud;
    if (!hr_informers_synced(x->inf))
        return HR_NONE;
    hr_ns_quota q;
    hr_cache_lock(x->cache);
    hr_cache_ns_quota(x->cache, ns, &q);
    hr_cache_unlock(x->cache);
    return hr_quota_birth_room(&q);
}

/* What the webhook asks about the node a pod is created on (spec.nodeName
 * set at creation): its labels, for the node pool that applies there
 * (design §2.11). A node known only from its pods has none to give. */
static bool node_lookup(void *ud, const char *node, hr_arena *a, hr_labels *labels)
{
    run_ctx *x = ud;
    if (!hr_informers_synced(x->inf))
        return false;
    bool ok = false;
    hr_cache_lock(x->cache);
    hr_cnode_view v;
    if (hr_cache_node_get(x->cache, node, &v) && v.present && !v.undecodable)
        ok = copy_labels(&v.labels, a, labels);
    hr_cache_unlock(x->cache);
    return ok;
}

/* What the webhook asks about a group (design §2.10): its value in force,
 * the smallest current limit / request among its cached members that have
 * a limit (hr_group_held_fold), over every member. */
static bool group_lookup(void *ud, const char *key, int64_t *num, int64_t *den)
{
    run_ctx *x = ud;
    if (!hr_informers_synced(x->inf))
        return false;
    hr_cpod_scratch *scratch = malloc(sizeof *scratch);
    if (scratch == NULL)
        return false;
    bool found = false;
    uint32_t few[64], *ids = few;
    hr_cache_lock(x->cache);
    size_t n = hr_cache_group_pods(x->cache, key, few, sizeof few / sizeof few[0]);
    if (n > sizeof few / sizeof few[0]) {
        ids = malloc(n * sizeof *ids);
        if (ids == NULL)
            n = 0; /* cannot tell: the member is born at initialMultiplier */
        else
            n = hr_cache_group_pods(x->cache, key, ids, n);
    }
    for (size_t i = 0; i < n; i++) {
        hr_cpod_view v;
        if (hr_cache_pod_at(x->cache, ids[i], &v, scratch))
            hr_group_held_fold(hr_pod_current_limit(&v.pod), hr_pod_managed_cpu(&v.pod), &found,
                               num, den);
    }
    hr_cache_unlock(x->cache);
    if (ids != few)
        free(ids);
    free(scratch);
    return found;
}

/* What the webhook asks about a pod being created (design §4,
 * foreign-writer): the writer name of a cached VerticalPodAutoscaler of
 * its namespace that writes its CPU limit, copied into a. Until the first
 * list has completed the cache does not know, and the pod is born as
 * without one (the controller leaves it once it sees the VPA). */
static const char *vpa_writer(void *ud, const char *ns, const hr_vpa_owner *owner,
                              const hr_pod *pod, const char *const *ctr_names, hr_arena *a)
{
    run_ctx *x = ud;
    if (!hr_informers_synced(x->inf))
        return NULL;
    hr_cache_lock(x->cache);
    const char *w = hr_cache_vpa_writer_of(x->cache, ns, owner, pod, ctr_names);
    char *copy = w != NULL ? hr_arena_strdup(a, w) : NULL;
    hr_cache_unlock(x->cache);
    return copy;
}

static bool informers_ready(void *ud)
{
    return hr_informers_synced(((run_ctx *)ud)->inf);
}

/* ------------------------------------------------------------ routes */

static void route_healthz(void *ud, const hr_http_req *req, hr_http_resp *r)
{
    (void)ud;
    (void)req;
    hr_buf_puts(&r->body, "ok\n");
}

static void route_readyz(void *ud, const hr_http_req *req, hr_http_resp *r)
{
    (void)req;
    run_ctx *x = ud;
    r->status = hr_readiness_eval(&x->ready, &r->body) ? 200 : 503;
}

/* The secured /metrics' review: TokenReview, then SubjectAccessReview on
 * the non-resource URL, by until_ms (hr_authz runs it on its review
 * threads and caches the verdict). */
static hr_authz_verdict review_token(void *ud, const char *token, const char *verb,
                                     const char *path, int64_t until_ms, const atomic_bool *cancel,
                                     char *user, size_t cap)
{
    run_ctx *x = ud;
    hr_kreview_verdict v;
    hr_err err;
    hr_err_clear(&err);
    if (hr_kreview_nonresource(x->k, token, verb, path, until_ms, cancel, &v, user, cap, &err) !=
        HR_OK) {
        hr_logf(&x->log, HR_LV_WARN, "msg=\"metrics access review failed\" error=\"%s\"", err.msg);
        return HR_AUTHZ_ERROR;
    }
    return v == HR_KREVIEW_ALLOWED  ? HR_AUTHZ_ALLOWED
           : v == HR_KREVIEW_DENIED ? HR_AUTHZ_DENIED
                                    : HR_AUTHZ_UNAUTHENTICATED;
}

static void route_metrics(void *ud, const hr_http_req *req, hr_http_resp *r)
{
    run_ctx *x = ud;
    r->content_type = "text/plain; version=0.0.4; charset=utf-8";
    hr_metrics_render(&x->metrics, &r->body);
    hr_gzip_answer(req, r); /* when the scraper asks for it (design §9.3) */
}

/* Watch counters per resource, a refused config, and leadership (design §9). */
static void render_run_metrics(void *ud, hr_buf *out)
{
    run_ctx *x = ud;
    static const char *const fams[2][2] = {
        {"headroom_watch_events_total", "Watch events received, per resource."},
        {"headroom_relists_total",
         "Lists after the first (410 Gone, broken watches), per resource."},
    };
    for (int f = 0; f < 2; f++) {
        hr_buf_printf(out, "# HELP %s %s\n# TYPE %s counter\n", fams[f][0], fams[f][1], fams[f][0]);
        for (int k = 0; k < HR_CK_COUNT_; k++) {
            hr_watch_stats st = {0};
            if (x->inf != NULL)
                hr_informers_stats(x->inf, (hr_ckind)k, &st);
            hr_buf_printf(out, "%s{resource=\"%s\"} %llu\n", fams[f][0], hr_ckind_str((hr_ckind)k),
                          (unsigned long long)(f == 0 ? st.events : st.relists));
        }
    }
    hr_buf_puts(out, "# HELP headroom_decode_errors_total Objects that could not be decoded, "
                     "each counted once until it decodes or is deleted (design §15).\n"
                     "# TYPE headroom_decode_errors_total counter\n");
    for (int k = 0; k < HR_CK_COUNT_; k++)
        hr_buf_printf(
            out, "headroom_decode_errors_total{resource=\"%s\"} %llu\n", hr_ckind_str((hr_ckind)k),
            (unsigned long long)(x->inf != NULL ? hr_informers_decode_errors(x->inf, (hr_ckind)k)
                                                : 0));
    /* Every replica applies the config itself (design §11), so each says
     * whether it refused it. */
    const char *invalid = NULL;
    if (x->cache != NULL) {
        hr_cache_lock(x->cache);
        hr_cache_config(x->cache, &invalid);
        hr_cache_unlock(x->cache);
    }
    hr_buf_printf(out,
                  "# HELP headroom_config_invalid 1 when the HeadroomConfig cluster is refused "
                  "(Ready=False, InvalidSpec) and the last good config stays in force.\n"
                  "# TYPE headroom_config_invalid gauge\nheadroom_config_invalid %d\n",
                  invalid != NULL ? 1 : 0);
    hr_leader *l = atomic_load(&x->leader);
    /* 0 without --leader-elect: no election, no lease to hold. */
    hr_buf_printf(out,
                  "# HELP headroom_leader 1 when this replica holds the lease and writes.\n"
                  "# TYPE headroom_leader gauge\nheadroom_leader %d\n",
                  l != NULL && hr_leader_leading(l) ? 1 : 0);
}

/* ----------------------------------------------------- controller seam */

/* A new leader looks at every node: the old one may have left work.
 * Runs on the election thread: x->ctl is read under the cache lock, where
 * it is set and cleared, and stays valid after the unlock because
 * controller_stop joins this thread before it frees the controller. */
static void on_leadership(void *ud, bool leading)
{
    run_ctx *x = ud;
    if (!leading)
        return;
    hr_cache_lock(x->cache);
    hr_controller *ctl = x->ctl;
    hr_cache_unlock(x->cache);
    if (ctl != NULL)
        hr_controller_enqueue_all(ctl); /* takes the cache lock itself */
}

/* The reconcile loop (design §5). It reads the same cache the webhook does
 * and writes only once every watch has listed — and, with --leader-elect,
 * only while this replica holds the Lease. */
static hr_status controller_start(run_ctx *x, hr_err *err)
{
    if (x->o.leader_elect) {
        if (x->o.ns == NULL || x->o.ns[0] == '\0')
            return hr_err_set(err, HR_E_INPUT,
                              "--leader-elect needs --namespace (or POD_NAMESPACE)");
        /* Unique per replica: the Pod's name ($POD_NAME, the chart's
         * downward API) where there is one — hostNetwork replicas on one
         * node share its hostname and, each PID 1 in its container, the
         * PID — else the hostname; then the PID and the start time, so a
         * restarted container is a new candidate. */
        char id[300];
        char hn[200] = "headroom";
        const char *pod = getenv("POD_NAME");
        if (pod != NULL && pod[0] != '\0')
            snprintf(hn, sizeof hn, "%s", pod);
        else if (gethostname(hn, sizeof hn) != 0)
            snprintf(hn, sizeof hn, "headroom");
        hn[sizeof hn - 1] = '\0';
        snprintf(id, sizeof id, "%s_%ld_%ld", hn, (long)getpid(), (long)time(NULL));
        hr_leader_opts lo = {.client = x->k,
                             .ns = x->o.ns,
                             .name = HR_LEASE_NAME,
                             .identity = id,
                             .on_change = on_leadership,
                             .ud = x,
                             .log = log_sink,
                             .log_ud = &x->o};
        hr_leader *l = NULL;
        hr_status lst = hr_leader_start(&lo, &l, err);
        if (lst)
            return lst;
        atomic_store(&x->leader, l);
    }
    char host[256] = "headroom";
    if (gethostname(host, sizeof host) != 0)
        snprintf(host, sizeof host, "headroom");
    host[sizeof host - 1] = '\0';
    /* The config in force now; a change between this read and x->ctl
     * being set is pushed just below (the observer cannot reach a
     * controller it does not know yet). */
    hr_config eff;
    hr_cache_lock(x->cache);
    hr_config_effective(hr_cache_config(x->cache, NULL), x->o.dry_run, &eff);
    hr_cache_unlock(x->cache);
    hr_leader *leader = atomic_load(&x->leader);
    hr_controller_opts co = {.client = x->k,
                             .cache = x->cache,
                             .own_ns = x->o.ns,
                             .dry_run = x->o.dry_run,
                             .config = &eff,
                             .leading = leader ? hr_leader_leading : NULL,
                             .leading_until = leader ? hr_leader_until_ms : NULL,
                             .leading_ud = leader,
                             .instance = host,
                             .workers = x->o.node_workers,
                             .write_concurrency = x->o.write_concurrency,
                             .protobuf = x->o.protobuf,
                             .synced = informers_ready,
                             .synced_ud = x,
                             .log = log_sink,
                             .log_ud = &x->o};
    hr_controller *ctl = NULL;
    hr_status st = hr_controller_start(&co, &ctl, err);
    if (st)
        return st;
    hr_cache_lock(x->cache);
    x->ctl = ctl;
    hr_config_effective(hr_cache_config(x->cache, NULL), x->o.dry_run, &eff);
    hr_controller_config_changed(x->ctl, &eff);
    hr_cache_unlock(x->cache);
    if ((st = hr_metrics_add(&x->metrics, hr_ctlmetrics_render, hr_controller_metrics(x->ctl),
                             err)) ||
        (st = hr_metrics_add(&x->metrics, hr_controller_render_gauges, x->ctl, err)))
        return st;
    hr_logf(&x->log, HR_LV_INFO, "msg=\"controller started\" namespace=%s", x->o.ns ? x->o.ns : "");
    return HR_OK;
}

static void controller_stop(run_ctx *x)
{
    /* The election thread first: once it is joined nothing calls back into
     * the controller (on_leadership), which is freed below. The Lease is
     * released only at the end, once no worker can write any more, so a
     * successor never overlaps with us. */
    hr_leader *l = atomic_load(&x->leader);
    hr_leader_halt(l);
    hr_controller *ctl = x->ctl;
    if (x->cache != NULL)
        hr_cache_lock(x->cache);
    x->ctl = NULL; /* the observer pushes no more */
    if (x->cache != NULL)
        hr_cache_unlock(x->cache);
    hr_controller_stop(ctl);
    hr_leader_stop(l);
    atomic_store(&x->leader, NULL);
}

/* ------------------------------------------------------------ lifecycle */

static void *watchdog(void *arg)
{
    (void)arg;
    hr_thread_name("hr-stop-dog");
    sleep(SHUTDOWN_BUDGET_S);
    static const char m[] = "level=error msg=\"shutdown took longer than 10s, exiting\"\n";
    ssize_t w = write(STDERR_FILENO, m, sizeof m - 1);
    (void)w;
    _exit(1);
}

/* Listeners first: their handlers read the informers, the cache and the
 * config holder, which go after. */
static void teardown(run_ctx *x)
{
    hr_listener_stop(x->webhook_l);
    x->webhook_l = NULL;
    hr_listener_stop(x->metrics_l);
    x->metrics_l = NULL;
    hr_listener_stop(x->probe_l);
    x->probe_l = NULL;
    /* The metrics listener has failed every request waiting for a review
     * (hr_authz_shutdown); a review still in flight is joined only after
     * the Lease is released (below), and before the client it uses goes. */
    controller_stop(x);
    hr_informers_free(x->inf);
    x->inf = NULL;
    hr_selfcert_free(x->selfcert);
    x->selfcert = NULL;
    hr_certs_free(x->certs);
    x->certs = NULL;
    hr_certs_free(x->metrics_certs);
    x->metrics_certs = NULL;
    hr_cache_free(x->cache);
    x->cache = NULL;
    hr_cfg_holder_free(x->cfg);
    x->cfg = NULL;
    hr_authz_free(x->authz); /* joins a review in flight: it was told to give up */
    x->authz = NULL;
    hr_kclient_free(x->k);
    x->k = NULL;
}

/* The probe listener's address, "host:port", written to a temporary file
 * beside --probe-addr-file and renamed over it, so `headroom probe
 * --addr-file` never reads half of it. A replica restarted in the same pod
 * (the file is in its emptyDir) replaces its predecessor's address. */
static hr_status write_probe_addr(run_ctx *x, hr_err *err)
{
    char host[256];
    uint16_t port;
    hr_status st = hr_parse_addr(x->o.probe_addr, host, sizeof host, &port, err);
    if (st)
        return st;
    const char *h = host[0] ? host : "127.0.0.1";
    bool v6 = strchr(h, ':') != NULL;
    char tmp[4096];
    int n = snprintf(tmp, sizeof tmp, "%s.tmp", x->o.probe_addr_file);
    if (n < 0 || (size_t)n >= sizeof tmp)
        return hr_err_set(err, HR_E_INPUT, "--probe-addr-file: path too long");
    FILE *f = fopen(tmp, "w");
    if (f == NULL)
        return hr_err_set(err, HR_E_IO, "--probe-addr-file %s: %s", tmp, strerror(errno));
    int w = fprintf(f, v6 ? "[%s]:%u\n" : "%s:%u\n", h, (unsigned)hr_listener_port(x->probe_l));
    int c = fclose(f);
    if (w < 0 || c != 0 || rename(tmp, x->o.probe_addr_file) != 0) {
        int e = errno;
        (void)unlink(tmp);
        return hr_err_set(err, HR_E_IO, "--probe-addr-file %s: %s", x->o.probe_addr_file,
                          strerror(e));
    }
    hr_logf(&x->log, HR_LV_INFO, "msg=\"probe address written\" file=%s port=%u",
            x->o.probe_addr_file, hr_listener_port(x->probe_l));
    return HR_OK;
}

/* /metrics: HTTPS with the serving certificate, every scrape's token
 * reviewed (design §9.3); or, with --metrics-secure=false, plain HTTP with
 * the probes beside it, as before. */
static hr_status start_metrics(run_ctx *x, hr_err *err)
{
    hr_status st;
    bool secure = x->o.metrics_secure;
    if (secure) {
        hr_authz_opts ao = {.review = review_token, .ud = x, .log = x->log};
        if ((st = hr_authz_new(&ao, &x->authz, err)) ||
            (st = hr_metrics_add(&x->metrics, hr_authz_render, x->authz, err)))
            return st;
    }
    hr_route mroutes[] = {
        {"GET", "/metrics", route_metrics, x, 0, secure},
        {"GET", "/healthz", route_healthz, x, 0, false},
        {"GET", "/readyz", route_readyz, x, 0, false},
    };
    hr_certs *mcerts = x->metrics_certs != NULL ? x->metrics_certs : x->certs;
    hr_listener_opts mo = {.name = "metrics",
                           .addr = x->o.metrics_addr,
                           .tls = secure ? mcerts : NULL,
                           .tls_fallback = secure, /* self-signed until a pair loads */
                           .authz = x->authz,
                           .routes = mroutes,
                           .n_routes = secure ? 1 : 3,
                           .threads = 2,
                           .reuse_port = x->o.reuse_port,
                           .log = x->log};
    if ((st = hr_listener_start(&mo, &x->metrics_l, err)))
        return st;
    hr_logf(&x->log, HR_LV_INFO, "msg=\"listening\" listener=metrics addr=%s port=%u secure=%s",
            x->o.metrics_addr, hr_listener_port(x->metrics_l), secure ? "true" : "false");
    return HR_OK;
}

/* --webhook-cert-self-managed: the pair lives in a Secret the selfcert
 * thread keeps (design §8); the holder is fed from it, not from files. */
static hr_status start_selfcert(run_ctx *x, hr_err *err)
{
    char what[512];
    snprintf(what, sizeof what, "secret %s/%s", x->o.ns ? x->o.ns : "",
             x->o.cert_secret ? x->o.cert_secret : "");
    hr_status st = hr_certs_new_mem(what, &x->log, &x->certs, err);
    if (st)
        return st;
    hr_selfcert_opts so = {.k = x->k,
                           .certs = x->certs,
                           .ns = x->o.ns,
                           .secret = x->o.cert_secret,
                           .mwc = x->o.webhook_config,
                           .dns = x->o.cert_dns,
                           .ips = x->o.cert_ips,
                           .validity_s = x->o.cert_validity_s,
                           .renew_s = x->o.cert_renew_s,
                           .ca_validity_s = x->o.ca_validity_s,
                           .ca_renew_s = x->o.ca_renew_s,
                           .log = x->log};
    return hr_selfcert_start(&so, &x->selfcert, err);
}

static hr_status start_all(run_ctx *x, hr_err *err)
{
    hr_status st;
    hr_config dflt;
    hr_config_effective(NULL, x->o.dry_run, &dflt); /* nothing read yet */
    if ((st = hr_cfg_holder_new(&dflt, &x->cfg, err)))
        return st;

    hr_apimetrics_init(&x->api);
    hr_kclient_opts ko = x->o.conn.o; /* kubectl's connection flags */
    ko.on_request = hr_apimetrics_observe;
    ko.on_request_ud = &x->api;
    if ((st = hr_kclient_new(&ko, &x->k, err)))
        return st;
    hr_logf(&x->log, HR_LV_INFO, "msg=\"kubernetes client ready\" server=%s",
            hr_kclient_server(x->k));
    if ((st = hr_cache_new(&x->cache, err)))
        return st;
    hr_cache_set_observer(x->cache, on_cache_change, x);
    bool pod_resize = server_pod_resize(x);
    hr_cache_set_server_pod_resize(x->cache, pod_resize);

    hr_metrics_init(&x->metrics);
    hr_readiness_init(&x->ready);
    hr_wh_endpoint_init(&x->wh, x->cfg, x->o.ns, &x->log);
    x->wh.ns_lookup = ns_lookup;
    x->wh.ns_ud = x;
    x->wh.group_lookup = group_lookup;
    x->wh.group_ud = x;
    x->wh.node_lookup = node_lookup;
    x->wh.quota_room = quota_room;
    x->wh.quota_ud = x;
    x->wh.vpa_writer = vpa_writer;
    x->wh.vpa_ud = x;
    x->wh.node_ud = x;
    x->wh.pod_resize = pod_resize;
    hr_cmd_buildinfo(&x->build);
    if ((st = hr_metrics_add(&x->metrics, hr_buildinfo_render, &x->build, err)) ||
        (st = hr_metrics_add(&x->metrics, hr_procmetrics_render, NULL, err)) ||
        (st = hr_metrics_add(&x->metrics, render_run_metrics, x, err)) ||
        (st = hr_metrics_add(&x->metrics, hr_apimetrics_render, &x->api, err)) ||
        (st = hr_metrics_add(&x->metrics, hr_wh_endpoint_render, &x->wh, err)) ||
        (st = hr_readiness_add(&x->ready, "caches-synced", informers_ready, x, err)))
        return st;

    hr_informers_opts io = {.kinds = WATCHED_KINDS,
                            .paged_lists = !x->o.streaming_lists,
                            .protobuf = x->o.protobuf,
                            .log = log_sink,
                            .log_ud = &x->o};
    if ((st = hr_informers_start(x->cache, x->k, &io, &x->inf, err)))
        return st;

    bool webhook = x->o.webhook_addr && x->o.webhook_addr[0];
    bool metrics = x->o.metrics_addr && x->o.metrics_addr[0];
    /* The secured /metrics takes the webhook's pair, or with
     * --metrics-cert-dir naming another pair its own. */
    bool metrics_shared = metrics && x->o.metrics_secure;
    const char *mdir = x->o.metrics_cert_dir;
    if (metrics_shared && mdir != NULL &&
        (strcmp(mdir, x->o.cert_dir) != 0 || strcmp(x->o.metrics_cert_name, x->o.cert_name) != 0 ||
         strcmp(x->o.metrics_cert_key, x->o.cert_key) != 0)) {
        if ((st = hr_certs_new_files(mdir, x->o.metrics_cert_name, x->o.metrics_cert_key, &x->log,
                                     &x->metrics_certs, err)) ||
            (st = hr_certs_start(x->metrics_certs, 1000, err)) ||
            (st = hr_certs_fallback_selfsigned(x->metrics_certs, getenv("HEADROOM_METRICS_SERVICE"),
                                               x->o.ns, getenv("POD_IP"), err)))
            return st;
        metrics_shared = false;
    }
    /* The serving certificate is the webhook's and the secured metrics'.
     * Readiness waits for it only with the webhook on: the webhook Service
     * must not route to a replica that cannot answer, but a controller
     * without a certificate (no cert-manager, webhook off) still writes,
     * and a /readyz that stayed 503 would hold rollouts and drains for
     * ever. Its secured /metrics serves a self-signed pair until then. */
    if ((webhook || metrics_shared) && x->o.cert_self_managed) {
        if ((st = start_selfcert(x, err)) ||
            (webhook &&
             (st = hr_readiness_add(&x->ready, "webhook-cert", hr_certs_ready, x->certs, err))))
            return st;
        if (metrics_shared &&
            (st = hr_certs_fallback_selfsigned(x->certs, getenv("HEADROOM_METRICS_SERVICE"),
                                               x->o.ns, getenv("POD_IP"), err)))
            return st;
    } else if (webhook || metrics_shared) {
        if ((st = hr_certs_new_files(x->o.cert_dir, x->o.cert_name, x->o.cert_key, &x->log,
                                     &x->certs, err)) ||
            (st = hr_certs_start(x->certs, 1000, err)) ||
            (webhook &&
             (st = hr_readiness_add(&x->ready, "webhook-cert", hr_certs_ready, x->certs, err))))
            return st;
        if (metrics_shared &&
            (st = hr_certs_fallback_selfsigned(x->certs, getenv("HEADROOM_METRICS_SERVICE"),
                                               x->o.ns, getenv("POD_IP"), err)))
            return st;
    }

    if (metrics && (st = start_metrics(x, err)))
        return st;
    if (x->o.probe_addr && x->o.probe_addr[0]) {
        hr_route proutes[] = {
            {"GET", "/healthz", route_healthz, x, 0, false},
            {"GET", "/readyz", route_readyz, x, 0, false},
        };
        hr_listener_opts po = {.name = "probes",
                               .addr = x->o.probe_addr,
                               .routes = proutes,
                               .n_routes = 2,
                               .threads = 1,
                               .log = x->log};
        if ((st = hr_listener_start(&po, &x->probe_l, err)))
            return st;
        hr_logf(&x->log, HR_LV_INFO, "msg=\"listening\" listener=probes addr=%s port=%u",
                x->o.probe_addr, hr_listener_port(x->probe_l));
        if (x->o.probe_addr_file && (st = write_probe_addr(x, err)))
            return st;
    }

    if (webhook) {
        hr_route wroutes[] = {
            {"POST", HR_WEBHOOK_PATH, hr_wh_endpoint_handle, &x->wh, HR_WEBHOOK_MAX_BODY, false},
            {"GET", "/healthz", route_healthz, x, 0, false},
            {"GET", "/readyz", route_readyz, x, 0, false},
        };
        hr_listener_opts wo = {.name = "webhook",
                               .addr = x->o.webhook_addr,
                               .tls = x->certs,
                               .routes = wroutes,
                               .n_routes = 3,
                               .threads = 4,
                               .idle_timeout_s = 60,
                               .reuse_port = x->o.reuse_port,
                               .log = x->log};
        if ((st = hr_listener_start(&wo, &x->webhook_l, err)))
            return st;
        hr_logf(&x->log, HR_LV_INFO,
                "msg=\"listening\" listener=webhook addr=%s port=%u path=%s "
                "cert_dir=%s",
                x->o.webhook_addr, hr_listener_port(x->webhook_l), HR_WEBHOOK_PATH,
                x->o.cert_self_managed ? "(self-managed: the Secret)" : x->o.cert_dir);
    }
    /* A webhook-only replica (and the webhook's end-to-end test, which
     * must not write to other tests' pods) runs without the controller. */
    if (!x->o.controller) {
        hr_logf(&x->log, HR_LV_INFO,
                "msg=\"controller off (--controller=false): "
                "serving webhook, metrics and health only\"");
        return HR_OK;
    }
    return controller_start(x, err);
}

int hr_cmd_run(const char *prog, int argc, char **argv)
{
    run_ctx *x = calloc(1, sizeof *x);
    if (x == NULL) {
        fprintf(stderr, "%s run: out of memory\n", prog);
        return HR_EXIT_INPUT;
    }
    int rc = hr_run_parse_flags(prog, argc, argv, &x->o);
    if (rc != 0) {
        free(x);
        return rc < 0 ? HR_EXIT_OK : rc;
    }
    x->log = (hr_logger){log_sink, &x->o};
    atomic_init(&x->cfg_dirty, true);

    /* glibc gives each thread that allocates an arena of its own (up to 8 a
     * core) and keeps what they free: under churn the pool's and the notes'
     * threads grew the resident set by 2.4 MB in the 5-minute soak, 0.7 MB
     * with two arenas (bench_soak). Before any thread exists; the
     * environment's MALLOC_ARENA_MAX, when set, is left to rule. */
    if (getenv("MALLOC_ARENA_MAX") == NULL && mallopt(M_ARENA_MAX, 2) != 1)
        hr_logf(&x->log, HR_LV_WARN, "msg=\"mallopt(M_ARENA_MAX) refused: arenas unbounded\"");

    /* Signals are taken synchronously by this thread: block them before
     * any thread exists so every thread inherits the mask. */
    sigset_t sigs;
    sigemptyset(&sigs);
    sigaddset(&sigs, SIGTERM);
    sigaddset(&sigs, SIGINT);
    sigaddset(&sigs, SIGUSR1);                     /* the config observer's doorbell */
    (void)pthread_sigmask(SIG_BLOCK, &sigs, NULL); /* fails only for a bad `how` */
    (void)signal(SIGPIPE, SIG_IGN);                /* fails only for a bad signal number */

    hr_err err;
    hr_err_clear(&err);
    hr_status st = start_all(x, &err);
    if (st) {
        fprintf(stderr, "%s run: %s\n", prog, err.msg);
        teardown(x);
        free(x);
        return HR_EXIT_INPUT;
    }
    hr_logf(&x->log, HR_LV_INFO, "msg=\"started\" dry_run_flag=%s namespace=%s",
            x->o.dry_run == HR_DRY_RUN_UNSET ? "unset"
            : x->o.dry_run == HR_DRY_RUN_ON  ? "true"
                                             : "false",
            x->o.ns ? x->o.ns : "");

    if (x->o.http2_ignored)
        hr_logf(&x->log, HR_LV_INFO,
                "msg=\"--enable-http2 ignored: the listeners speak HTTP/1.1 only\"");
    atomic_store(&x->cfg_dirty, false);
    publish_config(x, true);
    int sig = 0;
    while (sig == 0) {
        int s = sigwaitinfo(&sigs, NULL);
        if (s == SIGTERM || s == SIGINT) {
            sig = s;
            break;
        }
        /* SIGUSR1 (or EINTR): the observer applied a change; log it. */
        if (atomic_exchange(&x->cfg_dirty, false))
            publish_config(x, false);
    }
    hr_logf(&x->log, HR_LV_INFO, "msg=\"shutting down\" signal=%s",
            sig == SIGTERM ? "SIGTERM" : "SIGINT");
    pthread_t wd;
    if (pthread_create(&wd, NULL, watchdog, NULL) == 0)
        pthread_detach(wd);
    teardown(x);
    hr_logf(&x->log, HR_LV_INFO, "msg=\"stopped\"");
    free(x);
    return HR_EXIT_OK;
}
