/*
 * override.c — kubectl's connection flags over a resolved kubeconfig, and
 * the checks every configuration passes last (kconfig_int.h; the rules are
 * kubeconfig.h's, hr_koverrides).
 */
#include "kube/config/override.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "kube/config/kubeconfig.h"
#include "util/file.h"
#include "util/utf8.h"
#include "util/wipe.h"

#define MAX_FILE_BYTES ((size_t)16 << 20) /* a CA bundle */

static bool given(const char *s)
{
    return s && *s;
}

const char *hr_kserver_normalize(hr_arena *a, const char *s, const char **why)
{
    for (const char *p = s; *p; p++)
        if ((unsigned char)*p <= ' ' || *p == 0x7f) {
            *why = "contains a space or control character";
            return NULL;
        }
    bool has_scheme = strncmp(s, "https://", 8) == 0 || strncmp(s, "http://", 7) == 0;
    if (!has_scheme && strstr(s, "://")) {
        *why = "only https:// and http:// are supported";
        return NULL;
    }
    /* Trailing slashes go, but never into the scheme: "https://" alone has no
     * host and must not shrink to "https:". */
    size_t skip = has_scheme ? (s[4] == 's' ? 8 : 7) : 0;
    size_t len = strlen(s);
    while (len > skip && s[len - 1] == '/')
        len--;
    if (len == skip || s[skip] == '/') {
        *why = "no host";
        return NULL;
    }
    /* kubectl defaults a bare host[:port] to https. */
    char *r = hr_arena_alloc(a, len + 9);
    *why = NULL;
    if (r)
        snprintf(r, len + 9, "%s%.*s", has_scheme ? "" : "https://", (int)len, s);
    return r;
}

bool hr_kheader_value_ok(const char *s)
{
    if (!s || !*s)
        return false;
    for (const unsigned char *p = (const unsigned char *)s; *p; p++)
        if (*p < 0x20 || *p == 0x7f)
            return false;
    size_t len = strlen(s);
    return hr_utf8_bad((const unsigned char *)s, len) == len;
}

/* A file a flag names, into the arena (wiped in between: it may be a key). */
static hr_status read_flag_file(hr_kubeconfig *c, const char *flag, const char *path,
                                const unsigned char **out, size_t *out_len, hr_err *err)
{
    char *buf;
    size_t len;
    hr_err e;
    if (hr_file_slurp(strcmp(path, "-") == 0 ? "./-" : path, MAX_FILE_BYTES, 1, &buf, &len, &e))
        return hr_err_set(err, e.code, "--%s: %s", flag, e.msg);
    unsigned char *d = len ? hr_arena_alloc(&c->arena, len + 1) : NULL;
    if (d) {
        memcpy(d, buf, len);
        d[len] = '\0';
    }
    hr_wipe(buf, len);
    free(buf);
    if (!len)
        return hr_err_set(err, HR_E_INPUT, "--%s: %s is empty", flag, path);
    if (!d)
        return hr_err_set(err, HR_E_NOMEM, "kubeconfig: out of memory");
    *out = d;
    *out_len = len;
    return HR_OK;
}

static hr_status bad_value(const hr_kubeconfig *c, hr_err *err, const char *what, size_t i)
{
    char idx[32] = "";
    if (i != (size_t)-1)
        snprintf(idx, sizeof idx, "[%zu]", i);
    return hr_err_set(err, HR_E_INPUT,
                      "%s: %s%s: not a valid HTTP header value (empty, or a control character "
                      "such as CR or LF)",
                      c->origin ? c->origin : "kubeconfig", what, idx);
}

/* Impersonation from the flags over the user's, then checked whole. */
static hr_status impersonation(hr_kubeconfig *c, const hr_koverrides *ov, hr_err *err)
{
    if (given(ov->as))
        c->as_user = ov->as;
    if (given(ov->as_uid))
        c->as_uid = ov->as_uid;
    if (ov->n_as_groups) {
        c->as_groups = ov->as_groups;
        c->n_as_groups = ov->n_as_groups;
    }
    if (!c->as_user && (c->as_uid || c->n_as_groups || c->n_as_extra))
        return hr_err_set(err, HR_E_INPUT,
                          "%s: impersonating a %s without a user (--as, or the user's as:); "
                          "kubectl refuses that too",
                          c->origin ? c->origin : "kubeconfig",
                          c->as_uid        ? "uid"
                          : c->n_as_groups ? "group"
                                           : "user-extra");
    if (c->as_user && !hr_kheader_value_ok(c->as_user))
        return bad_value(c, err, "as (--as)", (size_t)-1);
    if (c->as_uid && !hr_kheader_value_ok(c->as_uid))
        return bad_value(c, err, "as-uid (--as-uid)", (size_t)-1);
    for (size_t i = 0; i < c->n_as_groups; i++)
        if (!hr_kheader_value_ok(c->as_groups[i]))
            return bad_value(c, err, "as-groups (--as-group)", i);
    for (size_t i = 0; i < c->n_as_extra; i++)
        if (!hr_kheader_value_ok(c->as_extra_keys[i]) ||
            !hr_kheader_value_ok(c->as_extra_values[i]))
            return bad_value(c, err, "as-user-extra", i);
    return HR_OK;
}

hr_status hr_koverride_apply(hr_kubeconfig *c, const hr_koverrides *ov, hr_err *err)
{
    hr_status st;
    const char *why;
    if (ov->insecure && given(ov->ca_file))
        return hr_err_set(err, HR_E_INPUT,
                          "--insecure-skip-tls-verify and --certificate-authority: use one "
                          "(kubectl refuses both too)");
    if (given(ov->server)) {
        if (!(c->server = hr_kserver_normalize(&c->arena, ov->server, &why)))
            return why ? hr_err_set(err, HR_E_INPUT, "--server \"%.100s\": %s", ov->server, why)
                       : hr_err_set(err, HR_E_NOMEM, "kubeconfig: out of memory");
        c->tls_server_name = NULL; /* the file's was for its server */
    }
    if (given(ov->tls_server_name)) {
        for (const char *p = ov->tls_server_name; *p; p++)
            if ((unsigned char)*p <= ' ' || *p == ':' || *p == '/' || *p == 0x7f)
                return hr_err_set(err, HR_E_INPUT, "--tls-server-name: not a host name");
        c->tls_server_name = ov->tls_server_name;
    }
    if (ov->insecure || given(ov->ca_file)) { /* either replaces both (kubectl) */
        c->insecure = ov->insecure;
        c->ca = NULL;
        c->ca_len = 0;
        if (given(ov->ca_file) &&
            (st = read_flag_file(c, "certificate-authority", ov->ca_file, &c->ca, &c->ca_len, err)))
            return st;
    }
    if (given(ov->token)) { /* instead of every other bearer or basic credential */
        if (!(c->token = hr_arena_strdup(&c->arena, ov->token)))
            return hr_err_set(err, HR_E_NOMEM, "kubeconfig: out of memory");
        c->token_file = c->username = c->password = NULL;
        c->exec = NULL;
    }
    if (given(ov->cert_file) &&
        (st = read_flag_file(c, "client-certificate", ov->cert_file, &c->cert, &c->cert_len, err)))
        return st;
    if (given(ov->key_file) &&
        (st = read_flag_file(c, "client-key", ov->key_file, &c->key, &c->key_len, err)))
        return st;
    const char *o = c->origin ? c->origin : "kubeconfig";
    if (!c->server)
        return hr_err_set(err, HR_E_INPUT, "%s: no server (the cluster sets none; --server)", o);
    if (!c->cert != !c->key)
        return hr_err_set(err, HR_E_INPUT, "%s: a client %s without its %s", o,
                          c->cert ? "certificate" : "key", c->cert ? "key" : "certificate");
    if ((c->token || c->token_file) && (c->username || c->password))
        return hr_err_set(err, HR_E_INPUT,
                          "%s: more than one authentication method (token and basic auth)", o);
    return impersonation(c, ov, err);
}
