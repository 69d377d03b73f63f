/*
 * cmd.h — the subcommands of the multi-call binary `headroom`.
 *
 * Each takes the arguments after its own name and returns the process exit
 * status: 0 success, 1 bad input (one line on stderr), 2 usage error or a
 * command this build cannot run yet.
 */
#ifndef HR_CMD_CMD_H
#define HR_CMD_CMD_H

#define HR_EXIT_OK 0
#define HR_EXIT_INPUT 1
#define HR_EXIT_USAGE 2

/* prog is what the user typed ("headroom" or "kubectl headroom"). */
int hr_cmd_plan(const char *prog, int argc, char **argv);
int hr_cmd_node(const char *prog, int argc, char **argv);
int hr_cmd_run(const char *prog, int argc, char **argv); /* cmd_run.c */
int hr_cmd_explain(const char *prog, int argc, char **argv); /* explain.c */
int hr_cmd_preflight(const char *prog, int argc, char **argv); /* preflight.c */

#endif
