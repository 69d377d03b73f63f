/*
 * file.h — read a whole file (or stdin) into memory, with a size limit.
 *
 * The planner reads dumps that may be hundreds of megabytes; a limit keeps a
 * wrong path (/dev/zero, a disk image) from eating the machine, and the
 * error says which limit was hit. The buffer gets `pad` zero bytes after the
 * content, because yyjson's in-place parser reads a little past the end.
 */
#ifndef HR_UTIL_FILE_H
#define HR_UTIL_FILE_H

#include <stddef.h>

#include "util/err.h"

/* Read path ("-" is stdin) into a fresh malloc'd buffer *out of *len bytes
 * (+pad zero bytes, not counted in *len). Fails with HR_E_LIMIT when the
 * content exceeds max bytes, HR_E_IO when it cannot be opened or read.
 * The caller frees *out. */
HR_MUST_CHECK hr_status hr_file_slurp(const char *path, size_t max, size_t pad, char **out,
                                      size_t *len, hr_err *err);

#endif
