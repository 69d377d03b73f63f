/*
 * log.h — how the server layer reports what happens (a cert reloaded, a
 * listener failed) without deciding how logs look.
 *
 * Log format and levels belong to the daemon (`headroom run`, SPEC §9:
 * logfmt or JSON, -v levels), so the server takes a sink and hands it one
 * preformatted key=value line. No sink: nothing is logged.
 */
#ifndef HR_SERVER_LOG_H
#define HR_SERVER_LOG_H

typedef enum hr_log_level {
    HR_LOG_ERROR = 0,
    HR_LOG_WARN = 1,
    HR_LOG_INFO = 2,
    HR_LOG_DEBUG = 3,
} hr_log_level;

/* msg is logfmt without level and time, e.g. `msg="cert reloaded" dir=/x`. */
typedef void (*hr_log_fn)(void *ud, hr_log_level level, const char *msg);

typedef struct hr_logger {
    hr_log_fn fn; /* NULL: discard */
    void *ud;
} hr_logger;

void hr_logf(const hr_logger *l, hr_log_level level, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

#endif
