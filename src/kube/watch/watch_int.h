/*
 * watch_int.h — the state of one watch, shared by its loop (watch.c) and
 * what feeds its sink (watch_feed.c), and the three small helpers both
 * use: a log line, a counter, the resume point. PRIVATE to
 * src/kube/watch/; stats and rv are read by other threads under mu.
 */
#ifndef HR_KUBE_WATCH_INT_H
#define HR_KUBE_WATCH_INT_H

#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "kube/watch/watch_feed.h"
#include "kube/watch/wevent.h"
#include "util/prng.h"

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
    long absent_ms; /* hr_watch_opts.absent_poll_ms; 0: a 404 is a failure */
    /* (Loop thread only.) A kind that was served answered its list 404 or 403 once: the next
     * such answer, absent_ms later, makes it absent; a list that succeeds clears it. */
    bool doubt;
    int watch_misses; /* watches refused 404/403 since one delivered events: their back-off */
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

/* A logfmt line: resource=NAME msg="...". */
__attribute__((format(printf, 3, 4))) static inline void hr_watch_logf(hr_watch *w, int level,
                                                                       const char *fmt, ...)
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

static inline void hr_watch_count(hr_watch *w, uint64_t *field, uint64_t n)
{
    pthread_mutex_lock(&w->mu);
    *field += n;
    pthread_mutex_unlock(&w->mu);
}

static inline void hr_watch_set_rv(hr_watch *w, const char *rv, size_t len)
{
    pthread_mutex_lock(&w->mu);
    memcpy(w->rv, rv, len);
    w->rv[len] = '\0';
    pthread_mutex_unlock(&w->mu);
}

#endif
