/*
 * test_watch.c — the list/watch state machine, driven by a scripted
 * transport: event decoding (ADDED/MODIFIED/DELETED/BOOKMARK/ERROR),
 * malformed objects skipped with their name logged, pagination, resuming
 * from the last resourceVersion, relisting on 410 (as an ERROR event and as
 * an HTTP status) with the cache reconciled by difference; streaming lists
 * (sendInitialEvents, the initial-events-end bookmark ending the list, the
 * relist by difference over a stream, a stream cut before the bookmark
 * sweeping nothing) and the fallback to pages on a refusal, remembered;
 * a kind that may not be served (a CRD that comes and goes): its 404 is an
 * empty list, asked again.
 *
 * The script stands in for the network only; the real API server is
 * exercised by tests/integration/it_watch.c.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <cmocka.h>

#include "cache/cache.h"
#include "cache/sink.h"
#include "kube/watch/watch_feed.h"
#include "util/clock.h"

/* ------------------------------------------------------------ script */

typedef struct step {
    int kind;         /* 'G' a GET (list page), 'S' a stream, 'H' a stream that then hangs,
               * 'B' a stream that then breaks (connection reset after its lines) */
    long status;      /* HTTP status; 0 = transport failure */
    const char *body; /* G: the page; S: lines separated by '\n' */
} step;

typedef struct script {
    const step *steps;
    size_t n, at;
    char paths[32][512];
    size_t n_paths;
    atomic_bool *stop;
    char log[8192];
    int64_t hang_ms;  /* how long the last 'H' stream hung */
    hr_watch **watch; /* the watch it serves (fx_init) */
    int synced_calls; /* hr_watch_opts.on_synced, each seeing stats.synced already set */
} script;

static void record(script *s, const char *path)
{
    if (s->n_paths < 32)
        snprintf(s->paths[s->n_paths++], 512, "%s", path);
}

static hr_status fake_get(void *ud, const char *path, hr_buf *resp, hr_kresult *res, hr_err *err)
{
    script *s = ud;
    record(s, path);
    if (s->at >= s->n || s->steps[s->at].kind != 'G')
        fail_msg("unexpected GET %s at step %zu", path, s->at);
    const step *st = &s->steps[s->at++];
    res->status = st->status;
    res->retry_after_ms = 0;
    if (st->status / 100 != 2)
        return hr_err_set(err, HR_E_IO, "HTTP %ld", st->status);
    hr_buf_puts(resp, st->body);
    return HR_OK;
}

static hr_status fake_stream(void *ud, const char *path, long timeout_s, hr_kline_fn on_line,
                             void *line_ud, const atomic_bool *stop, hr_kresult *res, hr_err *err)
{
    script *s = ud;
    record(s, path);
    if (s->at >= s->n) {
        /* Script done: shut the watch down. */
        atomic_store(s->stop, true);
        res->status = 0;
        return hr_err_set(err, HR_E_IO, "stopped");
    }
    if (!strchr("SHB", s->steps[s->at].kind))
        fail_msg("unexpected stream %s at step %zu", path, s->at);
    const step *st = &s->steps[s->at++];
    res->status = st->status;
    if (st->status / 100 != 2)
        return hr_err_set(err, HR_E_IO, "HTTP %ld", st->status);
    const char *p = st->body;
    while (*p) {
        const char *nl = strchr(p, '\n');
        size_t len = nl ? (size_t)(nl - p) : strlen(p);
        if (on_line(line_ud, p, len))
            return HR_OK;
        p += len + (nl ? 1 : 0);
    }
    if (st->kind == 'B')
        return hr_err_set(err, HR_E_IO, "connection reset");
    if (st->kind == 'H') {
        /* A live but silent server: nothing more until the stream's stop
         * (the client's contract: polled, then HR_OK); 5 s is a hang. */
        int64_t t0 = hr_mono_ms();
        while (!atomic_load(stop)) {
            if (hr_mono_ms() - t0 > 5000)
                fail_msg("silent stream was never dropped");
            hr_mono_sleep_ms(5);
        }
        s->hang_ms = hr_mono_ms() - t0;
    }
    return HR_OK;
}

static void count_synced(void *ud)
{
    script *s = ud;
    hr_watch_stats st;
    hr_watch_get_stats(*s->watch, &st);
    if (!st.synced)
        fail_msg("on_synced called before stats.synced is set");
    s->synced_calls++;
}

static long no_backoff(int attempt, long base, long max, long ra)
{
    (void)attempt;
    (void)base;
    (void)max;
    (void)ra;
    return 0;
}

static void capture_log(void *ud, int level, const char *msg)
{
    script *s = ud;
    (void)level;
    size_t l = strlen(s->log);
    snprintf(s->log + l, sizeof s->log - l, "%s\n", msg);
}

/* ------------------------------------------------------- fixtures */

typedef struct fx {
    hr_cache *c;
    hr_csink *sink;
    hr_watch *w;
    script sc;
    atomic_bool stop;
    hr_cpod_scratch *scr;
} fx;

static long g_idle_ms;   /* hr_watch_opts.idle_timeout_ms of the next fx_init */
static bool g_streaming; /* the next fx_init streams its lists (else paged_lists) */
static long g_absent_ms; /* hr_watch_opts.absent_poll_ms of the next fx_init */

static void fx_init(fx *f, const step *steps, size_t n)
{
    memset(f, 0, sizeof *f);
    hr_err err;
    assert_int_equal(hr_cache_new(&f->c, &err), HR_OK);
    assert_int_equal(hr_csink_new(f->c, HR_CK_POD, &f->sink, &err), HR_OK);
    f->sc.steps = steps;
    f->sc.n = n;
    f->sc.stop = &f->stop;
    f->sc.watch = &f->w;
    hr_watch_opts o = {
        .resource = "pods",
        .path = "/api/v1/pods",
        .sink = hr_csink_wsink(f->sink),
        .transport = {&f->sc, fake_get, fake_stream, no_backoff, false, NULL, NULL, NULL},
        .timeout_min_s = 300,
        .timeout_max_s = 300,
        .log = capture_log,
        .log_ud = &f->sc,
        .seed = 42,
        .idle_timeout_ms = g_idle_ms,
        .paged_lists = !g_streaming,
        .on_synced = count_synced,
        .on_synced_ud = &f->sc,
        .absent_poll_ms = g_absent_ms,
    };
    assert_int_equal(hr_watch_new(&o, &f->w, &err), HR_OK);
    f->scr = malloc(sizeof *f->scr);
}

static void fx_done(fx *f)
{
    hr_watch_free(f->w);
    hr_csink_free(f->sink);
    hr_cache_free(f->c);
    free(f->scr);
}

static bool has_pod(fx *f, const char *ns, const char *name, int64_t req)
{
    hr_cpod_view v;
    hr_cache_lock(f->c);
    bool ok = hr_cache_pod_get(f->c, ns, name, &v, f->scr);
    if (ok && req >= 0)
        ok = v.pod.n_ctr == 1 && v.pod.ctr[0].cpu_req == req;
    hr_cache_unlock(f->c);
    return ok;
}

static size_t pod_count(fx *f)
{
    hr_cache_stats s;
    hr_cache_lock(f->c);
    hr_cache_get_stats(f->c, &s);
    hr_cache_unlock(f->c);
    return s.pods;
}

#define POD(name, cpu, rv)                                                                \
    "{\"metadata\":{\"namespace\":\"ns\",\"name\":\"" name "\",\"resourceVersion\":\"" rv \
    "\"},\"spec\":{\"nodeName\":\"n1\","                                                  \
    "\"containers\":[{\"name\":\"c\",\"resources\":{\"requests\":{\"cpu\":\"" cpu         \
    "\"}}}]},\"status\":{\"phase\":\"Running\"}}"
#define EV(type, obj) "{\"type\":\"" type "\",\"object\":" obj "}"
#define LIST(rv, cont, items)                                                                 \
    "{\"kind\":\"PodList\",\"metadata\":{\"resourceVersion\":\"" rv "\",\"continue\":\"" cont \
    "\"},\"items\":[" items "]}"

#define STREAM_LIST                                                                 \
    "/api/v1/pods?watch=1&sendInitialEvents=true&resourceVersionMatch=NotOlderThan" \
    "&allowWatchBookmarks=true&timeoutSeconds=300"
/* The bookmark that ends a streaming list's initial events, and one that
 * does not (the API server's periodic kind). */
#define END_BM(rv)                                                             \
    EV("BOOKMARK", "{\"kind\":\"Pod\",\"metadata\":{\"resourceVersion\":\"" rv \
                   "\",\"annotations\":{\"k8s.io/initial-events-end\":\"true\"}}}")
#define BM(rv) EV("BOOKMARK", "{\"kind\":\"Pod\",\"metadata\":{\"resourceVersion\":\"" rv "\"}}")
#define REFUSAL                                                                                 \
    "{\"kind\":\"Status\",\"code\":422,\"reason\":\"Invalid\",\"message\":\"sendInitialEvents " \
    "is forbidden for watch unless the WatchList feature gate is enabled\"}"

static uint64_t pod_changes(fx *f)
{
    hr_cache_stats cs;
    hr_cache_lock(f->c);
    hr_cache_get_stats(f->c, &cs);
    hr_cache_unlock(f->c);
    return cs.changes[HR_CK_POD];
}

/* ------------------------------------------------------------ lines */

static void test_event_types(void **state)
{
    (void)state;
    fx f;
    fx_init(&f, NULL, 0);
    char rv[64];
    assert_int_equal(hr_watch_feed_line(f.w, EV("ADDED", POD("a", "100m", "5")),
                                        strlen(EV("ADDED", POD("a", "100m", "5")))),
                     HR_WL_OK);
    assert_true(has_pod(&f, "ns", "a", 100));
    hr_watch_get_rv(f.w, rv, sizeof rv);
    assert_string_equal(rv, "5");
    const char *mod = EV("MODIFIED", POD("a", "200m", "6")) "\r";
    assert_int_equal(hr_watch_feed_line(f.w, mod, strlen(mod)), HR_WL_OK);
    assert_true(has_pod(&f, "ns", "a", 200));
    const char *bm = EV("BOOKMARK", "{\"kind\":\"Pod\",\"metadata\":{\"resourceVersion\":\"90\"}}");
    assert_int_equal(hr_watch_feed_line(f.w, bm, strlen(bm)), HR_WL_OK);
    hr_watch_get_rv(f.w, rv, sizeof rv);
    assert_string_equal(rv, "90");
    /* a DELETED needs only the name, even if the body would not decode */
    const char *del = EV("DELETED", "{\"metadata\":{\"namespace\":\"ns\",\"name\":\"a\","
                                    "\"resourceVersion\":\"91\"},\"spec\":7}");
    assert_int_equal(hr_watch_feed_line(f.w, del, strlen(del)), HR_WL_OK);
    assert_false(has_pod(&f, "ns", "a", -1));
    hr_watch_get_rv(f.w, rv, sizeof rv);
    assert_string_equal(rv, "91");
    assert_int_equal(hr_watch_feed_line(f.w, "", 0), HR_WL_OK);
    hr_watch_stats st;
    hr_watch_get_stats(f.w, &st);
    assert_int_equal(st.events, 4);
    assert_int_equal(st.malformed, 0);
    fx_done(&f);
}

static void test_error_events(void **state)
{
    (void)state;
    fx f;
    fx_init(&f, NULL, 0);
    const char *gone = EV("ERROR", "{\"kind\":\"Status\",\"status\":\"Failure\","
                                   "\"message\":\"too old resource version: 5 (90)\","
                                   "\"reason\":\"Expired\",\"code\":410}");
    assert_int_equal(hr_watch_feed_line(f.w, gone, strlen(gone)), HR_WL_GONE);
    const char *other = EV("ERROR", "{\"kind\":\"Status\",\"code\":500,\"message\":\"etcd\"}");
    assert_int_equal(hr_watch_feed_line(f.w, other, strlen(other)), HR_WL_ERROR);
    fx_done(&f);
}

static void test_malformed_skipped(void **state)
{
    (void)state;
    fx f;
    fx_init(&f, NULL, 0);
    const char *bad = EV("ADDED", POD("bad-cpu", "1x", "7"));
    assert_int_equal(hr_watch_feed_line(f.w, bad, strlen(bad)), HR_WL_OK);
    /* never dropped: kept as undecodable, no containers (design §15) */
    assert_true(has_pod(&f, "ns", "bad-cpu", -1));
    assert_false(has_pod(&f, "ns", "bad-cpu", 0));
    /* the log names the object and the field, once */
    assert_non_null(strstr(f.sc.log, "ns/bad-cpu"));
    assert_non_null(strstr(f.sc.log, "requests.cpu"));
    assert_non_null(strstr(f.sc.log, "kept as undecodable"));
    size_t log_len = strlen(f.sc.log);
    const char *again = EV("MODIFIED", POD("bad-cpu", "1x", "7"));
    assert_int_equal(hr_watch_feed_line(f.w, again, strlen(again)), HR_WL_OK);
    assert_int_equal(strlen(f.sc.log), log_len);
    /* the resourceVersion still moves past it: it is never re-read */
    char rv[64];
    hr_watch_get_rv(f.w, rv, sizeof rv);
    assert_string_equal(rv, "7");
    /* and the next event is handled */
    const char *good = EV("ADDED", POD("good", "10m", "8"));
    assert_int_equal(hr_watch_feed_line(f.w, good, strlen(good)), HR_WL_OK);
    assert_true(has_pod(&f, "ns", "good", 10));
    /* lines that are not events make the stream suspect: reconnect */
    assert_int_equal(hr_watch_feed_line(f.w, "{\"type\":\"ADDED\"", 15), HR_WL_BAD);
    assert_int_equal(hr_watch_feed_line(f.w, "[1,2]", 5), HR_WL_BAD);
    assert_int_equal(hr_watch_feed_line(f.w, "{\"type\":3,\"object\":{}}", 22), HR_WL_BAD);
    const char *unk = EV("WHATEVER", "{}");
    assert_int_equal(hr_watch_feed_line(f.w, unk, strlen(unk)), HR_WL_OK);
    hr_watch_stats st;
    hr_watch_get_stats(f.w, &st);
    assert_int_equal(st.malformed, 5); /* the repeat of bad-cpu is not news */
    fx_done(&f);
}

/* ------------------------------------------------------------ loop */

static void test_list_watch_resume(void **state)
{
    (void)state;
    static const step steps[] = {
        {'G', 200, LIST("100", "tok+/=", POD("a", "100m", "10") "," POD("b", "100m", "11"))},
        {'G', 200, LIST("100", "", POD("c", "100m", "12"))},
        /* the stream ends cleanly after two events (server timeout) */
        {'S', 200,
         EV("ADDED", POD("d", "100m", "101")) "\n" EV(
             "BOOKMARK", "{\"metadata\":{\"resourceVersion\":\"150\"}}") "\n"},
        /* a connection failure: resume from 150 after back-off */
        {'S', 0, ""},
        {'S', 503, ""},
        {'S', 200, EV("DELETED", POD("a", "100m", "151")) "\n"},
    };
    fx f;
    fx_init(&f, steps, sizeof steps / sizeof steps[0]);
    assert_int_equal(hr_watch_run(f.w, &f.stop), HR_OK);
    assert_true(f.sc.n_paths >= 6);
    assert_string_equal(f.sc.paths[0], "/api/v1/pods?limit=500");
    assert_string_equal(f.sc.paths[1], "/api/v1/pods?limit=500&continue=tok%2B%2F%3D");
    assert_string_equal(f.sc.paths[2],
                        "/api/v1/pods?watch=1&allowWatchBookmarks=true&timeoutSeconds=300"
                        "&resourceVersion=100");
    assert_non_null(strstr(f.sc.paths[3], "&resourceVersion=150"));
    assert_non_null(strstr(f.sc.paths[4], "&resourceVersion=150"));
    assert_non_null(strstr(f.sc.paths[5], "&resourceVersion=150"));
    assert_non_null(strstr(f.sc.paths[6], "&resourceVersion=151"));
    assert_false(has_pod(&f, "ns", "a", -1));
    assert_true(has_pod(&f, "ns", "b", 100));
    assert_true(has_pod(&f, "ns", "c", 100));
    assert_true(has_pod(&f, "ns", "d", 100));
    hr_watch_stats st;
    hr_watch_get_stats(f.w, &st);
    assert_true(st.synced);
    assert_int_equal(f.sc.synced_calls, 1); /* the one complete list by pages */
    assert_int_equal(st.listed, 3);
    assert_int_equal(st.relists, 0);
    assert_int_equal(st.errors, 2);
    fx_done(&f);
}

/* design §5: a stream that goes silent (no line, not even a bookmark) is
 * dropped after the idle timeout and resumed from the last resourceVersion. */
static void test_silent_stream_dropped(void **state)
{
    (void)state;
    static const step steps[] = {
        {'G', 200, LIST("100", "", POD("a", "100m", "10"))},
        {'H', 200, EV("ADDED", POD("d", "100m", "101")) "\n"},
        {'S', 200, EV("DELETED", POD("a", "100m", "102")) "\n"},
    };
    fx f;
    g_idle_ms = 200;
    fx_init(&f, steps, sizeof steps / sizeof steps[0]);
    g_idle_ms = 0;
    int64_t t0 = hr_mono_ms();
    assert_int_equal(hr_watch_run(f.w, &f.stop), HR_OK);
    int64_t took = hr_mono_ms() - t0;
    assert_true(f.sc.n_paths >= 3);
    assert_non_null(strstr(f.sc.paths[1], "allowWatchBookmarks=true"));
    assert_non_null(strstr(f.sc.paths[1], "&resourceVersion=100"));
    assert_non_null(strstr(f.sc.paths[2], "&resourceVersion=101"));
    if (f.sc.hang_ms < 150 || f.sc.hang_ms > 1000 || took > 2000)
        fail_msg("silent stream hung %lld ms (idle 200 ms), run took %lld ms",
                 (long long)f.sc.hang_ms, (long long)took);
    assert_true(has_pod(&f, "ns", "d", 100));
    assert_false(has_pod(&f, "ns", "a", -1));
    assert_non_null(strstr(f.sc.log, "silent"));
    hr_watch_stats st;
    hr_watch_get_stats(f.w, &st);
    assert_int_equal(st.reconnects, 2);
    fx_done(&f);
}

static void test_gone_relists_by_difference(void **state)
{
    (void)state;
    static const step steps[] = {
        {'G', 200,
         LIST("100", "",
              POD("a", "100m", "10") "," POD("b", "100m", "11") "," POD("c", "100m", "12"))},
        {'S', 200,
         EV("MODIFIED", POD("b", "300m", "120")) "\n" EV(
             "ERROR",
             "{\"kind\":\"Status\",\"code\":410,\"reason\":\"Expired\"}") "\n" EV("ADDED",
                                                                                  POD("never", "1m",
                                                                                      "121")) "\n"},
        /* while we were away: a deleted, c changed, e added */
        {'G', 200,
         LIST("200", "",
              POD("b", "300m", "120") "," POD("c", "50m", "180") "," POD("e", "100m", "190"))},
        /* the watch itself can be refused with 410 too */
        {'S', 410, ""},
        {'G', 200, LIST("300", "", POD("b", "300m", "120") "," POD("e", "100m", "190"))},
    };
    fx f;
    fx_init(&f, steps, sizeof steps / sizeof steps[0]);
    assert_int_equal(hr_watch_run(f.w, &f.stop), HR_OK);
    /* the event after the ERROR was never applied */
    assert_false(has_pod(&f, "ns", "never", -1));
    assert_false(has_pod(&f, "ns", "a", -1));
    assert_true(has_pod(&f, "ns", "b", 300));
    assert_false(has_pod(&f, "ns", "c", -1));
    assert_true(has_pod(&f, "ns", "e", 100));
    assert_int_equal(pod_count(&f), 2);
    hr_cache_stats cs;
    hr_cache_lock(f.c);
    hr_cache_get_stats(f.c, &cs);
    hr_cache_unlock(f.c);
    /* adds a,b,c,e; updates b,c; deletes a (relist 1) and c (relist 2):
     * nothing twice */
    assert_int_equal(cs.changes[HR_CK_POD], 8);
    hr_watch_stats st;
    hr_watch_get_stats(f.w, &st);
    assert_int_equal(st.relists, 2);
    assert_non_null(strstr(f.sc.paths[5], "&resourceVersion=300"));
    fx_done(&f);
}

static void test_failed_list_is_not_swept(void **state)
{
    (void)state;
    static const step steps[] = {
        {'G', 200, LIST("100", "", POD("a", "100m", "10") "," POD("b", "100m", "11"))},
        {'S', 410, ""},
        /* page one arrives, page two fails (expired continue token): the
         * half-seen relist must not delete b */
        {'G', 200, LIST("200", "next", POD("a", "100m", "10"))},
        {'G', 410, ""},
        {'G', 200, LIST("300", "", POD("a", "100m", "10") "," POD("b", "100m", "11"))},
    };
    fx f;
    fx_init(&f, steps, sizeof steps / sizeof steps[0]);
    assert_int_equal(hr_watch_run(f.w, &f.stop), HR_OK);
    assert_true(has_pod(&f, "ns", "a", 100));
    assert_true(has_pod(&f, "ns", "b", 100));
    hr_cache_stats cs;
    hr_cache_lock(f.c);
    hr_cache_get_stats(f.c, &cs);
    hr_cache_unlock(f.c);
    assert_int_equal(cs.changes[HR_CK_POD], 2); /* the two adds, nothing else */
    /* the retried list starts from the first page */
    assert_string_equal(f.sc.paths[4], "/api/v1/pods?limit=500");
    fx_done(&f);
}

/* ------------------------------------------------------ streaming lists */

/* The list is one watch with sendInitialEvents and no resourceVersion; the
 * resource is synced at the initial-events-end bookmark, whose
 * resourceVersion (not the last object's) is where the watch resumes. */
static void test_streaming_list(void **state)
{
    (void)state;
    static const step steps[] = {
        {'S', 200,
         EV("ADDED", POD("a", "100m", "10")) "\n" EV("ADDED", POD("b", "100m", "12")) "\n" BM(
             "50") "\n" EV("ADDED",
                           POD("c", "100m", "11")) "\n" END_BM("100") "\n" EV("MODIFIED",
                                                                              POD("b", "300m",
                                                                                  "120")) "\n"},
        {'S', 200, EV("DELETED", POD("a", "100m", "130")) "\n"},
    };
    fx f;
    g_streaming = true;
    fx_init(&f, steps, sizeof steps / sizeof steps[0]);
    g_streaming = false;
    assert_int_equal(hr_watch_run(f.w, &f.stop), HR_OK);
    assert_true(f.sc.n_paths >= 3);
    assert_string_equal(f.sc.paths[0], STREAM_LIST);
    assert_string_equal(f.sc.paths[1],
                        "/api/v1/pods?watch=1&allowWatchBookmarks=true&timeoutSeconds=300"
                        "&resourceVersion=120");
    assert_non_null(strstr(f.sc.paths[2], "&resourceVersion=130"));
    assert_false(has_pod(&f, "ns", "a", -1));
    assert_true(has_pod(&f, "ns", "b", 300));
    assert_true(has_pod(&f, "ns", "c", 100));
    hr_watch_stats st;
    hr_watch_get_stats(f.w, &st);
    assert_true(st.synced);
    assert_int_equal(f.sc.synced_calls, 1); /* the one streaming list */
    assert_false(st.paged);
    assert_int_equal(st.streamed, 1);
    assert_int_equal(st.listed, 3);
    assert_int_equal(st.relists, 0);
    assert_int_equal(st.errors, 0);
    assert_non_null(strstr(f.sc.log, "listed at resourceVersion 100"));
    fx_done(&f);
}

/* A stream that breaks before the initial-events-end bookmark is not a
 * list: nothing synced, nothing swept, the resume point untouched. */
static void test_streaming_list_cut_short(void **state)
{
    (void)state;
    static const step steps[] = {
        {'B', 200, EV("ADDED", POD("a", "100m", "10")) "\n" BM("50") "\n"},
    };
    fx f;
    g_streaming = true;
    fx_init(&f, steps, sizeof steps / sizeof steps[0]);
    g_streaming = false;
    assert_int_equal(hr_watch_run(f.w, &f.stop), HR_OK);
    /* broken, then the script ends on the retry: a streaming list again */
    assert_int_equal(f.sc.n_paths, 2);
    assert_string_equal(f.sc.paths[1], STREAM_LIST);
    hr_watch_stats st;
    hr_watch_get_stats(f.w, &st);
    assert_false(st.synced);
    assert_int_equal(st.streamed, 0);
    char rv[64];
    hr_watch_get_rv(f.w, rv, sizeof rv);
    assert_string_equal(rv, "");
    fx_done(&f);
}

/* 410 relists by a streaming list too, by difference: what the initial
 * events did not show is deleted at their bookmark (even when the stream
 * breaks right after it), and a relist cut short deletes nothing. */
static void test_streaming_relist_by_difference(void **state)
{
    (void)state;
    static const step steps[] = {
        {'S', 200,
         EV("ADDED", POD("a", "100m", "10")) "\n" EV("ADDED", POD("b", "100m", "11")) "\n" EV(
             "ADDED",
             POD("c", "100m", "12")) "\n" END_BM("100") "\n" EV("ERROR",
                                                                "{\"kind\":\"Status\",\"code\":410,"
                                                                "\"reason\":\"Expired\"}") "\n"},
        /* the relist breaks after b: a and c must survive it */
        {'B', 200, EV("ADDED", POD("b", "100m", "11")) "\n"},
        /* while we were away: a deleted, c changed, e added */
        {'B', 200,
         EV("ADDED", POD("b", "100m", "11")) "\n" EV("ADDED", POD("c", "50m", "180")) "\n" EV(
             "ADDED", POD("e", "100m", "190")) "\n" END_BM("200") "\n"},
        {'S', 200, EV("ADDED", POD("f", "100m", "201")) "\n"},
    };
    fx f;
    g_streaming = true;
    fx_init(&f, steps, sizeof steps / sizeof steps[0]);
    g_streaming = false;
    assert_int_equal(hr_watch_run(f.w, &f.stop), HR_OK);
    assert_true(f.sc.n_paths >= 4);
    assert_string_equal(f.sc.paths[1], STREAM_LIST);
    assert_string_equal(f.sc.paths[2], STREAM_LIST);
    assert_non_null(strstr(f.sc.paths[3], "&resourceVersion=200"));
    assert_null(strstr(f.sc.paths[3], "sendInitialEvents"));
    assert_false(has_pod(&f, "ns", "a", -1));
    assert_true(has_pod(&f, "ns", "b", 100));
    assert_true(has_pod(&f, "ns", "c", 50));
    assert_true(has_pod(&f, "ns", "e", 100));
    assert_true(has_pod(&f, "ns", "f", 100));
    assert_int_equal(pod_count(&f), 4);
    /* adds a,b,c,e,f; updates c; deletes a: nothing twice */
    assert_int_equal(pod_changes(&f), 7);
    hr_watch_stats st;
    hr_watch_get_stats(f.w, &st);
    assert_int_equal(st.relists, 2);
    assert_int_equal(st.streamed, 2);
    assert_false(st.paged);
    fx_done(&f);
}

/* A refusal (422, as kube-apiserver with WatchList=false answers) falls
 * back to pages at once and is remembered: the 410 relist is pages too. */
static void test_refusal_falls_back_to_pages(void **state)
{
    (void)state;
    static const step steps[] = {
        {'S', 422, ""},
        {'G', 200, LIST("100", "", POD("a", "100m", "10") "," POD("b", "100m", "11"))},
        {'S', 200, EV("ERROR", "{\"kind\":\"Status\",\"code\":410,\"reason\":\"Expired\"}") "\n"},
        {'G', 200, LIST("200", "", POD("b", "100m", "11"))},
    };
    fx f;
    g_streaming = true;
    fx_init(&f, steps, sizeof steps / sizeof steps[0]);
    g_streaming = false;
    assert_int_equal(hr_watch_run(f.w, &f.stop), HR_OK);
    assert_int_equal(f.sc.n_paths, 5);
    assert_string_equal(f.sc.paths[0], STREAM_LIST);
    assert_string_equal(f.sc.paths[1], "/api/v1/pods?limit=500");
    assert_non_null(strstr(f.sc.paths[2], "&resourceVersion=100"));
    assert_string_equal(f.sc.paths[3], "/api/v1/pods?limit=500");
    assert_non_null(strstr(f.sc.paths[4], "&resourceVersion=200"));
    assert_false(has_pod(&f, "ns", "a", -1));
    assert_true(has_pod(&f, "ns", "b", 100));
    hr_watch_stats st;
    hr_watch_get_stats(f.w, &st);
    assert_true(st.synced);
    assert_true(st.paged);
    assert_int_equal(st.streamed, 0);
    assert_int_equal(st.relists, 1); /* the 410's; the pages after the refusal are the same list */
    assert_non_null(strstr(f.sc.log, "refused a streaming list (422"));
    fx_done(&f);
}

/* The refusal as an ERROR event on the stream, and 400: the same. */
static void test_refusal_as_event(void **state)
{
    (void)state;
    static const step steps[] = {
        {'S', 200, EV("ERROR", REFUSAL) "\n"},
        {'G', 200, LIST("100", "", POD("a", "100m", "10"))},
    };
    static const step steps400[] = {
        {'S', 400, ""},
        {'G', 200, LIST("100", "", POD("a", "100m", "10"))},
    };
    for (int i = 0; i < 2; i++) {
        fx f;
        g_streaming = true;
        fx_init(&f, i ? steps400 : steps, 2);
        g_streaming = false;
        assert_int_equal(hr_watch_run(f.w, &f.stop), HR_OK);
        assert_int_equal(f.sc.n_paths, 3);
        assert_string_equal(f.sc.paths[1], "/api/v1/pods?limit=500");
        assert_true(has_pod(&f, "ns", "a", 100));
        hr_watch_stats st;
        hr_watch_get_stats(f.w, &st);
        assert_true(st.paged);
        fx_done(&f);
    }
}

/* Failures that are not refusals (overload, the server starting, a
 * reset) retry the streaming list; a stream closed cleanly before its
 * bookmark has that one list made by pages, not remembered. */
static void test_not_refusals(void **state)
{
    (void)state;
    static const step steps[] = {
        {'S', 429, ""},
        {'S', 503, ""},
        {'S', 0, ""},
        {'S', 410, ""},
        {'S', 200, EV("ADDED", POD("a", "100m", "10")) "\n"},
        {'G', 200, LIST("100", "", POD("a", "100m", "10"))},
        {'S', 410, ""},
        {'S', 200, EV("ADDED", POD("a", "100m", "10")) "\n" END_BM("300") "\n"},
    };
    fx f;
    g_streaming = true;
    fx_init(&f, steps, sizeof steps / sizeof steps[0]);
    g_streaming = false;
    assert_int_equal(hr_watch_run(f.w, &f.stop), HR_OK);
    assert_int_equal(f.sc.n_paths, 9);
    for (int i = 0; i < 5; i++)
        assert_string_equal(f.sc.paths[i], STREAM_LIST);
    assert_string_equal(f.sc.paths[5], "/api/v1/pods?limit=500");
    assert_non_null(strstr(f.sc.paths[6], "&resourceVersion=100"));
    assert_string_equal(f.sc.paths[7], STREAM_LIST);
    assert_non_null(strstr(f.sc.paths[8], "&resourceVersion=300"));
    hr_watch_stats st;
    hr_watch_get_stats(f.w, &st);
    assert_false(st.paged);
    assert_int_equal(st.streamed, 1);
    assert_non_null(strstr(f.sc.log, "without its initial-events-end bookmark"));
    fx_done(&f);
}

/* ------------------------------------------------ a kind that comes and goes */

static size_t count_of(const char *hay, const char *needle)
{
    size_t n = 0;
    for (const char *p = strstr(hay, needle); p != NULL; p = strstr(p + 1, needle))
        n++;
    return n;
}

/* A kind that may not be served (its CRD not installed: absent_poll_ms):
 * a 404 to its list is "none exist" — synced, nothing held, one log line
 * when it goes absent, and the list asked again; once served it is listed
 * and watched; a 404 to the watch (the CRD removed) lists again, and the
 * list's 404 sweeps what the sink held. */
static void test_absent_kind(void **state)
{
    (void)state;
    static const step steps[] = {
        {'G', 404, ""},
        {'G', 404, ""},
        {'G', 200, LIST("100", "", POD("a", "100m", "10"))},
        {'S', 404, ""},
        {'G', 404, ""},
        {'G', 404, ""},
        {'G', 200, LIST("300", "", POD("b", "100m", "11"))},
    };
    fx f;
    g_absent_ms = 1;
    fx_init(&f, steps, sizeof steps / sizeof steps[0]);
    g_absent_ms = 0;
    assert_int_equal(hr_watch_run(f.w, &f.stop), HR_OK);
    assert_int_equal(f.sc.n_paths, 8);
    for (int i = 0; i < 3; i++)
        assert_string_equal(f.sc.paths[i], "/api/v1/pods?limit=500");
    assert_non_null(strstr(f.sc.paths[3], "&resourceVersion=100"));
    for (int i = 4; i < 7; i++)
        assert_string_equal(f.sc.paths[i], "/api/v1/pods?limit=500");
    assert_non_null(strstr(f.sc.paths[7], "&resourceVersion=300"));
    /* a came with the first list and went with the second 404 after it
     * was served (the first is doubted: asked again) */
    assert_false(has_pod(&f, "ns", "a", -1));
    assert_true(has_pod(&f, "ns", "b", 100));
    assert_int_equal(pod_changes(&f), 3); /* a added, a swept, b added */
    hr_watch_stats st;
    hr_watch_get_stats(f.w, &st);
    assert_true(st.synced);
    assert_false(st.absent);
    assert_int_equal(st.errors, 2);  /* the watch's 404, the doubted list's */
    assert_int_equal(st.relists, 2); /* the lists after those; looks again are not */
    assert_int_equal(count_of(f.sc.log, "list answered 404: asked again"), 1);
    /* synced at the first 404, at the list, at the 404 after it, at the last list */
    assert_int_equal(f.sc.synced_calls, 4);
    assert_int_equal(count_of(f.sc.log, "not served (404)"), 2); /* once per absence */
    assert_null(strstr(f.sc.log, "list failed"));
    fx_done(&f);
}

/* The same over streaming lists: served, then removed (the watch's 404,
 * the list's 404 sweeps a and the kind is synced and absent), and absent
 * first, then served. */
static void test_absent_kind_streaming(void **state)
{
    (void)state;
    static const step gone[] = {
        {'S', 200, EV("ADDED", POD("a", "100m", "10")) "\n" END_BM("100") "\n"},
        {'S', 404, ""},
        {'S', 404, ""},
        {'S', 404, ""},
    };
    static const step steps[] = {
        {'S', 404, ""},
        {'S', 200, EV("ADDED", POD("a", "100m", "10")) "\n" END_BM("100") "\n"},
    };
    fx f;
    g_absent_ms = 1;
    g_streaming = true;
    fx_init(&f, gone, 4);
    assert_int_equal(hr_watch_run(f.w, &f.stop), HR_OK);
    assert_non_null(strstr(f.sc.paths[1], "&resourceVersion=100"));
    assert_string_equal(f.sc.paths[2], STREAM_LIST);
    assert_string_equal(f.sc.paths[3], STREAM_LIST);
    assert_false(has_pod(&f, "ns", "a", -1));
    assert_int_equal(pod_changes(&f), 2); /* a added, a swept */
    hr_watch_stats st;
    hr_watch_get_stats(f.w, &st);
    assert_true(st.synced);
    assert_true(st.absent);
    assert_int_equal(st.errors, 2); /* the watch's 404, the doubted list's */
    assert_int_equal(f.sc.synced_calls, 2);
    fx_done(&f);

    fx_init(&f, steps, 2);
    g_absent_ms = 0;
    g_streaming = false;
    assert_int_equal(hr_watch_run(f.w, &f.stop), HR_OK);
    assert_string_equal(f.sc.paths[1], STREAM_LIST);
    assert_true(has_pod(&f, "ns", "a", 100));
    hr_watch_get_stats(f.w, &st);
    assert_true(st.synced);
    assert_false(st.absent);
    assert_int_equal(st.streamed, 1);
    fx_done(&f);
}

/* A kind that was served and answers one list 404 (an API server
 * restarting serves custom resources once its CRDs are loaded again) keeps
 * what it holds: asked again, served, nothing swept. A 403 (an identity
 * without the permission) is absent too, said as a warning. */
static void test_absent_doubted_and_forbidden(void **state)
{
    (void)state;
    static const step blip[] = {
        {'G', 200, LIST("100", "", POD("a", "100m", "10"))},
        {'S', 404, ""},
        {'G', 404, ""},
        {'G', 200, LIST("200", "", POD("a", "100m", "10"))},
    };
    static const step forbidden[] = {
        {'G', 403, ""},
        {'G', 403, ""},
        {'G', 200, LIST("100", "", POD("a", "100m", "10"))},
    };
    fx f;
    g_absent_ms = 1;
    fx_init(&f, blip, 4);
    assert_int_equal(hr_watch_run(f.w, &f.stop), HR_OK);
    assert_true(has_pod(&f, "ns", "a", 100));
    assert_int_equal(pod_changes(&f), 1); /* a added, never swept */
    hr_watch_stats st;
    hr_watch_get_stats(f.w, &st);
    assert_false(st.absent);
    assert_null(strstr(f.sc.log, "not served"));
    assert_non_null(strstr(f.sc.log, "list answered 404: asked again"));
    fx_done(&f);

    fx_init(&f, forbidden, 3);
    g_absent_ms = 0;
    assert_int_equal(hr_watch_run(f.w, &f.stop), HR_OK);
    assert_int_equal(f.sc.synced_calls, 2); /* the first 403, then the list */
    assert_int_equal(count_of(f.sc.log, "not allowed to list (403)"), 1);
    assert_true(has_pod(&f, "ns", "a", 100));
    fx_done(&f);
}

/* Without absent_poll_ms a 404 is a failure like any other: retried,
 * never synced by it. */
static void test_404_is_a_failure(void **state)
{
    (void)state;
    static const step steps[] = {
        {'G', 404, ""},
        {'G', 200, LIST("100", "", POD("a", "100m", "10"))},
    };
    fx f;
    fx_init(&f, steps, sizeof steps / sizeof steps[0]);
    assert_int_equal(hr_watch_run(f.w, &f.stop), HR_OK);
    hr_watch_stats st;
    hr_watch_get_stats(f.w, &st);
    assert_int_equal(st.errors, 1);
    assert_false(st.absent);
    assert_int_equal(f.sc.synced_calls, 1); /* the list's, not the 404's */
    assert_non_null(strstr(f.sc.log, "list failed"));
    assert_null(strstr(f.sc.log, "not served"));
    fx_done(&f);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_event_types),
        cmocka_unit_test(test_error_events),
        cmocka_unit_test(test_malformed_skipped),
        cmocka_unit_test(test_list_watch_resume),
        cmocka_unit_test(test_silent_stream_dropped),
        cmocka_unit_test(test_gone_relists_by_difference),
        cmocka_unit_test(test_failed_list_is_not_swept),
        cmocka_unit_test(test_streaming_list),
        cmocka_unit_test(test_streaming_list_cut_short),
        cmocka_unit_test(test_streaming_relist_by_difference),
        cmocka_unit_test(test_refusal_falls_back_to_pages),
        cmocka_unit_test(test_refusal_as_event),
        cmocka_unit_test(test_not_refusals),
        cmocka_unit_test(test_absent_kind),
        cmocka_unit_test(test_absent_kind_streaming),
        cmocka_unit_test(test_absent_doubted_and_forbidden),
        cmocka_unit_test(test_404_is_a_failure),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
