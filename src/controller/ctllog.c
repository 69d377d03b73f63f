/*
 * ctllog.c — format once, hand to the sink.
 */
#include "ctllog.h"

#include <stdarg.h>
#include <stdio.h>

void hr_ctl_logf(hr_log_sink fn, void *ud, const char *component, int level, const char *fmt, ...)
{
    char msg[1024];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    if (fn != NULL) {
        fn(ud, level, msg);
        return;
    }
    hr_log_stderr(component, level, msg);
}
