/*
 * completion.h — `headroom completion bash|zsh|fish` (cmd.h: arguments
 * and exit status).
 */
#ifndef HR_CMD_COMPLETION_H
#define HR_CMD_COMPLETION_H

#include "cmd/cmd.h"
#include "cmd/flags.h"
#include "util/err.h"

HR_MUST_CHECK int hr_cmd_completion(const char *prog, int argc, char **argv);

extern const hr_command hr_completion_command;

#endif
