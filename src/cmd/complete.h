/*
 * complete.h — `headroom __complete WORD... CUR`, the hidden command the
 * shell completion scripts (completion.c) and kubectl_complete-headroom
 * run for the words only a live cluster or the kubeconfig knows: the
 * namespaces (-n/--namespace), the pods of `explain POD` (also
 * NAMESPACE/POD and pod/POD), the nodes of `node NODE`, the contexts,
 * clusters and users of the kubeconfig (--context, --cluster, --user).
 *
 * Cobra's protocol, as kubectl plugins speak it: the words after the
 * program's name, the last one being completed (maybe ""), one candidate a
 * line on stdout, then a directive line (":4", no file names; ":1" when
 * the cluster or the kubeconfig could not be read). -n and kubectl's
 * connection flags given earlier on the line (--kubeconfig, --context,
 * --cluster, --user, --server, --token...: cmd/conn.h) are honoured. Every request
 * ends within 3 s (--request-timeout on the line, if shorter), so a dead
 * cluster never hangs the shell; an error prints nothing on stderr unless
 * HEADROOM_COMPLETE_DEBUG is set. Not listed by `help` nor completed.
 */
#ifndef HR_CMD_COMPLETE_H
#define HR_CMD_COMPLETE_H

#include <stdbool.h>

#include "cmd/flags.h"

#define HR_COMPLETE_CMD "__complete"

/* The command; argv: the words after "__complete". Exits 0, whatever the
 * cluster said (1 only when stdout cannot be written). */
int hr_cmd_complete(const char *prog, int argc, char **argv);

/* Whether __complete completes this flag's value (by its name). */
bool hr_complete_live_flag(const hr_flag *f);

/* Whether __complete completes this command's first argument. */
bool hr_complete_live_arg(const hr_command *c);

#endif
