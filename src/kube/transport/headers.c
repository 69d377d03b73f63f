/*
 * headers.c — the request headers every API call carries (headers.h).
 */
#include "kube/transport/headers.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "kube/config/override.h"
#include "util/wipe.h"

/* One "Name: value" line onto *l; key (or NULL): the name's tail, a key
 * to percent-encode (Impersonate-Extra-KEY). */
static hr_status add(struct curl_slist **l, const char *name, const char *key, const char *value,
                     hr_err *err)
{
    if (!hr_kheader_value_ok(value) || (key && !hr_kheader_value_ok(key)))
        return hr_err_set(err, HR_E_INPUT, "client: %s: not a valid header value", name);
    size_t n = strlen(name) + (key ? 3 * strlen(key) : 0) + strlen(value) + 3;
    char *line = malloc(n), *p = line;
    if (!line)
        return hr_err_set(err, HR_E_NOMEM, "client: out of memory");
    p += snprintf(p, n, "%s", name);
    /* client-go's escape of an extra's key: a token character but '%'
     * stays, anything else is %XX. */
    for (const unsigned char *k = (const unsigned char *)key; k && *k; k++)
        if (((*k | 0x20) >= 'a' && (*k | 0x20) <= 'z') || (*k >= '0' && *k <= '9') ||
            strchr("!#$&'*+-.^_`|~", *k))
            *p++ = (char)*k;
        else
            p += sprintf(p, "%%%02X", *k);
    snprintf(p, n - (size_t)(p - line), ": %s", value);
    struct curl_slist *t = curl_slist_append(*l, line);
    free(line);
    if (!t)
        return hr_err_set(err, HR_E_NOMEM, "client: out of memory");
    *l = t;
    return HR_OK;
}

static hr_status impersonate(struct curl_slist **l, const hr_kubeconfig *cfg, hr_err *err)
{
    hr_status st;
    if (!cfg || !cfg->as_user)
        return HR_OK;
    if ((st = add(l, "Impersonate-User", NULL, cfg->as_user, err)) ||
        (cfg->as_uid && (st = add(l, "Impersonate-Uid", NULL, cfg->as_uid, err))))
        return st;
    for (size_t i = 0; i < cfg->n_as_groups; i++)
        if ((st = add(l, "Impersonate-Group", NULL, cfg->as_groups[i], err)))
            return st;
    for (size_t i = 0; i < cfg->n_as_extra; i++)
        if ((st =
                 add(l, "Impersonate-Extra-", cfg->as_extra_keys[i], cfg->as_extra_values[i], err)))
            return st;
    return HR_OK;
}

hr_status hr_kheaders_build(const hr_kcred_snap *snap, const hr_kubeconfig *cfg, const char *accept,
                            const char *content_type, struct curl_slist **out, hr_err *err)
{
    struct curl_slist *l = NULL, *t;
    char ctb[160], acb[160];
    *out = NULL;
    snprintf(acb, sizeof acb, "Accept: %.140s", accept ? accept : "application/json");
    /* Expect: off — a body waits for no 100-continue round trip. */
    const char *fixed[] = {acb, "Expect:"};
    for (size_t i = 0; i < 2; i++) {
        if (!(t = curl_slist_append(l, fixed[i])))
            goto nomem;
        l = t;
    }
    if (content_type) {
        snprintf(ctb, sizeof ctb, "Content-Type: %.130s", content_type);
        if (!(t = curl_slist_append(l, ctb)))
            goto nomem;
        l = t;
    }
    if (snap->authorization && !hr_kheader_value_ok(snap->authorization)) {
        /* a token with a CR or LF: sent, it would add headers of its own */
        curl_slist_free_all(l);
        return hr_err_set(err, HR_E_INPUT,
                          "client: the credential is not a valid header value (a control "
                          "character such as CR or LF)");
    }
    if (snap->authorization) {
        size_t n = strlen(snap->authorization) + sizeof "Authorization: ";
        char *a = malloc(n);
        if (!a)
            goto nomem;
        snprintf(a, n, "Authorization: %s", snap->authorization);
        t = curl_slist_append(l, a);
        hr_wipe(a, n);
        free(a);
        if (!t)
            goto nomem;
        l = t;
    }
    hr_status st = impersonate(&l, cfg, err);
    if (st) {
        hr_kheaders_free(l);
        return st;
    }
    *out = l;
    return HR_OK;
nomem:
    curl_slist_free_all(l);
    return hr_err_set(err, HR_E_NOMEM, "client: out of memory");
}

void hr_kheaders_free(struct curl_slist *l)
{
    for (struct curl_slist *i = l; i; i = i->next)
        if (!strncasecmp(i->data, "Authorization:", 14))
            hr_wipe_str(i->data);
    curl_slist_free_all(l);
}
