/*
 * patch.c — server-side apply and JSON merge patch on hr_kclient_do (see
 * patch.h).
 */
#include "kube/write/patch.h"

#include <string.h>

/* Percent-encode a query value (RFC 3986 unreserved pass through). */
static void put_escaped(hr_buf *b, const char *s)
{
    static const char hex[] = "0123456789ABCDEF";
    for (; *s; s++) {
        unsigned char ch = (unsigned char)*s;
        if ((ch >= 'A' && ch <= 'Z') || (ch >= 'a' && ch <= 'z') || (ch >= '0' && ch <= '9') ||
            ch == '-' || ch == '.' || ch == '_' || ch == '~') {
            hr_buf_putc(b, (char)ch);
        } else {
            hr_buf_putc(b, '%');
            hr_buf_putc(b, hex[ch >> 4]);
            hr_buf_putc(b, hex[ch & 15]);
        }
    }
}

hr_status hr_kclient_apply(hr_kclient *c, const char *path, const char *field_manager, bool force,
                           const char *body, size_t len, hr_buf *resp, hr_kresult *res, hr_err *err)
{
    if (!field_manager || !*field_manager)
        return hr_err_set(err, HR_E_INPUT, "server-side apply needs a field manager");
    hr_buf p;
    hr_buf_init(&p, 0);
    hr_buf_puts(&p, path);
    hr_buf_puts(&p, strchr(path, '?') ? "&fieldManager=" : "?fieldManager=");
    put_escaped(&p, field_manager);
    if (force)
        hr_buf_puts(&p, "&force=true");
    hr_status st = hr_buf_failed(&p)
                       ? hr_err_set(err, HR_E_NOMEM, "client: out of memory")
                       : hr_kclient_do(c, "PATCH", hr_buf_str(&p), "application/apply-patch+yaml",
                                       body, len, resp, res, err);
    hr_buf_free(&p);
    return st;
}

hr_status hr_kclient_merge_patch(hr_kclient *c, const char *path, const char *body, size_t len,
                                 hr_buf *resp, hr_kresult *res, hr_err *err)
{
    return hr_kclient_do(c, "PATCH", path, "application/merge-patch+json", body, len, resp, res,
                         err);
}
