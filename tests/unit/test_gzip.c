/*
 * test_gzip.c — /metrics in gzip when asked (design §9.3): which
 * Accept-Encoding values accept gzip, a page compressed and decoded back
 * byte for byte (zlib's inflate), and the answer of a real listener to a
 * libcurl client that asks for gzip (Content-Encoding, Vary, the decoded
 * page), does not ask, or refuses it (q=0).
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include <cmocka.h>
#include <curl/curl.h>
#include <zlib.h>

#include "server/gzip.h"
#include "server/http.h"

static void accept_encoding(void **state)
{
    (void)state;
    static const struct {
        const char *ae;
        bool want;
    } t[] = {
        {NULL, false},
        {"", false},
        {"gzip", true},
        {"GZip", true},
        {"x-gzip", true},
        {"identity", false},
        {"deflate, gzip;q=1.0, *;q=0.5", true}, /* Prometheus' own */
        {"br,gzip", true},
        {"gzip;q=0", false},
        {"gzip; q=0.000", false},
        {"gzip;q=0.001", true},
        {"*", true},
        {"*;q=0", false},
        {"gzip;q=0, *", false}, /* the named coding wins */
        {"gzipx", false},
        {"deflate, br", false},
        {" , ,gzip ,", true},
    };
    for (size_t i = 0; i < sizeof t / sizeof t[0]; i++)
        if (hr_gzip_accepted(t[i].ae) != t[i].want)
            fail_msg("Accept-Encoding '%s': %d, want %d", t[i].ae ? t[i].ae : "(none)", !t[i].want,
                     t[i].want);
}

/* gzip bytes back to text, with zlib's inflate (its own gzip reader). */
static char *gunzip(const void *z, size_t len, size_t *out_len)
{
    z_stream s;
    memset(&s, 0, sizeof s);
    assert_int_equal(inflateInit2(&s, 15 + 16), Z_OK);
    size_t cap = 1 << 16, n = 0;
    char *out = malloc(cap);
    assert_non_null(out);
    s.next_in = (Bytef *)(uintptr_t)z;
    s.avail_in = (uInt)len;
    int rc;
    do {
        if (cap - n < 4096) {
            cap *= 2;
            out = realloc(out, cap);
            assert_non_null(out);
        }
        s.next_out = (Bytef *)out + n;
        s.avail_out = (uInt)(cap - n);
        rc = inflate(&s, Z_NO_FLUSH);
        n = cap - s.avail_out;
    } while (rc == Z_OK);
    assert_int_equal(rc, Z_STREAM_END);
    assert_int_equal(s.avail_in, 0); /* one member, nothing after it */
    inflateEnd(&s);
    *out_len = n;
    return out;
}

/* A page like a big scrape: 100,000 pod series (several MB). */
static void make_page(hr_buf *b, int n)
{
    hr_buf_puts(b, "# HELP headroom_pod_limit_cores x\n# TYPE headroom_pod_limit_cores gauge\n");
    for (int i = 0; i < n; i++)
        hr_buf_printf(b, "headroom_pod_limit_cores{namespace=\"team-%d\",pod=\"web-%d\"} %d.%03d\n",
                      i % 97, i, i % 13, i % 1000);
}

static void round_trip(void **state)
{
    (void)state;
    hr_buf page, z;
    hr_buf_init(&page, 0);
    make_page(&page, 100000);
    assert_false(hr_buf_failed(&page));
    hr_buf_init(&z, 0);
    hr_err err;
    assert_int_equal(hr_gzip(page.data, page.len, &z, &err), HR_OK);
    assert_true(z.len < page.len / 5);                /* a metrics page compresses well */
    assert_int_equal((unsigned char)z.data[0], 0x1f); /* the gzip magic */
    assert_int_equal((unsigned char)z.data[1], 0x8b);
    size_t n;
    char *back = gunzip(z.data, z.len, &n);
    assert_int_equal(n, page.len);
    assert_memory_equal(back, page.data, n);
    free(back);
    /* nothing in, a valid empty member out */
    hr_buf_reset(&z);
    assert_int_equal(hr_gzip("", 0, &z, &err), HR_OK);
    back = gunzip(z.data, z.len, &n);
    assert_int_equal(n, 0);
    free(back);
    hr_buf_free(&z);
    hr_buf_free(&page);
}

typedef struct got {
    hr_buf body;
    char encoding[64], vary[64];
    long status;
} got;

static size_t on_body(char *p, size_t sz, size_t n, void *ud)
{
    hr_buf_append(&((got *)ud)->body, p, sz * n);
    return sz * n;
}

static void header_value(const char *p, size_t len, const char *name, char *out, size_t cap)
{
    size_t k = strlen(name);
    if (len <= k || strncasecmp(p, name, k) != 0)
        return;
    p += k, len -= k;
    while (len > 0 && *p == ' ')
        p++, len--;
    while (len > 0 && (p[len - 1] == '\r' || p[len - 1] == '\n'))
        len--;
    snprintf(out, cap, "%.*s", (int)len, p);
}

static size_t on_header(char *p, size_t sz, size_t n, void *ud)
{
    got *g = ud;
    header_value(p, sz * n, "content-encoding:", g->encoding, sizeof g->encoding);
    header_value(p, sz * n, "vary:", g->vary, sizeof g->vary);
    return sz * n;
}

/* GET url with this Accept-Encoding (NULL: none), the body as it came:
 * libcurl is not asked to decode (no CURLOPT_ACCEPT_ENCODING). */
static void get(const char *url, const char *ae, got *g)
{
    memset(g, 0, sizeof *g);
    hr_buf_init(&g->body, 0);
    CURL *h = curl_easy_init();
    assert_non_null(h);
    struct curl_slist *hd = NULL;
    char line[128];
    if (ae != NULL) {
        snprintf(line, sizeof line, "Accept-Encoding: %s", ae);
        hd = curl_slist_append(hd, line);
    }
    curl_easy_setopt(h, CURLOPT_URL, url);
    curl_easy_setopt(h, CURLOPT_HTTPHEADER, hd);
    curl_easy_setopt(h, CURLOPT_WRITEFUNCTION, on_body);
    curl_easy_setopt(h, CURLOPT_WRITEDATA, g);
    curl_easy_setopt(h, CURLOPT_HEADERFUNCTION, on_header);
    curl_easy_setopt(h, CURLOPT_HEADERDATA, g);
    curl_easy_setopt(h, CURLOPT_TIMEOUT_MS, 30000L);
    assert_int_equal(curl_easy_perform(h), CURLE_OK);
    curl_easy_getinfo(h, CURLINFO_RESPONSE_CODE, &g->status);
    curl_slist_free_all(hd);
    curl_easy_cleanup(h);
}

static void page_route(void *ud, const hr_http_req *req, hr_http_resp *r)
{
    r->content_type = "text/plain; version=0.0.4; charset=utf-8";
    make_page(&r->body, *(int *)ud);
    hr_gzip_answer(req, r);
}

static void listener_answers(void **state)
{
    (void)state;
    int n = 20000;
    hr_route routes[] = {{"GET", "/metrics", page_route, &n, 0, false}};
    hr_listener_opts o = {
        .name = "t", .addr = "127.0.0.1:0", .routes = routes, .n_routes = 1, .threads = 2};
    hr_listener *l;
    hr_err err;
    assert_int_equal(hr_listener_start(&o, &l, &err), HR_OK);
    char url[128];
    snprintf(url, sizeof url, "http://127.0.0.1:%u/metrics", hr_listener_port(l));
    hr_buf want;
    hr_buf_init(&want, 0);
    make_page(&want, n);

    got g;
    get(url, "gzip", &g); /* asked: gzip, said so, decodes to the page */
    assert_int_equal(g.status, 200);
    assert_string_equal(g.encoding, "gzip");
    assert_string_equal(g.vary, "Accept-Encoding");
    size_t len;
    char *back = gunzip(g.body.data, g.body.len, &len);
    assert_int_equal(len, want.len);
    assert_memory_equal(back, want.data, len);
    free(back);
    hr_buf_free(&g.body);

    get(url, NULL, &g); /* not asked: the page as it is */
    assert_int_equal(g.status, 200);
    assert_string_equal(g.encoding, "");
    assert_int_equal(g.body.len, want.len);
    assert_memory_equal(g.body.data, want.data, want.len);
    hr_buf_free(&g.body);

    get(url, "gzip;q=0, identity", &g); /* refused */
    assert_string_equal(g.encoding, "");
    assert_int_equal(g.body.len, want.len);
    hr_buf_free(&g.body);

    hr_buf_free(&want);
    hr_listener_stop(l);
}

int main(void)
{
    curl_global_init(CURL_GLOBAL_DEFAULT);
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(accept_encoding),
        cmocka_unit_test(round_trip),
        cmocka_unit_test(listener_answers),
    };
    int rc = cmocka_run_group_tests(tests, NULL, NULL);
    curl_global_cleanup();
    return rc;
}
