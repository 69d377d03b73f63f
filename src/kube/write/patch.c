/*
 * patch.c — server-side apply and JSON merge patch on hr_kclient_do (see
 * patch.h).
 */
#include "kube/write/patch.h"

#include <string.h>

#include "util/urlenc.h"

hr_status hr_kclient_apply(hr_kclient *c, const char *path, const char *field_manager, bool force,
                           const char *body, size_t len, hr_buf *resp, hr_kresult *res, hr_err *err)
{
    return hr_kclient_apply_as(c, path, field_manager, force, NULL, body, len, resp, res, err);
}

hr_status hr_kclient_apply_as(hr_kclient *c, const char *path, const char *field_manager,
                              bool force, const char *accept, const char *body, size_t len,
                              hr_buf *resp, hr_kresult *res, hr_err *err)
{
    if (!field_manager || !*field_manager)
        return hr_err_set(err, HR_E_INPUT, "server-side apply needs a field manager");
    hr_buf p;
    hr_buf_init(&p, 0);
    hr_buf_puts(&p, path);
    hr_buf_puts(&p, strchr(path, '?') ? "&fieldManager=" : "?fieldManager=");
    hr_buf_urlenc(&p, field_manager);
    if (force)
        hr_buf_puts(&p, "&force=true");
    hr_status st = hr_buf_failed(&p) ? hr_err_set(err, HR_E_NOMEM, "client: out of memory")
                                     : hr_kclient_do_as(c, HR_KUNTIL_NONE, "PATCH", hr_buf_str(&p),
                                                        accept, "application/apply-patch+yaml",
                                                        body, len, resp, res, err);
    hr_buf_free(&p);
    return st;
}

hr_status hr_kclient_merge_patch(hr_kclient *c, const char *path, const char *body, size_t len,
                                 hr_buf *resp, hr_kresult *res, hr_err *err)
{
    return hr_kclient_merge_patch_as(c, path, NULL, body, len, resp, res, err);
}

hr_status hr_kclient_merge_patch_as(hr_kclient *c, const char *path, const char *accept,
                                    const char *body, size_t len, hr_buf *resp, hr_kresult *res,
                                    hr_err *err)
{
    return hr_kclient_do_as(c, HR_KUNTIL_NONE, "PATCH", path, accept,
                            "application/merge-patch+json", body, len, resp, res, err);
}
