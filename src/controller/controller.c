/*
 * controller.c — feeder, workers, and the gauges they leave behind.
 */
#include "controller.h"

#include <inttypes.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "controller/backoff.h"
#include "controller/cfgstatus.h"
#include "controller/ctllog.h"
#include "controller/executor.h"
#include "controller/gauges.h"
#include "controller/groups.h"
#include "controller/nodequeue.h"
#include "controller/nodesnap.h"
#include "controller/reconcile.h"
#include "core/grace.h"
#include "util/clock.h"
#include "util/prng.h"
#include "util/tname.h"
#include "util/waker.h"

/* Entries of each executor map looked at per sweep (executor.h). */
#define SWEEP_BUDGET 256
/* Sweeps run 100 ms apart, and only after a removal: a drain that reported
 * nodes while objects left the cache (hr_cache_removals moved) schedules
 * enough of them for one whole pass over the largest map (its size /
 * SWEEP_BUDGET, plus one for the pass in progress), so what belongs to pods
 * and nodes that left is freed within a pass of the last removal — 2,560
 * entries a second from each map. A daemon whose pods only change (a
 * converging wave: resizes, notes) or a quiet one sweeps nothing: an entry
 * goes stale only when its pod or node leaves. An entry a write adds after
 * its pod left and after that pass waits for the next removal's pass (at
 * most the writes in flight). Each sweep walks the executor's maps under
 * the cache lock, which is why they are spaced. */
#define SWEEP_GAP_MS 100
/* Two drains are at least this far apart: a burst of watch events makes
 * one drain per gap, not one per event (the debounce absorbs the rest). */
#define FEED_GAP_MS 10
/* Until every watch has listed once, the feeder looks again after these gaps,
 * doubling from the first to the last. Only a safety net: a watch that syncs
 * rings the cache's doorbell (hr_watch_opts.on_synced, cache/informers.c), and
 * one that never does (no HeadroomConfig CRD installed: design §5, idle means
 * idle) costs a wakeup every SYNC_POLL_MAX_MS, not 20 a second. */
#define SYNC_POLL_MS 50
#define SYNC_POLL_MAX_MS 30000
struct hr_controller {
    hr_controller_opts o;
    hr_ctlmetrics metrics;
    hr_nodequeue *q;
    hr_backoff *backoff;
    hr_nodememo *memo; /* other nodes' plans for groups (design §2.10, nodememo.h) */
    hr_executor *exec;
    hr_notes *notes; /* annotations and events after the resizes (notes.h) */
    pthread_t feeder, workers[HR_CTL_NODE_WORKERS_MAX];
    /* The feeder sleeps on this: kicked by the cache (hr_cache_set_kick:
     * a change, a node joined the feed) and by workers after a reconcile
     * that wrote (a back-off park may have moved the next expiry);
     * stopped by hr_controller_stop. */
    hr_waker feed_wake;
    bool feed_wake_ok;
    bool kick_set; /* cache_kick is the cache's doorbell */
    int n_workers;
    bool feeder_started;
    atomic_bool stop;
    hr_prng rng; /* jitter; only the feeder thread draws from it */
    hr_gauges *gauges;
    hr_cfgstatus *cfgstatus;
    /* The settings pushed by hr_controller_config_changed (controller.h). */
    pthread_mutex_t cfg_mu;
    int64_t debounce_ms; /* spec.debouncePeriod */
    int per_node_pps;    /* as last handed to the executor */
    int client_qps;      /* as last handed to the client's limiter */
    int client_burst;
};

#define ctl_log(c, level, ...) \
    hr_ctl_logf((c)->o.log, (c)->o.log_ud, "controller", (level), __VA_ARGS__)

/* Within the second half of debouncePeriod (design §5 "Debounce"). */
static int64_t jittered(hr_controller *c, int64_t period_ms)
{
    return hr_prng_jitter(&c->rng, period_ms);
}

int64_t hr_controller_debounce_ms(hr_controller *c)
{
    pthread_mutex_lock(&c->cfg_mu);
    int64_t d = c->debounce_ms;
    pthread_mutex_unlock(&c->cfg_mu);
    return d;
}

int hr_controller_node_rate(hr_controller *c)
{
    return hr_executor_node_rate(c->exec);
}

unsigned hr_controller_config_changed(hr_controller *c, const hr_config *eff)
{
    unsigned pushed = 0;
    pthread_mutex_lock(&c->cfg_mu);
    if (eff->debounce_ms != c->debounce_ms) {
        c->debounce_ms = eff->debounce_ms;
        pushed |= HR_CTL_PUSHED_DEBOUNCE;
    }
    if (eff->per_node_pps != c->per_node_pps) {
        c->per_node_pps = eff->per_node_pps;
        hr_executor_set_node_rate(c->exec, c->per_node_pps);
        pushed |= HR_CTL_PUSHED_NODE_RATE;
    }
    if (eff->client_qps != c->client_qps || eff->client_burst != c->client_burst) {
        c->client_qps = eff->client_qps;
        c->client_burst = eff->client_burst;
        if (c->o.client != NULL)
            hr_kclient_set_rate(c->o.client, c->client_qps, c->client_burst);
        pushed |= HR_CTL_PUSHED_CLIENT_RATE;
    }
    pthread_mutex_unlock(&c->cfg_mu);
    return pushed;
}

typedef struct feed_ctx {
    hr_controller *c;
    int64_t now, period;
} feed_ctx;

/* hr_cache_drain's callback: runs with the cache lock held (cache.h), so
 * it takes only the node queue's lock (order: cache lock, then the queue's;
 * controller.h) and the feeder's own generator. */
static void feed_one(void *ud, const char *node)
{
    feed_ctx *f = ud;
    if (hr_nodequeue_add(f->c->q, node, f->now, jittered(f->c, f->period)) != HR_OK)
        ctl_log(f->c, 0, "msg=\"node not queued: out of memory\" node=%s", node);
}

/* The cache's doorbell (hr_cache_set_kick): runs with the cache lock held,
 * takes only the wakers' leaf locks. */
static void cache_kick(void *ud)
{
    hr_controller *c = ud;
    hr_waker_kick(&c->feed_wake);
    hr_cfgstatus_kick(c->cfgstatus);
}

/* A pod's back-off ended (hr_backoff_prune): its node is looked at again,
 * debounced as any change. */
static void backoff_expired(void *ud, const char *node)
{
    feed_one(ud, node);
}

static int64_t earlier(int64_t a, int64_t b)
{
    return a < b ? a : b;
}

/* Park every cached pod the kubelet calls Infeasible that is not parked
 * yet: the back-off rebuilt from the pods' status (design §7). Called with
 * the cache locked, once the caches have synced and at each gain of
 * leadership — before the first plan of a process or a term, which would
 * otherwise see the pod unparked and write it again (its target may have
 * moved while nobody led). Out of memory: nothing parked, so the pod is
 * parked by its node's next reconcile instead (executor.c). */
static void park_infeasible(hr_controller *c, int64_t now)
{
    hr_cpod_scratch *scratch = malloc(sizeof *scratch);
    if (scratch == NULL)
        return;
    uint32_t it = 0;
    hr_cpod_view v;
    size_t parked = 0;
    while (hr_cache_pod_next(c->o.cache, &it, &v, scratch)) {
        if (v.resize != HR_RS_INFEASIBLE || hr_backoff_active(c->backoff, v.ns, v.name, now, NULL))
            continue;
        if (hr_backoff_park(c->backoff, v.ns, v.name, v.node, now, HR_BACKOFF_PERIOD_MS,
                            "infeasible") == HR_OK)
            parked++;
    }
    free(scratch);
    if (parked > 0)
        ctl_log(c, 2, "msg=\"back-off rebuilt from pod status\" infeasible=%zu", parked);
}

/* Sleeps until a change, a sweep that is due or a back-off expiry; never
 * on a timer of its own once the caches have synced (design §5: idle
 * means idle). */
static void *feeder_main(void *ud)
{
    hr_controller *c = ud;
    hr_thread_name("hr-feeder");
    bool synced = false;
    int64_t sync_gap = SYNC_POLL_MS;
    int sweeps_left = 0;
    uint64_t swept_removals = 0; /* hr_cache_removals when the last pass was scheduled */
    int64_t next_sweep = 0, last_drain = INT64_MIN / 2;
    for (;;) {
        int64_t now = hr_mono_ms();
        if (now - last_drain < FEED_GAP_MS) {
            hr_mono_sleep_until((last_drain + FEED_GAP_MS) * 1000000);
            now = hr_mono_ms();
        }
        if (atomic_load(&c->stop))
            break;
        feed_ctx f = {c, now, hr_controller_debounce_ms(c)};
        bool first = false;
        if (!synced)
            first = synced = c->o.synced == NULL || c->o.synced(c->o.synced_ud);
        /* Until then the dirty set just accumulates: the first drain after
         * the sync reports every node, each with its own jittered delay. */
        if (synced) {
            hr_cache_lock(c->o.cache);
            if (first)
                park_infeasible(c, now);
            size_t fed = hr_cache_drain(c->o.cache, feed_one, &f);
            last_drain = now;
            uint64_t removals = hr_cache_removals(c->o.cache);
            if (fed > 0 && removals != swept_removals) {
                swept_removals = removals;
                hr_executor_stats es;
                hr_executor_get_stats(c->exec, &es);
                size_t most = es.last_rv > es.reported ? es.last_rv : es.reported;
                most = most > es.buckets ? most : es.buckets;
                most = most > es.notes ? most : es.notes;
                sweeps_left = (int)(most / SWEEP_BUDGET) + 2;
            }
            /* After the drain, which frees the placeholders of nodes whose
             * last pod left: what the executor keeps for pods and nodes no
             * longer cached goes (order: cache lock, then the executor's). */
            if (sweeps_left > 0 && now >= next_sweep) {
                hr_executor_sweep(c->exec, c->o.cache, SWEEP_BUDGET);
                sweeps_left--;
                next_sweep = now + SWEEP_GAP_MS;
            }
            hr_cache_unlock(c->o.cache);
        }
        feed_ctx fe = {c, now, hr_controller_debounce_ms(c)};
        hr_backoff_prune(c->backoff, now, backoff_expired, &fe);
        int64_t due = INT64_MAX;
        if (!synced) {
            due = now + sync_gap;
            sync_gap = sync_gap * 2 < SYNC_POLL_MAX_MS ? sync_gap * 2 : SYNC_POLL_MAX_MS;
        }
        if (sweeps_left > 0)
            due = earlier(due, next_sweep);
        int64_t expiry = hr_backoff_next_expiry(c->backoff);
        if (expiry >= 0)
            due = earlier(due, expiry);
        /* A kick within FEED_GAP_MS of this drain is kept for the gap's end:
         * a wave's stream of cache changes wakes the feeder once a gap. */
        int64_t gap_end = last_drain >= 0 ? (last_drain + FEED_GAP_MS) * 1000000 : 0;
        if (!hr_waker_wait_after(&c->feed_wake, gap_end,
                                 due == INT64_MAX ? HR_WAKER_NEVER : due * 1000000))
            break;
    }
    return NULL;
}

/* What this reconcile saw replaces what the gauges held for the node;
 * held (NULL: none) is what its execution held back (hr_execute_held). */
static void record_gauges(hr_controller *c, const hr_nodesnap *s, const hr_reconcile *r,
                          const char *const *held)
{
    hr_gauge_pod *pods = calloc(s->node.n ? s->node.n : 1, sizeof *pods);
    if (pods == NULL)
        return; /* the gauges stay as they were: stale, not wrong */
    size_t n = 0;
    int64_t now = hr_mono_ms();
    for (size_t i = 0; i < s->node.n; i++) {
        const hr_pod_plan *pp = &r->pods[i];
        const char *ns = s->node.pods[i].ns, *name = s->node.pods[i].name;
        const char *why = NULL;
        if (pp->reason == HR_R_BACKOFF && hr_backoff_active(c->backoff, ns, name, now, &why))
            pods[n++] =
                (hr_gauge_pod){ns, name, pp->current, HR_NONE, why, true, false, false, NULL, 0};
        if (pp->reason == HR_R_UNDECODABLE && !hr_pod_terminal(&s->node.pods[i].pod))
            pods[n++] = (hr_gauge_pod){ns, name, 0, HR_NONE, NULL, false, true, false, NULL, 0};
        if (pp->reason == HR_R_GROUP_TOO_LARGE)
            pods[n++] =
                (hr_gauge_pod){ns, name, pp->current, HR_NONE, NULL, false, false, true, NULL, 0};
        if (pp->reason == HR_R_FOREIGN_WRITER)
            pods[n++] = (hr_gauge_pod){.ns = ns,
                                       .name = name,
                                       .limit = pp->current,
                                       .target = HR_NONE,
                                       .foreign_writer = s->node.pods[i].pod.foreign_writer};
        if (pp->reason != HR_MANAGED)
            continue;
        /* The plan's reason first (dry-run stays dry-run when its
         * annotation waits for the bucket); else the execution's. */
        const char *why_not = hr_gauge_hold(pp, s->cfg.dry_run);
        if (why_not == NULL && held != NULL)
            why_not = held[i];
        int64_t grace = pp->grace ? hr_grace_end(&s->cfg, &s->node.pods[i].pod) : 0;
        pods[n++] = (hr_gauge_pod){ns,    name,  pp->current, pp->target, why_not,
                                   false, false, false,       NULL,       grace};
    }
    bool gone = !s->node_present && s->node.n == 0;
    hr_gauge_delta d;
    if (hr_gauges_record(c->gauges, s->node.name, s->pool, gone ? NULL : &r->plan, r->n_deferred,
                         pods, n, &d)) {
        atomic_fetch_add(&c->metrics.pods_managed, d.pods);
        atomic_fetch_add(&c->metrics.nodes_managed, d.nodes);
        atomic_fetch_add(&c->metrics.deferred, d.deferred);
        if (d.pods != 0 || d.nodes != 0)
            hr_cfgstatus_kick(c->cfgstatus); /* the counts it publishes moved */
    }
    free(pods);
}

/* The startup grace (design §2.12): Ready comes through the pod watch, the
 * end of the duration needs a timer — the node runs again when its first
 * grace ends (milliseconds from now, -1: no pod of the node in grace). */
static int64_t grace_requeue_ms(const hr_nodesnap *s, const hr_reconcile *r)
{
    int64_t until = INT64_MAX;
    for (size_t i = 0; i < s->node.n; i++)
        if (r->pods[i].grace && hr_grace_end(&s->cfg, &s->node.pods[i].pod) < until)
            until = hr_grace_end(&s->cfg, &s->node.pods[i].pod);
    if (until == INT64_MAX)
        return -1;
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    int64_t ms = until * 1000 - ((int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000);
    /* At least a tick: the plan's clock (wall_s) must have passed the end. */
    return ms > 10 ? ms + 10 : 20;
}

/* The wall clock the plan judges the grace at, on the clock the requeue
 * above reads (time() may lag it by a tick). */
static int64_t wall_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    return (int64_t)ts.tv_sec;
}

/* One node, start to end. Returns the requeue delay (-1: done); *writes
 * gets the API writes it made, *hold_ms a refused write's back-off (0: none). */
static int64_t reconcile_one(hr_controller *c, const char *node, hr_arena *a, uint32_t *writes,
                             int64_t *hold_ms)
{
    *writes = 0;
    *hold_ms = 0;
    int64_t t0 = hr_mono_ns();
    hr_err err;
    hr_err_clear(&err);
    int64_t now_unix = wall_s();
    hr_nodesnap_opts so = {c->o.own_ns, c->backoff, hr_mono_ms(), c->o.dry_run, now_unix};
    hr_nodesnap s;
    if (hr_nodesnap_take(c->o.cache, node, &so, a, &s, &err) != HR_OK) {
        ctl_log(c, 0, "msg=\"snapshot failed\" node=%s error=\"%s\"", node, err.msg);
        return 1000;
    }
    hr_reconcile r;
    /* Design §2.10: a group member's target is its group's. */
    hr_groups g = {.cache = c->o.cache, .opts = &so, .cfg = &s.cfg, .a = a, .memo = c->memo};
    if (hr_reconcile_node_with(&s.cfg, &s.node, now_unix, hr_groups_apply, &g, a, &r, &err) !=
        HR_OK) {
        ctl_log(c, 0, "msg=\"reconcile failed\" node=%s error=\"%s\"", node, err.msg);
        return 1000;
    }
    for (size_t i = 0; i < s.node.n; i++) {
        const hr_pod_plan *pp = &r.pods[i];
        if (pp->reason != HR_MANAGED)
            continue;
        ctl_log(c, 3,
                "msg=decision node=%s pod=%s/%s request=%" PRId64 "m current=%" PRId64
                "m target=%" PRId64 "m write=%s gate=%s dryRun=%s",
                node, s.node.pods[i].ns, s.node.pods[i].name, pp->request, pp->current, pp->target,
                pp->write ? "true" : "false", hr_gate_str(pp->gate),
                s.cfg.dry_run ? "true" : "false");
    }
    hr_exec_outcome out = {.requeue_ms = -1};
    /* Even with nothing to write the executor looks at the node: a pod the
     * kubelet calls Infeasible needs parking and one event. */
    /* Not leading: nothing is kept of the node; every (re)gain of
     * leadership queues every node (controller.h). */
    const char **held = NULL;
    if (c->o.leading == NULL || c->o.leading(c->o.leading_ud)) {
        /* (Out of memory: no held reasons of the executor's, the rest stands.) */
        held = s.node.n > 0 ? hr_arena_calloc(a, s.node.n, sizeof *held) : NULL;
        if (hr_execute_held(c->exec, &s, &r, held, &out, &err) != HR_OK)
            ctl_log(c, 0, "msg=\"execute failed\" node=%s error=\"%s\"", node, err.msg);
    }
    record_gauges(c, &s, &r, held);
    /* The other members' nodes follow at once: their debounce was this
     * node's (design §2.10). */
    for (size_t i = 0; i < g.n_requeue; i++)
        if (hr_nodequeue_add(c->q, g.requeue[i], hr_mono_ms(), 0) != HR_OK)
            ctl_log(c, 0, "msg=\"group requeue failed\" node=%s", g.requeue[i]);
    atomic_fetch_add(&c->metrics.reconciles, 1);
    hr_histogram_observe_ns(&c->metrics.reconcile_seconds, (uint64_t)(hr_mono_ns() - t0));
    *writes = out.writes;
    *hold_ms = out.hold_ms;
    int64_t grace = grace_requeue_ms(&s, &r);
    if (grace >= 0 && grace < out.hold_ms)
        grace = out.hold_ms;
    if (grace >= 0 && (out.requeue_ms < 0 || grace < out.requeue_ms))
        out.requeue_ms = grace;
    return out.requeue_ms;
}

static void *worker_main(void *ud)
{
    hr_controller *c = ud;
    hr_thread_name("hr-node");
    hr_arena a;
    hr_arena_init(&a, 0);
    for (;;) {
        const char *node = hr_nodequeue_wait(c->q);
        if (node == NULL)
            break;
        uint32_t writes;
        int64_t hold;
        int64_t requeue = reconcile_one(c, node, &a, &writes, &hold);
        /* A refused write's back-off holds the node against its events too. */
        if (hold > 0)
            hr_nodequeue_hold(c->q, node, hr_mono_ms() + hold);
        /* An event during the run brings the node back at its own due time
         * (its debounce, from when it arrived), and no sooner than half a
         * period after this run: the shortest debounce wait (design §5). */
        hr_nodequeue_done(c->q, node, hr_mono_ms(), requeue, hr_controller_debounce_ms(c) / 2);
        /* A write may have parked a pod (a new back-off expiry for the
         * feeder) and moved the managed counts (the status writer). */
        if (writes > 0)
            hr_waker_kick(&c->feed_wake);
        hr_arena_free(&a); /* everything of one reconcile dies together */
    }
    hr_arena_free(&a);
    return NULL;
}

hr_status hr_controller_start(const hr_controller_opts *o, hr_controller **out, hr_err *err)
{
    hr_controller *c = calloc(1, sizeof *c);
    if (c == NULL)
        return hr_err_set(err, HR_E_NOMEM, "controller: out of memory");
    c->o = *o;
    c->o.config = NULL; /* read below, not kept */
    if (pthread_mutex_init(&c->cfg_mu, NULL) != 0) {
        free(c);
        return hr_err_set(err, HR_E_NOMEM, "controller: cannot create a lock");
    }
    if (hr_waker_init(&c->feed_wake) != 0) {
        pthread_mutex_destroy(&c->cfg_mu);
        free(c);
        return hr_err_set(err, HR_E_NOMEM, "controller: cannot create a lock");
    }
    c->feed_wake_ok = true;
    hr_config dflt;
    hr_config_defaults(&dflt);
    const hr_config *cfg = o->config != NULL ? o->config : &dflt;
    c->debounce_ms = cfg->debounce_ms;
    c->per_node_pps = cfg->per_node_pps;
    c->client_qps = cfg->client_qps;
    c->client_burst = cfg->client_burst;
    /* The client was made with the defaults; from here on it writes at
     * the configured rate. */
    if (o->client != NULL) {
        hr_kclient_set_rate(o->client, c->client_qps, c->client_burst);
        hr_kclient_abandon_writes(o->client, false);
        /* Every write re-checks leadership right before it is sent and
         * ends by the lease's renew deadline (design §10). */
        if (o->leading_until != NULL)
            hr_kclient_set_write_lease(o->client, o->leading_until, o->leading_ud);
    }
    hr_ctlmetrics_init(&c->metrics);
    atomic_init(&c->stop, false);
    c->gauges = hr_gauges_new();
    if (c->gauges == NULL) {
        hr_waker_destroy(&c->feed_wake);
        pthread_mutex_destroy(&c->cfg_mu);
        free(c);
        return hr_err_set(err, HR_E_NOMEM, "controller: out of memory");
    }
    hr_prng_seed_random(&c->rng);
    hr_status st = hr_nodequeue_new(&c->q, err);
    if (st == HR_OK)
        st = hr_backoff_new(&c->backoff, err);
    if (st == HR_OK && (c->memo = hr_nodememo_new(0, 0)) == NULL)
        st = hr_err_set(err, HR_E_NOMEM, "controller: out of memory");
    int wc = o->write_concurrency > 0 ? o->write_concurrency : HR_CTL_WRITE_CONCURRENCY;
    if (st == HR_OK) {
        hr_executor_opts eo = {.client = o->client,
                               .backoff = c->backoff,
                               .metrics = &c->metrics,
                               .leading = o->leading,
                               .leading_until = o->leading_until,
                               .leading_ud = o->leading_ud,
                               .stop = &c->stop,
                               .instance = o->instance,
                               .write_concurrency = wc,
                               .protobuf = o->protobuf,
                               .log = o->log,
                               .log_ud = o->log_ud};
        st = hr_executor_new(&eo, &c->exec, err);
        if (st == HR_OK)
            hr_executor_set_node_rate(c->exec, c->per_node_pps);
        if (st == HR_OK)
            st = hr_notes_start(o->client, hr_executor_send_note, c->exec, wc, &c->notes, err);
        if (st == HR_OK)
            hr_executor_set_notes(c->exec, c->notes);
    }
    if (st == HR_OK) {
        hr_cfgstatus_opts so = {
            .client = o->client,
            .cache = o->cache,
            .metrics = &c->metrics,
            .own_ns = o->own_ns,
            .dry_run = o->dry_run,
            .leading = o->leading,
            .leading_ud = o->leading_ud,
            .synced = o->synced,
            .synced_ud = o->synced_ud,
            .interval_ms = o->status_interval_ms,
            .log = o->log,
            .log_ud = o->log_ud,
        };
        st = hr_cfgstatus_start(&so, &c->cfgstatus, err);
    }
    if (st != HR_OK) {
        hr_controller_stop(c);
        return st;
    }
    /* From here on every change rings the feeder and the status writer. */
    hr_cache_set_kick(o->cache, cache_kick, c);
    c->kick_set = true;
    if (pthread_create(&c->feeder, NULL, feeder_main, c) != 0) {
        hr_controller_stop(c);
        return hr_err_set(err, HR_E_NOMEM, "controller: cannot start the feeder thread");
    }
    c->feeder_started = true;
    int n = o->workers > 0 ? o->workers : HR_CTL_NODE_WORKERS;
    if (n > HR_CTL_NODE_WORKERS_MAX)
        n = HR_CTL_NODE_WORKERS_MAX;
    for (int i = 0; i < n; i++) {
        if (pthread_create(&c->workers[i], NULL, worker_main, c) != 0)
            break;
        c->n_workers++;
    }
    if (c->n_workers == 0) {
        hr_controller_stop(c);
        return hr_err_set(err, HR_E_NOMEM, "controller: cannot start a worker thread");
    }
    *out = c;
    return HR_OK;
}

void hr_controller_stop(hr_controller *c)
{
    if (c == NULL)
        return;
    atomic_store(&c->stop, true);
    /* A worker asleep in the client's write limiter wakes now, not when
     * its token comes (design §10: the Lease is released within 10 s). */
    if (c->o.client != NULL)
        hr_kclient_abandon_writes(c->o.client, true);
    if (c->q != NULL)
        hr_nodequeue_shutdown(c->q);
    /* No doorbell rings into what is about to go. */
    if (c->kick_set)
        hr_cache_set_kick(c->o.cache, NULL, NULL);
    if (c->feed_wake_ok)
        hr_waker_stop(&c->feed_wake);
    if (c->feeder_started)
        pthread_join(c->feeder, NULL);
    for (int i = 0; i < c->n_workers; i++)
        pthread_join(c->workers[i], NULL);
    hr_cfgstatus_stop(c->cfgstatus);
    /* No worker is left to queue a note; the one in hand is cut by the
     * abandoned writes, the rest is dropped (notes.h). */
    hr_notes_stop(c->notes);
    /* No writer is left: the lease callback may go with its owner. */
    if (c->o.client != NULL && c->o.leading_until != NULL)
        hr_kclient_set_write_lease(c->o.client, NULL, NULL);
    hr_executor_free(c->exec);
    hr_backoff_free(c->backoff);
    hr_nodememo_free(c->memo);
    hr_nodequeue_free(c->q);
    hr_gauges_free(c->gauges);
    if (c->feed_wake_ok)
        hr_waker_destroy(&c->feed_wake);
    pthread_mutex_destroy(&c->cfg_mu);
    free(c);
}

void hr_controller_enqueue_all(hr_controller *c)
{
    int64_t now = hr_mono_ms();
    int64_t period = hr_controller_debounce_ms(c);
    /* Spread the initial wave over a few periods (design §5: jittered). */
    hr_cache_lock(c->o.cache);
    uint32_t it = 0;
    hr_cnode_view nv;
    /* A generator of its own: c->rng is the feeder's, drawn on the
     * feeder's thread, and this runs on the caller's (the leader
     * election's). */
    hr_prng rng;
    hr_prng_seed_random(&rng);
    park_infeasible(c, now); /* before any of the queued nodes is planned */
    while (hr_cache_node_next(c->o.cache, &it, &nv)) {
        int64_t d = period > 0 ? (int64_t)hr_prng_below(&rng, (uint64_t)(2 * period + 1)) : 0;
        if (hr_nodequeue_add(c->q, nv.name, now, d) != HR_OK)
            ctl_log(c, 0, "msg=\"node not queued: out of memory\" node=%s", nv.name);
    }
    hr_cache_unlock(c->o.cache);
    /* A new term: the status writer compares against the object afresh. */
    hr_cfgstatus_kick(c->cfgstatus);
}

hr_ctlmetrics *hr_controller_metrics(hr_controller *c)
{
    return &c->metrics;
}

/* Leader only (design §9.3). Every replica watches the same cluster and
 * keeps the same gauges, so a scrape of each would double every per-pod
 * and per-node line of every panel and alert. The leader's are the figures
 * its writes came from; a follower keeps its gauges current (it reconciles
 * without writing) and shows them from the first scrape after it gains the
 * Lease. Asked at each scrape, with the same clock the writes ask. */
void hr_controller_render_gauges(void *ud, hr_buf *out)
{
    hr_controller *c = ud;
    if (c->o.leading != NULL && !c->o.leading(c->o.leading_ud))
        return;
    hr_ctlmetrics_render_totals(&c->metrics, out);
    hr_gauges_render(c->gauges, out);
    hr_cache_lock(c->o.cache);
    size_t groups = hr_cache_n_groups(c->o.cache);
    hr_cache_unlock(c->o.cache);
    hr_executor_stats es;
    hr_executor_get_stats(c->exec, &es);
    hr_buf_printf(out,
                  "# HELP headroom_groups Groups (design 2.10) with at least one cached member.\n"
                  "# TYPE headroom_groups gauge\nheadroom_groups %zu\n"
                  "# HELP headroom_notes_queued Status annotations and events waiting behind the "
                  "resizes (design 5), at most one per cached pod.\n"
                  "# TYPE headroom_notes_queued gauge\nheadroom_notes_queued %zu\n",
                  groups, es.notes);
}
