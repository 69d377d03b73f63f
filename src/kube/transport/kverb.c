/*
 * kverb.c — a request's Kubernetes verb from its method and path.
 */
#include "kverb.h"

#include <string.h>

/* Does the query (after '?', up to '#') say watch=1 or watch=true? */
static bool query_watch(const char *q)
{
    while (q != NULL && *q != '\0' && *q != '#') {
        size_t n = strcspn(q, "&#");
        if ((n == 7 && strncmp(q, "watch=1", 7) == 0) ||
            (n == 10 && strncmp(q, "watch=true", 10) == 0))
            return true;
        q += n;
        if (*q == '&')
            q++;
    }
    return false;
}

/* The segments of the path (before '?') after its /api/v1 or /apis/G/V
 * prefix: how many there are and whether the first is "watch" or
 * "namespaces". -1: not an API resource path. */
static int resource_segments(const char *p, bool *watch_prefix, bool *namespaced)
{
    size_t len = strcspn(p, "?#");
    int prefix;
    if (len >= 4 && strncmp(p, "/api", 4) == 0 && (len == 4 || p[4] == '/'))
        prefix = 2; /* api, v1 */
    else if (len >= 5 && strncmp(p, "/apis", 5) == 0 && (len == 5 || p[5] == '/'))
        prefix = 3; /* apis, group, version */
    else
        return -1;
    int seg = 0, rest = 0;
    *watch_prefix = *namespaced = false;
    for (size_t i = 0; i < len;) {
        while (i < len && p[i] == '/')
            i++;
        if (i == len)
            break;
        size_t n = 0;
        while (i + n < len && p[i + n] != '/')
            n++;
        if (seg == prefix) {
            *watch_prefix = n == 5 && strncmp(p + i, "watch", 5) == 0;
            *namespaced = n == 10 && strncmp(p + i, "namespaces", 10) == 0;
        }
        if (seg >= prefix)
            rest++;
        seg++;
        i += n;
    }
    return seg < prefix ? -1 : rest;
}

const char *hr_kverb(const char *method, const char *path, bool stream)
{
    if (method == NULL)
        return "other";
    if (strcmp(method, "POST") == 0)
        return "create";
    if (strcmp(method, "PUT") == 0)
        return "update";
    if (strcmp(method, "PATCH") == 0)
        return "patch";
    if (strcmp(method, "DELETE") == 0)
        return "delete";
    if (strcmp(method, "GET") != 0 && strcmp(method, "HEAD") != 0)
        return "other";
    if (stream || (path != NULL && query_watch(strchr(path, '?'))))
        return "watch";
    bool watch_prefix, namespaced;
    int rest = path != NULL ? resource_segments(path, &watch_prefix, &namespaced) : -1;
    if (rest < 0)
        return "get"; /* /version, /healthz, /openapi/v2 */
    if (watch_prefix)
        return "watch";
    /* namespaces/NS/RESOURCE[/NAME…]: a namespaced resource; namespaces
     * alone is the list of namespaces, namespaces/NS one of them. */
    if (namespaced && rest >= 3)
        rest -= 2;
    return rest == 1 ? "list" : "get"; /* 0: discovery (/api/v1) */
}
