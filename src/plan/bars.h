/*
 * bars.h — the picture of a node (`headroom node NODE` on a terminal,
 * `-o bars`): one bar per pod, scaled to the node's allocatable.
 *
 * A pod's bar starts with its request (█, ASCII #), then the part of its
 * ceiling above the request (▓, =): the target when the pod is planned,
 * else its current limit; then the rest of the node's slack (░, .) up to
 * request + slack, the most the pod could reach alone on the node; blank
 * is CPU other pods booked. The node's own bar is booked (█) then slack
 * (░). The request's end is drawn to an eighth of a column (▏▎▍▌▋▊▉);
 * ASCII rounds to whole columns. A value beyond allocatable is cut at the
 * bar's end, which then ends in '>'.
 *
 * Drawing is pure: figures in, text out, same figures same bytes. Which
 * characters and how wide is the caller's choice (util/term.h for a
 * terminal). docs/cli.md shows the picture.
 */
#ifndef HR_PLAN_BARS_H
#define HR_PLAN_BARS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "plan/render.h"
#include "util/buf.h"
#include "util/err.h"

/* One pod's figures, millicores. */
typedef struct hr_bars_pod {
    const char *ns, *name;
    bool known;      /* false: the pod could not be decoded: no bar, "?" */
    int64_t request; /* >= 0 */
    int64_t limit;   /* its limit now; 0: none */
    int64_t target;  /* HR_NONE: not planned (the bar draws the limit) */
} hr_bars_pod;

/* One node's figures. */
typedef struct hr_bars_node {
    const char *name;
    int64_t allocatable; /* <= 0: unknown (no bars are drawn) */
    int64_t booked, slack;
    const hr_bars_pod *pods;
    size_t n_pods;
} hr_bars_node;

/* The node's header, its bar, one line per pod, the legend. */
void hr_bars_draw(const hr_bars_node *n, const hr_bars_style *s, hr_buf *out);

/* hr_render for HR_RENDER_BARS: every shown node's picture (only_node's
 * alone), with the listed pods (render.h's filters). */
HR_MUST_CHECK hr_status hr_render_bars(const hr_plan *p, const hr_render_opts *o, hr_buf *out,
                                       hr_err *err);

#endif
