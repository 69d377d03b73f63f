/*
 * reply.c — an AdmissionReview answer, read by the client that asked
 * (reply.h).
 */
#include "webhook/reply.h"

#include <stdlib.h>
#include <string.h>
#include <yyjson.h>

#include "util/base64.h"

#define REPLY_MAX (1u << 20) /* a body or a decoded patch larger than this is refused */

static bool ends_with(const char *s, const char *suffix)
{
    size_t n = strlen(s), m = strlen(suffix);
    return n >= m && strcmp(s + n - m, suffix) == 0;
}

/* Whether one JSONPatch operation sets a container's limits.cpu: an add or
 * replace of .../resources/limits/cpu with a string, of .../resources/limits
 * with an object that has cpu, or of .../resources with limits.cpu. */
static bool sets_cpu_limit(yyjson_val *op)
{
    const char *o = yyjson_get_str(yyjson_obj_get(op, "op"));
    const char *path = yyjson_get_str(yyjson_obj_get(op, "path"));
    yyjson_val *v = yyjson_obj_get(op, "value");
    if (!o || !path || (strcmp(o, "add") != 0 && strcmp(o, "replace") != 0))
        return false;
    if (strncmp(path, "/spec/containers/", 17) != 0 &&
        strncmp(path, "/spec/initContainers/", 21) != 0)
        return false;
    if (ends_with(path, "/resources/limits/cpu"))
        return yyjson_is_str(v);
    if (ends_with(path, "/resources/limits"))
        return yyjson_is_str(yyjson_obj_get(v, "cpu"));
    if (ends_with(path, "/resources"))
        return yyjson_is_str(yyjson_obj_get(yyjson_obj_get(v, "limits"), "cpu"));
    return false;
}

static hr_status read_patch(yyjson_val *resp, hr_wh_reply *out, hr_err *err)
{
    yyjson_val *p = yyjson_obj_get(resp, "patch");
    if (!p)
        return HR_OK;
    const char *type = yyjson_get_str(yyjson_obj_get(resp, "patchType"));
    if (!yyjson_is_str(p) || !type || strcmp(type, "JSONPatch") != 0)
        return hr_err_set(err, HR_E_INPUT, "response.patch: not a string with patchType JSONPatch");
    size_t len = yyjson_get_len(p);
    if (len > REPLY_MAX)
        return hr_err_set(err, HR_E_INPUT, "response.patch: longer than %u bytes", REPLY_MAX);
    unsigned char *raw = malloc(hr_b64_max(len) + 1);
    if (!raw)
        return hr_err_set(err, HR_E_NOMEM, "response.patch: out of memory");
    size_t bad = 0, n = hr_b64_decode(yyjson_get_str(p), len, raw, &bad);
    if (n == (size_t)-1) {
        free(raw);
        return hr_err_set(err, HR_E_INPUT, "response.patch: not base64 (byte %zu)", bad);
    }
    yyjson_doc *d = yyjson_read((const char *)raw, n, 0);
    free(raw);
    yyjson_val *ops = yyjson_doc_get_root(d);
    if (!yyjson_is_arr(ops)) {
        yyjson_doc_free(d);
        return hr_err_set(err, HR_E_INPUT, "response.patch: not a JSON array of operations");
    }
    out->has_patch = true;
    size_t i, max;
    yyjson_val *op;
    yyjson_arr_foreach(ops, i, max, op)
    {
        if (sets_cpu_limit(op))
            out->n_cpu++;
    }
    yyjson_doc_free(d);
    return HR_OK;
}

hr_status hr_wh_reply_parse(const char *body, size_t len, const char *uid, hr_wh_reply *out,
                            hr_err *err)
{
    *out = (hr_wh_reply){0};
    if (len > REPLY_MAX)
        return hr_err_set(err, HR_E_INPUT, "answer longer than %u bytes", REPLY_MAX);
    yyjson_doc *d = yyjson_read(body, len, 0);
    yyjson_val *root = yyjson_doc_get_root(d);
    if (!yyjson_is_obj(root)) {
        yyjson_doc_free(d);
        return hr_err_set(err, HR_E_INPUT, "the answer is not a JSON object");
    }
    const char *api = yyjson_get_str(yyjson_obj_get(root, "apiVersion"));
    const char *kind = yyjson_get_str(yyjson_obj_get(root, "kind"));
    yyjson_val *resp = yyjson_obj_get(root, "response");
    const char *ruid = yyjson_get_str(yyjson_obj_get(resp, "uid"));
    yyjson_val *allowed = yyjson_obj_get(resp, "allowed");
    hr_status st = HR_OK;
    if (!api || strcmp(api, "admission.k8s.io/v1") != 0 || !kind ||
        strcmp(kind, "AdmissionReview") != 0)
        st = hr_err_set(err, HR_E_INPUT, "not an AdmissionReview admission.k8s.io/v1");
    else if (!yyjson_is_obj(resp))
        st = hr_err_set(err, HR_E_INPUT, "no response object");
    else if (!ruid || strcmp(ruid, uid) != 0)
        st = hr_err_set(err, HR_E_INPUT, "response.uid is not the review's");
    else if (!yyjson_is_bool(allowed))
        st = hr_err_set(err, HR_E_INPUT, "response.allowed: missing or not a boolean");
    else {
        out->allowed = yyjson_get_bool(allowed);
        st = read_patch(resp, out, err);
    }
    yyjson_doc_free(d);
    return st;
}
