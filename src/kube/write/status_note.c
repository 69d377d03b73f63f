/*
 * status_note.c — FNV-1a over the annotation, computedAt's value skipped;
 * the lowest bit says whether it holds a "reason"; and the mark: its
 * targetLimit and dryRun (status_note.h).
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

/* Where key (klen bytes) starts in s[0, len), or NULL. */
static const char *find(const char *s, size_t len, const char *key, size_t klen)
{
    for (size_t i = 0; i + klen <= len; i++)
        if (memcmp(s + i, key, klen) == 0)
            return s + i;
    return NULL;
}

uint32_t hr_status_note_mark(const char *s, size_t len)
{
    static const char target[] = "\"targetLimit\":\"";
    static const char dry[] = "\"dryRun\":true";
    const size_t tlen = sizeof target - 1;
    if (s == NULL)
        return 0;
    uint32_t m = find(s, len, dry, sizeof dry - 1) ? HR_STATUS_MARK_DRY : 0;
    const char *t = find(s, len, target, tlen);
    if (t == NULL)
        return m;
    const char *end = s + len;
    const char *d = t + tlen;
    uint64_t v = 0;
    size_t n = 0;
    for (; d < end && *d >= '0' && *d <= '9'; d++, n++)
        if (v <= HR_STATUS_MARK_DRY)
            v = v * 10 + (uint64_t)(*d - '0');
    if (n == 0 || end - d < 2 || d[0] != 'm' || d[1] != '"')
        return m;
    uint64_t top = HR_STATUS_MARK_DRY - 1; /* the largest stored target + 1 */
    return m | (uint32_t)(v + 1 < top ? v + 1 : top);
}
