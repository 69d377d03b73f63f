/*
 * review.c — TokenReview and SubjectAccessReview (see review.h).
 */
#include "kube/write/review.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <yyjson.h>

#define TOKENREVIEWS "/apis/authentication.k8s.io/v1/tokenreviews"
#define SARS "/apis/authorization.k8s.io/v1/subjectaccessreviews"
/* A review answer is small; a user with thousands of groups is not. */
#define MAX_ANSWER (1u << 20)

static hr_status write_doc(yyjson_mut_doc *d, bool ok, hr_buf *out, const char *what, hr_err *err)
{
    size_t n = 0;
    char *s = ok ? yyjson_mut_write(d, 0, &n) : NULL;
    yyjson_mut_doc_free(d);
    if (s == NULL)
        return hr_err_set(err, HR_E_NOMEM, "%s: out of memory", what);
    hr_buf_append(out, s, n);
    free(s);
    return hr_buf_failed(out) ? hr_err_set(err, HR_E_NOMEM, "%s: out of memory", what) : HR_OK;
}

hr_status hr_kreview_token_json(const char *token, hr_buf *out, hr_err *err)
{
    yyjson_mut_doc *d = yyjson_mut_doc_new(NULL);
    if (d == NULL)
        return hr_err_set(err, HR_E_NOMEM, "tokenreview: out of memory");
    yyjson_mut_val *root = yyjson_mut_obj(d);
    yyjson_mut_doc_set_root(d, root);
    bool ok = root && yyjson_mut_obj_add_str(d, root, "apiVersion", "authentication.k8s.io/v1") &&
              yyjson_mut_obj_add_str(d, root, "kind", "TokenReview");
    yyjson_mut_val *spec = ok ? yyjson_mut_obj_add_obj(d, root, "spec") : NULL;
    ok = spec && yyjson_mut_obj_add_str(d, spec, "token", token);
    return write_doc(d, ok, out, "tokenreview", err);
}

hr_status hr_kreview_sar_json(const char *json, size_t len, const char *verb, const char *path,
                              bool *authenticated, char *user, size_t cap, hr_buf *sar, hr_err *err)
{
    *authenticated = false;
    if (cap)
        user[0] = '\0';
    yyjson_doc *doc = yyjson_read(json, len, 0);
    if (doc == NULL)
        return hr_err_set(err, HR_E_INPUT, "tokenreview: answer is not JSON");
    yyjson_val *root = yyjson_doc_get_root(doc);
    yyjson_val *status = yyjson_obj_get(root, "status");
    yyjson_val *u = yyjson_obj_get(status, "user");
    yyjson_val *name = yyjson_obj_get(u, "username");
    hr_status st = HR_OK;
    if (!yyjson_equals_str(yyjson_obj_get(root, "kind"), "TokenReview")) {
        st = hr_err_set(err, HR_E_INPUT, "tokenreview: answer is not a TokenReview");
    } else if (yyjson_is_true(yyjson_obj_get(status, "authenticated")) && yyjson_is_str(name) &&
               yyjson_get_len(name) > 0) {
        *authenticated = true;
        if (cap)
            snprintf(user, cap, "%s", yyjson_get_str(name));
        yyjson_mut_doc *d = yyjson_mut_doc_new(NULL);
        if (d == NULL) {
            yyjson_doc_free(doc);
            return hr_err_set(err, HR_E_NOMEM, "subjectaccessreview: out of memory");
        }
        yyjson_mut_val *r = yyjson_mut_obj(d);
        yyjson_mut_doc_set_root(d, r);
        bool ok = r && yyjson_mut_obj_add_str(d, r, "apiVersion", "authorization.k8s.io/v1") &&
                  yyjson_mut_obj_add_str(d, r, "kind", "SubjectAccessReview");
        yyjson_mut_val *spec = ok ? yyjson_mut_obj_add_obj(d, r, "spec") : NULL;
        ok = spec && yyjson_mut_obj_add_strncpy(d, spec, "user", yyjson_get_str(name),
                                                yyjson_get_len(name));
        /* uid, groups and extra as the TokenReview gave them: RBAC may
         * bind a group, and webhooks authorizers may read extra. */
        static const char *const keys[] = {"uid", "groups", "extra"};
        static const yyjson_type types[] = {YYJSON_TYPE_STR, YYJSON_TYPE_ARR, YYJSON_TYPE_OBJ};
        for (int i = 0; ok && i < 3; i++) {
            yyjson_val *v = yyjson_obj_get(u, keys[i]);
            if (v == NULL || yyjson_get_type(v) != types[i])
                continue;
            yyjson_mut_val *copy = yyjson_val_mut_copy(d, v);
            ok = copy && yyjson_mut_obj_add_val(d, spec, keys[i], copy);
        }
        yyjson_mut_val *nr = ok ? yyjson_mut_obj_add_obj(d, spec, "nonResourceAttributes") : NULL;
        ok = nr && yyjson_mut_obj_add_str(d, nr, "path", path) &&
             yyjson_mut_obj_add_str(d, nr, "verb", verb);
        st = write_doc(d, ok, sar, "subjectaccessreview", err);
    }
    yyjson_doc_free(doc);
    return st;
}

hr_status hr_kreview_sar_allowed(const char *json, size_t len, bool *allowed, hr_err *err)
{
    *allowed = false;
    yyjson_doc *doc = yyjson_read(json, len, 0);
    if (doc == NULL)
        return hr_err_set(err, HR_E_INPUT, "subjectaccessreview: answer is not JSON");
    yyjson_val *root = yyjson_doc_get_root(doc);
    yyjson_val *status = yyjson_obj_get(root, "status");
    hr_status st = HR_OK;
    if (!yyjson_equals_str(yyjson_obj_get(root, "kind"), "SubjectAccessReview"))
        st =
            hr_err_set(err, HR_E_INPUT, "subjectaccessreview: answer is not a SubjectAccessReview");
    else
        *allowed = yyjson_is_true(yyjson_obj_get(status, "allowed")) &&
                   !yyjson_is_true(yyjson_obj_get(status, "denied"));
    yyjson_doc_free(doc);
    return st;
}

static hr_status post(hr_kclient *c, int64_t until_ms, const atomic_bool *stop, const char *path,
                      const hr_buf *body, hr_buf *resp, hr_err *err)
{
    hr_kresult res = {0};
    return hr_kclient_do_unlimited_until(c, until_ms, stop, "POST", path, "application/json",
                                         body->data, body->len, resp, &res, err);
}

hr_status hr_kreview_nonresource(hr_kclient *c, const char *token, const char *verb,
                                 const char *path, int64_t until_ms, const atomic_bool *stop,
                                 hr_kreview_verdict *out, char *user, size_t cap, hr_err *err)
{
    *out = HR_KREVIEW_UNAUTHENTICATED;
    hr_buf req, resp, sar;
    hr_buf_init(&req, 0);
    hr_buf_init(&resp, MAX_ANSWER);
    hr_buf_init(&sar, 0);
    bool authenticated = false, allowed = false;
    hr_status st = hr_kreview_token_json(token, &req, err);
    if (!st)
        st = post(c, until_ms, stop, TOKENREVIEWS, &req, &resp, err);
    if (!st)
        st = hr_kreview_sar_json(hr_buf_str(&resp), resp.len, verb, path, &authenticated, user, cap,
                                 &sar, err);
    if (!st && authenticated) {
        hr_buf_reset(&resp);
        st = post(c, until_ms, stop, SARS, &sar, &resp, err);
        if (!st)
            st = hr_kreview_sar_allowed(hr_buf_str(&resp), resp.len, &allowed, err);
        if (!st)
            *out = allowed ? HR_KREVIEW_ALLOWED : HR_KREVIEW_DENIED;
    }
    /* The request carried the token: leave none in freed memory. */
    if (req.data)
        memset(req.data, 0, req.cap);
    hr_buf_free(&req);
    hr_buf_free(&resp);
    hr_buf_free(&sar);
    return st;
}
