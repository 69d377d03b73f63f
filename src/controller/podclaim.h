/*
 * podclaim.h — per pod, one write in flight at a time (design §5 "Writes
 * in flight").
 *
 * The executor writes a pod from three places that run on different
 * threads: a wave's write (the write pool), the pod's status annotation
 * (the annotations' senders, notes.h) and its CPULimitAdjusted event (the
 * events' senders). Each claims the pod's key ("ns/name/uid") for the
 * length of its write and releases it after: a second writer of the same
 * pod waits until the first is answered, so no two writes for one pod are
 * ever in flight at once and a pod's writes keep their order.
 *
 * Contract: one mutex guards the set of claimed keys and is a leaf (a
 * claim is taken with no other lock held and nothing is called under it);
 * a release wakes every waiter (they are few: at most one per writer
 * thread). Out of memory a claim is refused, not waited for: the write
 * goes unclaimed (at worst two in flight for that pod, as before claims).
 */
#ifndef HR_CONTROLLER_PODCLAIM_H
#define HR_CONTROLLER_PODCLAIM_H

#include <pthread.h>
#include <stdbool.h>

#include "util/err.h"
#include "util/strmap.h"

typedef struct hr_podclaims {
    pthread_mutex_t mu;
    pthread_cond_t cv; /* with mu: a key was released */
    hr_strmap busy;    /* under mu: the claimed keys */
} hr_podclaims;

/* 0, or the error number of the pthread call that failed (nothing to
 * destroy then). */
HR_MUST_CHECK int hr_podclaims_init(hr_podclaims *c);
/* No claim may be held or waited for. */
void hr_podclaims_destroy(hr_podclaims *c);

/* The key is the caller's until hr_podclaims_release: waits while another
 * writer holds it. False (out of memory): not claimed, and not to be
 * released. */
bool hr_podclaims_take(hr_podclaims *c, const char *key);
void hr_podclaims_release(hr_podclaims *c, const char *key);

#endif
