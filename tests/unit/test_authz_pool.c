/*
 * test_authz_pool.c — token reviews off the serving path (design §9.3): a
 * guarded route on a real listener (127.0.0.1, plain HTTP) whose reviewer
 * blocks on a condition variable. With the review pool full of blocked
 * reviews, a token whose verdict is cached still answers at once, a new
 * token is refused 429 at once, a request for a token already in review
 * joins it (no second review), a released review answers every request
 * waiting on it, and stopping the listener answers the waiting ones and
 * returns at once while reviews are still blocked, telling them to give
 * up.
 */
#include <poll.h>
#include <pthread.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include <arpa/inet.h>
#include <netinet/in.h>

#include <cmocka.h>

#include "server/authz.h"
#include "server/http.h"
#include "util/clock.h"

#define THREADS 2
#define PENDING 4

/* The reviewer: "good" is allowed at once, "slow" after 100 ms; "blockN"
 * waits until N (or all) is released, then is denied. */
typedef struct reviewer {
    pthread_mutex_t mu;
    pthread_cond_t cv;
    bool released[PENDING + 2];
    bool all;
    int calls, blocked;
    const atomic_bool *cancel; /* the authorizer's, seen by the last review */
} reviewer;

static reviewer R = {
    PTHREAD_MUTEX_INITIALIZER, PTHREAD_COND_INITIALIZER, {false}, false, 0, 0, NULL};

static hr_authz_verdict review(void *ud, const char *token, const char *verb, const char *path,
                               int64_t until_ms, const atomic_bool *cancel, char *user, size_t cap)
{
    (void)ud;
    (void)verb;
    (void)path;
    (void)until_ms;
    snprintf(user, cap, "t");
    pthread_mutex_lock(&R.mu);
    R.calls++;
    R.cancel = cancel;
    if (strncmp(token, "block", 5) == 0) {
        int n = atoi(token + 5);
        R.blocked++;
        while (!R.all && !R.released[n])
            pthread_cond_wait(&R.cv, &R.mu);
        R.blocked--;
        pthread_mutex_unlock(&R.mu);
        return HR_AUTHZ_DENIED;
    }
    pthread_mutex_unlock(&R.mu);
    if (strcmp(token, "slow") == 0)
        usleep(100000);
    return HR_AUTHZ_ALLOWED;
}

static void release(int n)
{
    pthread_mutex_lock(&R.mu);
    if (n < 0)
        R.all = true;
    else
        R.released[n] = true;
    pthread_cond_broadcast(&R.cv);
    pthread_mutex_unlock(&R.mu);
}

static void page(void *ud, const hr_http_req *req, hr_http_resp *resp)
{
    (void)ud;
    (void)req;
    hr_buf_puts(&resp->body, "page\n");
}

/* A connection to the listener with a GET /metrics for token sent. */
static int send_get(uint16_t port, const char *token)
{
    int fd = socket(AF_INET, SOCK_STREAM, 0);
    assert_true(fd >= 0);
    struct sockaddr_in a = {.sin_family = AF_INET, .sin_port = htons(port)};
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    assert_int_equal(connect(fd, (struct sockaddr *)&a, sizeof a), 0);
    char req[256];
    int n = snprintf(req, sizeof req,
                     "GET /metrics HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer %s\r\n"
                     "Connection: close\r\n\r\n",
                     token);
    assert_int_equal(send(fd, req, (size_t)n, MSG_NOSIGNAL), n);
    return fd;
}

/* What came back on fd within limit_ms, up to the end or the limit (into
 * b); the number of bytes, or -1 when nothing came in time. */
static int answer(int fd, long limit_ms, char *b, size_t cap)
{
    int64_t until = hr_mono_ms() + limit_ms;
    size_t len = 0;
    b[0] = '\0';
    for (;;) {
        int64_t left = until - hr_mono_ms();
        struct pollfd p = {fd, POLLIN, 0};
        if (left <= 0 || poll(&p, 1, (int)left) != 1)
            return len > 0 ? (int)len : -1;
        ssize_t r = recv(fd, b + len, cap - 1 - len, 0);
        if (r <= 0)
            return (int)len; /* the end: 0 is a close without an answer */
        len += (size_t)r;
        b[len] = '\0';
        if (len == cap - 1)
            return (int)len;
    }
}

/* One request; its status line's code, the elapsed ms in *ms. */
static int get_status(uint16_t port, const char *token, int64_t *ms, char *b, size_t cap)
{
    int64_t t0 = hr_mono_ms();
    int fd = send_get(port, token);
    int n = answer(fd, 2000, b, cap);
    *ms = hr_mono_ms() - t0;
    close(fd);
    int code = 0;
    if (n > 0 && sscanf(b, "HTTP/1.%*d %d", &code) != 1)
        code = 0;
    return code;
}

/* Two GETs for token on one keep-alive connection: how many got 200. */
static int keepalive_twice(uint16_t port, const char *token)
{
    int fd = socket(AF_INET, SOCK_STREAM, 0);
    assert_true(fd >= 0);
    struct sockaddr_in a = {.sin_family = AF_INET, .sin_port = htons(port)};
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    assert_int_equal(connect(fd, (struct sockaddr *)&a, sizeof a), 0);
    char req[256], b[2048];
    int n = snprintf(req, sizeof req,
                     "GET /metrics HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer %s\r\n\r\n", token);
    int ok = 0;
    for (int i = 0; i < 2; i++) {
        if (send(fd, req, (size_t)n, MSG_NOSIGNAL) != n)
            break;
        /* The whole answer: headers and the 5-byte body "page\n". */
        size_t len = 0;
        b[0] = '\0';
        while (strstr(b, "page\n") == NULL && len < sizeof b - 1) {
            struct pollfd p = {fd, POLLIN, 0};
            if (poll(&p, 1, 2000) != 1)
                break;
            ssize_t r = recv(fd, b + len, sizeof b - 1 - len, 0);
            if (r <= 0)
                break;
            len += (size_t)r;
            b[len] = '\0';
        }
        if (strncmp(b, "HTTP/1.1 200", 12) != 0 || strstr(b, "page\n") == NULL)
            break;
        ok++;
    }
    close(fd);
    return ok;
}

static void wait_outstanding(hr_authz *a, uint64_t want_running, uint64_t want_queued)
{
    hr_authz_stats s;
    for (int i = 0; i < 400; i++) {
        hr_authz_get_stats(a, &s);
        if (s.in_flight == want_running && s.queued == want_queued)
            return;
        usleep(5000);
    }
    fail_msg("reviews: %llu running, %llu queued; want %llu and %llu",
             (unsigned long long)s.in_flight, (unsigned long long)s.queued,
             (unsigned long long)want_running, (unsigned long long)want_queued);
}

static void pool_full_and_stop(void **state)
{
    (void)state;
    hr_authz_opts ao = {.review = review, .threads = THREADS, .max_pending = PENDING};
    hr_authz *a;
    hr_err err;
    assert_int_equal(hr_authz_new(&ao, &a, &err), HR_OK);
    hr_route routes[] = {{"GET", "/metrics", page, NULL, 0, true}};
    hr_listener_opts lo = {.name = "t",
                           .addr = "127.0.0.1:0",
                           .authz = a,
                           .routes = routes,
                           .n_routes = 1,
                           .threads = 2};
    hr_listener *l;
    assert_int_equal(hr_listener_start(&lo, &l, &err), HR_OK);
    uint16_t port = hr_listener_port(l);
    char b[2048];
    int64_t ms;

    /* The scraper's verdict is cached first. */
    assert_int_equal(get_status(port, "good", &ms, b, sizeof b), 200);
    assert_non_null(strstr(b, "page"));
    /* A review that ends allowed after the request waited for it. */
    assert_int_equal(get_status(port, "slow", &ms, b, sizeof b), 200);
    assert_non_null(strstr(b, "page"));
    assert_true(ms >= 100);
    /* An allowed request keeps its connection: a scraper's keep-alive
     * one serves the next scrape, both after a review and from the cache. */
    int ka = keepalive_twice(port, "slow2");
    assert_int_equal(ka, 2);
    assert_int_equal(keepalive_twice(port, "slow2"), 2);

    /* Fill the pool, one at a time (so block0 and block1 are the ones
     * running): THREADS reviews blocked, the rest queued. */
    int fd[PENDING + 1];
    for (int i = 0; i < PENDING; i++) {
        char t[16];
        snprintf(t, sizeof t, "block%d", i);
        fd[i] = send_get(port, t);
        unsigned running = i < THREADS ? (unsigned)i + 1 : THREADS;
        wait_outstanding(a, running, (unsigned)i + 1 - running);
    }
    /* One more for a token in review joins it: no new review. */
    fd[PENDING] = send_get(port, "block0");

    /* The cached scrape answers at once, on the listener's two threads. */
    for (int i = 0; i < 5; i++) {
        assert_int_equal(get_status(port, "good", &ms, b, sizeof b), 200);
        assert_true(ms < 100);
    }
    /* A new token is refused at once, with a Retry-After. */
    assert_int_equal(get_status(port, "new-token", &ms, b, sizeof b), 429);
    assert_true(ms < 100);
    assert_non_null(strstr(b, "Retry-After: 1"));
    /* No token at all: 401 without a review. */
    assert_int_equal(get_status(port, "", &ms, b, sizeof b), 401);

    hr_authz_stats s;
    hr_authz_get_stats(a, &s);
    assert_int_equal(s.reviews, 3 + THREADS); /* good, slow, slow2, two blocked */
    assert_int_equal(s.refused, 1);
    assert_int_equal(s.joined, 1);
    hr_buf m;
    hr_buf_init(&m, 0);
    hr_authz_render(a, &m);
    assert_non_null(strstr(hr_buf_str(&m), "\nheadroom_metrics_auth_refused_total 1\n"));
    assert_non_null(strstr(hr_buf_str(&m), "\nheadroom_metrics_auth_reviews_in_flight 2\n"));
    assert_non_null(strstr(hr_buf_str(&m), "\nheadroom_metrics_auth_reviews_queued 2\n"));
    hr_buf_free(&m);

    /* Releasing block0 answers both requests waiting on it. */
    release(0);
    assert_true(answer(fd[0], 2000, b, sizeof b) > 0);
    assert_non_null(strstr(b, "HTTP/1.1 403"));
    assert_true(answer(fd[PENDING], 2000, b, sizeof b) > 0);
    assert_non_null(strstr(b, "HTTP/1.1 403"));
    /* block0's thread took the next queued one: still full. */
    wait_outstanding(a, THREADS, PENDING - THREADS - 1);

    /* Stop with reviews still blocked: at once, and every waiting request
     * is answered 503 or closed — none hangs. */
    int64_t t0 = hr_mono_ms();
    hr_listener_stop(l);
    int64_t stop_ms = hr_mono_ms() - t0;
    assert_true(stop_ms < 500);
    for (int i = 1; i < PENDING; i++) {
        int n = answer(fd[i], 1000, b, sizeof b);
        assert_true(n >= 0); /* an answer or a close, not silence */
        if (n > 0)
            assert_non_null(strstr(b, "HTTP/1.1 503"));
        close(fd[i]);
    }
    close(fd[0]);
    close(fd[PENDING]);
    /* The reviews still blocked were told to give up (this reviewer
     * does not listen: free below waits for them). */
    pthread_mutex_lock(&R.mu);
    assert_int_equal(R.blocked, THREADS);
    assert_true(R.cancel != NULL && atomic_load(R.cancel));
    pthread_mutex_unlock(&R.mu);

    /* After the shutdown nothing new is reviewed. */
    assert_int_equal(hr_authz_check(a, "Bearer other", "get", "/metrics"), HR_AUTHZ_UNAVAILABLE);
    assert_int_equal(hr_authz_check(a, "Bearer good", "get", "/metrics"), HR_AUTHZ_ALLOWED);
    /* free joins the review threads: they end once their reviews return. */
    release(-1);
    hr_authz_free(a);
    assert_int_equal(R.blocked, 0);
}

/* A guarded route that takes a body is refused at start (a request that
 * waited for its review is answered without reading on). */
static void guarded_takes_no_body(void **state)
{
    (void)state;
    hr_authz_opts ao = {.review = review};
    hr_authz *a;
    hr_err err;
    assert_int_equal(hr_authz_new(&ao, &a, &err), HR_OK);
    hr_route routes[] = {{"POST", "/x", page, NULL, 1024, true}};
    hr_listener_opts lo = {
        .name = "t", .addr = "127.0.0.1:0", .authz = a, .routes = routes, .n_routes = 1};
    hr_listener *l = NULL;
    assert_int_equal(hr_listener_start(&lo, &l, &err), HR_E_INPUT);
    assert_null(l);
    hr_authz_free(a);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(pool_full_and_stop),
        cmocka_unit_test(guarded_takes_no_body),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
