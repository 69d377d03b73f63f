/*
 * render.h — the planner's two output formats.
 *
 * JSON (for tools), exactly this shape, documented in the README:
 *   {"nodes":[{"name","allocatableMilli","bookedMilli","slackMilli",
 *     "managedRequestsMilli","factor","pods":[{"namespace","name",
 *     "requestMilli","limitMilli","targetMilli","write","managed",
 *     "reason"}]}]}
 * Table (for people): one block per node, readable at 120 columns.
 * Both are deterministic: same plan, same bytes.
 */
#ifndef HR_PLAN_RENDER_H
#define HR_PLAN_RENDER_H

#include "plan/planner.h"
#include "util/buf.h"
#include "util/err.h"

/* only_node: NULL for every node, else just that one (it must exist). */
HR_MUST_CHECK hr_status hr_render_json(const hr_plan *p, const char *only_node, hr_buf *out,
                                       hr_err *err);
HR_MUST_CHECK hr_status hr_render_table(const hr_plan *p, const char *only_node, hr_buf *out,
                                        hr_err *err);

/* "2.00": a x1000 factor rounded to two decimals (half up). */
void hr_factor_str(int64_t factor_milli, char *buf, size_t cap);

#endif
