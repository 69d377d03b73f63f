/*
 * lselector.h — a label selector in kubectl's string form (`-l`), into the
 * core's hr_selector (core/selector.h) so that one evaluator serves both
 * it and the HeadroomConfig's metav1.LabelSelector.
 *
 *   a=b, a==b, a!=b, a, !a, a in (x,y), a notin (x,y), comma-separated
 *
 * A requirement a!=b matches a pod without a, as Kubernetes has it.
 */
#ifndef HR_KUBE_LSELECTOR_H
#define HR_KUBE_LSELECTOR_H

#include "core/selector.h"
#include "util/arena.h"
#include "util/err.h"

/* Parse s into *out (allocations in a; strings are copied). HR_E_INPUT
 * with a message naming the offending part on bad syntax. "" selects
 * everything. */
HR_MUST_CHECK hr_status hr_lselector_parse(const char *s, hr_arena *a, hr_selector *out,
                                           hr_err *err);

#endif
