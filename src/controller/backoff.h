/*
 * backoff.h — pods the controller must leave alone for a while (design §7).
 *
 * A resize the kubelet calls Infeasible, or the API server refuses with 403
 * (a limits.cpu quota) or 422 (invalid), is not retried on the next event:
 * the pod is parked for backoffPeriod (60 s) and counts as ineligible with
 * reason "backoff". Infeasible survives a restart: it is in the pod's
 * status, and the controller parks every cached Infeasible pod once the
 * caches have synced and at each gain of leadership, before the first plan
 * (controller.c). What the API server said (403, 422) a restart forgets, at
 * the cost of one more refused write per pod.
 */
#ifndef HR_CONTROLLER_BACKOFF_H
#define HR_CONTROLLER_BACKOFF_H

#include <stdbool.h>
#include <stdint.h>

#include "util/err.h"

#define HR_BACKOFF_PERIOD_MS 60000

typedef struct hr_backoff hr_backoff;

HR_MUST_CHECK hr_status hr_backoff_new(hr_backoff **out, hr_err *err);
void hr_backoff_free(hr_backoff *b);

/* Park pod ns/name, bound to node (NULL: not known), until now + period_ms.
 * reason is a static string ("infeasible", "quota-denied", "invalid") kept
 * for explain. */
HR_MUST_CHECK hr_status hr_backoff_park(hr_backoff *b, const char *ns, const char *name,
                                        const char *node, int64_t now_ms, int64_t period_ms,
                                        const char *reason);

/* Is the pod parked at now? *reason (may be NULL) gets why. */
bool hr_backoff_active(hr_backoff *b, const char *ns, const char *name, int64_t now_ms,
                       const char **reason);

/* The pod is gone (404, deleted): drop it. */
void hr_backoff_forget(hr_backoff *b, const char *ns, const char *name);

/* Drop entries that expired before now; returns how many remain. For each
 * dropped entry with a node, expired(ud, node) is called once the table's
 * lock is released (expired may be NULL): the pod is eligible again and its
 * node is looked at again then, not at some later event (design §7). */
typedef void (*hr_backoff_expired_fn)(void *ud, const char *node);
size_t hr_backoff_prune(hr_backoff *b, int64_t now_ms, hr_backoff_expired_fn expired, void *ud);

/* The earliest moment an entry expires (monotonic ms), -1 when none: the
 * feeder prunes then, and sleeps otherwise. */
int64_t hr_backoff_next_expiry(hr_backoff *b);

/* How many times an entry was parked or removed: a plan that read the
 * table (hr_nodesnap) still holds while this has not moved and no entry
 * expired (controller/nodememo.h bounds its age instead). */
uint64_t hr_backoff_changes(hr_backoff *b);

#endif
