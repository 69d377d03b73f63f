/*
 * events.c — Event objects built with yyjson's mutable API (see events.h).
 *
 * The API server validates events.k8s.io/v1 strictly (required
 * reportingController/Instance/action/reason/eventTime, length limits,
 * type Normal|Warning); we check the same things first, so a programming
 * mistake is reported here with the field name instead of as a 422 far
 * from the cause.
 */
#include "kube/write/events.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <yyjson.h>

#include "kube/ktime.h"

#define NOTE_MAX 1024
#define SHORT_MAX 128

/* Longest prefix of s not above max bytes that does not split a UTF-8
 * sequence. */
static size_t utf8_cut(const char *s, size_t max)
{
    size_t n = strlen(s);
    if (n <= max)
        return n;
    n = max;
    while (n && ((unsigned char)s[n] & 0xC0) == 0x80)
        n--;
    return n;
}

hr_status hr_kevent_json(const hr_kevent *e, int64_t now_us, hr_buf *out, hr_err *err)
{
    const char *req[] = {e->ns,     e->kind,   e->api_version, e->name,    e->type,
                         e->reason, e->action, e->controller,  e->instance};
    const char *names[] = {"ns",     "kind",   "api_version", "name",    "type",
                           "reason", "action", "controller",  "instance"};
    for (size_t i = 0; i < sizeof req / sizeof req[0]; i++)
        if (!req[i] || !*req[i])
            return hr_err_set(err, HR_E_INPUT, "event: %s is required", names[i]);
    if (strcmp(e->type, "Normal") != 0 && strcmp(e->type, "Warning") != 0)
        return hr_err_set(err, HR_E_INPUT, "event: type must be Normal or Warning");
    if (strlen(e->reason) > SHORT_MAX || strlen(e->action) > SHORT_MAX ||
        strlen(e->instance) > SHORT_MAX)
        return hr_err_set(err, HR_E_INPUT,
                          "event: reason, action and instance are limited to %d bytes", SHORT_MAX);

    /* <object>.<hex ns>: unique per event and still a DNS subdomain. */
    char name[300];
    snprintf(name, sizeof name, "%.236s.%" PRIx64, e->name, (uint64_t)now_us * 1000);
    char when[HR_KTIME_MICRO_MAX];
    hr_ktime_format_micro(now_us, when);

    yyjson_mut_doc *d = yyjson_mut_doc_new(NULL);
    if (!d)
        return hr_err_set(err, HR_E_NOMEM, "event: out of memory");
    yyjson_mut_val *root = yyjson_mut_obj(d);
    yyjson_mut_doc_set_root(d, root);
    bool ok = root && yyjson_mut_obj_add_str(d, root, "apiVersion", "events.k8s.io/v1") &&
              yyjson_mut_obj_add_str(d, root, "kind", "Event");
    yyjson_mut_val *meta = ok ? yyjson_mut_obj_add_obj(d, root, "metadata") : NULL;
    ok = meta && yyjson_mut_obj_add_strcpy(d, meta, "name", name) &&
         yyjson_mut_obj_add_str(d, meta, "namespace", e->ns) &&
         yyjson_mut_obj_add_strcpy(d, root, "eventTime", when) &&
         yyjson_mut_obj_add_str(d, root, "reportingController", e->controller) &&
         yyjson_mut_obj_add_str(d, root, "reportingInstance", e->instance) &&
         yyjson_mut_obj_add_str(d, root, "action", e->action) &&
         yyjson_mut_obj_add_str(d, root, "reason", e->reason) &&
         yyjson_mut_obj_add_str(d, root, "type", e->type);
    if (ok && e->note)
        ok = yyjson_mut_obj_add_strn(d, root, "note", e->note, utf8_cut(e->note, NOTE_MAX));
    yyjson_mut_val *reg = ok ? yyjson_mut_obj_add_obj(d, root, "regarding") : NULL;
    ok = reg && yyjson_mut_obj_add_str(d, reg, "apiVersion", e->api_version) &&
         yyjson_mut_obj_add_str(d, reg, "kind", e->kind) &&
         yyjson_mut_obj_add_str(d, reg, "namespace", e->ns) &&
         yyjson_mut_obj_add_str(d, reg, "name", e->name);
    if (ok && e->uid)
        ok = yyjson_mut_obj_add_str(d, reg, "uid", e->uid);
    if (ok && e->resource_version)
        ok = yyjson_mut_obj_add_str(d, reg, "resourceVersion", e->resource_version);
    size_t len = 0;
    char *json = ok ? yyjson_mut_write(d, 0, &len) : NULL;
    yyjson_mut_doc_free(d);
    if (!json)
        return hr_err_set(err, HR_E_NOMEM, "event: out of memory");
    hr_buf_append(out, json, len);
    free(json);
    if (hr_buf_failed(out))
        return hr_err_set(err, HR_E_NOMEM, "event: out of memory");
    return HR_OK;
}

static bool name_ok(const char *s)
{
    /* Path segments: names are DNS labels/subdomains, nothing to escape. */
    if (!s || !*s || strlen(s) > 253)
        return false;
    for (; *s; s++)
        if (!((*s >= 'a' && *s <= 'z') || (*s >= '0' && *s <= '9') || *s == '-' || *s == '.'))
            return false;
    return true;
}

hr_status hr_kevent_create(hr_kclient *c, const hr_kevent *e, hr_kresult *res, hr_err *err)
{
    if (!name_ok(e->ns))
        return hr_err_set(err, HR_E_INPUT, "event: bad namespace");
    hr_buf body, path;
    hr_buf_init(&body, 0);
    hr_buf_init(&path, 0);
    hr_status st = hr_kevent_json(e, hr_ktime_now_us(), &body, err);
    if (!st) {
        hr_buf_printf(&path, "/apis/events.k8s.io/v1/namespaces/%s/events", e->ns);
        st = hr_buf_failed(&path)
                 ? hr_err_set(err, HR_E_NOMEM, "event: out of memory")
                 : hr_kclient_do_as(c, HR_KUNTIL_NONE, "POST", hr_buf_str(&path), e->accept,
                                    "application/json", body.data, body.len, NULL, res, err);
    }
    hr_buf_free(&body);
    hr_buf_free(&path);
    return st;
}
