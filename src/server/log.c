/*
 * log.c — format one line and hand it to the sink (see log.h).
 */
#include <stdarg.h>
#include <stdio.h>

#include "server/log.h"

void hr_logf(const hr_logger *l, hr_log_lv level, const char *fmt, ...)
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
