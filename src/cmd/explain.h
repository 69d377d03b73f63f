/*
 * explain.h — `headroom explain` (cmd.h: arguments and exit status).
 */
#ifndef HR_CMD_EXPLAIN_H
#define HR_CMD_EXPLAIN_H

#include "cmd/cmd.h"
#include "cmd/flags.h"
#include "util/err.h"

HR_MUST_CHECK int hr_cmd_explain(const char *prog, int argc, char **argv);

extern const hr_command hr_explain_command;

#endif
