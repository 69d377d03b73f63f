/*
 * status_note.c — FNV-1a over the annotation, computedAt's value skipped;
 * the lowest bit says whether it holds a "reason" (status_note.h).
 */
#include "kube/write/status_note.h"

#include <string.h>

#include "util/hash.h"

uint32_t hr_status_note_hash(const char *s, size_t len)
{
    static const char key[] = "\"computedAt\":\"";
    static const char reason[] = "\"reason\":\"";
    const size_t klen = sizeof key - 1;
    const size_t rlen = sizeof reason - 1;
    uint32_t held = 0;
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
        if (len - i >= rlen && memcmp(s + i, reason, rlen) == 0)
            held = HR_STATUS_NOTE_HELD;
        h = hr_fnv1a32_add(h, s + i, 1);
        i++;
    }
    h = (h & ~HR_STATUS_NOTE_HELD) | held;
    return h ? h : 2; /* 0 is "no annotation" */
}
