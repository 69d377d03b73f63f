/*
 * complete.c — `headroom __complete` (complete.h): what the words on the
 * line ask for, then the names from the kubeconfig or one list request.
 *
 * The words are read as the flag parser would (flags.h), but leniently:
 * the line is unfinished, so a flag still waiting for its value is what is
 * being completed, and bash's split of --flag=value into "--flag" "=" is
 * undone. Lists ask for metadata only (PartialObjectMetadataList) and one
 * page of at most 500 names: completion offers names, nothing else.
 */
#include "cmd/complete.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <yyjson.h>

#include "cmd/cmd.h"
#include "cmd/commands.h"
#include "cmd/conn.h"
#include "kube/config/kcnames.h"
#include "kube/kname.h"
#include "kube/transport/client.h"
#include "util/buf.h"

#define TIMEOUT_MS 3000
#define LIST_LIMIT 500
#define MAX_LIST_BYTES ((size_t)8 << 20)
#define ACCEPT_META                                                     \
    "application/json;as=PartialObjectMetadataList;g=meta.k8s.io;v=v1," \
    "application/json;q=0.9"

typedef enum what { W_NONE, W_NAMESPACES, W_PODS, W_NODES, W_CONTEXTS, W_CLUSTERS, W_USERS } what;

static const struct {
    const char *flag;
    what w;
} live_flags[] = {
    {"namespace", W_NAMESPACES},
    {"context", W_CONTEXTS},
    {"cluster", W_CLUSTERS},
    {"user", W_USERS},
};

static what flag_what(const hr_flag *f)
{
    for (size_t i = 0; i < sizeof live_flags / sizeof live_flags[0]; i++)
        if (strcmp(f->name, live_flags[i].flag) == 0)
            return live_flags[i].w;
    return W_NONE;
}

bool hr_complete_live_flag(const hr_flag *f)
{
    return flag_what(f) != W_NONE;
}

static what arg_what(const hr_command *c)
{
    if (strcmp(c->name, "explain") == 0)
        return W_PODS;
    if (strcmp(c->name, "node") == 0)
        return W_NODES;
    return W_NONE;
}

bool hr_complete_live_arg(const hr_command *c)
{
    return arg_what(c) != W_NONE;
}

/* What the line says so far. */
typedef struct line {
    const hr_command *cmd;
    const char *kubeconfig, *context, *ns, *timeout;
    const char *val[HR_FLAGS_MAX]; /* per flag index, as hr_args holds them (lists aside) */
    const hr_flag *pending;        /* the last flag still waits for its value */
    int n_pos;
    bool dashdash;
} line;

static void set_value(line *l, const hr_flag *f, const char *v)
{
    size_t i = (size_t)(f - l->cmd->flags);
    if (i < HR_FLAGS_MAX && f->type != HR_FLAG_LIST)
        l->val[i] = v;
    if (!strcmp(f->name, "kubeconfig"))
        l->kubeconfig = v;
    else if (!strcmp(f->name, "context"))
        l->context = v;
    else if (!strcmp(f->name, "namespace"))
        l->ns = v;
    else if (!strcmp(f->name, "request-timeout"))
        l->timeout = v;
}

static void scan(line *l, int n, char **w)
{
    for (int i = 0; i < n; i++) {
        if (l->cmd == NULL) {
            if (w[i][0] != '-' && (l->cmd = hr_command_find(w[i])) == NULL)
                return; /* not a command: nothing to complete */
            continue;
        }
        if (l->pending) {
            if (strcmp(w[i], "=") == 0)
                continue; /* bash split "--flag=value" at the '=' */
            set_value(l, l->pending, w[i]);
            l->pending = NULL;
            continue;
        }
        if (!l->dashdash && strcmp(w[i], "--") == 0) {
            l->dashdash = true;
            continue;
        }
        const char *inl;
        const hr_flag *f = l->dashdash ? NULL : hr_flag_find(l->cmd, w[i], &inl);
        if (f && hr_flag_takes_value(f)) {
            if (inl)
                set_value(l, f, inl);
            else
                l->pending = f;
        } else if (f && f->type == HR_FLAG_BOOL) {
            set_value(l, f, inl ? inl : "true");
        } else if (f == NULL && (l->dashdash || w[i][0] != '-')) {
            l->n_pos++;
        }
    }
}

/* Where the candidates go: those starting with match, printed after out. */
typedef struct emit {
    char out[300];
    const char *match;
    size_t n;
} emit;

static void put(void *ud, const char *name)
{
    emit *e = ud;
    if (strncmp(name, e->match, strlen(e->match)) == 0 && strchr(name, '\n') == NULL) {
        printf("%s%s\n", e->out, name);
        e->n++;
    }
}

static hr_status list_names(hr_kclient *k, const char *path, emit *e, hr_err *err)
{
    char url[600];
    snprintf(url, sizeof url, "%s?limit=%d", path, LIST_LIMIT);
    hr_buf b;
    hr_buf_init(&b, MAX_LIST_BYTES);
    hr_kresult res = {0};
    hr_status st = hr_kclient_get_as(k, url, ACCEPT_META, &b, &res, err);
    yyjson_doc *d = st == HR_OK ? yyjson_read(hr_buf_str(&b), b.len, 0) : NULL;
    if (st == HR_OK && d == NULL)
        st = hr_err_set(err, HR_E_INPUT, "%s: the list is not JSON", path);
    size_t i, max;
    yyjson_val *it;
    yyjson_arr_foreach(yyjson_obj_get(yyjson_doc_get_root(d), "items"), i, max, it)
    {
        const char *name = yyjson_get_str(yyjson_ptr_get(it, "/metadata/name"));
        if (name)
            put(e, name);
    }
    yyjson_doc_free(d);
    hr_buf_free(&b);
    return st;
}

/* Where the command's HR_CONN_FLAGS begin, or n_flags when it has none. */
static size_t conn_base(const hr_command *c)
{
    for (size_t i = 0; i + HR_CONN_N <= c->n_flags; i++)
        if (!strcmp(c->flags[i + HR_CONN_KUBECONFIG].name, "kubeconfig") &&
            !strcmp(c->flags[i + HR_CONN_SERVER].name, "server") &&
            !strcmp(c->flags[i + HR_CONN_AS_UID].name, "as-uid"))
            return i;
    return c->n_flags;
}

static hr_status live(const line *l, what w, const char *ns, emit *e, hr_err *err)
{
    long ms = l->timeout ? hr_duration_ms(l->timeout) : 0;
    if (ms <= 0 || ms > TIMEOUT_MS)
        ms = TIMEOUT_MS;
    hr_kclient *k = NULL;
    hr_conn conn = {.o = {.kubeconfig = l->kubeconfig, .context = l->context}};
    size_t base = conn_base(l->cmd);
    if (base < l->cmd->n_flags) {
        /* kubectl's other connection flags on the line (--server, --token, --user...),
         * read by the commands' own reader; the one conflict it reports is left out. */
        hr_args a = {0};
        memcpy(a.val, l->val, sizeof a.val);
        if (a.val[base + HR_CONN_INSECURE] && a.val[base + HR_CONN_CA])
            a.val[base + HR_CONN_INSECURE] = NULL;
        if (hr_conn_opts("", l->cmd, &a, base, &conn) != HR_EXIT_OK)
            return hr_err_set(err, HR_E_INPUT, "the connection flags do not parse");
    }
    conn.o.timeout_ms = ms;
    hr_status st = hr_kclient_new(&conn.o, &k, err);
    if (st != HR_OK)
        return st;
    char path[300];
    if (w == W_NAMESPACES) {
        snprintf(path, sizeof path, "/api/v1/namespaces");
    } else if (w == W_NODES) {
        snprintf(path, sizeof path, "/api/v1/nodes");
    } else {
        if (ns == NULL)
            ns = hr_kclient_namespace(k);
        if (!hr_kname_label(ns))
            st = hr_err_set(err, HR_E_INPUT, "\"%.100s\" is not a namespace name", ns);
        snprintf(path, sizeof path, "/api/v1/namespaces/%.100s/pods", ns);
    }
    if (st == HR_OK)
        st = list_names(k, path, e, err);
    hr_kclient_free(k);
    return st;
}

static hr_status from_kubeconfig(const line *l, what w, emit *e, hr_err *err)
{
    hr_kubeconfig_opts o = {.kubeconfig = l->kubeconfig};
    const char *key = w == W_CONTEXTS ? "contexts" : w == W_CLUSTERS ? "clusters" : "users";
    return hr_kubeconfig_names(&o, key, put, e, err);
}

int hr_cmd_complete(const char *prog, int argc, char **argv)
{
    const char *cur = argc > 0 ? argv[argc - 1] : "";
    line l = {0};
    scan(&l, argc > 0 ? argc - 1 : 0, argv);
    emit e = {.out = "", .match = cur, .n = 0};
    what w = W_NONE;
    const char *ns = l.ns;
    const char *inl = NULL;
    const hr_flag *f = NULL;
    char nsbuf[64];
    if (l.cmd == NULL) {
        w = W_NONE;
    } else if (l.pending) {
        w = flag_what(l.pending);
    } else if (!l.dashdash && cur[0] == '-' && (f = hr_flag_find(l.cmd, cur, &inl)) && inl) {
        /* --flag=PARTIAL in one word (kubectl does not split it): answer whole words. */
        w = flag_what(f);
        snprintf(e.out, sizeof e.out, "%.*s", (int)(inl - cur), cur);
        e.match = inl;
    } else if ((l.dashdash || cur[0] != '-') && l.n_pos == 0) {
        w = arg_what(l.cmd);
        const char *slash = strchr(cur, '/');
        if (w == W_PODS && slash) {
            /* pod/POD, or NAMESPACE/POD: the pods of that namespace. */
            size_t pl = (size_t)(slash - cur);
            bool kind = (pl == 3 && !strncmp(cur, "pod", 3)) ||
                        (pl == 4 && !strncmp(cur, "pods", 4)) ||
                        (pl == 2 && !strncmp(cur, "po", 2));
            if (!kind && pl < sizeof nsbuf) {
                memcpy(nsbuf, cur, pl);
                nsbuf[pl] = '\0';
                ns = nsbuf;
            } else if (!kind) {
                w = W_NONE;
            }
            snprintf(e.out, sizeof e.out, "%.*s", (int)(pl + 1), cur);
            e.match = slash + 1;
        }
    }
    hr_err err;
    hr_status st = HR_OK;
    if (w == W_CONTEXTS || w == W_CLUSTERS || w == W_USERS)
        st = from_kubeconfig(&l, w, &e, &err);
    else if (w != W_NONE)
        st = live(&l, w, ns, &e, &err);
    if (st != HR_OK && getenv("HEADROOM_COMPLETE_DEBUG"))
        fprintf(stderr, "%s __complete: %s\n", prog, err.msg);
    printf(":%d\n", st == HR_OK ? 4 : 1);
    return fflush(stdout) == 0 ? HR_EXIT_OK : HR_EXIT_INPUT;
}
