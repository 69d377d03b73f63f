/*
 * hr_testfile.h — reading back what a path holds, as a library given that
 * path would (the sealed memory files of util/memfile.h and the credential
 * files built on them), shared by the tests that check those paths; and the
 * kubeconfig of a server nothing answers, for the tests of a client whose
 * every request must fail fast.
 */
#ifndef HR_TEST_TESTFILE_H
#define HR_TEST_TESTFILE_H

#include <fcntl.h>
#include <stddef.h>
#include <stdio.h>
#include <sys/types.h>
#include <unistd.h>

/* The bytes a library reads at path, NUL-terminated in out (cap bytes);
 * the count read, or -1: it does not open. */
static inline ssize_t read_path(const char *path, char *out, size_t cap)
{
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return -1;
    ssize_t n = read(fd, out, cap - 1);
    close(fd);
    out[n > 0 ? n : 0] = '\0';
    return n;
}

/* Writes to path (cap bytes, "/tmp/hr-<tag>-<pid>.yaml") a kubeconfig whose
 * server is https://127.0.0.1:1, where nothing listens, with a token user;
 * 0, or -1: it could not be written. */
static inline int write_dead_kubeconfig(char *path, size_t cap, const char *tag)
{
    snprintf(path, cap, "/tmp/hr-%s-%d.yaml", tag, (int)getpid());
    FILE *fp = fopen(path, "w");
    if (!fp)
        return -1;
    fputs("current-context: x\ncontexts:\n- name: x\n  context: {cluster: c, user: u}\n"
          "clusters:\n- name: c\n  cluster: {server: 'https://127.0.0.1:1'}\n"
          "users:\n- name: u\n  user: {token: t}\n",
          fp);
    return fclose(fp) == 0 ? 0 : -1;
}

#endif
