/*
 * kcnames.c — the names of a kubeconfig's contexts, clusters or users
 * (kcnames.h). The files are found by kubeconfig.h's rules; each is parsed
 * with libfyaml on its own and only the `name` of each entry of one list is
 * read, so nothing the entries point at is touched.
 */
#include "kube/config/kcnames.h"

#include <libfyaml.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "util/file.h"

#define MAX_FILES 64
#define MAX_FILE_BYTES ((size_t)16 << 20)
#define MAX_NAMES 4096

typedef struct seen {
    char *name[MAX_NAMES];
    size_t n;
} seen;

static bool regular_file(const char *p)
{
    struct stat sb;
    return stat(p, &sb) == 0 && !S_ISDIR(sb.st_mode);
}

static void quiet(struct fy_diag *d, void *user, const char *buf, size_t len)
{
    (void)d, (void)user, (void)buf, (void)len;
}

/* The names of list_key in one file, those not seen in an earlier one. */
static hr_status one_file(const char *path, const char *list_key, seen *s, hr_kcname_fn fn,
                          void *ud, hr_err *err)
{
    char *text;
    size_t len;
    hr_err e;
    if (hr_file_slurp(path, MAX_FILE_BYTES, 1, &text, &len, &e) != HR_OK)
        return hr_err_set(err, e.code, "kubeconfig %s", e.msg);
    struct fy_diag_cfg dc;
    fy_diag_cfg_default(&dc);
    dc.fp = NULL;
    dc.output_fn = quiet;
    struct fy_diag *diag = fy_diag_create(&dc);
    struct fy_parse_cfg pc = {.flags = FYPCF_QUIET, .diag = diag};
    struct fy_document *doc = diag ? fy_document_build_from_string(&pc, text, len) : NULL;
    hr_status st = HR_OK;
    if (doc == NULL) {
        st = hr_err_set(err, HR_E_INPUT, "kubeconfig %s: not YAML", path);
        goto out;
    }
    struct fy_node *root = fy_document_root(doc);
    struct fy_node *list = root && fy_node_get_type(root) == FYNT_MAPPING
                               ? fy_node_mapping_lookup_by_string(root, list_key, FY_NT)
                               : NULL;
    if (list == NULL || fy_node_get_type(list) != FYNT_SEQUENCE)
        goto out; /* no such list: no names */
    void *it = NULL;
    struct fy_node *item;
    while ((item = fy_node_sequence_iterate(list, &it)) != NULL) {
        if (fy_node_get_type(item) != FYNT_MAPPING)
            continue;
        struct fy_node *nn = fy_node_mapping_lookup_by_string(item, "name", FY_NT);
        size_t nl = 0;
        const char *n =
            nn && fy_node_get_type(nn) == FYNT_SCALAR ? fy_node_get_scalar(nn, &nl) : NULL;
        if (n == NULL || nl == 0 || memchr(n, '\0', nl) || memchr(n, '\n', nl))
            continue;
        char *name = strndup(n, nl);
        if (name == NULL) {
            st = hr_err_set(err, HR_E_NOMEM, "kubeconfig: out of memory");
            break;
        }
        bool dup = false;
        for (size_t i = 0; i < s->n && !dup; i++)
            dup = strcmp(s->name[i], name) == 0;
        if (dup || s->n == MAX_NAMES) {
            free(name);
            continue;
        }
        s->name[s->n++] = name;
        fn(ud, name);
    }
out:
    fy_document_destroy(doc);
    fy_diag_destroy(diag);
    free(text);
    return st;
}

hr_status hr_kubeconfig_names(const hr_kubeconfig_opts *o, const char *list_key, hr_kcname_fn fn,
                              void *ud, hr_err *err)
{
    static const hr_kubeconfig_opts none = {0};
    if (o == NULL)
        o = &none;
    seen *s = calloc(1, sizeof *s);
    if (s == NULL)
        return hr_err_set(err, HR_E_NOMEM, "kubeconfig: out of memory");
    hr_status st = HR_OK;
    size_t files = 0;
    const char *env = o->env_kubeconfig ? o->env_kubeconfig : getenv("KUBECONFIG");
    if (o->kubeconfig && *o->kubeconfig) {
        st = one_file(o->kubeconfig, list_key, s, fn, ud, err);
        files = 1;
    } else if (env && *env) {
        char *list = strdup(env);
        char *done[MAX_FILES];
        if (list == NULL)
            st = hr_err_set(err, HR_E_NOMEM, "kubeconfig: out of memory");
        char *save = NULL;
        for (char *p = list ? strtok_r(list, ":", &save) : NULL; p && st == HR_OK;
             p = strtok_r(NULL, ":", &save)) {
            bool dup = false;
            for (size_t i = 0; i < files && !dup; i++)
                dup = strcmp(done[i], p) == 0;
            if (dup || !regular_file(p))
                continue; /* kubectl skips missing entries of $KUBECONFIG */
            if (files == MAX_FILES)
                break;
            done[files++] = p;
            st = one_file(p, list_key, s, fn, ud, err);
        }
        free(list);
    } else {
        const char *home = o->home ? o->home : getenv("HOME");
        char p[4096];
        if (home && *home && snprintf(p, sizeof p, "%s/.kube/config", home) < (int)sizeof p &&
            regular_file(p)) {
            st = one_file(p, list_key, s, fn, ud, err);
            files = 1;
        }
    }
    if (st == HR_OK && files == 0)
        st = hr_err_set(err, HR_E_NOTFOUND, "no kubeconfig found");
    for (size_t i = 0; i < s->n; i++)
        free(s->name[i]);
    free(s);
    return st;
}
