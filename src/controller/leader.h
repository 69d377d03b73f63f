/*
 * leader.h — leader election on a coordination.k8s.io/v1 Lease (design §10).
 *
 * Every replica watches and serves; only the one holding the Lease writes.
 * Timings are client-go's: a 15 s lease, renewed every 2 s, and a leader
 * that could not renew for 10 s (the renew deadline) stops leading. A
 * follower takes over a Lease whose record has not changed for a whole
 * lease duration as measured on its own monotonic clock, so clock skew
 * between replicas does not matter. A replica that never saw the holder
 * renew (one version of the record since it began to look) waits half a
 * lease more (hr_leader_may_take): a standby that watched the leader's
 * last renewal goes first, not the crashed leader's own restarted
 * container, which started after the holder's last sign of life.
 *
 * "Leading" is not a flag the election thread sets and forgets: it is true
 * only while the last successful renewal is younger than the renew
 * deadline by the monotonic clock, and a failed renewal drops it at once.
 * A process frozen past its lease (SIGSTOP, a long GC-like stall) therefore
 * wakes up NOT leading, before its election thread has run again — no two
 * writers ever overlap. On shutdown the Lease is released so a successor
 * need not wait out the lease.
 */
#ifndef HR_CONTROLLER_LEADER_H
#define HR_CONTROLLER_LEADER_H

#include <stdbool.h>
#include <stdint.h>

#include "controller/ctllog.h"
#include "kube/transport/client.h"
#include "util/err.h"

typedef struct hr_leader hr_leader;

typedef struct hr_leader_opts {
    hr_kclient *client;
    const char *ns;         /* the controller's namespace */
    const char *name;       /* Lease name, e.g. "kube-headroom" */
    const char *identity;   /* unique per replica */
    long lease_ms;          /* <= 0: 15000 */
    long renew_deadline_ms; /* <= 0: 10000 */
    long retry_ms;          /* <= 0: 2000 */
    /* Called on the election thread when leadership is gained (e.g. to
     * reconcile every node) — including regained after the renew deadline
     * lapsed without the flag dropping (hr_leader_gained) — and lost. */
    void (*on_change)(void *ud, bool leading);
    void *ud;
    hr_log_sink log;
    void *log_ud;
} hr_leader_opts;

HR_MUST_CHECK hr_status hr_leader_start(const hr_leader_opts *o, hr_leader **out, hr_err *err);

/* May this replica write right now? Safe from any thread; cheap.
 * hr_leader_until_ms(leader) > hr_mono_ms(). NULL: true. */
bool hr_leader_leading(void *leader);

/* Until when (monotonic ms, util/clock.h) this replica may have a request
 * in flight: the start of the round of its last successful renewal plus
 * the renew deadline — below the lease duration, so nothing it sends
 * outlives the lease a follower waits out. 0 when not leading (a failed
 * renewal); NULL: HR_KUNTIL_NONE (no election, no bound). Its shape is
 * hr_kuntil_fn: the controller installs it as the client's write lease
 * (kube/transport/client.h) and bounds its reads with it. */
int64_t hr_leader_until_ms(void *leader);

/* The gain edge reported to on_change(true), pure for tests: leading
 * before (the flag was_flag and now_ms < until_before) was false, and
 * leading after a successful renewal (until_after > now_ms) is true. So a
 * renewal that succeeds after the renew deadline had lapsed is a gain —
 * every node is looked at again — and one that succeeds too late to lead
 * (until_after <= now_ms) is not yet. */
bool hr_leader_gained(bool was_flag, int64_t until_before, int64_t until_after, int64_t now_ms);

/* May a replica take a Lease held by someone else (design §10)? Yes when
 * it has no holder; else when the record has not changed for dur_ms by our
 * own clock (unchanged_ms) and, if we saw only one version of it for this
 * holder (versions_seen <= 1: we never saw the holder alive), for
 * dur_ms + dur_ms / 2. Pure, for tests. */
bool hr_leader_may_take(bool has_holder, int64_t unchanged_ms, long dur_ms, int versions_seen);

/* Stop and join the election thread: once this returns, on_change is
 * never called again. The Lease is neither renewed nor released, so
 * "leading" lapses by the clock (the renew deadline) unless hr_leader_stop
 * releases it first. Shutdown calls this before freeing what on_change
 * reaches (the controller), and hr_leader_stop only once nothing can write
 * any more. Safe to call twice; NULL is a no-op. */
void hr_leader_halt(hr_leader *l);

/* hr_leader_halt if not done yet, then, when leading, release the Lease,
 * and free. */
void hr_leader_stop(hr_leader *l);

#endif
