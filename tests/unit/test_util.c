/*
 * test_util.c — the shared small helpers: the monotonic clock, the PRNG,
 * FNV-1a, base64, the log levels and sink, the wipe of secrets, sealed
 * memory files, the waker's quiet time, and the core's saturating
 * arithmetic.
 *
 * Known answers pin the values others depend on: a seed's sequence (tests
 * replay with HR_SEED), the hash values (the tables' slot order, and so
 * the order of the gauges on /metrics), and the RFC 4648 vectors.
 */
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include <cmocka.h>

#include "core/wide.h"
#include "hr_check.h"
#include "hr_switches.h"
#include "hr_testfile.h"
#include "util/base64.h"
#include "util/buf.h"
#include "util/clock.h"
#include "util/hash.h"
#include "util/log.h"
#include "util/memfile.h"
#include "util/prng.h"
#include "util/tname.h"
#include "util/urlenc.h"
#include "util/waker.h"
#include "util/wipe.h"

static void test_clock(void **state)
{
    (void)state;
    int64_t a = hr_mono_ns(), b = hr_mono_ns();
    CHECK_TRUE("monotonic", b >= a);
    int64_t ms = hr_mono_ms();
    CHECK_TRUE("ms follows ns", ms >= a / 1000000 && ms <= hr_mono_ns() / 1000000);

    struct timespec ts = hr_mono_timespec(INT64_C(12345678901));
    CHECK_I64("timespec s", ts.tv_sec, 12);
    CHECK_I64("timespec ns", ts.tv_nsec, 345678901);

    int64_t until = hr_mono_ns() + 5 * 1000000;
    hr_mono_sleep_until(until);
    CHECK_TRUE("slept to the deadline", hr_mono_ns() >= until);
    hr_mono_sleep_until(0); /* passed: returns at once */
    int64_t t0 = hr_mono_ns();
    hr_mono_sleep_ms(5);
    CHECK_TRUE("slept 5 ms", hr_mono_ns() - t0 >= 5 * 1000000);

    /* A timed wait on the monotonic clock ends at its deadline. */
    pthread_mutex_t mu = PTHREAD_MUTEX_INITIALIZER;
    pthread_cond_t cv;
    assert_int_equal(hr_mono_cond_init(&cv), 0);
    pthread_mutex_lock(&mu);
    until = hr_mono_ns() + 5 * 1000000;
    struct timespec dl = hr_mono_timespec(until);
    int rc = 0;
    while (rc == 0)
        rc = pthread_cond_timedwait(&cv, &mu, &dl);
    pthread_mutex_unlock(&mu);
    CHECK_I64("timed out", rc, ETIMEDOUT);
    CHECK_TRUE("not before the deadline", hr_mono_ns() >= until);
    pthread_cond_destroy(&cv);
}

static void test_prng(void **state)
{
    (void)state;
    /* splitmix64's reference outputs. */
    hr_prng r;
    hr_prng_seed(&r, 0);
    assert_true(hr_prng_next(&r) == UINT64_C(0xe220a8397b1dcdaf));
    assert_true(hr_prng_next(&r) == UINT64_C(0x6e789e6aa1b965f4));
    assert_true(hr_prng_next(&r) == UINT64_C(0x06c45d188009454f));
    hr_prng_seed(&r, 42);
    assert_true(hr_prng_next(&r) == UINT64_C(0xbdd732262feb6e95));

    /* below: in range, draws once even for n 0 and 1. */
    hr_prng a, b;
    hr_prng_seed(&a, 7);
    hr_prng_seed(&b, 7);
    CHECK_I64("below 0", hr_prng_below(&a, 0), 0);
    CHECK_I64("below 1", hr_prng_below(&a, 1), 0);
    hr_prng_next(&b);
    hr_prng_next(&b);
    assert_true(hr_prng_next(&a) == hr_prng_next(&b));
    for (int i = 0; i < 10000; i++)
        CHECK_TRUE("below 10", hr_prng_below(&a, 10) < 10);

    /* unit in [0, 1); jitter in [p/2, p], never past the period, and it
     * spreads over that half. */
    int64_t lo = INT64_MAX, hi = 0;
    for (int i = 0; i < 10000; i++) {
        double u = hr_prng_unit(&a);
        CHECK_TRUE("unit", u >= 0 && u < 1);
        int64_t j = hr_prng_jitter(&a, 1000);
        CHECK_TRUE("jitter", j >= 500 && j <= 1000);
        if (j < lo)
            lo = j;
        if (j > hi)
            hi = j;
    }
    CHECK_TRUE("jitter spreads", hi - lo > 450);
    uint64_t before = a.s;
    CHECK_I64("jitter of 0", hr_prng_jitter(&a, 0), 0);
    CHECK_I64("jitter of -5", hr_prng_jitter(&a, -5), 0);
    assert_true(a.s == before);

    hr_prng_seed_random(&a);
    hr_prng_seed_random(&b);
    assert_true(hr_prng_next(&a) != hr_prng_next(&b));
}

static void test_hash(void **state)
{
    (void)state;
    /* FNV-1a 32 reference values. */
    assert_true(hr_fnv1a32("", 0) == UINT32_C(0x811c9dc5));
    assert_true(hr_fnv1a32("a", 1) == UINT32_C(0xe40c292c));
    assert_true(hr_fnv1a32("foobar", 6) == UINT32_C(0xbf9cf968));
    /* In pieces, the same. */
    uint32_t h = hr_fnv1a32_add(HR_FNV32_BASIS, "foo", 3);
    assert_true(hr_fnv1a32_add(h, "bar", 3) == UINT32_C(0xbf9cf968));
    /* The tables' 64-bit basis: these values fix the slot order. */
    assert_true(hr_fnv1a64_str(HR_FNV64_BASIS_TABLE, "") == UINT64_C(0x14650fb0739d0383));
    assert_true(hr_fnv1a64_str(HR_FNV64_BASIS_TABLE, "node-1") == UINT64_C(0xfe73e12fe71a5611));
}

static void test_base64(void **state)
{
    (void)state;
    static const char *const vec[][2] = {
        {"", ""},
        {"f", "Zg=="},
        {"fo", "Zm8="},
        {"foo", "Zm9v"},
        {"foob", "Zm9vYg=="},
        {"fooba", "Zm9vYmE="},
        {"foobar", "Zm9vYmFy"},
    };
    for (size_t i = 0; i < sizeof vec / sizeof vec[0]; i++) {
        char enc[16];
        size_t n = strlen(vec[i][0]);
        CHECK_I64(vec[i][1], hr_b64_encode((const unsigned char *)vec[i][0], n, enc),
                  strlen(vec[i][1]));
        assert_string_equal(enc, vec[i][1]);
        hr_buf b;
        hr_buf_init(&b, 0);
        hr_buf_b64(&b, vec[i][0], n);
        assert_string_equal(hr_buf_str(&b), vec[i][1]);
        hr_buf_free(&b);
    }
    /* Across hr_buf_b64's chunks: the same as one encode, and decodes back. */
    for (size_t n = 760; n < 1600; n += 7) {
        unsigned char *raw = malloc(n);
        char *enc = malloc(hr_b64_enc_len(n) + 1);
        unsigned char *back = malloc(hr_b64_max(hr_b64_enc_len(n)));
        for (size_t k = 0; k < n; k++)
            raw[k] = (unsigned char)(k * 131 + n);
        hr_b64_encode(raw, n, enc);
        hr_buf b;
        hr_buf_init(&b, 0);
        hr_buf_b64(&b, raw, n);
        assert_string_equal(hr_buf_str(&b), enc);
        CHECK_I64("round trip", hr_b64_decode(hr_buf_str(&b), b.len, back, NULL), n);
        assert_memory_equal(back, raw, n);
        hr_buf_free(&b);
        free(raw);
        free(enc);
        free(back);
    }
}

typedef struct captured {
    int level;
    char msg[64];
} captured;

static void capture(void *ud, int level, const char *msg)
{
    captured *c = ud;
    c->level = level;
    snprintf(c->msg, sizeof c->msg, "%s", msg);
}

static void test_log(void **state)
{
    (void)state;
    assert_string_equal(hr_log_level_name(HR_LV_ERROR), "error");
    assert_string_equal(hr_log_level_name(HR_LV_WARN), "warn");
    assert_string_equal(hr_log_level_name(HR_LV_INFO), "info");
    assert_string_equal(hr_log_level_name(HR_LV_DEBUG), "debug");
    assert_string_equal(hr_log_level_name(-1), "error");
    assert_string_equal(hr_log_level_name(9), "debug");

    captured c = {-1, ""};
    hr_logger l = {capture, &c};
    hr_logf(&l, HR_LV_WARN, "msg=\"x\" n=%d", 3);
    CHECK_I64("level", c.level, HR_LV_WARN);
    assert_string_equal(c.msg, "msg=\"x\" n=3");
    hr_logf(NULL, HR_LV_INFO, "nothing");
    hr_logger none = {NULL, NULL};
    hr_logf(&none, HR_LV_INFO, "nothing");
}

/* Query values: unreserved bytes as they are, every other byte %XX. */
static void test_urlenc(void **state)
{
    (void)state;
    hr_buf b;
    hr_buf_init(&b, 0);
    hr_buf_urlenc(&b, "headroom");
    hr_buf_urlenc(&b, "|A-z.0_9~|");
    hr_buf_urlenc(&b, "a b&c=d/\xc3\xa9%");
    assert_false(hr_buf_failed(&b));
    assert_string_equal(hr_buf_str(&b), "headroom%7CA-z.0_9~%7Ca%20b%26c%3Dd%2F%C3%A9%25");
    hr_buf_free(&b);
}

/* The name a thread gives itself is what /proc shows for it, cut at 15
 * bytes. */
static void *named_main(void *ud)
{
    char *got = ud;
    hr_thread_name("hr-n-%s", "abcdefghijklmnop");
    FILE *f = fopen("/proc/thread-self/comm", "r");
    if (f != NULL) {
        if (fgets(got, 32, f) == NULL)
            got[0] = 0;
        fclose(f);
    }
    return NULL;
}

static void test_thread_name(void **state)
{
    (void)state;
    char got[32] = "";
    pthread_t th;
    assert_int_equal(pthread_create(&th, NULL, named_main, got), 0);
    assert_int_equal(pthread_join(th, NULL), 0);
    assert_string_equal(got, "hr-n-abcdefghij\n");
}

static void test_wipe(void **state)
{
    (void)state;
    char key[] = "-----BEGIN PRIVATE KEY-----";
    hr_wipe(key, 5);
    assert_memory_equal(key, "\0\0\0\0\0BEGIN", 10);
    hr_wipe_str(key + 5); /* the string's length: up to its NUL */
    for (size_t i = 0; i < sizeof key; i++)
        assert_int_equal(key[i], 0);
    hr_wipe(NULL, 3); /* nothing to do, no crash */
    hr_wipe_str(NULL);
}

/* A sealed memory file: its path reads the bytes back, nobody can change
 * them, no child inherits it, a generation spells the path differently
 * (the same file), the close ends the path. */
static void test_memfile(void **state)
{
    (void)state;
    const char pem[] = "-----BEGIN CERTIFICATE-----\nMIIB\n-----END CERTIFICATE-----\n";
    hr_memfile f, g, z;
    hr_err e = {0};
    memset(&z, 0, sizeof z);
    hr_memfile_close(&z); /* a zeroed one is closed: nothing to do */
    if (hr_memfile_open(&f, "hr-test", pem, strlen(pem), 0, &e) != HR_OK)
        fail_msg("%s", e.msg);
    char want[64], buf[256];
    snprintf(want, sizeof want, "/proc/self/fd/%d", f.fd);
    assert_string_equal(f.path, want);
    assert_int_equal(read_path(f.path, buf, sizeof buf), (ssize_t)strlen(pem));
    assert_string_equal(buf, pem);
    /* Sealed: no write, no shrink, no grow, through any descriptor. */
    CHECK_TRUE("no write", write(f.fd, "x", 1) < 0 && errno == EPERM);
    CHECK_TRUE("no shrink", ftruncate(f.fd, 1) < 0 && errno == EPERM);
    CHECK_TRUE("no grow", ftruncate(f.fd, 4096) < 0 && errno == EPERM);
    int w = open(f.path, O_WRONLY | O_CLOEXEC);
    CHECK_TRUE("no write through the path", w < 0 || (write(w, "x", 1) < 0 && errno == EPERM));
    if (w >= 0)
        close(w);
    int seals = fcntl(f.fd, F_GET_SEALS);
    CHECK_TRUE("sealed", seals >= 0 && (seals & F_SEAL_WRITE) && (seals & F_SEAL_SHRINK) &&
                             (seals & F_SEAL_GROW));
    CHECK_TRUE("close-on-exec", fcntl(f.fd, F_GETFD) & FD_CLOEXEC);

    /* Generations: "./" for a 1 bit, "/" for a 0, from the highest 1 down. */
    if (hr_memfile_open(&g, "hr-test-gen", pem, strlen(pem), 5, &e) != HR_OK)
        fail_msg("%s", e.msg);
    snprintf(want, sizeof want, "/proc/self/fd/.//./%d", g.fd);
    assert_string_equal(g.path, want);
    assert_int_equal(read_path(g.path, buf, sizeof buf), (ssize_t)strlen(pem));
    struct stat a, b;
    assert_int_equal(stat(g.path, &a), 0);
    assert_int_equal(fstat(g.fd, &b), 0);
    assert_true(a.st_ino == b.st_ino && a.st_dev == b.st_dev);
    /* Closed and opened again, a file gets the same number: each generation
     * still spells a path of its own. */
    const uint64_t gens[] = {0, 1, 2, 3, 4, 6, UINT64_MAX};
    enum { NG = sizeof gens / sizeof gens[0] };
    char seen[NG][HR_MEMFILE_PATH_MAX];
    for (size_t i = 0; i < NG; i++) {
        hr_memfile h;
        if (hr_memfile_open(&h, "hr-test-gens", "x", 1, gens[i], &e) != HR_OK)
            fail_msg("%s", e.msg);
        assert_int_equal(read_path(h.path, buf, sizeof buf), 1);
        snprintf(seen[i], sizeof seen[i], "%s", h.path);
        assert_string_equal(strrchr(seen[i], '/'), strrchr(seen[0], '/'));
        for (size_t j = 0; j < i; j++)
            assert_string_not_equal(seen[i], seen[j]);
        hr_memfile_close(&h);
    }
    hr_memfile_close(&g);
    char path[HR_MEMFILE_PATH_MAX];
    snprintf(path, sizeof path, "%s", f.path);
    hr_memfile_close(&f);
    assert_string_equal(f.path, "");
    assert_int_equal(read_path(path, buf, sizeof buf), -1);
    hr_memfile_close(&f); /* twice: nothing to do */
}

static void test_wide(void **state)
{
    (void)state;
    CHECK_I64("min", hr_min64(-3, 2), -3);
    CHECK_I64("max", hr_max64(-3, 2), 2);
    CHECK_I64("sadd", hr_sadd64(40, 2), 42);
    CHECK_I64("sadd neg", hr_sadd64(40, -50), -10);
    CHECK_I64("sadd up", hr_sadd64(INT64_MAX - 1, 5), INT64_MAX);
    CHECK_I64("sadd down", hr_sadd64(INT64_MIN + 1, -5), INT64_MIN);
    CHECK_I64("muldiv", hr_muldiv64(7, 3, 2), 10);
    /* The product exceeds 64 bits; the quotient does not. */
    CHECK_I64("muldiv wide", hr_muldiv64(INT64_MAX, 1000, 2000), INT64_MAX / 2);
    CHECK_I64("muldiv saturates", hr_muldiv64(INT64_MAX, 3, 2), INT64_MAX);
}

typedef struct quiet_waiter {
    hr_waker *w;
    int64_t earliest_ns;
    _Atomic long tid;
    _Atomic int64_t done_ns;
} quiet_waiter;

static void *quiet_waiter_main(void *p)
{
    quiet_waiter *q = p;
    atomic_store(&q->tid, hr_tid());
    (void)hr_waker_wait_after(q->w, q->earliest_ns, HR_WAKER_NEVER);
    atomic_store(&q->done_ns, hr_mono_ns());
    return NULL;
}

/* hr_waker_wait_after: kicks inside the quiet time neither wake the thread
 * nor get lost — it returns once, at the quiet time's end; after it, a kick
 * wakes it at once. */
static void test_waker_quiet(void **state)
{
    (void)state;
    hr_waker w;
    assert_int_equal(hr_waker_init(&w), 0);
    int64_t t0 = hr_mono_ns();
    quiet_waiter q = {&w, t0 + 300 * 1000000L, 0, 0};
    pthread_t th;
    assert_int_equal(pthread_create(&th, NULL, quiet_waiter_main, &q), 0);
    hr_nap_ms(20);
    long n0 = hr_switches(atomic_load(&q.tid));
    for (int i = 0; i < 20; i++) {
        hr_waker_kick(&w);
        hr_nap_ms(10);
    }
    long n1 = hr_switches(atomic_load(&q.tid));
    CHECK_TRUE("still asleep in the quiet time", atomic_load(&q.done_ns) == 0);
    if (n0 < 0 || n1 - n0 > 2)
        fail_msg("20 kicks in the quiet time woke the waiter %ld times, want at most 2", n1 - n0);
    pthread_join(th, NULL);
    int64_t ms = (atomic_load(&q.done_ns) - t0) / 1000000;
    if (ms < 300 || ms > 450)
        fail_msg("the kept kick returned the wait at %" PRId64 " ms, want 300-450", ms);

    /* Past the quiet time a kick wakes it promptly. */
    q.earliest_ns = hr_mono_ns();
    atomic_store(&q.done_ns, 0);
    assert_int_equal(pthread_create(&th, NULL, quiet_waiter_main, &q), 0);
    hr_nap_ms(50);
    CHECK_TRUE("asleep until kicked", atomic_load(&q.done_ns) == 0);
    int64_t k = hr_mono_ns();
    hr_waker_kick(&w);
    pthread_join(th, NULL);
    ms = (atomic_load(&q.done_ns) - k) / 1000000;
    if (ms > 100)
        fail_msg("a kick after the quiet time took %" PRId64 " ms, want < 100", ms);
    hr_waker_destroy(&w);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_clock),       cmocka_unit_test(test_prng),
        cmocka_unit_test(test_hash),        cmocka_unit_test(test_base64),
        cmocka_unit_test(test_log),         cmocka_unit_test(test_wide),
        cmocka_unit_test(test_urlenc),      cmocka_unit_test(test_wipe),
        cmocka_unit_test(test_memfile),     cmocka_unit_test(test_waker_quiet),
        cmocka_unit_test(test_thread_name),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
