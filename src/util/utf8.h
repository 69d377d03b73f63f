/*
 * utf8.h — where UTF-8 text stops being UTF-8: the one check of it (the
 * kubeconfig reader hands libfyaml nothing else; header values are checked
 * with it too).
 */
#ifndef HR_UTIL_UTF8_H
#define HR_UTIL_UTF8_H

#include <stddef.h>

/* Offset of the first byte of s that is not valid UTF-8 (overlong forms,
 * UTF-16 surrogates and code points beyond U+10FFFF are not) or is a NUL;
 * len when all of s is. */
size_t hr_utf8_bad(const unsigned char *s, size_t len);

#endif
