/*
 * preflight.h — `headroom preflight` (cmd.h: arguments and exit status).
 */
#ifndef HR_CMD_PREFLIGHT_H
#define HR_CMD_PREFLIGHT_H

#include "cmd/cmd.h"
#include "cmd/flags.h"
#include "util/err.h"

HR_MUST_CHECK int hr_cmd_preflight(const char *prog, int argc, char **argv);

extern const hr_command hr_preflight_command;

#endif
