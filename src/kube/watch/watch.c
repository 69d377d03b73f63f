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
 * A resource that may not be served (hr_watch_opts.absent_poll_ms: a
 * custom resource whose CRD comes and goes) takes a 404 to a list (or a
 * 403: the identity may not read it) as "none exist": a complete, empty
 * relist sweeps the sink, the resource is synced, and the list is asked
 * again every absent_poll_ms. A kind that was served is asked once more
 * before that, absent_poll_ms later (an API server restarting answers 404
 * for a while). A 404 to a watch sends it back to LIST.
 *
 * What arrives is handed to the sink by watch_feed.c.
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
#include "kube/watch/watch_int.h"
#include "util/clock.h"
#include "util/tname.h"
#include "util/urlenc.h"

static void default_log(void *ud, int level, const char *msg)
{
    (void)ud;
    hr_log_stderr("watch", level, msg);
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
    w->absent_ms = o->absent_poll_ms > 0 ? o->absent_poll_ms : 0;
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
    hr_watch_logf(w, HR_LV_WARN, "%s (%ld: %s): this resource %s from now on", head, code, mq,
                  then);
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
static hr_status do_list(hr_watch *w, const atomic_bool *stop, long *retry_after, long *status,
                         hr_err *err)
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
            *status = res.status;
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
        hr_watch_logf(w, HR_LV_WARN, "no thread for the idle watchdog: stream without it");
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

/* A 404 (not served) or a 403 (not ours to read: an identity without the
 * permission) to a list or a watch of a resource that may be absent
 * (absent_poll_ms)? Either way none can be seen; the rest of the
 * controller must not wait on it. */
static bool absent_code(const hr_watch *w, long code)
{
    return w->absent_ms > 0 && (code == 404 || code == 403);
}

/* Did the last list find the resource absent? Then the next one is a look
 * again, not a relist (headroom_relists_total counts 410s and breaks). */
static bool absent_now(hr_watch *w)
{
    pthread_mutex_lock(&w->mu);
    bool a = w->stats.absent;
    pthread_mutex_unlock(&w->mu);
    return a;
}

/* The resource is not served: none exist. A complete, empty relist sweeps
 * what the sink held (a CRD removed hands back what its objects held), the
 * resource is synced, and the list is asked again after absent_ms. Logged
 * when it goes absent, not at every look. */
static void not_served(hr_watch *w, long code)
{
    pthread_mutex_lock(&w->mu);
    bool was = w->stats.absent, served = w->stats.synced && !was;
    pthread_mutex_unlock(&w->mu);
    /* An API server restarting answers 404 for a custom resource until its
     * CRD is loaded again: a kind that was served is asked once more,
     * absent_ms later, before what it held is swept (a CRD really removed
     * has deleted its objects first, each a DELETED event). */
    if (served && !w->doubt) {
        w->doubt = true;
        hr_watch_count(w, &w->stats.errors, 1);
        hr_watch_logf(w, HR_LV_WARN, "list answered %ld: asked again in %ld ms before taking none",
                      code, w->absent_ms);
        nap(w, w->absent_ms);
        return;
    }
    w->doubt = false;
    hr_watch_relist_begin(w);
    hr_watch_relist_end(w, true);
    pthread_mutex_lock(&w->mu);
    w->stats.absent = true;
    w->stats.synced = true;
    w->rv[0] = '\0';
    pthread_mutex_unlock(&w->mu);
    if (!was) {
        if (code == 403)
            hr_watch_logf(w, HR_LV_WARN,
                          "not allowed to list (403): none seen; grant list and watch to see "
                          "them; asking again every %ld ms",
                          w->absent_ms);
        else
            hr_watch_logf(w, HR_LV_INFO, "not served (404): none exist; asking again every %ld ms",
                          w->absent_ms);
        if (w->on_synced)
            w->on_synced(w->on_synced_ud);
    }
    nap(w, w->absent_ms);
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
            if (!first_list && !page_once && !absent_now(w))
                hr_watch_count(w, &w->stats.relists, 1);
            page_once = false;
            first_list = false;
            int64_t t0 = hr_mono_ms();
            w->pb_refused_now = false;
            long status = 0;
            hr_status st = do_list(w, stop, &retry_after, &status, &err);
            if (stopped(stop))
                break;
            if (st != HR_OK && absent_code(w, status)) {
                not_served(w, status); /* need_list stays: listed again when it is served */
                continue;
            }
            if (st != HR_OK && w->pb_refused_now) {
                hr_watch_count(w, &w->stats.errors, 1);
                continue; /* the same list again, in JSON, at once */
            }
            if (st != HR_OK) {
                hr_watch_count(w, &w->stats.errors, 1);
                long d = backoff(w, attempt++, retry_after);
                hr_watch_logf(w, HR_LV_WARN, "list failed, retry in %ld ms: %s", d, err.msg);
                nap(w, d);
                continue;
            }
            char rv[RV_MAX];
            hr_watch_get_rv(w, rv, sizeof rv);
            pthread_mutex_lock(&w->mu);
            uint64_t n = w->stats.listed;
            w->stats.synced = true;
            w->stats.absent = false;
            pthread_mutex_unlock(&w->mu);
            w->doubt = false;
            if (w->on_synced)
                w->on_synced(w->on_synced_ud);
            hr_watch_logf(w, HR_LV_INFO,
                          "listed at resourceVersion %s in %llu ms (%llu objects listed in all)",
                          rv, (unsigned long long)(hr_mono_ms() - t0), (unsigned long long)n);
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
            if (!first_list && !absent_now(w))
                hr_watch_count(w, &w->stats.relists, 1);
            first_list = false;
            w->initial = true;
            w->initial_n = 0;
            w->initial_t0 = hr_mono_ms();
            hr_watch_relist_begin(w);
        } else if (!first_watch) {
            hr_watch_count(w, &w->stats.reconnects, 1);
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
            hr_watch_count(w, &w->stats.listed, w->initial_n);
            hr_watch_relist_end(w, false);
        } else if (streaming) {
            need_list = false;
            attempt = 0;
        }
        if (stopped(stop))
            break;
        if (refused_protobuf(w, asked_pb, st, &res, err.msg)) {
            hr_watch_count(w, &w->stats.errors, 1);
            continue; /* the same request again, in JSON, at once */
        }
        if (cut_short && !atomic_load(&w->idle_fired)) {
            long code = st != HR_OK                     ? res.status
                        : w->line_result == HR_WL_ERROR ? (long)w->line_code
                                                        : 0;
            if (absent_code(w, code)) {
                not_served(w, code);
                continue;
            }
            if (refused_code(code)) {
                hr_watch_count(w, &w->stats.errors, 1);
                fall_back_to_pages(w, code, st != HR_OK ? err.msg : "an ERROR event");
                page_once = true;
                continue;
            }
            if (st == HR_OK && w->line_result == HR_WL_OK) {
                hr_watch_count(w, &w->stats.stream_cut, 1);
                hr_watch_logf(
                    w, HR_LV_WARN,
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
            hr_watch_count(w, &w->stats.errors, 1);
            long d = backoff(w, attempt++, 0);
            hr_watch_logf(w, HR_LV_WARN,
                          "watch silent for %ld ms, dropped; resume from %s in %ld ms", w->idle_ms,
                          rv, d);
            nap(w, d);
            continue;
        }
        /* (A streaming list reads the current state: a 410 there is a
         * failure like any other, retried after a back-off.) */
        /* A watch of a resource that is no longer served (its CRD removed):
         * list it, which finds it absent or served again. */
        if (!cut_short && st != HR_OK && absent_code(w, res.status)) {
            hr_watch_count(w, &w->stats.errors, 1);
            need_list = true;
            /* Its own count: the list after it resets attempt, and a server
             * that lists it and will not watch it must not be asked hot. */
            nap(w, backoff(w, w->watch_misses++, 0));
            continue;
        }
        if (!cut_short && (w->line_result == HR_WL_GONE || res.status == 410)) {
            if (res.status == 410)
                hr_watch_logf(w, HR_LV_INFO, "watch from %s refused with 410 Gone: relist", rv);
            need_list = true;
            continue;
        }
        bool clean = st == HR_OK && w->line_result == HR_WL_OK;
        /* A stream the server closes at once, with nothing in it, is a
         * failure in disguise: without this it would spin. */
        if (clean && (w->line_events > 0 || hr_mono_ms() - t0 >= 1000)) {
            attempt = 0;
            w->watch_misses = 0;
            continue;
        }
        hr_watch_count(w, &w->stats.errors, 1);
        long d = backoff(w, attempt++, res.retry_after_ms);
        char what[RV_MAX + 16];
        if (cut_short)
            snprintf(what, sizeof what, "streaming list");
        else
            snprintf(what, sizeof what, "watch from %s", rv);
        if (st != HR_OK)
            hr_watch_logf(w, HR_LV_WARN, "%s ended (status %ld), again in %ld ms: %s", what,
                          res.status, d, err.msg);
        else
            hr_watch_logf(w, HR_LV_WARN, "%s ended early, again in %ld ms", what, d);
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
