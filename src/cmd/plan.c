/*
 * plan.c — `headroom plan` and `headroom node`: the offline planner.
 *
 * Reads a dump (-f FILE, or - for stdin) or, without -f, the live cluster
 * (kubeconfig like kubectl; `node` lists only that node's pods), plans
 * every node, prints it (-o table, wide, json, yaml, name). The live path
 * assembles the same List a dump would hold, so both go through one
 * planner. Flags are kubectl's, parsed by cmd/flags.h; -n and -l narrow
 * what is listed, never what books a node.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cmd/conn.h"
#include "cmd/live.h"
#include "cmd/output.h"
#include "cmd/plan.h"
#include "kube/kname.h"
#include "kube/lselector.h"
#include "plan/bars.h"
#include "plan/planner.h"
#include "plan/render.h"
#include "plan/snapshot.h"
#include "util/arena.h"
#include "util/buf.h"
#include "util/err.h"
#include "util/term.h"

typedef struct plan_args {
    const char *file;
    hr_conn conn;    /* live cluster, when no -f */
    long timeout_ms; /* --request-timeout; 0: the client's default */
    hr_render_opts ro;
    hr_output out;    /* -o jsonpath= / custom-columns=: of the JSON (ro.fmt is JSON) */
    const char *node; /* for `node` */
    const char *selector;
    const char **sets; /* raw --set-request values */
    int n_sets;
    bool bars_after; /* `node` on a terminal without -o: the table, then the bars */
} plan_args;

enum {
    F_FILE,
    F_OUTPUT,
    F_NAMESPACE,
    F_ALL,
    F_SELECTOR,
    F_SET_REQUEST,
    F_ASCII,
    F_BY_NODE,
    F_NO_HEADERS,
    F_ALLOW_MISSING,
    F_CONN,
    F_TIMEOUT = F_CONN + HR_CONN_N,
    F_N
};

static const hr_flag plan_flags[F_N] = {
    [F_FILE] = {"filename", 'f', HR_FLAG_STRING, "FILE",
                "a dump to plan (- for stdin) instead of the live cluster", "@file"},
    [F_OUTPUT] = {"output", 'o', HR_FLAG_STRING, "FORMAT",
                  "table (default: a row per pod), wide (+ binding cap), json, yaml, "
                  "jsonpath=TEMPLATE, custom-columns=NAME:.path,... (of the JSON's items), "
                  "name (pod/NAME "
                  "of each pod that would be written), bars (a bar per pod; node's default "
                  "on a terminal: the table, then the bars)",
                  "table wide json yaml name bars"},
    [F_NAMESPACE] = {"namespace", 'n', HR_FLAG_STRING, "NAMESPACE",
                     "list only this namespace's pods (all pods still book their node)", NULL},
    [F_ALL] = {"all-namespaces", 'A', HR_FLAG_BOOL, NULL,
               "list the pods of every namespace (the default; wins over -n)", NULL},
    [F_SELECTOR] = {"selector", 'l', HR_FLAG_STRING, "SELECTOR",
                    "list only pods whose labels match: a=b, a!=b, a, !a, a in (x,y)", NULL},
    [F_SET_REQUEST] = {"set-request", 0, HR_FLAG_LIST, "NS/POD=CPU",
                       "what-if: plan as if that pod requested CPU (repeatable)", NULL},
    [F_ASCII] = {"ascii", 0, HR_FLAG_BOOL, NULL,
                 "draw the bars with # = . instead of block characters", NULL},
    [F_BY_NODE] = {"by-node", 0, HR_FLAG_BOOL, NULL,
                   "the table as a block per node, with the node's figures and notes", NULL},
    [F_NO_HEADERS] = HR_FLAG_NO_HEADERS,
    [F_ALLOW_MISSING] = HR_FLAG_ALLOW_MISSING,
    [F_CONN] = HR_CONN_FLAGS,
    [F_TIMEOUT] = HR_FLAG_REQUEST_TIMEOUT,
};
HR_FLAGS_FIT(F_N);

#define DUMP_CMD HR_DUMP_KUBECTL " > dump.json"

const hr_command hr_plan_command = {
    "plan",
    "[-f FILE|-] [-o table|wide|json|yaml|name|bars|jsonpath=T|custom-columns=SPEC] "
    "[--by-node] [--no-headers] [--ascii] [-n NS|-A] [-l SELECTOR] [--set-request NS/POD=CPU]...",
    "What the controller would set on every node (reads only, writes nothing).",
    "Reads the live cluster (kubeconfig as kubectl), or a dump with -f. -n and -l narrow\n"
    "what is listed; every pod still books its node.\n"
    "\na complete dump:\n  " DUMP_CMD "\n",
    plan_flags,
    F_N,
    0,
    hr_cmd_plan,
};

const hr_command hr_node_command = {
    "node",
    "NODE [-f FILE|-] [-o table|wide|json|yaml|name|bars|jsonpath=T|custom-columns=SPEC] "
    "[--by-node] [--no-headers] [--ascii] [-n NS|-A] [-l SELECTOR] [--set-request NS/POD=CPU]...",
    "The plan of one node: each pod's request, limit, target, and why.",
    "Reads the live cluster (only that node's pods), or a dump with -f.\n"
    "\na complete dump:\n  " DUMP_CMD "\n",
    plan_flags,
    F_N,
    1,
    hr_cmd_node,
};

static int parse_args(const char *prog, const hr_command *c, int argc, char **argv, hr_args *a,
                      plan_args *pa)
{
    memset(pa, 0, sizeof *pa);
    int rc = hr_args_parse(prog, c, argc, argv, a);
    if (rc != HR_EXIT_OK || a->help)
        return rc;
    pa->file = a->val[F_FILE];
    if ((rc = hr_conn_opts(prog, c, a, F_CONN, &pa->conn)) != HR_EXIT_OK)
        return rc;
    pa->sets = hr_args_list(a, F_SET_REQUEST, &pa->n_sets);
    pa->selector = a->val[F_SELECTOR];
    pa->ro.ns = hr_args_on(a, F_ALL) ? NULL : a->val[F_NAMESPACE];
    static const struct {
        const char *name;
        hr_render_fmt fmt;
    } fmts[] = {
        {"table", HR_RENDER_TABLE}, {"wide", HR_RENDER_WIDE}, {"json", HR_RENDER_JSON},
        {"yaml", HR_RENDER_YAML},   {"name", HR_RENDER_NAME}, {"bars", HR_RENDER_BARS},
    };
    const char *o = a->val[F_OUTPUT];
    /* jsonpath= and custom-columns=: the JSON document, through cmd/output.h */
    if (o && (!strncmp(o, "jsonpath", 8) || !strncmp(o, "custom-columns", 14))) {
        rc = hr_output_parse(
            prog, c, o, HR_OUTPUT_ALLOW(HR_OUTPUT_JSONPATH) | HR_OUTPUT_ALLOW(HR_OUTPUT_COLUMNS),
            &pa->out);
        if (rc != HR_EXIT_OK)
            return rc;
        hr_output_flags(&pa->out, a, F_NO_HEADERS, F_ALLOW_MISSING);
        o = "json";
    }
    pa->ro.by_node = hr_args_on(a, F_BY_NODE);
    pa->ro.no_headers = hr_args_on(a, F_NO_HEADERS);
    size_t k = 0;
    while (o && k < sizeof fmts / sizeof fmts[0] && strcmp(o, fmts[k].name) != 0)
        k++;
    if (o && k == sizeof fmts / sizeof fmts[0])
        return hr_usage_error(prog, c,
                              "-o takes table, wide, json, yaml, name, bars, jsonpath=TEMPLATE "
                              "or custom-columns=SPEC, not \"%s\"",
                              o);
    pa->ro.fmt = o ? fmts[k].fmt : HR_RENDER_TABLE;
    /* The bars: block characters on a UTF-8 terminal, else ASCII; `node`
     * draws them after its table on a terminal (docs/cli.md). */
    hr_term t = hr_term_of(STDOUT_FILENO);
    pa->ro.bars = (hr_bars_style){t.unicode && !hr_args_on(a, F_ASCII), t.columns};
    pa->bars_after = !o && t.tty && c->max_args == 1;
    if (a->val[F_TIMEOUT] && (pa->timeout_ms = hr_duration_ms(a->val[F_TIMEOUT])) < 0)
        return hr_usage_error(prog, c, "--request-timeout takes 30s, 2m, 1h or 0, not \"%s\"",
                              a->val[F_TIMEOUT]);
    if (c->max_args == 1) {
        if (a->n_pos == 0)
            return hr_usage_error(prog, c, "missing the node name");
        pa->node = a->pos[0];
        if (!hr_kname_subdomain(pa->node))
            return hr_usage_error(prog, c, "\"%s\" is not a node name", pa->node);
    }
    if (pa->ro.ns && !hr_kname_label(pa->ro.ns))
        return hr_usage_error(prog, c, "\"%s\" is not a namespace name", pa->ro.ns);
    const char *conn = hr_conn_given(c, a, F_CONN);
    if (pa->file && conn)
        return hr_usage_error(prog, c, "-f reads a dump; it does not mix with --%s", conn);
    pa->ro.only_node = pa->node;
    return HR_EXIT_OK;
}

/* The live cluster as one List, through the planner's own parser. */
static hr_status read_live(const plan_args *pa, hr_snapshot *snap, hr_err *err)
{
    memset(snap, 0, sizeof *snap);
    hr_kclient *k = NULL;
    hr_status st = hr_live_client(&pa->conn.o, pa->timeout_ms, &k, err);
    hr_buf list;
    hr_buf_init(&list, 0);
    if (!st)
        st = hr_live_dump(k, pa->node, &list, err);
    /* The parser works in place and wants zero padding after the text. */
    for (int i = 0; !st && i < YYJSON_PADDING_SIZE; i++)
        hr_buf_putc(&list, '\0');
    if (!st && hr_buf_failed(&list))
        st = hr_err_set(err, HR_E_NOMEM, "out of memory");
    if (!st)
        st = hr_snapshot_parse(snap, list.data, list.len - YYJSON_PADDING_SIZE, NULL,
                               hr_kclient_server(k), err);
    if (!st) {
        /* Design §2.13: as `run`, the API server's version with the nodes'. */
        bool on;
        hr_err verr;
        hr_live_server_pod_resize(k, &on, NULL, &verr);
        snap->no_pod_resize = !on;
    }
    hr_buf_free(&list);
    hr_kclient_free(k);
    return st;
}

/* One line per object of the dump that could not be decoded. */
static void report_bad(const char *prog, const char *cmd, const hr_snapshot_bad *b)
{
    const char *what;
    if (!strcmp(b->kind, "node"))
        what = "planned as an unknown node: no write on it (node-unknown)";
    else if (b->node_unreadable)
        what = "kept as undecodable; its node cannot be read, so no increase is planned on any "
               "node (booking-unknown)";
    else if (b->node)
        what = "kept as undecodable: no increase is planned on its node (booking-unknown)";
    else
        what = "kept as undecodable (not bound to a node)";
    fprintf(stderr, "%s %s: %s; %s\n", prog, cmd, b->msg ? b->msg : "", what);
}

static int run(const char *prog, const hr_command *c, int argc, char **argv)
{
    const char *cmd = c->name;
    plan_args pa;
    hr_args args;
    int rc = parse_args(prog, c, argc, argv, &args, &pa);
    if (rc || args.help) {
        hr_args_free(&args);
        return rc;
    }
    hr_err err;
    hr_err_clear(&err);
    hr_snapshot snap;
    hr_arena arena;
    hr_arena_init(&arena, 0);
    hr_buf out;
    hr_buf_init(&out, 0);
    hr_set_request *sets = hr_arena_calloc(&arena, (size_t)pa.n_sets + 1, sizeof *sets);
    hr_status st = sets ? HR_OK : hr_err_set(&err, HR_E_NOMEM, "out of memory");
    for (int i = 0; !st && i < pa.n_sets; i++)
        st = hr_set_request_parse(pa.sets[i], &arena, &sets[i], &err);
    hr_selector sel;
    if (!st && pa.selector) {
        st = hr_lselector_parse(pa.selector, &arena, &sel, &err);
        pa.ro.selector = &sel;
    }
    if (st) { /* a malformed --set-request or -l is a usage error */
        fprintf(stderr, "%s %s: %s\n", prog, cmd, err.msg);
        rc = st == HR_E_INPUT ? HR_EXIT_USAGE : HR_EXIT_INPUT;
        hr_arena_free(&arena);
        hr_args_free(&args);
        return rc;
    }
    if (pa.file) {
        st = hr_snapshot_read(&snap, pa.file, NULL, &err);
    } else {
        st = read_live(&pa, &snap, &err);
    }
    /* A dump that lacks a kind plans quietly wrong: say so, on stderr and
     * in the JSON, with the command that makes a complete one. The live
     * path reads every kind itself. */
    hr_snapshot_gap gaps[3];
    if (!st && pa.file) {
        pa.ro.gaps = gaps;
        pa.ro.n_gaps = hr_snapshot_gaps(&snap, gaps);
        for (size_t i = 0; i < pa.ro.n_gaps; i++)
            fprintf(stderr, "%s %s: warning: the dump has no %s: %s\n", prog, cmd, gaps[i].kind,
                    gaps[i].effect);
        if (pa.ro.n_gaps)
            fprintf(stderr, "%s %s: a complete dump: %s > dump.json\n", prog, cmd, HR_DUMP_KUBECTL);
    }
    hr_plan plan, before;
    if (!st && pa.n_sets) { /* what --set-request changes: before → after */
        st = hr_plan_build(&snap, NULL, 0, &arena, &before, &err);
        pa.ro.before = &before;
    }
    if (!st)
        st = hr_plan_build(&snap, sets, (size_t)pa.n_sets, &arena, &plan, &err);
    if (!st)
        st = hr_render(&plan, &pa.ro, &out, &err);
    if (!st && (pa.out.kind == HR_OUTPUT_JSONPATH || pa.out.kind == HR_OUTPUT_COLUMNS)) {
        hr_buf doc = out; /* the JSON, printed as -o asks */
        hr_buf_init(&out, 0);
        st = hr_output_doc(&pa.out, hr_buf_str(&doc), doc.len, &out, &err);
        hr_buf_free(&doc);
    }
    if (!st && pa.bars_after) {
        hr_buf_putc(&out, '\n');
        st = hr_render_bars(&plan, &pa.ro, &out, &err);
    }
    if (!st && fwrite(hr_buf_str(&out), 1, out.len, stdout) != out.len)
        st = hr_err_set(&err, HR_E_IO, "writing the output failed");
    if (!st && fflush(stdout) != 0)
        st = hr_err_set(&err, HR_E_IO, "writing the output failed");
    if (st) {
        fprintf(stderr, "%s %s: %s\n", prog, cmd, err.msg);
        rc = HR_EXIT_INPUT;
    } else if (snap.n_bad) {
        /* Design §15: the rest is planned (printed above), each object
         * that could not be decoded is named here, and the exit status
         * says the input was not clean. */
        for (size_t i = 0; i < snap.n_bad; i++)
            report_bad(prog, cmd, &snap.bad[i]);
        rc = HR_EXIT_INPUT;
    }
    hr_buf_free(&out);
    hr_snapshot_free(&snap);
    hr_arena_free(&arena);
    hr_args_free(&args);
    return rc;
}

int hr_cmd_plan(const char *prog, int argc, char **argv)
{
    return run(prog, &hr_plan_command, argc, argv);
}

int hr_cmd_node(const char *prog, int argc, char **argv)
{
    return run(prog, &hr_node_command, argc, argv);
}
