/*
 * render.h — the planner's two output formats.
 *
 * JSON (for tools), exactly the shape of docs/plan.schema.json:
 *   {"apiVersion","kind":"Plan","config":{...},"nodes":[{"name",
 *     "allocatableMilli","bookedMilli","slackMilli","managedRequestsMilli",
 *     "factor","pods":[{"namespace","name","requestMilli","limitMilli",
 *     "targetMilli","write","managed","reason","bindingCap"[,"held"]
 *     [,"before"]}],"notes":[...]}],"summary":{...}, ["undecodable":[...]],
 *     ["warnings":[{"missing","effect","completeDump"}]],
 *     "items":[{"node","namespace","name"[,"request"][,"limit"][,"target"],
 *       "write","reason"[,"bindingCap"][,"held"]}]}
 * "write" is the table's yes (a held write is false, "held" names the gate);
 * "limitMilli" null is the table's none. "items" is the flat table's rows,
 * one per listed pod, a kubectl List's shape for -o jsonpath and
 * custom-columns: quantities as the table prints them ("1500m"), and a field
 * the table shows as none or - is left out (as Kubernetes objects leave out
 * empty fields).
 * Table (for people): one row per listed pod with its NODE, kubectl's layout
 * (plan/tabw.h); wide adds CAP (the design §2.3 bound that cut r + burst, "-"
 * when none). by_node: one block per node with its figures, readable at 120
 * columns; wide adds NODE and CAP.
 * YAML is the JSON document, block style; name is kubectl's pod/NAME.
 * Both are deterministic: same plan, same bytes.
 */
#ifndef HR_PLAN_RENDER_H
#define HR_PLAN_RENDER_H

#include "core/selector.h"
#include "plan/planner.h"
#include "util/buf.h"
#include "util/err.h"

typedef enum hr_render_fmt {
    HR_RENDER_TABLE = 0,
    HR_RENDER_WIDE, /* the table, plus each pod's node and the cap that binds it */
    HR_RENDER_JSON,
    HR_RENDER_YAML, /* the JSON document, as YAML */
    HR_RENDER_NAME, /* pod/NAME per listed pod whose limit would be written */
    HR_RENDER_BARS, /* the picture of each node: plan/bars.h */
} hr_render_fmt;

/* How plan/bars.h draws: block characters or ASCII, and the line width. */
typedef struct hr_bars_style {
    bool unicode; /* █ ▓ ░ and eighths; false: # = . */
    int columns;  /* the whole line; 0: 80 */
} hr_bars_style;

/* Which pods are listed. Every pod still books its node: a filter narrows
 * what is shown, never what is planned. */
typedef struct hr_render_opts {
    hr_render_fmt fmt;
    const char *only_node;       /* NULL: every node; else that one (it must exist) */
    const char *ns;              /* NULL: every namespace */
    const hr_selector *selector; /* NULL: every pod; else those whose labels match */
    const hr_snapshot_gap *gaps; /* what the dump lacks: JSON "warnings" */
    size_t n_gaps;
    /* The plan of the same snapshot without --set-request, or NULL: each
     * pod whose request or target it changes shows before → after. */
    const hr_plan *before;
    hr_bars_style bars; /* HR_RENDER_BARS */
    bool by_node;       /* the table as one block per node (--by-node), not one flat table */
    bool no_headers;    /* the flat table without its header row (--no-headers) */
} hr_render_opts;

HR_MUST_CHECK hr_status hr_render(const hr_plan *p, const hr_render_opts *o, hr_buf *out,
                                  hr_err *err);

/* hr_render with only only_node set, as JSON / as the table. */
HR_MUST_CHECK hr_status hr_render_json(const hr_plan *p, const char *only_node, hr_buf *out,
                                       hr_err *err);
HR_MUST_CHECK hr_status hr_render_table(const hr_plan *p, const char *only_node, hr_buf *out,
                                        hr_err *err);

/* Whether o shows node no, and pod i of it (the filters above). */
bool hr_render_node_shown(const hr_render_opts *o, const hr_plan_node_out *no);
bool hr_render_listed(const hr_render_opts *o, const hr_plan_node_out *no, size_t i);

/* "2.00": a x1000 factor rounded to two decimals (half up). */
void hr_factor_str(int64_t factor_milli, char *buf, size_t cap);

#endif
