/*
 * headers.c — the request headers every API call carries (headers.h).
 */
#include "kube/transport/headers.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "util/wipe.h"

hr_status hr_kheaders_build(const hr_kcred_snap *snap, const char *accept, const char *content_type,
                            struct curl_slist **out, hr_err *err)
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
