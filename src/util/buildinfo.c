/*
 * buildinfo.c — `headroom version`'s two layouts and the build_info series
 * (buildinfo.h).
 */
#include "util/buildinfo.h"

#include "util/jsonstr.h"

const char *hr_buildinfo_platform(void)
{
#if defined(__linux__)
#define HR_OS "linux/"
#else
#define HR_OS "unknown/"
#endif
#if defined(__x86_64__)
    return HR_OS "amd64";
#elif defined(__aarch64__)
    return HR_OS "arm64";
#elif defined(__i386__)
    return HR_OS "386";
#elif defined(__arm__)
    return HR_OS "arm";
#elif defined(__riscv) && __riscv_xlen == 64
    return HR_OS "riscv64";
#elif defined(__s390x__)
    return HR_OS "s390x";
#elif defined(__powerpc64__) && __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
    return HR_OS "ppc64le";
#else
    return HR_OS "unknown";
#endif
#undef HR_OS
}

static const char *or_unknown(const char *s)
{
    return s ? s : "unknown";
}

void hr_buildinfo_text(hr_buf *b, const hr_buildinfo *bi)
{
    hr_buf_printf(b, "headroom %s\ncommit %s\ntree %s\nbuilt %s\nbuild %s\nplatform %s\n",
                  or_unknown(bi->version), or_unknown(bi->commit), or_unknown(bi->tree_state),
                  or_unknown(bi->build_date), or_unknown(bi->build), or_unknown(bi->platform));
}

void hr_buildinfo_json(hr_buf *b, const hr_buildinfo *bi)
{
    const struct {
        const char *key, *value;
    } fields[] = {
        {"version", bi->version},      {"commit", bi->commit}, {"treeState", bi->tree_state},
        {"buildDate", bi->build_date}, {"build", bi->build},   {"platform", bi->platform},
    };
    for (size_t i = 0; i < sizeof fields / sizeof fields[0]; i++) {
        hr_buf_puts(b, i ? "," : "{");
        hr_buf_json_str(b, fields[i].key);
        hr_buf_putc(b, ':');
        hr_buf_json_str(b, or_unknown(fields[i].value));
    }
    hr_buf_puts(b, "}\n");
}

/* A label value in the text format: backslash, quote and newline escaped. */
static void label_value(hr_buf *b, const char *v)
{
    for (const char *p = v; *p; p++) {
        if (*p == '\\' || *p == '"')
            hr_buf_putc(b, '\\');
        if (*p == '\n')
            hr_buf_puts(b, "\\n");
        else
            hr_buf_putc(b, *p);
    }
}

void hr_buildinfo_metric(hr_buf *b, const hr_buildinfo *bi)
{
    const struct {
        const char *key, *value;
    } labels[] = {
        {"version", bi->version},       {"commit", bi->commit}, {"tree_state", bi->tree_state},
        {"build_date", bi->build_date}, {"build", bi->build},   {"platform", bi->platform},
    };
    hr_buf_puts(b, "# HELP headroom_build_info Always 1: the version, commit and build of this "
                   "binary, as `headroom version` prints them.\n"
                   "# TYPE headroom_build_info gauge\nheadroom_build_info");
    for (size_t i = 0; i < sizeof labels / sizeof labels[0]; i++) {
        hr_buf_printf(b, "%c%s=\"", i ? ',' : '{', labels[i].key);
        label_value(b, or_unknown(labels[i].value));
        hr_buf_putc(b, '"');
    }
    hr_buf_puts(b, "} 1\n");
}

void hr_buildinfo_render(void *ud, hr_buf *out)
{
    hr_buildinfo_metric(out, ud);
}
