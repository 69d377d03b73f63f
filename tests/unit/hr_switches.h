/*
 * hr_switches.h — how often a thread of this process has gone to sleep,
 * for tests that a waiter sleeps instead of polling: the kernel's count of
 * its voluntary context switches (/proc/self/task/TID/status); and the
 * plain sleep those tests nap with.
 */
#ifndef HR_TEST_SWITCHES_H
#define HR_TEST_SWITCHES_H

#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

/* Sleeps ms milliseconds (an interrupted nap is merely shorter). */
static inline void hr_nap_ms(long ms)
{
    struct timespec ts = {ms / 1000, (ms % 1000) * 1000000L};
    nanosleep(&ts, NULL);
}

/* The calling thread's id, for hr_switches. */
static inline long hr_tid(void)
{
    return (long)syscall(SYS_gettid);
}

/* Thread tid's voluntary context switches so far; -1: unreadable. */
static inline long hr_switches(long tid)
{
    char path[64], line[128];
    snprintf(path, sizeof path, "/proc/self/task/%ld/status", tid);
    FILE *f = fopen(path, "r");
    long n = -1;
    if (!f)
        return -1;
    while (fgets(line, sizeof line, f))
        if (sscanf(line, "voluntary_ctxt_switches: %ld", &n) == 1)
            break;
    fclose(f);
    return n;
}

/* The sum over every other thread of this process (-1: unreadable). */
static inline long hr_switches_others(void)
{
    DIR *d = opendir("/proc/self/task");
    long me = hr_tid(), sum = 0;
    if (!d)
        return -1;
    struct dirent *e;
    while ((e = readdir(d)) != NULL) {
        long tid = strtol(e->d_name, NULL, 10);
        if (tid <= 0 || tid == me)
            continue;
        long n = hr_switches(tid);
        if (n > 0)
            sum += n; /* a thread that just ended reads as -1: not counted */
    }
    closedir(d);
    return sum;
}

#endif
