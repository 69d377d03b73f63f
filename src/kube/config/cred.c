/*
 * cred.c — current credentials, refreshed when due (see cred.h).
 */
#include "kube/config/cred.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "util/base64.h"
#include "util/clock.h"
#include "util/file.h"
#include "util/wipe.h"

/* Tokens are refreshed this long before they expire, so a request that
 * starts just before expiry does not arrive just after it. */
#define EXEC_EARLY_S 10

hr_status hr_kcred_init(hr_kcred *c, const hr_kubeconfig *cfg, hr_err *err)
{
    memset(c, 0, sizeof *c);
    c->cfg = cfg;
    c->exec_timeout_ms = 60000;
    c->file_reread_s = HR_KCRED_FILE_REREAD_S;
    c->gen = 1;
    if (pthread_mutex_init(&c->mu, NULL) != 0)
        return hr_err_set(err, HR_E_NOMEM, "credentials: cannot create a mutex");
    if (!cfg->cert || !cfg->key)
        return HR_OK;
    /* Generation 0: these never change, and no other file of c is spelled so. */
    hr_status st =
        hr_memfile_open(&c->cert_file, "hr-client-cert", cfg->cert, cfg->cert_len, 0, err);
    if (!st)
        st = hr_memfile_open(&c->key_file, "hr-client-key", cfg->key, cfg->key_len, 0, err);
    if (st) {
        hr_err_prefix(err, "client certificate");
        hr_kcred_destroy(c);
    }
    return st;
}

static void wipe_free(char *s)
{
    hr_wipe_str(s);
    free(s);
}

void hr_kcred_destroy(hr_kcred *c)
{
    wipe_free(c->file_token);
    hr_kexec_result_free(&c->ex);
    hr_memfile_close(&c->cert_file);
    hr_memfile_close(&c->key_file);
    pthread_mutex_destroy(&c->mu);
}

void hr_kcred_snap_free(hr_kcred_snap *s)
{
    wipe_free(s->authorization);
    hr_memfile_close(&s->exec_cert);
    hr_memfile_close(&s->exec_key);
    memset(s, 0, sizeof *s);
}

/* Caller holds mu. Keeps the previous token when the file cannot be read
 * (a rotation in progress), as client-go does. */
static hr_status refresh_file(hr_kcred *c, bool force, hr_err *err)
{
    int64_t now = hr_mono_ns();
    if (!force && c->file_token && now - c->file_read_ns < (int64_t)c->file_reread_s * 1000000000)
        return HR_OK;
    char *buf;
    size_t len;
    hr_err e;
    c->file_reads++;
    if (hr_file_slurp(c->cfg->token_file, 1 << 20, 1, &buf, &len, &e) != HR_OK) {
        if (c->file_token || c->cfg->token)
            return HR_OK;
        return hr_err_set(err, HR_E_IO, "token file: %s", e.msg);
    }
    while (len && (buf[len - 1] == '\n' || buf[len - 1] == '\r' || buf[len - 1] == ' '))
        len--;
    buf[len] = '\0';
    for (size_t i = 0; i < len; i++)
        if ((unsigned char)buf[i] < 0x20 || buf[i] == 0x7f)
            len = 0; /* a header must not carry CR/LF */
    c->file_read_ns = now;
    if (!len) {
        wipe_free(buf);
        if (c->file_token || c->cfg->token)
            return HR_OK;
        return hr_err_set(err, HR_E_INPUT, "token file %s: empty or not a token",
                          c->cfg->token_file);
    }
    if (!c->file_token || strcmp(c->file_token, buf) != 0) {
        wipe_free(c->file_token);
        c->file_token = buf;
        c->gen++;
    } else {
        wipe_free(buf);
    }
    return HR_OK;
}

static hr_status refresh_exec(hr_kcred *c, bool force, hr_err *err)
{
    time_t now = time(NULL);
    if (!force && c->ex_valid && (c->ex.expiry == 0 || now + EXEC_EARLY_S < c->ex.expiry))
        return HR_OK;
    hr_kexec_result r;
    c->exec_runs++;
    hr_status st = hr_kexec_run(c->cfg, c->cfg->exec, c->exec_timeout_ms, &r, err);
    if (st)
        return st;
    hr_kexec_result_free(&c->ex);
    c->ex = r;
    c->ex_valid = true;
    c->gen++;
    return HR_OK;
}

static char *bearer(const char *tok)
{
    size_t l = strlen(tok) + sizeof "Bearer ";
    char *h = malloc(l);
    if (h)
        snprintf(h, l, "Bearer %s", tok);
    return h;
}

static char *basic(const char *user, const char *pass)
{
    size_t ul = strlen(user), pl = strlen(pass);
    unsigned char *raw = malloc(ul + pl + 2);
    char *h = malloc(hr_b64_enc_len(ul + pl + 1) + sizeof "Basic ");
    if (!raw || !h) {
        free(raw);
        free(h);
        return NULL;
    }
    memcpy(raw, user, ul);
    raw[ul] = ':';
    memcpy(raw + ul + 1, pass, pl);
    memcpy(h, "Basic ", 6);
    hr_b64_encode(raw, ul + pl + 1, h + 6);
    hr_wipe(raw, ul + pl + 1);
    free(raw);
    return h;
}

/* Caller holds mu. The plugin's certificate and key as this snapshot's own
 * memory files, spelled with the generation of the answer (cred.h). */
static hr_status exec_files(hr_kcred *c, hr_kcred_snap *s, hr_err *err)
{
    hr_status st = hr_memfile_open(&s->exec_cert, "hr-exec-client-cert", c->ex.cert, c->ex.cert_len,
                                   c->gen, err);
    if (!st)
        st = hr_memfile_open(&s->exec_key, "hr-exec-client-key", c->ex.key, c->ex.key_len, c->gen,
                             err);
    if (st) {
        hr_err_prefix(err, "exec plugin %s: client certificate", c->cfg->exec->command);
        return st;
    }
    s->cert_path = s->exec_cert.path;
    s->key_path = s->exec_key.path;
    return HR_OK;
}

hr_status hr_kcred_get(hr_kcred *c, hr_kcred_snap *s, hr_err *err)
{
    memset(s, 0, sizeof *s);
    const hr_kubeconfig *cfg = c->cfg;
    if (c->cert_file.path[0]) {
        s->cert_path = c->cert_file.path;
        s->key_path = c->key_file.path;
    }
    if (!cfg->exec && !cfg->token_file) {
        /* Nothing changes: no lock needed. */
        if (cfg->token)
            s->authorization = bearer(cfg->token);
        else if (cfg->username || cfg->password)
            s->authorization =
                basic(cfg->username ? cfg->username : "", cfg->password ? cfg->password : "");
        if ((cfg->token || cfg->username || cfg->password) && !s->authorization)
            return hr_err_set(err, HR_E_NOMEM, "credentials: out of memory");
        s->gen = 1;
        return HR_OK;
    }
    pthread_mutex_lock(&c->mu);
    hr_status st = HR_OK;
    s->refreshable = true;
    if (cfg->exec) {
        st = refresh_exec(c, false, err);
        if (!st && c->ex.token) {
            s->authorization = bearer(c->ex.token);
        } else if (!st && c->ex.cert) {
            st = exec_files(c, s, err);
        }
    }
    if (!st && !s->authorization && cfg->token_file) {
        st = refresh_file(c, false, err);
        const char *t = c->file_token ? c->file_token : cfg->token;
        if (!st && t)
            s->authorization = bearer(t);
    }
    if (!st && !s->authorization && cfg->token)
        s->authorization = bearer(cfg->token);
    if (!st && (cfg->token || cfg->token_file || (c->ex_valid && c->ex.token)) && !s->authorization)
        st = hr_err_set(err, HR_E_NOMEM, "credentials: out of memory");
    s->gen = c->gen;
    pthread_mutex_unlock(&c->mu);
    if (st)
        hr_kcred_snap_free(s);
    return st;
}

bool hr_kcred_unauthorized(hr_kcred *c, uint64_t gen)
{
    const hr_kubeconfig *cfg = c->cfg;
    if (!cfg->exec && !cfg->token_file)
        return false;
    pthread_mutex_lock(&c->mu);
    bool retry = false;
    if (c->gen != gen) {
        retry = true; /* someone already refreshed */
    } else {
        hr_err e;
        if (cfg->exec && refresh_exec(c, true, &e) == HR_OK)
            retry = c->gen != gen;
        if (!retry && cfg->token_file && refresh_file(c, true, &e) == HR_OK)
            retry = c->gen != gen;
    }
    pthread_mutex_unlock(&c->mu);
    return retry;
}
