/*
 * watch.c — the list/watch state machine of one resource (see watch.h).
 *
 * States: LIST, then WATCH from the list's resourceVersion → on a clean end
 * (the server's timeoutSeconds) WATCH again from the last resourceVersion
 * seen; on 410 Gone back to LIST; on any other failure WATCH again after a
 * jittered back-off. The back-off resets after a success so one bad minute
 * does not slow the next hour.
 *
 * LIST is a streaming list when the server allows it: one watch with
 * sendInitialEvents=true, resourceVersionMatch=NotOlderThan and no
 * resourceVersion (a consistent read: the state at least as new as the
 * request). Its ADDED events are the list, framed by relist_begin and the
 * bookmark annotated k8s.io/initial-events-end (relist_end(true), the
 * resource synced, the resourceVersion to resume from); after it the same
 * stream is the WATCH. A stream that ends before that bookmark closes the
 * relist incomplete (nothing swept) and the list is made again. A server
 * that refuses the request (kube-apiserver with --feature-gates=WatchList=false:
 * 422 Invalid, "sendInitialEvents is forbidden for watch unless the
 * WatchList feature gate is enabled"; before 1.27, 422 for
 * resourceVersionMatch on a watch; 400 from a server that rejects the
 * query) is remembered: from then on this resource lists by pages
 * (limit=500, continue), as it always does with hr_watch_opts.paged_lists.
 * A stream the server ends cleanly before the bookmark (a server that
 * ignored sendInitialEvents, one shutting down, or kube-apiserver's watch
 * cache closing a watcher too slow to read while new events queue up
 * behind its initial ones: apiserver_terminated_watchers_total) has this
 * one list made by pages, without remembering (stats.stream_cut), as
 * client-go's reflector falls back to a LIST.
 *
 * Protobuf (hr_watch_opts.protobuf): every request accepts protobuf
 * first and JSON as the fallback, and the response's Content-Type picks
 * the decoder — a list page by pages of either kind, a stream by lines or
 * by frames (hr_watch_feed_frame: the same event handling, read with
 * kube/decode/pbobj.h). A 406 Not Acceptable (a server, or a proxy, that
 * serves no protobuf for this resource) is remembered: JSON from then on,
 * and the request is made again at once, not after a back-off.
 *
 * Every watch line is its own yyjson document: parsing a growing buffer
 * with STOP_WHEN_DONE goes quadratic (c-deps-facts.md). Documents come from
 * one yyjson dynamic allocator per watch, so steady state does no malloc
 * for parsing after the first few events.
 */
#include "kube/watch/watch.h"

#include <errno.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "kube/decode/pbobj.h"
#include "kube/watch/wevent.h"
#include "util/clock.h"
#include "util/prng.h"
#include "util/tname.h"
#include "util/urlenc.h"

#define RV_MAX HR_WEVENT_RV_MAX
#define CONT_MAX 4096

struct hr_watch {
    char *resource, *path, *query;
    hr_wsink sink;
    hr_wtransport tr;
    int page_limit, tmin, tmax;
    long bo_base, bo_max;
    size_t max_page;
    hr_log_sink log;
    void *log_ud;
    hr_prng rng;

    yyjson_alc *alc; /* parse memory, reused across lines */

    pthread_mutex_t mu; /* guards rv and stats (read by other threads) */
    char rv[RV_MAX];
    hr_watch_stats stats;

    /* Written by the line handler, read by the loop (same thread). */
    hr_wline line_result;
    uint64_t line_events;
    int64_t line_code; /* the code of the last ERROR event */

    /* Streaming lists (same thread). paged: lists are pages (the option,
     * or a refusal remembered; stats.paged says it to other threads).
     * initial: this stream is a streaming list whose initial events have
     * not ended, the sink's relist is open; initial_n objects so far. */
    bool paged, initial;
    /* Protobuf (same thread): asked for now; and a 406 answered the last
     * list page (the list is made again at once, in JSON). */
    bool pb, pb_refused_now;
    void (*on_synced)(void *ud); /* hr_watch_opts.on_synced */
    void *on_synced_ud;
    int64_t initial_t0;
    uint64_t initial_n;

    pthread_t thread;
    bool started;
    const atomic_bool *stop;

    /* The idle watchdog of one stream (design §5): the stream is given cut,
     * not the caller's stop; the dog sets it on stop or after idle_ms with
     * no line (bookmarks are lines). */
    long idle_ms;
    atomic_bool cut, idle_fired, stream_done;
    _Atomic int64_t last_line_ms;
    const atomic_bool *dog_stop;
    /* The dog and the back-off nap sleep on dog_cv (monotonic) until their
     * deadline; hr_watch_wake (a stop) and the end of the stream signal
     * it. dog_mu guards nothing but the sleep: the flags are atomics. */
    pthread_mutex_t dog_mu;
    pthread_cond_t dog_cv;
    const atomic_bool *run_stop; /* hr_watch_run's flag, for nap */
};

static void default_log(void *ud, int level, const char *msg)
{
    (void)ud;
    hr_log_stderr("watch", level, msg);
}

static void wlog(hr_watch *w, int level, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

static void wlog(hr_watch *w, int level, const char *fmt, ...)
{
    char msg[HR_ERR_MSG_MAX + 200];
    int n = snprintf(msg, sizeof msg, "resource=%s msg=\"", w->resource);
    if (n < 0 || (size_t)n >= sizeof msg)
        return;
    va_list ap;
    va_start(ap, fmt);
    char body[HR_ERR_MSG_MAX + 100];
    vsnprintf(body, sizeof body, fmt, ap);
    va_end(ap);
    /* logfmt: quotes inside the message must not end the value. */
    size_t o = (size_t)n;
    for (const char *p = body; *p && o + 3 < sizeof msg; p++) {
        if (*p == '"' || *p == '\\')
            msg[o++] = '\\';
        msg[o++] = (*p == '\n') ? ' ' : *p;
    }
    msg[o++] = '"';
    msg[o] = '\0';
    w->log(w->log_ud, level, msg);
}

static char *dup_or_null(const char *s)
{
    return s ? strdup(s) : NULL;
}

hr_status hr_watch_new(const hr_watch_opts *o, hr_watch **out, hr_err *err)
{
    *out = NULL;
    if (!o || !o->path || !o->path[0] || o->path[0] != '/' || !o->sink.upsert || !o->sink.remove ||
        !o->transport.do_get || !o->transport.stream)
        return hr_err_set(err, HR_E_INPUT, "watch: path, sink and transport are required");
    hr_watch *w = calloc(1, sizeof *w);
    if (!w)
        return hr_err_set(err, HR_E_NOMEM, "watch: out of memory");
    w->resource = strdup(o->resource ? o->resource : o->path);
    w->path = strdup(o->path);
    w->query = (o->query && o->query[0]) ? dup_or_null(o->query) : NULL;
    w->alc = yyjson_alc_dyn_new();
    if (!w->resource || !w->path || (o->query && o->query[0] && !w->query) || !w->alc ||
        pthread_mutex_init(&w->mu, NULL) != 0) {
        if (w->alc)
            yyjson_alc_dyn_free(w->alc);
        free(w->resource);
        free(w->path);
        free(w->query);
        free(w);
        return hr_err_set(err, HR_E_NOMEM, "watch: out of memory");
    }
    w->sink = o->sink;
    w->tr = o->transport;
    w->page_limit = o->page_limit > 0 ? o->page_limit : 500;
    w->tmin = o->timeout_min_s > 0 ? o->timeout_min_s : 240;
    w->tmax = o->timeout_max_s >= w->tmin ? o->timeout_max_s : 2 * w->tmin;
    w->bo_base = o->backoff_base_ms > 0 ? o->backoff_base_ms : 500;
    w->bo_max = o->backoff_max_ms > 0 ? o->backoff_max_ms : 30000;
    w->max_page = o->max_page_bytes > 0 ? o->max_page_bytes : (size_t)256 << 20;
    w->idle_ms = o->idle_timeout_ms > 0 ? o->idle_timeout_ms : 90000;
    w->paged = o->paged_lists;
    w->stats.paged = o->paged_lists;
    w->pb = o->protobuf && o->sink.upsert_pb && o->sink.remove_pb && o->transport.get_as &&
            o->transport.stream_as;
    w->stats.protobuf = w->pb;
    bool dog_mu = pthread_mutex_init(&w->dog_mu, NULL) == 0;
    if (!dog_mu || hr_mono_cond_init(&w->dog_cv) != 0) {
        if (dog_mu)
            pthread_mutex_destroy(&w->dog_mu);
        pthread_mutex_destroy(&w->mu);
        free(w->resource);
        free(w->path);
        free(w->query);
        free(w);
        return hr_err_set(err, HR_E_NOMEM, "watch: cannot create a lock");
    }
    w->log = o->log ? o->log : default_log;
    w->log_ud = o->log_ud;
    w->on_synced = o->on_synced;
    w->on_synced_ud = o->on_synced_ud;
    if (o->seed)
        hr_prng_seed(&w->rng, o->seed);
    else
        hr_prng_seed_random(&w->rng);
    *out = w;
    return HR_OK;
}

void hr_watch_free(hr_watch *w)
{
    if (!w)
        return;
    hr_watch_join(w);
    yyjson_alc_dyn_free(w->alc);
    pthread_cond_destroy(&w->dog_cv);
    pthread_mutex_destroy(&w->dog_mu);
    pthread_mutex_destroy(&w->mu);
    free(w->resource);
    free(w->path);
    free(w->query);
    free(w);
}

void hr_watch_get_stats(hr_watch *w, hr_watch_stats *out)
{
    pthread_mutex_lock(&w->mu);
    *out = w->stats;
    pthread_mutex_unlock(&w->mu);
}

void hr_watch_get_rv(hr_watch *w, char *dst, size_t cap)
{
    if (!cap)
        return;
    pthread_mutex_lock(&w->mu);
    snprintf(dst, cap, "%s", w->rv);
    pthread_mutex_unlock(&w->mu);
}

static void count(hr_watch *w, uint64_t *field, uint64_t n)
{
    pthread_mutex_lock(&w->mu);
    *field += n;
    pthread_mutex_unlock(&w->mu);
}

static void set_rv(hr_watch *w, const char *rv, size_t len)
{
    pthread_mutex_lock(&w->mu);
    memcpy(w->rv, rv, len);
    w->rv[len] = '\0';
    pthread_mutex_unlock(&w->mu);
}

static void skipped(hr_watch *w, const char *what, const hr_err *e)
{
    count(w, &w->stats.malformed, 1);
    wlog(w, HR_LV_WARN, "%s not decoded: %s", what, e->msg);
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
    uint64_t n = w->stats.listed;
    pthread_mutex_unlock(&w->mu);
    if (w->on_synced)
        w->on_synced(w->on_synced_ud);
    wlog(w, HR_LV_INFO,
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
    count(w, &w->stats.pb_objects, 1);
    return del ? w->sink.remove_pb(w->sink.ud, ev->pb, ev->pb_len, e)
               : w->sink.upsert_pb(w->sink.ud, ev->pb, ev->pb_len, e);
}

/* One event, from a line or a frame (wevent.h). */
static hr_wline handle(hr_watch *w, const hr_wevent *ev)
{
    count(w, &w->stats.events, 1);
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
            set_rv(w, ev->rv, ev->rv_len);
        return HR_WL_OK;
    case HR_EV_DELETE:
        if (sink_put(w, ev, true, &e) != HR_OK)
            skipped(w, "deleted object", &e);
        if (!w->initial && ev->rv)
            set_rv(w, ev->rv, ev->rv_len);
        return HR_WL_OK;
    case HR_EV_BOOKMARK: {
        bool end = w->initial && ev->initial_end;
        if ((!w->initial || end) && ev->rv)
            set_rv(w, ev->rv, ev->rv_len);
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
            wlog(w, HR_LV_INFO, "watch expired (410): %s", mq);
            return HR_WL_GONE;
        }
        wlog(w, HR_LV_WARN, "watch error event %lld: %s", (long long)ev->code, mq);
        return HR_WL_ERROR;
    }
    default:
        count(w, &w->stats.malformed, 1);
        wlog(w, HR_LV_WARN, "unknown watch event type: %s",
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
        count(w, &w->stats.malformed, 1);
        wlog(w, HR_LV_WARN, "unparseable watch line at byte %zu (%s): %s", rerr.pos, rerr.msg,
             excerpt(ex, sizeof ex, line, len));
        return HR_WL_BAD;
    }
    hr_wevent ev;
    hr_wline res = HR_WL_BAD;
    if (hr_wevent_json(yyjson_doc_get_root(doc), &ev)) {
        res = handle(w, &ev);
    } else {
        count(w, &w->stats.malformed, 1);
        wlog(w, HR_LV_WARN, "watch line is not an event: %s", excerpt(ex, sizeof ex, line, len));
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
        count(w, &w->stats.malformed, 1);
        wlog(w, HR_LV_WARN, "a protobuf watch frame for a sink that reads JSON only");
        return HR_WL_BAD;
    }
    if (hr_wevent_pb(frame, len, &ev, &e) != HR_OK) {
        count(w, &w->stats.malformed, 1);
        wlog(w, HR_LV_WARN, "watch frame of %zu bytes is not an event: %s", len, e.msg);
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
        set_rv(w, yyjson_get_str(rvv), yyjson_get_len(rvv));
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
    count(w, &w->stats.listed, n);
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
        set_rv(w, (const char *)l.resource_version, l.resource_version_len);
    const uint8_t *item;
    size_t n = 0, il;
    while (hr_pb_list_next(&l, &item, &il, &st, err)) {
        hr_err e;
        hr_err_clear(&e);
        n++;
        if (w->sink.upsert_pb(w->sink.ud, item, il, &e) != HR_OK)
            skipped(w, "listed object", &e);
    }
    count(w, &w->stats.listed, n);
    count(w, &w->stats.pb_objects, n);
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

/* ------------------------------------------------------------- the loop */

/* The caller's flag, set by another thread (informers.c on shutdown). */
static bool stopped(const atomic_bool *stop)
{
    return stop && atomic_load_explicit(stop, memory_order_acquire);
}

/* Sleep until the monotonic instant until_ms, or less when a stop (with
 * hr_watch_wake) or the stream's end signals dog_cv and done() says so. */
static void sleep_until(hr_watch *w, int64_t until_ms, bool (*done)(hr_watch *w))
{
    struct timespec ts = hr_mono_timespec(until_ms * 1000000);
    pthread_mutex_lock(&w->dog_mu);
    while (!done(w) && hr_mono_ms() < until_ms)
        if (pthread_cond_timedwait(&w->dog_cv, &w->dog_mu, &ts) == ETIMEDOUT)
            break;
    pthread_mutex_unlock(&w->dog_mu);
}

static bool nap_done(hr_watch *w)
{
    return stopped(w->run_stop);
}

/* Sleep ms, waking early on a stop (hr_watch_wake). */
static void nap(hr_watch *w, long ms)
{
    if (ms > 0)
        sleep_until(w, hr_mono_ms() + ms, nap_done);
}

static long backoff(hr_watch *w, int attempt, long retry_after)
{
    if (w->tr.backoff_ms)
        return w->tr.backoff_ms(attempt, w->bo_base, w->bo_max, retry_after);
    long d = w->bo_base;
    for (int i = 0; i < attempt && d < w->bo_max; i++)
        d *= 2;
    if (d > w->bo_max)
        d = w->bo_max;
    /* × [0.5, 1.5): spreads many watches that failed together. */
    d = d / 2 + (long)hr_prng_below(&w->rng, (uint64_t)(d > 0 ? d : 1));
    return retry_after > d ? retry_after : d;
}

static void start_query(hr_watch *w, hr_buf *p)
{
    hr_buf_reset(p);
    hr_buf_puts(p, w->path);
    hr_buf_putc(p, strchr(w->path, '?') ? '&' : '?');
    if (w->query) {
        hr_buf_puts(p, w->query);
        hr_buf_putc(p, '&');
    }
}

/* The server will not serve what this watch asks for (protobuf, a streaming list): the
 * watch's own flag and its stats' copy set to value, and one warning, "HEAD (CODE: the
 * server's message quoted): this resource THEN from now on". */
static void step_down(hr_watch *w, bool *flag, bool *stat, bool value, const char *head, long code,
                      const char *msg, const char *then)
{
    *flag = value;
    pthread_mutex_lock(&w->mu);
    *stat = value;
    pthread_mutex_unlock(&w->mu);
    char mq[200];
    hr_err_quote(mq, sizeof mq, msg, strlen(msg), 160);
    wlog(w, HR_LV_WARN, "%s (%ld: %s): this resource %s from now on", head, code, mq, then);
}

/* A 406 Not Acceptable to a request for protobuf (st, res: its answer): JSON from now on, for
 * lists and watches alike. True when it was one (the caller asks again, in JSON). */
static bool refused_protobuf(hr_watch *w, bool asked_pb, hr_status st, const hr_kresult *res,
                             const char *msg)
{
    if (st == HR_OK || !asked_pb || res->status != 406)
        return false;
    step_down(w, &w->pb, &w->stats.protobuf, false, "the server will not send protobuf", 406, msg,
              "asks for JSON");
    return true;
}

/* One complete list, framed for the sink. */
static hr_status do_list(hr_watch *w, const atomic_bool *stop, long *retry_after, hr_err *err)
{
    hr_buf path, body;
    hr_buf_init(&path, 0);
    hr_buf_init(&body, w->max_page);
    char *cont = malloc(CONT_MAX);
    if (!cont)
        return hr_err_set(err, HR_E_NOMEM, "%s list: out of memory", w->resource);
    cont[0] = '\0';
    hr_status st = HR_OK;
    hr_watch_relist_begin(w);
    for (;;) {
        if (stopped(stop)) {
            st = hr_err_set(err, HR_E_IO, "%s list: stopped", w->resource);
            break;
        }
        start_query(w, &path);
        hr_buf_printf(&path, "limit=%d", w->page_limit);
        if (cont[0]) {
            hr_buf_puts(&path, "&continue=");
            hr_buf_urlenc(&path, cont);
        }
        if (hr_buf_failed(&path)) {
            st = hr_err_set(err, HR_E_NOMEM, "%s list: out of memory", w->resource);
            break;
        }
        hr_buf_reset(&body);
        hr_kresult res = {0, 0, false};
        bool asked_pb = w->pb;
        st = asked_pb
                 ? w->tr.get_as(w->tr.ud, hr_buf_str(&path), HR_KACCEPT_PROTOBUF, &body, &res, err)
                 : w->tr.do_get(w->tr.ud, hr_buf_str(&path), &body, &res, err);
        if (refused_protobuf(w, asked_pb, st, &res, err->msg)) {
            w->pb_refused_now = true;
            break;
        }
        if (st == HR_OK && hr_buf_failed(&body))
            st = hr_err_set(err, HR_E_LIMIT, "%s list: a page is larger than %zu bytes",
                            w->resource, w->max_page);
        if (st != HR_OK) {
            *retry_after = res.retry_after_ms;
            /* A 410 here is an expired continue token: the next attempt
             * starts a new list (a new snapshot), never a half of one. */
            break;
        }
        if (res.protobuf)
            st = hr_watch_feed_page_pb(w, (const uint8_t *)(body.data ? body.data : ""), body.len,
                                       cont, CONT_MAX, err);
        else
            st = hr_watch_feed_page(w, body.data ? body.data : "", body.len, cont, CONT_MAX, err);
        if (st != HR_OK || !cont[0])
            break;
    }
    hr_watch_relist_end(w, st == HR_OK);
    free(cont);
    hr_buf_free(&path);
    hr_buf_free(&body);
    return st;
}

static int on_line(void *ud, const char *line, size_t len)
{
    hr_watch *w = ud;
    atomic_store(&w->last_line_ms, hr_mono_ms());
    /* hr_kline_fn hands a const pointer; the transport said the line is a
     * private padded copy (hr_wtransport.lines_writable). */
    hr_wline r = w->tr.lines_writable ? hr_watch_feed_line_mut(w, (char *)(uintptr_t)line, len)
                                      : hr_watch_feed_line(w, line, len);
    if (r != HR_WL_OK) {
        w->line_result = r;
        return 1;
    }
    return 0;
}

static int on_frame(void *ud, const char *frame, size_t len)
{
    hr_watch *w = ud;
    atomic_store(&w->last_line_ms, hr_mono_ms());
    hr_wline r = hr_watch_feed_frame(w, (const uint8_t *)frame, len);
    if (r != HR_WL_OK) {
        w->line_result = r;
        return 1;
    }
    return 0;
}

/* The stream, in protobuf when this resource asks for it. */
static hr_status open_stream(hr_watch *w, const char *path, long timeout_s, const atomic_bool *stop,
                             hr_kresult *res, hr_err *err)
{
    if (w->pb)
        return w->tr.stream_as(w->tr.ud, path, HR_KACCEPT_PROTOBUF_WATCH, timeout_s, on_line,
                               on_frame, w, stop, res, err);
    return w->tr.stream(w->tr.ud, path, timeout_s, on_line, w, stop, res, err);
}

static bool dog_done(hr_watch *w)
{
    return atomic_load(&w->stream_done) || stopped(w->dog_stop);
}

/* The watchdog of one stream: a healthy stream is never silent for long,
 * because the watch asks for bookmarks (the API server sends one about
 * every minute) — so idle_ms without a line means a live but silent server
 * (a half-open connection, a stuck proxy). It sleeps until the moment the
 * stream would have been silent for idle_ms (each line moves that moment;
 * the dog finds out when it wakes), or until the stream ends or a stop
 * (hr_watch_wake) signals it; when it cuts the stream it wakes the
 * transport, so the stream need not poll its flag. */
static void *idle_dog(void *arg)
{
    hr_watch *w = arg;
    hr_thread_name("hr-wd-%s", w->resource);
    for (;;) {
        if (atomic_load(&w->stream_done))
            return NULL;
        if (stopped(w->dog_stop))
            break;
        int64_t due = atomic_load(&w->last_line_ms) + w->idle_ms;
        if (hr_mono_ms() >= due) {
            atomic_store(&w->idle_fired, true);
            break;
        }
        sleep_until(w, due, dog_done);
    }
    atomic_store(&w->cut, true);
    if (w->tr.wake != NULL)
        w->tr.wake(w->tr.ud);
    return NULL;
}

void hr_watch_wake(hr_watch *w)
{
    if (w == NULL)
        return;
    pthread_mutex_lock(&w->dog_mu);
    pthread_cond_broadcast(&w->dog_cv);
    pthread_mutex_unlock(&w->dog_mu);
    if (w->tr.wake != NULL)
        w->tr.wake(w->tr.ud);
}

/* One stream under the idle watchdog. Without a thread for the dog (it
 * could not be made) the stream runs on stop alone. */
static hr_status guarded_stream(hr_watch *w, const char *path, long timeout_s,
                                const atomic_bool *stop, hr_kresult *res, hr_err *err)
{
    atomic_store(&w->cut, false);
    atomic_store(&w->idle_fired, false);
    atomic_store(&w->stream_done, false);
    atomic_store(&w->last_line_ms, hr_mono_ms());
    w->dog_stop = stop;
    pthread_t dog;
    if (pthread_create(&dog, NULL, idle_dog, w) != 0) {
        wlog(w, HR_LV_WARN, "no thread for the idle watchdog: stream without it");
        return open_stream(w, path, timeout_s, stop, res, err);
    }
    hr_status st = open_stream(w, path, timeout_s, &w->cut, res, err);
    pthread_mutex_lock(&w->dog_mu);
    atomic_store(&w->stream_done, true);
    pthread_cond_broadcast(&w->dog_cv);
    pthread_mutex_unlock(&w->dog_mu);
    pthread_join(dog, NULL);
    return st;
}

/* A streaming list the server will not serve: the codes it answers a
 * query it rejects with (watch.c's header), as the response or as an
 * ERROR event before the initial events ended. 410 (relist), 429 and 5xx
 * (retry), 401/403 (a list would fail the same) are not refusals. */
static bool refused_code(long code)
{
    return code == 400 || code == 422;
}

static void fall_back_to_pages(hr_watch *w, long code, const char *msg)
{
    step_down(w, &w->paged, &w->stats.paged, true, "the server refused a streaming list", code, msg,
              "lists by pages");
}

hr_status hr_watch_run(hr_watch *w, const atomic_bool *stop)
{
    w->run_stop = stop;
    bool need_list = true, first_list = true, first_watch = true;
    /* The next list by pages, in place of a streaming list that did not
     * complete (refused, or ended early): the same list, not a relist. */
    bool page_once = false;
    int attempt = 0;
    hr_buf path;
    hr_buf_init(&path, 0);
    while (!stopped(stop)) {
        hr_err err;
        hr_err_clear(&err);
        long retry_after = 0;
        if (need_list && (w->paged || page_once)) {
            if (!first_list && !page_once)
                count(w, &w->stats.relists, 1);
            page_once = false;
            first_list = false;
            int64_t t0 = hr_mono_ms();
            w->pb_refused_now = false;
            hr_status st = do_list(w, stop, &retry_after, &err);
            if (stopped(stop))
                break;
            if (st != HR_OK && w->pb_refused_now) {
                count(w, &w->stats.errors, 1);
                continue; /* the same list again, in JSON, at once */
            }
            if (st != HR_OK) {
                count(w, &w->stats.errors, 1);
                long d = backoff(w, attempt++, retry_after);
                wlog(w, HR_LV_WARN, "list failed, retry in %ld ms: %s", d, err.msg);
                nap(w, d);
                continue;
            }
            char rv[RV_MAX];
            hr_watch_get_rv(w, rv, sizeof rv);
            pthread_mutex_lock(&w->mu);
            uint64_t n = w->stats.listed;
            w->stats.synced = true;
            pthread_mutex_unlock(&w->mu);
            if (w->on_synced)
                w->on_synced(w->on_synced_ud);
            wlog(w, HR_LV_INFO,
                 "listed at resourceVersion %s in %llu ms (%llu objects listed in all)", rv,
                 (unsigned long long)(hr_mono_ms() - t0), (unsigned long long)n);
            need_list = false;
            attempt = 0;
        }
        /* Still to list: this stream is a streaming list. */
        bool streaming = need_list;
        char rv[RV_MAX];
        hr_watch_get_rv(w, rv, sizeof rv);
        int span = w->tmax - w->tmin;
        long timeout = w->tmin + (span > 0 ? (long)hr_prng_below(&w->rng, (uint64_t)span + 1) : 0);
        start_query(w, &path);
        if (streaming) {
            hr_buf_printf(&path,
                          "watch=1&sendInitialEvents=true&resourceVersionMatch=NotOlderThan"
                          "&allowWatchBookmarks=true&timeoutSeconds=%ld",
                          timeout);
        } else {
            hr_buf_printf(&path,
                          "watch=1&allowWatchBookmarks=true&timeoutSeconds=%ld"
                          "&resourceVersion=",
                          timeout);
            hr_buf_urlenc(&path, rv);
        }
        if (hr_buf_failed(&path)) {
            nap(w, backoff(w, attempt++, 0));
            hr_buf_free(&path);
            hr_buf_init(&path, 0);
            continue;
        }
        if (streaming) {
            if (!first_list)
                count(w, &w->stats.relists, 1);
            first_list = false;
            w->initial = true;
            w->initial_n = 0;
            w->initial_t0 = hr_mono_ms();
            hr_watch_relist_begin(w);
        } else if (!first_watch) {
            count(w, &w->stats.reconnects, 1);
        }
        first_watch = false;
        w->line_result = HR_WL_OK;
        w->line_events = 0;
        w->line_code = 0;
        hr_kresult res = {0, 0, false};
        bool asked_pb = w->pb;
        int64_t t0 = hr_mono_ms();
        /* The client-side bound is a little longer than the server's, so
         * a healthy stream ends on the server's side, cleanly. */
        hr_status st = guarded_stream(w, hr_buf_str(&path), timeout + 30, stop, &res, &err);
        bool cut_short = w->initial; /* ended before its initial events did */
        if (cut_short) {
            w->initial = false;
            count(w, &w->stats.listed, w->initial_n);
            hr_watch_relist_end(w, false);
        } else if (streaming) {
            need_list = false;
            attempt = 0;
        }
        if (stopped(stop))
            break;
        if (refused_protobuf(w, asked_pb, st, &res, err.msg)) {
            count(w, &w->stats.errors, 1);
            continue; /* the same request again, in JSON, at once */
        }
        if (cut_short && !atomic_load(&w->idle_fired)) {
            long code = st != HR_OK                     ? res.status
                        : w->line_result == HR_WL_ERROR ? (long)w->line_code
                                                        : 0;
            if (refused_code(code)) {
                count(w, &w->stats.errors, 1);
                fall_back_to_pages(w, code, st != HR_OK ? err.msg : "an ERROR event");
                page_once = true;
                continue;
            }
            if (st == HR_OK && w->line_result == HR_WL_OK) {
                count(w, &w->stats.stream_cut, 1);
                wlog(w, HR_LV_WARN,
                     "streaming list ended after %llu objects without its initial-events-end "
                     "bookmark: this list by pages",
                     (unsigned long long)w->initial_n);
                page_once = true;
                continue;
            }
        }
        if (atomic_load(&w->idle_fired)) {
            /* Dropped as silent: resume from the last resourceVersion, as
             * after any other stream end that was not clean. */
            hr_watch_get_rv(w, rv, sizeof rv);
            count(w, &w->stats.errors, 1);
            long d = backoff(w, attempt++, 0);
            wlog(w, HR_LV_WARN, "watch silent for %ld ms, dropped; resume from %s in %ld ms",
                 w->idle_ms, rv, d);
            nap(w, d);
            continue;
        }
        /* (A streaming list reads the current state: a 410 there is a
         * failure like any other, retried after a back-off.) */
        if (!cut_short && (w->line_result == HR_WL_GONE || res.status == 410)) {
            if (res.status == 410)
                wlog(w, HR_LV_INFO, "watch from %s refused with 410 Gone: relist", rv);
            need_list = true;
            continue;
        }
        bool clean = st == HR_OK && w->line_result == HR_WL_OK;
        /* A stream the server closes at once, with nothing in it, is a
         * failure in disguise: without this it would spin. */
        if (clean && (w->line_events > 0 || hr_mono_ms() - t0 >= 1000)) {
            attempt = 0;
            continue;
        }
        count(w, &w->stats.errors, 1);
        long d = backoff(w, attempt++, res.retry_after_ms);
        char what[RV_MAX + 16];
        if (cut_short)
            snprintf(what, sizeof what, "streaming list");
        else
            snprintf(what, sizeof what, "watch from %s", rv);
        if (st != HR_OK)
            wlog(w, HR_LV_WARN, "%s ended (status %ld), again in %ld ms: %s", what, res.status, d,
                 err.msg);
        else
            wlog(w, HR_LV_WARN, "%s ended early, again in %ld ms", what, d);
        nap(w, d);
    }
    hr_buf_free(&path);
    return HR_OK;
}

static void *thread_main(void *arg)
{
    hr_watch *w = arg;
    hr_thread_name("hr-w-%s", w->resource);
    HR_IGNORE(hr_watch_run(w, w->stop)); /* HR_OK on stop; failures are retried inside */
    return NULL;
}

hr_status hr_watch_start(hr_watch *w, const atomic_bool *stop, hr_err *err)
{
    if (w->started)
        return hr_err_set(err, HR_E_INPUT, "%s watch: already started", w->resource);
    w->stop = stop;
    int rc = pthread_create(&w->thread, NULL, thread_main, w);
    if (rc != 0)
        return hr_err_set(err, HR_E_IO, "%s watch: pthread_create: %s", w->resource, strerror(rc));
    w->started = true;
    return HR_OK;
}

void hr_watch_join(hr_watch *w)
{
    if (w && w->started) {
        pthread_join(w->thread, NULL);
        w->started = false;
    }
}
