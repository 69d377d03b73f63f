/*
 * watch_feed.c — one watch event or list page into the sink (watch_feed.h):
 * either encoding read into one event shape (wevent.h), one handler for
 * it — upserts and deletes, bookmarks moving the resume point, the
 * bookmark that ends a streaming list's initial events, ERROR events
 * (410 relists) — and malformed objects skipped with their name logged.
 * Every JSON line is its own yyjson document, parsed from the watch's one
 * dynamic allocator, so steady state does no malloc for parsing.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "kube/decode/pbobj.h"
#include "kube/watch/watch_int.h"
#include "util/clock.h"

static void skipped(hr_watch *w, const char *what, const hr_err *e)
{
    hr_watch_count(w, &w->stats.malformed, 1);
    hr_watch_logf(w, HR_LV_WARN, "%s not decoded: %s", what, e->msg);
}

/* The initial events ended (their bookmark's resourceVersion is already
 * set): the list is complete, the same stream goes on as the watch. */
static void initial_events_ended(hr_watch *w)
{
    w->initial = false;
    hr_watch_relist_end(w, true);
    char rv[RV_MAX];
    hr_watch_get_rv(w, rv, sizeof rv);
    pthread_mutex_lock(&w->mu);
    w->stats.listed += w->initial_n;
    w->stats.streamed++;
    w->stats.synced = true;
    w->stats.absent = false;
    w->doubt = false;
    uint64_t n = w->stats.listed;
    pthread_mutex_unlock(&w->mu);
    if (w->on_synced)
        w->on_synced(w->on_synced_ud);
    hr_watch_logf(
        w, HR_LV_INFO,
        "listed at resourceVersion %s in %lld ms by a streaming list of %llu objects (%llu "
        "objects listed in all)",
        rv, (long long)(hr_mono_ms() - w->initial_t0), (unsigned long long)w->initial_n,
        (unsigned long long)n);
}

/* Short, printable excerpt of untrusted bytes for a log line. */
static const char *excerpt(char *dst, size_t cap, const char *s, size_t len)
{
    return hr_err_quote(dst, cap, s, len, 80);
}

static hr_status sink_put(hr_watch *w, const hr_wevent *ev, bool del, hr_err *e)
{
    if (ev->json)
        return del ? w->sink.remove(w->sink.ud, ev->json, e)
                   : w->sink.upsert(w->sink.ud, ev->json, e);
    hr_watch_count(w, &w->stats.pb_objects, 1);
    return del ? w->sink.remove_pb(w->sink.ud, ev->pb, ev->pb_len, e)
               : w->sink.upsert_pb(w->sink.ud, ev->pb, ev->pb_len, e);
}

/* One event, from a line or a frame (wevent.h). */
static hr_wline handle(hr_watch *w, const hr_wevent *ev)
{
    hr_watch_count(w, &w->stats.events, 1);
    w->line_events++;
    hr_err e;
    hr_err_clear(&e);
    char ex[100];
    /* During a streaming list's initial events the objects come in key
     * order, not resourceVersion order: the point to resume from is only
     * the bookmark that ends them. */
    switch (ev->type) {
    case HR_EV_UPSERT:
        if (sink_put(w, ev, false, &e) != HR_OK)
            skipped(w, "object", &e);
        if (w->initial)
            w->initial_n++;
        else if (ev->rv)
            hr_watch_set_rv(w, ev->rv, ev->rv_len);
        return HR_WL_OK;
    case HR_EV_DELETE:
        if (sink_put(w, ev, true, &e) != HR_OK)
            skipped(w, "deleted object", &e);
        if (!w->initial && ev->rv)
            hr_watch_set_rv(w, ev->rv, ev->rv_len);
        return HR_WL_OK;
    case HR_EV_BOOKMARK: {
        bool end = w->initial && ev->initial_end;
        if ((!w->initial || end) && ev->rv)
            hr_watch_set_rv(w, ev->rv, ev->rv_len);
        if (end)
            initial_events_ended(w);
        return HR_WL_OK;
    }
    case HR_EV_ERROR: {
        /* 410 (reason Expired or Gone) means our resourceVersion was
         * compacted away: only a relist helps. */
        w->line_code = ev->code;
        char mq[200];
        hr_err_quote(mq, sizeof mq, ev->msg, ev->msg_len, 160);
        if (ev->code == 410) {
            hr_watch_logf(w, HR_LV_INFO, "watch expired (410): %s", mq);
            return HR_WL_GONE;
        }
        hr_watch_logf(w, HR_LV_WARN, "watch error event %lld: %s", (long long)ev->code, mq);
        return HR_WL_ERROR;
    }
    default:
        hr_watch_count(w, &w->stats.malformed, 1);
        hr_watch_logf(w, HR_LV_WARN, "unknown watch event type: %s",
                      excerpt(ex, sizeof ex, ev->type_str, ev->type_len));
        return HR_WL_OK;
    }
}

static hr_wline feed(hr_watch *w, char *line, size_t len, bool insitu)
{
    while (len && (line[len - 1] == '\r' || line[len - 1] == ' ')) {
        len--;
        if (insitu)
            line[len] = '\0'; /* keep the padding zero */
    }
    if (len == 0)
        return HR_WL_OK; /* keep-alive blank line */
    yyjson_read_err rerr;
    /* Without YYJSON_READ_INSITU the input is only read (yyjson copies
     * it); with it, strings are unescaped in the caller's buffer. */
    yyjson_doc *doc = yyjson_read_opts(line, len, insitu ? YYJSON_READ_INSITU : YYJSON_READ_NOFLAG,
                                       w->alc, &rerr);
    char ex[100];
    if (!doc) {
        hr_watch_count(w, &w->stats.malformed, 1);
        hr_watch_logf(w, HR_LV_WARN, "unparseable watch line at byte %zu (%s): %s", rerr.pos,
                      rerr.msg, excerpt(ex, sizeof ex, line, len));
        return HR_WL_BAD;
    }
    hr_wevent ev;
    hr_wline res = HR_WL_BAD;
    if (hr_wevent_json(yyjson_doc_get_root(doc), &ev)) {
        res = handle(w, &ev);
    } else {
        hr_watch_count(w, &w->stats.malformed, 1);
        hr_watch_logf(w, HR_LV_WARN, "watch line is not an event: %s",
                      excerpt(ex, sizeof ex, line, len));
    }
    yyjson_doc_free(doc);
    return res;
}

hr_wline hr_watch_feed_line(hr_watch *w, const char *line, size_t len)
{
    /* Not in situ, so the buffer is only read: the cast is yyjson's
     * signature, not a write. */
    return feed(w, (char *)(uintptr_t)line, len, false);
}

hr_wline hr_watch_feed_line_mut(hr_watch *w, char *line, size_t len)
{
    return feed(w, line, len, true);
}

hr_wline hr_watch_feed_frame(hr_watch *w, const uint8_t *frame, size_t len)
{
    hr_wevent ev;
    hr_err e;
    hr_err_clear(&e);
    if (!w->sink.upsert_pb || !w->sink.remove_pb) {
        hr_watch_count(w, &w->stats.malformed, 1);
        hr_watch_logf(w, HR_LV_WARN, "a protobuf watch frame for a sink that reads JSON only");
        return HR_WL_BAD;
    }
    if (hr_wevent_pb(frame, len, &ev, &e) != HR_OK) {
        hr_watch_count(w, &w->stats.malformed, 1);
        hr_watch_logf(w, HR_LV_WARN, "watch frame of %zu bytes is not an event: %s", len, e.msg);
        return HR_WL_BAD;
    }
    return handle(w, &ev);
}

hr_status hr_watch_feed_page(hr_watch *w, const char *body, size_t len, char *cont, size_t cont_cap,
                             hr_err *err)
{
    if (cont_cap)
        cont[0] = '\0';
    yyjson_read_err rerr;
    yyjson_doc *doc =
        yyjson_read_opts((char *)(uintptr_t)body, len, YYJSON_READ_NOFLAG, w->alc, &rerr);
    if (!doc)
        return hr_err_set(err, HR_E_INPUT, "%s list: unparseable response at byte %zu: %s",
                          w->resource, rerr.pos, rerr.msg);
    yyjson_val *root = yyjson_doc_get_root(doc);
    yyjson_val *meta = yyjson_obj_get(root, "metadata");
    yyjson_val *items = yyjson_obj_get(root, "items");
    yyjson_val *c = yyjson_obj_get(meta, "continue");
    hr_status st = HR_OK;
    if (!yyjson_is_obj(root) || !(yyjson_is_arr(items) || yyjson_is_null(items) || !items)) {
        st = hr_err_set(err, HR_E_INPUT, "%s list: not a list", w->resource);
        goto out;
    }
    if (yyjson_is_str(c) && yyjson_get_len(c) > 0) {
        if (yyjson_get_len(c) >= cont_cap) {
            st = hr_err_set(err, HR_E_LIMIT, "%s list: continue token of %zu bytes", w->resource,
                            yyjson_get_len(c));
            goto out;
        }
        memcpy(cont, yyjson_get_str(c), yyjson_get_len(c));
        cont[yyjson_get_len(c)] = '\0';
    }
    yyjson_val *rvv = yyjson_obj_get(meta, "resourceVersion");
    if (yyjson_is_str(rvv) && yyjson_get_len(rvv) > 0 && yyjson_get_len(rvv) < RV_MAX)
        hr_watch_set_rv(w, yyjson_get_str(rvv), yyjson_get_len(rvv));
    size_t i, max, n = 0;
    yyjson_val *it;
    yyjson_arr_foreach(items, i, max, it)
    {
        hr_err e;
        hr_err_clear(&e);
        n++;
        if (w->sink.upsert(w->sink.ud, it, &e) != HR_OK)
            skipped(w, "listed object", &e);
    }
    hr_watch_count(w, &w->stats.listed, n);
out:
    yyjson_doc_free(doc);
    return st;
}

hr_status hr_watch_feed_page_pb(hr_watch *w, const uint8_t *body, size_t len, char *cont,
                                size_t cont_cap, hr_err *err)
{
    if (cont_cap)
        cont[0] = '\0';
    if (!w->sink.upsert_pb)
        return hr_err_set(err, HR_E_INPUT, "%s list: protobuf for a sink that reads JSON only",
                          w->resource);
    hr_pbobj o;
    hr_pblist l;
    hr_status st = hr_pb_unwrap(body, len, &o, err);
    if (st == HR_OK)
        st = hr_pb_list_open(o.raw, o.len, &l, err);
    if (st != HR_OK) {
        hr_err_prefix(err, "%s list", w->resource);
        return st;
    }
    if (l.cont_len > 0) {
        if (l.cont_len >= cont_cap || memchr(l.cont, '\0', l.cont_len))
            return hr_err_set(err, HR_E_LIMIT, "%s list: continue token of %zu bytes", w->resource,
                              l.cont_len);
        memcpy(cont, l.cont, l.cont_len);
        cont[l.cont_len] = '\0';
    }
    if (l.resource_version_len > 0 && l.resource_version_len < RV_MAX &&
        !memchr(l.resource_version, '\0', l.resource_version_len))
        hr_watch_set_rv(w, (const char *)l.resource_version, l.resource_version_len);
    const uint8_t *item;
    size_t n = 0, il;
    while (hr_pb_list_next(&l, &item, &il, &st, err)) {
        hr_err e;
        hr_err_clear(&e);
        n++;
        if (w->sink.upsert_pb(w->sink.ud, item, il, &e) != HR_OK)
            skipped(w, "listed object", &e);
    }
    hr_watch_count(w, &w->stats.listed, n);
    hr_watch_count(w, &w->stats.pb_objects, n);
    if (st != HR_OK)
        hr_err_prefix(err, "%s list", w->resource);
    return st;
}

void hr_watch_relist_begin(hr_watch *w)
{
    if (w->sink.relist_begin)
        w->sink.relist_begin(w->sink.ud);
}

void hr_watch_relist_end(hr_watch *w, bool complete)
{
    if (w->sink.relist_end)
        w->sink.relist_end(w->sink.ud, complete);
}
