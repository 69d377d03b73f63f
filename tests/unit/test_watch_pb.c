/*
 * test_watch_pb.c — the watch's protobuf path (design §5), driven by a
 * scripted transport that answers in protobuf or JSON as a server might:
 * the Accept each request carries, a streaming list in protobuf frames
 * (the initial-events-end bookmark read from its annotations), a watch
 * resumed from a protobuf object's resourceVersion, a 410 ERROR frame
 * relisting, paginated protobuf Lists (metadata.continue and
 * resourceVersion), a server answering JSON to a request for protobuf
 * (the response's Content-Type decides), and a 406 Not Acceptable falling
 * back to JSON for good. Also the frame splitter (framesplit.h): frames
 * cut anywhere, empty frames skipped, an announced length over the bound
 * refused before anything of it is buffered. And an error's Status in
 * protobuf read for its message (kstatus.h).
 *
 * The objects are encoded here field by field (Kubernetes' field
 * numbers, as kube/decode/pb*.c list them) and decoded by the real
 * decoders into the real cache; the real API server's bytes are
 * exercised by tests/e2e/e2e_protobuf.sh and e2e_protobuf_equal.sh.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "cache/cache.h"
#include "cache/sink.h"
#include "hr_pbenc.h"
#include "kube/transport/framesplit.h"
#include "kube/transport/kstatus.h"
#include "kube/watch/watch.h"

/* ------------------------------------------------------------ encoder */

/* A Pod: metadata {name 1, namespace 3, resourceVersion 6}, spec
 * {containers 2 [{name 1, resources 8 {requests 2 {cpu: Quantity}}}],
 * nodeName 10}, status {phase 1}. */
static pbb pod(const char *name, const char *cpu, const char *rv)
{
    pbb meta = {0}, q = {0}, entry = {0}, res = {0}, ctr = {0}, spec = {0}, status = {0}, p = {0};
    put_str(&meta, 1, name);
    put_str(&meta, 3, "ns");
    put_str(&meta, 6, rv);
    put_str(&q, 1, cpu);
    put_str(&entry, 1, "cpu");
    put_msg(&entry, 2, &q);
    put_msg(&res, 2, &entry);
    put_str(&ctr, 1, "c");
    put_msg(&ctr, 8, &res);
    put_msg(&spec, 2, &ctr);
    put_str(&spec, 10, "n1");
    put_str(&status, 1, "Running");
    put_msg(&p, 1, &meta);
    put_msg(&p, 2, &spec);
    put_msg(&p, 3, &status);
    return p;
}

/* A bookmark's object: metadata {resourceVersion 6, annotations 12}. */
static pbb bookmark(const char *rv, bool end)
{
    pbb meta = {0}, ann = {0}, p = {0};
    put_str(&meta, 6, rv);
    if (end) {
        put_str(&ann, 1, "k8s.io/initial-events-end");
        put_str(&ann, 2, "true");
        put_msg(&meta, 12, &ann);
    }
    put_msg(&p, 1, &meta);
    return p;
}

/* A Status {code 6}. */
static pbb status(int code)
{
    pbb s = {0};
    put_str(&s, 3, "too old resource version");
    put_varint(&s, 6 << 3 | 0);
    put_varint(&s, (uint64_t)code);
    return s;
}

/* "k8s\0" + runtime.Unknown {typeMeta 1 {apiVersion 1, kind 2}, raw 2}. */
static pbb envelope(const char *kind, const pbb *raw)
{
    pbb tm = {0}, o = {0};
    put_str(&tm, 1, "v1");
    put_str(&tm, 2, kind);
    memcpy(o.b, "k8s\0", 4);
    o.n = 4;
    put_msg(&o, 1, &tm);
    put_msg(&o, 2, raw);
    return o;
}

/* A frame: 4-byte big-endian length, WatchEvent {type 1, object 2 =
 * RawExtension {raw 1 = envelope}}; appended to out. */
static void frame(pbb *out, const char *type, const char *kind, const pbb *obj)
{
    pbb env = envelope(kind, obj), raw = {0}, ev = {0};
    put_msg(&raw, 1, &env);
    put_str(&ev, 1, type);
    put_msg(&ev, 2, &raw);
    put_byte(out, (uint8_t)(ev.n >> 24));
    put_byte(out, (uint8_t)(ev.n >> 16));
    put_byte(out, (uint8_t)(ev.n >> 8));
    put_byte(out, (uint8_t)ev.n);
    assert_true(out->n + ev.n <= sizeof out->b);
    memcpy(out->b + out->n, ev.b, ev.n);
    out->n += ev.n;
}

/* A PodList body: envelope of {metadata 1 {resourceVersion 2, continue 3},
 * items 2...}. */
static pbb list(const char *rv, const char *cont, const pbb *items, size_t n)
{
    pbb meta = {0}, l = {0};
    put_str(&meta, 2, rv);
    if (cont[0])
        put_str(&meta, 3, cont);
    put_msg(&l, 1, &meta);
    for (size_t i = 0; i < n; i++)
        put_msg(&l, 2, &items[i]);
    return envelope("PodList", &l);
}

/* ------------------------------------------------------------ script */

typedef struct step {
    int kind; /* 'G' a list page, 'S' a stream */
    long status;
    bool pb;  /* the answer is protobuf (else JSON) */
    pbb body; /* pb: the body or the frames; JSON: text, lines separated by '\n' */
} step;

typedef struct script {
    step *steps;
    size_t n, at;
    char paths[16][512];
    char accepts[16][128]; /* "-": asked with the JSON-only call */
    size_t n_paths;
    atomic_bool *stop;
    char log[8192];
} script;

static const step *next(script *s, int kind, const char *path, const char *accept)
{
    if (s->n_paths < 16) {
        snprintf(s->paths[s->n_paths], 512, "%s", path);
        snprintf(s->accepts[s->n_paths++], 128, "%s", accept ? accept : "-");
    }
    if (s->at >= s->n) {
        atomic_store(s->stop, true);
        return NULL;
    }
    if (s->steps[s->at].kind != kind)
        fail_msg("unexpected %c %s at step %zu", kind, path, s->at);
    return &s->steps[s->at++];
}

static hr_status get_as(void *ud, const char *path, const char *accept, hr_buf *resp,
                        hr_kresult *res, hr_err *err)
{
    const step *st = next(ud, 'G', path, accept);
    if (!st)
        return hr_err_set(err, HR_E_IO, "stopped");
    res->status = st->status;
    res->protobuf = st->pb;
    if (st->status / 100 != 2)
        return hr_err_set(err, HR_E_INPUT, "HTTP %ld", st->status);
    hr_buf_append(resp, st->body.b, st->body.n);
    return HR_OK;
}

static hr_status do_get(void *ud, const char *path, hr_buf *resp, hr_kresult *res, hr_err *err)
{
    return get_as(ud, path, NULL, resp, res, err);
}

static hr_status stream_as(void *ud, const char *path, const char *accept, long timeout_s,
                           hr_kline_fn on_line, hr_kline_fn on_frame, void *line_ud,
                           const atomic_bool *stop, hr_kresult *res, hr_err *err)
{
    (void)timeout_s, (void)stop;
    const step *st = next(ud, 'S', path, accept);
    if (!st)
        return hr_err_set(err, HR_E_IO, "stopped");
    res->status = st->status;
    res->protobuf = st->pb;
    if (st->status / 100 != 2)
        return hr_err_set(err, HR_E_INPUT, "HTTP %ld", st->status);
    if (st->pb) {
        assert_non_null(on_frame);
        /* Through the client's own splitter, a byte at a time. */
        hr_kframes fs;
        hr_kframes_init(&fs, 0);
        int rc = 0;
        for (size_t i = 0; rc == 0 && i < st->body.n; i++)
            rc = hr_kframes_feed(&fs, (const char *)st->body.b + i, 1, on_frame, line_ud, err);
        hr_kframes_free(&fs);
        return rc < 0 ? HR_E_IO : HR_OK;
    }
    const char *p = (const char *)st->body.b;
    const char *end = p + st->body.n;
    while (p < end) {
        const char *nl = memchr(p, '\n', (size_t)(end - p));
        size_t len = nl ? (size_t)(nl - p) : (size_t)(end - p);
        if (on_line(line_ud, p, len))
            return HR_OK;
        p += len + 1;
    }
    return HR_OK;
}

static hr_status stream(void *ud, const char *path, long timeout_s, hr_kline_fn on_line,
                        void *line_ud, const atomic_bool *stop, hr_kresult *res, hr_err *err)
{
    return stream_as(ud, path, NULL, timeout_s, on_line, NULL, line_ud, stop, res, err);
}

static long no_backoff(int attempt, long base, long max, long ra)
{
    (void)attempt, (void)base, (void)max, (void)ra;
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

static void fx_init(fx *f, step *steps, size_t n, bool paged)
{
    memset(f, 0, sizeof *f);
    hr_err err;
    assert_int_equal(hr_cache_new(&f->c, &err), HR_OK);
    assert_int_equal(hr_csink_new(f->c, HR_CK_POD, &f->sink, &err), HR_OK);
    f->sc.steps = steps;
    f->sc.n = n;
    f->sc.stop = &f->stop;
    hr_watch_opts o = {
        .resource = "pods",
        .path = "/api/v1/pods",
        .sink = hr_csink_wsink(f->sink),
        .transport = {&f->sc, do_get, stream, no_backoff, false, NULL, get_as, stream_as},
        .timeout_min_s = 300,
        .timeout_max_s = 300,
        .log = capture_log,
        .log_ud = &f->sc,
        .seed = 42,
        .paged_lists = paged,
        .protobuf = true,
    };
    assert_int_equal(hr_watch_new(&o, &f->w, &err), HR_OK);
    f->scr = malloc(sizeof *f->scr);
    assert_non_null(f->scr);
}

static void fx_done(fx *f)
{
    hr_watch_free(f->w);
    hr_csink_free(f->sink);
    hr_cache_free(f->c);
    free(f->scr);
}

static bool has_pod(fx *f, const char *name, int64_t req)
{
    hr_cpod_view v;
    hr_cache_lock(f->c);
    bool ok = hr_cache_pod_get(f->c, "ns", name, &v, f->scr);
    if (ok && req >= 0)
        ok = v.pod.n_ctr == 1 && v.pod.ctr[0].cpu_req == req;
    hr_cache_unlock(f->c);
    return ok;
}

static void json(pbb *o, const char *text)
{
    o->n = strlen(text);
    memcpy(o->b, text, o->n);
}

#define STREAM_LIST                                                                 \
    "/api/v1/pods?watch=1&sendInitialEvents=true&resourceVersionMatch=NotOlderThan" \
    "&allowWatchBookmarks=true&timeoutSeconds=300"
#define JPOD(name, cpu, rv)                                                               \
    "{\"metadata\":{\"namespace\":\"ns\",\"name\":\"" name "\",\"resourceVersion\":\"" rv \
    "\"},\"spec\":{\"nodeName\":\"n1\","                                                  \
    "\"containers\":[{\"name\":\"c\",\"resources\":{\"requests\":{\"cpu\":\"" cpu         \
    "\"}}}]},\"status\":{\"phase\":\"Running\"}}"

/* ------------------------------------------------------------ tests */

/* A streaming list in protobuf, its end read from the bookmark's
 * annotations, then the same stream as the watch; the next watch resumes
 * from the last protobuf object's resourceVersion. */
static void test_streaming_list_in_protobuf(void **state)
{
    (void)state;
    static step steps[2];
    memset(steps, 0, sizeof steps);
    pbb a = pod("a", "100m", "10"), b = pod("b", "100m", "12"), b2 = pod("b", "300m", "120");
    pbb bm = bookmark("50", false), end = bookmark("100", true), gone = pod("a", "100m", "130");
    steps[0] = (step){'S', 200, true, {{0}, 0}};
    frame(&steps[0].body, "ADDED", "Pod", &a);
    frame(&steps[0].body, "BOOKMARK", "Pod", &bm);
    frame(&steps[0].body, "ADDED", "Pod", &b);
    frame(&steps[0].body, "BOOKMARK", "Pod", &end);
    frame(&steps[0].body, "MODIFIED", "Pod", &b2);
    steps[1] = (step){'S', 200, true, {{0}, 0}};
    frame(&steps[1].body, "DELETED", "Pod", &gone);
    fx f;
    fx_init(&f, steps, 2, false);
    assert_int_equal(hr_watch_run(f.w, &f.stop), HR_OK);
    assert_true(f.sc.n_paths >= 3);
    assert_string_equal(f.sc.paths[0], STREAM_LIST);
    assert_string_equal(f.sc.accepts[0], HR_KACCEPT_PROTOBUF_WATCH);
    assert_string_equal(f.sc.paths[1],
                        "/api/v1/pods?watch=1&allowWatchBookmarks=true&timeoutSeconds=300"
                        "&resourceVersion=120");
    assert_string_equal(f.sc.accepts[1], HR_KACCEPT_PROTOBUF_WATCH);
    assert_non_null(strstr(f.sc.paths[2], "&resourceVersion=130"));
    assert_false(has_pod(&f, "a", -1));
    assert_true(has_pod(&f, "b", 300));
    hr_watch_stats st;
    hr_watch_get_stats(f.w, &st);
    assert_true(st.synced);
    assert_true(st.protobuf);
    assert_int_equal(st.streamed, 1);
    assert_int_equal(st.listed, 2);
    assert_int_equal(st.pb_objects, 4);
    assert_int_equal(st.malformed, 0);
    assert_non_null(strstr(f.sc.log, "listed at resourceVersion 100"));
    fx_done(&f);
}

/* A 410 as an ERROR frame (a protobuf Status) relists. */
static void test_gone_frame_relists(void **state)
{
    (void)state;
    static step steps[3];
    memset(steps, 0, sizeof steps);
    pbb a = pod("a", "100m", "10"), end = bookmark("100", true), st410 = status(410);
    pbb end2 = bookmark("200", true);
    steps[0] = (step){'S', 200, true, {{0}, 0}};
    frame(&steps[0].body, "ADDED", "Pod", &a);
    frame(&steps[0].body, "BOOKMARK", "Pod", &end);
    frame(&steps[0].body, "ERROR", "Status", &st410);
    steps[1] = (step){'S', 200, true, {{0}, 0}};
    frame(&steps[1].body, "BOOKMARK", "Pod", &end2);
    fx f;
    fx_init(&f, steps, 2, false);
    assert_int_equal(hr_watch_run(f.w, &f.stop), HR_OK);
    assert_true(f.sc.n_paths >= 2);
    assert_string_equal(f.sc.paths[1], STREAM_LIST); /* the relist */
    assert_false(has_pod(&f, "a", -1));              /* swept by difference */
    assert_non_null(strstr(f.sc.log, "watch expired (410)"));
    hr_watch_stats st;
    hr_watch_get_stats(f.w, &st);
    assert_int_equal(st.relists, 1);
    assert_int_equal(st.streamed, 2);
    fx_done(&f);
}

/* Paginated Lists in protobuf: items, metadata.continue, resourceVersion. */
static void test_pages_in_protobuf(void **state)
{
    (void)state;
    static step steps[3];
    memset(steps, 0, sizeof steps);
    pbb p1[2] = {pod("a", "100m", "10"), pod("b", "200m", "11")}, p2[1] = {pod("c", "300m", "12")};
    steps[0] = (step){'G', 200, true, list("90", "tok/1", p1, 2)};
    steps[1] = (step){'G', 200, true, list("100", "", p2, 1)};
    steps[2] = (step){'S', 200, true, {{0}, 0}};
    fx f;
    fx_init(&f, steps, 3, true);
    assert_int_equal(hr_watch_run(f.w, &f.stop), HR_OK);
    assert_true(f.sc.n_paths >= 3);
    assert_string_equal(f.sc.paths[0], "/api/v1/pods?limit=500");
    assert_string_equal(f.sc.accepts[0], HR_KACCEPT_PROTOBUF);
    assert_string_equal(f.sc.paths[1], "/api/v1/pods?limit=500&continue=tok%2F1");
    assert_non_null(strstr(f.sc.paths[2], "&resourceVersion=100"));
    assert_true(has_pod(&f, "a", 100));
    assert_true(has_pod(&f, "b", 200));
    assert_true(has_pod(&f, "c", 300));
    hr_watch_stats st;
    hr_watch_get_stats(f.w, &st);
    assert_int_equal(st.listed, 3);
    assert_int_equal(st.pb_objects, 3);
    fx_done(&f);
}

/* Asked for protobuf, answered JSON (a server without protobuf for the
 * kind): the Content-Type decides, and protobuf is still asked next time. */
static void test_json_answer_to_protobuf(void **state)
{
    (void)state;
    static step steps[3];
    memset(steps, 0, sizeof steps);
    steps[0] = (step){'G', 200, false, {{0}, 0}};
    json(&steps[0].body, "{\"kind\":\"PodList\",\"metadata\":{\"resourceVersion\":\"100\"},"
                         "\"items\":[" JPOD("a", "100m", "10") "]}");
    steps[1] = (step){'S', 200, false, {{0}, 0}};
    json(&steps[1].body, "{\"type\":\"ADDED\",\"object\":" JPOD("b", "200m", "110") "}\n");
    steps[2] = (step){'S', 200, true, {{0}, 0}};
    fx f;
    fx_init(&f, steps, 3, true);
    assert_int_equal(hr_watch_run(f.w, &f.stop), HR_OK);
    assert_true(f.sc.n_paths >= 3);
    assert_string_equal(f.sc.accepts[0], HR_KACCEPT_PROTOBUF);
    assert_string_equal(f.sc.accepts[1], HR_KACCEPT_PROTOBUF_WATCH);
    assert_string_equal(f.sc.accepts[2], HR_KACCEPT_PROTOBUF_WATCH);
    assert_non_null(strstr(f.sc.paths[2], "&resourceVersion=110"));
    assert_true(has_pod(&f, "a", 100));
    assert_true(has_pod(&f, "b", 200));
    hr_watch_stats st;
    hr_watch_get_stats(f.w, &st);
    assert_true(st.protobuf);
    assert_int_equal(st.pb_objects, 0);
    fx_done(&f);
}

/* A 406 to a streaming list asked in protobuf: the same request again at
 * once in JSON, and JSON from then on (remembered); a 406 to a page too. */
static void test_406_falls_back_to_json(void **state)
{
    (void)state;
    static step steps[3];
    memset(steps, 0, sizeof steps);
    steps[0] = (step){'S', 406, false, {{0}, 0}};
    steps[1] = (step){'S', 200, false, {{0}, 0}};
    json(&steps[1].body,
         "{\"type\":\"ADDED\",\"object\":" JPOD(
             "a", "100m",
             "10") "}\n"
                   "{\"type\":\"BOOKMARK\",\"object\":{\"metadata\":{\"resourceVersion\":\"100\","
                   "\"annotations\":{\"k8s.io/initial-events-end\":\"true\"}}}}\n");
    steps[2] = (step){'S', 200, false, {{0}, 0}};
    fx f;
    fx_init(&f, steps, 3, false);
    assert_int_equal(hr_watch_run(f.w, &f.stop), HR_OK);
    assert_true(f.sc.n_paths >= 3);
    assert_string_equal(f.sc.paths[0], STREAM_LIST);
    assert_string_equal(f.sc.accepts[0], HR_KACCEPT_PROTOBUF_WATCH);
    assert_string_equal(f.sc.paths[1], STREAM_LIST);
    assert_string_equal(f.sc.accepts[1], "-");
    assert_string_equal(f.sc.accepts[2], "-");
    assert_true(has_pod(&f, "a", 100));
    hr_watch_stats st;
    hr_watch_get_stats(f.w, &st);
    assert_false(st.protobuf);
    assert_true(st.synced);
    assert_non_null(strstr(f.sc.log, "will not send protobuf (406"));
    fx_done(&f);

    static step pages[3];
    memset(pages, 0, sizeof pages);
    pages[0] = (step){'G', 406, false, {{0}, 0}};
    pages[1] = (step){'G', 200, false, {{0}, 0}};
    json(&pages[1].body, "{\"kind\":\"PodList\",\"metadata\":{\"resourceVersion\":\"100\"},"
                         "\"items\":[" JPOD("a", "100m", "10") "]}");
    pages[2] = (step){'S', 200, false, {{0}, 0}};
    fx_init(&f, pages, 3, true);
    assert_int_equal(hr_watch_run(f.w, &f.stop), HR_OK);
    assert_true(f.sc.n_paths >= 3);
    assert_string_equal(f.sc.accepts[0], HR_KACCEPT_PROTOBUF);
    assert_string_equal(f.sc.paths[1], "/api/v1/pods?limit=500");
    assert_string_equal(f.sc.accepts[1], "-");
    assert_string_equal(f.sc.accepts[2], "-");
    assert_true(has_pod(&f, "a", 100));
    fx_done(&f);
}

/* A frame that is not a WatchEvent ends the stream (a reconnect), the
 * objects before it kept; an object the decoder refuses is kept as
 * undecodable, named in the log. */
static void test_bad_frames(void **state)
{
    (void)state;
    static step steps[2];
    memset(steps, 0, sizeof steps);
    pbb a = pod("a", "100m", "10"), end = bookmark("100", true);
    pbb bad = pod("b", "lots", "11");
    steps[0] = (step){'S', 200, true, {{0}, 0}};
    frame(&steps[0].body, "ADDED", "Pod", &a);
    frame(&steps[0].body, "ADDED", "Pod", &bad);
    frame(&steps[0].body, "BOOKMARK", "Pod", &end);
    /* A frame of 3 bytes that are no WatchEvent. */
    const uint8_t junk[] = {0, 0, 0, 3, 0xff, 0xff, 0xff};
    memcpy(steps[0].body.b + steps[0].body.n, junk, sizeof junk);
    steps[0].body.n += sizeof junk;
    steps[1] = (step){'S', 200, true, {{0}, 0}};
    fx f;
    fx_init(&f, steps, 2, false);
    assert_int_equal(hr_watch_run(f.w, &f.stop), HR_OK);
    assert_true(f.sc.n_paths >= 2);
    assert_non_null(strstr(f.sc.paths[1], "&resourceVersion=100"));
    assert_true(has_pod(&f, "a", 100));
    hr_cpod_view v;
    hr_cache_lock(f.c);
    assert_true(hr_cache_pod_get(f.c, "ns", "b", &v, f.scr));
    assert_true(v.pod.undecodable);
    assert_string_equal(v.node, "n1");
    hr_cache_unlock(f.c);
    assert_non_null(strstr(f.sc.log, "pod ns/b: spec.containers[0].resources.requests.cpu"));
    assert_non_null(strstr(f.sc.log, "watch frame of 3 bytes is not an event"));
    fx_done(&f);
}

/* ------------------------------------------------------ Status */

/* An error answered in protobuf (the request accepted it): the Status's
 * own words, not the bytes, reach the error message. */
static void test_status_in_protobuf(void **state)
{
    (void)state;
    pbb raw = {0};
    put_str(&raw, 3, "pods is forbidden: User \"x\" cannot list resource \"pods\"");
    put_str(&raw, 4, "Forbidden");
    put_varint(&raw, 6 << 3 | 0);
    put_varint(&raw, 403);
    pbb body = envelope("Status", &raw);
    hr_kstatus st;
    hr_kstatus_parse_pb(body.b, body.n, &st);
    assert_true(st.is_status);
    assert_int_equal(st.code, 403);
    assert_string_equal(st.reason, "Forbidden");
    assert_non_null(strstr(st.message, "pods is forbidden: User \"x\""));
    /* Not a protobuf Status: read as any other body. */
    hr_kstatus_parse_pb((const uint8_t *)"{\"kind\":\"Status\",\"code\":410,\"message\":\"gone\"}",
                        45, &st);
    assert_int_equal(st.code, 410);
    assert_string_equal(st.message, "gone");
    hr_kstatus_parse_pb((const uint8_t *)"k8s\0\xff\xff", 6, &st);
    assert_false(st.is_status);
}

/* ------------------------------------------------------ framesplit */

typedef struct got {
    size_t n;
    size_t len[8];
    char first[8];
} got;

static int on_frame(void *ud, const char *f, size_t len)
{
    got *g = ud;
    if (g->n < 8) {
        g->len[g->n] = len;
        g->first[g->n] = f[0];
        /* Padded with zeros after the frame. */
        for (size_t i = 0; i < 8; i++)
            assert_int_equal(f[len + i], 0);
    }
    g->n++;
    return 0;
}

static void test_framesplit(void **state)
{
    (void)state;
    /* Three frames (2 bytes, empty, 3 bytes), cut at every byte. */
    const char s[] = "\0\0\0\2ab\0\0\0\0\0\0\0\3xyz";
    size_t n = sizeof s - 1;
    for (size_t cut = 0; cut <= n; cut++) {
        hr_kframes fs;
        hr_kframes_init(&fs, 0);
        got g = {0};
        hr_err err;
        assert_int_equal(hr_kframes_feed(&fs, s, cut, on_frame, &g, &err), 0);
        assert_int_equal(hr_kframes_feed(&fs, s + cut, n - cut, on_frame, &g, &err), 0);
        assert_int_equal(g.n, 2);
        assert_int_equal(g.len[0], 2);
        assert_int_equal(g.first[0], 'a');
        assert_int_equal(g.len[1], 3);
        assert_int_equal(g.first[1], 'x');
        assert_int_equal(hr_kframes_pending(&fs), 0);
        hr_kframes_free(&fs);
    }
    /* A length over the bound: refused as soon as its 4 bytes are in. */
    hr_kframes fs;
    hr_kframes_init(&fs, 1024);
    got g = {0};
    hr_err err;
    assert_int_equal(hr_kframes_feed(&fs, "\0\0\4\1", 4, on_frame, &g, &err), -1);
    assert_int_equal(err.code, HR_E_LIMIT);
    assert_non_null(strstr(err.msg, "watch frame of 1025 bytes"));
    assert_null(fs.buf);
    hr_kframes_free(&fs);
    /* 0xffffffff with the default bound (16 MiB). */
    hr_kframes_init(&fs, 0);
    assert_int_equal(hr_kframes_feed(&fs, "\xff\xff\xff\xff", 4, on_frame, &g, &err), -1);
    assert_int_equal(err.code, HR_E_LIMIT);
    hr_kframes_free(&fs);
    /* A callback's stop. */
    hr_kframes_init(&fs, 0);
    assert_int_equal(g.n, 0);
    hr_kframes_free(&fs);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_streaming_list_in_protobuf),
        cmocka_unit_test(test_gone_frame_relists),
        cmocka_unit_test(test_pages_in_protobuf),
        cmocka_unit_test(test_json_answer_to_protobuf),
        cmocka_unit_test(test_406_falls_back_to_json),
        cmocka_unit_test(test_bad_frames),
        cmocka_unit_test(test_status_in_protobuf),
        cmocka_unit_test(test_framesplit),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
