/*
 * arena.c — the chunked bump allocator declared in arena.h.
 *
 * Each chunk is one malloc holding a small header and a payload. An
 * allocation that does not fit the newest chunk gets a fresh chunk; a
 * request larger than a quarter of the ordinary chunk size gets a chunk of
 * its own, placed behind the newest so the newest keeps serving small
 * requests (otherwise one big string would waste the rest of a chunk).
 */
#include "util/arena.h"

#include <stdalign.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#define HR_ARENA_DEFAULT_CHUNK ((size_t)64 * 1024)
#define HR_ARENA_ALIGN alignof(max_align_t)

struct hr_arena_chunk {
    hr_arena_chunk *next;
    size_t used;
    size_t cap;
    alignas(max_align_t) unsigned char data[];
};

void hr_arena_init(hr_arena *a, size_t chunk_size)
{
    a->head = NULL;
    a->chunk_size = chunk_size ? chunk_size : HR_ARENA_DEFAULT_CHUNK;
    a->total = 0;
    a->limit = 0;
}

void hr_arena_set_limit(hr_arena *a, size_t limit)
{
    a->limit = limit;
}

static size_t round_up(size_t n)
{
    return (n + HR_ARENA_ALIGN - 1) & ~(HR_ARENA_ALIGN - 1);
}

static hr_arena_chunk *chunk_new(hr_arena *a, size_t cap)
{
    if (cap > SIZE_MAX - sizeof(hr_arena_chunk))
        return NULL;
    size_t bytes = sizeof(hr_arena_chunk) + cap;
    if (a->limit && (bytes > a->limit || a->total > a->limit - bytes))
        return NULL;
    hr_arena_chunk *c = malloc(bytes);
    if (!c)
        return NULL;
    c->next = NULL;
    c->used = 0;
    c->cap = cap;
    a->total += bytes;
    return c;
}

void *hr_arena_alloc(hr_arena *a, size_t size)
{
    if (size > SIZE_MAX / 2)
        return NULL;
    size_t need = round_up(size ? size : 1);
    hr_arena_chunk *h = a->head;
    if (h && h->cap - h->used >= need) {
        void *p = h->data + h->used;
        h->used += need;
        return p;
    }
    if (need > a->chunk_size / 4) {
        hr_arena_chunk *big = chunk_new(a, need);
        if (!big)
            return NULL;
        big->used = need;
        if (h) { /* keep the newest small-object chunk at the head */
            big->next = h->next;
            h->next = big;
        } else {
            a->head = big;
        }
        return big->data;
    }
    hr_arena_chunk *c = chunk_new(a, a->chunk_size);
    if (!c)
        return NULL;
    c->next = h;
    a->head = c;
    c->used = need;
    return c->data;
}

void *hr_arena_calloc(hr_arena *a, size_t n, size_t size)
{
    if (size && n > SIZE_MAX / size)
        return NULL;
    void *p = hr_arena_alloc(a, n * size);
    if (p)
        memset(p, 0, n * size);
    return p;
}

char *hr_arena_strndup(hr_arena *a, const char *s, size_t len)
{
    if (len == SIZE_MAX)
        return NULL;
    char *p = hr_arena_alloc(a, len + 1);
    if (!p)
        return NULL;
    if (len)
        memcpy(p, s, len);
    p[len] = '\0';
    return p;
}

char *hr_arena_strdup(hr_arena *a, const char *s)
{
    return hr_arena_strndup(a, s, strlen(s));
}

size_t hr_arena_bytes(const hr_arena *a)
{
    return a->total;
}

void hr_arena_free(hr_arena *a)
{
    hr_arena_chunk *c = a->head;
    while (c) {
        hr_arena_chunk *next = c->next;
        free(c);
        c = next;
    }
    a->head = NULL;
    a->total = 0;
}
