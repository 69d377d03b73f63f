/*
 * authz.c — bearer token parsing and the bounded verdict cache (see
 * authz.h).
 */
#include "server/authz.h"

#include <pthread.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include <gnutls/crypto.h>
#include <gnutls/gnutls.h>

#include "util/clock.h"

/* A token longer than this is not one the API server issues. */
#define MAX_TOKEN 16384

typedef struct entry {
    unsigned char key[32];
    int64_t expires_ms; /* 0: free */
    hr_authz_verdict v;
} entry;

struct hr_authz {
    hr_authz_opts o;
    pthread_mutex_t mu;
    entry *e;
    unsigned n;
    uint64_t reviews, hits;
};

hr_status hr_authz_new(const hr_authz_opts *o, hr_authz **out, hr_err *err)
{
    *out = NULL;
    hr_authz *a = calloc(1, sizeof *a);
    if (a == NULL)
        return hr_err_set(err, HR_E_NOMEM, "authz: out of memory");
    a->o = *o;
    a->n = o->max_entries ? o->max_entries : 256;
    if (!a->o.allow_ttl_ms)
        a->o.allow_ttl_ms = 60000;
    if (!a->o.deny_ttl_ms)
        a->o.deny_ttl_ms = 10000;
    a->e = calloc(a->n, sizeof *a->e);
    if (a->e == NULL || pthread_mutex_init(&a->mu, NULL) != 0) {
        free(a->e);
        free(a);
        return hr_err_set(err, HR_E_NOMEM, "authz: out of memory");
    }
    *out = a;
    return HR_OK;
}

void hr_authz_free(hr_authz *a)
{
    if (a == NULL)
        return;
    pthread_mutex_destroy(&a->mu);
    free(a->e);
    free(a);
}

const char *hr_authz_bearer(const char *header, size_t *len)
{
    if (header == NULL)
        return NULL;
    while (*header == ' ' || *header == '\t')
        header++;
    if (strncasecmp(header, "Bearer", 6) != 0 || (header[6] != ' ' && header[6] != '\t'))
        return NULL;
    const char *t = header + 7;
    while (*t == ' ' || *t == '\t')
        t++;
    size_t n = 0;
    while (t[n] > ' ' && t[n] < 0x7f)
        n++;
    /* Only trailing blanks may follow; a token has no inner space. */
    for (const char *p = t + n; *p; p++)
        if (*p != ' ' && *p != '\t')
            return NULL;
    if (n == 0 || n > MAX_TOKEN)
        return NULL;
    *len = n;
    return t;
}

static bool make_key(const char *verb, const char *path, const char *token, size_t tlen,
                     unsigned char key[32])
{
    gnutls_hash_hd_t h;
    if (gnutls_hash_init(&h, GNUTLS_DIG_SHA256) < 0)
        return false;
    bool ok = gnutls_hash(h, verb, strlen(verb) + 1) >= 0 &&
              gnutls_hash(h, path, strlen(path) + 1) >= 0 && gnutls_hash(h, token, tlen) >= 0;
    gnutls_hash_deinit(h, key);
    return ok;
}

hr_authz_verdict hr_authz_check(hr_authz *a, const char *authorization, const char *verb,
                                const char *path)
{
    size_t tlen = 0;
    const char *tok = hr_authz_bearer(authorization, &tlen);
    if (tok == NULL)
        return HR_AUTHZ_UNAUTHENTICATED;
    unsigned char key[32];
    if (!make_key(verb, path, tok, tlen, key))
        return HR_AUTHZ_ERROR;
    int64_t now = hr_mono_ms();
    pthread_mutex_lock(&a->mu);
    for (unsigned i = 0; i < a->n; i++) {
        if (a->e[i].expires_ms > now && memcmp(a->e[i].key, key, sizeof key) == 0) {
            hr_authz_verdict v = a->e[i].v;
            a->hits++;
            pthread_mutex_unlock(&a->mu);
            return v;
        }
    }
    a->reviews++;
    pthread_mutex_unlock(&a->mu);

    /* The callback wants a C string: the token without trailing blanks. */
    char *t = malloc(tlen + 1);
    if (t == NULL)
        return HR_AUTHZ_ERROR;
    memcpy(t, tok, tlen);
    t[tlen] = '\0';
    char user[256] = "";
    hr_authz_verdict v = a->o.review(a->o.ud, t, verb, path, user, sizeof user);
    memset(t, 0, tlen);
    free(t);
    hr_logf(&a->o.log, HR_LV_DEBUG, "msg=\"access reviewed\" path=%s verb=%s user=\"%s\" result=%s",
            path, verb, user,
            v == HR_AUTHZ_ALLOWED           ? "allowed"
            : v == HR_AUTHZ_DENIED          ? "denied"
            : v == HR_AUTHZ_UNAUTHENTICATED ? "unauthenticated"
                                            : "error");
    if (v == HR_AUTHZ_ERROR)
        return v;
    now = hr_mono_ms();
    pthread_mutex_lock(&a->mu);
    /* A free or expired slot, else the one closest to expiry. */
    unsigned pick = 0;
    for (unsigned i = 0; i < a->n; i++) {
        if (a->e[i].expires_ms <= now) {
            pick = i;
            break;
        }
        if (a->e[i].expires_ms < a->e[pick].expires_ms)
            pick = i;
    }
    memcpy(a->e[pick].key, key, sizeof key);
    a->e[pick].v = v;
    a->e[pick].expires_ms = now + (v == HR_AUTHZ_ALLOWED ? a->o.allow_ttl_ms : a->o.deny_ttl_ms);
    pthread_mutex_unlock(&a->mu);
    return v;
}

int hr_authz_status(hr_authz_verdict v)
{
    switch (v) {
    case HR_AUTHZ_ALLOWED: return 0;
    case HR_AUTHZ_DENIED: return 403;
    case HR_AUTHZ_UNAUTHENTICATED: return 401;
    case HR_AUTHZ_ERROR: break;
    }
    return 500;
}

void hr_authz_get_stats(hr_authz *a, hr_authz_stats *out)
{
    pthread_mutex_lock(&a->mu);
    out->reviews = a->reviews;
    out->hits = a->hits;
    pthread_mutex_unlock(&a->mu);
}
