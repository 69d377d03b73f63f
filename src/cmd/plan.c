/*
 * plan.c — `headroom plan` and `headroom node`: the offline planner.
 *
 * Reads a dump (-f FILE, or - for stdin) or, without -f, the live cluster
 * (kubeconfig like kubectl; `node` lists only that node's pods), plans
 * every node, prints a table or JSON. The live path assembles the same
 * List a dump would hold, so both go through one planner. Option parsing
 * is by hand (getopt_long would reorder argv and accept abbreviations we
 * would then have to support forever).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cmd/live.h"
#include "cmd/plan.h"
#include "plan/planner.h"
#include "plan/render.h"
#include "plan/snapshot.h"
#include "util/arena.h"
#include "util/buf.h"
#include "util/err.h"

typedef struct plan_args {
    const char *file;
    const char *kubeconfig, *context; /* live cluster, when no -f */
    const char *output;               /* "table" or "json" */
    const char *node;                 /* for `node` */
    char **sets;                      /* raw --set-request values */
    int n_sets;
} plan_args;

static int usage_error(const char *prog, const char *cmd, const char *msg, const char *arg)
{
    fprintf(stderr, "%s %s: %s%s%s\n", prog, cmd, msg, arg ? " " : "", arg ? arg : "");
    fprintf(stderr,
            "usage: %s %s%s [-f FILE|- | --kubeconfig F --context C] [-o table|json] "
            "[--set-request NS/POD=CPU]...\n",
            prog, cmd, strcmp(cmd, "node") == 0 ? " NODE" : "");
    return HR_EXIT_USAGE;
}

/* The value of an option given as "-f X", "--file X" or "--file=X". */
static int opt_value(int argc, char **argv, int *i, const char *shortname, const char *longname,
                     const char **val)
{
    const char *a = argv[*i];
    size_t ll = strlen(longname);
    if (!strcmp(a, shortname) || !strcmp(a, longname)) {
        if (*i + 1 >= argc)
            return -1;
        *val = argv[++*i];
        return 1;
    }
    if (!strncmp(a, longname, ll) && a[ll] == '=') {
        *val = a + ll + 1;
        return 1;
    }
    return 0;
}

static int parse_args(const char *prog, const char *cmd, int argc, char **argv, plan_args *pa)
{
    memset(pa, 0, sizeof *pa);
    pa->output = "table";
    pa->sets = calloc((size_t)argc + 1, sizeof *pa->sets);
    if (!pa->sets) {
        fprintf(stderr, "%s %s: out of memory\n", prog, cmd);
        return HR_EXIT_INPUT;
    }
    for (int i = 0; i < argc; i++) {
        const char *v = NULL;
        int r;
        if ((r = opt_value(argc, argv, &i, "-f", "--filename", &v)) ||
            (r = opt_value(argc, argv, &i, "-f", "--file", &v))) {
            if (r < 0)
                return usage_error(prog, cmd, "missing value for", argv[i]);
            pa->file = v;
        } else if ((r = opt_value(argc, argv, &i, "--kubeconfig", "--kubeconfig", &v))) {
            if (r < 0)
                return usage_error(prog, cmd, "missing value for", argv[i]);
            pa->kubeconfig = v;
        } else if ((r = opt_value(argc, argv, &i, "--context", "--context", &v))) {
            if (r < 0)
                return usage_error(prog, cmd, "missing value for", argv[i]);
            pa->context = v;
        } else if ((r = opt_value(argc, argv, &i, "-o", "--output", &v))) {
            if (r < 0)
                return usage_error(prog, cmd, "missing value for", argv[i]);
            if (strcmp(v, "table") != 0 && strcmp(v, "json") != 0)
                return usage_error(prog, cmd, "-o takes table or json, not", v);
            pa->output = v;
        } else if ((r = opt_value(argc, argv, &i, "--set-request", "--set-request", &v))) {
            if (r < 0)
                return usage_error(prog, cmd, "missing value for", argv[i]);
            pa->sets[pa->n_sets++] = (char *)v;
        } else if (!strcmp(argv[i], "-h") || !strcmp(argv[i], "--help")) {
            printf("usage: %s %s%s [-f FILE|- | --kubeconfig F --context C] [-o table|json] "
                   "[--set-request NS/POD=CPU]...\n",
                   prog, cmd, strcmp(cmd, "node") == 0 ? " NODE" : "");
            return -1;
        } else if (argv[i][0] == '-' && argv[i][1]) {
            return usage_error(prog, cmd, "unknown option", argv[i]);
        } else if (!strcmp(cmd, "node") && !pa->node) {
            pa->node = argv[i];
        } else {
            return usage_error(prog, cmd, "unexpected argument", argv[i]);
        }
    }
    if (!strcmp(cmd, "node") && !pa->node)
        return usage_error(prog, cmd, "missing the node name", NULL);
    if (pa->file && (pa->kubeconfig || pa->context))
        return usage_error(prog, cmd, "-f reads a dump; it does not mix with",
                           "--kubeconfig/--context");
    return HR_EXIT_OK;
}

/* The live cluster as one List, through the planner's own parser. */
static hr_status read_live(const plan_args *pa, hr_snapshot *snap, hr_err *err)
{
    memset(snap, 0, sizeof *snap);
    hr_kclient *k = NULL;
    hr_status st = hr_live_client(pa->kubeconfig, pa->context, &k, err);
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

static int run(const char *prog, const char *cmd, int argc, char **argv)
{
    plan_args pa;
    int rc = parse_args(prog, cmd, argc, argv, &pa);
    if (rc) {
        free(pa.sets);
        return rc < 0 ? HR_EXIT_OK : rc; /* -1: help was printed */
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
    if (st) { /* a malformed --set-request is a usage error */
        fprintf(stderr, "%s %s: %s\n", prog, cmd, err.msg);
        rc = st == HR_E_INPUT ? HR_EXIT_USAGE : HR_EXIT_INPUT;
        hr_arena_free(&arena);
        free(pa.sets);
        return rc;
    }
    if (pa.file) {
        st = hr_snapshot_read(&snap, pa.file, NULL, &err);
    } else {
        st = read_live(&pa, &snap, &err);
    }
    hr_plan plan;
    if (!st)
        st = hr_plan_build(&snap, sets, (size_t)pa.n_sets, &arena, &plan, &err);
    if (!st)
        st = strcmp(pa.output, "json") == 0 ? hr_render_json(&plan, pa.node, &out, &err)
                                            : hr_render_table(&plan, pa.node, &out, &err);
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
    free(pa.sets);
    return rc;
}

int hr_cmd_plan(const char *prog, int argc, char **argv)
{
    return run(prog, "plan", argc, argv);
}

int hr_cmd_node(const char *prog, int argc, char **argv)
{
    return run(prog, "node", argc, argv);
}
