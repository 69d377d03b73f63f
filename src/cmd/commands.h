/*
 * commands.h — the table of every command of `headroom`: dispatch
 * (main.c), `headroom help [CMD]` and shell completion all read it, so
 * they cannot disagree about what exists.
 */
#ifndef HR_CMD_COMMANDS_H
#define HR_CMD_COMMANDS_H

#include <stddef.h>
#include <stdio.h>

#include "cmd/flags.h"
#include "util/buildinfo.h"

/* In the order `headroom help` lists them. */
extern const hr_command *const hr_commands[];
extern const size_t hr_n_commands;

/* The command of that name, or NULL. */
const hr_command *hr_command_find(const char *name);

/* `headroom help`: every command, the exit codes, where the docs are. */
void hr_commands_usage(FILE *f, const char *prog);

/* This binary's build: what `headroom version` prints and headroom_build_info says. */
void hr_cmd_buildinfo(hr_buildinfo *out);

#endif
