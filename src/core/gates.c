/*
 * gates.c — design §6. The gates only ever stop increases: a decrease frees
 * capacity, so refusing one could only make a stressed node worse.
 */
#include "gates.h"

#include <stddef.h>

const char *hr_gate_str(hr_gate g)
{
    switch (g) {
    case HR_GATE_PASS: return "pass";
    case HR_GATE_PRESSURE: return "pressure";
    case HR_GATE_UNAVAILABLE: return "unavailable";
    case HR_GATE_ALLOCATABLE: return "allocatable";
    case HR_GATE_NODE_UNKNOWN: return "node-unknown";
    case HR_GATE_BOOKING_UNKNOWN: return "booking-unknown";
    case HR_GATE_COUNT_: break;
    }
    return "unknown";
}

hr_gate hr_gate_check(const hr_node *n, int64_t current, int64_t target, int64_t pod_total_limit)
{
    /* No current limit means an unbounded ceiling: any limit lowers it. */
    bool increase = current > 0 && target > current;
    if (!increase)
        return HR_GATE_PASS;
    if (n == NULL || !n->known)
        return HR_GATE_UNAVAILABLE;
    if (n->booking_unknown)
        return HR_GATE_BOOKING_UNKNOWN;
    if (n->disk_pressure || n->pid_pressure)
        return HR_GATE_PRESSURE;
    if (pod_total_limit > n->allocatable)
        return HR_GATE_ALLOCATABLE;
    return HR_GATE_PASS;
}
