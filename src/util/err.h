/*
 * err.h — the error value every fallible function of the upper layers
 * returns.
 *
 * A status code says what kind of failure it was (callers branch on it: bad
 * input is exit 1, out of memory is not the user's fault); the message is
 * one line for a human, naming the object and the field, e.g.
 *   pod team-a/web-1: spec.containers[1].resources.requests.cpu: unknown suffix "1x"
 * The message lives inside the value, so no allocation can fail while an
 * error is being reported.
 */
#ifndef HR_UTIL_ERR_H
#define HR_UTIL_ERR_H

#include <stddef.h>

/* HR_MUST_CHECK on a function's declaration: a call that drops the result
 * is a warning, and so (-Werror) a build failure. Every function returning
 * hr_status carries it in its header, and so do the few others whose result
 * says whether they worked. gcc warns even through a (void) cast; a status
 * that is truly of no use is dropped with HR_IGNORE(call), the reason beside
 * it. Under clang the enum itself carries the attribute, so static helpers
 * and callbacks returning hr_status are covered too (the sanitizer and fuzz
 * builds). */
#define HR_MUST_CHECK __attribute__((warn_unused_result))
#define HR_IGNORE(call) ((void)!(call))
#ifdef __clang__
#define HR_STATUS_MUST_CHECK_ __attribute__((warn_unused_result))
#else
#define HR_STATUS_MUST_CHECK_ /* gcc has no such attribute on a type */
#endif

typedef enum HR_STATUS_MUST_CHECK_ hr_status {
    HR_OK = 0,
    HR_E_INPUT,    /* the input is malformed or inconsistent */
    HR_E_NOMEM,    /* out of memory, or over a configured memory limit */
    HR_E_IO,       /* reading a file or stream failed */
    HR_E_LIMIT,    /* the input is larger than allowed */
    HR_E_NOTFOUND, /* a named thing (node, pod) does not exist */
    HR_E_CANCELED, /* abandoned on shutdown before it was done (nothing sent) */
    HR_E_EXPIRED,  /* the caller's deadline (a leader's lease) had passed: nothing sent */
} hr_status;

#define HR_ERR_MSG_MAX 400

typedef struct hr_err {
    hr_status code;
    char msg[HR_ERR_MSG_MAX];
} hr_err;

/* Record an error (the code and a formatted message) and return the code,
 * so callers can write `return hr_err_set(err, HR_E_INPUT, "...")`.
 * err may be NULL. The message is truncated to fit. */
hr_status hr_err_set(hr_err *err, hr_status code, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
#if defined(__clang_analyzer__) && !defined(HR_ERR_C)
/* clang-tidy's analyzer does not look into err.c; without this it follows
 * `return hr_err_set(...)` as if it could return HR_OK and reports the
 * impossible paths (uninitialised outputs, leaks). */
#define hr_err_set(err, code, ...) ((void)hr_err_set((err), (code), __VA_ARGS__), (code))
#endif

/* Put `prefix: ` in front of an existing message (adds context on the way
 * up: the object name in front of a field path). */
void hr_err_prefix(hr_err *err, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

void hr_err_clear(hr_err *err);

/* Copy untrusted text into dst for a message: at most max visible bytes,
 * control and non-ASCII bytes shown as '?', "..." when cut. Returns dst. */
char *hr_err_quote(char *dst, size_t cap, const char *s, size_t len, size_t max);

#endif
