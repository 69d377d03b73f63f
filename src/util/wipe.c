/*
 * wipe.c — hr_wipe on glibc's explicit_bzero (see wipe.h).
 */
#include "util/wipe.h"

#include <string.h>

void hr_wipe(void *p, size_t n)
{
    if (p && n)
        explicit_bzero(p, n);
}

void hr_wipe_str(char *s)
{
    if (s)
        hr_wipe(s, strlen(s));
}
