/*
 * main.c — entry point of `headroom`, also installed as `kubectl-headroom`
 * (kubectl finds plugins by file name, so the same binary answers to both;
 * only the name shown in messages differs).
 *
 * Dispatch is by argv[1] through the command table (commands.h); each
 * command lives in its own file. Exit codes (cmd.h, and `headroom help`):
 * 0 done, 1 bad input or a failed check, 2 usage.
 */
#include <libgen.h>
#include <stdio.h>
#include <string.h>

#include "cmd/cmd.h"
#include "cmd/commands.h"
#include "cmd/complete.h"

int main(int argc, char **argv)
{
    char self[256];
    snprintf(self, sizeof self, "%s", argc > 0 && argv[0] ? argv[0] : "");
    const char *base = basename(self);
    const char *prog = strcmp(base, "kubectl-headroom") == 0 ? "kubectl headroom" : "headroom";
    if (argc < 2) {
        hr_commands_usage(stderr, prog);
        return HR_EXIT_USAGE;
    }
    const char *cmd = argv[1];
    if (!strcmp(cmd, "--help") || !strcmp(cmd, "-h"))
        cmd = "help";
    else if (!strcmp(cmd, "--version"))
        cmd = "version";
    if (!strcmp(cmd, HR_COMPLETE_CMD) || !strcmp(cmd, HR_COMPLETE_CMD "NoDesc"))
        return hr_cmd_complete(prog, argc - 2, argv + 2); /* hidden: completion.c's scripts */
    const hr_command *c = hr_command_find(cmd);
    if (c == NULL) {
        fprintf(stderr, "%s: unknown command \"%s\" (try \"%s help\")\n", prog, cmd, prog);
        return HR_EXIT_USAGE;
    }
    return c->run(prog, argc - 2, argv + 2);
}
