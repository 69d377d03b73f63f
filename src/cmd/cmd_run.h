/*
 * cmd_run.h — `headroom run`, the daemon (cmd.h: arguments and exit
 * status).
 */
#ifndef HR_CMD_CMD_RUN_H
#define HR_CMD_CMD_RUN_H

#include "cmd/cmd.h"
#include "cmd/flags.h"
#include "util/err.h"

HR_MUST_CHECK int hr_cmd_run(const char *prog, int argc, char **argv);

/* Its flags, help and completion: run_flags.c. */
extern const hr_command hr_run_command;

#endif
