/*
 * explain_throttle.h — `headroom explain POD --prometheus URL [--since 1h]`
 * (design §9.7): was the pod throttled, at which ceiling, was that ceiling
 * its node's slack share or a cap, and what request would have given it the
 * CPU it wanted — from the kernel's CFS counters as the kubelet's cAdvisor
 * exports them and the controller's own series, both read from Prometheus.
 */
#ifndef HR_CMD_EXPLAIN_THROTTLE_H
#define HR_CMD_EXPLAIN_THROTTLE_H

#include <stdint.h>

#include "cmd/output.h"

typedef struct hr_throttle_opts {
    const char *url;    /* Prometheus' base URL (…/api/v1/query_range is added) */
    const char *ca;     /* PEM to verify it against, or NULL */
    const char *bearer; /* a bearer token file for it, or NULL */
    long window_s;      /* --since */
    int64_t end;        /* the window's end, Unix seconds */
    long timeout_ms;    /* per request; 0: 10 s */
} hr_throttle_opts;

/* The pod now: its node, its managed request and the maxMultiplier of the
 * node's config (x1000; 0: none). */
typedef struct hr_throttle_pod {
    const char *ns, *name, *node;
    int64_t request;
    int64_t max_multiplier_milli;
} hr_throttle_pod;

/* Queries Prometheus and prints the view as fmt says. HR_EXIT_OK, or
 * HR_EXIT_INPUT with the reason on stderr (Prometheus unreachable, or it
 * holds no CFS series of the pod). */
int hr_explain_throttle(const hr_throttle_opts *o, const hr_throttle_pod *p, const hr_output *fmt);

#endif
