/*
 * hr_testfile.h — reading back what a path holds, as a library given that
 * path would (the sealed memory files of util/memfile.h and the credential
 * files built on them), shared by the tests that check those paths.
 */
#ifndef HR_TEST_TESTFILE_H
#define HR_TEST_TESTFILE_H

#include <fcntl.h>
#include <stddef.h>
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

#endif
