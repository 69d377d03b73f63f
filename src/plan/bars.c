/*
 * bars.c — the picture of a node: figures in, text out (bars.h).
 *
 * Positions are counted in eighths of a column: value v of a node of
 * allocatable A on a bar of B columns ends at round(v · 8B / A). The
 * request's end is drawn to the eighth (a partial block); the ceiling's
 * and the slack's to the column whose middle they pass, as ASCII draws
 * every end. No colour: the characters carry the meaning.
 */
#include "plan/bars.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/eligibility.h"
#include "core/gates.h"
#include "core/policy.h"
#include "core/wide.h"

#define LABEL_MIN 6  /* "(node)" */
#define LABEL_MAX 40 /* a longer name goes on a line of its own */
#define BAR_MIN 10
#define FIGURES 25 /* "  %7s %7s %7s" */

/* UTF-8 of █ ▓ ░ and of the left eighths ▏▎▍▌▋▊▉ (1/8 to 7/8). */
#define FULL "\xe2\x96\x88"
#define DARK "\xe2\x96\x93"
#define LIGHT "\xe2\x96\x91"
static const char *const eighth[8] = {
    " ",
    "\xe2\x96\x8f",
    "\xe2\x96\x8e",
    "\xe2\x96\x8d",
    "\xe2\x96\x8c",
    "\xe2\x96\x8b",
    "\xe2\x96\x8a",
    "\xe2\x96\x89",
};

static const char *milli(char *buf, size_t cap, int64_t v)
{
    snprintf(buf, cap, "%" PRId64 "m", v);
    return buf;
}

/* Where v ends, in eighths of a column, on a bar of cols columns scaled to
 * a: v clamped to [0, a], rounded half up. */
static int64_t eighths(int64_t v, int64_t a, int cols)
{
    v = v < 0 ? 0 : v > a ? a : v;
    return (hr_muldiv64(v, 16 * (int64_t)cols, a) + 1) / 2;
}

/* One bar: [0, req) request, up to ceil the ceiling, up to room the slack,
 * the rest blank; '>' in the last column when a value passes allocatable. */
static void draw_bar(hr_buf *b, const hr_bars_style *s, int cols, int64_t a, int64_t req,
                     int64_t ceil, int64_t room)
{
    if (a <= 0) {
        hr_buf_fill(b, ' ', (size_t)cols);
        return;
    }
    ceil = ceil < req ? req : ceil;
    room = room < ceil ? ceil : room;
    int64_t ra = eighths(req, a, cols), rb = eighths(ceil, a, cols), rc = eighths(room, a, cols);
    bool over = room > a;
    for (int j = 0; j < cols; j++) {
        int64_t lo = 8 * (int64_t)j, mid = lo + 4;
        if (over && j == cols - 1)
            hr_buf_putc(b, '>');
        else if (!s->unicode)
            hr_buf_putc(b, mid < ra ? '#' : mid < rb ? '=' : mid < rc ? '.' : ' ');
        else if (lo + 8 <= ra)
            hr_buf_puts(b, FULL);
        else if (lo < ra)
            hr_buf_puts(b, eighth[ra - lo]);
        else
            hr_buf_puts(b, mid < rb ? DARK : mid < rc ? LIGHT : " ");
    }
}

/* The label column: the name, padded; a name wider than the column gets
 * a line of its own and the bar starts on the next. */
static void label(hr_buf *b, const char *ns, const char *name, int w)
{
    size_t l = (ns ? strlen(ns) + 1 : 0) + strlen(name);
    hr_buf_printf(b, "  %s%s%s", ns ? ns : "", ns ? "/" : "", name);
    if (l > (size_t)w) {
        hr_buf_puts(b, "\n  ");
        l = 0;
    }
    hr_buf_fill(b, ' ', (size_t)w - l + 2);
}

void hr_bars_draw(const hr_bars_node *n, const hr_bars_style *s, hr_buf *out)
{
    char v1[32], v2[32], v3[32];
    int w = LABEL_MIN;
    for (size_t i = 0; i < n->n_pods; i++) {
        size_t l = strlen(n->pods[i].ns) + 1 + strlen(n->pods[i].name);
        if (l > (size_t)w)
            w = l > LABEL_MAX ? LABEL_MAX : (int)l;
    }
    int columns = s->columns > 0 ? s->columns : 80;
    int cols = columns - 2 - w - 2 - FIGURES;
    cols = cols < BAR_MIN ? BAR_MIN : cols;
    int64_t a = n->allocatable;
    hr_buf_printf(out, "NODE %s  allocatable %s  booked %s  slack %s\n", n->name,
                  milli(v1, sizeof v1, a), milli(v2, sizeof v2, n->booked),
                  milli(v3, sizeof v3, n->slack));
    if (a <= 0)
        hr_buf_puts(out, "  (allocatable unknown: the bars have no scale)\n");
    /* The scale: 0 under the bar's start, allocatable under its end. */
    label(out, NULL, "POD", w);
    const char *end = a > 0 ? milli(v1, sizeof v1, a) : "";
    size_t el = strlen(end);
    hr_buf_putc(out, a > 0 ? '0' : ' ');
    hr_buf_fill(out, ' ', (size_t)cols > el + 1 ? (size_t)cols - el - 1 : 0);
    hr_buf_printf(out, "%s  %7s %7s %7s\n", end, "REQUEST", "LIMIT", "TARGET");
    int64_t slack = n->slack < 0 ? 0 : n->slack;
    label(out, NULL, "(node)", w);
    draw_bar(out, s, cols, a, n->booked, n->booked, n->booked + slack);
    hr_buf_printf(out, "  %7s\n", milli(v1, sizeof v1, n->booked));
    for (size_t i = 0; i < n->n_pods; i++) {
        const hr_bars_pod *p = &n->pods[i];
        label(out, p->ns, p->name, w);
        int64_t ceil = p->target != HR_NONE ? p->target : p->limit > 0 ? p->limit : p->request;
        if (p->known)
            draw_bar(out, s, cols, a, p->request, ceil, p->request + slack);
        else
            hr_buf_fill(out, ' ', (size_t)cols);
        hr_buf_printf(out, "  %7s %7s %7s\n", p->known ? milli(v1, sizeof v1, p->request) : "?",
                      !p->known      ? "?"
                      : p->limit > 0 ? milli(v2, sizeof v2, p->limit)
                                     : "none",
                      p->target != HR_NONE ? milli(v3, sizeof v3, p->target) : "-");
    }
    hr_buf_puts(out, s->unicode ? "  " FULL " request  " DARK
                                  " limit (the target if planned)  " LIGHT
                                  " the rest of the slack\n"
                                : "  # request  = limit (the target if planned)  . the rest of "
                                  "the slack\n");
}

hr_status hr_render_bars(const hr_plan *p, const hr_render_opts *o, hr_buf *out, hr_err *err)
{
    size_t shown = 0;
    for (size_t k = 0; k < p->n_nodes; k++) {
        const hr_plan_node_out *no = &p->nodes[k];
        if (!hr_render_node_shown(o, no))
            continue;
        hr_bars_pod *pods = calloc(no->n_pods ? no->n_pods : 1, sizeof *pods);
        if (pods == NULL)
            return hr_err_set(err, HR_E_NOMEM, "out of memory drawing node %s", no->name);
        size_t n = 0;
        for (size_t i = 0; i < no->n_pods; i++) {
            if (!hr_render_listed(o, no, i))
                continue;
            const hr_kpod *kp = no->src[i];
            const hr_pod_plan *pp = &no->plans[i];
            bool planned = pp->reason == HR_MANAGED && pp->target != HR_NONE &&
                           pp->gate != HR_GATE_NODE_UNKNOWN;
            pods[n++] = (hr_bars_pod){kp->meta.ns, kp->meta.name, !kp->pod.undecodable,
                                      pp->request, pp->current,   planned ? pp->target : HR_NONE};
        }
        hr_bars_node bn = {
            no->name, no->unknown ? 0 : no->np.allocatable, no->np.booked, no->np.slack, pods, n};
        if (shown++)
            hr_buf_putc(out, '\n');
        hr_bars_draw(&bn, &o->bars, out);
        free(pods);
    }
    if (!shown)
        hr_buf_puts(out, "(no nodes)\n");
    return hr_buf_failed(out) ? hr_err_set(err, HR_E_NOMEM, "out of memory drawing the bars")
                              : HR_OK;
}
