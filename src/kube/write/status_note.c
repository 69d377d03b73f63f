/*
 * status_note.c — FNV-1a over the annotation, computedAt's value skipped.
 */
#include "kube/write/status_note.h"

#include <string.h>

uint32_t hr_status_note_hash(const char *s, size_t len)
{
    static const char key[] = "\"computedAt\":\"";
    const size_t klen = sizeof key - 1;
    if (s == NULL) return 0;
    uint32_t h = 2166136261u;
    size_t i = 0;
    while (i < len) {
        if (len - i >= klen && memcmp(s + i, key, klen) == 0) {
            for (size_t k = 0; k < klen; k++) h = (h ^ (unsigned char)s[i + k]) * 16777619u;
            i += klen;
            while (i < len && s[i] != '"') i++; /* the time itself */
            continue;
        }
        h = (h ^ (unsigned char)s[i]) * 16777619u;
        i++;
    }
    return h ? h : 1;
}
