/*
 * memfile.h — bytes as a file that is on no disk: a sealed anonymous memory
 * file (memfd_create), named by the path /proc/self/fd/N.
 *
 * For libraries that take a secret only by file name (libcurl 7.88 with
 * GnuTLS reads the CA, the client certificate and its key from files:
 * kube/transport/tls.h). The bytes live in memory the kernel gives this
 * process alone: no directory holds them, nothing is left behind by a
 * crash, and the descriptor is close-on-exec, so no child (an exec
 * credential plugin) inherits it. Sealed once written (no write, no shrink,
 * no grow): whoever opens the path reads exactly what was written.
 *
 * The path is good while the hr_memfile is open; its owner keeps it open
 * for as long as anyone may open the path. After the close the kernel may
 * give the number N to the next descriptor, so a cache that remembers files
 * by path string (libcurl's connections and TLS sessions do) could take a
 * later file for an earlier one. `generation` rules that out: it is spelled
 * into the path as "./" and "/" steps (which stay in the same directory), so
 * files of different generations never share a path string, whatever their
 * numbers; generation 0 is the plain /proc/self/fd/N.
 *
 * The kernel frees the pages at the last close. Sealed against writes, they
 * cannot be wiped first (util/wipe.h); the kernel zeroes them before any
 * later use.
 */
#ifndef HR_UTIL_MEMFILE_H
#define HR_UTIL_MEMFILE_H

#include <stddef.h>
#include <stdint.h>

#include "util/err.h"

/* "/proc/self/fd/", 64 generation steps of up to 2 bytes, the number, NUL. */
#define HR_MEMFILE_PATH_MAX 160

typedef struct hr_memfile {
    int fd;
    char path[HR_MEMFILE_PATH_MAX]; /* "" when not open: a zeroed hr_memfile is closed */
} hr_memfile;

/* Write len bytes of data into a new sealed memory file; name is what
 * /proc shows for it ("memfd:NAME"). Checks that the path opens (a missing
 * /proc is an error here, not a TLS failure later). On failure *f is
 * closed and err says which step failed. */
HR_MUST_CHECK hr_status hr_memfile_open(hr_memfile *f, const char *name, const void *data,
                                        size_t len, uint64_t generation, hr_err *err);

/* Close (a closed or zeroed hr_memfile: nothing to do). */
void hr_memfile_close(hr_memfile *f);

#endif
