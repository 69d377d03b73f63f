/*
 * kstatus.c — Status bodies and Retry-After (see kstatus.h).
 */
#include "kube/transport/kstatus.h"

#include <ctype.h>
#include <curl/curl.h>
#include <stdio.h>
#include <string.h>
#include <yyjson.h>

#include "kube/decode/pbobj.h"

static void copy_str(char *dst, size_t cap, yyjson_val *v)
{
    if (!yyjson_is_str(v))
        return;
    hr_err_quote(dst, cap, yyjson_get_str(v), yyjson_get_len(v), cap - 4);
}

void hr_kstatus_parse(const char *body, size_t len, hr_kstatus *st)
{
    memset(st, 0, sizeof *st);
    if (!body || !len)
        return;
    yyjson_doc *doc = yyjson_read(body, len, 0);
    yyjson_val *root = doc ? yyjson_doc_get_root(doc) : NULL;
    yyjson_val *kind = yyjson_obj_get(root, "kind");
    if (yyjson_is_obj(root) && yyjson_equals_str(kind, "Status")) {
        st->is_status = 1;
        copy_str(st->message, sizeof st->message, yyjson_obj_get(root, "message"));
        copy_str(st->reason, sizeof st->reason, yyjson_obj_get(root, "reason"));
        yyjson_val *code = yyjson_obj_get(root, "code");
        if (yyjson_is_int(code))
            st->code = (long)yyjson_get_sint(code);
        yyjson_val *ra = yyjson_obj_get(yyjson_obj_get(root, "details"), "retryAfterSeconds");
        if (yyjson_is_int(ra) && yyjson_get_sint(ra) > 0)
            st->retry_after_s = yyjson_get_sint(ra) > HR_KRETRY_AFTER_MAX_S
                                    ? HR_KRETRY_AFTER_MAX_S
                                    : (long)yyjson_get_sint(ra);
    } else {
        /* Not a Status: the first line of whatever came, trimmed. */
        size_t n = 0;
        while (n < len && body[n] != '\n' && body[n] != '\r')
            n++;
        while (n && isspace((unsigned char)body[n - 1]))
            n--;
        hr_err_quote(st->message, sizeof st->message, body, n, 160);
    }
    yyjson_doc_free(doc);
}

/* A slice of untrusted bytes into a fixed field, as copy_str does. */
static void copy_bytes(char *dst, size_t cap, const uint8_t *s, size_t n)
{
    hr_err_quote(dst, cap, (const char *)s, n, cap - 4);
}

void hr_kstatus_parse_pb(const uint8_t *body, size_t len, hr_kstatus *st)
{
    hr_pbobj o;
    hr_pbstatus ps;
    hr_err e;
    if (!body || hr_pb_unwrap(body, len, &o, &e) != HR_OK ||
        !hr_pb_eq(o.kind, o.kind_len, "Status") || hr_pb_status(o.raw, o.len, &ps, &e) != HR_OK) {
        hr_kstatus_parse((const char *)body, len, st);
        return;
    }
    memset(st, 0, sizeof *st);
    st->is_status = 1;
    st->code = ps.code;
    copy_bytes(st->message, sizeof st->message, ps.message, ps.message_len);
    copy_bytes(st->reason, sizeof st->reason, ps.reason, ps.reason_len);
}

static const char *http_reason(long s)
{
    switch (s) {
    case 400: return "Bad Request";
    case 401: return "Unauthorized";
    case 403: return "Forbidden";
    case 404: return "Not Found";
    case 405: return "Method Not Allowed";
    case 406: return "Not Acceptable";
    case 409: return "Conflict";
    case 410: return "Gone";
    case 413: return "Request Entity Too Large";
    case 415: return "Unsupported Media Type";
    case 422: return "Unprocessable Entity";
    case 429: return "Too Many Requests";
    case 500: return "Internal Server Error";
    case 502: return "Bad Gateway";
    case 503: return "Service Unavailable";
    case 504: return "Gateway Timeout";
    default: return "";
    }
}

hr_status hr_kstatus_err(hr_err *err, const char *method, const char *path, long http,
                         const hr_kstatus *st)
{
    hr_status code = http == 404                                  ? HR_E_NOTFOUND
                     : (http >= 400 && http < 500 && http != 429) ? HR_E_INPUT
                                                                  : HR_E_IO;
    char p[120];
    hr_err_quote(p, sizeof p, path, strlen(path), 100);
    const char *rs = http_reason(http);
    if (st->message[0])
        return hr_err_set(err, code, "%s %s: %ld%s%s: %s", method, p, http, *rs ? " " : "", rs,
                          st->message);
    return hr_err_set(err, code, "%s %s: %ld%s%s", method, p, http, *rs ? " " : "", rs);
}

long hr_kretry_after_ms(const char *value, size_t len, time_t now)
{
    char v[128];
    while (len && isspace((unsigned char)*value)) {
        value++;
        len--;
    }
    while (len && isspace((unsigned char)value[len - 1]))
        len--;
    if (!len || len >= sizeof v)
        return 0;
    memcpy(v, value, len);
    v[len] = '\0';
    long secs;
    if (isdigit((unsigned char)v[0])) {
        size_t i = 0;
        unsigned long long n = 0;
        for (; i < len && isdigit((unsigned char)v[i]); i++) {
            n = n * 10 + (unsigned)(v[i] - '0');
            if (n > HR_KRETRY_AFTER_MAX_S)
                n = HR_KRETRY_AFTER_MAX_S;
        }
        if (i != len)
            return 0;
        secs = (long)n;
    } else {
        /* curl_getdate reads the HTTP-date forms (RFC 1123, 850, asctime). */
        time_t t = curl_getdate(v, NULL);
        if (t == (time_t)-1)
            return 0;
        secs =
            t > now ? (long)(t - now > HR_KRETRY_AFTER_MAX_S ? HR_KRETRY_AFTER_MAX_S : t - now) : 0;
    }
    return secs * 1000;
}
