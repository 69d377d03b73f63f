/*
 * leader.c — the election loop (leader.h).
 */
#include "leader.h"

#include <pthread.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "controller/ctllog.h"
#include "kube/ktime.h"
#include "kube/write/lease.h"
#include "util/clock.h"
#include "util/tname.h"
#include "util/waker.h"

struct hr_leader {
    hr_leader_opts o;
    char ns[256], name[256], id[256];
    pthread_t thread;
    bool started;
    atomic_bool stop;
    hr_waker wake;                      /* the sleep between rounds; hr_leader_halt stops it */
    atomic_bool leading;                /* the flag; see valid_until */
    atomic_int_fast64_t valid_until_ms; /* monotonic: last renewal + renew deadline */
    /* Follower's view of the record, to judge expiry on our own clock. */
    char seen_rv[64];
    int64_t seen_at_ms;
    char seen_holder[256]; /* whose record seen_rv is */
    int seen_versions;     /* versions of seen_holder's record seen: 1 = never saw it renew */
    hr_klease held;        /* the record as we last wrote it */
};

#define llog(l, level, ...) hr_ctl_logf((l)->o.log, (l)->o.log_ud, "leader", (level), __VA_ARGS__)

int64_t hr_leader_until_ms(void *ud)
{
    hr_leader *l = ud;
    if (l == NULL)
        return HR_KUNTIL_NONE;
    return atomic_load(&l->leading) ? atomic_load(&l->valid_until_ms) : 0;
}

bool hr_leader_leading(void *ud)
{
    return hr_leader_until_ms(ud) > hr_mono_ms();
}

bool hr_leader_may_take(bool has_holder, int64_t unchanged_ms, long dur_ms, int versions_seen)
{
    if (!has_holder)
        return true;
    int64_t wait = dur_ms;
    if (versions_seen <= 1)
        wait += dur_ms / 2;
    return unchanged_ms >= wait;
}

bool hr_leader_gained(bool was_flag, int64_t until_before, int64_t until_after, int64_t now_ms)
{
    bool before = was_flag && now_ms < until_before;
    return !before && until_after > now_ms;
}

/* A successful acquire or renewal (on) whose round began at renewed_at, or
 * a loss (off). "Leading" is the flag AND the clock (leader.h), so the edge
 * reported to on_change is that of the pair: a renewal that came back
 * after the renew deadline had passed is a new term — nodes skipped in the
 * lapse are looked at again — even though the flag never dropped. */
static void set_leading(hr_leader *l, bool on, int64_t renewed_at)
{
    bool was = atomic_load(&l->leading);
    int64_t before = atomic_load(&l->valid_until_ms);
    int64_t until = on ? renewed_at + l->o.renew_deadline_ms : before;
    if (on)
        atomic_store(&l->valid_until_ms, until);
    atomic_store(&l->leading, on);
    int64_t now = hr_mono_ms();
    if (on && hr_leader_gained(was, before, until, now)) {
        llog(l, HR_LV_INFO, "msg=\"%s\" lease=%s/%s identity=%s",
             was ? "leading again after the renew deadline lapsed" : "became leader", l->ns,
             l->name, l->id);
        if (l->o.on_change)
            l->o.on_change(l->o.ud, true);
    } else if (!on && was) {
        llog(l, HR_LV_INFO, "msg=\"stopped leading\" lease=%s/%s identity=%s", l->ns, l->name,
             l->id);
        if (l->o.on_change)
            l->o.on_change(l->o.ud, false);
    }
}

/* A new version of the Lease record (read, or written by us) seen at
 * at_ms: the follower's clock for expiry starts again, and the versions
 * seen of this holder's record count up (two: we saw it renew). */
static void saw(hr_leader *l, const hr_klease *rec, int64_t at_ms)
{
    snprintf(l->seen_rv, sizeof l->seen_rv, "%s", rec->rv);
    l->seen_at_ms = at_ms;
    if (strcmp(rec->holder, l->seen_holder) != 0) {
        snprintf(l->seen_holder, sizeof l->seen_holder, "%s", rec->holder);
        l->seen_versions = 0;
    }
    if (l->seen_versions < 2)
        l->seen_versions++;
}

/* A leader's renewal without reading the Lease first (client-go's fast
 * path): the Lease is as our last write left it unless someone else wrote
 * it since, and then the PUT, which carries our last write's
 * resourceVersion, is refused with 409. One request a renewal instead of a
 * GET and a PUT. Any failure returns false and the round goes the long way
 * (GET, then decide), so a conflict or a lost connection is judged exactly
 * as before. */
static bool renew_held(hr_leader *l, int64_t t0)
{
    if (l->held.rv[0] == '\0' || strcmp(l->held.holder, l->id) != 0)
        return false;
    hr_klease want = l->held;
    want.duration_s = l->o.lease_ms / 1000;
    want.renew_us = hr_ktime_now_us();
    hr_klease got;
    hr_kresult res = {0};
    hr_err err;
    if (hr_klease_update(l->o.client, l->ns, l->name, &want, &got, &res, &err) != HR_OK) {
        llog(l, HR_LV_DEBUG, "msg=\"renewal without a read refused, reading the lease\" status=%ld",
             res.status);
        return false;
    }
    l->held = got;
    saw(l, &got, hr_mono_ms());
    set_leading(l, true, t0);
    return true;
}

/* One round: acquire, renew, or observe. */
static void round_once(hr_leader *l)
{
    hr_kresult res = {0};
    hr_err err;
    int64_t t0 = hr_mono_ms();
    if (atomic_load(&l->leading) && t0 >= atomic_load(&l->valid_until_ms)) {
        /* The renew deadline passed without a renewal (a slow or stalled
         * API server): writing stopped then, by the clock; say so. */
        llog(l, HR_LV_WARN, "msg=\"renew deadline passed, not leading\" lease=%s/%s", l->ns,
             l->name);
        set_leading(l, false, 0);
    }
    if (atomic_load(&l->leading) && renew_held(l, t0))
        return;
    hr_klease cur;
    hr_status st = hr_klease_get(l->o.client, l->ns, l->name, &cur, &res, &err);
    int64_t now_us = hr_ktime_now_us();

    if (st == HR_E_NOTFOUND || (st != HR_OK && res.status == 404)) {
        hr_klease want = {0};
        snprintf(want.holder, sizeof want.holder, "%s", l->id);
        want.duration_s = l->o.lease_ms / 1000;
        want.acquire_us = want.renew_us = now_us;
        hr_klease got;
        if (hr_klease_create(l->o.client, l->ns, l->name, &want, &got, &res, &err) == HR_OK) {
            l->held = got;
            set_leading(l, true, t0);
        }
        return;
    }
    if (st != HR_OK) {
        /* Cannot read the Lease: a leader that cannot renew stops now. */
        if (atomic_load(&l->leading)) {
            llog(l, HR_LV_WARN, "msg=\"lease unreadable, stepping down\" status=%ld error=\"%s\"",
                 res.status, err.msg);
            set_leading(l, false, 0);
        }
        return;
    }
    if (strcmp(cur.rv, l->seen_rv) != 0)
        saw(l, &cur, t0);
    bool mine = strcmp(cur.holder, l->id) == 0;
    long dur_ms = (cur.duration_s > 0 ? cur.duration_s * 1000 : l->o.lease_ms);
    bool expired =
        hr_leader_may_take(cur.holder[0] != '\0', t0 - l->seen_at_ms, dur_ms, l->seen_versions);
    if (!mine && !expired) {
        if (atomic_load(&l->leading))
            set_leading(l, false, 0);
        return;
    }
    hr_klease want = cur;
    if (!mine) {
        snprintf(want.holder, sizeof want.holder, "%s", l->id);
        want.acquire_us = now_us;
        want.transitions = cur.transitions + 1;
    }
    want.duration_s = l->o.lease_ms / 1000;
    want.renew_us = now_us;
    hr_klease got;
    if (hr_klease_update(l->o.client, l->ns, l->name, &want, &got, &res, &err) == HR_OK) {
        l->held = got;
        saw(l, &got, hr_mono_ms());
        set_leading(l, true, t0);
    } else if (atomic_load(&l->leading)) {
        /* design §10: stop writing as soon as a renewal fails. */
        llog(l, HR_LV_WARN, "msg=\"lease renewal failed, stepping down\" status=%ld error=\"%s\"",
             res.status, err.msg);
        set_leading(l, false, 0);
    }
}

static void *leader_main(void *ud)
{
    hr_leader *l = ud;
    hr_thread_name("hr-leader");
    /* One round every retry period (2 s by default, as client-go's
     * RetryPeriod): the one wakeup a quiet daemon keeps, and only with
     * --leader-elect. Between rounds it sleeps until the next is due or a
     * halt stops it. */
    while (!atomic_load(&l->stop)) {
        int64_t next = hr_mono_ns() + (int64_t)l->o.retry_ms * 1000000;
        round_once(l);
        if (!hr_waker_wait(&l->wake, next))
            break;
    }
    return NULL;
}

hr_status hr_leader_start(const hr_leader_opts *o, hr_leader **out, hr_err *err)
{
    hr_leader *l = calloc(1, sizeof *l);
    if (l == NULL)
        return hr_err_set(err, HR_E_NOMEM, "leader election: out of memory");
    l->o = *o;
    if (l->o.lease_ms <= 0)
        l->o.lease_ms = 15000;
    if (l->o.renew_deadline_ms <= 0)
        l->o.renew_deadline_ms = 10000;
    if (l->o.retry_ms <= 0)
        l->o.retry_ms = 2000;
    snprintf(l->ns, sizeof l->ns, "%s", o->ns);
    snprintf(l->name, sizeof l->name, "%s", o->name);
    snprintf(l->id, sizeof l->id, "%s", o->identity);
    l->o.ns = l->ns;
    l->o.name = l->name;
    l->o.identity = l->id;
    atomic_init(&l->stop, false);
    atomic_init(&l->leading, false);
    atomic_init(&l->valid_until_ms, 0);
    if (hr_waker_init(&l->wake) != 0) {
        free(l);
        return hr_err_set(err, HR_E_NOMEM, "leader election: cannot create a lock");
    }
    if (pthread_create(&l->thread, NULL, leader_main, l) != 0) {
        hr_waker_destroy(&l->wake);
        free(l);
        return hr_err_set(err, HR_E_NOMEM, "leader election: cannot start its thread");
    }
    l->started = true;
    *out = l;
    return HR_OK;
}

void hr_leader_halt(hr_leader *l)
{
    if (l == NULL)
        return;
    atomic_store(&l->stop, true);
    hr_waker_stop(&l->wake);
    if (l->started)
        pthread_join(l->thread, NULL);
    l->started = false;
}

void hr_leader_stop(hr_leader *l)
{
    if (l == NULL)
        return;
    hr_leader_halt(l);
    if (atomic_load(&l->leading)) {
        /* Release: an empty holder lets a successor take over at once. */
        atomic_store(&l->leading, false);
        hr_klease want = l->held;
        want.holder[0] = '\0';
        want.duration_s = 1;
        want.renew_us = hr_ktime_now_us();
        hr_kresult res = {0};
        hr_err err;
        if (hr_klease_update(l->o.client, l->ns, l->name, &want, NULL, &res, &err) == HR_OK)
            llog(l, HR_LV_INFO, "msg=\"lease released\" lease=%s/%s", l->ns, l->name);
        else
            llog(l, HR_LV_WARN, "msg=\"lease not released\" status=%ld error=\"%s\"", res.status,
                 err.msg);
    }
    hr_waker_destroy(&l->wake);
    free(l);
}
