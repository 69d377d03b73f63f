/*
 * wevent.c — a watch event from a JSON line or a protobuf frame
 * (wevent.h).
 */
#include "kube/watch/wevent.h"

#include <string.h>

#include "kube/decode/pbobj.h"

static hr_evtype event_type(const char *t, size_t n)
{
    static const struct {
        const char *s;
        hr_evtype t;
    } names[] = {{"ADDED", HR_EV_UPSERT},
                 {"MODIFIED", HR_EV_UPSERT},
                 {"DELETED", HR_EV_DELETE},
                 {"BOOKMARK", HR_EV_BOOKMARK},
                 {"ERROR", HR_EV_ERROR}};
    for (size_t i = 0; i < sizeof names / sizeof names[0]; i++)
        if (strlen(names[i].s) == n && memcmp(names[i].s, t, n) == 0)
            return names[i].t;
    return HR_EV_UNKNOWN;
}

static bool rv_sane(const char *rv, size_t len)
{
    return len > 0 && len < HR_WEVENT_RV_MAX && !memchr(rv, '\0', len);
}

bool hr_wevent_json(yyjson_val *root, hr_wevent *out)
{
    memset(out, 0, sizeof *out);
    yyjson_val *type = yyjson_obj_get(root, "type");
    yyjson_val *obj = yyjson_obj_get(root, "object");
    if (!yyjson_is_str(type) || !yyjson_is_obj(obj))
        return false;
    out->type_str = yyjson_get_str(type);
    out->type_len = yyjson_get_len(type);
    out->type = event_type(out->type_str, out->type_len);
    out->json = obj;
    yyjson_val *meta = yyjson_obj_get(obj, "metadata");
    yyjson_val *rv = yyjson_obj_get(meta, "resourceVersion");
    if (yyjson_is_str(rv) && rv_sane(yyjson_get_str(rv), yyjson_get_len(rv))) {
        out->rv = yyjson_get_str(rv);
        out->rv_len = yyjson_get_len(rv);
    }
    /* A streaming list's last initial event: a bookmark annotated
     * k8s.io/initial-events-end: "true". */
    yyjson_val *a = yyjson_obj_get(meta, "annotations");
    out->initial_end = yyjson_equals_str(yyjson_obj_get(a, "k8s.io/initial-events-end"), "true");
    if (out->type == HR_EV_ERROR) {
        /* A metav1.Status. */
        yyjson_val *code = yyjson_obj_get(obj, "code");
        yyjson_val *msg = yyjson_obj_get(obj, "message");
        out->code = yyjson_is_int(code) ? yyjson_get_sint(code) : 0;
        out->msg = yyjson_is_str(msg) ? yyjson_get_str(msg) : "";
        out->msg_len = strlen(out->msg);
    }
    return true;
}

hr_status hr_wevent_pb(const uint8_t *frame, size_t len, hr_wevent *out, hr_err *err)
{
    memset(out, 0, sizeof *out);
    hr_pbevent pe;
    hr_status st = hr_pb_watch_event(frame, len, &pe, err);
    if (st != HR_OK)
        return st;
    out->type_str = (const char *)pe.type;
    out->type_len = pe.type_len;
    out->type = event_type(out->type_str, out->type_len);
    out->pb = pe.obj.raw;
    out->pb_len = pe.obj.len;
    hr_pbwmeta m;
    if (hr_pb_watch_meta(pe.obj.raw, pe.obj.len, out->type == HR_EV_BOOKMARK, &m)) {
        if (rv_sane((const char *)m.rv, m.rv_len)) {
            out->rv = (const char *)m.rv;
            out->rv_len = m.rv_len;
        }
        out->initial_end = m.initial_events_end;
    }
    if (out->type == HR_EV_ERROR) {
        hr_pbstatus ps;
        hr_err e;
        if (hr_pb_status(pe.obj.raw, pe.obj.len, &ps, &e) == HR_OK) {
            out->code = ps.code;
            out->msg = (const char *)ps.message;
            out->msg_len = ps.message_len;
        } else {
            out->msg = "(a Status that cannot be read)";
            out->msg_len = strlen(out->msg);
        }
    }
    return HR_OK;
}
