/*
 * patch.h — the controller's writes to existing objects: server-side apply
 * and JSON merge patch.
 *
 * Subsystem write (src/kube/write/: patch, events, lease, status_note): the
 * requests that change the cluster, built on the transport
 * (kube/transport/client.h) and nothing else in kube but the API's
 * timestamps (kube/ktime.h). Each file owns one kind of write: what its body
 * looks like and which verb, path and content type carry it; the transport
 * owns how it travels (limiter, credentials, errors). Keeping them apart
 * lets the transport be tested without knowing any object's shape, and a
 * new write be added without touching the transport.
 *
 * Both go through the client's write limiter (hr_kclient_do) and report
 * errors as it does.
 */
#ifndef HR_KUBE_WRITE_PATCH_H
#define HR_KUBE_WRITE_PATCH_H

#include <stdbool.h>
#include <stddef.h>

#include "kube/transport/client.h"
#include "util/buf.h"
#include "util/err.h"

/* Server-side apply to a (sub)resource path, e.g.
 * "/api/v1/namespaces/NS/pods/NAME/resize": PATCH with
 * application/apply-patch+yaml, ?fieldManager=...&force=true. */
HR_MUST_CHECK hr_status hr_kclient_apply(hr_kclient *c, const char *path, const char *field_manager,
                                         bool force, const char *body, size_t len, hr_buf *resp,
                                         hr_kresult *res, hr_err *err);

/* JSON merge patch (application/merge-patch+json), e.g. annotations. */
HR_MUST_CHECK hr_status hr_kclient_merge_patch(hr_kclient *c, const char *path, const char *body,
                                               size_t len, hr_buf *resp, hr_kresult *res,
                                               hr_err *err);

/* The two, asking for the response (the object written) as accept says
 * (NULL: application/json; HR_KACCEPT_PROTOBUF for a built-in kind:
 * res->protobuf says which came). */
HR_MUST_CHECK hr_status hr_kclient_apply_as(hr_kclient *c, const char *path,
                                            const char *field_manager, bool force,
                                            const char *accept, const char *body, size_t len,
                                            hr_buf *resp, hr_kresult *res, hr_err *err);
HR_MUST_CHECK hr_status hr_kclient_merge_patch_as(hr_kclient *c, const char *path,
                                                  const char *accept, const char *body, size_t len,
                                                  hr_buf *resp, hr_kresult *res, hr_err *err);

#endif
