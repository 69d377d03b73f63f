/*
 * test_ctlconfig.c — configuration reaches the controller by push, not by
 * poll (design §11): a change arrives through hr_controller_config_changed
 * once — debounce period and the executor's per-node rate — the same values
 * again push nothing, and neither the getters nor the feeder thread pick
 * anything up from the cache on their own.
 *
 * The controller runs for real (feeder, workers, status thread) with no
 * API client: its `synced` hook says "not yet", so nothing is ever
 * reconciled or written.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <cmocka.h>

#include "cache/cache.h"
#include "controller/controller.h"
#include "core/config.h"
#include "core/names.h"
#include "hr_check.h"
#include "hr_testfile.h"
#include "kube/decode/cfgspec.h"
#include "kube/transport/client.h"
#include "util/clock.h"

static bool never_synced(void *ud)
{
    (void)ud;
    return false;
}

static void quiet(void *ud, int level, const char *msg)
{
    (void)ud;
    (void)level;
    (void)msg;
}

typedef struct fixture {
    hr_cache *cache;
    hr_controller *ctl;
} fixture;

static void start(fixture *f, const hr_config *initial)
{
    hr_err err;
    assert_int_equal(hr_cache_new(&f->cache, &err), HR_OK);
    hr_controller_opts o = {
        .cache = f->cache,
        .config = initial,
        .workers = 1,
        .synced = never_synced,
        .log = quiet,
    };
    assert_int_equal(hr_controller_start(&o, &f->ctl, &err), HR_OK);
}

static void stop(fixture *f)
{
    hr_controller_stop(f->ctl);
    hr_cache_free(f->cache);
}

/* A HeadroomConfig lands in the cache, as the config watch would put it. */
static void cache_gets_config(hr_cache *c, int64_t debounce_ms, int pps)
{
    hr_kconfig k;
    memset(&k, 0, sizeof k);
    k.meta = (hr_kmeta){"", HR_CONFIG_NAME, "u", "7", {NULL, 0}};
    hr_config_defaults(&k.cfg);
    k.cfg.present = true;
    k.cfg.dry_run = false;
    k.cfg.debounce_ms = debounce_ms;
    k.cfg.per_node_pps = pps;
    hr_arena a;
    hr_arena_init(&a, 0);
    hr_err err;
    assert_int_equal(hr_cache_put_config(c, &k, 1, &a, &err), HR_OK);
    hr_arena_free(&a);
}

static void starts_with_what_it_is_given(void **state)
{
    (void)state;
    fixture f;
    hr_config cfg;
    hr_config_defaults(&cfg);
    cfg.debounce_ms = 3000;
    cfg.per_node_pps = 4;
    start(&f, &cfg);
    CHECK_I64("debounce at start", hr_controller_debounce_ms(f.ctl), 3000);
    CHECK_I64("node rate at start", hr_controller_node_rate(f.ctl), 4);
    /* The same values again: nothing to push. */
    CHECK_I64("same config", hr_controller_config_changed(f.ctl, &cfg), 0);
    stop(&f);

    start(&f, NULL);
    hr_config_defaults(&cfg);
    CHECK_I64("defaults: debounce", hr_controller_debounce_ms(f.ctl), cfg.debounce_ms);
    CHECK_I64("defaults: node rate", hr_controller_node_rate(f.ctl), cfg.per_node_pps);
    stop(&f);
}

static void a_change_is_pushed_once(void **state)
{
    (void)state;
    fixture f;
    hr_config cfg;
    hr_config_defaults(&cfg);
    cfg.debounce_ms = 3000;
    cfg.per_node_pps = 4;
    start(&f, &cfg);

    cfg.debounce_ms = 500;
    cfg.per_node_pps = 7;
    CHECK_I64("first push", hr_controller_config_changed(f.ctl, &cfg),
              HR_CTL_PUSHED_DEBOUNCE | HR_CTL_PUSHED_NODE_RATE);
    CHECK_I64("debounce after the push", hr_controller_debounce_ms(f.ctl), 500);
    CHECK_I64("node rate after the push", hr_controller_node_rate(f.ctl), 7);
    for (int i = 0; i < 3; i++)
        CHECK_I64("the same values again", hr_controller_config_changed(f.ctl, &cfg), 0);

    cfg.debounce_ms = 0;
    CHECK_I64("debounce only", hr_controller_config_changed(f.ctl, &cfg), HR_CTL_PUSHED_DEBOUNCE);
    CHECK_I64("debounce 0", hr_controller_debounce_ms(f.ctl), 0);
    CHECK_I64("rate untouched", hr_controller_node_rate(f.ctl), 7);
    cfg.per_node_pps = 1;
    CHECK_I64("rate only", hr_controller_config_changed(f.ctl, &cfg), HR_CTL_PUSHED_NODE_RATE);
    CHECK_I64("rate 1", hr_controller_node_rate(f.ctl), 1);
    stop(&f);
}

static void nothing_is_polled(void **state)
{
    (void)state;
    fixture f;
    hr_config cfg;
    hr_config_defaults(&cfg);
    cfg.debounce_ms = 3000;
    cfg.per_node_pps = 4;
    start(&f, &cfg);
    /* The cache learns of a new config; nobody pushes it. */
    cache_gets_config(f.cache, 100, 9);
    hr_mono_sleep_ms(60); /* several feeder rounds (every 10 ms) */
    for (int i = 0; i < 100; i++)
        CHECK_I64("debounce getter", hr_controller_debounce_ms(f.ctl), 3000);
    CHECK_I64("the getter pushed nothing to the executor", hr_controller_node_rate(f.ctl), 4);
    hr_mono_sleep_ms(30);
    CHECK_I64("the feeder pushed nothing to the executor", hr_controller_node_rate(f.ctl), 4);

    /* The push is what moves them. */
    hr_cache_lock(f.cache);
    hr_config eff;
    hr_config_effective(hr_cache_config(f.cache, NULL), HR_DRY_RUN_UNSET, &eff);
    unsigned pushed = hr_controller_config_changed(f.ctl, &eff);
    hr_cache_unlock(f.cache);
    CHECK_I64("pushed", pushed, HR_CTL_PUSHED_DEBOUNCE | HR_CTL_PUSHED_NODE_RATE);
    CHECK_I64("debounce pushed", hr_controller_debounce_ms(f.ctl), 100);
    CHECK_I64("rate pushed", hr_controller_node_rate(f.ctl), 9);
    stop(&f);
}

/* An API client nothing is ever sent through: loopback port 1. */
static hr_kclient *new_client(char *kc, size_t kc_size)
{
    assert_int_equal(write_dead_kubeconfig(kc, kc_size, "ctlconfig"), 0);
    hr_kclient_opts ko = {.kubeconfig = kc}; /* the client's defaults: 50/100 */
    hr_kclient *k = NULL;
    hr_err err;
    if (hr_kclient_new(&ko, &k, &err) != HR_OK)
        fail_msg("%s", err.msg);
    return k;
}

static uint64_t rate_sets(hr_kclient *k)
{
    hr_kclient_stats s;
    hr_kclient_get_stats(k, &s);
    return s.rate_sets;
}

static void check_rate(hr_kclient *k, double qps, int burst)
{
    double q = 0;
    int b = 0;
    hr_kclient_get_rate(k, &q, &b);
    CHECK_TRUE("client qps", q == qps);
    CHECK_I64("client burst", b, burst);
}

/* The synced hook of waiting_for_the_sync_is_not_a_poll: counts its calls, says what it is told. */
static atomic_int g_sync_asks;
static atomic_bool g_is_synced;
static bool counted_sync(void *ud)
{
    (void)ud;
    atomic_fetch_add(&g_sync_asks, 1);
    return atomic_load(&g_is_synced);
}

/* Design §5, idle means idle: a watch that never syncs (no HeadroomConfig CRD installed) must not
 * keep the feeder looking 20 times a second; it asks again at doubling gaps (50 ms, 100 ms, ...,
 * at most 30 s), and hears of the sync from the cache's doorbell (hr_cache_ring, as the informers
 * ring it when a watch syncs) at once. */
static void waiting_for_the_sync_is_not_a_poll(void **state)
{
    (void)state;
    hr_cache *cache;
    hr_err err;
    assert_int_equal(hr_cache_new(&cache, &err), HR_OK);
    atomic_store(&g_sync_asks, 0);
    atomic_store(&g_is_synced, false);
    hr_controller_opts o = {.cache = cache, .workers = 1, .synced = counted_sync, .log = quiet};
    hr_controller *ctl;
    assert_int_equal(hr_controller_start(&o, &ctl, &err), HR_OK);
    hr_mono_sleep_ms(
        1600); /* asks at 0, 50, 150, 350, 750, 1550 ms: 6, where a 50 ms poll asks 32 times */
    int asks = atomic_load(&g_sync_asks);
    printf("synced asked %d times in 1.6 s while not synced\n", asks);
    CHECK_TRUE("asks while not synced", asks >= 2 && asks <= 8);
    /* The sync: the next gap is 1.6 s, the doorbell brings the feeder at once. */
    atomic_store(&g_is_synced, true);
    int before = atomic_load(&g_sync_asks);
    hr_cache_ring(cache);
    int waited = 0;
    while (atomic_load(&g_sync_asks) == before && waited < 1000) {
        hr_mono_sleep_ms(10);
        waited += 10;
    }
    printf("the doorbell brought the feeder in %d ms\n", waited);
    CHECK_TRUE("the feeder heard the sync within 1 s", atomic_load(&g_sync_asks) > before);
    /* Synced: never asked again (the status writer, kicked by the same doorbell, asks once too). */
    hr_mono_sleep_ms(300);
    int after = atomic_load(&g_sync_asks);
    hr_mono_sleep_ms(300);
    CHECK_I64("asks once synced", atomic_load(&g_sync_asks), after);
    hr_controller_stop(ctl);
    hr_cache_free(cache);
}

/* rateLimits.clientQPS/clientBurst reach the API client's write limiter:
 * at start, then once per change, never again for the same values. */
static void the_client_rate_is_pushed_once(void **state)
{
    (void)state;
    char kc[128];
    hr_kclient *k = new_client(kc, sizeof kc);
    check_rate(k, 50, 100);
    uint64_t n0 = rate_sets(k);

    hr_cache *cache;
    hr_err err;
    assert_int_equal(hr_cache_new(&cache, &err), HR_OK);
    hr_config cfg;
    hr_config_defaults(&cfg);
    cfg.client_qps = 20;
    cfg.client_burst = 30;
    hr_controller_opts o = {.client = k,
                            .cache = cache,
                            .config = &cfg,
                            .workers = 1,
                            .synced = never_synced,
                            .log = quiet};
    hr_controller *ctl = NULL;
    assert_int_equal(hr_controller_start(&o, &ctl, &err), HR_OK);
    CHECK_I64("set once at start", rate_sets(k) - n0, 1);
    check_rate(k, 20, 30);
    CHECK_I64("the same config", hr_controller_config_changed(ctl, &cfg), 0);
    CHECK_I64("nothing set for it", rate_sets(k) - n0, 1);

    cfg.client_qps = 2;
    CHECK_I64("clientQPS changed", hr_controller_config_changed(ctl, &cfg),
              HR_CTL_PUSHED_CLIENT_RATE);
    CHECK_I64("set once for it", rate_sets(k) - n0, 2);
    check_rate(k, 2, 30);
    for (int i = 0; i < 3; i++)
        CHECK_I64("again: nothing", hr_controller_config_changed(ctl, &cfg), 0);
    CHECK_I64("still once", rate_sets(k) - n0, 2);

    cfg.client_burst = 2;
    cfg.per_node_pps = 3;
    CHECK_I64("clientBurst and the node rate", hr_controller_config_changed(ctl, &cfg),
              HR_CTL_PUSHED_CLIENT_RATE | HR_CTL_PUSHED_NODE_RATE);
    CHECK_I64("set once more", rate_sets(k) - n0, 3);
    check_rate(k, 2, 2);
    cfg.debounce_ms = 700;
    CHECK_I64("debounce only", hr_controller_config_changed(ctl, &cfg), HR_CTL_PUSHED_DEBOUNCE);
    CHECK_I64("the client untouched", rate_sets(k) - n0, 3);

    /* The path cmd_run takes: the HeadroomConfig lands in the cache and
     * the observer, under the cache lock, pushes its effective config. */
    cache_gets_config(cache, 700, 3);
    hr_cache_lock(cache);
    hr_config eff;
    hr_config_effective(hr_cache_config(cache, NULL), HR_DRY_RUN_UNSET, &eff);
    unsigned pushed = hr_controller_config_changed(ctl, &eff);
    hr_cache_unlock(cache);
    CHECK_I64("back to the defaults", pushed, HR_CTL_PUSHED_CLIENT_RATE);
    CHECK_I64("set once for them", rate_sets(k) - n0, 4);
    check_rate(k, 50, 100);

    hr_controller_stop(ctl);
    hr_cache_free(cache);
    hr_kclient_free(k);
    unlink(kc);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(starts_with_what_it_is_given),
        cmocka_unit_test(a_change_is_pushed_once),
        cmocka_unit_test(nothing_is_polled),
        cmocka_unit_test(the_client_rate_is_pushed_once),
        cmocka_unit_test(waiting_for_the_sync_is_not_a_poll),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
