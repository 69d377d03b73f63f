/*
 * cfgspec.h — a HeadroomConfig's spec into the core's hr_config, and the Go
 * durations its fields are written in.
 */
#ifndef HR_KUBE_DECODE_CFGSPEC_H
#define HR_KUBE_DECODE_CFGSPEC_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "core/config.h"
#include "kube/decode/common.h"
#include "util/arena.h"
#include "util/err.h"

typedef struct hr_kconfig {
    hr_kmeta meta;
    hr_config cfg; /* defaults, present = true, dry_run = spec.dryRun (absent: true) */
} hr_kconfig;

/* Also runs hr_config_validate: a config the core would refuse is an error. */
HR_MUST_CHECK hr_status hr_decode_config(yyjson_val *obj, hr_arena *a, hr_kconfig *out,
                                         hr_err *err);

/* A Go duration ("2s", "1m30s", "500ms") in milliseconds, rounded down.
 * Returns false on bad syntax, negative values or overflow. */
HR_MUST_CHECK bool hr_parse_duration_ms(const char *s, size_t len, int64_t *ms);

#endif
