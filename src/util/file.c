/*
 * file.c — hr_file_slurp. Reads in a loop with a growing buffer instead of
 * trusting st_size: stdin and pipes have none, and /proc files lie.
 */
#include "util/file.h"

#include <errno.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

hr_status hr_file_slurp(const char *path, size_t max, size_t pad, char **out, size_t *len,
                        hr_err *err)
{
    *out = NULL;
    *len = 0;
    if (pad > 4096 || max > SIZE_MAX / 2)
        return hr_err_set(err, HR_E_IO, "%s: bad read parameters", path);
    bool is_stdin = strcmp(path, "-") == 0;
    const char *shown = is_stdin ? "<stdin>" : path;
    FILE *f = is_stdin ? stdin : fopen(path, "rb");
    if (!f)
        return hr_err_set(err, HR_E_IO, "%s: cannot open: %s", shown, strerror(errno));
    size_t cap = 64 * 1024, n = 0;
    char *buf = malloc(cap + pad);
    hr_status st = HR_OK;
    if (!buf) {
        st = hr_err_set(err, HR_E_NOMEM, "%s: out of memory", shown);
        goto done;
    }
    for (;;) {
        if (n == cap) {
            if (cap >= max + 1) { /* one byte past max proves it too big */
                st = hr_err_set(err, HR_E_LIMIT, "%s: larger than the limit of %zu bytes", shown,
                                max);
                goto done;
            }
            size_t ncap = cap * 2 > max + 1 ? max + 1 : cap * 2;
            char *nb = realloc(buf, ncap + pad);
            if (!nb) {
                st = hr_err_set(err, HR_E_NOMEM, "%s: out of memory after %zu bytes", shown, n);
                goto done;
            }
            buf = nb;
            cap = ncap;
        }
        size_t got = fread(buf + n, 1, cap - n, f);
        n += got;
        if (got == 0) {
            if (ferror(f)) {
                st = hr_err_set(err, HR_E_IO, "%s: read error: %s", shown, strerror(errno));
                goto done;
            }
            break;
        }
    }
    if (n > max) {
        st = hr_err_set(err, HR_E_LIMIT, "%s: larger than the limit of %zu bytes", shown, max);
        goto done;
    }
    memset(buf + n, 0, pad);
    *out = buf;
    *len = n;
    buf = NULL;
done:
    free(buf);
    if (!is_stdin)
        (void)fclose(f); /* read-only: a failed close loses nothing */
    return st;
}
