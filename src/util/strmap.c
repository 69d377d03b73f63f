/*
 * strmap.c — open addressing with linear probing and tombstones.
 */
#include "strmap.h"

#include <stdlib.h>
#include <string.h>

#include "hash.h"

#define TOMB ((char *)&tomb_marker)
static const char tomb_marker = 0;

struct hr_strmap_slot {
    char *key; /* NULL: empty; TOMB: deleted */
    uint64_t value;
    uint64_t hash;
};

static uint64_t hash_str(const char *s)
{
    return hr_fnv1a64_str(HR_FNV64_BASIS_TABLE, s);
}

void hr_strmap_init(hr_strmap *m)
{
    memset(m, 0, sizeof *m);
}

void hr_strmap_free(hr_strmap *m)
{
    for (size_t i = 0; i < m->cap; i++)
        if (m->slots[i].key != NULL && m->slots[i].key != TOMB)
            free(m->slots[i].key);
    free(m->slots);
    memset(m, 0, sizeof *m);
}

static struct hr_strmap_slot *lookup(const hr_strmap *m, const char *key, uint64_t h)
{
    if (m->cap == 0)
        return NULL;
    for (size_t i = h & (m->cap - 1);; i = (i + 1) & (m->cap - 1)) {
        struct hr_strmap_slot *s = &m->slots[i];
        if (s->key == NULL)
            return NULL;
        if (s->key != TOMB && s->hash == h && strcmp(s->key, key) == 0)
            return s;
    }
}

static bool rehash(hr_strmap *m, size_t ncap)
{
    struct hr_strmap_slot *ns = calloc(ncap, sizeof *ns);
    if (ns == NULL)
        return false;
    for (size_t i = 0; i < m->cap; i++) {
        struct hr_strmap_slot *s = &m->slots[i];
        if (s->key == NULL || s->key == TOMB)
            continue;
        size_t j = s->hash & (ncap - 1);
        while (ns[j].key != NULL)
            j = (j + 1) & (ncap - 1);
        ns[j] = *s;
    }
    free(m->slots);
    m->slots = ns;
    m->cap = ncap;
    m->used = m->n;
    return true;
}

bool hr_strmap_put(hr_strmap *m, const char *key, uint64_t value)
{
    uint64_t h = hash_str(key);
    struct hr_strmap_slot *s = lookup(m, key, h);
    if (s != NULL) {
        s->value = value;
        return true;
    }
    if ((m->used + 1) * 4 > m->cap * 3) {
        /* Grow while live keys fill half the table; otherwise rehashing in
         * place is enough to sweep the tombstones out. */
        size_t ncap = m->cap ? m->cap : 16;
        while ((m->n + 1) * 2 > ncap)
            ncap *= 2;
        if (!rehash(m, ncap))
            return false;
    }
    char *k = strdup(key);
    if (k == NULL)
        return false;
    size_t i = h & (m->cap - 1);
    while (m->slots[i].key != NULL && m->slots[i].key != TOMB)
        i = (i + 1) & (m->cap - 1);
    if (m->slots[i].key == NULL)
        m->used++;
    m->slots[i] = (struct hr_strmap_slot){k, value, h};
    m->n++;
    return true;
}

uint64_t *hr_strmap_get(const hr_strmap *m, const char *key)
{
    struct hr_strmap_slot *s = lookup(m, key, hash_str(key));
    return s != NULL ? &s->value : NULL;
}

bool hr_strmap_del(hr_strmap *m, const char *key, uint64_t *old)
{
    struct hr_strmap_slot *s = lookup(m, key, hash_str(key));
    if (s == NULL)
        return false;
    if (old != NULL)
        *old = s->value;
    free(s->key);
    s->key = TOMB;
    m->n--;
    return true;
}

bool hr_strmap_next(const hr_strmap *m, size_t *i, const char **key, uint64_t *value)
{
    for (; *i < m->cap; (*i)++) {
        struct hr_strmap_slot *s = &m->slots[*i];
        if (s->key == NULL || s->key == TOMB)
            continue;
        if (key != NULL)
            *key = s->key;
        if (value != NULL)
            *value = s->value;
        (*i)++;
        return true;
    }
    return false;
}
