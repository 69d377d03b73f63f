/*
 * commands.c — the command table and the top-level help (commands.h).
 */
#include "cmd/commands.h"

#include <string.h>

#include "cmd/cmd.h"
#include "cmd/cmd_run.h"
#include "cmd/completion.h"
#include "cmd/explain.h"
#include "cmd/output.h"
#include "cmd/plan.h"
#include "cmd/preflight.h"
#include "cmd/probe.h"
#include "cmd/verify.h"
#include "plan/snapshot.h"
#include "util/buf.h"
#include "util/buildinfo.h"

/* HR_VERSION_STRING, HR_GIT_COMMIT, HR_TREE_STATE, HR_BUILD_DATE: generated at every build
 * from scripts/release/version.sh (cmake/hr_version.cmake). */
#include "hr_version.h"

#ifndef HR_BUILD_FLAGS
#define HR_BUILD_FLAGS ""
#endif

static int cmd_version(const char *prog, int argc, char **argv);
static int cmd_help(const char *prog, int argc, char **argv);

enum { VF_OUTPUT, VF_NO_HEADERS, VF_ALLOW_MISSING, VF_N };
static const hr_flag version_flags[VF_N] = {
    [VF_OUTPUT] = {"output", 'o', HR_FLAG_STRING, "FORMAT",
                   "json: one object {version, commit, treeState, buildDate, build, platform};\n"
                   "                           yaml, jsonpath=TEMPLATE, custom-columns=SPEC of it",
                   "json yaml jsonpath= custom-columns="},
    [VF_NO_HEADERS] = HR_FLAG_NO_HEADERS,
    [VF_ALLOW_MISSING] = HR_FLAG_ALLOW_MISSING,
};
HR_FLAGS_FIT(VF_N);

static const hr_command version_command = {
    "version",
    "[-o json|yaml|jsonpath=TEMPLATE|custom-columns=SPEC]",
    "Version, git commit, work tree state, build date, build flags, platform.",
    "The version is VERSION on a commit tagged v<VERSION>, else\n"
    "<VERSION>-dev.N+gCOMMIT (N commits since VERSION changed), +...dirty when built\n"
    "from a tree with uncommitted changes (docs/cli.md).\n",
    version_flags,
    VF_N,
    0,
    cmd_version,
};

static const hr_command help_command = {
    "help", "[COMMAND]", "This text, or one command's help.", NULL, NULL, 0, 1, cmd_help,
};

const hr_command *const hr_commands[] = {
    &hr_plan_command,  &hr_node_command,   &hr_explain_command, &hr_preflight_command,
    &hr_probe_command, &hr_verify_command, &hr_run_command,     &hr_completion_command,
    &version_command,  &help_command,
};
const size_t hr_n_commands = sizeof hr_commands / sizeof hr_commands[0];

const hr_command *hr_command_find(const char *name)
{
    for (size_t i = 0; i < hr_n_commands; i++)
        if (strcmp(hr_commands[i]->name, name) == 0)
            return hr_commands[i];
    return NULL;
}

void hr_commands_usage(FILE *f, const char *prog)
{
    fprintf(f,
            "usage: %s COMMAND [ARGS] [FLAGS]\n"
            "\n"
            "Sets each managed container's CPU limit from the unbooked CPU of its node.\n"
            "\n"
            "commands:\n",
            prog);
    for (size_t i = 0; i < hr_n_commands; i++) {
        const hr_command *c = hr_commands[i];
        const char *nl = strchr(c->summary, '\n');
        fprintf(f, "  %-11s%.*s\n", c->name, nl ? (int)(nl - c->summary) : (int)strlen(c->summary),
                c->summary);
    }
    fprintf(f,
            "\n"
            "\"%s help COMMAND\" or \"%s COMMAND --help\" for a command's flags. Flags are\n"
            "kubectl's: -o json|yaml|wide|name (also -o=json, -ojson), -n/--namespace,\n"
            "-A/--all-namespaces, -l/--selector, --context, --kubeconfig, --request-timeout;\n"
            "--flag value and --flag=value alike.\n"
            "\n"
            "exit status:\n"
            "  0  done (preflight: no FAIL)\n"
            "  1  bad input, a cluster that cannot be read, an object that does not decode,\n"
            "     or a failed preflight check (one line on stderr says which)\n"
            "  2  usage: unknown command or flag, a missing or malformed argument\n"
            "\n"
            "a complete dump for plan -f / node -f / explain -f:\n"
            "  " HR_DUMP_KUBECTL " > dump.json\n"
            "\n"
            "docs: README.md (CLI), docs/cli.md, docs/design.md\n",
            prog, prog);
}

void hr_cmd_buildinfo(hr_buildinfo *out)
{
    *out = (hr_buildinfo){
        .version = HR_VERSION_STRING,
        .commit = HR_GIT_COMMIT,
        .tree_state = HR_TREE_STATE,
        .build_date = HR_BUILD_DATE,
        .build = HR_BUILD_FLAGS,
        .platform = hr_buildinfo_platform(),
    };
}

static int cmd_version(const char *prog, int argc, char **argv)
{
    hr_args a;
    int rc = hr_args_parse(prog, &version_command, argc, argv, &a);
    const char *o = a.val[VF_OUTPUT];
    hr_output out = {.kind = HR_OUTPUT_TEXT, .allow_missing = true};
    if (rc == HR_EXIT_OK && !a.help &&
        (rc = hr_output_parse(prog, &version_command, o, HR_OUTPUT_ALLOW_DOC, &out)) == HR_EXIT_OK)
        hr_output_flags(&out, &a, VF_NO_HEADERS, VF_ALLOW_MISSING);
    hr_args_free(&a);
    if (rc != HR_EXIT_OK || a.help)
        return rc;
    hr_buildinfo bi;
    hr_cmd_buildinfo(&bi);
    hr_buf b, js;
    hr_buf_init(&b, 0);
    hr_buf_init(&js, 0);
    hr_err err;
    hr_err_clear(&err);
    hr_status st = HR_OK;
    if (out.kind == HR_OUTPUT_TEXT) {
        hr_buildinfo_text(&b, &bi);
    } else { /* the JSON object, printed as -o asks (cmd/output.h) */
        hr_buildinfo_json(&js, &bi);
        st = hr_buf_failed(&js) ? hr_err_set(&err, HR_E_NOMEM, "out of memory")
                                : hr_output_doc(&out, hr_buf_str(&js), js.len, &b, &err);
    }
    rc = HR_EXIT_OK;
    if (st) {
        fprintf(stderr, "%s version: %s\n", prog, err.msg);
        rc = HR_EXIT_INPUT;
    } else if (hr_buf_failed(&b) || fwrite(hr_buf_str(&b), 1, b.len, stdout) != b.len ||
               fflush(stdout)) {
        fprintf(stderr, "%s version: writing the output failed\n", prog);
        rc = HR_EXIT_INPUT;
    }
    hr_buf_free(&js);
    hr_buf_free(&b);
    return rc;
}

static int cmd_help(const char *prog, int argc, char **argv)
{
    hr_args a;
    int rc = hr_args_parse(prog, &help_command, argc, argv, &a);
    const char *name = a.n_pos ? a.pos[0] : NULL;
    hr_args_free(&a);
    if (rc != HR_EXIT_OK || a.help)
        return rc;
    if (name == NULL) {
        hr_commands_usage(stdout, prog);
        return HR_EXIT_OK;
    }
    const hr_command *c = hr_command_find(name);
    if (c == NULL) {
        fprintf(stderr, "%s help: unknown command \"%s\" (try \"%s help\")\n", prog, name, prog);
        return HR_EXIT_USAGE;
    }
    hr_command_help(stdout, prog, c);
    return HR_EXIT_OK;
}
