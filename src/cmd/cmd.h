/*
 * cmd.h — the subcommands of the multi-call binary `headroom`.
 *
 * Each takes the arguments after its own name and returns the process exit
 * status: 0 success, 1 bad input (one line on stderr), 2 usage error or a
 * command this build cannot run yet. prog is what the user typed
 * ("headroom" or "kubectl headroom"). Each is declared by the header of the
 * file that defines it: plan.h (plan, node), cmd_run.h (run), explain.h,
 * preflight.h.
 */
#ifndef HR_CMD_CMD_H
#define HR_CMD_CMD_H

#define HR_EXIT_OK 0
#define HR_EXIT_INPUT 1
#define HR_EXIT_USAGE 2

#endif
