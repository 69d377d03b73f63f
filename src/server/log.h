/*
 * log.h — how the server layer reports what happens (a cert reloaded, a
 * listener failed) without deciding how logs look.
 *
 * Log format and levels belong to the daemon (`headroom run`, SPEC §9:
 * logfmt or JSON, -v levels), so the server takes a sink and hands it one
 * preformatted key=value line. No sink: nothing is logged.
 *
 * The level numbers and the sink's signature are the same as the watch
 * layer's (kube/watch/watch.h), so the daemon passes one function to both; the
 * names differ only because both headers meet in cmd/.
 */
#ifndef HR_SERVER_LOG_H
#define HR_SERVER_LOG_H

typedef enum hr_log_lv {
    HR_LV_ERROR = 0,
    HR_LV_WARN = 1,
    HR_LV_INFO = 2,
    HR_LV_DEBUG = 3,
} hr_log_lv;

/* msg is logfmt without level and time, e.g. `msg="cert reloaded" dir=/x`. */
typedef void (*hr_log_sink)(void *ud, int level, const char *msg);

typedef struct hr_logger {
    hr_log_sink fn; /* NULL: discard */
    void *ud;
} hr_logger;

void hr_logf(const hr_logger *l, hr_log_lv level, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

#endif
