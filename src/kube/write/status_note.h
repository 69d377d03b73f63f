/*
 * status_note.h — a fingerprint of the kube-headroom.dev/status annotation.
 *
 * The controller writes the annotation only when what it says changes, and
 * the cache cannot afford to keep every pod's annotation text (design §16:
 * 256 bytes a pod). So the cache keeps 32 bits: a hash of the annotation
 * with its computedAt value left out (the time changes on every
 * computation; the numbers do not). 0 means "no annotation".
 *
 * Its lowest bit (HR_STATUS_NOTE_HELD) is not hashed: it says whether the
 * annotation carries a "reason" — a write a gate held (design §9.1) — so
 * the planner can rewrite a stale one once the gate clears, even when the
 * new target falls within the deadband and nothing else would be written.
 */
#ifndef HR_KUBE_STATUS_NOTE_H
#define HR_KUBE_STATUS_NOTE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define HR_STATUS_NOTE_HELD 1u

uint32_t hr_status_note_hash(const char *s, size_t len);

/* What a dry-run compares before it rewrites a note (controller/
 * reconcile.c): the annotation's targetLimit and whether it says dryRun,
 * 32 bits for the cache beside the fingerprint. Bit 31: "dryRun":true;
 * bits 0-30: the target in millicores plus one, saturated; 0 there: no
 * target (no annotation, a version 1 note, a booking-unknown one, or a
 * figure that is not our "<digits>m"). A tenant who edits the annotation
 * changes only what the controller compares for that one pod. */
#define HR_STATUS_MARK_DRY 0x80000000u

uint32_t hr_status_note_mark(const char *s, size_t len);

/* The marked target in millicores; false when the note has none. */
static inline bool hr_status_mark_target(uint32_t m, int64_t *milli)
{
    uint32_t v = m & ~HR_STATUS_MARK_DRY;
    if (v == 0)
        return false;
    *milli = (int64_t)v - 1;
    return true;
}

static inline bool hr_status_mark_dry(uint32_t m)
{
    return (m & HR_STATUS_MARK_DRY) != 0;
}

/* Whether the annotation a fingerprint was taken of says a write is held. */
static inline bool hr_status_note_held(uint32_t h)
{
    return (h & HR_STATUS_NOTE_HELD) != 0;
}

#endif
