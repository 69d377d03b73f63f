/*
 * statusnote.h — a managed pod's status annotation (kube-headroom.dev/status,
 * design §7) read back: what `headroom explain` prints to a tenant who can
 * read the pod but not its node or its neighbours.
 *
 * Version 1 carries the node's figures only (factor, slack, managedRequests,
 * nodePods, computedAt, policy, dryRun); version 2 adds the node's A, R and
 * N, the pod's own arithmetic (request, floor, burst, target and the
 * per-container split), the caps and the one that binds, and the reason a
 * write is held (every key: design §9.1).
 * A key of version 2 makes the note version 2; any missing figure stays
 * HR_NONE (numbers) or "" (words), so a partial note prints what it has.
 */
#ifndef HR_KUBE_DECODE_STATUSNOTE_H
#define HR_KUBE_DECODE_STATUSNOTE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "util/arena.h"
#include "util/err.h"

/* The schema's bound: at most 32 containers in "limits". */
#define HR_KNOTE_LIMITS_MAX 32

/* "caps": every bound that applies, by its kind in the annotation. */
typedef enum hr_knote_cap {
    HR_KNOTE_CAP_MULTIPLIER,
    HR_KNOTE_CAP_ALLOCATABLE,
    HR_KNOTE_CAP_MAX_CPU,
    HR_KNOTE_CAP_LIMITRANGE,
    HR_KNOTE_CAP_COUNT_
} hr_knote_cap;

/* The annotation's word for a cap kind ("multiplier", "max-cpu", ...). */
const char *hr_knote_cap_str(hr_knote_cap k);

typedef struct hr_knote_limit {
    const char *container; /* a DNS label */
    int64_t milli;
} hr_knote_limit;

/* Millicores, HR_NONE when absent; counts -1 when absent; words "" when
 * absent, else a token of [a-z0-9.-] (cap, reason, policy) or of RFC 3339's
 * characters (computedAt), so that printing one to a terminal is safe. */
typedef struct hr_knote {
    int version;          /* 1 or 2 */
    int64_t factor_milli; /* "factor" × 1000 */
    int64_t slack, managed_requests;
    int64_t node_pods;
    int64_t allocatable, booked, managed_pods; /* v2: A, R, N */
    int64_t request, floor, burst;             /* v2: the pod's r, floor, burst */
    int64_t target_limit;                      /* v2: the pod's total target */
    size_t n_limits;                           /* v2: "limits", in order */
    hr_knote_limit limits[HR_KNOTE_LIMITS_MAX];
    int64_t limits_omitted; /* -1 when absent */
    const char *cap;        /* "multiplier" ... "none"; "" when absent */
    int64_t cap_limit;
    int64_t caps[HR_KNOTE_CAP_COUNT_]; /* HR_NONE: that bound does not apply */
    const char *reason;                /* "" when no write is held */
    const char *computed_at, *policy;
    int dry_run; /* 0, 1; -1 when absent */
} hr_knote;

/* The annotation's text (len bytes, JSON) into *out, strings copied into a;
 * ns/name only name the pod in error messages ("status annotation of pod
 * NS/NAME: FIELD: ..."). HR_E_INPUT for text that is not one JSON object,
 * for a field of the wrong type or a quantity that does not parse, for more
 * than HR_KNOTE_LIMITS_MAX containers and for a word outside its alphabet;
 * HR_E_NOMEM when a cannot grow. Unknown keys are skipped (a later version
 * may add some). */
HR_MUST_CHECK hr_status hr_decode_status_note(const char *text, size_t len, const char *ns,
                                              const char *name, hr_arena *a, hr_knote *out,
                                              hr_err *err);

#endif
