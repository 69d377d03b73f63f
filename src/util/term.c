/*
 * term.c — what a terminal can show (term.h).
 */
#include "util/term.h"

#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/ioctl.h>
#include <unistd.h>

static bool set(const char *v)
{
    return v != NULL && v[0] != '\0';
}

bool hr_term_utf8(const char *lc_all, const char *lc_ctype, const char *lang, const char *term)
{
    const char *loc = set(lc_all) ? lc_all : set(lc_ctype) ? lc_ctype : lang;
    if (!set(loc) || !set(term) || strcmp(term, "dumb") == 0)
        return false;
    for (const char *p = loc; *p; p++)
        if (strncasecmp(p, "utf-8", 5) == 0 || strncasecmp(p, "utf8", 4) == 0)
            return true;
    return false;
}

int hr_term_columns(const char *columns_env, int ws_col)
{
    if (set(columns_env)) {
        char *end = NULL;
        long c = strtol(columns_env, &end, 10);
        if (*end == '\0' && c >= 1 && c <= 1000)
            return (int)c;
    }
    return ws_col > 0 ? ws_col : 80;
}

hr_term hr_term_of(int fd)
{
    hr_term t = {0};
    t.tty = isatty(fd) == 1;
    struct winsize ws = {0};
    int ws_col = t.tty && ioctl(fd, TIOCGWINSZ, &ws) == 0 ? ws.ws_col : 0;
    t.columns = hr_term_columns(getenv("COLUMNS"), ws_col);
    t.unicode =
        t.tty && hr_term_utf8(getenv("LC_ALL"), getenv("LC_CTYPE"), getenv("LANG"), getenv("TERM"));
    return t;
}
