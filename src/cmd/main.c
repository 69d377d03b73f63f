/*
 * main.c — entry point of `headroom`, also installed as `kubectl-headroom`
 * (kubectl finds plugins by file name, so the same binary answers to both;
 * only the name shown in messages differs).
 *
 * Dispatch is by argv[1]; each command lives in its own file (cmd.h).
 * Exit codes: 0 done, 1 bad input or a failed check, 2 usage.
 */
#include <libgen.h>
#include <stdio.h>
#include <string.h>

#include "cmd/cmd.h"
#include "cmd/cmd_run.h"
#include "cmd/explain.h"
#include "cmd/plan.h"
#include "cmd/preflight.h"

#ifndef HR_VERSION_STRING
#define HR_VERSION_STRING "0.0.0"
#endif
#ifndef HR_GIT_COMMIT
#define HR_GIT_COMMIT "unknown"
#endif
#ifndef HR_BUILD_FLAGS
#define HR_BUILD_FLAGS ""
#endif

static void usage(FILE *f, const char *prog)
{
    fprintf(f,
            "usage: %s COMMAND [ARGS]\n"
            "\n"
            "Sets each managed container's CPU limit from the unbooked CPU of "
            "its node.\n"
            "\n"
            "commands:\n"
            "  plan -f FILE|- [-o table|json] [--set-request NS/POD=CPU]...\n"
            "                       what-if for a whole cluster from a dump of\n"
            "                       kubectl get nodes,pods,namespaces,"
            "limitranges -A -o json\n"
            "  node NODE -f FILE|- [-o table|json] [--set-request NS/POD=CPU]...\n"
            "                       the same for one node\n"
            "  explain POD [-n NS]  the arithmetic behind one pod's limit "
            "(needs a cluster)\n"
            "  preflight            check a cluster before adoption (needs a "
            "cluster)\n"
            "  run                  the controller daemon (needs a cluster)\n"
            "  version              version, git commit, build flags\n"
            "  help                 this text\n",
            prog);
}

int main(int argc, char **argv)
{
    char self[256];
    snprintf(self, sizeof self, "%s", argc > 0 && argv[0] ? argv[0] : "");
    const char *base = basename(self);
    const char *prog = strcmp(base, "kubectl-headroom") == 0 ? "kubectl headroom" : "headroom";
    if (argc < 2) {
        usage(stderr, prog);
        return HR_EXIT_USAGE;
    }
    const char *cmd = argv[1];
    if (!strcmp(cmd, "help") || !strcmp(cmd, "--help") || !strcmp(cmd, "-h")) {
        usage(stdout, prog);
        return HR_EXIT_OK;
    }
    if (!strcmp(cmd, "version") || !strcmp(cmd, "--version")) {
        printf("headroom %s\ncommit %s\nbuild %s\n", HR_VERSION_STRING, HR_GIT_COMMIT,
               HR_BUILD_FLAGS);
        return HR_EXIT_OK;
    }
    if (!strcmp(cmd, "plan"))
        return hr_cmd_plan(prog, argc - 2, argv + 2);
    if (!strcmp(cmd, "node"))
        return hr_cmd_node(prog, argc - 2, argv + 2);
    if (!strcmp(cmd, "run"))
        return hr_cmd_run(prog, argc - 2, argv + 2);
    if (!strcmp(cmd, "explain"))
        return hr_cmd_explain(prog, argc - 2, argv + 2);
    if (!strcmp(cmd, "preflight"))
        return hr_cmd_preflight(prog, argc - 2, argv + 2);
    fprintf(stderr, "%s: unknown command \"%s\" (try \"%s help\")\n", prog, cmd, prog);
    return HR_EXIT_USAGE;
}
