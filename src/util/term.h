/*
 * term.h — what a terminal can show: whether output goes to one, whether it
 * takes UTF-8, how wide it is. For pictures (`headroom node`'s bars); the
 * decisions are pure functions of the environment's strings so that they
 * can be tested without a terminal.
 */
#ifndef HR_UTIL_TERM_H
#define HR_UTIL_TERM_H

#include <stdbool.h>

typedef struct hr_term {
    bool tty;     /* isatty(fd) */
    bool unicode; /* a terminal that takes UTF-8: tty, hr_term_utf8 */
    int columns;  /* hr_term_columns */
} hr_term;

/* The UTF-8 locale in force (the first set of LC_ALL, LC_CTYPE, LANG, as
 * POSIX orders them, names UTF-8 or utf8, any case) and a terminal that
 * draws (TERM set and not "dumb"). NULL is unset. */
bool hr_term_utf8(const char *lc_all, const char *lc_ctype, const char *lang, const char *term);

/* The width: $COLUMNS when it is a number from 1 to 1000, else the
 * terminal's (ws_col, 0 when unknown), else 80. */
int hr_term_columns(const char *columns_env, int ws_col);

/* fd's terminal under the process's environment (isatty, TIOCGWINSZ). */
hr_term hr_term_of(int fd);

#endif
