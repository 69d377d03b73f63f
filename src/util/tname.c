/*
 * tname.c — a name for the calling thread (see tname.h).
 */
#include "util/tname.h"

#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>

void hr_thread_name(const char *fmt, ...)
{
    char name[16]; /* the kernel's TASK_COMM_LEN, its NUL included */
    va_list ap;
    va_start(ap, fmt);
    (void)vsnprintf(name, sizeof name, fmt, ap); /* cut at 15 bytes: all a name can hold */
    va_end(ap);
    /* A diagnostic only: a refused name leaves the inherited one. */
    (void)pthread_setname_np(pthread_self(), name);
}
