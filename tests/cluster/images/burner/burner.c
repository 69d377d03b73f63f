/*
 * burner.c — the CPU burner of the real-node tests.
 *
 * The exit criteria are measured on a real cgroup: a busy container must use what its CFS quota
 * lets it, and be throttled when its limit shrinks. This program is that busy container: N
 * threads each spinning on the CPU for ever, until SIGTERM or SIGINT, then a clean exit 0 (as
 * PID 1 of a container too: the signals are waited for, not left to their default action, which
 * the kernel ignores for PID 1). Built static (tests/cluster/images/build.sh), it is alone in a scratch
 * image.
 *
 *   burner [THREADS]   burn THREADS threads (1..1024); without the argument, $BURNER_THREADS,
 *                      else 1
 *   burner -v          print the version and exit
 */
#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#ifndef BURNER_VERSION
#define BURNER_VERSION "unknown"
#endif

enum { MAX_THREADS = 1024 };

static atomic_int stopping;

static void *burn(void *arg)
{
    (void)arg;
    volatile unsigned long n = 0;
    while (!atomic_load_explicit(&stopping, memory_order_relaxed))
        n = n * 6364136223846793005UL + 1442695040888963407UL;
    return NULL;
}

/* parse_threads: "1".."1024" → the number, anything else → 0. */
static int parse_threads(const char *s)
{
    char *end = NULL;
    errno = 0;
    long v = strtol(s, &end, 10);
    if (errno != 0 || end == s || *end != '\0' || v < 1 || v > MAX_THREADS)
        return 0;
    return (int)v;
}

int main(int argc, char **argv)
{
    if (argc > 1 && strcmp(argv[1], "-v") == 0) {
        printf("burner %s (kube-headroom test image)\n", BURNER_VERSION);
        return 0;
    }
    if (argc > 2) {
        fprintf(stderr, "usage: burner [THREADS] | burner -v\n");
        return 2;
    }
    const char *arg = argc > 1 ? argv[1] : getenv("BURNER_THREADS");
    int threads = arg != NULL ? parse_threads(arg) : 1;
    if (threads == 0) {
        fprintf(stderr, "burner: THREADS must be a whole number from 1 to %d, not '%s'\n",
                MAX_THREADS, arg);
        return 2;
    }

    /* Blocked before any thread starts, so every thread inherits the mask and only sigwait
     * below receives the signals. */
    sigset_t stop;
    if (sigemptyset(&stop) != 0 || sigaddset(&stop, SIGTERM) != 0 ||
        sigaddset(&stop, SIGINT) != 0) {
        perror("burner: sigset");
        return 1;
    }
    int rc = pthread_sigmask(SIG_BLOCK, &stop, NULL);
    if (rc != 0) {
        fprintf(stderr, "burner: pthread_sigmask: %s\n", strerror(rc));
        return 1;
    }

    static pthread_t tid[MAX_THREADS];
    int started = 0;
    for (; started < threads; started++) {
        rc = pthread_create(&tid[started], NULL, burn, NULL);
        if (rc != 0) {
            fprintf(stderr, "burner: pthread_create: %s\n", strerror(rc));
            break;
        }
    }
    int status = started == threads ? 0 : 1;
    if (status == 0) {
        printf("burner: burning %d thread%s\n", threads, threads == 1 ? "" : "s");
        if (fflush(stdout) != 0)
            status = 1;
        int sig = 0;
        rc = sigwait(&stop, &sig);
        if (rc != 0) {
            fprintf(stderr, "burner: sigwait: %s\n", strerror(rc));
            status = 1;
        }
    }
    atomic_store(&stopping, 1);
    for (int i = 0; i < started; i++) {
        rc = pthread_join(tid[i], NULL);
        if (rc != 0) {
            fprintf(stderr, "burner: pthread_join: %s\n", strerror(rc));
            status = 1;
        }
    }
    if (status == 0)
        printf("burner: stopped\n");
    return status;
}
