/*
 * probe.c — what a process inside a container sees of its own confinement, for the runtime
 * image's check (scripts/release/image.sh).
 *
 * The product image has no shell, so nothing in it can be asked "who am I, can I write /, is there
 * a network". scripts/release/image.sh bind-mounts this static program into a container of the image and
 * runs it as the image's own user; it prints one "key=value" line each, which the script compares
 * with what the image promises:
 *   uid=N gid=N          the real and effective ids (the image says 65532)
 *   capeff=HEX           the effective capability set (from /proc/self/status)
 *   root_writable=yes|no whether a file can be created in / (a read-only root says no)
 *   PATH=present|absent  for each shell and package manager the image must not carry
 *   interfaces=a,b       the network interfaces (no network: lo alone)
 */
#include <errno.h>
#include <fcntl.h>
#include <ifaddrs.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

static const char *const forbidden[] = {
    "/bin/sh",      "/usr/bin/sh",  "/bin/bash",        "/usr/bin/bash", "/bin/dash",
    "/bin/busybox", "/usr/bin/apt", "/usr/bin/apt-get", "/usr/bin/dpkg", "/usr/bin/perl",
};

/* capeff: copy the CapEff field of /proc/self/status into out; 0 when found. */
static int capeff(char *out, size_t len)
{
    FILE *f = fopen("/proc/self/status", "r");
    if (f == NULL)
        return -1;
    char line[256];
    int rc = -1;
    while (fgets(line, sizeof line, f) != NULL) {
        if (strncmp(line, "CapEff:", 7) == 0) {
            const char *v = line + 7;
            v += strspn(v, " \t");
            snprintf(out, len, "%.*s", (int)strcspn(v, "\n"), v);
            rc = 0;
            break;
        }
    }
    if (fclose(f) != 0)
        rc = -1;
    return rc;
}

int main(void)
{
    printf("uid=%d euid=%d gid=%d egid=%d\n", (int)getuid(), (int)geteuid(), (int)getgid(),
           (int)getegid());

    char caps[64];
    if (capeff(caps, sizeof caps) != 0) {
        perror("probe: /proc/self/status");
        return 1;
    }
    printf("capeff=%s\n", caps);

    int fd = open("/.probe-write-test", O_WRONLY | O_CREAT | O_EXCL, 0600);
    if (fd >= 0) {
        printf("root_writable=yes\n");
        if (close(fd) != 0 || unlink("/.probe-write-test") != 0)
            perror("probe: cleaning up /.probe-write-test");
    } else {
        printf("root_writable=no (%s)\n", strerror(errno));
    }

    for (size_t i = 0; i < sizeof forbidden / sizeof forbidden[0]; i++)
        printf("%s=%s\n", forbidden[i], access(forbidden[i], F_OK) == 0 ? "present" : "absent");

    struct ifaddrs *ifs = NULL;
    if (getifaddrs(&ifs) != 0) {
        perror("probe: getifaddrs");
        return 1;
    }
    printf("interfaces=");
    const char *sep = "";
    for (struct ifaddrs *i = ifs; i != NULL; i = i->ifa_next) {
        /* getifaddrs lists an interface once per address family: print each name once. */
        int seen = 0;
        for (struct ifaddrs *j = ifs; j != i; j = j->ifa_next)
            seen = seen || strcmp(i->ifa_name, j->ifa_name) == 0;
        if (!seen) {
            printf("%s%s", sep, i->ifa_name);
            sep = ",";
        }
    }
    printf("\n");
    freeifaddrs(ifs);
    return fflush(stdout) == 0 ? 0 : 1;
}
