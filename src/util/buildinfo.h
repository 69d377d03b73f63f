/*
 * buildinfo.h — what `headroom version` prints: the build's version, commit,
 * work tree state, date, flags and platform, as text or as one JSON object;
 * and the same as /metrics' headroom_build_info.
 *
 * The values are the build's (generated/hr_version.h, written from
 * scripts/release/version.sh at every build; HR_BUILD_FLAGS from CMake); this
 * file only lays them out, so the layout is unit-tested with any values
 * (tests/unit/test_buildinfo.c).
 */
#ifndef HR_UTIL_BUILDINFO_H
#define HR_UTIL_BUILDINFO_H

#include "util/buf.h"

typedef struct hr_buildinfo {
    const char *version;    /* 0.1.0, 0.1.0-dev.3+g0123456789ab[.dirty], 0.1.0+unknown */
    const char *commit;     /* 40 hex digits, or "unknown" */
    const char *tree_state; /* clean, dirty or unknown */
    const char *build_date; /* RFC 3339 UTC, or "unknown" */
    const char *build;      /* the build type and sanitizers: RelWithDebInfo, Debug+asan+ubsan */
    const char *platform;   /* linux/amd64 (hr_buildinfo_platform) */
} hr_buildinfo;

/* The platform this file was compiled for, as Go and OCI name it: "linux/amd64",
 * "linux/arm64", ...; an architecture without a name here is "unknown". */
const char *hr_buildinfo_platform(void);

/* Six lines: "headroom V", "commit C", "tree T", "built D", "build B", "platform P".
 * A NULL field prints as "unknown". */
void hr_buildinfo_text(hr_buf *b, const hr_buildinfo *bi);

/* One JSON object and a newline: {"version", "commit", "treeState", "buildDate", "build",
 * "platform"}, every value a string. */
void hr_buildinfo_json(hr_buf *b, const hr_buildinfo *bi);

/* The Prometheus info series, HELP and TYPE included: headroom_build_info{version, commit,
 * tree_state, build_date, build, platform} 1 (design §9). */
void hr_buildinfo_metric(hr_buf *b, const hr_buildinfo *bi);

/* hr_buildinfo_metric as a /metrics part (hr_metrics_render_fn's shape); ud: the hr_buildinfo. */
void hr_buildinfo_render(void *ud, hr_buf *out);

#endif
