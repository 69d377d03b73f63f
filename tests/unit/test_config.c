/*
 * test_config.c — the configuration in force (design §11): flags, then the
 * HeadroomConfig, then defaults, over the whole --dry-run × spec.dryRun ×
 * "is there a HeadroomConfig" matrix, and the settings that ride along.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include <cmocka.h>

#include "core/config.h"
#include "hr_check.h"

typedef enum cluster_kind {
    NO_CONFIG,   /* NULL: nothing read */
    ABSENT,      /* the cache's stand-in: defaults, present = false */
    ABSENT_LIVE, /* present = false but dry_run = false (must not leak) */
    SPEC_DRY,    /* a HeadroomConfig with spec.dryRun: true */
    SPEC_LIVE,   /* a HeadroomConfig with spec.dryRun: false */
} cluster_kind;

static const char *const kind_names[] = {"no config", "absent", "absent(live)", "spec dry",
                                         "spec live"};
static const char *const flag_names[] = {"unset", "--dry-run", "--dry-run=false"};

static hr_config cluster(cluster_kind k)
{
    hr_config c;
    hr_config_defaults(&c);
    c.present = k == SPEC_DRY || k == SPEC_LIVE;
    c.dry_run = k == ABSENT || k == SPEC_DRY;
    /* Settings a HeadroomConfig may change, to see they pass through. */
    c.debounce_ms = 750;
    c.per_node_pps = 3;
    c.grow_percent = 20;
    return c;
}

static void dry_run_matrix(void **state)
{
    (void)state;
    /* want[kind][flag] */
    static const bool want[5][3] = {
        [NO_CONFIG] = {true, true, false},
        [ABSENT] = {true, true, false},
        [ABSENT_LIVE] = {true, true, false}, /* no HeadroomConfig ⇒ dry run */
        [SPEC_DRY] = {true, true, false},
        [SPEC_LIVE] = {false, true, false}, /* --dry-run beats spec.dryRun */
    };
    for (int k = NO_CONFIG; k <= SPEC_LIVE; k++) {
        for (int f = HR_DRY_RUN_UNSET; f <= HR_DRY_RUN_OFF; f++) {
            hr_config in = cluster((cluster_kind)k);
            hr_config out;
            hr_config_effective(k == NO_CONFIG ? NULL : &in, (hr_dry_run_flag)f, &out);
            char label[96];
            snprintf(label, sizeof label, "%s, %s: dry_run", kind_names[k], flag_names[f]);
            CHECK_I64(label, out.dry_run, want[k][f]);
            snprintf(label, sizeof label, "%s, %s: present", kind_names[k], flag_names[f]);
            CHECK_I64(label, out.present, k == SPEC_DRY || k == SPEC_LIVE);
        }
    }
}

static void settings_come_from_config_else_defaults(void **state)
{
    (void)state;
    hr_config dflt;
    hr_config_defaults(&dflt);
    hr_config out;
    hr_config_effective(NULL, HR_DRY_RUN_OFF, &out);
    CHECK_I64("defaults: debounce", out.debounce_ms, dflt.debounce_ms);
    CHECK_I64("defaults: per-node rate", out.per_node_pps, dflt.per_node_pps);
    CHECK_I64("defaults: quantum", out.quantum, dflt.quantum);
    CHECK_TRUE("defaults: namespace selector", out.ns_selector.set);
    CHECK_I64("defaults: excluded namespaces", out.n_excluded_ns, 1);

    hr_config in = cluster(SPEC_LIVE);
    hr_config_effective(&in, HR_DRY_RUN_ON, &out);
    CHECK_I64("config: debounce", out.debounce_ms, 750);
    CHECK_I64("config: per-node rate", out.per_node_pps, 3);
    CHECK_I64("config: grow percent", out.grow_percent, 20);
    CHECK_TRUE("config: selector shared", out.ns_selector.req == in.ns_selector.req);
    CHECK_I64("config: the input is left alone", in.dry_run, false);

    /* In place. */
    hr_config_effective(&in, HR_DRY_RUN_UNSET, &in);
    CHECK_I64("in place: dry_run", in.dry_run, false);
    hr_config_effective(&in, HR_DRY_RUN_ON, &in);
    CHECK_I64("in place, --dry-run: dry_run", in.dry_run, true);
    CHECK_I64("in place: debounce", in.debounce_ms, 750);
}

static void flag_named_only_when_given(void **state)
{
    (void)state;
    CHECK_TRUE("unset", !hr_dry_run_from_flag(HR_DRY_RUN_UNSET));
    CHECK_TRUE("--dry-run", hr_dry_run_from_flag(HR_DRY_RUN_ON));
    CHECK_TRUE("--dry-run=false", hr_dry_run_from_flag(HR_DRY_RUN_OFF));
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(dry_run_matrix),
        cmocka_unit_test(settings_come_from_config_else_defaults),
        cmocka_unit_test(flag_named_only_when_given),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
