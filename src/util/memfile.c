/*
 * memfile.c — sealed anonymous memory files (see memfile.h).
 */
#include "util/memfile.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

/* /proc/self/fd/ + the generation's bits from the highest set one down,
 * "./" for 1 and "/" for 0 (no two generations spell alike: the first step
 * is always "./", and the two steps start with different bytes) + N. */
static void spell_path(char *out, int fd, uint64_t generation)
{
    static const char dir[] = "/proc/self/fd/";
    size_t at = sizeof dir - 1;
    memcpy(out, dir, at);
    if (generation) {
        int b = 63;
        while (!(generation >> b & 1))
            b--;
        for (; b >= 0; b--) {
            if (generation >> b & 1)
                out[at++] = '.';
            out[at++] = '/';
        }
    }
    snprintf(out + at, HR_MEMFILE_PATH_MAX - at, "%d", fd);
}

hr_status hr_memfile_open(hr_memfile *f, const char *name, const void *data, size_t len,
                          uint64_t generation, hr_err *err)
{
    memset(f, 0, sizeof *f);
    int fd = memfd_create(name, MFD_CLOEXEC | MFD_ALLOW_SEALING);
    if (fd < 0)
        return hr_err_set(err, HR_E_IO, "memory file %s: memfd_create: %s", name, strerror(errno));
    const char *p = data;
    size_t left = len;
    while (left) {
        ssize_t w = write(fd, p, left);
        if (w < 0 && errno == EINTR)
            continue;
        if (w <= 0) {
            int e = w < 0 ? errno : EIO;
            (void)close(fd); /* never seen by anyone: nothing to undo */
            return hr_err_set(err, e == ENOMEM ? HR_E_NOMEM : HR_E_IO, "memory file %s: write: %s",
                              name, strerror(e));
        }
        p += w;
        left -= (size_t)w;
    }
    if (fcntl(fd, F_ADD_SEALS, F_SEAL_WRITE | F_SEAL_SHRINK | F_SEAL_GROW) != 0) {
        int e = errno;
        (void)close(fd);
        return hr_err_set(err, HR_E_IO, "memory file %s: sealing: %s", name, strerror(e));
    }
    spell_path(f->path, fd, generation);
    /* What a library will do with the path, once, now. */
    int r = open(f->path, O_RDONLY | O_CLOEXEC);
    if (r < 0) {
        int e = errno;
        (void)close(fd);
        hr_status st =
            hr_err_set(err, HR_E_IO, "memory file %s: cannot open %s (is /proc mounted?): %s", name,
                       f->path, strerror(e));
        f->path[0] = '\0';
        return st;
    }
    (void)close(r); /* read-only: nothing to flush */
    f->fd = fd;
    return HR_OK;
}

void hr_memfile_close(hr_memfile *f)
{
    if (f->path[0])
        (void)close(f->fd); /* sealed and read-only to all: nothing to flush */
    memset(f, 0, sizeof *f);
}
