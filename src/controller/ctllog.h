/*
 * ctllog.h — how the controller's parts log: one printf-style call that
 * hands a finished logfmt fragment to the daemon's sink (which adds time
 * and level, or turns it into JSON), or to stderr when there is no sink.
 */
#ifndef HR_CONTROLLER_CTLLOG_H
#define HR_CONTROLLER_CTLLOG_H

#include "util/log.h"

/* level is an hr_log_level (util/log.h). */
void hr_ctl_logf(hr_log_sink fn, void *ud, const char *component, int level, const char *fmt, ...)
    __attribute__((format(printf, 5, 6)));

#endif
