/*
 * jsonstr.c — JSON string quoting for hand-built documents.
 */
#include "jsonstr.h"

#include <string.h>

void hr_buf_json_strn(hr_buf *b, const char *s, size_t len)
{
    static const char hex[] = "0123456789abcdef";
    hr_buf_putc(b, '"');
    size_t run = 0; /* bytes that need no escaping, appended in one go */
    for (size_t i = 0; i < len; i++) {
        unsigned char c = (unsigned char)s[i];
        if (c >= 0x20 && c != '"' && c != '\\') {
            run++;
            continue;
        }
        hr_buf_append(b, s + i - run, run);
        run = 0;
        switch (c) {
        case '"': hr_buf_puts(b, "\\\""); break;
        case '\\': hr_buf_puts(b, "\\\\"); break;
        case '\n': hr_buf_puts(b, "\\n"); break;
        case '\r': hr_buf_puts(b, "\\r"); break;
        case '\t': hr_buf_puts(b, "\\t"); break;
        default: {
            char u[6] = {'\\', 'u', '0', '0', hex[c >> 4], hex[c & 15]};
            hr_buf_append(b, u, sizeof u);
        }
        }
    }
    hr_buf_append(b, s + len - run, run);
    hr_buf_putc(b, '"');
}

void hr_buf_json_str(hr_buf *b, const char *s)
{
    hr_buf_json_strn(b, s, s ? strlen(s) : 0);
}
