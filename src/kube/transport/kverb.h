/*
 * kverb.h — the Kubernetes verb of a request (design §9.3,
 * headroom_api_requests_total): what the API server's authorizer would
 * call it, from the method and the path alone.
 *
 * POST create, PUT update, PATCH patch, DELETE delete; a GET is watch when
 * it streams (or asks ?watch=1/true, or goes through the old /watch/
 * prefix), list on a collection, get on one object, a subresource or a
 * path outside /api and /apis (/version, /healthz).
 */
#ifndef HR_KUBE_KVERB_H
#define HR_KUBE_KVERB_H

#include <stdbool.h>

/* The verb of method on path ("/api/v1/pods?limit=500"); stream: a
 * streaming request (hr_kclient_stream). A static string: "get", "list",
 * "watch", "create", "update", "patch", "delete", or "other" for any other
 * method. Pure. */
const char *hr_kverb(const char *method, const char *path, bool stream);

#endif
