/*
 * tlssecret.c — read and write the self-managed certificate's Secret and
 * the webhook configuration's caBundle (see tlssecret.h).
 */
#include "kube/write/tlssecret.h"

#include <stdlib.h>
#include <string.h>

#include <yyjson.h>

#include "kube/kname.h"
#include "kube/write/patch.h"
#include "util/base64.h"
#include "util/jsonstr.h"
#include "util/wipe.h"

#define MAX_OBJECT (4u << 20)

void hr_ktls_secret_free(hr_ktls_secret *s)
{
    char **v[] = {&s->crt, &s->key, &s->ca, &s->ca_key};
    size_t *l[] = {&s->crt_len, &s->key_len, &s->ca_len, &s->ca_key_len};
    for (size_t i = 0; i < 4; i++) {
        if (*v[i])
            hr_wipe(*v[i], *l[i]);
        free(*v[i]);
        *v[i] = NULL;
        *l[i] = 0;
    }
    s->rv[0] = '\0';
}

/* A base64 value decoded into a new NUL-terminated string; false when
 * not base64 (or out of memory). Absent or null: *out NULL, true. */
static bool decode_b64(yyjson_val *v, char **out, size_t *out_len)
{
    *out = NULL;
    *out_len = 0;
    if (v == NULL || yyjson_is_null(v))
        return true;
    if (!yyjson_is_str(v))
        return false;
    size_t len = yyjson_get_len(v);
    char *d = malloc(hr_b64_max(len) + 1);
    if (d == NULL)
        return false;
    size_t n = hr_b64_decode(yyjson_get_str(v), len, (unsigned char *)d, NULL);
    if (n == (size_t)-1) {
        free(d);
        return false;
    }
    d[n] = '\0';
    if (n == 0) {
        free(d);
        return true; /* empty: as absent */
    }
    *out = d;
    *out_len = n;
    return true;
}

static bool copy_rv(char *dst, size_t cap, yyjson_val *v)
{
    dst[0] = '\0';
    if (!yyjson_is_str(v) || yyjson_get_len(v) == 0 || yyjson_get_len(v) >= cap)
        return false;
    memcpy(dst, yyjson_get_str(v), yyjson_get_len(v) + 1);
    return true;
}

hr_status hr_ktls_secret_parse(const char *json, size_t len, hr_ktls_secret *out, hr_err *err)
{
    memset(out, 0, sizeof *out);
    yyjson_doc *doc = yyjson_read(json, len, 0);
    if (!doc)
        return hr_err_set(err, HR_E_INPUT, "secret: response is not JSON");
    yyjson_val *root = yyjson_doc_get_root(doc);
    yyjson_val *data = yyjson_obj_get(root, "data");
    hr_status st = HR_OK;
    if (!yyjson_equals_str(yyjson_obj_get(root, "kind"), "Secret"))
        st = hr_err_set(err, HR_E_INPUT, "secret: response is not a Secret");
    else if (!copy_rv(out->rv, sizeof out->rv,
                      yyjson_obj_get(yyjson_obj_get(root, "metadata"), "resourceVersion")))
        st = hr_err_set(err, HR_E_INPUT, "secret: metadata.resourceVersion missing or too long");
    else if (data && !yyjson_is_null(data) && !yyjson_is_obj(data))
        st = hr_err_set(err, HR_E_INPUT, "secret: data is not an object");
    else if (!decode_b64(yyjson_obj_get(data, "tls.crt"), &out->crt, &out->crt_len) ||
             !decode_b64(yyjson_obj_get(data, "tls.key"), &out->key, &out->key_len) ||
             !decode_b64(yyjson_obj_get(data, "ca.crt"), &out->ca, &out->ca_len) ||
             !decode_b64(yyjson_obj_get(data, "ca.key"), &out->ca_key, &out->ca_key_len))
        st = hr_err_set(err, HR_E_INPUT, "secret: a data value is not base64");
    yyjson_doc_free(doc);
    if (st)
        hr_ktls_secret_free(out);
    return st;
}

static hr_status secret_path(hr_buf *p, const char *ns, const char *name, hr_err *err)
{
    if (!hr_kname_label(ns) || !hr_kname_subdomain(name))
        return hr_err_set(err, HR_E_INPUT, "secret: namespace and name must be DNS names");
    hr_buf_printf(p, "/api/v1/namespaces/%s/secrets/%s", ns, name);
    return hr_buf_failed(p) ? hr_err_set(err, HR_E_NOMEM, "secret: out of memory") : HR_OK;
}

hr_status hr_ktls_secret_get(hr_kclient *c, const char *ns, const char *name, hr_ktls_secret *out,
                             hr_kresult *res, hr_err *err)
{
    memset(out, 0, sizeof *out);
    hr_buf path, resp;
    hr_buf_init(&path, 0);
    hr_buf_init(&resp, MAX_OBJECT);
    hr_status st = secret_path(&path, ns, name, err);
    if (!st)
        st = hr_kclient_do(c, "GET", hr_buf_str(&path), NULL, NULL, 0, &resp, res, err);
    if (!st)
        st = hr_ktls_secret_parse(resp.data ? resp.data : "", resp.len, out, err);
    if (resp.data)
        hr_wipe(resp.data, resp.len);
    hr_buf_free(&path);
    hr_buf_free(&resp);
    return st;
}

hr_status hr_ktls_secret_update(hr_kclient *c, const char *ns, const char *name,
                                const hr_ktls_secret *in, hr_kresult *res, hr_err *err)
{
    hr_buf path, body;
    hr_buf_init(&path, 0);
    hr_buf_init(&body, 0);
    hr_status st = secret_path(&path, ns, name, err);
    if (!st) {
        hr_buf_puts(&body, "{\"metadata\":{\"resourceVersion\":");
        hr_buf_json_str(&body, in->rv);
        hr_buf_puts(&body, "},\"data\":{\"tls.crt\":\"");
        hr_buf_b64(&body, in->crt, in->crt_len);
        hr_buf_puts(&body, "\",\"tls.key\":\"");
        hr_buf_b64(&body, in->key, in->key_len);
        hr_buf_puts(&body, "\",\"ca.crt\":\"");
        hr_buf_b64(&body, in->ca, in->ca_len);
        hr_buf_puts(&body, "\",\"ca.key\":\"");
        hr_buf_b64(&body, in->ca_key, in->ca_key_len);
        hr_buf_puts(&body, "\"}}");
        if (hr_buf_failed(&body))
            st = hr_err_set(err, HR_E_NOMEM, "secret: out of memory");
    }
    if (!st)
        st = hr_kclient_merge_patch(c, hr_buf_str(&path), body.data, body.len, NULL, res, err);
    if (body.data)
        hr_wipe(body.data, body.len);
    hr_buf_free(&path);
    hr_buf_free(&body);
    return st;
}

void hr_kmwc_free(hr_kmwc *m)
{
    free(m->first_bundle);
    memset(m, 0, sizeof *m);
}

hr_status hr_kmwc_parse(const char *json, size_t len, const char *want, size_t want_len,
                        hr_kmwc *out, hr_err *err)
{
    memset(out, 0, sizeof *out);
    yyjson_doc *doc = yyjson_read(json, len, 0);
    if (!doc)
        return hr_err_set(err, HR_E_INPUT, "webhook configuration: response is not JSON");
    yyjson_val *root = yyjson_doc_get_root(doc);
    yyjson_val *hooks = yyjson_obj_get(root, "webhooks");
    hr_status st = HR_OK;
    if (!yyjson_equals_str(yyjson_obj_get(root, "kind"), "MutatingWebhookConfiguration"))
        st = hr_err_set(err, HR_E_INPUT,
                        "webhook configuration: not a MutatingWebhookConfiguration");
    else if (!copy_rv(out->rv, sizeof out->rv,
                      yyjson_obj_get(yyjson_obj_get(root, "metadata"), "resourceVersion")))
        st = hr_err_set(err, HR_E_INPUT,
                        "webhook configuration: metadata.resourceVersion missing or too long");
    else if (hooks && !yyjson_is_null(hooks) && !yyjson_is_arr(hooks))
        st = hr_err_set(err, HR_E_INPUT, "webhook configuration: webhooks is not a list");
    out->all_match = true;
    size_t i, max;
    yyjson_val *h;
    if (!st)
        yyjson_arr_foreach(hooks, i, max, h)
        {
            char *b = NULL;
            size_t bl = 0;
            yyjson_val *cc = yyjson_obj_get(h, "clientConfig");
            if (!decode_b64(yyjson_obj_get(cc, "caBundle"), &b, &bl)) {
                st = hr_err_set(err, HR_E_INPUT,
                                "webhook configuration: webhooks[%zu].clientConfig.caBundle is "
                                "not base64",
                                i);
                break;
            }
            out->n_webhooks++;
            if (b == NULL || bl != want_len || memcmp(b, want, bl) != 0)
                out->all_match = false;
            if (out->first_bundle == NULL) {
                out->first_bundle = b;
                out->first_len = bl;
            } else {
                free(b);
            }
        }
    yyjson_doc_free(doc);
    if (st)
        hr_kmwc_free(out);
    return st;
}

static hr_status mwc_path(hr_buf *p, const char *name, hr_err *err)
{
    if (!hr_kname_subdomain(name))
        return hr_err_set(err, HR_E_INPUT, "webhook configuration: the name must be a DNS name");
    hr_buf_printf(p, "/apis/admissionregistration.k8s.io/v1/mutatingwebhookconfigurations/%s",
                  name);
    return hr_buf_failed(p) ? hr_err_set(err, HR_E_NOMEM, "webhook configuration: out of memory")
                            : HR_OK;
}

hr_status hr_kmwc_get(hr_kclient *c, const char *name, const char *want, size_t want_len,
                      hr_kmwc *out, hr_kresult *res, hr_err *err)
{
    memset(out, 0, sizeof *out);
    hr_buf path, resp;
    hr_buf_init(&path, 0);
    hr_buf_init(&resp, MAX_OBJECT);
    hr_status st = mwc_path(&path, name, err);
    if (!st)
        st = hr_kclient_do(c, "GET", hr_buf_str(&path), NULL, NULL, 0, &resp, res, err);
    if (!st)
        st = hr_kmwc_parse(resp.data ? resp.data : "", resp.len, want, want_len, out, err);
    hr_buf_free(&path);
    hr_buf_free(&resp);
    return st;
}

hr_status hr_kmwc_set_ca(hr_kclient *c, const char *name, const hr_kmwc *m, const char *pem,
                         size_t pem_len, hr_kresult *res, hr_err *err)
{
    hr_buf path, body;
    hr_buf_init(&path, 0);
    hr_buf_init(&body, 0);
    hr_status st = mwc_path(&path, name, err);
    if (!st) {
        hr_buf_puts(&body, "[{\"op\":\"test\",\"path\":\"/metadata/resourceVersion\",\"value\":");
        hr_buf_json_str(&body, m->rv);
        hr_buf_putc(&body, '}');
        for (size_t i = 0; i < m->n_webhooks; i++) {
            hr_buf_printf(&body,
                          ",{\"op\":\"add\",\"path\":\"/webhooks/%zu/clientConfig/caBundle\","
                          "\"value\":\"",
                          i);
            hr_buf_b64(&body, pem, pem_len);
            hr_buf_puts(&body, "\"}");
        }
        hr_buf_putc(&body, ']');
        if (hr_buf_failed(&body))
            st = hr_err_set(err, HR_E_NOMEM, "webhook configuration: out of memory");
    }
    if (!st)
        st = hr_kclient_do(c, "PATCH", hr_buf_str(&path), "application/json-patch+json", body.data,
                           body.len, NULL, res, err);
    hr_buf_free(&path);
    hr_buf_free(&body);
    return st;
}
