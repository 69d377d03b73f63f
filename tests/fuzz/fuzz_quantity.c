/*
 * fuzz_quantity.c — libFuzzer target for the quantity parser.
 *
 * Besides "never crash, never read past len", it checks what must hold for
 * every accepted input: results are non-negative, parsing at a coarser
 * scale never gives more units than at a finer one, and a CPU value that
 * parses formats back to text that parses to the same value.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "core/quantity.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    /* A private copy of exactly size bytes: ASan flags any read past it. */
    char *s = malloc(size ? size : 1);
    if (s == NULL)
        return 0;
    if (size)
        memcpy(s, data, size);

    int64_t milli = -1, units = -1;
    hr_qerr em = hr_cpu_parse_milli(s, size, &milli);
    hr_qerr eu = hr_mem_parse_bytes(s, size, &units);
    if (em == HR_Q_OK && milli < 0)
        abort();
    if (eu == HR_Q_OK && units < 0)
        abort();
    if (em == HR_Q_OK && eu == HR_Q_OK && units > milli)
        abort();
    if (em == HR_Q_OK) {
        char buf[HR_CPU_FMT_MAX];
        size_t n = hr_cpu_format_milli(milli, buf, sizeof buf);
        int64_t back = -1;
        if (n == 0 || hr_cpu_parse_milli(buf, n, &back) != HR_Q_OK || back != milli)
            abort();
    }
    free(s);
    return 0;
}
