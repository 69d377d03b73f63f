/*
 * gates.h — capacity and pressure gates in the write path (design §6).
 *
 * Decreases always pass: they free capacity. An increase passes only on a
 * node that is known, has no DiskPressure or PIDPressure, and where the
 * pod's total CPU limit would still fit in allocatable. The controller calls
 * this twice: on the cached node while planning, and again on a freshly
 * read Node right before the write.
 */
#ifndef HR_CORE_GATES_H
#define HR_CORE_GATES_H

#include <stdbool.h>
#include <stdint.h>

typedef enum hr_gate {
    HR_GATE_PASS = 0,
    HR_GATE_PRESSURE,        /* DiskPressure or PIDPressure is True */
    HR_GATE_UNAVAILABLE,     /* the Node cannot be read */
    HR_GATE_ALLOCATABLE,     /* the pod's total limit would exceed allocatable */
    HR_GATE_NODE_UNKNOWN,    /* the Node is not in the cache: the pod is not planned
                             and gets no write in either direction (design §6);
                             set by hr_plan_node, never by hr_gate_check */
    HR_GATE_BOOKING_UNKNOWN, /* a pod the node holds (or may hold) could not be
                                decoded, so R is unknown: increases wait until
                                it decodes or is gone (design §6) */
    HR_GATE_COUNT_
} hr_gate;

/* "pass", "pressure", "unavailable", "allocatable", "node-unknown",
 * "booking-unknown": the metric label. */
const char *hr_gate_str(hr_gate g);

typedef struct hr_node {
    int64_t allocatable; /* millicores */
    bool known;          /* false: the Node object cannot be read */
    bool disk_pressure;
    bool pid_pressure;
    bool booking_unknown; /* some pod that may be bound here could not be
                             decoded (hr_plan_node also sets it for an
                             undecodable pod in its list): no increase */
} hr_node;

/* current: the pod's current managed limit (0 when some container has none,
 * which makes any write a decrease of an unbounded ceiling); target: the
 * limit to write; pod_total_limit: the whole pod's CPU limit after the write. */
hr_gate hr_gate_check(const hr_node *n, int64_t current, int64_t target, int64_t pod_total_limit);

#endif
