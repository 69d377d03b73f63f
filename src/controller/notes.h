/*
 * notes.h — what describes a resize (its status annotation and its
 * CPULimitAdjusted event), sent after the resizes of a wave (limits
 * first: design §5, §9).
 *
 * The executor sends a wave's resizes at once and hands each pod's note
 * here; the senders (below) send the notes, each through the same client write
 * limiter, yielding to the resizes (hr_kclient_yield_claim_ns, the rule's
 * one home: limiter.h): while any resize is outstanding anywhere in the
 * controller — in a wave's checks, queued for the write pool, waiting for
 * its token or in flight (the executor counts them,
 * hr_kclient_urgent_writes) — only the notes' minimum share goes (one note
 * per HR_KLIMITER_YIELD_EVERY tokens' time: one a second at 50 QPS, so
 * endless churn never starves them); with none outstanding, a note goes
 * when the bucket holds a token beyond half its burst. So after a start
 * or a burst every limit is right after about (changed pods ÷ clientQPS)
 * seconds and the notes follow (clientQPS in all, as before). The
 * executor wakes the senders (hr_notes_wake) when its count drops to 0.
 * A pod's newer note replaces one not yet sent
 * (coalesced: the annotation says the latest, and only the latest change
 * gets its event), and the executor's sweep drops the notes of pods that
 * left the cache (hr_notes_sweep): the queue holds at most one note per
 * cached pod.
 *
 * A stop, or leadership lost, between a resize and its note drops the
 * note: the limit is right, the annotation still describes the previous
 * computation (or is absent) and that change has no event. The next
 * resize of that pod sends a fresh note (design §5 "Limits first").
 *
 * Contract: one mutex guards the queue; it is a leaf (the sender runs
 * outside it). hr_notes_put never blocks on I/O and may be called from any
 * worker. Idle: the threads sleep until a note comes.
 *
 * Senders: `senders` threads send notes at once (the controller starts as
 * many as it allows writes in flight: a note is two writes, and one sender
 * waiting for each answer would send (1 ÷ latency) a second, far below
 * clientQPS on a loaded API server). Each still takes its token as above.
 * A pod's notes never overlap: a note whose pod another sender holds waits
 * in the queue until that one is sent (and the executor keeps a note and a
 * resize of one pod apart, executor.h).
 */
#ifndef HR_CONTROLLER_NOTES_H
#define HR_CONTROLLER_NOTES_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "kube/transport/client.h"
#include "util/err.h"

typedef struct hr_note {
    const char *key; /* the executor's ns/name/uid key */
    const char *ns, *name;
    const char *patch; /* merge patch carrying the status annotation */
    const char *event; /* CPULimitAdjusted message; NULL: none */
} hr_note;

/* Sends one note (the executor's). Called on the notes thread, no lock
 * held. */
typedef void (*hr_note_send_fn)(void *ud, const hr_note *n);

typedef struct hr_notes hr_notes;

/* client may be NULL (tests: no pacing). senders: 1 to HR_NOTES_SENDERS_MAX
 * (clamped). */
#define HR_NOTES_SENDERS_MAX 64
HR_MUST_CHECK hr_status hr_notes_start(hr_kclient *client, hr_note_send_fn send, void *ud,
                                       int senders, hr_notes **out, hr_err *err);
/* Stop the thread (the note in hand is finished), drop what is queued. */
void hr_notes_stop(hr_notes *q);

/* Queue (a copy of) n, replacing a queued note with the same key.
 * Returns false when out of memory (the note is lost, as on a stop). */
bool hr_notes_put(hr_notes *q, const hr_note *n);

/* Notes queued and not yet taken by the thread. */
size_t hr_notes_pending(hr_notes *q);

/* Is the pod a queued note's key names still the pod it was? (The
 * executor's: cached, with the same uid.) Called under the queue's lock. */
typedef bool (*hr_notes_live_fn)(void *ud, const char *key);

/* Drop the queued notes whose pod is gone (live says no): each would be a
 * 404, and under endless churn, with the notes on their minimum share, the
 * notes of pods deleted before their turn would pile up for ever. Looks at
 * no more than budget entries, resuming where the last call stopped (each
 * full pass sees every entry queued before it began). The caller's locks
 * come first: this lock is a leaf. Returns how many were dropped. */
size_t hr_notes_sweep(hr_notes *q, hr_notes_live_fn live, void *ud, size_t budget);

/* Wake the senders to ask the limiter again (the last outstanding resize
 * was answered). q NULL: nothing. */
void hr_notes_wake(hr_notes *q);

/* hr_notes_stop has begun: no note is taken any more. For tests. */
bool hr_notes_stopping(hr_notes *q);

#endif
