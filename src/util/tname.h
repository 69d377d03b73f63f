/*
 * tname.h — a name for the calling thread, as `top -H`, `ps -L` and
 * /proc/PID/task/TID/comm show it.
 *
 * Every thread the daemon starts names itself first thing ("hr-feeder",
 * "hr-node", "hr-w-pods", ...), so an operator, and bench/cluster/
 * scale.sh, can tell which part of the daemon spends the CPU. Linux keeps
 * 15 bytes of a name; a longer one is cut there. A name is a diagnostic:
 * one the system refuses changes nothing else.
 */
#ifndef HR_UTIL_TNAME_H
#define HR_UTIL_TNAME_H

/* Name the calling thread printf-style, cut to 15 bytes. */
void hr_thread_name(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

#endif
