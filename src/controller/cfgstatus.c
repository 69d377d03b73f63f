/*
 * cfgstatus.c — builds and writes the HeadroomConfig status (cfgstatus.h).
 */
#include "cfgstatus.h"

#include <inttypes.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "core/names.h"
#include "kube/write/patch.h"
#include "util/clock.h"
#include "util/jsonstr.h"
#include "util/tname.h"
#include "util/waker.h"

/* A namespace list in a message stops here ("… and 12 more"): a condition
 * message is for people, and the API caps it at 32 KiB. */
#define QUOTA_NS_SHOWN 20

/* A body the watch has not echoed back yet is not written again sooner. */
#define ECHO_WAIT_MS 30000

/* Until every node has been reconciled once the managed counts are still
 * climbing from zero; publishing them would write a wrong number and then
 * the right one. The first wave spreads over two debounce periods plus one
 * (controller.c), so this waits at least that long. */
#define WARMUP_MIN_MS 10000

typedef struct cond {
    const char *type, *status, *reason;
    hr_buf msg;
} cond;

static const hr_kcondition *observed_cond(const hr_kcfg_status *o, const char *type)
{
    for (size_t i = 0; o && i < o->n_cond; i++)
        if (strcmp(o->cond[i].type, type) == 0)
            return &o->cond[i];
    return NULL;
}

static void ready_cond(const hr_cfgstatus_in *in, cond *c)
{
    c->type = HR_COND_READY;
    if (in->invalid) {
        c->status = "False";
        c->reason = "InvalidSpec";
        if (in->gen_in_force >= 0)
            hr_buf_printf(&c->msg, "%s; generation %" PRId64 " stays in force", in->invalid,
                          in->gen_in_force);
        else
            hr_buf_printf(&c->msg, "%s; defaults stay in force, in dry run", in->invalid);
        return;
    }
    c->status = "True";
    if (!in->dry_run) {
        c->reason = "Applied";
        hr_buf_puts(&c->msg, "CPU limits of managed containers are written through pods/resize");
    } else {
        c->reason = "DryRun";
        hr_buf_printf(&c->msg,
                      "dry run (%s): limits are computed and annotated on pods, not written",
                      in->dry_run_flag ? "--dry-run flag" : "spec.dryRun, true by default");
    }
}

static void quota_cond(const hr_cfgstatus_in *in, cond *c)
{
    c->type = HR_COND_QUOTA;
    if (in->n_quota_ns == 0) {
        c->status = "False";
        c->reason = "NoQuotaOnLimitsCPU";
        hr_buf_puts(&c->msg, "no managed namespace has a ResourceQuota on limits.cpu");
        return;
    }
    c->status = "True";
    c->reason = "QuotaOnLimitsCPU";
    hr_buf_puts(&c->msg, "raises fit the quota (the quota cap, spec.quotaReservePercent kept for "
                         "new pods) in managed namespaces with a ResourceQuota on limits.cpu: ");
    for (size_t i = 0; i < in->n_quota_ns && i < QUOTA_NS_SHOWN; i++)
        hr_buf_printf(&c->msg, "%s%s", i ? ", " : "", in->quota_ns[i]);
    if (in->n_quota_ns > QUOTA_NS_SHOWN)
        hr_buf_printf(&c->msg, " and %zu more", in->n_quota_ns - QUOTA_NS_SHOWN);
}

static bool cond_same(const cond *c, const hr_kcondition *o, int64_t generation)
{
    return o && strcmp(o->status, c->status) == 0 && strcmp(o->reason, c->reason) == 0 &&
           strcmp(o->message, hr_buf_str(&c->msg)) == 0 && o->observed_generation == generation &&
           o->last_transition[0];
}

static void put_cond(hr_buf *b, const cond *c, const hr_cfgstatus_in *in)
{
    const hr_kcondition *o = observed_cond(in->observed, c->type);
    char when[32];
    /* The transition time moves only when the status flips. */
    if (o && strcmp(o->status, c->status) == 0 && o->last_transition[0]) {
        snprintf(when, sizeof when, "%s", o->last_transition);
    } else {
        time_t t = (time_t)in->now_unix;
        struct tm tm;
        gmtime_r(&t, &tm);
        strftime(when, sizeof when, "%Y-%m-%dT%H:%M:%SZ", &tm);
    }
    hr_buf_puts(b, "{\"type\":");
    hr_buf_json_str(b, c->type);
    hr_buf_puts(b, ",\"status\":");
    hr_buf_json_str(b, c->status);
    hr_buf_printf(b, ",\"observedGeneration\":%" PRId64 ",\"lastTransitionTime\":", in->generation);
    hr_buf_json_str(b, when);
    hr_buf_puts(b, ",\"reason\":");
    hr_buf_json_str(b, c->reason);
    hr_buf_puts(b, ",\"message\":");
    hr_buf_json_str(b, hr_buf_str(&c->msg));
    hr_buf_putc(b, '}');
}

hr_cfgstatus_diff hr_cfgstatus_build(const hr_cfgstatus_in *in, hr_buf *b)
{
    cond cs[2];
    hr_buf_init(&cs[0].msg, 0);
    hr_buf_init(&cs[1].msg, 0);
    ready_cond(in, &cs[0]);
    quota_cond(in, &cs[1]);

    hr_buf_puts(b, "{\"apiVersion\":\"" HR_GROUP "/" HR_VERSION "\",\"kind\":\"HeadroomConfig\","
                   "\"metadata\":{\"name\":\"" HR_CONFIG_NAME "\"},\"status\":{");
    hr_buf_printf(b,
                  "\"observedGeneration\":%" PRId64 ",\"managedPods\":%" PRId64
                  ",\"managedNodes\":%" PRId64 ",\"conditions\":[",
                  in->generation, in->managed_pods, in->managed_nodes);
    for (size_t i = 0; i < 2; i++) {
        if (i)
            hr_buf_putc(b, ',');
        put_cond(b, &cs[i], in);
    }
    hr_buf_putc(b, ']');
    /* Design §2.11: each pool and how many Nodes it applies to; absent
     * without pools (an apply that leaves it out removes it). */
    if (in->n_pools > 0) {
        hr_buf_puts(b, ",\"nodePools\":[");
        for (uint32_t i = 0; i < in->n_pools; i++) {
            hr_buf_puts(b, i ? ",{\"name\":" : "{\"name\":");
            hr_buf_json_str(b, in->pools[i].name);
            hr_buf_printf(b, ",\"nodes\":%" PRId64 "}", in->pool_nodes[i]);
        }
        hr_buf_putc(b, ']');
    }
    hr_buf_puts(b, "}}");

    const hr_kcfg_status *o = in->observed;
    hr_cfgstatus_diff d = HR_CFGST_SAME;
    if (!o || o->observed_generation != in->generation)
        d = HR_CFGST_CHANGED;
    for (size_t i = 0; i < 2 && d != HR_CFGST_CHANGED; i++)
        if (!cond_same(&cs[i], observed_cond(o, cs[i].type), in->generation))
            d = HR_CFGST_CHANGED;
    /* Another set of pools is a change; another count is a count. */
    bool pools_named = o && o->n_pools == in->n_pools;
    bool pool_counts = pools_named;
    for (uint32_t i = 0; pools_named && i < in->n_pools; i++) {
        pools_named = strcmp(o->pools[i].name, in->pools[i].name) == 0;
        pool_counts = pool_counts && o->pools[i].nodes == in->pool_nodes[i];
    }
    if (d == HR_CFGST_SAME && !pools_named)
        d = HR_CFGST_CHANGED;
    if (d == HR_CFGST_SAME && (o->managed_pods != in->managed_pods ||
                               o->managed_nodes != in->managed_nodes || !pool_counts))
        d = HR_CFGST_COUNTS;
    hr_buf_free(&cs[0].msg);
    hr_buf_free(&cs[1].msg);
    return d;
}

/* ------------------------------------------------------------ the writer */

struct hr_cfgstatus {
    hr_cfgstatus_opts o;
    pthread_t thread;
    atomic_bool stop;
    char *last_key;        /* what was last written, built with now = 0 */
    int64_t last_write_ms; /* 0: never */
    int64_t retry_at_ms;
    int fails;
    int64_t synced_at_ms; /* 0: caches not synced yet */
    int64_t warm_at_ms;   /* when the warm-up ends (build_locked) */
    /* The thread sleeps on this (waker.h): kicked by hr_cfgstatus_kick,
     * stopped by hr_cfgstatus_stop. Everything above is the thread's own. */
    hr_waker wake;
};

#define st_log(s, level, ...) \
    hr_ctl_logf((s)->o.log, (s)->o.log_ud, "configstatus", (level), __VA_ARGS__)

/* Under the cache lock: the body, how it differs from the object and, when
 * it does, its key (the same body with now = 0, for "already written").
 * false: no config object, or no memory to build it (nothing is written
 * then: a status missing its quota list would be a wrong one). */
static bool build_locked(hr_cfgstatus *s, hr_buf *body, hr_buf *key, hr_cfgstatus_diff *diff,
                         bool *ready_false)
{
    hr_cache *c = s->o.cache;
    int64_t gen_in_force;
    const hr_kcfg_status *obs;
    if (!hr_cache_config_object(c, &gen_in_force, &obs))
        return false;
    const char *invalid = NULL;
    const hr_config *cfg = hr_cache_config(c, &invalid);
    hr_config eff;
    hr_config_effective(cfg, s->o.dry_run, &eff);

    const char **ns;
    size_t n;
    hr_err err;
    if (hr_cache_managed_quota_ns(c, s->o.own_ns, &ns, &n, &err) != HR_OK) {
        st_log(s, HR_LV_ERROR, "msg=\"HeadroomConfig status not built\" error=\"%s\"", err.msg);
        return false;
    }
    /* While warming up, the counts the object already holds stand. */
    int64_t debounce = eff.debounce_ms > 0 ? eff.debounce_ms : 0;
    int64_t warmup = 3 * debounce > WARMUP_MIN_MS ? 3 * debounce : WARMUP_MIN_MS;
    s->warm_at_ms = s->synced_at_ms + warmup;
    bool warm = hr_mono_ms() >= s->warm_at_ms;
    int64_t pods = atomic_load(&s->o.metrics->pods_managed);
    int64_t nodes = atomic_load(&s->o.metrics->nodes_managed);
    if (!warm && obs->managed_pods >= 0 && obs->managed_nodes >= 0) {
        pods = obs->managed_pods;
        nodes = obs->managed_nodes;
    }
    int64_t pool_nodes[HR_POOLS_MAX];
    hr_cache_pool_counts(c, pool_nodes);
    hr_cfgstatus_in in = {
        .pools = cfg->pools,
        .pool_nodes = pool_nodes,
        .n_pools = cfg->n_pools,
        .generation = obs->generation >= 0 ? obs->generation : 0,
        .gen_in_force = gen_in_force,
        .invalid = invalid,
        .dry_run = eff.dry_run,
        .dry_run_flag = hr_dry_run_from_flag(s->o.dry_run),
        .managed_pods = pods,
        .managed_nodes = nodes,
        .quota_ns = ns,
        .n_quota_ns = n,
        .observed = obs,
        .now_unix = (int64_t)time(NULL),
    };
    *diff = hr_cfgstatus_build(&in, body);
    if (*diff != HR_CFGST_SAME) {
        in.now_unix = 0;
        hr_cfgstatus_build(&in, key);
    }
    *ready_false = invalid != NULL;
    free(ns);
    return true;
}

/* Compare, and write when the object differs. Returns when it must look
 * again even if nothing changes (monotonic ms; INT64_MAX: only on a
 * change): a retry, a count-only change held back, a write the watch has
 * not echoed yet, the end of the warm-up. */
static int64_t tick(hr_cfgstatus *s)
{
    int64_t now = hr_mono_ms();
    if (now < s->retry_at_ms)
        return s->retry_at_ms;
    int64_t again = INT64_MAX;
    hr_buf body, key;
    hr_buf_init(&body, 0);
    hr_buf_init(&key, 0);
    hr_cfgstatus_diff d = HR_CFGST_SAME;
    bool ready_false = false;
    hr_cache_lock(s->o.cache);
    bool have = build_locked(s, &body, &key, &d, &ready_false);
    hr_cache_unlock(s->o.cache);
    bool write = have && d != HR_CFGST_SAME && !hr_buf_failed(&body) && !hr_buf_failed(&key);
    if (have && now < s->warm_at_ms)
        again = s->warm_at_ms; /* the counts it holds back until then */
    if (write && d == HR_CFGST_COUNTS && s->last_write_ms &&
        now - s->last_write_ms < HR_CFGSTATUS_COUNTS_EVERY_S * 1000) {
        write = false;
        int64_t at = s->last_write_ms + HR_CFGSTATUS_COUNTS_EVERY_S * 1000;
        again = at < again ? at : again;
    }
    if (write && s->last_key && strcmp(s->last_key, hr_buf_str(&key)) == 0 &&
        now - s->last_write_ms < ECHO_WAIT_MS) {
        write = false; /* written; the watch has not brought it back yet */
        int64_t at = s->last_write_ms + ECHO_WAIT_MS;
        again = at < again ? at : again;
    }
    if (write) {
        hr_err err;
        hr_kresult res;
        hr_status st = hr_kclient_apply(
            s->o.client,
            "/apis/" HR_GROUP "/" HR_VERSION "/headroomconfigs/" HR_CONFIG_NAME "/status",
            HR_FIELD_MANAGER, true, hr_buf_str(&body), body.len, NULL, &res, &err);
        if (st == HR_OK) {
            atomic_fetch_add(&s->o.metrics->writes[HR_WK_CONFIG_STATUS], 1);
            free(s->last_key);
            s->last_key = strdup(hr_buf_str(&key));
            s->last_write_ms = now;
            s->fails = 0;
            st_log(s, d == HR_CFGST_COUNTS ? HR_LV_DEBUG : HR_LV_WARN,
                   "msg=\"HeadroomConfig status written\" ready=%s change=%s",
                   ready_false ? "False" : "True", d == HR_CFGST_COUNTS ? "counts" : "conditions");
        } else if (st == HR_E_CANCELED || st == HR_E_EXPIRED) {
            /* Nothing was sent: shutting down, or leadership went during
             * the limiter wait (the next leader compares afresh). */
            st_log(s, HR_LV_DEBUG, "msg=\"HeadroomConfig status not sent\" why=%s",
                   st == HR_E_CANCELED ? "shutdown" : "not-leading");
        } else {
            /* 404: the object went away between the cache and the write. */
            long backoff =
                hr_kclient_backoff_ms(s->o.client, s->fails++, 1000, 60000, res.retry_after_ms);
            s->retry_at_ms = now + backoff;
            again = s->retry_at_ms;
            st_log(
                s, res.status == 404 ? HR_LV_INFO : HR_LV_ERROR,
                "msg=\"HeadroomConfig status not written\" status=%ld retryInMs=%ld error=\"%s\"",
                res.status, backoff, err.msg);
        }
    }
    hr_buf_free(&body);
    hr_buf_free(&key);
    return again;
}

/* Looks when kicked (the cache changed, a reconcile moved the managed
 * counts, a new term) or when tick asked to, never sooner than interval
 * after the last look: a burst of changes is one comparison per interval,
 * and a quiet daemon never looks (design §5: idle means idle). */
static void *cfgstatus_main(void *ud)
{
    hr_cfgstatus *s = ud;
    hr_thread_name("hr-cfgstatus");
    int interval = s->o.interval_ms > 0 ? s->o.interval_ms : 2000;
    int64_t last_look = INT64_MIN / 2;
    int64_t due = hr_mono_ms() + interval; /* the first look */
    int64_t sync_gap = interval;           /* before the sync: doubling, at most 30 s */
    for (;;) {
        /* Kicks within interval of the last look wait for its end. */
        int64_t earliest = last_look + interval > 0 ? (last_look + interval) * 1000000 : 0;
        if (!hr_waker_wait_after(&s->wake, earliest,
                                 due == INT64_MAX ? HR_WAKER_NEVER : due * 1000000))
            break;
        int64_t now = hr_mono_ms();
        if (now < last_look + interval) {
            due = last_look + interval; /* kicked early: look then */
            continue;
        }
        last_look = now;
        due = INT64_MAX;
        if (s->o.synced && !s->o.synced(s->o.synced_ud)) {
            /* Start-up: the sync rings the cache's doorbell, which kicks this thread
             * (hr_cfgstatus_kick); the look again is a safety net that backs off, so a watch
             * that never syncs (no CRD) costs a wakeup a 30 s. */
            due = now + sync_gap;
            sync_gap = sync_gap * 2 < 30000 ? sync_gap * 2 : 30000;
            continue;
        }
        if (s->synced_at_ms == 0)
            s->synced_at_ms = now;
        if (s->o.leading && !s->o.leading(s->o.leading_ud)) {
            /* A new term compares afresh against the object (and kicks). */
            free(s->last_key);
            s->last_key = NULL;
            continue;
        }
        due = tick(s);
    }
    return NULL;
}

void hr_cfgstatus_kick(hr_cfgstatus *s)
{
    if (s != NULL)
        hr_waker_kick(&s->wake);
}

hr_status hr_cfgstatus_start(const hr_cfgstatus_opts *o, hr_cfgstatus **out, hr_err *err)
{
    *out = NULL;
    hr_cfgstatus *s = calloc(1, sizeof *s);
    if (s == NULL)
        return hr_err_set(err, HR_E_NOMEM, "config status: out of memory");
    s->o = *o;
    atomic_init(&s->stop, false);
    if (hr_waker_init(&s->wake) != 0) {
        free(s);
        return hr_err_set(err, HR_E_NOMEM, "config status: cannot create a lock");
    }
    if (pthread_create(&s->thread, NULL, cfgstatus_main, s) != 0) {
        hr_waker_destroy(&s->wake);
        free(s);
        return hr_err_set(err, HR_E_NOMEM, "config status: cannot start its thread");
    }
    *out = s;
    return HR_OK;
}

void hr_cfgstatus_stop(hr_cfgstatus *s)
{
    if (s == NULL)
        return;
    atomic_store(&s->stop, true);
    hr_waker_stop(&s->wake);
    pthread_join(s->thread, NULL);
    hr_waker_destroy(&s->wake);
    free(s->last_key);
    free(s);
}
