/*
 * explain.h — `headroom explain` (cmd.h: arguments and exit status).
 */
#ifndef HR_CMD_EXPLAIN_H
#define HR_CMD_EXPLAIN_H

#include <stdint.h>

#include "cmd/cmd.h"
#include "cmd/flags.h"
#include "util/err.h"

HR_MUST_CHECK int hr_cmd_explain(const char *prog, int argc, char **argv);

extern const hr_command hr_explain_command;

/* A CPU figure as explain prints it: "1500m", "2", "none" for HR_NONE, a
 * minus sign before a negative one; buf holds HR_CPU_FMT_MAX bytes. */
const char *hr_explain_cpu(int64_t milli, char *buf);

#endif
