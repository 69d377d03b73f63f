/*
 * lease.c — Lease objects in and out (see lease.h).
 */
#include "kube/write/lease.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <yyjson.h>

#include "kube/ktime.h"

static bool name_ok(const char *s)
{
    if (!s || !*s || strlen(s) > 253)
        return false;
    for (; *s; s++)
        if (!((*s >= 'a' && *s <= 'z') || (*s >= '0' && *s <= '9') || *s == '-' || *s == '.'))
            return false;
    return true;
}

hr_status hr_klease_json(const char *ns, const char *name, const hr_klease *in, bool with_rv,
                         hr_buf *out, hr_err *err)
{
    yyjson_mut_doc *d = yyjson_mut_doc_new(NULL);
    if (!d)
        return hr_err_set(err, HR_E_NOMEM, "lease: out of memory");
    yyjson_mut_val *root = yyjson_mut_obj(d);
    yyjson_mut_doc_set_root(d, root);
    char acq[HR_KTIME_MICRO_MAX], ren[HR_KTIME_MICRO_MAX];
    hr_ktime_format_micro(in->acquire_us, acq);
    hr_ktime_format_micro(in->renew_us, ren);
    bool ok = root && yyjson_mut_obj_add_str(d, root, "apiVersion", "coordination.k8s.io/v1") &&
              yyjson_mut_obj_add_str(d, root, "kind", "Lease");
    yyjson_mut_val *meta = ok ? yyjson_mut_obj_add_obj(d, root, "metadata") : NULL;
    ok = meta && yyjson_mut_obj_add_str(d, meta, "name", name) &&
         yyjson_mut_obj_add_str(d, meta, "namespace", ns);
    if (ok && with_rv)
        ok = yyjson_mut_obj_add_str(d, meta, "resourceVersion", in->rv);
    yyjson_mut_val *spec = ok ? yyjson_mut_obj_add_obj(d, root, "spec") : NULL;
    ok = spec != NULL;
    /* An empty holder is a released lease: write it as absent. */
    if (ok && in->holder[0])
        ok = yyjson_mut_obj_add_str(d, spec, "holderIdentity", in->holder);
    if (ok && in->duration_s > 0)
        ok = yyjson_mut_obj_add_int(d, spec, "leaseDurationSeconds", in->duration_s);
    if (ok && in->acquire_us)
        ok = yyjson_mut_obj_add_strcpy(d, spec, "acquireTime", acq);
    if (ok && in->renew_us)
        ok = yyjson_mut_obj_add_strcpy(d, spec, "renewTime", ren);
    if (ok)
        ok = yyjson_mut_obj_add_int(d, spec, "leaseTransitions", in->transitions);
    size_t len = 0;
    char *json = ok ? yyjson_mut_write(d, 0, &len) : NULL;
    yyjson_mut_doc_free(d);
    if (!json)
        return hr_err_set(err, HR_E_NOMEM, "lease: out of memory");
    hr_buf_append(out, json, len);
    free(json);
    return hr_buf_failed(out) ? hr_err_set(err, HR_E_NOMEM, "lease: out of memory") : HR_OK;
}

static bool copy_str(char *dst, size_t cap, yyjson_val *v)
{
    dst[0] = '\0';
    if (!v || yyjson_is_null(v))
        return true;
    if (!yyjson_is_str(v) || yyjson_get_len(v) >= cap)
        return false;
    memcpy(dst, yyjson_get_str(v), yyjson_get_len(v) + 1);
    return true;
}

static bool get_time(int64_t *dst, yyjson_val *v)
{
    *dst = 0;
    if (!v || yyjson_is_null(v))
        return true;
    if (!yyjson_is_str(v))
        return false;
    int64_t us = hr_ktime_parse_us(yyjson_get_str(v), yyjson_get_len(v));
    if (us == INT64_MIN)
        return false;
    *dst = us;
    return true;
}

hr_status hr_klease_parse(const char *json, size_t len, hr_klease *out, hr_err *err)
{
    memset(out, 0, sizeof *out);
    yyjson_doc *doc = yyjson_read(json, len, 0);
    if (!doc)
        return hr_err_set(err, HR_E_INPUT, "lease: response is not JSON");
    yyjson_val *root = yyjson_doc_get_root(doc);
    yyjson_val *meta = yyjson_obj_get(root, "metadata");
    yyjson_val *spec = yyjson_obj_get(root, "spec");
    yyjson_val *dur = yyjson_obj_get(spec, "leaseDurationSeconds");
    yyjson_val *tr = yyjson_obj_get(spec, "leaseTransitions");
    hr_status st = HR_OK;
    if (!yyjson_equals_str(yyjson_obj_get(root, "kind"), "Lease"))
        st = hr_err_set(err, HR_E_INPUT, "lease: response is not a Lease");
    else if (!copy_str(out->rv, sizeof out->rv, yyjson_obj_get(meta, "resourceVersion")) ||
             !out->rv[0])
        st = hr_err_set(err, HR_E_INPUT, "lease: metadata.resourceVersion missing or too long");
    else if (!copy_str(out->holder, sizeof out->holder, yyjson_obj_get(spec, "holderIdentity")))
        st = hr_err_set(err, HR_E_INPUT, "lease: spec.holderIdentity is not a short string");
    else if (!get_time(&out->acquire_us, yyjson_obj_get(spec, "acquireTime")) ||
             !get_time(&out->renew_us, yyjson_obj_get(spec, "renewTime")))
        st = hr_err_set(err, HR_E_INPUT, "lease: spec.acquireTime/renewTime is not a MicroTime");
    else if ((dur && !yyjson_is_null(dur) && !yyjson_is_int(dur)) ||
             (tr && !yyjson_is_null(tr) && !yyjson_is_int(tr)))
        st = hr_err_set(err, HR_E_INPUT,
                        "lease: spec.leaseDurationSeconds/leaseTransitions are not integers");
    if (!st) {
        out->duration_s = yyjson_is_int(dur) ? (long)yyjson_get_sint(dur) : 0;
        out->transitions = yyjson_is_int(tr) ? (long)yyjson_get_sint(tr) : 0;
    }
    yyjson_doc_free(doc);
    return st;
}

static hr_status lease_req(hr_kclient *c, const char *method, const char *ns, const char *name,
                           const hr_klease *in, bool by_name, hr_klease *out, hr_kresult *res,
                           hr_err *err)
{
    if (!name_ok(ns) || !name_ok(name))
        return hr_err_set(err, HR_E_INPUT, "lease: namespace and name must be DNS names");
    hr_buf path, body, resp;
    hr_buf_init(&path, 0);
    hr_buf_init(&body, 0);
    hr_buf_init(&resp, 1 << 20);
    hr_status st = HR_OK;
    hr_buf_printf(&path, "/apis/coordination.k8s.io/v1/namespaces/%s/leases", ns);
    if (by_name)
        hr_buf_printf(&path, "/%s", name);
    if (hr_buf_failed(&path))
        st = hr_err_set(err, HR_E_NOMEM, "lease: out of memory");
    if (!st && in)
        st = hr_klease_json(ns, name, in, strcmp(method, "PUT") == 0, &body, err);
    if (!st)
        st = hr_kclient_do_unlimited(c, method, hr_buf_str(&path), in ? "application/json" : NULL,
                                     in ? body.data : NULL, in ? body.len : 0, &resp, res, err);
    if (!st && out) {
        hr_klease tmp;
        st = hr_klease_parse(resp.data ? resp.data : "", resp.len, &tmp, err);
        if (!st)
            *out = tmp;
    }
    hr_buf_free(&path);
    hr_buf_free(&body);
    hr_buf_free(&resp);
    return st;
}

hr_status hr_klease_get(hr_kclient *c, const char *ns, const char *name, hr_klease *out,
                        hr_kresult *res, hr_err *err)
{
    return lease_req(c, "GET", ns, name, NULL, true, out, res, err);
}

hr_status hr_klease_create(hr_kclient *c, const char *ns, const char *name, const hr_klease *in,
                           hr_klease *out, hr_kresult *res, hr_err *err)
{
    return lease_req(c, "POST", ns, name, in, false, out, res, err);
}

hr_status hr_klease_update(hr_kclient *c, const char *ns, const char *name, const hr_klease *in,
                           hr_klease *out, hr_kresult *res, hr_err *err)
{
    if (!in->rv[0])
        return hr_err_set(err, HR_E_INPUT,
                          "lease: update needs the resourceVersion that was read (optimistic "
                          "concurrency)");
    return lease_req(c, "PUT", ns, name, in, true, out, res, err);
}
