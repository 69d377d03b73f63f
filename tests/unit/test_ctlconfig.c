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
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <time.h>

#include <cmocka.h>

#include "cache/cache.h"
#include "controller/controller.h"
#include "core/config.h"
#include "core/names.h"
#include "hr_check.h"
#include "kube/decode/config.h"

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

static void sleep_ms(long ms)
{
    struct timespec ts = {ms / 1000, (ms % 1000) * 1000000L};
    nanosleep(&ts, NULL);
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
    sleep_ms(60); /* several feeder rounds (every 10 ms) */
    for (int i = 0; i < 100; i++)
        CHECK_I64("debounce getter", hr_controller_debounce_ms(f.ctl), 3000);
    CHECK_I64("the getter pushed nothing to the executor", hr_controller_node_rate(f.ctl), 4);
    sleep_ms(30);
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

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(starts_with_what_it_is_given),
        cmocka_unit_test(a_change_is_pushed_once),
        cmocka_unit_test(nothing_is_polled),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
