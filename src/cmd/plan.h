/*
 * plan.h — `headroom plan` and `headroom node` (cmd.h: arguments and exit
 * status).
 */
#ifndef HR_CMD_PLAN_H
#define HR_CMD_PLAN_H

#include "cmd/cmd.h"

int hr_cmd_plan(const char *prog, int argc, char **argv);
int hr_cmd_node(const char *prog, int argc, char **argv);

#endif
