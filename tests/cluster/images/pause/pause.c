/*
 * pause.c — the pod sandbox ("pause") program of the real-node tests.
 *
 * A kubelet starts one pause container per pod to hold the pod's namespaces; no registry is
 * reachable here, so the test images build their own instead of pulling registry.k8s.io/pause.
 * It does what that one does: sleeps until SIGTERM or SIGINT (then exits 0), and as PID 1 of a
 * pod sharing its PID namespace reaps every child that exits, so no zombie is left behind.
 * Built static (tests/cluster/images/build.sh), it is alone in a scratch image.
 *
 *   pause            wait for SIGTERM/SIGINT
 *   pause -v         print the version and exit
 */
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#ifndef PAUSE_VERSION
#define PAUSE_VERSION "unknown"
#endif

static volatile sig_atomic_t stop_signal;

static void on_stop(int sig)
{
    stop_signal = sig;
}

/* The handler only wakes sigsuspend; the loop in main reaps. */
static void on_child(int sig)
{
    (void)sig;
}

static int handle(int sig, void (*fn)(int))
{
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = fn;
    sa.sa_flags = sig == SIGCHLD ? SA_NOCLDSTOP : 0;
    if (sigemptyset(&sa.sa_mask) != 0)
        return -1;
    return sigaction(sig, &sa, NULL);
}

int main(int argc, char **argv)
{
    if (argc > 1 && strcmp(argv[1], "-v") == 0) {
        printf("pause %s (kube-headroom test image)\n", PAUSE_VERSION);
        return 0;
    }
    if (argc > 1) {
        fprintf(stderr, "usage: pause [-v]\n");
        return 2;
    }
    if (getpid() != 1)
        fprintf(stderr, "pause: warning: not PID 1, children of others are not reaped\n");

    /* Block the three signals outside sigsuspend, so none arrives between the check and
     * the wait and is lost. */
    sigset_t blocked, waiting;
    if (sigemptyset(&blocked) != 0 || sigaddset(&blocked, SIGTERM) != 0 ||
        sigaddset(&blocked, SIGINT) != 0 || sigaddset(&blocked, SIGCHLD) != 0 ||
        sigprocmask(SIG_BLOCK, &blocked, &waiting) != 0) {
        perror("pause: sigprocmask");
        return 1;
    }
    if (handle(SIGTERM, on_stop) != 0 || handle(SIGINT, on_stop) != 0 ||
        handle(SIGCHLD, on_child) != 0) {
        perror("pause: sigaction");
        return 1;
    }
    for (;;) {
        for (;;) {
            pid_t pid = waitpid(-1, NULL, WNOHANG);
            if (pid > 0)
                continue;
            if (pid < 0 && errno != ECHILD && errno != EINTR) {
                perror("pause: waitpid");
                return 1;
            }
            break;
        }
        if (stop_signal != 0)
            return 0;
        sigsuspend(&waiting); /* returns -1/EINTR after a handler ran: by design */
    }
}
