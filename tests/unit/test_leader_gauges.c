/*
 * test_leader_gauges.c — the state of the cluster is exported once (design
 * §9.3): the per-node and per-pod gauges and the totals over them
 * (headroom_pods_managed, headroom_nodes_managed, headroom_resizes_deferred)
 * come from the leader only, so two scraped replicas do not double every
 * series; a follower still exports its own counters and the reconcile
 * histogram, and shows the gauges from the first scrape after it leads.
 * Without leader election the one process always exports them (it also
 * writes, which needs an API server: tests/e2e/e2e_controller.sh checks
 * those families on such a process).
 *
 * The controller runs for real (feeder, worker) on a real cache fed through
 * the watch's sink, with no API client: it reconciles while not leading, so
 * it writes nothing, and leadership is switched only for the scrapes.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <cmocka.h>

#include "cache/cache.h"
#include "cache/sink.h"
#include "controller/controller.h"
#include "core/config.h"
#include "util/clock.h"

static atomic_bool leads;

static bool leading(void *ud)
{
    (void)ud;
    return atomic_load(&leads);
}

static bool synced(void *ud)
{
    (void)ud;
    return true;
}

static void quiet(void *ud, int level, const char *msg)
{
    (void)ud;
    (void)level;
    (void)msg;
}

static void feed(hr_csink *sink, const char *json)
{
    yyjson_doc *d = yyjson_read(json, strlen(json), 0);
    assert_non_null(d);
    hr_wsink ws = hr_csink_wsink(sink);
    hr_err err;
    hr_err_clear(&err);
    assert_int_equal(ws.upsert(ws.ud, yyjson_doc_get_root(d), &err), HR_OK);
    yyjson_doc_free(d);
}

typedef struct fixture {
    hr_cache *cache;
    hr_csink *sink[HR_CK_COUNT_];
    hr_controller *ctl;
} fixture;

/* A managed namespace, an 8-core node and one pod bound to it requesting
 * 500m (Pending: a Running pod would need container statuses, design §4
 * rule 15). */
static void start(fixture *f)
{
    hr_err err;
    assert_int_equal(hr_cache_new(&f->cache, &err), HR_OK);
    for (int k = 0; k < HR_CK_COUNT_; k++)
        assert_int_equal(hr_csink_new(f->cache, (hr_ckind)k, &f->sink[k], &err), HR_OK);
    feed(f->sink[HR_CK_NAMESPACE], "{\"metadata\":{\"name\":\"team-a\",\"resourceVersion\":\"1\","
                                   "\"labels\":{\"kube-headroom.dev/mode\":\"managed\"}}}");
    feed(f->sink[HR_CK_NODE], "{\"metadata\":{\"name\":\"n0\",\"resourceVersion\":\"2\"},"
                              "\"status\":{\"allocatable\":{\"cpu\":\"8\"},\"conditions\":"
                              "[{\"type\":\"Ready\",\"status\":\"True\"}]}}");
    feed(f->sink[HR_CK_POD],
         "{\"metadata\":{\"namespace\":\"team-a\",\"name\":\"web\",\"uid\":\"u-web\","
         "\"resourceVersion\":\"3\"},\"spec\":{\"nodeName\":\"n0\",\"containers\":[{\"name\":"
         "\"app\",\"resources\":{\"requests\":{\"cpu\":\"500m\"}}}]},"
         "\"status\":{\"phase\":\"Pending\"}}");
    hr_config cfg;
    hr_config_defaults(&cfg);
    cfg.debounce_ms = 0; /* reconcile at once */
    hr_controller_opts o = {
        .cache = f->cache,
        .config = &cfg,
        .leading = leading,
        .workers = 1,
        .synced = synced,
        .log = quiet,
    };
    assert_int_equal(hr_controller_start(&o, &f->ctl, &err), HR_OK);
    /* The node is reconciled (not leading: nothing is written). */
    hr_ctlmetrics *m = hr_controller_metrics(f->ctl);
    for (int i = 0; i < 500 && atomic_load(&m->pods_managed) < 1; i++) {
        hr_mono_sleep_ms(10);
    }
    assert_int_equal(atomic_load(&m->pods_managed), 1);
}

static void stop(fixture *f)
{
    hr_controller_stop(f->ctl);
    for (int k = 0; k < HR_CK_COUNT_; k++)
        hr_csink_free(f->sink[k]);
    hr_cache_free(f->cache);
}

/* What a scrape shows of the gauges and of the counters. */
static char *gauges(fixture *f)
{
    hr_buf b;
    hr_buf_init(&b, 0);
    hr_controller_render_gauges(f->ctl, &b);
    hr_buf_putc(&b, '\0');
    assert_false(hr_buf_failed(&b));
    return b.data;
}

static char *counters(fixture *f)
{
    hr_buf b;
    hr_buf_init(&b, 0);
    hr_ctlmetrics_render(hr_controller_metrics(f->ctl), &b);
    hr_buf_putc(&b, '\0');
    assert_false(hr_buf_failed(&b));
    return b.data;
}

static const char *const state_series[] = {
    "\nheadroom_pods_managed 1\n",
    "\nheadroom_nodes_managed 1\n",
    "\nheadroom_resizes_deferred 0\n",
    "\nheadroom_node_factor{node=\"n0\"} ",
    "\nheadroom_node_slack_cores{node=\"n0\"} 7.500\n",
    "\nheadroom_node_booked_ratio{node=\"n0\"} ",
    "\nheadroom_node_managed_pods{node=\"n0\"} 1\n",
    "\nheadroom_pod_limit_cores{namespace=\"team-a\",pod=\"web\"} 0.000\n",
    "\nheadroom_node_allocatable_cores{node=\"n0\"} ",
    "\nheadroom_node_booked_cores{node=\"n0\"} ",
    "\nheadroom_pod_target_cores{namespace=\"team-a\",pod=\"web\"} ",
    "\nheadroom_pod_held{namespace=\"team-a\",pod=\"web\",reason=\"dry-run\"} 1\n",
    "\nheadroom_pod_info{namespace=\"team-a\",pod=\"web\",node=\"n0\"} 1\n",
};
#define N_STATE (sizeof state_series / sizeof state_series[0])

static void follower_exports_no_state_leader_does(void **state)
{
    (void)state;
    fixture f;
    atomic_store(&leads, false);
    start(&f);

    char *p = gauges(&f);
    assert_string_equal(p, ""); /* not one family, not even its HELP */
    free(p);
    p = counters(&f);
    assert_non_null(strstr(p, "\nheadroom_resizes_total{result=\"applied\"} 0\n"));
    assert_non_null(strstr(p, "\nheadroom_reconcile_duration_seconds_count "));
    assert_null(strstr(p, "headroom_pods_managed"));
    free(p);

    atomic_store(&leads, true); /* gained the Lease: the next scrape shows all */
    p = gauges(&f);
    for (size_t i = 0; i < N_STATE; i++)
        if (strstr(p, state_series[i] + 1) == NULL)
            fail_msg("leader's page lacks %s in:\n%s", state_series[i] + 1, p);
    free(p);

    atomic_store(&leads, false); /* lost it again */
    p = gauges(&f);
    assert_string_equal(p, "");
    free(p);
    stop(&f);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(follower_exports_no_state_leader_does),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
