/*
 * wipe.h — clear a secret from memory before the memory is freed or reused.
 *
 * Private keys, bearer tokens, passwords and the buffers that held them are
 * wiped with this, and only this: a memset before free is a dead store the
 * optimiser may drop, explicit_bzero (glibc) is not. The one name for the
 * concept in the tree ("wipe"), so a grep finds every place a secret dies.
 */
#ifndef HR_UTIL_WIPE_H
#define HR_UTIL_WIPE_H

#include <stddef.h>

/* Zero n bytes at p; p may be NULL (nothing to do). */
void hr_wipe(void *p, size_t n);

/* Zero the characters of the string s (not its NUL); s may be NULL. */
void hr_wipe_str(char *s);

#endif
