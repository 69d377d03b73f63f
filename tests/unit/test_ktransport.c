/*
 * test_ktransport.c — the transport's pieces that need no API server:
 * back-off bounds and spread, the write limiter on a fake clock (and one
 * short real-clock check), the stream line splitter fed in every possible
 * split, Status error bodies, Retry-After, and the client's behaviour
 * when nothing listens (a transport error with status 0, quickly).
 *
 * Talking to a real API server is tests/integration/it_client.c.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <inttypes.h>
#include <netinet/in.h>
#include <pthread.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include <cmocka.h>

#include "hr_check.h"
#include "hr_switches.h"
#include "kube/transport/backoff.h"
#include "kube/transport/client.h"
#include "kube/transport/curlproc.h"
#include "kube/transport/kstatus.h"
#include "kube/transport/kverb.h"
#include "kube/transport/limiter.h"
#include "kube/transport/linesplit.h"
#include "kube/write/patch.h"
#include "util/clock.h"

/* ------------------------------------------------------------- back-off */

static void test_backoff_bounds(void **state)
{
    (void)state;
    hr_prng r;
    hr_prng_seed(&r, 42);
    for (int attempt = 0; attempt < 80; attempt++) {
        long nominal = 100;
        for (int i = 0; i < attempt && nominal < 30000; i++)
            nominal *= 2;
        if (nominal > 30000)
            nominal = 30000;
        long lo = INT32_MAX, hi = 0;
        for (int k = 0; k < 2000; k++) {
            long d = hr_kbackoff_ms_r(&r, attempt, 100, 30000, 0);
            if (d < lo)
                lo = d;
            if (d > hi)
                hi = d;
        }
        /* factor in [0.5, 1.5): and it actually spreads. */
        CHECK_TRUE("lower bound", lo >= nominal / 2);
        CHECK_TRUE("upper bound", hi < nominal * 3 / 2 + 1);
        CHECK_TRUE("spread", hi - lo > nominal / 2);
    }
    /* Retry-After wins when larger, never when smaller. */
    CHECK_I64("retry-after", hr_kbackoff_ms_r(&r, 0, 100, 1000, 60000), 60000);
    CHECK_TRUE("small retry-after", hr_kbackoff_ms_r(&r, 5, 100, 1000, 1) >= 500);
    /* Absurd inputs stay sane. */
    CHECK_TRUE("huge attempt", hr_kbackoff_ms_r(&r, INT32_MAX, 100, 1000, 0) < 1500);
    CHECK_TRUE("negative attempt", hr_kbackoff_ms_r(&r, -3, 100, 1000, 0) < 150);
    CHECK_TRUE("zero base", hr_kbackoff_ms_r(&r, 0, 0, 0, 0) >= 1);
    /* The per-thread wrapper obeys the same bounds. */
    for (int k = 0; k < 1000; k++) {
        long d = hr_kbackoff_ms(3, 100, 30000, 0);
        CHECK_TRUE("wrapper", d >= 400 && d < 1200);
    }
    /* Two generators seeded alike agree; seeded differently they do not. */
    hr_prng a, b;
    hr_prng_seed(&a, 7);
    hr_prng_seed(&b, 7);
    CHECK_TRUE("deterministic", hr_prng_next(&a) == hr_prng_next(&b));
    hr_prng_seed_random(&b);
    hr_prng_seed_random(&a);
    CHECK_TRUE("seeded from the kernel", hr_prng_next(&a) != hr_prng_next(&b));
}

/* -------------------------------------------------------------- limiter */

#define SEC INT64_C(1000000000)

static void test_limiter_fake_clock(void **state)
{
    (void)state;
    hr_klimiter l;
    assert_int_equal(hr_klimiter_init(&l, 10, 5, 0), 0);
    /* A full bucket: 5 go at once, the 6th not. */
    for (int i = 0; i < 5; i++)
        CHECK_TRUE("burst", hr_klimiter_try(&l, 0));
    CHECK_TRUE("empty", !hr_klimiter_try(&l, 0));
    /* 10/s: one token per 100 ms. */
    CHECK_TRUE("too early", !hr_klimiter_try(&l, SEC / 10 - 1000));
    CHECK_TRUE("refilled", hr_klimiter_try(&l, SEC / 10));
    /* Reservations queue up: waits of 100, 200, 300 ms. */
    CHECK_I64("wait 1", hr_klimiter_reserve(&l, SEC / 10), SEC / 10);
    CHECK_I64("wait 2", hr_klimiter_reserve(&l, SEC / 10), 2 * SEC / 10);
    CHECK_I64("wait 3", hr_klimiter_reserve(&l, SEC / 10), 3 * SEC / 10);
    /* Never more than burst after a long idle time. */
    int n = 0;
    while (hr_klimiter_try(&l, 100 * SEC))
        n++;
    CHECK_I64("burst cap", n, 5);
    /* Live change: 1/s, burst 1. */
    hr_klimiter_set(&l, 1, 1, 100 * SEC);
    CHECK_TRUE("slow: empty", !hr_klimiter_try(&l, 100 * SEC + SEC / 2));
    CHECK_TRUE("slow: after 1 s", hr_klimiter_try(&l, 101 * SEC));
    CHECK_TRUE("slow: burst 1", !hr_klimiter_try(&l, 101 * SEC));
    /* Defaults for nonsense. */
    hr_klimiter_set(&l, -1, 0, 200 * SEC);
    CHECK_TRUE("default qps", l.qps == 50 && l.burst == 100);
    hr_klimiter_destroy(&l);
}

/* When a reservation made at now may go. */
static int64_t go_at(hr_klimiter *l, int64_t now)
{
    return now + hr_klimiter_reserve(l, now);
}

#define MS INT64_C(1000000)

/* clientQPS 2, clientBurst 2 (design §1.1): two at once, then one every
 * 500 ms however fast they are asked for; a live change paces the very
 * next reservation, one new interval after the last one already given. */
static void test_limiter_pacing_live_change(void **state)
{
    (void)state;
    hr_klimiter l;
    assert_int_equal(hr_klimiter_init(&l, 50, 100, 0), 0);
    hr_klimiter_set(&l, 2, 2, 0);
    /* The bucket holds 2 now, not 100. */
    int64_t at[12];
    for (int i = 0; i < 12; i++)
        at[i] = go_at(&l, (int64_t)i * 10 * MS); /* asked every 10 ms */
    CHECK_I64("burst 1", at[0], 0);
    CHECK_I64("burst 2", at[1], 10 * MS);
    CHECK_I64("the first paced one", at[2], 500 * MS);
    for (int i = 3; i < 12; i++) {
        CHECK_TRUE("spaced >= 500 ms", at[i] - at[i - 1] >= 500 * MS - 1);
        CHECK_TRUE("not later than needed", at[i] - at[i - 1] <= 500 * MS + 1);
    }
    int64_t now = 110 * MS; /* when at[11] was asked */
    int64_t last = at[11];
    CHECK_I64("the 12th", last, 5000 * MS);

    /* Raised to 10/s mid-stream: the next one comes 100 ms after the last
     * one already promised — not ahead of callers asleep. */
    hr_klimiter_set(&l, 10, 2, now);
    int64_t n1 = go_at(&l, now);
    CHECK_TRUE("raised: after the queue", n1 >= last);
    CHECK_TRUE("raised: one new interval on", llabs(n1 - (last + 100 * MS)) <= 1000);
    int64_t n2 = go_at(&l, now);
    CHECK_TRUE("raised: 100 ms apart", llabs(n2 - n1 - 100 * MS) <= 1000);

    /* Lowered to 1/s: the next one is 1 s after the last — not the whole
     * queue re-priced at the slow rate. */
    hr_klimiter_set(&l, 1, 2, now);
    int64_t n3 = go_at(&l, now);
    CHECK_TRUE("lowered: one new interval on", llabs(n3 - (n2 + SEC)) <= 1000);
    int64_t n4 = go_at(&l, now);
    CHECK_TRUE("lowered: 1 s apart", llabs(n4 - n3 - SEC) <= 1000);

    /* Once the queue has drained, the bucket refills to the new burst at
     * the new rate: two at once, then 1 s apart. */
    int64_t idle = n4 + 60 * SEC;
    CHECK_I64("refilled 1", go_at(&l, idle), idle);
    CHECK_I64("refilled 2", go_at(&l, idle), idle);
    CHECK_TRUE("then 1/s", llabs(go_at(&l, idle) - (idle + SEC)) <= 1000);
    hr_klimiter_destroy(&l);
}

/* Batched wake-ups (limiter.h): at 50/s a reservation's moment goes up
 * to the next 100 ms tick (5 intervals) of one grid, so the writers whose
 * tokens fall in a tick wake together — never before their token, never a
 * tick late, and the rate over a long run is still 50/s. At 2/s the tick
 * is the 100 ms cap, not 5 intervals (2.5 s). */
static void test_limiter_batched_ticks(void **state)
{
    (void)state;
    hr_klimiter l;
    int64_t t0 = 1000 * SEC + 3 * MS; /* off the grid */
    assert_int_equal(hr_klimiter_init(&l, 50, 1, t0), 0);
    CHECK_I64("the bucket's token goes now", go_at(&l, t0), t0);
    int64_t first_tick = 1000 * SEC + 100 * MS;
    int per_tick[8] = {0};
    for (int i = 1; i <= 250; i++) {
        int64_t token = t0 + (int64_t)i * 20 * MS; /* when a plain bucket would send it */
        int64_t at = go_at(&l, t0);
        if (at < token - 1000)
            fail_msg("reservation %d goes at %" PRId64 ", before its token at %" PRId64, i, at,
                     token);
        if (at % (100 * MS) != 0 || at - token >= 100 * MS)
            fail_msg("reservation %d goes at %" PRId64 ": not the tick after its token", i, at);
        int64_t k = (at - first_tick) / (100 * MS);
        if (k < 8)
            per_tick[k]++;
        if (i == 250)
            CHECK_I64("the 250th token at 50/s: 5 s on, its tick", at, 1005 * SEC + 100 * MS);
    }
    CHECK_I64("first tick: the tokens of 23-100 ms", per_tick[0], 4);
    for (int k = 1; k < 8; k++)
        CHECK_I64("then 5 a tick", per_tick[k], 5);
    hr_klimiter_set(&l, 2, 1, t0);
    int64_t a = go_at(&l, t0), b = go_at(&l, t0);
    CHECK_TRUE("2/s: on the 100 ms grid", a % (100 * MS) == 0 && b % (100 * MS) == 0);
    CHECK_I64("2/s: still 500 ms apart", b - a, 500 * MS);
    hr_klimiter_destroy(&l);

    /* A yielding writer's waits end on the same grid: the bucket refilling
     * to keep + 1, and the minimum share while a resize is outstanding. */
    assert_int_equal(hr_klimiter_init(&l, 50, 10, t0), 0);
    for (int i = 0; i < 10; i++)
        CHECK_TRUE("drain", hr_klimiter_try(&l, t0));
    int64_t r = hr_klimiter_ready_in(&l, t0, 0);
    CHECK_TRUE("refill: at or after its token (20 ms)", r >= 20 * MS - 1000);
    CHECK_I64("refill: on its tick", (t0 + r) % (100 * MS), 0);
    CHECK_I64("refill: the next tick", t0 + r, 1000 * SEC + 100 * MS);
    CHECK_I64("urgent", hr_klimiter_urgent_add(&l, 1), 1);
    CHECK_I64("the share, claimed", hr_klimiter_yield_claim(&l, t0, 0), 0);
    int64_t y = hr_klimiter_yield_claim(&l, t0, 0);
    CHECK_TRUE("the next share: not before 1 s", y >= SEC - 1000);
    CHECK_I64("the next share: on its tick", (t0 + y) % (100 * MS), 0);
    hr_klimiter_destroy(&l);
}

typedef struct lim_thread {
    hr_klimiter *l;
    int n;
} lim_thread;

static void *lim_worker(void *p)
{
    lim_thread *t = p;
    for (int i = 0; i < t->n; i++)
        hr_klimiter_wait(t->l);
    return NULL;
}

static void test_limiter_threads_real_clock(void **state)
{
    (void)state;
    /* 4 threads x 10 writes at 100/s with burst 10: the 30 beyond the burst
     * need ~300 ms; all 40 must not be faster than the rate allows. */
    hr_klimiter l;
    assert_int_equal(hr_klimiter_init(&l, 100, 10, hr_mono_ns()), 0);
    pthread_t th[4];
    lim_thread t = {&l, 10};
    int64_t t0 = hr_mono_ns();
    for (int i = 0; i < 4; i++)
        assert_int_equal(pthread_create(&th[i], NULL, lim_worker, &t), 0);
    for (int i = 0; i < 4; i++)
        pthread_join(th[i], NULL);
    int64_t ms = (hr_mono_ns() - t0) / 1000000;
    if (ms < 280 || ms > 2000)
        fail_msg("40 writes at 100/s burst 10 took %" PRId64 " ms, want ~300", ms);
    hr_klimiter_destroy(&l);
}

typedef struct stop_waiter {
    hr_klimiter *l;
    hr_kstop *stop;
    hr_status st;
    _Atomic int64_t done_ns;
    _Atomic long tid;
} stop_waiter;

static void *stop_waiter_main(void *p)
{
    stop_waiter *t = p;
    atomic_store(&t->tid, hr_tid());
    t->st = hr_klimiter_wait_stop(t->l, t->stop);
    atomic_store(&t->done_ns, hr_mono_ns());
    return NULL;
}

/* design §10: a worker asleep in the limiter for a far token (qps 0.1: 10 s
 * away) gives up promptly when the stop flag is set, with HR_E_CANCELED,
 * and hands its token back. */
static void test_limiter_wait_stops(void **state)
{
    (void)state;
    hr_klimiter l;
    assert_int_equal(hr_klimiter_init(&l, 0.1, 1, hr_mono_ns()), 0);
    CHECK_TRUE("burst", hr_klimiter_try(&l, hr_mono_ns()));
    hr_kstop stop;
    assert_int_equal(hr_kstop_init(&stop), 0);
    stop_waiter t = {&l, &stop, HR_OK, 0, 0};
    pthread_t th;
    assert_int_equal(pthread_create(&th, NULL, stop_waiter_main, &t), 0);
    hr_mono_sleep_ms(50);
    CHECK_TRUE("still waiting before stop", atomic_load(&t.done_ns) == 0);
    /* Asleep, not polling: over 300 ms its thread was switched in at most
     * twice (a 10 ms polling slice would be ~30 times). */
    long n0 = hr_switches(atomic_load(&t.tid));
    hr_mono_sleep_ms(300);
    long n1 = hr_switches(atomic_load(&t.tid));
    if (n0 < 0 || n1 - n0 > 2)
        fail_msg("the waiter woke %ld times in 300 ms, want at most 2", n1 - n0);
    int64_t t0 = hr_mono_ns();
    hr_kstop_set(&stop, true);
    pthread_join(th, NULL);
    int64_t ms = (atomic_load(&t.done_ns) - t0) / 1000000;
    if (ms > 100)
        fail_msg("limiter wait ended %" PRId64 " ms after stop, want < 100", ms);
    assert_int_equal(t.st, HR_E_CANCELED);
    /* The abandoned token went back: the next comes ~10 s out, not ~20. */
    int64_t next = hr_klimiter_reserve(&l, hr_mono_ns());
    CHECK_TRUE("token refunded", next > 9 * SEC && next <= 10 * SEC);
    hr_klimiter_destroy(&l);
    hr_kstop_destroy(&stop);
}

/* --------------------------------------------------------- line splitter */

typedef struct lines_seen {
    char buf[4096];
    size_t len;
    int n;
    int stop_after;
    int bad_termination;
} lines_seen;

static int collect(void *ud, const char *line, size_t len)
{
    lines_seen *s = ud;
    /* The promise to yyjson's in-place parser: NUL plus padding. */
    for (size_t i = 0; i <= HR_KLINE_PAD; i++)
        if (line[len + i] != '\0')
            s->bad_termination = 1;
    if (memchr(line, '\n', len))
        s->bad_termination = 1;
    memcpy(s->buf + s->len, line, len);
    s->len += len;
    s->buf[s->len++] = '|';
    s->n++;
    return s->stop_after && s->n >= s->stop_after;
}

static void test_lines_every_split(void **state)
{
    (void)state;
    const char *in =
        "{\"type\":\"ADDED\"}\n\n{\"b\":2}\r\nxyz\n{\"long\":\"abcdefghijklmnopqrstuvwxyz\"}\n";
    const char *want =
        "{\"type\":\"ADDED\"}|{\"b\":2}|xyz|{\"long\":\"abcdefghijklmnopqrstuvwxyz\"}|";
    size_t n = strlen(in);
    /* Every way to cut the input in three pieces gives the same lines. */
    for (size_t a = 0; a <= n; a++)
        for (size_t b = a; b <= n; b++) {
            hr_klines s;
            hr_klines_init(&s, 0);
            lines_seen seen = {0};
            hr_err e;
            assert_int_equal(hr_klines_feed(&s, in, a, collect, &seen, &e), 0);
            assert_int_equal(hr_klines_feed(&s, in + a, b - a, collect, &seen, &e), 0);
            assert_int_equal(hr_klines_feed(&s, in + b, n - b, collect, &seen, &e), 0);
            assert_int_equal(hr_klines_finish(&s, collect, &seen, &e), 0);
            seen.buf[seen.len] = '\0';
            if (strcmp(seen.buf, want) != 0)
                fail_msg("split %zu/%zu: got %s", a, b, seen.buf);
            assert_int_equal(seen.bad_termination, 0);
            hr_klines_free(&s);
        }
    /* Byte by byte. */
    hr_klines s;
    hr_klines_init(&s, 0);
    lines_seen seen = {0};
    hr_err e;
    for (size_t i = 0; i < n; i++)
        assert_int_equal(hr_klines_feed(&s, in + i, 1, collect, &seen, &e), 0);
    assert_int_equal(seen.n, 4);
    assert_int_equal(hr_klines_pending(&s), 0);
    hr_klines_free(&s);
}

static void test_lines_limit_stop_tail(void **state)
{
    (void)state;
    hr_err e = {0};
    hr_klines s;
    lines_seen seen = {0};
    /* A line of exactly the limit passes, one byte more fails clearly,
     * even when it arrives in pieces. */
    hr_klines_init(&s, 10);
    assert_int_equal(hr_klines_feed(&s, "0123456789\n", 11, collect, &seen, &e), 0);
    assert_int_equal(hr_klines_feed(&s, "01234", 5, collect, &seen, &e), 0);
    assert_int_equal(hr_klines_feed(&s, "567890", 6, collect, &seen, &e), -1);
    assert_int_equal(e.code, HR_E_LIMIT);
    assert_non_null(strstr(e.msg, "longer than 10 bytes"));
    hr_klines_free(&s);

    /* The callback stops the stream: later lines are not delivered. */
    hr_klines_init(&s, 0);
    memset(&seen, 0, sizeof seen);
    seen.stop_after = 2;
    assert_int_equal(hr_klines_feed(&s, "a\nb\nc\nd\n", 8, collect, &seen, &e), 1);
    assert_int_equal(seen.n, 2);
    hr_klines_free(&s);

    /* A tail without newline stays pending until finish. */
    hr_klines_init(&s, 0);
    memset(&seen, 0, sizeof seen);
    assert_int_equal(hr_klines_feed(&s, "a\n{\"par", 7, collect, &seen, &e), 0);
    assert_int_equal(seen.n, 1);
    assert_int_equal(hr_klines_pending(&s), 5);
    assert_int_equal(hr_klines_finish(&s, collect, &seen, &e), 0);
    assert_int_equal(seen.n, 2);
    hr_klines_free(&s);
}

/* The 16 MiB default limit holds a 3 MiB line fed in 16 KiB pieces. */
static int count_only(void *ud, const char *line, size_t len)
{
    (void)line;
    *(size_t *)ud = len;
    return 0;
}

static void test_lines_big(void **state)
{
    (void)state;
    size_t big = (size_t)3 << 20;
    char *p = malloc(big + 1);
    assert_non_null(p);
    memset(p, 'x', big);
    p[big] = '\n';
    hr_klines s;
    hr_klines_init(&s, 0);
    hr_err e;
    size_t got = 0;
    for (size_t off = 0; off <= big; off += 16384) {
        size_t n = big + 1 - off < 16384 ? big + 1 - off : 16384;
        assert_int_equal(hr_klines_feed(&s, p + off, n, count_only, &got, &e), 0);
    }
    assert_int_equal(got, big);
    hr_klines_free(&s);
    free(p);
}

/* ----------------------------------------------------- status and retry */

static void test_status_errors(void **state)
{
    (void)state;
    const char *body =
        "{\"kind\":\"Status\",\"apiVersion\":\"v1\",\"metadata\":{},\"status\":\"Failure\","
        "\"message\":\"pods \\\"nope\\\" not found\",\"reason\":\"NotFound\","
        "\"details\":{\"name\":\"nope\",\"kind\":\"pods\"},\"code\":404}";
    hr_kstatus st;
    hr_kstatus_parse(body, strlen(body), &st);
    assert_true(st.is_status);
    assert_string_equal(st.message, "pods \"nope\" not found");
    assert_string_equal(st.reason, "NotFound");
    assert_int_equal(st.code, 404);
    hr_err e = {0};
    assert_int_equal(hr_kstatus_err(&e, "GET", "/api/v1/namespaces/x/pods/nope", 404, &st),
                     HR_E_NOTFOUND);
    assert_string_equal(e.msg, "GET /api/v1/namespaces/x/pods/nope: 404 Not Found: pods "
                               "\"nope\" not found");

    const char *tooMany = "{\"kind\":\"Status\",\"message\":\"too many requests\",\"reason\":"
                          "\"TooManyRequests\",\"details\":{\"retryAfterSeconds\":7},\"code\":429}";
    hr_kstatus_parse(tooMany, strlen(tooMany), &st);
    assert_int_equal(st.retry_after_s, 7);
    /* details.retryAfterSeconds obeys the same cap as the header. */
    const char *tooLong = "{\"kind\":\"Status\",\"details\":{\"retryAfterSeconds\":3600},"
                          "\"code\":429}";
    hr_kstatus_parse(tooLong, strlen(tooLong), &st);
    assert_int_equal(st.retry_after_s, 60);
    hr_kstatus_parse(tooMany, strlen(tooMany), &st);
    assert_int_equal(hr_kstatus_err(&e, "PATCH", "/x", 429, &st), HR_E_IO);
    assert_int_equal(hr_kstatus_err(&e, "PATCH", "/x", 422, &st), HR_E_INPUT);
    assert_int_equal(hr_kstatus_err(&e, "PATCH", "/x", 503, &st), HR_E_IO);

    /* Not a Status: the first line, quoted, control bytes masked. */
    hr_kstatus_parse("404 page not found\nmore", 23, &st);
    assert_false(st.is_status);
    assert_string_equal(st.message, "404 page not found");
    hr_kstatus_parse("<html>\x01\x02</html>", 15, &st);
    assert_string_equal(st.message, "<html>?"
                                    "?</html>");
    hr_kstatus_parse(NULL, 0, &st);
    assert_string_equal(st.message, "");
    assert_int_equal(hr_kstatus_err(&e, "GET", "/y", 500, &st), HR_E_IO);
    assert_string_equal(e.msg, "GET /y: 500 Internal Server Error");
    /* A Status with a non-string message does not crash or invent one. */
    const char *odd = "{\"kind\":\"Status\",\"message\":42,\"code\":\"x\"}";
    hr_kstatus_parse(odd, strlen(odd), &st);
    assert_true(st.is_status);
    assert_string_equal(st.message, "");
    assert_int_equal(st.code, 0);
}

static void test_retry_after(void **state)
{
    (void)state;
    time_t now = 1796025600; /* 2026-11-30T08:00:00Z, a Monday */
    CHECK_I64("seconds", hr_kretry_after_ms(" 5\r\n", 4, now), 5000);
    CHECK_I64("zero", hr_kretry_after_ms("0", 1, now), 0);
    /* Honoured up to a minute (design §7), never longer, in either form. */
    CHECK_I64("at the cap", hr_kretry_after_ms("60", 2, now), 60000);
    CHECK_I64("over the cap", hr_kretry_after_ms("61", 2, now), 60000);
    CHECK_I64("an hour", hr_kretry_after_ms("3600", 4, now), 60000);
    CHECK_I64("capped", hr_kretry_after_ms("99999999999999999999", 20, now), 60000);
    CHECK_I64("junk", hr_kretry_after_ms("5s", 2, now), 0);
    CHECK_I64("empty", hr_kretry_after_ms("", 0, now), 0);
    const char *d = "Mon, 30 Nov 2026 08:00:30 GMT";
    CHECK_I64("http-date", hr_kretry_after_ms(d, strlen(d), now), 30000);
    d = "Mon, 30 Nov 2026 07:00:00 GMT";
    CHECK_I64("past date", hr_kretry_after_ms(d, strlen(d), now), 0);
    d = "Mon, 30 Nov 2026 10:00:00 GMT";
    CHECK_I64("far date", hr_kretry_after_ms(d, strlen(d), now), 60000);
}

/* -------------------------------------------------------------- client */

static char g_kc[256];

static void write_kubeconfig(const char *server)
{
    snprintf(g_kc, sizeof g_kc, "/tmp/hr-kt-%d.yaml", (int)getpid());
    FILE *f = fopen(g_kc, "w");
    assert_non_null(f);
    fprintf(f,
            "current-context: x\ncontexts:\n- name: x\n  context: {cluster: c, user: u, "
            "namespace: ns1}\nclusters:\n- name: c\n  cluster: {server: '%s'}\n"
            "users:\n- name: u\n  user: {token: secret}\n",
            server);
    assert_int_equal(fclose(f), 0);
}

static int stop_line(void *ud, const char *line, size_t len)
{
    (void)ud, (void)line, (void)len;
    return 1;
}

typedef struct write_waiter {
    hr_kclient *c;
    hr_status st;
    hr_err e;
    _Atomic int64_t done_ns;
} write_waiter;

static void *write_waiter_main(void *p)
{
    write_waiter *t = p;
    t->st = hr_kclient_merge_patch(t->c, "/api/v1/namespaces/a/pods/b", "{}", 2, NULL, NULL, &t->e);
    atomic_store(&t->done_ns, hr_mono_ns());
    return NULL;
}

/* The same through the client: hr_kclient_abandon_writes wakes a write
 * waiting for its token; it sends nothing and says so. */
static void test_client_abandon_writes(void **state)
{
    (void)state;
    write_kubeconfig("https://127.0.0.1:1");
    hr_kclient_opts o = {.kubeconfig = g_kc, .timeout_ms = 3000, .qps = 0.1, .burst = 1};
    hr_kclient *c = NULL;
    hr_err e = {0};
    if (hr_kclient_new(&o, &c, &e) != HR_OK)
        fail_msg("%s", e.msg);
    /* The burst token: refused at once by port 1. */
    assert_int_equal(
        hr_kclient_merge_patch(c, "/api/v1/namespaces/a/pods/b", "{}", 2, NULL, NULL, &e), HR_E_IO);
    write_waiter t = {c, HR_OK, {0}, 0};
    pthread_t th;
    assert_int_equal(pthread_create(&th, NULL, write_waiter_main, &t), 0);
    hr_mono_sleep_ms(50);
    CHECK_TRUE("write waits for its token", atomic_load(&t.done_ns) == 0);
    int64_t t0 = hr_mono_ns();
    hr_kclient_abandon_writes(c, true);
    pthread_join(th, NULL);
    int64_t ms = (atomic_load(&t.done_ns) - t0) / 1000000;
    if (ms > 100)
        fail_msg("write ended %" PRId64 " ms after abandon, want < 100", ms);
    assert_int_equal(t.st, HR_E_CANCELED);
    assert_non_null(strstr(t.e.msg, "abandoned on shutdown"));
    hr_kclient_free(c);
}

/* What the client reported (hr_krequest_fn), in order. */
typedef struct seen_req {
    char log[256];
} seen_req;

static void on_request(void *ud, const char *verb, long code, uint64_t ns)
{
    (void)ns;
    seen_req *s = ud;
    size_t n = strlen(s->log);
    snprintf(s->log + n, sizeof s->log - n, "%s:%ld ", verb, code);
}

static void test_client_nothing_listens(void **state)
{
    (void)state;
    /* Port 1 on loopback: refused at once. */
    write_kubeconfig("https://127.0.0.1:1");
    seen_req seen = {{0}};
    hr_kclient_opts o = {.kubeconfig = g_kc,
                         .timeout_ms = 3000,
                         .qps = 1000,
                         .burst = 10,
                         .on_request = on_request,
                         .on_request_ud = &seen};
    hr_kclient *c = NULL;
    hr_err e = {0};
    if (hr_kclient_new(&o, &c, &e) != HR_OK)
        fail_msg("%s", e.msg);
    assert_string_equal(hr_kclient_server(c), "https://127.0.0.1:1");
    assert_string_equal(hr_kclient_namespace(c), "ns1");
    hr_kresult res = {.status = 99};
    hr_buf b;
    hr_buf_init(&b, 0);
    assert_int_equal(hr_kclient_do(c, "GET", "/version", NULL, NULL, 0, &b, &res, &e), HR_E_IO);
    assert_int_equal(res.status, 0);
    assert_non_null(strstr(e.msg, "GET /version: https://127.0.0.1:1"));
    assert_int_equal(hr_kclient_apply(c, "/api/v1/namespaces/a/pods/b/resize", "headroom", true,
                                      "{}", 2, NULL, &res, &e),
                     HR_E_IO);
    assert_non_null(strstr(e.msg, "PATCH /api/v1/namespaces/a/pods/b/resize?fieldManager=headroom"
                                  "&force=true"));
    assert_int_equal(
        hr_kclient_stream(c, "/api/v1/pods?watch=1", 5, stop_line, NULL, NULL, &res, &e), HR_E_IO);
    assert_int_equal(res.status, 0);
    /* Bad paths never reach the network. */
    assert_int_equal(hr_kclient_do(c, "GET", "api/v1", NULL, NULL, 0, &b, &res, &e), HR_E_INPUT);
    assert_int_equal(hr_kclient_do(c, "GET", "/a b", NULL, NULL, 0, &b, &res, &e), HR_E_INPUT);
    assert_int_equal(hr_kclient_do(c, "GET", "/a\r\nX: y", NULL, NULL, 0, &b, &res, &e),
                     HR_E_INPUT);
    /* Each request sent is reported, a transport failure as code 0; a bad
     * path was never sent (design §9.3, headroom_api_requests_total). */
    assert_string_equal(seen.log, "get:0 patch:0 watch:0 ");
    long d = hr_kclient_backoff_ms(c, 2, 100, 1000, 0);
    CHECK_TRUE("client backoff", d >= 200 && d < 600);
    hr_kclient_set_rate(c, 5, 1);
    hr_buf_free(&b);
    hr_kclient_free(c);

    /* A bad kubeconfig fails hr_kclient_new with the kubeconfig's error. */
    o.kubeconfig = "/nonexistent/kubeconfig";
    assert_int_not_equal(hr_kclient_new(&o, &c, &e), HR_OK);
    assert_null(c);
    assert_non_null(strstr(e.msg, "/nonexistent/kubeconfig"));
    unlink(g_kc);
}

static void test_kverb(void **state)
{
    (void)state;
    static const struct {
        const char *method, *path;
        bool stream;
        const char *want;
    } t[] = {
        {"GET", "/api/v1/pods?limit=500", false, "list"},
        {"GET", "/api/v1/namespaces", false, "list"},
        {"GET", "/api/v1/namespaces/ns1", false, "get"},
        {"GET", "/api/v1/namespaces/ns1/pods", false, "list"},
        {"GET", "/api/v1/namespaces/ns1/pods/p", false, "get"},
        {"GET", "/api/v1/namespaces/ns1/pods/p/status", false, "get"},
        {"GET", "/api/v1/nodes/n1", false, "get"},
        {"GET", "/apis/kube-headroom.dev/v1alpha1/headroomconfigs", false, "list"},
        {"GET", "/apis/kube-headroom.dev/v1alpha1/headroomconfigs/cluster", false, "get"},
        {"GET", "/apis/coordination.k8s.io/v1/namespaces/x/leases/kube-headroom", false, "get"},
        {"GET", "/api/v1/pods?watch=1&resourceVersion=5", true, "watch"},
        {"GET", "/api/v1/pods?resourceVersion=5&watch=true", false, "watch"},
        {"GET", "/api/v1/pods?watchy=1", false, "list"},
        {"GET", "/api/v1/watch/pods", false, "watch"},
        {"GET", "/version", false, "get"},
        {"GET", "/api/v1", false, "get"},
        {"GET", "/apis/apps", false, "get"},
        {"POST", "/apis/authentication.k8s.io/v1/tokenreviews", false, "create"},
        {"PUT", "/apis/coordination.k8s.io/v1/namespaces/x/leases/l", false, "update"},
        {"PATCH", "/api/v1/namespaces/a/pods/b/resize?fieldManager=headroom", false, "patch"},
        {"DELETE", "/api/v1/namespaces/a/pods/b", false, "delete"},
        {"OPTIONS", "/api/v1/pods", false, "other"},
    };
    for (size_t i = 0; i < sizeof t / sizeof t[0]; i++) {
        const char *got = hr_kverb(t[i].method, t[i].path, t[i].stream);
        if (strcmp(got, t[i].want) != 0)
            fail_msg("%s %s: %s, want %s", t[i].method, t[i].path, got, t[i].want);
    }
}

static void test_client_stop_flag(void **state)
{
    (void)state;
    /* A TEST-NET address never answers: the connect hangs, and the stop
     * flag (already set) must end the stream within the poll interval,
     * returning HR_OK, instead of waiting for the connect timeout. */
    write_kubeconfig("https://192.0.2.1:6443");
    hr_kclient_opts o = {.kubeconfig = g_kc};
    hr_kclient *c = NULL;
    hr_err e = {0};
    assert_int_equal(hr_kclient_new(&o, &c, &e), HR_OK);
    atomic_bool stop = true;
    int64_t t0 = hr_mono_ns();
    hr_kresult res;
    assert_int_equal(
        hr_kclient_stream(c, "/api/v1/pods?watch=1", 0, stop_line, NULL, &stop, &res, &e), HR_OK);
    int64_t ms = (hr_mono_ns() - t0) / 1000000;
    if (ms > 1000)
        fail_msg("stop flag took %" PRId64 " ms", ms);
    hr_kclient_free(c);
    unlink(g_kc);
}

/* ------------------------------------------------------- the write lease */

/* design §10: a request ends by the lease, and not at all once it is up. */
static void test_timeout_until(void **state)
{
    (void)state;
    assert_int_equal(hr_kclient_timeout_ms(30000, HR_KUNTIL_NONE, 5), 30000);
    assert_int_equal(hr_kclient_timeout_ms(30000, 10005, 5), 10000); /* cut to the lease */
    assert_int_equal(hr_kclient_timeout_ms(3000, 10005, 5), 3000);   /* the timeout is shorter */
    assert_int_equal(hr_kclient_timeout_ms(30000, 6, 5), 1);
    assert_int_equal(hr_kclient_timeout_ms(30000, 5, 5), 0); /* up: send nothing */
    assert_int_equal(hr_kclient_timeout_ms(30000, 0, 5), 0); /* not leading */
    assert_int_equal(hr_kclient_timeout_ms(30000, INT64_MIN, 5), 0);
}

static _Atomic int64_t g_lease_until;
static int64_t lease_until(void *ud)
{
    (void)ud;
    return atomic_load(&g_lease_until);
}

/* The lease is asked after the limiter wait, not before it: a write that
 * waited past the lease sends nothing (HR_E_EXPIRED), and reads and the
 * unlimited path (the Lease itself) are never asked. */
static void test_client_lease_after_wait(void **state)
{
    (void)state;
    write_kubeconfig("https://127.0.0.1:1");
    hr_kclient_opts o = {.kubeconfig = g_kc, .timeout_ms = 3000, .qps = 2, .burst = 1};
    hr_kclient *c = NULL;
    hr_err e = {0};
    if (hr_kclient_new(&o, &c, &e) != HR_OK)
        fail_msg("%s", e.msg);
    atomic_store(&g_lease_until, hr_mono_ms() + 250);
    hr_kclient_set_write_lease(c, lease_until, NULL);
    /* The burst token, inside the lease: sent (port 1 refuses it). */
    assert_int_equal(
        hr_kclient_merge_patch(c, "/api/v1/namespaces/a/pods/b", "{}", 2, NULL, NULL, &e), HR_E_IO);
    /* The next token comes 500 ms later, after the lease. */
    int64_t t0 = hr_mono_ms();
    assert_int_equal(
        hr_kclient_merge_patch(c, "/api/v1/namespaces/a/pods/b", "{}", 2, NULL, NULL, &e),
        HR_E_EXPIRED);
    int64_t waited = hr_mono_ms() - t0;
    if (waited < 350)
        fail_msg("refused after %" PRId64 " ms: asked before the limiter wait", waited);
    assert_non_null(strstr(e.msg, "not sent"));
    /* Reads and the Lease's own requests are not the lease's business. */
    assert_int_equal(hr_kclient_do(c, "GET", "/version", NULL, NULL, 0, NULL, NULL, &e), HR_E_IO);
    assert_int_equal(hr_kclient_do_unlimited(c, "PUT", "/x", NULL, "{}", 2, NULL, NULL, &e),
                     HR_E_IO);
    /* A read with a deadline of its own that has passed is not sent. */
    assert_int_equal(hr_kclient_do_as(c, hr_mono_ms() - 1, "GET", "/version", NULL, NULL, NULL, 0,
                                      NULL, NULL, &e),
                     HR_E_EXPIRED);
    hr_kclient_set_write_lease(c, NULL, NULL);
    hr_kclient_set_rate(c, 1000, 10);
    assert_int_equal(
        hr_kclient_merge_patch(c, "/api/v1/namespaces/a/pods/b", "{}", 2, NULL, NULL, &e), HR_E_IO);
    hr_kclient_free(c);
    unlink(g_kc);
}

/* A stalled server: it accepts (the kernel's backlog does) and never says a
 * word. The write ends when the lease does, not at its 30 s timeout, and its
 * connection is not kept: it is closed with a reset (SO_LINGER {1, 0}), the
 * close that keeps a server that wakes up from running the request. */
typedef struct stalled {
    int lfd;
    int got_reset; /* 1: ECONNRESET after the bytes; 0: FIN; -1: nothing */
    _Atomic bool client_done;
} stalled;

static void *stalled_main(void *p)
{
    stalled *s = p;
    int fd = accept(s->lfd, NULL, NULL);
    s->got_reset = -1;
    if (fd < 0)
        return NULL;
    while (!atomic_load(&s->client_done)) {
        hr_mono_sleep_ms(10);
    }
    char buf[4096];
    for (;;) {
        ssize_t n = recv(fd, buf, sizeof buf, 0);
        if (n > 0)
            continue; /* what the kernel had buffered: the TLS hello */
        s->got_reset = n < 0 && errno == ECONNRESET ? 1 : 0;
        break;
    }
    close(fd);
    return NULL;
}

static void test_client_lease_bounds_stalled_write(void **state)
{
    (void)state;
    stalled s = {.lfd = socket(AF_INET, SOCK_STREAM, 0)};
    assert_true(s.lfd >= 0);
    struct sockaddr_in a = {.sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
    socklen_t al = sizeof a;
    assert_int_equal(bind(s.lfd, (struct sockaddr *)&a, sizeof a), 0);
    assert_int_equal(listen(s.lfd, 4), 0);
    assert_int_equal(getsockname(s.lfd, (struct sockaddr *)&a, &al), 0);
    char url[64];
    snprintf(url, sizeof url, "https://127.0.0.1:%d", ntohs(a.sin_port));
    write_kubeconfig(url);
    pthread_t th;
    assert_int_equal(pthread_create(&th, NULL, stalled_main, &s), 0);
    /* The request's own timeout is far (30 s) from the lease (400 ms), so
     * "ended by the lease" is told from "ended by its timeout" with a wide
     * margin: under ThreadSanitizer on a loaded machine the TLS setup alone
     * can take seconds. */
    hr_kclient_opts o = {.kubeconfig = g_kc, .timeout_ms = 30000};
    hr_kclient *c = NULL;
    hr_err e = {0};
    if (hr_kclient_new(&o, &c, &e) != HR_OK)
        fail_msg("%s", e.msg);
    int64_t t0 = hr_mono_ms();
    atomic_store(&g_lease_until, t0 + 400);
    hr_kclient_set_write_lease(c, lease_until, NULL);
    assert_int_equal(
        hr_kclient_merge_patch(c, "/api/v1/namespaces/a/pods/b", "{}", 2, NULL, NULL, &e), HR_E_IO);
    int64_t took = hr_mono_ms() - t0;
    if (took < 350 || took > 10000)
        fail_msg("the stalled write ended after %" PRId64 " ms, want ~400 (the lease), not 30 s",
                 took);
    assert_non_null(strstr(e.msg, "timed out"));
    atomic_store(&s.client_done, true);
    pthread_join(th, NULL);
    assert_int_equal(s.got_reset, 1); /* reset, not FIN, and not left open */
    hr_kclient_free(c);
    close(s.lfd);
    unlink(g_kc);
}

/* The resident pages of the mapped library whose path holds name (kB),
 * from /proc/self/smaps; 0 when it is not mapped. */
static long mapped_rss_kb(const char *name)
{
    FILE *f = fopen("/proc/self/smaps", "r");
    assert_non_null(f);
    char line[512];
    long kb = 0;
    bool in = false;
    while (fgets(line, sizeof line, f)) {
        unsigned long lo, hi;
        if (sscanf(line, "%lx-%lx ", &lo, &hi) == 2)
            in = strstr(line, name) != NULL;
        else if (in && strncmp(line, "Rss:", 4) == 0)
            kb += atol(line + 4);
    }
    fclose(f);
    return kb;
}

/* libcurl's global init leaves OpenSSL's libcrypto (which libssh2 brings
 * in) uninitialised: 1.4 MB of it resident, against 2.8 MB when libssh2's
 * init loads every cipher and the config file (curlproc.c). */
static void test_global_init_skips_ssh_crypto(void **state)
{
    (void)state;
    hr_err e = {0};
    assert_int_equal(hr_kcurl_global_init(&e), HR_OK);
    long kb = mapped_rss_kb("libcrypto.so");
    printf("# libcrypto resident after the global init: %ld kB\n", kb);
    assert_true(kb < 2048);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_backoff_bounds),
        cmocka_unit_test(test_limiter_fake_clock),
        cmocka_unit_test(test_limiter_pacing_live_change),
        cmocka_unit_test(test_limiter_batched_ticks),
        cmocka_unit_test(test_limiter_threads_real_clock),
        cmocka_unit_test(test_limiter_wait_stops),
        cmocka_unit_test(test_lines_every_split),
        cmocka_unit_test(test_lines_limit_stop_tail),
        cmocka_unit_test(test_lines_big),
        cmocka_unit_test(test_status_errors),
        cmocka_unit_test(test_retry_after),
        cmocka_unit_test(test_client_nothing_listens),
        cmocka_unit_test(test_kverb),
        cmocka_unit_test(test_global_init_skips_ssh_crypto),
        cmocka_unit_test(test_client_abandon_writes),
        cmocka_unit_test(test_client_stop_flag),
        cmocka_unit_test(test_timeout_until),
        cmocka_unit_test(test_client_lease_after_wait),
        cmocka_unit_test(test_client_lease_bounds_stalled_write),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
