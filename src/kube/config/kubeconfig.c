/*
 * kubeconfig.c — finding, merging and resolving kubeconfig files, and the
 * in-cluster configuration (see kubeconfig.h for the rules).
 *
 * Files are parsed with libfyaml into documents that stay alive until the
 * configuration is resolved; the merge never builds a merged document: a
 * lookup of a named cluster, user or context walks the files in order and
 * takes the first that has it, which is exactly "first file wins, whole
 * entry" without copying anything.
 *
 * YAML aliases are refused: kubeconfigs have no use for them and expanding
 * them is the classic way to make a small file cost gigabytes.
 */
#include "kube/config/kubeconfig.h"

#include <errno.h>
#include <libfyaml.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "kube/config/incluster.h"
#include "kube/config/override.h"
#include "util/base64.h"
#include "util/file.h"
#include "util/utf8.h"
#include "util/wipe.h"

#define MAX_FILES 64
#define MAX_FILE_BYTES ((size_t)16 << 20) /* a kubeconfig, a CA bundle */
#define MAX_LIST 100000                   /* entries in one list */
#define MAX_ARGS 1024

typedef struct kfile {
    char *text; /* libfyaml builds documents over this; it must outlive doc */
    size_t len;
    struct fy_document *doc;
    struct fy_node *root; /* NULL for an empty file */
    char *path;           /* as given, for messages */
    char *dir;            /* base for relative paths; NULL: cwd */
} kfile;

typedef struct kset {
    kfile f[MAX_FILES];
    size_t n;
} kset;

/* The resolution of one entry: which file it came from, for messages and
 * relative paths. */
typedef struct kctx {
    hr_kubeconfig *c;
    const kfile *file;
    hr_err *err;
    bool no_files;
    const hr_koverrides *ov; /* the flags (kubeconfig.h); never NULL */
} kctx;

static hr_status kerr(const kctx *k, const char *where, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

static hr_status kerr(const kctx *k, const char *where, const char *fmt, ...)
{
    char msg[HR_ERR_MSG_MAX];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    return hr_err_set(k->err, HR_E_INPUT, "kubeconfig %s: %s: %s", k->file ? k->file->path : "?",
                      where, msg);
}

/* ------------------------------------------------------------------ YAML */

static int line_of(struct fy_node *n)
{
    struct fy_token *t = fy_node_get_scalar_token(n);
    const struct fy_mark *m = t ? fy_token_start_mark(t) : NULL;
    return m ? m->line + 1 : 0;
}

static void diag_sink(struct fy_diag *d, void *user, const char *buf, size_t len)
{
    (void)d, (void)user, (void)buf,
        (void)len; /* errors are collected instead (their line/column are 1-based) */
}

static hr_status parse_doc(kfile *f, hr_err *err)
{
    /* libfyaml 0.7.12 loops for ever on invalid UTF-8 inside a directive
     * line (found by fuzz_kubeconfig): nothing unchecked reaches it. */
    size_t bad = hr_utf8_bad((const unsigned char *)f->text, f->len);
    if (bad != f->len)
        return hr_err_set(err, HR_E_INPUT, "kubeconfig %s: byte %zu: not UTF-8 text%s", f->path,
                          bad, f->text[bad] == '\0' ? " (a NUL byte)" : "");
    struct fy_diag_cfg dc;
    fy_diag_cfg_default(&dc);
    dc.fp = NULL;
    dc.output_fn = diag_sink;
    dc.level = FYET_ERROR;
    struct fy_diag *diag = fy_diag_create(&dc);
    if (!diag)
        return hr_err_set(err, HR_E_NOMEM, "kubeconfig %s: cannot create YAML parser", f->path);
    fy_diag_set_collect_errors(diag, true);
    struct fy_parse_cfg pc = {.flags = FYPCF_QUIET, .diag = diag};
    f->doc = fy_document_build_from_string(&pc, f->text, f->len);
    hr_status st = HR_OK;
    if (!f->doc) {
        void *it = NULL;
        struct fy_diag_error *e = fy_diag_errors_iterate(diag, &it);
        char msg[200];
        const char *m = e && e->msg ? e->msg : "invalid YAML";
        hr_err_quote(msg, sizeof msg, m, strlen(m), 150);
        if (e)
            st = hr_err_set(err, HR_E_INPUT, "kubeconfig %s: line %d, column %d: %s", f->path,
                            e->line, e->column, msg);
        else
            st = hr_err_set(err, HR_E_INPUT, "kubeconfig %s: %s", f->path, msg);
    } else {
        f->root = fy_document_root(f->doc);
        if (f->root && fy_node_get_type(f->root) == FYNT_SCALAR &&
            fy_node_get_scalar_length(f->root) == 0)
            f->root = NULL; /* "" or "---": an empty file */
        if (f->root && fy_node_get_type(f->root) != FYNT_MAPPING)
            st = hr_err_set(err, HR_E_INPUT,
                            "kubeconfig %s: the top level must be a mapping (apiVersion, "
                            "clusters, users, contexts, current-context)",
                            f->path);
    }
    fy_diag_destroy(diag);
    return st;
}

static bool is_null_scalar(struct fy_node *n)
{
    if (fy_node_get_style(n) != FYNS_PLAIN)
        return false;
    size_t len;
    const char *s = fy_node_get_scalar(n, &len);
    return !s || len == 0 || (len == 1 && s[0] == '~') ||
           (len == 4 && (!memcmp(s, "null", 4) || !memcmp(s, "Null", 4) || !memcmp(s, "NULL", 4)));
}

/* The text of a scalar node. libfyaml 0.7.12 leaks its work buffer when
 * it unescapes a single-quoted scalar with several '' escapes (4-8 KiB per
 * call, found by fuzz_kubeconfig), so those are decoded here from the
 * source text with YAML's folding rules; everything else comes from
 * libfyaml. *tmp receives memory the caller frees (NULL when none). */
static const char *scalar_text(const kctx *k, struct fy_node *n, size_t *len, char **tmp)
{
    *tmp = NULL;
    struct fy_token *t = fy_node_get_scalar_token(n);
    const struct fy_mark *sm = t ? fy_token_start_mark(t) : NULL;
    const struct fy_mark *em = t ? fy_token_end_mark(t) : NULL;
    const char *src = k->file ? k->file->text : NULL;
    /* The marks span the content, between the quotes. */
    if (fy_node_get_style(n) != FYNS_SINGLE_QUOTED || !sm || !em || !src ||
        em->input_pos >= k->file->len || sm->input_pos == 0 || sm->input_pos > em->input_pos ||
        src[sm->input_pos - 1] != '\'' || src[em->input_pos] != '\'')
        return fy_node_get_scalar(n, len);
    size_t i = sm->input_pos, end = em->input_pos;
    char *o = malloc(end - i + 1);
    if (!o)
        return NULL;
    size_t ol = 0, keep = 0; /* keep: length up to the last non-blank */
    while (i < end) {
        char c = src[i];
        if (c == '\'' && i + 1 < end && src[i + 1] == '\'') {
            o[ol++] = '\'';
            keep = ol;
            i += 2;
        } else if (c == '\n' || c == '\r') {
            ol = keep; /* trailing blanks of the line go */
            size_t empty = 0;
            i += (c == '\r' && i + 1 < end && src[i + 1] == '\n') ? 2 : 1;
            for (;;) {
                while (i < end && (src[i] == ' ' || src[i] == '\t'))
                    i++;
                if (i < end && (src[i] == '\n' || src[i] == '\r')) {
                    empty++;
                    i += (src[i] == '\r' && i + 1 < end && src[i + 1] == '\n') ? 2 : 1;
                    continue;
                }
                break;
            }
            /* One break folds to a space; each empty line is a newline. */
            if (empty == 0)
                o[ol++] = ' ';
            for (size_t e = 0; e < empty; e++)
                o[ol++] = '\n';
            keep = ol;
        } else {
            o[ol++] = c;
            if (c != ' ' && c != '\t')
                keep = ol;
            i++;
        }
    }
    o[ol] = '\0';
    *tmp = o;
    *len = ol;
    return o;
}

/* The node under key, NULL when absent or null. Aliases are errors. */
static hr_status child(const kctx *k, struct fy_node *map, const char *where, const char *key,
                       struct fy_node **out)
{
    *out = NULL;
    if (!map)
        return HR_OK;
    struct fy_node *n = fy_node_mapping_lookup_by_string(map, key, FY_NT);
    if (!n)
        return HR_OK;
    if (fy_node_get_type(n) == FYNT_SCALAR && fy_node_get_style(n) == FYNS_ALIAS)
        return kerr(k, where, "%s: YAML aliases are not supported", key);
    if (fy_node_get_type(n) == FYNT_SCALAR && is_null_scalar(n))
        return HR_OK;
    *out = n;
    return HR_OK;
}

static hr_status want_type(const kctx *k, struct fy_node *n, enum fy_node_type t, const char *where,
                           const char *key)
{
    if (!n || fy_node_get_type(n) == t)
        return HR_OK;
    const char *names[] = {"a string", "a list", "a mapping"};
    return kerr(k, where, "%s: expected %s (line %d)", key, names[t], line_of(n));
}

/* A string field, copied into the arena; NULL when absent, null or "". */
static hr_status get_str(const kctx *k, struct fy_node *map, const char *where, const char *key,
                         const char **out)
{
    struct fy_node *n;
    *out = NULL;
    hr_status st = child(k, map, where, key, &n);
    if (st || !n)
        return st;
    if ((st = want_type(k, n, FYNT_SCALAR, where, key)))
        return st;
    size_t len = 0;
    char *tmp;
    const char *s = scalar_text(k, n, &len, &tmp);
    if (!s || !len) {
        free(tmp);
        return HR_OK;
    }
    if (memchr(s, '\0', len)) {
        free(tmp);
        return kerr(k, where, "%s: contains a NUL byte (line %d)", key, line_of(n));
    }
    char *d = hr_arena_strndup(&k->c->arena, s, len);
    free(tmp);
    if (!d)
        return hr_err_set(k->err, HR_E_NOMEM, "kubeconfig: out of memory");
    *out = d;
    return HR_OK;
}

/* A list of strings (exec args, as-groups), copied into the arena with a
 * NULL after the last; *out NULL when absent. */
static hr_status str_list(const kctx *k, struct fy_node *list, const char *where, const char *key,
                          const char ***out, size_t *n_out)
{
    hr_status st;
    *out = NULL;
    *n_out = 0;
    if (!list || (st = want_type(k, list, FYNT_SEQUENCE, where, key)))
        return list ? st : HR_OK;
    int n = fy_node_sequence_item_count(list);
    if (n > MAX_ARGS)
        return kerr(k, where, "%s: more than %d entries", key, MAX_ARGS);
    const char **v = hr_arena_calloc(&k->c->arena, (size_t)n + 1, sizeof *v);
    if (!v)
        return hr_err_set(k->err, HR_E_NOMEM, "kubeconfig: out of memory");
    for (int i = 0; i < n; i++) {
        struct fy_node *e = fy_node_sequence_get_by_index(list, i);
        char w[260];
        snprintf(w, sizeof w, "%s.%s[%d]", where, key, i);
        if (fy_node_get_type(e) != FYNT_SCALAR || fy_node_get_style(e) == FYNS_ALIAS)
            return kerr(k, w, "expected a string");
        size_t len = 0;
        char *tmp;
        const char *t = scalar_text(k, e, &len, &tmp);
        if (!t)
            t = "";
        bool nul = memchr(t, '\0', len) != NULL;
        v[i] = nul ? NULL : hr_arena_strndup(&k->c->arena, t, len);
        free(tmp);
        if (nul)
            return kerr(k, w, "contains a NUL byte");
        if (!v[i])
            return hr_err_set(k->err, HR_E_NOMEM, "kubeconfig: out of memory");
    }
    *out = v;
    *n_out = (size_t)n;
    return HR_OK;
}

static hr_status get_str_list(const kctx *k, struct fy_node *map, const char *where,
                              const char *key, const char ***out, size_t *n_out)
{
    struct fy_node *list;
    *out = NULL;
    *n_out = 0;
    hr_status st = child(k, map, where, key, &list);
    return st ? st : str_list(k, list, where, key, out, n_out);
}

static hr_status get_bool(const kctx *k, struct fy_node *map, const char *where, const char *key,
                          bool *out)
{
    struct fy_node *n;
    *out = false;
    hr_status st = child(k, map, where, key, &n);
    if (st || !n)
        return st;
    if ((st = want_type(k, n, FYNT_SCALAR, where, key)))
        return st;
    size_t len = 0;
    char *tmp;
    const char *s = scalar_text(k, n, &len, &tmp);
    bool v = false, known = false;
    static const char *const yes[] = {"true", "True", "TRUE"};
    static const char *const no[] = {"false", "False", "FALSE"};
    for (size_t i = 0; s && i < 3; i++) {
        if (len == strlen(yes[i]) && !memcmp(s, yes[i], len))
            v = known = true;
        if (len == strlen(no[i]) && !memcmp(s, no[i], len))
            known = true;
    }
    char q[40];
    hr_err_quote(q, sizeof q, s ? s : "", s ? len : 0, 30);
    free(tmp);
    if (!known)
        return kerr(k, where, "%s: expected true or false, got \"%s\" (line %d)", key, q,
                    line_of(n));
    *out = v;
    return HR_OK;
}

/* A base64 *-data field, decoded into the arena. */
static hr_status get_data(const kctx *k, struct fy_node *map, const char *where, const char *key,
                          const unsigned char **out, size_t *out_len)
{
    const char *s;
    *out = NULL;
    *out_len = 0;
    hr_status st = get_str(k, map, where, key, &s);
    if (st || !s)
        return st;
    size_t len = strlen(s);
    unsigned char *d = hr_arena_alloc(&k->c->arena, hr_b64_max(len) + 1);
    if (!d)
        return hr_err_set(k->err, HR_E_NOMEM, "kubeconfig: out of memory");
    size_t bad = 0;
    size_t n = hr_b64_decode(s, len, d, &bad);
    if (n == (size_t)-1)
        return kerr(k, where, "%s: invalid base64 at byte %zu", key, bad);
    if (n == 0)
        return kerr(k, where, "%s: decodes to nothing", key);
    d[n] = '\0';
    *out = d;
    *out_len = n;
    return HR_OK;
}

/* Relative to the file's directory, as kubectl resolves them. */
static hr_status resolve_path(const kctx *k, const char *p, const char **out)
{
    if (!p || p[0] == '/' || !k->file || !k->file->dir) {
        *out = p;
        return HR_OK;
    }
    size_t dl = strlen(k->file->dir), pl = strlen(p);
    char *r = hr_arena_alloc(&k->c->arena, dl + pl + 2);
    if (!r)
        return hr_err_set(k->err, HR_E_NOMEM, "kubeconfig: out of memory");
    memcpy(r, k->file->dir, dl);
    r[dl] = '/';
    memcpy(r + dl + 1, p, pl + 1);
    *out = r;
    return HR_OK;
}

static hr_status read_into_arena(const kctx *k, const char *where, const char *key,
                                 const char *path, const unsigned char **out, size_t *out_len)
{
    *out = NULL;
    *out_len = 0;
    if (k->no_files)
        return HR_OK;
    char *buf;
    size_t len;
    hr_err e;
    /* "-" means stdin to hr_file_slurp; here it is a file name. */
    const char *p = strcmp(path, "-") == 0 ? "./-" : path;
    if (hr_file_slurp(p, MAX_FILE_BYTES, 1, &buf, &len, &e) != HR_OK) {
        return kerr(k, where, "%s: %s", key, e.msg);
    }
    unsigned char *d = hr_arena_alloc(&k->c->arena, len + 1);
    if (d) {
        memcpy(d, buf, len);
        d[len] = '\0';
    }
    hr_wipe(buf, len);
    free(buf);
    if (!d)
        return hr_err_set(k->err, HR_E_NOMEM, "kubeconfig: out of memory");
    if (len == 0)
        return kerr(k, where, "%s: %s is empty", key, path);
    *out = d;
    *out_len = len;
    return HR_OK;
}

/* The file or the inline data of one credential; both at once is an error
 * in kubectl too. */
static hr_status file_or_data(const kctx *k, struct fy_node *map, const char *where,
                              const char *fkey, const char *dkey, const unsigned char **out,
                              size_t *out_len)
{
    const char *path;
    hr_status st = get_data(k, map, where, dkey, out, out_len);
    if (st)
        return st;
    if ((st = get_str(k, map, where, fkey, &path)))
        return st;
    if (path && *out)
        return kerr(k, where, "both %s and %s are set; use one", fkey, dkey);
    if (!path)
        return HR_OK;
    if ((st = resolve_path(k, path, &path)))
        return st;
    return read_into_arena(k, where, fkey, path, out, out_len);
}

/* Find the entry called name in list_key ("clusters") of the first file
 * that has one; *payload is its inner mapping (entry[inner]). */
static hr_status find_entry(kset *ks, kctx *k, const char *list_key, const char *inner,
                            const char *name, struct fy_node **payload, char *where,
                            size_t where_cap)
{
    *payload = NULL;
    for (size_t i = 0; i < ks->n; i++) {
        k->file = &ks->f[i];
        struct fy_node *list;
        hr_status st = child(k, ks->f[i].root, "top level", list_key, &list);
        if (st)
            return st;
        if (!list)
            continue;
        if ((st = want_type(k, list, FYNT_SEQUENCE, "top level", list_key)))
            return st;
        void *it = NULL;
        struct fy_node *item;
        size_t idx = 0;
        while ((item = fy_node_sequence_iterate(list, &it)) != NULL) {
            char w[64];
            snprintf(w, sizeof w, "%s[%zu]", list_key, idx);
            if (++idx > MAX_LIST)
                return kerr(k, list_key, "more than %d entries", MAX_LIST);
            if (fy_node_get_type(item) != FYNT_MAPPING)
                return kerr(k, w, "expected a mapping with name and %s", inner);
            const char *n;
            if ((st = get_str(k, item, w, "name", &n)))
                return st;
            if (!n || strcmp(n, name) != 0)
                continue;
            char q[80];
            snprintf(where, where_cap, "%s[name=%s]", list_key,
                     hr_err_quote(q, sizeof q, name, strlen(name), 60));
            struct fy_node *p;
            if ((st = child(k, item, where, inner, &p)))
                return st;
            if ((st = want_type(k, p, FYNT_MAPPING, where, inner)))
                return st;
            *payload = p;
            size_t wl = strlen(where);
            snprintf(where + wl, where_cap - wl, ".%s", inner);
            return HR_OK;
        }
    }
    return HR_E_NOTFOUND;
}

/* ------------------------------------------------------------ resolution */

static hr_status resolve_exec(kctx *k, struct fy_node *user, const char *uwhere)
{
    struct fy_node *ex;
    hr_status st = child(k, user, uwhere, "exec", &ex);
    if (st || !ex)
        return st;
    char where[200];
    if (snprintf(where, sizeof where, "%s.exec", uwhere) >= (int)sizeof where)
        where[sizeof where - 1] = '\0'; /* a long path only shortens messages */
    if ((st = want_type(k, ex, FYNT_MAPPING, uwhere, "exec")))
        return st;
    hr_arena *a = &k->c->arena;
    hr_kexec *e = hr_arena_calloc(a, 1, sizeof *e);
    if (!e)
        return hr_err_set(k->err, HR_E_NOMEM, "kubeconfig: out of memory");
    const char *mode;
    if ((st = get_str(k, ex, where, "apiVersion", &e->api_version)) ||
        (st = get_str(k, ex, where, "command", &e->command)) ||
        (st = get_str(k, ex, where, "installHint", &e->install_hint)) ||
        (st = get_str(k, ex, where, "interactiveMode", &mode)) ||
        (st = get_bool(k, ex, where, "provideClusterInfo", &e->provide_cluster_info)))
        return st;
    if (!e->command)
        return kerr(k, where, "command is required");
    if (!e->api_version)
        return kerr(k, where, "apiVersion is required (client.authentication.k8s.io/v1)");
    if (strcmp(e->api_version, "client.authentication.k8s.io/v1") != 0 &&
        strcmp(e->api_version, "client.authentication.k8s.io/v1beta1") != 0)
        return kerr(k, where,
                    "apiVersion: \"%.80s\" is not supported (client.authentication.k8s.io/v1 "
                    "or v1beta1)",
                    e->api_version);
    if (mode && strcmp(mode, "Never") != 0 && strcmp(mode, "IfAvailable") != 0 &&
        strcmp(mode, "Always") != 0)
        return kerr(k, where, "interactiveMode: \"%.40s\" is not Never, IfAvailable or Always",
                    mode);
    e->interactive_always = mode && strcmp(mode, "Always") == 0;
    /* kubectl resolves the command against the file only when it is a path. */
    if (strchr(e->command, '/') && (st = resolve_path(k, e->command, &e->command)))
        return st;

    const char **av;
    size_t na;
    struct fy_node *env;
    if ((st = get_str_list(k, ex, where, "args", &av, &na)) ||
        (st = child(k, ex, where, "env", &env)) ||
        (st = want_type(k, env, FYNT_SEQUENCE, where, "env")))
        return st;
    int ne = env ? fy_node_sequence_item_count(env) : 0;
    if (ne > MAX_ARGS)
        return kerr(k, where, "more than %d env entries", MAX_ARGS);
    const char **en = hr_arena_calloc(a, (size_t)ne + 1, sizeof *en);
    const char **ev = hr_arena_calloc(a, (size_t)ne + 1, sizeof *ev);
    if (!en || !ev)
        return hr_err_set(k->err, HR_E_NOMEM, "kubeconfig: out of memory");
    for (int i = 0; i < ne; i++) {
        struct fy_node *n = fy_node_sequence_get_by_index(env, i);
        char w[220];
        snprintf(w, sizeof w, "%s.env[%d]", where, i);
        if (fy_node_get_type(n) != FYNT_MAPPING)
            return kerr(k, w, "expected a mapping with name and value");
        if ((st = get_str(k, n, w, "name", &en[i])) || (st = get_str(k, n, w, "value", &ev[i])))
            return st;
        if (!en[i] || strchr(en[i], '='))
            return kerr(k, w, "name: must be set and must not contain '='");
        if (!ev[i])
            ev[i] = "";
    }
    e->args = av;
    e->n_args = na;
    e->env_names = en;
    e->env_values = ev;
    e->n_env = (size_t)ne;
    k->c->exec = e;
    return HR_OK;
}

/* The user's as, as-uid, as-groups and as-user-extra (a mapping of keys
 * to lists of values), checked as header values by hr_koverride_apply. */
static hr_status resolve_as(kctx *k, struct fy_node *u, const char *where)
{
    hr_kubeconfig *c = k->c;
    struct fy_node *ex;
    size_t ng;
    hr_status st;
    if ((st = get_str(k, u, where, "as", &c->as_user)) ||
        (st = get_str(k, u, where, "as-uid", &c->as_uid)) ||
        (st = get_str_list(k, u, where, "as-groups", (const char ***)&c->as_groups, &ng)) ||
        (st = child(k, u, where, "as-user-extra", &ex)) ||
        (st = want_type(k, ex, FYNT_MAPPING, where, "as-user-extra")))
        return st;
    c->n_as_groups = ng;
    int nk = ex ? fy_node_mapping_item_count(ex) : 0;
    const char **keys = nk ? hr_arena_calloc(&c->arena, MAX_ARGS, sizeof *keys) : NULL;
    const char **vals = nk ? hr_arena_calloc(&c->arena, MAX_ARGS, sizeof *vals) : NULL;
    if (nk && (!keys || !vals))
        return hr_err_set(k->err, HR_E_NOMEM, "kubeconfig: out of memory");
    size_t n = 0;
    for (int i = 0; i < nk; i++) {
        struct fy_node_pair *pr = fy_node_mapping_get_by_index(ex, i);
        struct fy_node *kn = fy_node_pair_key(pr);
        size_t kl = 0;
        char *ktmp = NULL; /* scalar_text: libfyaml's single-quoted leak */
        const char *key =
            kn && fy_node_get_type(kn) == FYNT_SCALAR ? scalar_text(k, kn, &kl, &ktmp) : NULL;
        char w[260];
        snprintf(w, sizeof w, "%s.as-user-extra", where);
        const char **v;
        size_t nv;
        char *kd =
            key && kl && !memchr(key, '\0', kl) ? hr_arena_strndup(&c->arena, key, kl) : NULL;
        free(ktmp);
        if (!kd)
            return kerr(k, w, "a key that is not a string");
        struct fy_node *vn = fy_node_pair_value(pr);
        if (vn && fy_node_get_type(vn) == FYNT_SCALAR && is_null_scalar(vn))
            vn = NULL;
        if ((st = str_list(k, vn, w, kd, &v, &nv)))
            return st;
        if (n + nv > MAX_ARGS)
            return kerr(k, w, "more than %d values", MAX_ARGS);
        for (size_t j = 0; j < nv; j++)
            keys[n] = kd, vals[n++] = v[j];
    }
    c->as_extra_keys = keys;
    c->as_extra_values = vals;
    c->n_as_extra = n;
    return HR_OK;
}

static hr_status resolve_user(kctx *k, struct fy_node *u, const char *where)
{
    hr_kubeconfig *c = k->c;
    hr_status st;
    struct fy_node *ap;
    if ((st = child(k, u, where, "auth-provider", &ap)))
        return st;
    if (ap)
        return kerr(k, where,
                    "auth-provider plugins are not supported (they were removed from "
                    "kubectl too); use an exec credential plugin");
    if ((st = file_or_data(k, u, where, "client-certificate", "client-certificate-data", &c->cert,
                           &c->cert_len)) ||
        (st = file_or_data(k, u, where, "client-key", "client-key-data", &c->key, &c->key_len)) ||
        (st = get_str(k, u, where, "token", &c->token)) ||
        (st = get_str(k, u, where, "tokenFile", &c->token_file)) ||
        (st = get_str(k, u, where, "username", &c->username)) ||
        (st = get_str(k, u, where, "password", &c->password)) || (st = resolve_as(k, u, where)))
        return st;
    const hr_koverrides *ov = k->ov;
    if (ov->token || ov->cert_file || ov->key_file)
        return resolve_exec(k, u, where); /* the flags replace these: checked after them */
    if (!c->cert != !c->key)
        return kerr(k, where, "%s is set without %s",
                    c->cert ? "client-certificate(-data)" : "client-key(-data)",
                    c->cert ? "client-key(-data)" : "client-certificate(-data)");
    if ((c->token || c->token_file) && (c->username || c->password))
        return kerr(k, where, "more than one authentication method (token and basic auth)");
    if (c->token_file && (st = resolve_path(k, c->token_file, &c->token_file)))
        return st;
    return resolve_exec(k, u, where);
}

static hr_status normalize_server(kctx *k, const char *where, const char *s)
{
    const char *why = "no server is set";
    if (s && !(s = hr_kserver_normalize(&k->c->arena, s, &why)) && !why)
        return hr_err_set(k->err, HR_E_NOMEM, "kubeconfig: out of memory");
    if (!s)
        return kerr(k, where, "server: %s", why);
    k->c->server = s;
    return HR_OK;
}

static hr_status resolve_cluster(kctx *k, struct fy_node *cl, const char *where)
{
    hr_kubeconfig *c = k->c;
    const char *server;
    hr_status st;
    if ((st = get_str(k, cl, where, "server", &server)) ||
        (st = get_str(k, cl, where, "tls-server-name", &c->tls_server_name)) ||
        (st = get_str(k, cl, where, "proxy-url", &c->proxy_url)) ||
        (st = get_bool(k, cl, where, "insecure-skip-tls-verify", &c->insecure)) ||
        (st = file_or_data(k, cl, where, "certificate-authority", "certificate-authority-data",
                           &c->ca, &c->ca_len)))
        return st;
    if (c->insecure && c->ca && !k->ov->insecure && !k->ov->ca_file)
        return kerr(k, where,
                    "insecure-skip-tls-verify is set together with a certificate authority; "
                    "kubectl refuses that too (drop one)");
    if (c->tls_server_name)
        for (const char *p = c->tls_server_name; *p; p++)
            if ((unsigned char)*p <= ' ' || *p == ':' || *p == '/' || *p == 0x7f)
                return kerr(k, where, "tls-server-name: not a host name");
    return k->ov->server ? HR_OK : normalize_server(k, where, server); /* --server wins */
}

/* The entry called name in list (clusters, users) into *node; an error
 * naming who asked for it (the context, or the flag) when there is none. */
static hr_status named_entry(kset *ks, kctx *k, const char *list, const char *inner,
                             const char *name, const char *ctx_name, bool by_flag,
                             struct fy_node **node, char *where, size_t cap)
{
    hr_status st = find_entry(ks, k, list, inner, name, node, where, cap);
    if (st != HR_E_NOTFOUND)
        return st;
    k->file = ks->n ? &ks->f[0] : NULL;
    if (by_flag)
        return kerr(k, list, "%s \"%.100s\" (--%s) not found", inner, name, inner);
    return kerr(k, list, "%s \"%.100s\" (of context \"%.100s\") not found", inner, name, ctx_name);
}

static hr_status resolve(kset *ks, const char *context, const hr_koverrides *ov, hr_kubeconfig *c,
                         bool no_files, hr_err *err)
{
    kctx k = {c, NULL, err, no_files, ov};
    hr_status st;
    const char *ctx_name = context && *context ? context : NULL;
    /* current-context: the first file that sets it. */
    for (size_t i = 0; !ctx_name && i < ks->n; i++) {
        k.file = &ks->f[i];
        if ((st = get_str(&k, ks->f[i].root, "top level", "current-context", &ctx_name)))
            return st;
    }
    k.file = ks->n ? &ks->f[0] : NULL;
    /* No context, but --server or --cluster: the flags alone (kubectl). */
    if (!ctx_name && !ov->server && !ov->cluster)
        return kerr(&k, "current-context", "not set, and no --context (or --server) given");
    char where[200];
    const char *cl_name = NULL, *user_name = NULL;
    c->context = "";
    if (ctx_name) {
        struct fy_node *cx;
        st = find_entry(ks, &k, "contexts", "context", ctx_name, &cx, where, sizeof where);
        if (st == HR_E_NOTFOUND) {
            k.file = &ks->f[0];
            return kerr(&k, "contexts", "context \"%.100s\" not found", ctx_name);
        }
        if (st || (st = get_str(&k, cx, where, "cluster", &cl_name)) ||
            (st = get_str(&k, cx, where, "user", &user_name)) ||
            (st = get_str(&k, cx, where, "namespace", &c->ns)))
            return st;
        if (!(c->context = hr_arena_strdup(&c->arena, ctx_name)))
            return hr_err_set(err, HR_E_NOMEM, "kubeconfig: out of memory");
        if (!cl_name && !ov->cluster && !ov->server)
            return kerr(&k, where, "cluster: not set");
    }
    if (ov->cluster)
        cl_name = ov->cluster;
    if (ov->user)
        user_name = ov->user;
    c->cluster_name = cl_name ? cl_name : "";
    c->user_name = user_name ? user_name : "";
    if (!c->ns)
        c->ns = "default";

    struct fy_node *n;
    if (cl_name && ((st = named_entry(ks, &k, "clusters", "cluster", cl_name, ctx_name,
                                      ov->cluster != NULL, &n, where, sizeof where)) ||
                    (st = resolve_cluster(&k, n, where))))
        return st;
    if (user_name && ((st = named_entry(ks, &k, "users", "user", user_name, ctx_name,
                                        ov->user != NULL, &n, where, sizeof where)) ||
                      (st = resolve_user(&k, n, where))))
        return st;
    return HR_OK;
}

/* --------------------------------------------------------------- loading */

static void kset_free(kset *ks)
{
    for (size_t i = 0; i < ks->n; i++) {
        fy_document_destroy(ks->f[i].doc);
        hr_wipe(ks->f[i].text, ks->f[i].len);
        free(ks->f[i].text);
        free(ks->f[i].path);
        free(ks->f[i].dir);
    }
    ks->n = 0;
}

hr_kubeconfig *hr_kubeconfig_new(void)
{
    hr_kubeconfig *c = calloc(1, sizeof *c);
    if (!c)
        return NULL;
    hr_arena_init(&c->arena, 16 * 1024);
    return c;
}

void hr_kubeconfig_free(hr_kubeconfig *c)
{
    if (!c)
        return;
    /* The arena's bytes, const to readers: ours to wipe. */
    hr_wipe((void *)(uintptr_t)c->key, c->key_len);
    hr_wipe_str((char *)(uintptr_t)c->token);
    hr_wipe_str((char *)(uintptr_t)c->password);
    hr_arena_free(&c->arena);
    free(c);
}

/* Take ownership of text; parse it as file i of ks. */
static hr_status kset_add(kset *ks, char *text, size_t len, const char *path, const char *dir,
                          hr_err *err)
{
    if (ks->n == MAX_FILES) {
        free(text);
        return hr_err_set(err, HR_E_LIMIT, "more than %d kubeconfig files", MAX_FILES);
    }
    kfile *f = &ks->f[ks->n++];
    *f = (kfile){0}; /* not memset: the analyzer then loses ks->n and reports leaks */
    f->text = text;
    f->len = len;
    f->path = strdup(path);
    f->dir = dir ? strdup(dir) : NULL;
    if (!f->path || (dir && !f->dir))
        return hr_err_set(err, HR_E_NOMEM, "kubeconfig: out of memory");
    return parse_doc(f, err);
}

static char *dir_of(const char *path)
{
    const char *slash = strrchr(path, '/');
    if (!slash)
        return NULL; /* relative to the working directory */
    if (slash == path)
        return strdup("/");
    return strndup(path, (size_t)(slash - path));
}

static hr_status kset_load_file(kset *ks, const char *path, hr_err *err)
{
    char *text;
    size_t len;
    hr_err e;
    if (hr_file_slurp(path, MAX_FILE_BYTES, 1, &text, &len, &e) != HR_OK)
        return hr_err_set(err, e.code, "kubeconfig %s", e.msg);
    char *dir = dir_of(path);
    hr_status st = kset_add(ks, text, len, path, dir, err);
    free(dir);
    return st;
}

hr_status hr_kubeconfig_parse(const char *yaml, size_t len, const char *origin,
                              const char *base_dir, const char *context, unsigned flags,
                              hr_kubeconfig **out, hr_err *err)
{
    static const hr_koverrides no_ov = {0};
    *out = NULL;
    kset ks = {.n = 0};
    char *text = malloc(len + 1);
    if (!text)
        return hr_err_set(err, HR_E_NOMEM, "kubeconfig: out of memory");
    memcpy(text, yaml, len);
    text[len] = '\0';
    hr_kubeconfig *c = hr_kubeconfig_new();
    hr_status st = c ? HR_OK : hr_err_set(err, HR_E_NOMEM, "kubeconfig: out of memory");
    if (!st)
        st = kset_add(&ks, text, len, origin ? origin : "<memory>", base_dir, err);
    else
        free(text);
    if (!st)
        st = resolve(&ks, context, &no_ov, c, (flags & HR_KUBECONFIG_NO_FILES) != 0, err);
    if (!st) {
        char o[300];
        snprintf(o, sizeof o, "kubeconfig %s", origin ? origin : "<memory>");
        if (!(c->origin = hr_arena_strdup(&c->arena, o)))
            st = hr_err_set(err, HR_E_NOMEM, "kubeconfig: out of memory");
    }
    if (!st)
        st = hr_koverride_apply(c, &no_ov, err);
    kset_free(&ks);
    if (st) {
        hr_kubeconfig_free(c);
        return st;
    }
    *out = c;
    return HR_OK;
}

static bool file_exists(const char *p)
{
    struct stat sb;
    return stat(p, &sb) == 0 && !S_ISDIR(sb.st_mode);
}

/* No kubeconfig, but --server: everything comes from the flags. */
static hr_status flags_only(hr_kubeconfig **out, hr_err *err)
{
    hr_kubeconfig *c = hr_kubeconfig_new();
    if (!c)
        return hr_err_set(err, HR_E_NOMEM, "kubeconfig: out of memory");
    c->origin = "the command line (--server, no kubeconfig)";
    c->context = c->cluster_name = c->user_name = "";
    c->ns = "default";
    *out = c;
    return HR_OK;
}

hr_status hr_kubeconfig_load(const hr_kubeconfig_opts *o, hr_kubeconfig **out, hr_err *err)
{
    static const hr_kubeconfig_opts none = {0};
    if (!o)
        o = &none;
    *out = NULL;
    kset ks = {.n = 0};
    hr_status st = HR_OK;
    char origin[1024];
    size_t ol = 0;
    origin[0] = '\0';

    const char *env = o->env_kubeconfig ? o->env_kubeconfig : getenv("KUBECONFIG");
    char looked[600] = "";
    if (o->kubeconfig && *o->kubeconfig) {
        /* An explicit file must exist: a typo must not silently pick
         * another cluster. */
        if ((st = kset_load_file(&ks, o->kubeconfig, err)))
            goto out;
        snprintf(origin, sizeof origin, "%.1000s", o->kubeconfig);
    } else if (env && *env) {
        char *list = strdup(env);
        if (!list) {
            st = hr_err_set(err, HR_E_NOMEM, "kubeconfig: out of memory");
            goto out;
        }
        char *save = NULL;
        for (char *p = strtok_r(list, ":", &save); p; p = strtok_r(NULL, ":", &save)) {
            bool dup = false;
            for (size_t i = 0; i < ks.n; i++)
                dup |= strcmp(ks.f[i].path, p) == 0;
            if (dup || !file_exists(p))
                continue; /* kubectl skips missing entries of $KUBECONFIG */
            if ((st = kset_load_file(&ks, p, err)))
                break;
            ol += (size_t)snprintf(origin + ol, ol < sizeof origin ? sizeof origin - ol : 0, "%s%s",
                                   ol ? ":" : "", p);
            if (ol >= sizeof origin)
                ol = sizeof origin - 1;
        }
        free(list);
        if (st)
            goto out;
        snprintf(looked, sizeof looked, "$KUBECONFIG=%.500s", env);
    } else {
        const char *home = o->home ? o->home : getenv("HOME");
        if (home && *home) {
            char p[4096];
            snprintf(p, sizeof p, "%s/.kube/config", home);
            if (file_exists(p)) {
                if ((st = kset_load_file(&ks, p, err)))
                    goto out;
                snprintf(origin, sizeof origin, "%.1000s", p);
            }
            snprintf(looked, sizeof looked, "%.500s", p);
        }
    }

    if (ks.n == 0) {
        const char *host = o->svc_host ? o->svc_host : getenv("KUBERNETES_SERVICE_HOST");
        const char *port = o->svc_port ? o->svc_port : getenv("KUBERNETES_SERVICE_PORT");
        if (o->ov.cluster || o->ov.user) {
            st = hr_err_set(
                err, HR_E_NOTFOUND, "--%s \"%.100s\": no kubeconfig found to find it in",
                o->ov.cluster ? "cluster" : "user", o->ov.cluster ? o->ov.cluster : o->ov.user);
            goto out;
        }
        if (o->ov.server || (!o->no_in_cluster && host && *host && port && *port)) {
            /* --server: the flags alone, as kubectl; else in-cluster, the flags over it. */
            st = o->ov.server ? flags_only(out, err)
                              : hr_kincluster(o->sa_dir, host, port, out, err);
            if (!st && (st = hr_koverride_apply(*out, &o->ov, err))) {
                hr_kubeconfig_free(*out);
                *out = NULL;
            }
            goto out;
        }
        st = hr_err_set(err, HR_E_NOTFOUND,
                        "no kubeconfig found (looked at %s) and not running in a cluster "
                        "(KUBERNETES_SERVICE_HOST unset); use --kubeconfig",
                        looked[0] ? looked : "nothing: $HOME unset");
        goto out;
    }

    hr_kubeconfig *c = hr_kubeconfig_new();
    if (!c) {
        st = hr_err_set(err, HR_E_NOMEM, "kubeconfig: out of memory");
        goto out;
    }
    st = resolve(&ks, o->context, &o->ov, c, false, err);
    if (!st) {
        char o2[1100];
        snprintf(o2, sizeof o2, "kubeconfig %s", origin);
        if (!(c->origin = hr_arena_strdup(&c->arena, o2)))
            st = hr_err_set(err, HR_E_NOMEM, "kubeconfig: out of memory");
    }
    if (!st)
        st = hr_koverride_apply(c, &o->ov, err);
    if (st)
        hr_kubeconfig_free(c);
    else
        *out = c;
out:
    kset_free(&ks);
    return st;
}
