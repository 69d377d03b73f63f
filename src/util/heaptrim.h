/*
 * heaptrim.h — give the heap's free pages back to the system after a burst
 * of work.
 *
 * glibc keeps what a burst freed inside its arenas: after the controller
 * converges 3,000 pods, 11 MB taken from the system hold 6.3 MB in use,
 * and the difference stays resident (bench/JOURNAL.md#rss-libraries).
 * malloc_trim(0) returns the free whole pages. It is called where a burst
 * is known to have ended — the notes queue, the last of a wave's writes,
 * has just emptied — and only after enough work for there to be something
 * to return, so a trickle of notes under churn trims now and then, not at
 * every one, and a quiet daemon never (design §5: idle means idle).
 *
 * Process-wide, as the heap is: one counter, atomic. Thread-safe.
 */
#ifndef HR_UTIL_HEAPTRIM_H
#define HR_UTIL_HEAPTRIM_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* Work done since the last trim (writes sent) before a burst's end trims. */
#define HR_HEAPTRIM_WORK 100

/* A burst of `work` units just ended: trims once HR_HEAPTRIM_WORK units
 * have ended since the last trim. Returns whether it trimmed. */
bool hr_heaptrim_after(size_t work);

/* Trims done in this process (for tests). */
uint64_t hr_heaptrim_count(void);

#endif
