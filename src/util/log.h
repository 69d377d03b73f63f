/*
 * log.h — the one set of log levels and the one sink type.
 *
 * How a log line finally looks (logfmt or JSON, design §9; time, level, -v)
 * is the daemon's choice, so every layer — watch, controller, server,
 * webhook — hands a sink one preformatted logfmt fragment without level or
 * time, e.g. `msg="cert reloaded" dir=/x`, and the daemon passes the same
 * function to all of them.
 */
#ifndef HR_UTIL_LOG_H
#define HR_UTIL_LOG_H

typedef enum hr_log_level {
    HR_LV_ERROR = 0,
    HR_LV_WARN = 1,
    HR_LV_INFO = 2,
    HR_LV_DEBUG = 3,
} hr_log_level;

/* level is an hr_log_level; a sink treats anything else as the nearest. */
typedef void (*hr_log_sink)(void *ud, int level, const char *msg);

typedef struct hr_logger {
    hr_log_sink fn; /* NULL: discard */
    void *ud;
} hr_logger;

/* Format a fragment and hand it to l's sink (none: nothing is logged). */
void hr_logf(const hr_logger *l, hr_log_level level, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

/* "error", "warn", "info", "debug"; out of range: the nearest. */
const char *hr_log_level_name(int level);

/* The fallback of layers that may run without a sink: one logfmt line on
 * stderr, `level=<name> component=<component> <msg>`. */
void hr_log_stderr(const char *component, int level, const char *msg);

#endif
