/*
 * test_apimetrics.c — the API client's requests on /metrics (design §9.3):
 * headroom_api_requests_total by verb and code ("error" for no answer),
 * the latency histogram per verb, unknown verbs and statuses, and counts
 * that add up when many threads report at once (run under TSan by
 * scripts/test.sh --tier sanitize).
 */
#include <pthread.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "server/apimetrics.h"

static char *page(hr_apimetrics *m)
{
    hr_buf b;
    hr_buf_init(&b, 0);
    hr_apimetrics_render(m, &b);
    assert_false(hr_buf_failed(&b));
    return b.data;
}

static void counts_and_histograms(void **state)
{
    (void)state;
    hr_apimetrics *m = malloc(sizeof *m);
    assert_non_null(m);
    hr_apimetrics_init(m);
    char *p = page(m);
    /* nothing yet: the families' HELP and TYPE, no series */
    assert_string_equal(p, "# HELP headroom_api_requests_total Requests the Kubernetes API "
                           "client made, by verb and HTTP status (error: no response).\n"
                           "# TYPE headroom_api_requests_total counter\n"
                           "# HELP headroom_api_request_duration_seconds Latency of the "
                           "Kubernetes API client's requests by verb (a watch: until its "
                           "response headers).\n"
                           "# TYPE headroom_api_request_duration_seconds histogram\n");
    free(p);
    hr_apimetrics_observe(m, "get", 200, 3000000);     /* 3 ms */
    hr_apimetrics_observe(m, "get", 200, 30000000);    /* 30 ms */
    hr_apimetrics_observe(m, "get", 404, 1000000);     /* 1 ms */
    hr_apimetrics_observe(m, "patch", 429, 2000000);   /* 2 ms */
    hr_apimetrics_observe(m, "patch", 0, 900000000);   /* no answer */
    hr_apimetrics_observe(m, "watch", 200, 70000000);  /* headers in 70 ms */
    hr_apimetrics_observe(m, "connect", 200, 1000000); /* not a verb we know */
    hr_apimetrics_observe(m, "list", 42, 1000000);     /* not an HTTP status */
    p = page(m);
    assert_non_null(strstr(p, "\nheadroom_api_requests_total{verb=\"get\",code=\"200\"} 2\n"
                              "headroom_api_requests_total{verb=\"get\",code=\"404\"} 1\n"
                              "headroom_api_requests_total{verb=\"list\",code=\"error\"} 1\n"
                              "headroom_api_requests_total{verb=\"watch\",code=\"200\"} 1\n"
                              "headroom_api_requests_total{verb=\"patch\",code=\"429\"} 1\n"
                              "headroom_api_requests_total{verb=\"patch\",code=\"error\"} 1\n"
                              "headroom_api_requests_total{verb=\"other\",code=\"200\"} 1\n"
                              "# HELP headroom_api_request_duration_seconds"));
    assert_null(strstr(p, "verb=\"create\""));
    assert_non_null(strstr(p, "\nheadroom_api_request_duration_seconds_bucket{verb=\"get\","
                              "le=\"0.005\"} 2\n"
                              "headroom_api_request_duration_seconds_bucket{verb=\"get\","
                              "le=\"0.025\"} 2\n"
                              "headroom_api_request_duration_seconds_bucket{verb=\"get\","
                              "le=\"0.1\"} 3\n"));
    assert_non_null(strstr(p, "\nheadroom_api_request_duration_seconds_bucket{verb=\"get\","
                              "le=\"+Inf\"} 3\n"
                              "headroom_api_request_duration_seconds_sum{verb=\"get\"} "
                              "0.034000000\n"
                              "headroom_api_request_duration_seconds_count{verb=\"get\"} 3\n"));
    assert_non_null(strstr(p, "\nheadroom_api_request_duration_seconds_count{verb=\"patch\"} 2\n"));
    assert_non_null(strstr(p, "\nheadroom_api_request_duration_seconds_bucket{verb=\"patch\","
                              "le=\"0.5\"} 1\n"
                              "headroom_api_request_duration_seconds_bucket{verb=\"patch\","
                              "le=\"1\"} 2\n"));
    free(p);
    free(m);
}

enum { THREADS = 4, EACH = 20000 };

static void *hammer(void *ud)
{
    for (int i = 0; i < EACH; i++)
        hr_apimetrics_observe(ud, i % 2 ? "list" : "watch", i % 3 ? 200 : 0, 1000);
    return NULL;
}

/* Reporters on several threads while a scrape renders: nothing lost. */
static void threads_add_up(void **state)
{
    (void)state;
    hr_apimetrics *m = malloc(sizeof *m);
    assert_non_null(m);
    hr_apimetrics_init(m);
    pthread_t t[THREADS];
    for (int i = 0; i < THREADS; i++)
        assert_int_equal(pthread_create(&t[i], NULL, hammer, m), 0);
    for (int k = 0; k < 20; k++)
        free(page(m)); /* scrapes meanwhile */
    for (int i = 0; i < THREADS; i++)
        assert_int_equal(pthread_join(t[i], NULL), 0);
    char *p = page(m);
    char want[128];
    /* per thread: i odd -> list; i % 3 == 0 -> error */
    int list_err = 0, list_ok = 0;
    for (int i = 1; i < EACH; i += 2)
        *(i % 3 ? &list_ok : &list_err) += 1;
    snprintf(want, sizeof want, "headroom_api_requests_total{verb=\"list\",code=\"200\"} %d\n",
             THREADS * list_ok);
    assert_non_null(strstr(p, want));
    snprintf(want, sizeof want, "headroom_api_requests_total{verb=\"list\",code=\"error\"} %d\n",
             THREADS * list_err);
    assert_non_null(strstr(p, want));
    snprintf(want, sizeof want, "headroom_api_request_duration_seconds_count{verb=\"watch\"} %d\n",
             THREADS * EACH / 2);
    assert_non_null(strstr(p, want));
    free(p);
    free(m);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(counts_and_histograms),
        cmocka_unit_test(threads_add_up),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
