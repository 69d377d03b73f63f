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

/* Whether the annotation a fingerprint was taken of says a write is held. */
static inline bool hr_status_note_held(uint32_t h)
{
    return (h & HR_STATUS_NOTE_HELD) != 0;
}

#endif
