/*
 * conn.c — kubectl's connection flags into the client's options (conn.h).
 */
#include "cmd/conn.h"

#include <string.h>

#include "cmd/cmd.h"

static const char *val(const hr_args *a, size_t i)
{
    return a->val[i] && *a->val[i] ? a->val[i] : NULL;
}

int hr_conn_opts(const char *prog, const hr_command *c, const hr_args *a, size_t base, hr_conn *out)
{
    int n = 0;
    const char **groups = hr_args_list(a, base + HR_CONN_AS_GROUP, &n);
    memset(out, 0, sizeof *out);
    if (n > HR_CONN_GROUPS_MAX)
        return hr_usage_error(prog, c, "more than %d --as-group", HR_CONN_GROUPS_MAX);
    for (int i = 0; i < n; i++) {
        if (!*groups[i])
            return hr_usage_error(prog, c, "--as-group takes a group name, not \"\"");
        out->groups[i] = groups[i];
    }
    hr_kclient_opts *o = &out->o;
    o->kubeconfig = val(a, base + HR_CONN_KUBECONFIG);
    o->context = val(a, base + HR_CONN_CONTEXT);
    o->ov = (hr_koverrides){
        .cluster = val(a, base + HR_CONN_CLUSTER),
        .user = val(a, base + HR_CONN_USER),
        .server = val(a, base + HR_CONN_SERVER),
        .tls_server_name = val(a, base + HR_CONN_TLS_SERVER_NAME),
        .ca_file = val(a, base + HR_CONN_CA),
        .insecure = hr_args_on(a, base + HR_CONN_INSECURE),
        .token = val(a, base + HR_CONN_TOKEN),
        .cert_file = val(a, base + HR_CONN_CERT),
        .key_file = val(a, base + HR_CONN_KEY),
        .as = val(a, base + HR_CONN_AS),
        .as_uid = val(a, base + HR_CONN_AS_UID),
        .as_groups = out->groups,
        .n_as_groups = (size_t)n,
    };
    if (o->ov.insecure && o->ov.ca_file)
        return hr_usage_error(prog, c,
                              "--insecure-skip-tls-verify and --certificate-authority: use one");
    return HR_EXIT_OK;
}

const char *hr_conn_given(const hr_command *c, const hr_args *a, size_t base)
{
    for (size_t i = base; i < base + HR_CONN_N && i < c->n_flags; i++)
        if (a->val[i] && (c->flags[i].type != HR_FLAG_BOOL || hr_args_on(a, i)))
            return c->flags[i].name;
    return NULL;
}
