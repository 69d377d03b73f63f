/*
 * logfmt.c — logfmt fragment to a JSON object.
 */
#include "logfmt.h"

#include <stdbool.h>
#include <string.h>

#include "jsonstr.h"

/* One key=value pair at *p; false at the end or on malformed input. */
static bool next_pair(const char **p, const char **k, size_t *kl, hr_buf *val)
{
    const char *s = *p;
    while (*s == ' ')
        s++;
    if (*s == '\0')
        return false;
    const char *key = s;
    while (*s && *s != '=' && *s != ' ')
        s++;
    if (*s != '=' || s == key)
        return false;
    *k = key;
    *kl = (size_t)(s - key);
    s++;
    hr_buf_reset(val);
    if (*s == '"') {
        s++;
        while (*s && *s != '"') {
            if (*s == '\\' && s[1])
                s++;
            hr_buf_putc(val, *s++);
        }
        if (*s != '"')
            return false;
        s++;
    } else {
        while (*s && *s != ' ')
            hr_buf_putc(val, *s++);
    }
    *p = s;
    return true;
}

void hr_log_json(hr_buf *out, const char *time, const char *level, const char *fragment)
{
    hr_buf_puts(out, "{\"time\":");
    hr_buf_json_str(out, time);
    hr_buf_puts(out, ",\"level\":");
    hr_buf_json_str(out, level);

    /* Parse once to check the whole fragment is logfmt. */
    hr_buf val;
    hr_buf_init(&val, 0);
    const char *p = fragment, *k;
    size_t kl;
    bool ok = true;
    while (ok && (ok = next_pair(&p, &k, &kl, &val))) {
        while (*p == ' ')
            p++;
        if (*p == '\0')
            break;
    }
    if (!ok || fragment[0] == '\0') {
        hr_buf_puts(out, ",\"msg\":");
        hr_buf_json_str(out, fragment);
    } else {
        p = fragment;
        while (next_pair(&p, &k, &kl, &val)) {
            hr_buf_putc(out, ',');
            hr_buf_json_strn(out, k, kl);
            hr_buf_putc(out, ':');
            hr_buf_json_strn(out, hr_buf_str(&val), val.len);
        }
    }
    hr_buf_puts(out, "}\n");
    hr_buf_free(&val);
}
