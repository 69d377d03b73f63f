/*
 * test_server.c — the HTTP(S) listener and its helpers, in-process on
 * 127.0.0.1 with libcurl as the client: routing (404/405), body limits
 * (413), readiness, the metrics text format, and the serving certificate
 * re-read without a restart — a new connection sees the new serial, a
 * half-written pair (key and cert that do not match) is refused while the
 * old pair keeps serving, and a listener started before any cert exists
 * becomes ready once the files appear.
 */
#include <arpa/inet.h>
#include <netinet/in.h>
#include <poll.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cmocka.h>
#include <curl/curl.h>

#include "server/certs.h"
#include "server/health.h"
#include "server/http.h"
#include "server/metrics.h"
#include "server/request.h"
#include "util/clock.h"

#include "hr_testcert.h"

typedef struct reply {
    long status;
    char body[4096];
    size_t len;
    char serial[128]; /* of the server certificate, when TLS */
} reply;

static size_t on_data(char *p, size_t sz, size_t n, void *ud)
{
    reply *r = ud;
    size_t k = sz * n;
    size_t room = sizeof r->body - 1 - r->len;
    memcpy(r->body + r->len, p, k < room ? k : room);
    r->len += k < room ? k : room;
    r->body[r->len] = '\0';
    return k;
}

/* One request on a fresh connection. body NULL: GET. Returns the curl
 * code (the reply is filled on CURLE_OK). */
static CURLcode request(const char *url, const char *body, size_t body_len, const char *ca,
                        reply *r)
{
    memset(r, 0, sizeof *r);
    CURL *h = curl_easy_init();
    assert_non_null(h);
    curl_easy_setopt(h, CURLOPT_URL, url);
    curl_easy_setopt(h, CURLOPT_WRITEFUNCTION, on_data);
    curl_easy_setopt(h, CURLOPT_WRITEDATA, r);
    curl_easy_setopt(h, CURLOPT_TIMEOUT_MS, 60000L);
    curl_easy_setopt(h, CURLOPT_FRESH_CONNECT, 1L);
    curl_easy_setopt(h, CURLOPT_FORBID_REUSE, 1L);
    if (body) {
        curl_easy_setopt(h, CURLOPT_POSTFIELDS, body);
        curl_easy_setopt(h, CURLOPT_POSTFIELDSIZE, (long)body_len);
    }
    if (ca) {
        curl_easy_setopt(h, CURLOPT_CAINFO, ca);
        curl_easy_setopt(h, CURLOPT_CERTINFO, 1L);
    }
    CURLcode rc = curl_easy_perform(h);
    curl_easy_getinfo(h, CURLINFO_RESPONSE_CODE, &r->status);
    if (ca && rc == CURLE_OK) {
        struct curl_certinfo *ci = NULL;
        if (curl_easy_getinfo(h, CURLINFO_CERTINFO, &ci) == CURLE_OK && ci &&
            ci->num_of_certs > 0) {
            /* Hex digits only: libcurl's OpenSSL backend writes "420102...",
             * its GnuTLS backend "42:01:02:...". */
            for (struct curl_slist *s = ci->certinfo[0]; s; s = s->next)
                if (strncmp(s->data, "Serial Number:", 14) == 0)
                    for (size_t i = 14, n = 0; s->data[i] && n + 1 < sizeof r->serial; i++)
                        if (s->data[i] != ':')
                            r->serial[n++] = s->data[i];
        }
    }
    curl_easy_cleanup(h);
    return rc;
}

static void echo(void *ud, const hr_http_req *req, hr_http_resp *resp)
{
    (void)ud;
    resp->content_type = "application/octet-stream";
    hr_buf_printf(&resp->body, "%s %s %zu:", req->method, req->path, req->body_len);
    hr_buf_append(&resp->body, req->body, req->body_len);
}

static void ok(void *ud, const hr_http_req *req, hr_http_resp *resp)
{
    (void)ud;
    (void)req;
    hr_buf_puts(&resp->body, "ok\n");
}

static void readyz(void *ud, const hr_http_req *req, hr_http_resp *resp)
{
    (void)req;
    resp->status = hr_readiness_eval(ud, &resp->body) ? 200 : 503;
}

static void routing_and_limits(void **state)
{
    (void)state;
    hr_readiness rd;
    hr_ready_flag flag = {false};
    hr_err err;
    hr_readiness_init(&rd);
    assert_int_equal(hr_readiness_add(&rd, "caches-synced", hr_ready_flag_check, &flag, &err),
                     HR_OK);
    hr_route routes[] = {
        {"POST", "/echo", echo, NULL, 64, false},
        {"GET", "/healthz", ok, NULL, 0, false},
        {"GET", "/readyz", readyz, &rd, 0, false},
    };
    hr_listener_opts o = {
        .name = "t", .addr = "127.0.0.1:0", .routes = routes, .n_routes = 3, .threads = 2};
    hr_listener *l;
    assert_int_equal(hr_listener_start(&o, &l, &err), HR_OK);
    unsigned port = hr_listener_port(l);
    assert_true(port > 0);
    char url[128];
    reply r;

    snprintf(url, sizeof url, "http://127.0.0.1:%u/healthz", port);
    assert_int_equal(request(url, NULL, 0, NULL, &r), CURLE_OK);
    assert_int_equal(r.status, 200);
    assert_string_equal(r.body, "ok\n");

    snprintf(url, sizeof url, "http://127.0.0.1:%u/readyz", port);
    assert_int_equal(request(url, NULL, 0, NULL, &r), CURLE_OK);
    assert_int_equal(r.status, 503);
    assert_non_null(strstr(r.body, "[-] caches-synced"));
    hr_ready_flag_set(&flag, true);
    assert_int_equal(request(url, NULL, 0, NULL, &r), CURLE_OK);
    assert_int_equal(r.status, 200);

    snprintf(url, sizeof url, "http://127.0.0.1:%u/echo", port);
    assert_int_equal(request(url, "hello", 5, NULL, &r), CURLE_OK);
    assert_int_equal(r.status, 200);
    assert_string_equal(r.body, "POST /echo 5:hello");
    /* Exactly the limit passes; one byte more is refused before reading. */
    char big[65];
    memset(big, 'x', sizeof big);
    assert_int_equal(request(url, big, 64, NULL, &r), CURLE_OK);
    assert_int_equal(r.status, 200);
    assert_int_equal(request(url, big, 65, NULL, &r), CURLE_OK);
    assert_int_equal(r.status, 413);
    assert_int_equal(request(url, NULL, 0, NULL, &r), CURLE_OK);
    assert_int_equal(r.status, 405);
    snprintf(url, sizeof url, "http://127.0.0.1:%u/nope", port);
    assert_int_equal(request(url, NULL, 0, NULL, &r), CURLE_OK);
    assert_int_equal(r.status, 404);
    hr_listener_stop(l);
}

/* The checks made on the headers alone, before any body byte is read. */
static void request_admission(void **state)
{
    (void)state;
    hr_route routes[] = {
        {"POST", "/echo", echo, NULL, 64, false},
        {"GET", "/healthz", ok, NULL, 0, false},
        {"POST", "/nobody", ok, NULL, 0, false},
    };
    static const struct {
        const char *method, *path, *cl, *te;
        int status;
        int route; /* index when status is 0 */
    } cases[] = {
        {"GET", "/healthz", NULL, NULL, 0, 1},
        {"GET", "/healthz", "0", NULL, 0, 1},
        {"GET", "/healthz", "1", NULL, 400, -1},
        {"GET", "/healthz", NULL, "chunked", 400, -1},
        {"HEAD", "/healthz", NULL, "chunked", 400, -1},
        {"GET", "/nope", NULL, "chunked", 400, -1}, /* the body first, whatever the path */
        {"GET", "/nope", NULL, NULL, 404, -1},
        {"GET", "/echo", NULL, NULL, 405, -1},
        {"POST", "/echo", "64", NULL, 0, 0},
        {"POST", "/echo", "65", NULL, 413, -1},
        {"POST", "/echo", NULL, "chunked", 0, 0},
        {"POST", "/echo", "5", "chunked", 400, -1},
        {"POST", "/echo", "-1", NULL, 400, -1},
        {"POST", "/echo", "", NULL, 400, -1},
        {"POST", "/echo", "99999999999999999999999", NULL, 400, -1},
        {"POST", "/nobody", NULL, NULL, 0, 2},
        {"POST", "/nobody", "1", NULL, 413, -1}, /* 0 means no body, not unlimited */
        {"POST", "/nobody", NULL, "chunked", 413, -1},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        hr_req_head h = {cases[i].method, cases[i].path, cases[i].cl, cases[i].te};
        hr_req_verdict v;
        hr_req_admit(routes, 3, &h, &v);
        if (v.status != cases[i].status)
            fail_msg("case %zu (%s %s): status %d, want %d", i, cases[i].method, cases[i].path,
                     v.status, cases[i].status);
        if (cases[i].status == 0)
            assert_ptr_equal(v.route, &routes[cases[i].route]);
        else
            assert_null(v.route);
    }
}

/* A body never grows past its limit, and all bodies share a budget of
 * bytes held. */
static void body_collection(void **state)
{
    (void)state;
    hr_body_budget budget;
    hr_body_budget_init(&budget, 10000);
    hr_body a, b;
    char x[6000];
    memset(x, 'x', sizeof x);
    assert_int_equal(hr_body_begin(&a, 8000, 0, &budget), HR_BODY_OK);
    assert_int_equal(hr_body_add(&a, x, 5000), HR_BODY_OK);
    assert_int_equal(hr_body_add(&a, x, 3000), HR_BODY_OK);
    assert_int_equal(a.len, 8000);
    assert_true(a.cap <= 8001);
    assert_int_equal(hr_body_add(&a, x, 1), HR_BODY_TOO_LARGE);
    assert_int_equal(a.len, 8000);
    assert_int_equal(atomic_load(&budget.used), 8000);
    /* The budget holds a's 8000 bytes: b may have 2000 more, not 2001. */
    assert_int_equal(hr_body_begin(&b, 8000, 6000, &budget), HR_BODY_OK);
    assert_string_equal(hr_body_str(&b), ""); /* allocated ahead, still empty */
    assert_int_equal(hr_body_add(&b, x, 2000), HR_BODY_OK);
    assert_int_equal(hr_body_add(&b, x, 1), HR_BODY_NO_ROOM);
    assert_int_equal(b.len, 2000);
    hr_body_free(&a);
    assert_int_equal(atomic_load(&budget.used), 2000);
    assert_int_equal(hr_body_add(&b, x, 4000), HR_BODY_OK);
    assert_string_equal(hr_body_str(&b) + 5990, "xxxxxxxxxx");
    hr_body_free(&b);
    assert_int_equal(atomic_load(&budget.used), 0);
    /* A declared length over the limit is refused before any allocation. */
    assert_int_equal(hr_body_begin(&b, 8000, 8001, &budget), HR_BODY_TOO_LARGE);
    assert_null(b.data);
    /* A zero limit takes nothing. */
    assert_int_equal(hr_body_begin(&a, 0, 0, &budget), HR_BODY_OK);
    assert_int_equal(hr_body_add(&a, x, 1), HR_BODY_TOO_LARGE);
    assert_string_equal(hr_body_str(&a), "");
    hr_body_free(&a);
    assert_int_equal(atomic_load(&budget.used), 0);
}

/* A raw TCP connection to 127.0.0.1:port from src. */
static int tcp_from(const char *src, unsigned port)
{
    int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    assert_true(fd >= 0);
    struct sockaddr_in s = {.sin_family = AF_INET};
    assert_int_equal(inet_pton(AF_INET, src, &s.sin_addr), 1);
    assert_int_equal(bind(fd, (struct sockaddr *)&s, sizeof s), 0);
    struct sockaddr_in a = {.sin_family = AF_INET, .sin_port = htons((uint16_t)port)};
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    assert_int_equal(connect(fd, (struct sockaddr *)&a, sizeof a), 0);
    return fd;
}

/* Milliseconds until the server closes fd (reads 0 or an error), sending
 * one byte of trickle every 50 ms when trickle is set; -1 when still open
 * after limit_ms. */
static long ms_until_closed(int fd, const char *trickle, long limit_ms)
{
    int64_t t0 = hr_mono_ms();
    size_t i = 0;
    while (hr_mono_ms() - t0 < limit_ms) {
        struct pollfd p = {fd, POLLIN, 0};
        if (poll(&p, 1, 50) > 0) {
            char b[256];
            ssize_t r = recv(fd, b, sizeof b, 0);
            if (r <= 0)
                return (long)(hr_mono_ms() - t0);
            continue; /* an answer: keep reading to the close */
        }
        if (trickle && trickle[i] && send(fd, trickle + i, 1, MSG_NOSIGNAL) == 1)
            i++;
    }
    return -1;
}

/* Idle or trickling clients are cut at their deadline, and one address
 * cannot take every connection. */
static void deadlines_and_per_ip(void **state)
{
    (void)state;
    hr_route routes[] = {
        {"POST", "/echo", echo, NULL, 64, false},
        {"GET", "/healthz", ok, NULL, 0, false},
    };
    hr_listener_opts o = {.name = "t",
                          .addr = "127.0.0.1:0",
                          .routes = routes,
                          .n_routes = 2,
                          .threads = 2,
                          .per_ip_connections = 4,
                          .header_timeout_ms = 400,
                          .request_timeout_ms = 1000};
    hr_listener *l;
    hr_err err;
    assert_int_equal(hr_listener_start(&o, &l, &err), HR_OK);
    unsigned port = hr_listener_port(l);

    /* Silent: closed at the header deadline. */
    int fd = tcp_from("127.0.0.1", port);
    long ms = ms_until_closed(fd, NULL, 3000);
    close(fd);
    assert_true(ms >= 300 && ms <= 900);
    /* A header byte every 50 ms keeps an idle timeout at bay, not this. */
    static const char slow_head[] =
        "GET /healthz HTTP/1.1\r\nHost: x\r\nX-Slow: "
        "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa";
    fd = tcp_from("127.0.0.1", port);
    ms = ms_until_closed(fd, slow_head, 3000);
    close(fd);
    assert_true(ms >= 300 && ms <= 900);
    /* Headers in at once, then a body byte every 50 ms: the whole-request
     * deadline. */
    static const char slow_body[] = "POST /echo HTTP/1.1\r\nHost: x\r\nContent-Length: 60\r\n\r\n";
    fd = tcp_from("127.0.0.1", port);
    assert_int_equal(send(fd, slow_body, sizeof slow_body - 1, MSG_NOSIGNAL),
                     (ssize_t)(sizeof slow_body - 1));
    ms = ms_until_closed(fd, "bbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbb", 3000);
    close(fd);
    assert_true(ms >= 800 && ms <= 1500);

    hr_listener_stop(l);

    /* Four from 127.0.0.1 are all it gets; 127.0.0.2 is still served. A
     * long header deadline here, so a fifth held (not refused) would stay
     * open well past the wait below. */
    o.header_timeout_ms = 10000;
    o.request_timeout_ms = 20000;
    assert_int_equal(hr_listener_start(&o, &l, &err), HR_OK);
    port = hr_listener_port(l);
    int held[4];
    for (int i = 0; i < 4; i++)
        held[i] = tcp_from("127.0.0.1", port);
    usleep(100000);
    fd = tcp_from("127.0.0.1", port);
    ms = ms_until_closed(fd, NULL, 3000);
    close(fd);
    assert_true(ms >= 0 && ms < 3000);
    fd = tcp_from("127.0.0.2", port);
    static const char get[] = "GET /healthz HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n";
    assert_int_equal(send(fd, get, sizeof get - 1, MSG_NOSIGNAL), (ssize_t)(sizeof get - 1));
    char b[512] = "";
    struct pollfd p = {fd, POLLIN, 0};
    assert_int_equal(poll(&p, 1, 1000), 1);
    assert_true(recv(fd, b, sizeof b - 1, 0) > 0);
    assert_non_null(strstr(b, "200 OK"));
    close(fd);
    for (int i = 0; i < 4; i++)
        close(held[i]);
    hr_listener_stop(l);
}

/* Whether the server has hung up on fd (an idle plain connection: the
 * server sends nothing, so readable means the end). */
static bool hung_up(int fd)
{
    struct pollfd p = {fd, POLLIN, 0};
    char b[64];
    return poll(&p, 1, 0) == 1 && recv(fd, b, sizeof b, MSG_PEEK | MSG_DONTWAIT) <= 0;
}

/* Sends req on fd and reads until want appears; false on a close first. */
static bool ask(int fd, const char *req, const char *want)
{
    size_t n = strlen(req);
    if (send(fd, req, n, MSG_NOSIGNAL) != (ssize_t)n)
        return false;
    char b[1024];
    size_t len = 0;
    while (len < sizeof b - 1) {
        struct pollfd p = {fd, POLLIN, 0};
        if (poll(&p, 1, 1000) != 1)
            return false;
        ssize_t r = recv(fd, b + len, sizeof b - 1 - len, 0);
        if (r <= 0)
            return false;
        len += (size_t)r;
        b[len] = '\0';
        if (strstr(b, want))
            return true;
    }
    return false;
}

/* A full listener: a new connection evicts the oldest that never sent a
 * request before an idle keep-alive one, and one in a request never; when
 * all are in a request, the new one is refused. From several addresses,
 * so the per-address cap is not what acts. */
static void full_listener_evicts(void **state)
{
    (void)state;
    hr_route routes[] = {
        {"POST", "/echo", echo, NULL, 64, false},
        {"GET", "/healthz", ok, NULL, 0, false},
    };
    hr_listener_opts o = {.name = "t",
                          .addr = "127.0.0.1:0",
                          .routes = routes,
                          .n_routes = 2,
                          .threads = 2,
                          .max_connections = 6,
                          .header_timeout_ms = 20000,
                          .request_timeout_ms = 20000};
    hr_listener *l;
    hr_err err;
    assert_int_equal(hr_listener_start(&o, &l, &err), HR_OK);
    unsigned port = hr_listener_port(l);
    static const char get[] = "GET /healthz HTTP/1.1\r\nHost: x\r\n\r\n";
    static const char post_head[] = "POST /echo HTTP/1.1\r\nHost: x\r\nContent-Length: 60\r\n\r\n";
    /* The oldest: a keep-alive connection that was served, then idles. */
    int kept = tcp_from("127.0.0.2", port);
    assert_true(ask(kept, get, "ok\n"));
    /* One in a request (headers in, body awaited), then four silent. */
    usleep(20000);
    int busy = tcp_from("127.0.0.3", port);
    assert_int_equal(send(busy, post_head, sizeof post_head - 1, MSG_NOSIGNAL),
                     (ssize_t)(sizeof post_head - 1));
    int silent[4];
    for (int i = 0; i < 4; i++) {
        usleep(20000);
        silent[i] = tcp_from(i % 2 ? "127.0.0.4" : "127.0.0.5", port);
    }
    usleep(100000);
    for (int i = 0; i < 4; i++)
        assert_false(hung_up(silent[i]));
    /* Six: full. Each new client is answered (and stays, on keep-alive),
     * and the silent ones go first, oldest first. */
    int fresh[5];
    for (int round = 0; round < 4; round++) {
        fresh[round] = tcp_from("127.0.0.6", port);
        int64_t t0 = hr_mono_ms();
        assert_true(ask(fresh[round], get, "ok\n"));
        assert_true(hr_mono_ms() - t0 < 1000);
        usleep(100000);
        for (int i = 0; i < 4; i++)
            assert_int_equal(hung_up(silent[i]), i <= round);
        assert_false(hung_up(kept));
        assert_false(hung_up(busy));
    }
    /* No silent one left: the keep-alive one answered longest ago goes
     * next, the one in a request stays. */
    fresh[4] = tcp_from("127.0.0.6", port);
    assert_true(ask(fresh[4], get, "ok\n"));
    usleep(100000);
    assert_true(hung_up(kept));
    assert_false(hung_up(busy));
    for (int i = 0; i < 5; i++)
        assert_false(hung_up(fresh[i]));
    close(kept);
    for (int i = 0; i < 5; i++)
        close(fresh[i]);
    for (int i = 0; i < 4; i++)
        close(silent[i]);
    usleep(100000);
    /* Now busy plus five more in a request: full, nobody to evict, so a
     * seventh is refused at once and the six stay. */
    int more[5];
    for (int i = 0; i < 5; i++) {
        more[i] = tcp_from("127.0.0.7", port);
        assert_int_equal(send(more[i], post_head, sizeof post_head - 1, MSG_NOSIGNAL),
                         (ssize_t)(sizeof post_head - 1));
    }
    usleep(200000);
    int late = tcp_from("127.0.0.8", port);
    long ms = ms_until_closed(late, NULL, 3000);
    close(late);
    assert_true(ms >= 0 && ms < 1000);
    assert_false(hung_up(busy));
    for (int i = 0; i < 5; i++) {
        assert_false(hung_up(more[i]));
        close(more[i]);
    }
    close(busy);
    hr_listener_stop(l);
}

/* ":port" listens on both families (IPv6 wildcard, IPV6_V6ONLY off). */
static void dual_stack(void **state)
{
    (void)state;
    hr_route routes[] = {{"GET", "/healthz", ok, NULL, 0, false}};
    hr_listener_opts o = {.name = "t", .addr = ":0", .routes = routes, .n_routes = 1};
    hr_listener *l;
    hr_err err;
    assert_int_equal(hr_listener_start(&o, &l, &err), HR_OK);
    char url[128];
    reply r;
    snprintf(url, sizeof url, "http://127.0.0.1:%u/healthz", hr_listener_port(l));
    assert_int_equal(request(url, NULL, 0, NULL, &r), CURLE_OK);
    assert_int_equal(r.status, 200);
    /* ::1 only where the machine has IPv6 loopback. */
    int fd = socket(AF_INET6, SOCK_STREAM, 0);
    struct sockaddr_in6 a6 = {.sin6_family = AF_INET6, .sin6_addr = IN6ADDR_LOOPBACK_INIT};
    bool v6 = fd >= 0 && bind(fd, (struct sockaddr *)&a6, sizeof a6) == 0;
    if (fd >= 0)
        close(fd);
    if (v6) {
        snprintf(url, sizeof url, "http://[::1]:%u/healthz", hr_listener_port(l));
        assert_int_equal(request(url, NULL, 0, NULL, &r), CURLE_OK);
        assert_int_equal(r.status, 200);
    } else {
        printf("dual_stack: no IPv6 loopback here, IPv4 only checked\n");
    }
    hr_listener_stop(l);
}

static void one_reply(void *ud, const hr_http_req *req, hr_http_resp *resp)
{
    (void)req;
    hr_buf_puts(&resp->body, ud);
}

/* reuse_port: a second listener of the same user binds the same port and
 * both answer; without it the second bind is refused; when one stops, the
 * other gets every new connection (the hostNetwork two-replica mode). */
static void reuse_port(void **state)
{
    (void)state;
    hr_route ra[] = {{"GET", "/who", one_reply, "a", 0, false}};
    hr_route rb[] = {{"GET", "/who", one_reply, "b", 0, false}};
    hr_listener_opts o = {
        .name = "a", .addr = "127.0.0.1:0", .routes = ra, .n_routes = 1, .reuse_port = true};
    hr_listener *a, *b, *c;
    hr_err err;
    assert_int_equal(hr_listener_start(&o, &a, &err), HR_OK);
    char addr[32];
    snprintf(addr, sizeof addr, "127.0.0.1:%u", hr_listener_port(a));
    hr_listener_opts ob = {.name = "b", .addr = addr, .routes = rb, .n_routes = 1};
    assert_int_equal(hr_listener_start(&ob, &c, &err), HR_E_IO); /* not asked: refused */
    ob.reuse_port = true;
    assert_int_equal(hr_listener_start(&ob, &b, &err), HR_OK);
    assert_int_equal(hr_listener_port(b), hr_listener_port(a));
    char url[64];
    snprintf(url, sizeof url, "http://%s/who", addr);
    reply r;
    int seen_a = 0, seen_b = 0;
    for (int i = 0; i < 64 && !(seen_a && seen_b); i++) {
        assert_int_equal(request(url, NULL, 0, NULL, &r), CURLE_OK);
        assert_int_equal(r.status, 200);
        seen_a += strcmp(r.body, "a") == 0;
        seen_b += strcmp(r.body, "b") == 0;
    }
    assert_true(seen_a > 0 && seen_b > 0);
    hr_listener_stop(a);
    for (int i = 0; i < 16; i++) {
        assert_int_equal(request(url, NULL, 0, NULL, &r), CURLE_OK);
        assert_string_equal(r.body, "b");
    }
    hr_listener_stop(b);
}

static void bad_addresses(void **state)
{
    (void)state;
    char host[64];
    uint16_t port;
    hr_err err;
    assert_int_equal(hr_parse_addr(":8080", host, sizeof host, &port, &err), HR_OK);
    assert_string_equal(host, "");
    assert_int_equal(port, 8080);
    assert_int_equal(hr_parse_addr("[::1]:9443", host, sizeof host, &port, &err), HR_OK);
    assert_string_equal(host, "::1");
    assert_int_equal(hr_parse_addr("8080", host, sizeof host, &port, &err), HR_E_INPUT);
    assert_int_equal(hr_parse_addr("a:", host, sizeof host, &port, &err), HR_E_INPUT);
    assert_int_equal(hr_parse_addr("a:70000", host, sizeof host, &port, &err), HR_E_INPUT);
    assert_int_equal(hr_parse_addr("a:1x", host, sizeof host, &port, &err), HR_E_INPUT);
}

/* Other file names than tls.crt and tls.key (the Go implementation's
 * --webhook-cert-name, --webhook-cert-key): the pair under those names
 * loads, and a holder for the default names in the same directory finds
 * nothing. */
static void cert_file_names(void **state)
{
    (void)state;
    char dir[] = "/tmp/hr-test-certnames.XXXXXX";
    assert_non_null(mkdtemp(dir));
    assert_int_equal(hr_testcert_write(dir, 0x03, HR_TC_BOTH), 0);
    char from[600], to[600], kfrom[600], kto[600];
    snprintf(from, sizeof from, "%s/tls.crt", dir);
    snprintf(to, sizeof to, "%s/serving.pem", dir);
    snprintf(kfrom, sizeof kfrom, "%s/tls.key", dir);
    snprintf(kto, sizeof kto, "%s/serving-key.pem", dir);
    assert_int_equal(rename(from, to), 0);
    assert_int_equal(rename(kfrom, kto), 0);
    hr_err err;
    hr_certs *named, *plain;
    assert_int_equal(hr_certs_new_files(dir, "serving.pem", "serving-key.pem", NULL, &named, &err),
                     HR_OK);
    assert_true(hr_certs_ready(named));
    assert_int_equal(hr_certs_new(dir, NULL, &plain, &err), HR_OK);
    assert_false(hr_certs_ready(plain));
    hr_certs_free(named);
    hr_certs_free(plain);
    assert_int_equal(unlink(to), 0);
    assert_int_equal(unlink(kto), 0);
    assert_int_equal(rmdir(dir), 0);
}

static void cert_rotation(void **state)
{
    (void)state;
    char dir[] = "/tmp/hr-test-certs.XXXXXX";
    assert_non_null(mkdtemp(dir));
    char ca[600];
    snprintf(ca, sizeof ca, "%s/tls.crt", dir);
    hr_err err;
    hr_certs *certs;
    /* No files yet: not ready, and handshakes fail cleanly. */
    assert_int_equal(hr_certs_new(dir, NULL, &certs, &err), HR_OK);
    assert_false(hr_certs_ready(certs));
    hr_route routes[] = {{"GET", "/healthz", ok, NULL, 0, false}};
    hr_listener_opts o = {.name = "tls",
                          .addr = "127.0.0.1:0",
                          .tls = certs,
                          .routes = routes,
                          .n_routes = 1,
                          .threads = 2};
    hr_listener *l;
    assert_int_equal(hr_listener_start(&o, &l, &err), HR_OK);
    char url[128];
    snprintf(url, sizeof url, "https://127.0.0.1:%u/healthz", hr_listener_port(l));
    reply r;
    assert_int_equal(hr_testcert_write(dir, 0x01, HR_TC_KEY), 0);
    assert_int_not_equal(request(url, NULL, 0, ca, &r), CURLE_OK);

    /* First pair. */
    assert_int_equal(hr_testcert_write(dir, 0x01, HR_TC_BOTH), 0);
    assert_int_equal(hr_certs_check(certs), 1);
    assert_true(hr_certs_ready(certs));
    assert_int_equal(request(url, NULL, 0, ca, &r), CURLE_OK);
    assert_int_equal(r.status, 200);
    assert_non_null(strstr(r.serial, "420102"));

    /* Nothing changed: nothing reloaded. */
    assert_int_equal(hr_certs_check(certs), 0);

    /* A new key without its cert: refused, the old pair keeps serving. */
    assert_int_equal(hr_testcert_write(dir, 0x02, HR_TC_KEY), 0);
    assert_int_equal(hr_certs_check(certs), -1);
    snprintf(ca, sizeof ca, "%s/tls.crt", dir);
    assert_int_equal(request(url, NULL, 0, ca, &r), CURLE_OK);
    assert_non_null(strstr(r.serial, "420102"));

    /* The whole new pair: new connections see it, same listener. */
    assert_int_equal(hr_testcert_write(dir, 0x02, HR_TC_BOTH), 0);
    assert_int_equal(hr_certs_check(certs), 1);
    assert_int_equal(hr_certs_generation(certs), 2);
    assert_int_equal(request(url, NULL, 0, ca, &r), CURLE_OK);
    assert_non_null(strstr(r.serial, "420202"));

    /* Through the poll thread this time. */
    assert_int_equal(hr_certs_start(certs, 50, &err), HR_OK);
    assert_int_equal(hr_testcert_write(dir, 0x03, HR_TC_BOTH), 0);
    for (int i = 0; i < 100 && hr_certs_generation(certs) < 3; i++)
        usleep(20000);
    assert_int_equal(hr_certs_generation(certs), 3);
    assert_int_equal(request(url, NULL, 0, ca, &r), CURLE_OK);
    assert_non_null(strstr(r.serial, "420302"));

    hr_listener_stop(l);
    hr_certs_free(certs);

    /* Event-driven: with a poll interval of ten minutes the thread still
     * sees a rotation at once (inotify on the directory), so a quiet daemon
     * need not wake every second to catch one. */
    assert_int_equal(hr_certs_new(dir, NULL, &certs, &err), HR_OK);
    assert_int_equal(hr_certs_generation(certs), 1);
    assert_int_equal(hr_certs_start(certs, 600000, &err), HR_OK);
    usleep(50000);
    assert_int_equal(hr_testcert_write(dir, 0x04, HR_TC_BOTH), 0);
    for (int i = 0; i < 100 && hr_certs_generation(certs) < 2; i++)
        usleep(20000);
    assert_int_equal(hr_certs_generation(certs), 2);
    hr_certs_free(certs);
    char p[640];
    snprintf(p, sizeof p, "%s/tls.crt", dir);
    unlink(p);
    snprintf(p, sizeof p, "%s/tls.key", dir);
    unlink(p);
    rmdir(dir);
}

static void render_one(void *ud, hr_buf *out)
{
    hr_histogram_render(ud, "t_seconds", "A test histogram.", out);
}

static void metrics_text_format(void **state)
{
    (void)state;
    static const double b[] = {0.001, 0.01, 0.1};
    hr_histogram h;
    hr_histogram_init(&h, b, 3);
    hr_histogram_observe_ns(&h, 500000);     /* 0.5 ms */
    hr_histogram_observe_ns(&h, 1000000);    /* 1 ms: le is inclusive */
    hr_histogram_observe_ns(&h, 50000000);   /* 50 ms */
    hr_histogram_observe_ns(&h, 2000000000); /* 2 s */
    hr_metrics m;
    hr_err err;
    hr_metrics_init(&m);
    assert_int_equal(hr_metrics_add(&m, render_one, &h, &err), HR_OK);
    hr_buf out;
    hr_buf_init(&out, 0);
    hr_metrics_render(&m, &out);
    assert_string_equal(hr_buf_str(&out), "# HELP t_seconds A test histogram.\n"
                                          "# TYPE t_seconds histogram\n"
                                          "t_seconds_bucket{le=\"0.001\"} 2\n"
                                          "t_seconds_bucket{le=\"0.01\"} 2\n"
                                          "t_seconds_bucket{le=\"0.1\"} 3\n"
                                          "t_seconds_bucket{le=\"+Inf\"} 4\n"
                                          "t_seconds_sum 2.051500000\n"
                                          "t_seconds_count 4\n");
    hr_buf_reset(&out);
    hr_metrics_label_value(&out, "a\"b\\c\nd");
    assert_string_equal(hr_buf_str(&out), "a\\\"b\\\\c\\nd");
    hr_buf_free(&out);
}

int main(void)
{
    curl_global_init(CURL_GLOBAL_DEFAULT);
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(routing_and_limits),   cmocka_unit_test(request_admission),
        cmocka_unit_test(body_collection),      cmocka_unit_test(deadlines_and_per_ip),
        cmocka_unit_test(dual_stack),           cmocka_unit_test(bad_addresses),
        cmocka_unit_test(cert_rotation),        cmocka_unit_test(cert_file_names),
        cmocka_unit_test(metrics_text_format),  cmocka_unit_test(reuse_port),
        cmocka_unit_test(full_listener_evicts),
    };
    int rc = cmocka_run_group_tests(tests, NULL, NULL);
    curl_global_cleanup();
    return rc;
}
