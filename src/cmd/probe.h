/*
 * probe.h — `headroom probe` (cmd.h: arguments and exit status).
 */
#ifndef HR_CMD_PROBE_H
#define HR_CMD_PROBE_H

#include "cmd/cmd.h"
#include "cmd/flags.h"
#include "util/err.h"

HR_MUST_CHECK int hr_cmd_probe(const char *prog, int argc, char **argv);

extern const hr_command hr_probe_command;

#endif
