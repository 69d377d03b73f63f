/*
 * execcred.c — running exec credential plugins (see execcred.h).
 *
 * posix_spawn rather than fork: the controller is multi-threaded, and
 * between fork and exec only async-signal-safe calls are allowed; spawn
 * does the dance correctly. The pipe is made O_CLOEXEC so a plugin started
 * by another thread at the same moment cannot inherit (and hold open) our
 * end — dup2 onto fd 1 clears the flag for the child's copy only.
 *
 * The deadline covers the whole run, not only the output: a plugin that
 * closes its stdout and keeps running (or leaves a child holding it) would
 * otherwise hold the caller — and the credential lock above it — for ever.
 * The plugin runs in a process group of its own, so at the deadline the
 * group is killed (the plugin and whatever it started) and the plugin reaped.
 */
#include "kube/config/execcred.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <spawn.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
#include <yyjson.h>

#include "util/base64.h"
#include "util/clock.h"
#include "util/wipe.h"

extern char **environ;

#define MAX_OUTPUT ((size_t)1 << 20)

void hr_kexec_result_free(hr_kexec_result *r)
{
    if (!r)
        return;
    hr_wipe_str(r->token);
    free(r->token);
    hr_wipe(r->key, r->key_len);
    free(r->key);
    free(r->cert);
    memset(r, 0, sizeof *r);
}

static char *dup_bytes(const char *s, size_t n)
{
    char *d = malloc(n + 1);
    if (d) {
        memcpy(d, s, n);
        d[n] = '\0';
    }
    return d;
}

hr_status hr_kexec_parse(const char *json, size_t len, const char *api_version,
                         hr_kexec_result *out, hr_err *err)
{
    memset(out, 0, sizeof *out);
    yyjson_read_err re;
    yyjson_doc *doc = yyjson_read_opts((char *)(uintptr_t)json, len, 0, NULL, &re);
    if (!doc)
        return hr_err_set(err, HR_E_INPUT, "exec plugin output: not JSON (%s at byte %zu)", re.msg,
                          re.pos);
    hr_status st = HR_OK;
    yyjson_val *root = yyjson_doc_get_root(doc);
    yyjson_val *av = yyjson_obj_get(root, "apiVersion");
    yyjson_val *kind = yyjson_obj_get(root, "kind");
    yyjson_val *status = yyjson_obj_get(root, "status");
    if (!yyjson_is_obj(root)) {
        st = hr_err_set(err, HR_E_INPUT, "exec plugin output: not a JSON object");
    } else if (!yyjson_equals_str(kind, "ExecCredential")) {
        st = hr_err_set(err, HR_E_INPUT, "exec plugin output: kind is not ExecCredential");
    } else if (!yyjson_is_str(av) || !yyjson_equals_str(av, api_version)) {
        char q[80];
        st = hr_err_set(err, HR_E_INPUT,
                        "exec plugin output: apiVersion \"%s\" does not match the requested %s",
                        yyjson_is_str(av)
                            ? hr_err_quote(q, sizeof q, yyjson_get_str(av), yyjson_get_len(av), 60)
                            : "",
                        api_version);
    } else if (!yyjson_is_obj(status)) {
        st = hr_err_set(err, HR_E_INPUT, "exec plugin output: no status object");
    }
    if (st)
        goto done;

    yyjson_val *tok = yyjson_obj_get(status, "token");
    yyjson_val *crt = yyjson_obj_get(status, "clientCertificateData");
    yyjson_val *key = yyjson_obj_get(status, "clientKeyData");
    yyjson_val *exp = yyjson_obj_get(status, "expirationTimestamp");
    if ((tok && !yyjson_is_str(tok)) || (crt && !yyjson_is_str(crt)) ||
        (key && !yyjson_is_str(key))) {
        st = hr_err_set(err, HR_E_INPUT,
                        "exec plugin output: status.token/clientCertificateData/clientKeyData "
                        "must be strings");
        goto done;
    }
    bool has_tok = tok && yyjson_get_len(tok) > 0;
    bool has_crt = crt && yyjson_get_len(crt) > 0, has_key = key && yyjson_get_len(key) > 0;
    if (has_crt != has_key) {
        st = hr_err_set(err, HR_E_INPUT, "exec plugin output: status.%s is set without status.%s",
                        has_crt ? "clientCertificateData" : "clientKeyData",
                        has_crt ? "clientKeyData" : "clientCertificateData");
        goto done;
    }
    if (!has_tok && !has_crt) {
        st = hr_err_set(err, HR_E_INPUT,
                        "exec plugin output: status has neither token nor "
                        "clientCertificateData/clientKeyData");
        goto done;
    }
    if (exp && !yyjson_is_null(exp)) {
        time_t t = yyjson_is_str(exp) ? hr_krfc3339(yyjson_get_str(exp), yyjson_get_len(exp)) : -1;
        if (t == (time_t)-1) {
            st = hr_err_set(err, HR_E_INPUT,
                            "exec plugin output: status.expirationTimestamp is not RFC 3339");
            goto done;
        }
        out->expiry = t;
    }
    for (const char *p = has_tok ? yyjson_get_str(tok) : NULL; p && *p; p++)
        if ((unsigned char)*p < 0x20 || *p == 0x7f) {
            /* It goes into an HTTP header: no CR/LF smuggling. */
            st = hr_err_set(err, HR_E_INPUT,
                            "exec plugin output: status.token has control "
                            "characters");
            goto done;
        }
    if (has_tok && !(out->token = dup_bytes(yyjson_get_str(tok), yyjson_get_len(tok))))
        st = hr_err_set(err, HR_E_NOMEM, "exec plugin output: out of memory");
    if (has_crt) {
        out->cert = (unsigned char *)dup_bytes(yyjson_get_str(crt), yyjson_get_len(crt));
        out->key = (unsigned char *)dup_bytes(yyjson_get_str(key), yyjson_get_len(key));
        out->cert_len = yyjson_get_len(crt);
        out->key_len = yyjson_get_len(key);
        if (!out->cert || !out->key)
            st = hr_err_set(err, HR_E_NOMEM, "exec plugin output: out of memory");
    }
done:
    yyjson_doc_free(doc);
    if (st)
        hr_kexec_result_free(out);
    return st;
}

/* KUBERNETES_EXEC_INFO: an ExecCredential with only spec filled in. */
static char *exec_info(const hr_kubeconfig *cfg, const hr_kexec *e)
{
    yyjson_mut_doc *d = yyjson_mut_doc_new(NULL);
    if (!d)
        return NULL;
    yyjson_mut_val *root = yyjson_mut_obj(d);
    yyjson_mut_doc_set_root(d, root);
    yyjson_mut_obj_add_str(d, root, "apiVersion", e->api_version);
    yyjson_mut_obj_add_str(d, root, "kind", "ExecCredential");
    yyjson_mut_val *spec = yyjson_mut_obj_add_obj(d, root, "spec");
    yyjson_mut_obj_add_bool(d, spec, "interactive", false);
    char *b64 = NULL;
    if (e->provide_cluster_info && spec) {
        yyjson_mut_val *cl = yyjson_mut_obj_add_obj(d, spec, "cluster");
        yyjson_mut_obj_add_str(d, cl, "server", cfg->server);
        if (cfg->tls_server_name)
            yyjson_mut_obj_add_str(d, cl, "tls-server-name", cfg->tls_server_name);
        if (cfg->insecure)
            yyjson_mut_obj_add_bool(d, cl, "insecure-skip-tls-verify", true);
        if (cfg->proxy_url)
            yyjson_mut_obj_add_str(d, cl, "proxy-url", cfg->proxy_url);
        if (cfg->ca) {
            b64 = malloc(hr_b64_enc_len(cfg->ca_len) + 1);
            if (b64) {
                hr_b64_encode(cfg->ca, cfg->ca_len, b64);
                yyjson_mut_obj_add_str(d, cl, "certificate-authority-data", b64);
            }
        }
    }
    char *s = yyjson_mut_write(d, 0, NULL);
    free(b64);
    yyjson_mut_doc_free(d);
    return s;
}

/* environ, minus the names we set, plus ours. Strings are malloc'd only for
 * our additions; env_own lists them for freeing. */
static char **build_env(const hr_kexec *e, const char *info, char ***own, size_t *n_own)
{
    size_t n = 0;
    while (environ && environ[n])
        n++;
    char **env = calloc(n + e->n_env + 2, sizeof *env);
    char **mine = calloc(e->n_env + 1, sizeof *mine);
    if (!env || !mine) {
        free(env);
        free(mine);
        return NULL;
    }
    size_t o = 0, m = 0;
    for (size_t i = 0; i < n; i++) {
        const char *eq = strchr(environ[i], '=');
        size_t nl = eq ? (size_t)(eq - environ[i]) : strlen(environ[i]);
        bool skip =
            nl == strlen("KUBERNETES_EXEC_INFO") && !memcmp(environ[i], "KUBERNETES_EXEC_INFO", nl);
        for (size_t j = 0; !skip && j < e->n_env; j++)
            skip = strlen(e->env_names[j]) == nl && !memcmp(environ[i], e->env_names[j], nl);
        if (!skip)
            env[o++] = environ[i];
    }
    for (size_t j = 0; j < e->n_env; j++) {
        size_t l = strlen(e->env_names[j]) + strlen(e->env_values[j]) + 2;
        char *kv = malloc(l);
        if (!kv)
            goto fail;
        snprintf(kv, l, "%s=%s", e->env_names[j], e->env_values[j]);
        /* A later entry with the same name replaces an earlier one. */
        for (size_t k = 0; k < m; k++) {
            size_t nl = strlen(e->env_names[j]);
            if (!strncmp(mine[k], kv, nl + 1)) {
                free(mine[k]);
                mine[k] = kv;
                kv = NULL;
                break;
            }
        }
        if (kv)
            mine[m++] = kv;
    }
    for (size_t k = 0; k < m; k++)
        env[o++] = mine[k];
    env[o++] = (char *)(uintptr_t)info;
    env[o] = NULL;
    *own = mine;
    *n_own = m;
    return env;
fail:
    for (size_t k = 0; k < m; k++)
        free(mine[k]);
    free(mine);
    free(env);
    return NULL;
}

hr_status hr_kexec_run(const hr_kubeconfig *cfg, const hr_kexec *e, long timeout_ms,
                       hr_kexec_result *out, hr_err *err)
{
    memset(out, 0, sizeof *out);
    if (e->interactive_always)
        return hr_err_set(err, HR_E_INPUT,
                          "exec plugin %s: interactiveMode is Always, but headroom runs "
                          "without a terminal",
                          e->command);
    if (timeout_ms <= 0)
        timeout_ms = 60000;
    hr_status st = HR_OK;
    char *info_json = exec_info(cfg, e);
    char *info = NULL;
    char **own = NULL, **envp = NULL;
    size_t n_own = 0;
    char **argv = NULL;
    char *obuf = NULL;
    size_t olen = 0;
    int pfd[2] = {-1, -1};
    pid_t pid = -1;
    bool fa_ok = false, sa_ok = false;
    posix_spawn_file_actions_t fa;
    posix_spawnattr_t sa;

    if (info_json) {
        size_t l = strlen(info_json) + sizeof "KUBERNETES_EXEC_INFO=";
        if ((info = malloc(l)))
            snprintf(info, l, "KUBERNETES_EXEC_INFO=%s", info_json);
    }
    argv = calloc(e->n_args + 2, sizeof *argv);
    obuf = malloc(MAX_OUTPUT + 1);
    if (!info || !argv || !obuf || !(envp = build_env(e, info, &own, &n_own))) {
        st = hr_err_set(err, HR_E_NOMEM, "exec plugin %s: out of memory", e->command);
        goto out;
    }
    argv[0] = (char *)(uintptr_t)e->command;
    for (size_t i = 0; i < e->n_args; i++)
        argv[i + 1] = (char *)(uintptr_t)e->args[i];

    if (pipe2(pfd, O_CLOEXEC) != 0) {
        st = hr_err_set(err, HR_E_IO, "exec plugin %s: pipe: %s", e->command, strerror(errno));
        goto out;
    }
    int rc = posix_spawn_file_actions_init(&fa);
    if (rc == 0) {
        fa_ok = true;
        rc = posix_spawn_file_actions_addopen(&fa, 0, "/dev/null", O_RDONLY, 0);
    }
    if (rc == 0)
        rc = posix_spawn_file_actions_adddup2(&fa, pfd[1], 1);
    if (rc == 0)
        sa_ok = (rc = posix_spawnattr_init(&sa)) == 0;
    if (rc == 0)
        rc = posix_spawnattr_setflags(&sa, POSIX_SPAWN_SETPGROUP);
    if (rc == 0)
        rc = posix_spawnattr_setpgroup(&sa, 0); /* a group of its own, led by the plugin */
    if (rc == 0)
        rc = posix_spawnp(&pid, e->command, &fa, &sa, argv, envp);
    if (rc != 0) {
        pid = -1;
        st = hr_err_set(err, HR_E_IO, "exec plugin %s: cannot start: %s%s%s", e->command,
                        strerror(rc), e->install_hint ? "; " : "",
                        e->install_hint ? e->install_hint : "");
        goto out;
    }
    (void)close(pfd[1]); /* ours is a duplicate: the child holds its own */
    pfd[1] = -1;

    int64_t deadline = hr_mono_ns() + (int64_t)timeout_ms * 1000000;
    for (;;) {
        int64_t left = (deadline - hr_mono_ns()) / 1000000;
        if (left <= 0) {
            st = hr_err_set(err, HR_E_IO, "exec plugin %s: no answer within %ld ms; killed",
                            e->command, timeout_ms);
            break;
        }
        struct pollfd p = {pfd[0], POLLIN, 0};
        int pr = poll(&p, 1, left > 1000 ? 1000 : (int)left);
        if (pr < 0 && errno == EINTR)
            continue;
        if (pr < 0) {
            st = hr_err_set(err, HR_E_IO, "exec plugin %s: poll: %s", e->command, strerror(errno));
            break;
        }
        if (pr == 0)
            continue;
        ssize_t r = read(pfd[0], obuf + olen, MAX_OUTPUT + 1 - olen);
        if (r < 0 && errno == EINTR)
            continue;
        if (r < 0) {
            st = hr_err_set(err, HR_E_IO, "exec plugin %s: read: %s", e->command, strerror(errno));
            break;
        }
        if (r == 0)
            break;
        olen += (size_t)r;
        if (olen > MAX_OUTPUT) {
            st = hr_err_set(err, HR_E_LIMIT, "exec plugin %s: more than %zu bytes of output",
                            e->command, MAX_OUTPUT);
            break;
        }
    }
    /* End of output is not the end of the plugin: wait for its exit, but
     * only until the deadline. */
    int ws = 0;
    bool reaped = false;
    while (!st && !reaped) {
        pid_t w = waitpid(pid, &ws, WNOHANG);
        if (w == pid) {
            reaped = true;
        } else if (w < 0 && errno != EINTR) {
            st = hr_err_set(err, HR_E_IO, "exec plugin %s: waitpid: %s", e->command,
                            strerror(errno));
        } else if (hr_mono_ns() >= deadline) {
            st = hr_err_set(err, HR_E_IO,
                            "exec plugin %s: closed its output but did not exit within %ld ms; "
                            "killed",
                            e->command, timeout_ms);
        } else if (w == 0) {
            struct timespec ts = {0, 5 * 1000000L};
            (void)nanosleep(&ts, NULL); /* EINTR: look again sooner */
        }
    }
    /* The whole group, before the leader is reaped (so its id cannot have
     * been reused); ESRCH (already gone) is fine. */
    if (st && !reaped)
        (void)kill(-pid, SIGKILL);
    while (!reaped && waitpid(pid, &ws, 0) < 0 && errno == EINTR)
        ;
    pid = -1;
    if (!st && !(WIFEXITED(ws) && WEXITSTATUS(ws) == 0)) {
        if (WIFEXITED(ws))
            st = hr_err_set(err, HR_E_IO, "exec plugin %s: exited with status %d%s%s", e->command,
                            WEXITSTATUS(ws), e->install_hint ? "; " : "",
                            e->install_hint ? e->install_hint : "");
        else
            st = hr_err_set(err, HR_E_IO, "exec plugin %s: killed by signal %d", e->command,
                            WIFSIGNALED(ws) ? WTERMSIG(ws) : 0);
    }
    if (!st) {
        st = hr_kexec_parse(obuf, olen, e->api_version, out, err);
        if (st)
            hr_err_prefix(err, "exec plugin %s", e->command);
    }
out:
    /* Releasing: nothing useful to do if these fail. */
    if (fa_ok)
        (void)posix_spawn_file_actions_destroy(&fa);
    if (sa_ok)
        (void)posix_spawnattr_destroy(&sa);
    if (pfd[0] >= 0)
        (void)close(pfd[0]);
    if (pfd[1] >= 0)
        (void)close(pfd[1]);
    hr_wipe(obuf, olen);
    free(obuf);
    for (size_t k = 0; k < n_own; k++)
        free(own[k]);
    free(own);
    free(envp);
    free(argv);
    free(info);
    free(info_json);
    return st;
}
