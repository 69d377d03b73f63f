/*
 * verify.h — `headroom verify` (cmd.h: arguments and exit status).
 */
#ifndef HR_CMD_VERIFY_H
#define HR_CMD_VERIFY_H

#include "cmd/cmd.h"
#include "cmd/flags.h"
#include "util/err.h"

HR_MUST_CHECK int hr_cmd_verify(const char *prog, int argc, char **argv);

extern const hr_command hr_verify_command;

#endif
