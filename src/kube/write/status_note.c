/*
 * status_note.c — FNV-1a over the annotation, computedAt's value skipped.
 */
#include "kube/write/status_note.h"

#include <string.h>

#include "util/hash.h"

uint32_t hr_status_note_hash(const char *s, size_t len)
{
    static const char key[] = "\"computedAt\":\"";
    const size_t klen = sizeof key - 1;
    if (s == NULL)
        return 0;
    uint32_t h = HR_FNV32_BASIS;
    size_t i = 0;
    while (i < len) {
        if (len - i >= klen && memcmp(s + i, key, klen) == 0) {
            h = hr_fnv1a32_add(h, s + i, klen);
            i += klen;
            while (i < len && s[i] != '"')
                i++; /* the time itself */
            continue;
        }
        h = hr_fnv1a32_add(h, s + i, 1);
        i++;
    }
    return h ? h : 1;
}
