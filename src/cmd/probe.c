/*
 * probe.c — `headroom probe [PATH]`: one GET of a daemon's plain /healthz
 * or /readyz, for a kubelet exec probe; exit 0 on a 2xx answer, 1 on
 * anything else (the status line, or why there was none, on stderr).
 *
 * Why it exists: hostNetwork replicas that share one node
 * (charts/kube-headroom value hostNetworkReusePort, docs/install.md) share
 * the node's ports. Their webhook and metrics listeners share one port on
 * purpose (SO_REUSEPORT), but a probe must reach the process it judges,
 * and an httpGet probe names the same port for every replica of the pod
 * template. So each replica's probe listener takes a port of its own
 * (`run --probe-addr=127.0.0.1:0`) and writes its address to a file in its
 * pod's own emptyDir (`run --probe-addr-file`); this command, which the
 * kubelet runs inside that pod's container, reads the file and asks that
 * process alone. --addr asks a fixed address instead (an image without a
 * shell or curl).
 *
 * Plain HTTP/1.0 over a blocking socket with a deadline on every step:
 * the probe listener is plain (design §9.3) and the answer is one status
 * line, so no HTTP client library is needed.
 */
#include "cmd/probe.h"

#include <errno.h>
#include <netdb.h>
#include <poll.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "server/http.h"
#include "util/clock.h"
#include "util/file.h"

#define ADDR_FILE_MAX 512
#define DEFAULT_TIMEOUT_MS 5000

enum { F_ADDR, F_ADDR_FILE, F_TIMEOUT, F_N };

static const hr_flag probe_flags[F_N] = {
    [F_ADDR] = {"addr", 0, HR_FLAG_STRING, "ADDR",
                "the listener to ask, host:port (default 127.0.0.1:8081)", NULL},
    [F_ADDR_FILE] = {"addr-file", 0, HR_FLAG_STRING, "FILE",
                     "read the address from FILE, as `run` wrote it (its\n"
                     "                           probe-addr-file flag); wins over an address given",
                     "@file"},
    [F_TIMEOUT] = {"timeout", 0, HR_FLAG_STRING, "DURATION",
                   "give up after this long: 500ms, 2s (default 5s)", NULL},
};
HR_FLAGS_FIT(F_N);

const hr_command hr_probe_command = {
    "probe",
    "[PATH] [flags]",
    "Ask a running daemon's plain /healthz or /readyz (a kubelet exec probe).",
    "PATH is /healthz (the default) or /readyz. Exit 0 on a 2xx answer, 1 otherwise.\n"
    "With hostNetwork replicas sharing a node, each replica's probe listener has a\n"
    "port of its own, which `run` writes to a file (its probe-addr-file flag) for\n"
    "this command to read.\n",
    probe_flags,
    F_N,
    1,
    hr_cmd_probe,
};

static int probe_fail(const char *what, const char *why)
{
    fprintf(stderr, "headroom probe: %s: %s\n", what, why);
    return HR_EXIT_INPUT;
}

/* Wait for fd to be ready for events until deadline (mono ns): 1 ready, 0
 * timed out, -1 error. */
static int wait_fd(int fd, short events, int64_t deadline)
{
    for (;;) {
        int64_t left = (deadline - hr_mono_ns()) / 1000000;
        if (left <= 0)
            return 0;
        struct pollfd p = {fd, events, 0};
        int rc = poll(&p, 1, (int)left);
        if (rc > 0)
            return 1;
        if (rc == 0)
            return 0;
        if (errno != EINTR)
            return -1;
    }
}

/* The status code of one GET of path from host:port, or -1 with why. */
static int get_status(const char *host, uint16_t port, const char *path, int64_t deadline,
                      char *why, size_t why_cap)
{
    char ps[8];
    snprintf(ps, sizeof ps, "%u", (unsigned)port);
    struct addrinfo hints = {0}, *ai = NULL;
    hints.ai_family = AF_UNSPEC;
    hints.ai_socktype = SOCK_STREAM;
    hints.ai_flags = AI_NUMERICHOST | AI_NUMERICSERV;
    int gai = getaddrinfo(host, ps, &hints, &ai);
    if (gai != 0 || ai == NULL) {
        snprintf(why, why_cap, "address %s:%s: %s", host, ps, gai ? gai_strerror(gai) : "none");
        return -1;
    }
    int fd = socket(ai->ai_family, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
    if (fd < 0) {
        freeaddrinfo(ai);
        snprintf(why, why_cap, "socket: %s", strerror(errno));
        return -1;
    }
    int status = -1;
    if (connect(fd, ai->ai_addr, ai->ai_addrlen) != 0 && errno != EINPROGRESS) {
        snprintf(why, why_cap, "connect: %s", strerror(errno));
        goto out;
    }
    int w = wait_fd(fd, POLLOUT, deadline);
    int soerr = 0;
    socklen_t sl = sizeof soerr;
    if (w <= 0 || getsockopt(fd, SOL_SOCKET, SO_ERROR, &soerr, &sl) != 0 || soerr != 0) {
        snprintf(why, why_cap, "connect: %s",
                 w == 0 ? "timed out" : strerror(soerr ? soerr : errno));
        goto out;
    }
    char req[600];
    int n =
        snprintf(req, sizeof req,
                 "GET %s HTTP/1.0\r\nHost: %s\r\nUser-Agent: headroom-probe\r\n\r\n", path, host);
    if (n < 0 || (size_t)n >= sizeof req || send(fd, req, (size_t)n, MSG_NOSIGNAL) != n) {
        snprintf(why, why_cap, "send: %s",
                 n < 0 || (size_t)n >= sizeof req ? "path too long" : strerror(errno));
        goto out;
    }
    char line[256];
    size_t got = 0;
    while (got < sizeof line - 1 && memchr(line, '\n', got) == NULL) {
        if (wait_fd(fd, POLLIN, deadline) <= 0) {
            snprintf(why, why_cap, "no answer in time");
            goto out;
        }
        ssize_t r = recv(fd, line + got, sizeof line - 1 - got, 0);
        if (r < 0 && (errno == EINTR || errno == EAGAIN))
            continue;
        if (r <= 0) {
            snprintf(why, why_cap, "connection closed before an answer");
            goto out;
        }
        got += (size_t)r;
    }
    line[got] = '\0';
    line[strcspn(line, "\r\n")] = '\0';
    unsigned code = 0;
    if (sscanf(line, "HTTP/%*u.%*u %3u", &code) != 1 || code < 100 || code > 599) {
        snprintf(why, why_cap, "not an HTTP answer: \"%.80s\"", line);
        goto out;
    }
    snprintf(why, why_cap, "%s", line);
    status = (int)code;
out:
    close(fd);
    freeaddrinfo(ai);
    return status;
}

int hr_cmd_probe(const char *prog, int argc, char **argv)
{
    hr_args a;
    int rc = hr_args_parse(prog, &hr_probe_command, argc, argv, &a);
    const char *path = a.n_pos > 0 ? a.pos[0] : "/healthz";
    const char *addr = a.val[F_ADDR] ? a.val[F_ADDR] : "127.0.0.1:8081";
    const char *addr_file = a.val[F_ADDR_FILE];
    const char *timeout = a.val[F_TIMEOUT];
    bool help = a.help;
    hr_args_free(&a); /* the values stay: they point into argv */
    if (rc != HR_EXIT_OK)
        return rc;
    if (help)
        return HR_EXIT_OK;
    if (path[0] != '/' || strpbrk(path, " \r\n") != NULL)
        return hr_usage_error(prog, &hr_probe_command, "PATH \"%s\": a path such as /readyz", path);
    long ms = timeout ? hr_duration_ms(timeout) : 0;
    if (ms < 0)
        return hr_usage_error(prog, &hr_probe_command, "--timeout: \"%s\" is not a duration",
                              timeout);
    if (ms == 0)
        ms = DEFAULT_TIMEOUT_MS;

    char *text = NULL;
    hr_err err;
    if (addr_file) {
        size_t len = 0;
        if (hr_file_slurp(addr_file, ADDR_FILE_MAX, 1, &text, &len, &err) != HR_OK)
            return probe_fail(addr_file, err.msg);
        text[strcspn(text, "\r\n")] = '\0';
        addr = text;
    }
    char host[256];
    uint16_t port = 0;
    if (hr_parse_addr(addr, host, sizeof host, &port, &err) != HR_OK || port == 0) {
        int r = probe_fail(addr_file ? addr_file : "--addr", port == 0 ? "no port" : err.msg);
        free(text);
        return r;
    }
    if (host[0] == '\0')
        snprintf(host, sizeof host, "127.0.0.1"); /* ":8081": every address, this one too */
    char why[320];
    int status =
        get_status(host, port, path, hr_mono_ns() + (int64_t)ms * 1000000, why, sizeof why);
    char where[300];
    snprintf(where, sizeof where, "%s:%u%s", host, (unsigned)port, path);
    free(text);
    if (status >= 200 && status < 300)
        return HR_EXIT_OK;
    return probe_fail(where, why);
}
