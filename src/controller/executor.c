/*
 * executor.c — performing one node's actions (executor.h).
 *
 * Per-pod bookkeeping is keyed by "ns/name/uid" (the uid in hex): the
 * resourceVersion of our last write to each pod, and which warnings were
 * already reported for it (one event per pod and reason, not one per
 * reconcile). A pod recreated under the same name has a new uid, so it
 * starts clean. A per-node token bucket paces each node's wave of writes.
 * What belongs to a pod or node no longer in the cache is dropped by
 * hr_executor_sweep, a bounded slice of each map per call.
 *
 * A wave (hr_execute) runs in two steps: the checks, in the wave's thread
 * and in order (stale cache, the node's bucket, the live Node read and the
 * gates, skips and their events), then the writes that passed, all handed
 * to the write pool at once (wpool.h; executor.h "Writes in flight"). Each
 * write has its own outcome; the wave's is their merge (writes summed, the
 * latest requeue, leadership lost if any lost it). A pod's key is "busy"
 * while a write of it is in flight — its resize or dry-run annotation here,
 * its note in hr_executor_send_note — and a second writer of that pod waits
 * for it (busy_cv): per pod, one write at a time.
 */
#include "executor.h"

#include <inttypes.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "controller/ctllog.h"
#include "controller/livenode.h"
#include "controller/nodequeue.h"
#include "controller/wpool.h"
#include "core/names.h"
#include "core/vpa.h"
#include "kube/decode/decode.h"
#include "kube/transport/backoff.h"
#include "kube/transport/limiter.h"
#include "kube/write/events.h"
#include "kube/write/patch.h"
#include "util/clock.h"
#include "util/strmap.h"

/* Bits of the "already reported" mask. */
enum {
    REP_PRESSURE = 1u << HR_GATE_PRESSURE,
    REP_UNAVAILABLE = 1u << HR_GATE_UNAVAILABLE,
    REP_ALLOCATABLE = 1u << HR_GATE_ALLOCATABLE,
    REP_NODE_UNKNOWN = 1u << HR_GATE_NODE_UNKNOWN,
    REP_BOOKING_UNKNOWN = 1u << HR_GATE_BOOKING_UNKNOWN,
    REP_INFEASIBLE = 1u << 8,
    REP_FORBIDDEN = 1u << 9,
    REP_INVALID = 1u << 10,
    REP_UNDECODABLE = 1u << 11,     /* said on the undecodable pod itself */
    REP_GROUP_TOO_LARGE = 1u << 12, /* said on each member of a refused group */
    REP_FOREIGN_WRITER = 1u << 13,  /* said on a pod whose limit another manager writes */
};

struct hr_executor {
    hr_executor_opts o;
    char instance[256];              /* our copy of o.instance: the caller's may not outlive us */
    pthread_mutex_t mu;              /* guards the maps below */
    hr_strmap last_rv;               /* ns/name/uid -> resourceVersion of our last write */
    hr_strmap reported;              /* ns/name/uid -> REP_* mask */
    hr_strmap buckets;               /* node -> hr_klimiter* */
    size_t cur_rv, cur_rep, cur_bkt; /* where the sweep resumes in each map */
    int node_pps;
    int write_fails;        /* 429/5xx/timeouts in a row (design §7); under mu */
    hr_prng rand;           /* the back-off's jitter; under mu */
    hr_notes *notes;        /* hr_executor_set_notes, before any hr_execute; NULL: inline */
    hr_wpool *pool;         /* the writes of waves (write_concurrency > 1); NULL: inline */
    hr_strmap busy;         /* under mu: ns/name/uid of pods with a write in flight */
    pthread_cond_t busy_cv; /* with mu: a pod stopped being busy */
};

#define logf_(e, level, ...) \
    hr_ctl_logf((e)->o.log, (e)->o.log_ud, "executor", (level), __VA_ARGS__)

hr_status hr_executor_new(const hr_executor_opts *o, hr_executor **out, hr_err *err)
{
    hr_executor *e = calloc(1, sizeof *e);
    if (e == NULL)
        return hr_err_set(err, HR_E_NOMEM, "executor: out of memory");
    e->o = *o;
    snprintf(e->instance, sizeof e->instance, "%s", o->instance != NULL ? o->instance : "headroom");
    e->o.instance = e->instance;
    e->node_pps = 10;
    hr_prng_seed_random(&e->rand);
    if (pthread_mutex_init(&e->mu, NULL) != 0) {
        free(e);
        return hr_err_set(err, HR_E_NOMEM, "executor: cannot create a lock");
    }
    if (pthread_cond_init(&e->busy_cv, NULL) != 0) {
        pthread_mutex_destroy(&e->mu);
        free(e);
        return hr_err_set(err, HR_E_NOMEM, "executor: cannot create a lock");
    }
    hr_strmap_init(&e->last_rv);
    hr_strmap_init(&e->reported);
    hr_strmap_init(&e->buckets);
    hr_strmap_init(&e->busy);
    if (o->write_concurrency > 1) {
        hr_status st = hr_wpool_start(o->write_concurrency, &e->pool, err);
        if (st != HR_OK) {
            hr_executor_free(e);
            return st;
        }
    }
    *out = e;
    return HR_OK;
}

void hr_executor_free(hr_executor *e)
{
    if (e == NULL)
        return;
    hr_wpool_stop(e->pool); /* no wave runs any more: its threads are idle */
    size_t i = 0;
    uint64_t v;
    while (hr_strmap_next(&e->buckets, &i, NULL, &v)) {
        hr_klimiter *l = (hr_klimiter *)(uintptr_t)v;
        hr_klimiter_destroy(l);
        free(l);
    }
    hr_strmap_free(&e->buckets);
    hr_strmap_free(&e->last_rv);
    hr_strmap_free(&e->reported);
    hr_strmap_free(&e->busy);
    pthread_cond_destroy(&e->busy_cv);
    pthread_mutex_destroy(&e->mu);
    free(e);
}

bool hr_executor_set_node_rate(hr_executor *e, int per_node_pps)
{
    if (per_node_pps < 1)
        per_node_pps = 1;
    pthread_mutex_lock(&e->mu);
    bool changed = per_node_pps != e->node_pps;
    if (changed) {
        e->node_pps = per_node_pps;
        size_t i = 0;
        uint64_t v;
        int64_t now = hr_mono_ns();
        while (hr_strmap_next(&e->buckets, &i, NULL, &v))
            hr_klimiter_set((hr_klimiter *)(uintptr_t)v, per_node_pps, per_node_pps, now);
    }
    pthread_mutex_unlock(&e->mu);
    return changed;
}

int hr_executor_node_rate(hr_executor *e)
{
    pthread_mutex_lock(&e->mu);
    int pps = e->node_pps;
    pthread_mutex_unlock(&e->mu);
    return pps;
}

long hr_exec_retry_ms(hr_prng *r, int fails, long retry_after_ms)
{
    return hr_kbackoff_ms_r(r, fails, HR_WRITE_RETRY_BASE_MS, HR_WRITE_RETRY_MAX_MS,
                            retry_after_ms);
}

long hr_executor_write_refused(hr_executor *e, long retry_after_ms)
{
    pthread_mutex_lock(&e->mu);
    long wait = hr_exec_retry_ms(&e->rand, e->write_fails, retry_after_ms);
    if (e->write_fails < 64) /* far past the cap: the count cannot overflow */
        e->write_fails++;
    pthread_mutex_unlock(&e->mu);
    return wait;
}

static void write_accepted(hr_executor *e)
{
    pthread_mutex_lock(&e->mu);
    e->write_fails = 0;
    pthread_mutex_unlock(&e->mu);
}

static void pod_key(char *k, size_t cap, const char *ns, const char *name, const uint8_t uid[16])
{
    static const uint8_t none[16];
    static const char digits[] = "0123456789abcdef";
    const uint8_t *u = uid != NULL ? uid : none;
    char hex[33];
    for (int i = 0; i < 16; i++) {
        hex[2 * i] = digits[u[i] >> 4];
        hex[2 * i + 1] = digits[u[i] & 0xf];
    }
    hex[32] = 0;
    /* A namespace is at most 63 bytes, a pod name 253: the key fits. */
    snprintf(k, cap, "%s/%s/", ns, name);
    size_t n = strlen(k);
    if (n + sizeof hex <= cap)
        memcpy(k + n, hex, sizeof hex);
}

static const uint8_t *snap_uid(const hr_nodesnap *s, size_t i)
{
    return s->pod_uid != NULL ? s->pod_uid[i] : NULL;
}

void hr_executor_forget_pod(hr_executor *e, const char *ns, const char *name, const uint8_t uid[16])
{
    char k[512];
    pod_key(k, sizeof k, ns, name, uid);
    pthread_mutex_lock(&e->mu);
    hr_strmap_del(&e->last_rv, k, NULL);
    hr_strmap_del(&e->reported, k, NULL);
    pthread_mutex_unlock(&e->mu);
}

enum { KEY_LIVE, KEY_RECREATED, KEY_ABSENT };

/* Is the pod a key names ("ns/name/uidhex") still in the cache, as the
 * same pod (KEY_LIVE), as another pod of that name (KEY_RECREATED), or not
 * at all (KEY_ABSENT)? ns and name (256 bytes each) receive its parts.
 * Cache lock held. */
static int pod_key_state(const hr_cache *c, const char *key, char *ns, char *name)
{
    const char *s1 = strchr(key, '/');
    const char *s2 = strrchr(key, '/');
    ns[0] = name[0] = 0;
    if (s1 == NULL || s2 == s1 || strlen(s2 + 1) != 32)
        return KEY_RECREATED; /* not a key of ours: drop it, touch nothing else */
    size_t nl = (size_t)(s1 - key), ml = (size_t)(s2 - s1 - 1);
    if (nl >= 256 || ml >= 256)
        return KEY_RECREATED;
    memcpy(ns, key, nl);
    ns[nl] = 0;
    memcpy(name, s1 + 1, ml);
    name[ml] = 0;
    uint8_t uid[16];
    if (!hr_cache_pod_uid(c, ns, name, uid))
        return KEY_ABSENT;
    char want[512];
    pod_key(want, sizeof want, ns, name, uid);
    return strcmp(want, key) == 0 ? KEY_LIVE : KEY_RECREATED;
}

/* One slice of a pod map's sweep; lock held. A pod whose name is no
 * longer cached at all also leaves the back-off table (a leaf lock). */
static size_t sweep_pods(hr_executor *e, hr_strmap *m, size_t *cur, const hr_cache *c,
                         size_t budget)
{
    size_t dropped = 0;
    const char *k;
    for (size_t seen = 0; seen < budget; seen++) {
        if (!hr_strmap_next(m, cur, &k, NULL)) {
            *cur = 0; /* a pass is complete; the next call starts over */
            break;
        }
        char ns[256], name[256];
        int st = pod_key_state(c, k, ns, name);
        if (st == KEY_LIVE)
            continue;
        char copy[512];
        snprintf(copy, sizeof copy, "%s", k);
        dropped += hr_strmap_del(m, copy, NULL); /* a tombstone: *cur stays valid */
        if (st == KEY_ABSENT && e->o.backoff != NULL)
            hr_backoff_forget(e->o.backoff, ns, name);
    }
    return dropped;
}

/* A queued note's pod is still cached as the same pod (hr_notes_sweep). */
static bool note_live(void *ud, const char *key)
{
    char ns[256], name[256];
    return pod_key_state((const hr_cache *)ud, key, ns, name) == KEY_LIVE;
}

size_t hr_executor_sweep(hr_executor *e, const hr_cache *c, size_t budget)
{
    size_t dropped = 0;
    if (e->notes != NULL) /* its lock is a leaf: taken after the cache's */
        dropped += hr_notes_sweep(e->notes, note_live, (void *)(uintptr_t)c, budget);
    pthread_mutex_lock(&e->mu);
    dropped += sweep_pods(e, &e->last_rv, &e->cur_rv, c, budget);
    dropped += sweep_pods(e, &e->reported, &e->cur_rep, c, budget);
    const char *k;
    uint64_t v;
    for (size_t seen = 0; seen < budget; seen++) {
        if (!hr_strmap_next(&e->buckets, &e->cur_bkt, &k, &v)) {
            e->cur_bkt = 0;
            break;
        }
        hr_cnode_view nv;
        if (hr_cache_node_get(c, k, &nv))
            continue; /* the node, or a placeholder its pods keep */
        char copy[256];
        snprintf(copy, sizeof copy, "%s", k);
        if (hr_strmap_del(&e->buckets, copy, NULL)) {
            hr_klimiter *l = (hr_klimiter *)(uintptr_t)v;
            hr_klimiter_destroy(l);
            free(l);
            dropped++;
        }
    }
    pthread_mutex_unlock(&e->mu);
    return dropped;
}

void hr_executor_get_stats(hr_executor *e, hr_executor_stats *out)
{
    pthread_mutex_lock(&e->mu);
    out->last_rv = e->last_rv.n;
    out->reported = e->reported.n;
    out->buckets = e->buckets.n;
    pthread_mutex_unlock(&e->mu);
    out->notes = e->notes != NULL ? hr_notes_pending(e->notes) : 0;
}

int hr_executor_write_peak(hr_executor *e)
{
    return hr_wpool_peak(e->pool);
}

/* The pod's key is ours until pod_release: waits while another write of
 * that pod is in flight. False (out of memory): not claimed, the write
 * goes anyway (as before there was a claim: at worst two in flight). */
static bool pod_claim(hr_executor *e, const char *key)
{
    pthread_mutex_lock(&e->mu);
    while (hr_strmap_get(&e->busy, key) != NULL)
        pthread_cond_wait(&e->busy_cv, &e->mu);
    bool ok = hr_strmap_put(&e->busy, key, 1);
    pthread_mutex_unlock(&e->mu);
    return ok;
}

static void pod_release(hr_executor *e, const char *key)
{
    pthread_mutex_lock(&e->mu);
    HR_IGNORE(hr_strmap_del(&e->busy, key, NULL));
    pthread_cond_broadcast(&e->busy_cv);
    pthread_mutex_unlock(&e->mu);
}

void hr_executor_pod_marks(hr_executor *e, const char *ns, const char *name, const uint8_t uid[16],
                           uint64_t *last_rv, unsigned *reported)
{
    char k[512];
    pod_key(k, sizeof k, ns, name, uid);
    pthread_mutex_lock(&e->mu);
    const uint64_t *rv = hr_strmap_get(&e->last_rv, k);
    const uint64_t *rep = hr_strmap_get(&e->reported, k);
    *last_rv = rv != NULL ? *rv : 0;
    *reported = rep != NULL ? (unsigned)*rep : 0;
    pthread_mutex_unlock(&e->mu);
}

/* Set bits in the reported mask; returns true when any was new. */
static bool report_once(hr_executor *e, const char *key, unsigned bits)
{
    pthread_mutex_lock(&e->mu);
    uint64_t *m = hr_strmap_get(&e->reported, key);
    bool fresh = m == NULL || (*m & bits) != bits;
    if (m != NULL)
        *m |= bits;
    else
        HR_IGNORE(hr_strmap_put(&e->reported, key, bits)); /* out of memory: report again later */
    pthread_mutex_unlock(&e->mu);
    return fresh;
}

static void clear_reported(hr_executor *e, const char *key, unsigned bits)
{
    pthread_mutex_lock(&e->mu);
    uint64_t *m = hr_strmap_get(&e->reported, key);
    if (m != NULL)
        *m &= ~(uint64_t)bits;
    pthread_mutex_unlock(&e->mu);
}

/* A token from the node's bucket, or false when the node must wait. */
static bool take_node_token(hr_executor *e, const char *node)
{
    pthread_mutex_lock(&e->mu);
    int64_t now = hr_mono_ns();
    uint64_t *v = hr_strmap_get(&e->buckets, node);
    hr_klimiter *l = v != NULL ? (hr_klimiter *)(uintptr_t)*v : NULL;
    if (l == NULL) {
        l = calloc(1, sizeof *l);
        if (l == NULL || hr_klimiter_init(l, e->node_pps, e->node_pps, now) != 0 ||
            !hr_strmap_put(&e->buckets, node, (uint64_t)(uintptr_t)l)) {
            free(l);
            pthread_mutex_unlock(&e->mu);
            return true; /* no bucket: the global client limiter still paces us */
        }
    }
    bool ok = hr_klimiter_try(l, now);
    pthread_mutex_unlock(&e->mu);
    return ok;
}

static bool is_leader(hr_executor *e)
{
    return e->o.leading == NULL || e->o.leading(e->o.leading_ud);
}

/* The Accept of our writes to pods and events: their answers, a whole
 * object each, in protobuf unless --protobuf=false (controller.h). */
static const char *accept(const hr_executor *e)
{
    return e->o.protobuf ? HR_KACCEPT_PROTOBUF : NULL;
}

/* Leadership went while a wave ran: the rest of it waits for the next run
 * (design §10: requeued, not dropped). */
static void lease_lost(hr_exec_outcome *out)
{
    out->lease_lost = true;
    if (out->requeue_ms < 0 || out->requeue_ms > HR_EXEC_LEASE_REQUEUE_MS)
        out->requeue_ms = HR_EXEC_LEASE_REQUEUE_MS;
}

/* One Event about a pod. Failures are logged, never fatal: an event is a
 * courtesy, the limit is the product. HR_E_EXPIRED: not sent, we do not
 * lead (asked here, and by the client after its limiter wait);
 * HR_E_CANCELED: not sent, shutting down; else HR_OK. */
static hr_status post_event_on(hr_executor *e, const char *ns, const char *name, const char *type,
                               const char *reason, const char *note, uint32_t *writes)
{
    if (!is_leader(e))
        return HR_E_EXPIRED;
    hr_kevent ev = {.ns = ns,
                    .kind = "Pod",
                    .api_version = "v1",
                    .name = name,
                    .type = type,
                    .reason = reason,
                    .action = HR_EVENT_ACTION,
                    .note = note,
                    .controller = HR_GROUP "/" HR_FIELD_MANAGER,
                    .instance = e->o.instance,
                    .accept = accept(e)};
    hr_kresult res = {0};
    hr_err err;
    hr_status st = hr_kevent_create(e->o.client, &ev, &res, &err);
    if (st == HR_E_CANCELED || st == HR_E_EXPIRED)
        return st; /* nothing was sent */
    (*writes)++;
    atomic_fetch_add(&e->o.metrics->writes[HR_WK_EVENT], 1);
    if (st != HR_OK)
        logf_(e, 1, "msg=\"event not recorded\" pod=%s/%s reason=%s status=%ld error=\"%s\"", ns,
              name, reason, res.status, err.msg);
    return HR_OK;
}

static hr_status post_event(hr_executor *e, const hr_rpod *p, const char *type, const char *reason,
                            const char *note, hr_exec_outcome *out)
{
    return post_event_on(e, p->ns, p->name, type, reason, note, &out->writes);
}

/* An event said once per pod and bit (report_once): REPORT_SENT (this
 * call said it), REPORT_EARLIER (said before), or REPORT_STOP — it could not
 * be sent, for lack of leadership (the wave is requeued) or on shutdown:
 * the mark is taken back, so whoever leads next says it, and the caller
 * stops the wave. */
enum { REPORT_STOP = -1, REPORT_EARLIER = 0, REPORT_SENT = 1 };
static int report(hr_executor *e, const char *key, unsigned bit, const hr_rpod *p, const char *type,
                  const char *reason, const char *note, hr_exec_outcome *out)
{
    if (!report_once(e, key, bit))
        return REPORT_EARLIER;
    hr_status st = post_event(e, p, type, reason, note, out);
    if (st == HR_OK)
        return REPORT_SENT;
    clear_reported(e, key, bit);
    if (st == HR_E_EXPIRED)
        lease_lost(out);
    return REPORT_STOP;
}

/* The Node as the API server has it right now (livenode.h), read no later
 * than leadership allows (a leader's requests end by its renew deadline). */
static hr_status read_node_live(hr_executor *e, const char *name, hr_node *out)
{
    int64_t until =
        e->o.leading_until != NULL ? e->o.leading_until(e->o.leading_ud) : HR_KUNTIL_NONE;
    long status = 0;
    hr_status st = hr_live_node_read(e->o.client, until, name, e->o.protobuf, out, &status);
    if (st != HR_OK)
        logf_(e, 1, "msg=\"node unreadable, increases skipped\" node=%s status=%ld", name, status);
    return st;
}

/* Returns false when the wave must stop (report). */
static bool count_skip(hr_executor *e, const hr_rpod *p, const char *key, hr_gate g,
                       int64_t current, int64_t target, hr_exec_outcome *out)
{
    atomic_fetch_add(&e->o.metrics->skips[g], 1);
    if (g == HR_GATE_NODE_UNKNOWN) {
        logf_(e, 2, "msg=\"not planned, nothing written\" pod=%s/%s reason=%s", p->ns, p->name,
              hr_gate_str(g));
        return report(e, key, REP_NODE_UNKNOWN, p, "Normal", "ResizeSkipped",
                      "CPU limit left as it is: the pod's Node is not in the controller's "
                      "cache (node-unknown)",
                      out) != REPORT_STOP;
    }
    logf_(e, 2, "msg=\"increase skipped\" pod=%s/%s from=%" PRId64 "m to=%" PRId64 "m reason=%s",
          p->ns, p->name, current, target, hr_gate_str(g));
    char note[256];
    static const char *const why[HR_GATE_COUNT_] = {
        [HR_GATE_PRESSURE] = "the node reports DiskPressure or PIDPressure",
        [HR_GATE_UNAVAILABLE] = "the node cannot be read",
        [HR_GATE_ALLOCATABLE] = "the pod's total CPU limit would exceed the node's allocatable",
        [HR_GATE_BOOKING_UNKNOWN] = "a pod here could not be decoded (booking-unknown)",
    };
    snprintf(note, sizeof note, "CPU limit increase %" PRId64 "m -> %" PRId64 "m skipped: %s",
             current, target, why[g] ? why[g] : hr_gate_str(g));
    return report(e, key, 1u << g, p, "Normal", "ResizeSkipped", note, out) != REPORT_STOP;
}

/* The whole pod's CPU limit after a write: ours plus the containers we
 * leave alone (none for a pod-level pod, whose limit bounds it all, §2.13). */
static int64_t pod_total_after(const hr_rpod *p, const hr_action *a)
{
    return a->target + hr_pod_unmanaged_limits(&p->pod);
}

/* The resourceVersion our write left the pod at (0: unknown, kept as no
 * guard). */
static void remember_rv(hr_executor *e, const char *key, uint64_t rv)
{
    pthread_mutex_lock(&e->mu);
    /* Out of memory: no stale-cache guard for this pod, as when rv is 0. */
    if (rv != 0)
        HR_IGNORE(hr_strmap_put(&e->last_rv, key, rv));
    pthread_mutex_unlock(&e->mu);
}

/* The status annotation (the resize subresource drops metadata): HR_OK
 * (sent, whatever the answer: a failure is logged), HR_E_CANCELED or
 * HR_E_EXPIRED (not sent: shutting down, or not leading). */
static hr_status write_annotation(hr_executor *e, const char *key, const char *ns, const char *name,
                                  const char *patch, uint32_t *writes)
{
    char path[600];
    snprintf(path, sizeof path, "/api/v1/namespaces/%s/pods/%s", ns, name);
    hr_buf resp;
    hr_buf_init(&resp, 64u << 20);
    hr_kresult res = {0};
    hr_err err;
    hr_err_clear(&err);
    hr_status st = hr_kclient_merge_patch_as(e->o.client, path, accept(e), patch, strlen(patch),
                                             &resp, &res, &err);
    if (st == HR_E_CANCELED || st == HR_E_EXPIRED) {
        hr_buf_free(&resp);
        return st;
    }
    (*writes)++;
    atomic_fetch_add(&e->o.metrics->writes[HR_WK_ANNOTATION], 1);
    if (st == HR_OK) {
        write_accepted(e);
        remember_rv(e, key, hr_answer_rv(&resp, res.protobuf));
    } else {
        logf_(e, 1, "msg=\"status annotation not written\" pod=%s/%s status=%ld error=\"%s\"", ns,
              name, res.status, err.msg);
    }
    hr_buf_free(&resp);
    return HR_OK;
}

void hr_executor_send_note(void *ud, const hr_note *n)
{
    hr_executor *e = ud;
    uint32_t writes = 0;
    /* Not leading (or shutting down): dropped, as a stop would (notes.h). */
    if (!is_leader(e))
        return;
    bool claimed = pod_claim(e, n->key); /* not beside a resize of the pod */
    if (write_annotation(e, n->key, n->ns, n->name, n->patch, &writes) == HR_OK && n->event != NULL)
        HR_IGNORE(
            post_event_on(e, n->ns, n->name, "Normal", "CPULimitAdjusted", n->event, &writes));
    if (claimed)
        pod_release(e, n->key);
}

void hr_executor_set_notes(hr_executor *e, hr_notes *q)
{
    e->notes = q;
}

/* One write of a wave and its outcome (the pool's item). */
typedef struct wjob {
    const hr_action *a;
    hr_exec_outcome out;
    bool halted; /* not sent: the wave was halted before its turn */
} wjob;

typedef struct wave {
    hr_executor *e;
    const hr_nodesnap *s;
    atomic_bool halt; /* a write met shutdown or lost leadership: send no more */
    wjob *jobs;
} wave;

/* The outcome table of design §7 for a refused resize; returns true when
 * the wave must stop (its event could not be sent: report). */
static bool resize_refused(hr_executor *e, const hr_nodesnap *s, const hr_action *a,
                           const char *key, const hr_kresult *res, const hr_err *err,
                           hr_exec_outcome *out)
{
    const hr_rnode *rn = &s->node;
    const hr_rpod *p = &rn->pods[a->pod];
    hr_result rr;
    long status = res->status;
    if (status == 403)
        rr = HR_RES_QUOTA_DENIED;
    else if (status == 422)
        rr = HR_RES_INVALID;
    else if (status == 409)
        rr = HR_RES_CONFLICT;
    else if (status == 404)
        rr = HR_RES_GONE;
    else
        rr = HR_RES_ERROR;
    atomic_fetch_add(&e->o.metrics->resizes[rr], 1);
    logf_(e, 1,
          "msg=\"resize refused\" pod=%s/%s from=%" PRId64 "m to=%" PRId64
          "m result=%s status=%ld error=\"%s\"",
          p->ns, p->name, a->current, a->target, hr_result_str(rr), status, err->msg);
    if (rr == HR_RES_QUOTA_DENIED || rr == HR_RES_INVALID) {
        /* Refusals that retrying cannot fix: back off, say it once (out of
         * memory: not parked, so tried again). */
        if (e->o.backoff != NULL)
            HR_IGNORE(hr_backoff_park(e->o.backoff, p->ns, p->name, rn->name, hr_mono_ms(),
                                      HR_BACKOFF_PERIOD_MS, hr_result_str(rr)));
        unsigned bit = rr == HR_RES_QUOTA_DENIED ? REP_FORBIDDEN : REP_INVALID;
        return report(e, key, bit, p, "Warning",
                      rr == HR_RES_QUOTA_DENIED ? "ResizeForbidden" : "ResizeSkipped", err->msg,
                      out) == REPORT_STOP;
    }
    if (rr == HR_RES_GONE) {
        hr_executor_forget_pod(e, p->ns, p->name, snap_uid(s, a->pod));
    } else if (rr == HR_RES_CONFLICT) {
        out->requeue_ms = 200; /* recompute from fresh state */
    } else {
        /* 429, 5xx, timeouts: the cache and the queue survive; the node
         * waits a growing, jittered while (design §7). */
        out->requeue_ms = hr_executor_write_refused(e, res->retry_after_ms);
        out->hold_ms = out->requeue_ms;
    }
    return false;
}

/* A resize (and, without a notes queue, its annotation and event), or a
 * dry-run annotation, or the annotation of a held write (HR_ACT_SKIP):
 * everything written for one pod in a wave. Returns
 * true when the wave must stop (shutdown, or leadership gone: nothing was
 * sent for what is left). */
static bool send_action(hr_executor *e, const hr_nodesnap *s, const hr_action *a, const char *key,
                        hr_exec_outcome *out)
{
    const hr_rnode *rn = &s->node;
    const hr_rpod *p = &rn->pods[a->pod];
    hr_err err;
    hr_err_clear(&err);
    hr_buf resp;
    hr_buf_init(&resp, 64u << 20);
    if (a->kind == HR_ACT_RESIZE) {
        char path[600];
        hr_kresult res = {0};
        snprintf(path, sizeof path, "/api/v1/namespaces/%s/pods/%s/resize", p->ns, p->name);
        hr_status st = hr_kclient_apply_as(e->o.client, path, HR_FIELD_MANAGER, true, accept(e),
                                           a->apply_body, strlen(a->apply_body), &resp, &res, &err);
        if (st == HR_E_CANCELED || st == HR_E_EXPIRED) {
            /* Nothing was sent: shutting down, or leadership went during
             * the limiter wait (requeued). */
            if (st == HR_E_EXPIRED)
                lease_lost(out);
            hr_buf_free(&resp);
            return true;
        }
        out->writes++;
        atomic_fetch_add(&e->o.metrics->writes[HR_WK_RESIZE], 1);
        if (st != HR_OK) {
            bool stop = resize_refused(e, s, a, key, &res, &err, out);
            hr_buf_free(&resp);
            return stop;
        }
        write_accepted(e);
        atomic_fetch_add(&e->o.metrics->resizes[HR_RES_APPLIED], 1);
        clear_reported(e, key,
                       REP_PRESSURE | REP_UNAVAILABLE | REP_ALLOCATABLE | REP_BOOKING_UNKNOWN |
                           REP_FORBIDDEN | REP_INVALID);
        logf_(e, 2, "msg=\"limit applied\" pod=%s/%s node=%s from=%" PRId64 "m to=%" PRId64 "m",
              p->ns, p->name, rn->name, a->current, a->target);
        if (e->notes != NULL) {
            /* Limits first (notes.h): the annotation and the event follow
             * in what the resizes leave of the write budget. */
            uint64_t rv = hr_answer_rv(&resp, res.protobuf);
            hr_buf_free(&resp);
            remember_rv(e, key, rv);
            hr_note n = {key, p->ns, p->name, a->status_patch, a->event_message};
            if (!hr_notes_put(e->notes, &n))
                logf_(e, 1, "msg=\"status note dropped: out of memory\" pod=%s/%s", p->ns, p->name);
            return false;
        }
    }
    hr_buf_free(&resp);
    hr_status ns = write_annotation(e, key, p->ns, p->name, a->status_patch, &out->writes);
    /* Dry-run held this resize: counted with the annotation that says
     * so, which is sent only when what it says changes (reconcile.c). */
    if (ns == HR_OK && a->kind == HR_ACT_ANNOTATE && a->held)
        atomic_fetch_add(&e->o.metrics->resizes[HR_RES_DRY_RUN], 1);
    if (ns == HR_E_CANCELED || ns == HR_E_EXPIRED) {
        if (ns == HR_E_EXPIRED)
            lease_lost(out); /* nothing was sent; requeued */
        return true;
    }
    if (a->kind == HR_ACT_RESIZE) {
        hr_status es = post_event(e, p, "Normal", "CPULimitAdjusted", a->event_message, out);
        if (es != HR_OK) {
            if (es == HR_E_EXPIRED)
                lease_lost(out); /* the limit is written; the rest waits */
            return true;
        }
    }
    return false;
}

/* The pool's item: one write, asked leadership and the stop flag again
 * when its turn comes (it may have waited behind others). */
static void send_job(void *ud, size_t i)
{
    wave *w = ud;
    hr_executor *e = w->e;
    wjob *j = &w->jobs[i];
    j->out = (hr_exec_outcome){.requeue_ms = -1};
    j->halted = true;
    if (atomic_load(&w->halt))
        return;
    if (!is_leader(e)) {
        lease_lost(&j->out);
        atomic_store(&w->halt, true);
        return;
    }
    if (e->o.stop != NULL && atomic_load(e->o.stop)) {
        atomic_store(&w->halt, true);
        return;
    }
    const hr_rpod *p = &w->s->node.pods[j->a->pod];
    char key[512];
    pod_key(key, sizeof key, p->ns, p->name, snap_uid(w->s, j->a->pod));
    bool claimed = pod_claim(e, key);
    j->halted = false;
    if (send_action(e, w->s, j->a, key, &j->out))
        atomic_store(&w->halt, true);
    if (claimed)
        pod_release(e, key);
}

/* The later requeue wins (a back-off is not cut short by a token wait). */
static void merge(hr_exec_outcome *out, const hr_exec_outcome *o)
{
    out->writes += o->writes;
    if (o->requeue_ms > out->requeue_ms)
        out->requeue_ms = o->requeue_ms;
    if (o->hold_ms > out->hold_ms)
        out->hold_ms = o->hold_ms;
    out->lease_lost = out->lease_lost || o->lease_lost;
}

/* One copy, so that the wave can tell the bucket's stop by its address. */
static const char held_rate_limit[] = HR_EXEC_HELD_RATE_LIMIT;

/* The checks of one action, in the wave's thread. Returns 1 when its write
 * goes to the pool, 0 when it is done (skipped, stale), -1 when the wave
 * stops here (no token, leadership gone, shutdown: what passed so far is
 * still sent unless out->lease_lost or the stop flag says otherwise).
 * *held (NULL on entry) gets why its write waits: the bucket
 * (held_rate_limit) or the live gate (hr_execute_held). */
static int check_action(hr_executor *e, const hr_nodesnap *s, const hr_action *a, bool *have_live,
                        bool *live_ok, hr_node *live, const char **held, hr_exec_outcome *out)
{
    const hr_rnode *rn = &s->node;
    if (!is_leader(e)) {
        lease_lost(out); /* stop at once; the rest of the wave is requeued */
        return -1;
    }
    if (e->o.stop != NULL && atomic_load(e->o.stop))
        return -1; /* shutting down */
    const hr_rpod *p = &rn->pods[a->pod];
    char key[512];
    pod_key(key, sizeof key, p->ns, p->name, snap_uid(s, a->pod));

    /* Never act on a cache older than our own last write to the pod. */
    pthread_mutex_lock(&e->mu);
    uint64_t *lw = hr_strmap_get(&e->last_rv, key);
    bool stale = lw != NULL && s->pod_rv[a->pod] < *lw;
    pthread_mutex_unlock(&e->mu);
    if (stale) {
        if (out->requeue_ms < 500)
            out->requeue_ms = 500;
        return 0;
    }
    if (a->kind == HR_ACT_SKIP) {
        if (!count_skip(e, p, key, a->gate, a->current, a->target, out))
            return -1;
        if (a->status_patch == NULL)
            return 0; /* the annotation already says why */
        /* else its annotation goes like a dry-run one: a token, the pool */
    }
    if (!take_node_token(e, rn->name)) {
        int pps = hr_executor_node_rate(e);
        int64_t wait = 1000 / (pps > 0 ? pps : 1) + 1;
        if (out->requeue_ms < wait)
            out->requeue_ms = wait;
        *held = held_rate_limit;
        return -1; /* the rest of the wave waits; nothing is dropped */
    }
    if (a->kind == HR_ACT_RESIZE && a->increase) {
        if (!*have_live) {
            *have_live = true;
            *live_ok = read_node_live(e, rn->name, live) == HR_OK;
            if (*live_ok)
                live->known = true;
        }
        /* The read was a wait: leadership may have gone meanwhile. */
        if (!is_leader(e)) {
            lease_lost(out);
            return -1;
        }
        hr_gate g = *live_ok ? hr_gate_check(live, a->current, a->target, pod_total_after(p, a))
                             : HR_GATE_UNAVAILABLE;
        if (g != HR_GATE_PASS) {
            *held = hr_gate_str(g);
            return count_skip(e, p, key, g, a->current, a->target, out) ? 0 : -1;
        }
    }
    return 1;
}

hr_status hr_execute(hr_executor *e, const hr_nodesnap *s, const hr_reconcile *r,
                     hr_exec_outcome *out, hr_err *err)
{
    return hr_execute_held(e, s, r, NULL, out, err);
}

hr_status hr_execute_held(hr_executor *e, const hr_nodesnap *s, const hr_reconcile *r,
                          const char **held, hr_exec_outcome *out, hr_err *err)
{
    (void)err; /* every failure is an outcome (design §7), logged */
    *out = (hr_exec_outcome){.requeue_ms = -1};
    const hr_rnode *rn = &s->node;

    /* Infeasible is the kubelet's word, found in the pod's status: park the
     * pod and say so once; its spec already holds the limit we asked for,
     * so nothing is retried in a loop. */
    for (size_t i = 0; i < rn->n; i++) {
        const hr_rpod *p = &rn->pods[i];
        char key[512];
        pod_key(key, sizeof key, p->ns, p->name, snap_uid(s, i));
        /* A pod we cannot read holds its node's increases (design §6):
         * said once on that pod, so its owner (or an operator) can act on
         * the one object at fault. One clear_reported a pod for both marks. */
        unsigned clear = p->resize != HR_RS_INFEASIBLE ? REP_INFEASIBLE : 0;
        if (p->pod.undecodable && !hr_pod_terminal(&p->pod)) {
            char note[400];
            snprintf(note, sizeof note,
                     "this pod's CPU requests could not be read, so no CPU limit on node %s is "
                     "raised until it is fixed or deleted (booking-unknown); the controller's "
                     "log and `headroom plan` name the field",
                     rn->name);
            if (report(e, key, REP_UNDECODABLE, p, "Warning", "Undecodable", note, out) ==
                REPORT_STOP)
                return HR_OK; /* lost the lease (requeued) or shutting down */
        } else {
            clear |= REP_UNDECODABLE;
        }
        /* A group above spec.maxGroupSize is refused whole (design §2.10):
         * said once on each member on this node, so the workload's owner
         * sees why its limits stay where they are. */
        if (p->pod.group_too_large && !hr_pod_terminal(&p->pod)) {
            char note[400];
            snprintf(note, sizeof note,
                     "this pod's group (kube-headroom.dev/group-uniform) has more members than "
                     "spec.maxGroupSize (%d), so none of its CPU limits is managed "
                     "(group-too-large); split the workload or raise the maximum",
                     s->cfg.max_group_size);
            if (report(e, key, REP_GROUP_TOO_LARGE, p, "Warning", "GroupTooLarge", note, out) ==
                REPORT_STOP)
                return HR_OK;
        } else {
            clear |= REP_GROUP_TOO_LARGE;
        }
        /* Another writer of its limits.cpu (design §4): we yield, and say
         * so once, naming it, so the owner knows who holds the field and
         * how to hand it back. */
        if (r->pods != NULL && r->pods[i].reason == HR_R_FOREIGN_WRITER &&
            p->pod.foreign_writer != NULL) {
            char note[600];
            if (hr_vpa_is_writer(p->pod.foreign_writer))
                snprintf(note, sizeof note,
                         "%s writes this pod's CPU limit (RequestsAndLimits), so kube-headroom "
                         "leaves it alone (foreign-writer); to hand it back, set its "
                         "controlledValues to RequestsOnly (or its updateMode to Off), or delete "
                         "it",
                         p->pod.foreign_writer);
            else
                snprintf(note, sizeof note,
                         "field manager \"%s\" writes this pod's CPU limit (resize), so "
                         "kube-headroom leaves it alone (foreign-writer); to hand it back, remove "
                         "that manager's entry from metadata.managedFields",
                         p->pod.foreign_writer);
            if (report(e, key, REP_FOREIGN_WRITER, p, "Warning", "ForeignWriter", note, out) ==
                REPORT_STOP)
                return HR_OK;
        } else {
            clear |= REP_FOREIGN_WRITER;
        }
        if (clear)
            clear_reported(e, key, clear);
        if (p->resize != HR_RS_INFEASIBLE)
            continue;
        /* (Out of memory: not parked, so looked at again on the next event.) */
        if (e->o.backoff != NULL &&
            !hr_backoff_active(e->o.backoff, p->ns, p->name, hr_mono_ms(), NULL))
            HR_IGNORE(hr_backoff_park(e->o.backoff, p->ns, p->name, rn->name, hr_mono_ms(),
                                      HR_BACKOFF_PERIOD_MS, "infeasible"));
        int said =
            report(e, key, REP_INFEASIBLE, p, "Warning", "ResizeInfeasible",
                   "the kubelet reports the CPU limit change as Infeasible; backing off", out);
        if (said == REPORT_STOP)
            return HR_OK; /* lost the lease (requeued) or shutting down */
        if (said == REPORT_SENT)
            atomic_fetch_add(&e->o.metrics->resizes[HR_RES_INFEASIBLE], 1);
    }
    if (r->n_actions == 0)
        return HR_OK;

    wave w = {.e = e, .s = s, .jobs = calloc(r->n_actions, sizeof *w.jobs)};
    if (w.jobs == NULL) {
        logf_(e, 0, "msg=\"wave not sent: out of memory\" node=%s", rn->name);
        out->requeue_ms = 1000; /* nothing sent; the node comes back */
        return HR_OK;
    }
    atomic_init(&w.halt, false);
    /* Limits first (notes.h): the wave's resizes are outstanding from now
     * until hr_execute returns — checks, queue, limiter, flight — and the
     * notes yield to them meanwhile. */
    int64_t urgent = 0;
    for (size_t i = 0; i < r->n_actions; i++)
        urgent += r->actions[i].kind == HR_ACT_RESIZE;
    if (urgent > 0 && e->o.client != NULL)
        (void)hr_kclient_urgent_writes(e->o.client, urgent);
    bool have_live = false, live_ok = false;
    hr_node live = {0};
    size_t n = 0, stopped = r->n_actions;
    const char *why = NULL; /* a held write's reason, from check_action */
    for (size_t i = 0; i < r->n_actions; i++) {
        why = NULL;
        int c = check_action(e, s, &r->actions[i], &have_live, &live_ok, &live, &why, out);
        if (held != NULL && why != NULL)
            held[r->actions[i].pod] = why;
        if (c < 0) {
            stopped = why == held_rate_limit ? i : r->n_actions;
            break;
        }
        if (c > 0)
            w.jobs[n++].a = &r->actions[i];
    }
    /* The node's bucket stopped the wave: the writes after it wait too. */
    for (size_t i = stopped; held != NULL && i < r->n_actions; i++)
        if (r->actions[i].kind != HR_ACT_SKIP)
            held[r->actions[i].pod] = held_rate_limit;
    /* A wave stopped by lost leadership or a shutdown sends nothing; one
     * stopped by the node's bucket sends what passed. */
    if (!out->lease_lost && !(e->o.stop != NULL && atomic_load(e->o.stop)))
        hr_wpool_run(e->pool, send_job, &w, n);
    else
        n = 0;
    for (size_t i = 0; i < n; i++)
        merge(out, &w.jobs[i].out);
    /* A refused write (429, 5xx, timeout) holds the node: its pod and
     * those halted behind it wait the back-off. */
    for (size_t i = 0; held != NULL && out->hold_ms > 0 && !out->lease_lost && i < n; i++)
        if (w.jobs[i].out.hold_ms > 0 || w.jobs[i].halted)
            held[w.jobs[i].a->pod] = HR_EXEC_HELD_ERROR;
    if (out->lease_lost)
        lease_lost(out);
    free(w.jobs);
    if (urgent > 0 && e->o.client != NULL && hr_kclient_urgent_writes(e->o.client, -urgent) == 0)
        hr_notes_wake(e->notes); /* the notes' turn */
    return HR_OK;
}
