/*
 * status_note.h — a fingerprint of the kube-headroom.dev/status annotation.
 *
 * The controller writes the annotation only when what it says changes, and
 * the cache cannot afford to keep every pod's annotation text (design §16:
 * 256 bytes a pod). So the cache keeps 32 bits: a hash of the annotation
 * with its computedAt value left out (the time changes on every
 * computation; the numbers do not). 0 means "no annotation".
 */
#ifndef HR_KUBE_STATUS_NOTE_H
#define HR_KUBE_STATUS_NOTE_H

#include <stddef.h>
#include <stdint.h>

uint32_t hr_status_note_hash(const char *s, size_t len);

#endif
