/*
 * arena.h — a bump allocator for many small objects that live and die
 * together.
 *
 * Decoding a Kubernetes object produces dozens of tiny pieces (names, label
 * pairs, container arrays). Giving each its own malloc would mean as many
 * frees and as many chances to leak; an arena gives them one owner and one
 * free. Memory comes in chunks that are never moved, so a pointer handed out
 * stays valid until hr_arena_free. An optional byte limit bounds what one
 * arena may take, so hostile input cannot grow it without end.
 */
#ifndef HR_UTIL_ARENA_H
#define HR_UTIL_ARENA_H

#include <stddef.h>

#include "util/err.h"

typedef struct hr_arena_chunk hr_arena_chunk;

typedef struct hr_arena {
    hr_arena_chunk *head; /* newest chunk first */
    size_t chunk_size;    /* payload size of an ordinary chunk */
    size_t total;         /* bytes obtained from malloc so far */
    size_t limit;         /* 0: unlimited */
} hr_arena;

/* chunk_size 0 picks a default (64 KiB). Never fails: chunks are taken
 * lazily, on the first allocation. */
void hr_arena_init(hr_arena *a, size_t chunk_size);

/* Cap the bytes this arena may take from malloc (0: no cap). */
void hr_arena_set_limit(hr_arena *a, size_t limit);

/* size bytes aligned for any type; NULL when out of memory or over the
 * limit. size 0 returns a valid unique pointer. */
HR_MUST_CHECK void *hr_arena_alloc(hr_arena *a, size_t size);

/* n*size zeroed bytes; NULL on overflow, out of memory or over the limit. */
HR_MUST_CHECK void *hr_arena_calloc(hr_arena *a, size_t n, size_t size);

/* A NUL-terminated copy of s[0..len) (embedded NULs end the string early
 * for readers, which is what C callers expect anyway). */
HR_MUST_CHECK char *hr_arena_strndup(hr_arena *a, const char *s, size_t len);

HR_MUST_CHECK char *hr_arena_strdup(hr_arena *a, const char *s);

/* Bytes taken from malloc (chunk headers included). */
size_t hr_arena_bytes(const hr_arena *a);

/* Give everything back; the arena is empty and reusable afterwards. */
void hr_arena_free(hr_arena *a);

#endif
