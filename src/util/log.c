/*
 * log.c — format one fragment and hand it to the sink (see log.h).
 */
#include "util/log.h"

#include <stdarg.h>
#include <stdio.h>

void hr_logf(const hr_logger *l, hr_log_level level, const char *fmt, ...)
{
    if (l == NULL || l->fn == NULL)
        return;
    char line[1024];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(line, sizeof line, fmt, ap);
    va_end(ap);
    l->fn(l->ud, level, line);
}

const char *hr_log_level_name(int level)
{
    static const char *const names[] = {"error", "warn", "info", "debug"};
    return names[level < HR_LV_ERROR ? HR_LV_ERROR : level > HR_LV_DEBUG ? HR_LV_DEBUG : level];
}

void hr_log_stderr(const char *component, int level, const char *msg)
{
    fprintf(stderr, "level=%s component=%s %s\n", hr_log_level_name(level), component, msg);
}
