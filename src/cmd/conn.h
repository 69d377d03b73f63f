/*
 * conn.h — kubectl's connection flags (flags.h, HR_CONN_FLAGS) read into
 * the API client's options: the one reader every command that talks to a
 * cluster uses.
 */
#ifndef HR_CMD_CONN_H
#define HR_CMD_CONN_H

#include <stddef.h>

#include "cmd/flags.h"
#include "kube/transport/client.h"

#define HR_CONN_GROUPS_MAX 32 /* --as-group values one command takes */

/* What the flags say. o.ov.as_groups points into groups: used in place,
 * never copied. The strings point into argv. */
typedef struct hr_conn {
    hr_kclient_opts o; /* for hr_live_client / hr_kclient_new */
    const char *groups[HR_CONN_GROUPS_MAX];
} hr_conn;

/* The flags of c from index base on (HR_CONN_FLAGS at base) into *out; an
 * empty value counts as not given, as in kubectl. HR_EXIT_OK, or a usage
 * error's status. */
int hr_conn_opts(const char *prog, const hr_command *c, const hr_args *a, size_t base,
                 hr_conn *out);

/* The name of the first connection flag given ("kubeconfig", "as"...), or
 * NULL: for the commands that read a dump instead (-f). */
const char *hr_conn_given(const hr_command *c, const hr_args *a, size_t base);

#endif
