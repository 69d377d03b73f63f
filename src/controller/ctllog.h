/*
 * ctllog.h — how the controller's parts log: one printf-style call that
 * hands a finished logfmt fragment to the daemon's sink (which adds time
 * and level, or turns it into JSON), or to stderr when there is no sink.
 */
#ifndef HR_CONTROLLER_CTLLOG_H
#define HR_CONTROLLER_CTLLOG_H

/* The same shape as the watch and server layers' sinks. */
typedef void (*hr_ctl_log_fn)(void *ud, int level, const char *msg);

void hr_ctl_logf(hr_ctl_log_fn fn, void *ud, const char *component, int level, const char *fmt, ...)
    __attribute__((format(printf, 5, 6)));

#endif
