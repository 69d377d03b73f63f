/*
 * plan.h — `headroom plan` and `headroom node` (cmd.h: arguments and exit
 * status).
 */
#ifndef HR_CMD_PLAN_H
#define HR_CMD_PLAN_H

#include "cmd/cmd.h"
#include "cmd/flags.h"
#include "util/err.h"

HR_MUST_CHECK int hr_cmd_plan(const char *prog, int argc, char **argv);
HR_MUST_CHECK int hr_cmd_node(const char *prog, int argc, char **argv);

extern const hr_command hr_plan_command, hr_node_command;

#endif
