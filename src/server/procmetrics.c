/*
 * procmetrics.c — process_resident_memory_bytes, process_cpu_seconds_total,
 * process_start_time_seconds.
 */
#include "procmetrics.h"

#include <stdio.h>
#include <stdlib.h>
#include <sys/resource.h>
#include <time.h>
#include <unistd.h>

/* Boot time plus the process's start in clock ticks since boot. */
static double start_time(void)
{
    double btime = 0;
    FILE *f = fopen("/proc/stat", "r");
    if (f != NULL) {
        char line[256];
        while (fgets(line, sizeof line, f))
            if (sscanf(line, "btime %lf", &btime) == 1)
                break;
        (void)fclose(f); /* read-only: a failed close loses nothing */
    }
    unsigned long long ticks = 0;
    f = fopen("/proc/self/stat", "r");
    if (f != NULL) {
        char buf[1024];
        size_t n = fread(buf, 1, sizeof buf - 1, f);
        buf[n] = '\0';
        (void)fclose(f); /* read-only: a failed close loses nothing */
        /* Field 22 (starttime) counts from after the ")" closing comm. */
        char *p = buf;
        for (char *q = buf; *q; q++)
            if (*q == ')')
                p = q;
        int field = 2;
        for (char *q = p; *q && field < 22; q++)
            if (*q == ' ') {
                field++;
                if (field == 22)
                    ticks = strtoull(q + 1, NULL, 10);
            }
    }
    long hz = sysconf(_SC_CLK_TCK);
    return btime + (hz > 0 ? (double)ticks / (double)hz : 0);
}

void hr_procmetrics_render(void *ud, hr_buf *out)
{
    (void)ud;
    long pages = 0;
    FILE *f = fopen("/proc/self/statm", "r");
    if (f != NULL) {
        long size;
        if (fscanf(f, "%ld %ld", &size, &pages) != 2)
            pages = 0;
        (void)fclose(f); /* read-only: a failed close loses nothing */
    }
    struct rusage ru;
    double cpu = 0;
    if (getrusage(RUSAGE_SELF, &ru) == 0)
        cpu = (double)ru.ru_utime.tv_sec + (double)ru.ru_utime.tv_usec / 1e6 +
              (double)ru.ru_stime.tv_sec + (double)ru.ru_stime.tv_usec / 1e6;
    hr_buf_printf(
        out,
        "# HELP process_resident_memory_bytes Resident memory size in bytes.\n"
        "# TYPE process_resident_memory_bytes gauge\n"
        "process_resident_memory_bytes %ld\n"
        "# HELP process_cpu_seconds_total Total user and system CPU time spent in seconds.\n"
        "# TYPE process_cpu_seconds_total counter\n"
        "process_cpu_seconds_total %.6f\n"
        "# HELP process_start_time_seconds Start time of the process since unix epoch in seconds.\n"
        "# TYPE process_start_time_seconds gauge\n"
        "process_start_time_seconds %.3f\n",
        pages * sysconf(_SC_PAGESIZE), cpu, start_time());
}
