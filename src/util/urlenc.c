/*
 * urlenc.c — percent-encoding of query values (see urlenc.h).
 */
#include "util/urlenc.h"

void hr_buf_urlenc(hr_buf *b, const char *s)
{
    static const char hex[] = "0123456789ABCDEF";
    for (; *s; s++) {
        unsigned char ch = (unsigned char)*s;
        if ((ch >= 'A' && ch <= 'Z') || (ch >= 'a' && ch <= 'z') || (ch >= '0' && ch <= '9') ||
            ch == '-' || ch == '.' || ch == '_' || ch == '~') {
            hr_buf_putc(b, (char)ch);
        } else {
            hr_buf_putc(b, '%');
            hr_buf_putc(b, hex[ch >> 4]);
            hr_buf_putc(b, hex[ch & 15]);
        }
    }
}
