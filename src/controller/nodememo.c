/*
 * nodememo.c — other nodes' plans kept between reconciles (nodememo.h).
 */
#include "nodememo.h"

#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "util/strmap.h"

/* An entry's arena grows in small chunks: a node of a few dozen pods
 * plans in a few KiB, and the table holds up to cap of them. */
#define ENTRY_CHUNK 4096

struct hr_nodememo {
    pthread_mutex_t mu;
    hr_strmap by_name;   /* node name -> hr_memo_node * in the table */
    hr_memo_node *first; /* put order, oldest first: the eviction order */
    hr_memo_node *last;
    size_t n, cap;
    int64_t max_age_ms;
    uint64_t hits, misses;
};

hr_nodememo *hr_nodememo_new(size_t cap, int64_t max_age_ms)
{
    hr_nodememo *m = calloc(1, sizeof *m);
    if (m == NULL)
        return NULL;
    if (pthread_mutex_init(&m->mu, NULL) != 0) {
        free(m);
        return NULL;
    }
    hr_strmap_init(&m->by_name);
    m->cap = cap ? cap : 1024;
    m->max_age_ms = max_age_ms > 0 ? max_age_ms : 10000;
    return m;
}

static void entry_free(hr_memo_node *e)
{
    hr_arena_free(&e->a);
    free(e);
}

void hr_nodememo_free(hr_nodememo *m)
{
    if (m == NULL)
        return;
    /* Every reader is gone by now (the controller's workers are joined). */
    for (hr_memo_node *e = m->first, *next; e != NULL; e = next) {
        next = e->next;
        entry_free(e);
    }
    hr_strmap_free(&m->by_name);
    pthread_mutex_destroy(&m->mu);
    free(m);
}

hr_memo_node *hr_nodememo_entry(void)
{
    hr_memo_node *e = calloc(1, sizeof *e);
    if (e == NULL)
        return NULL;
    hr_arena_init(&e->a, ENTRY_CHUNK);
    e->refs = 1;
    return e;
}

hr_memo_node *hr_nodememo_get(hr_nodememo *m, const char *name, uint64_t version,
                              uint64_t backoff_changes, int64_t now_ms)
{
    pthread_mutex_lock(&m->mu);
    const uint64_t *v = hr_strmap_get(&m->by_name, name);
    hr_memo_node *e = v != NULL ? (hr_memo_node *)(uintptr_t)*v : NULL;
    if (e != NULL && (e->s.version != version || e->backoff_changes != backoff_changes ||
                      now_ms - e->planned_ms > m->max_age_ms || now_ms < e->planned_ms))
        e = NULL;
    if (e != NULL) {
        e->refs++;
        m->hits++;
    } else {
        m->misses++;
    }
    pthread_mutex_unlock(&m->mu);
    return e;
}

/* Take e out of the put-order list (under the lock). */
static void unlink_entry(hr_nodememo *m, hr_memo_node *e)
{
    hr_memo_node **pp = &m->first, *prev = NULL;
    while (*pp != NULL && *pp != e) {
        prev = *pp;
        pp = &(*pp)->next;
    }
    if (*pp == NULL)
        return;
    *pp = e->next;
    if (m->last == e)
        m->last = prev;
    e->next = NULL;
    m->n--;
}

/* Drop the table's reference to e (under the lock): freed when it was the
 * last one. */
static void drop(hr_nodememo *m, hr_memo_node *e)
{
    unlink_entry(m, e);
    if (--e->refs == 0)
        entry_free(e);
}

void hr_nodememo_put(hr_nodememo *m, hr_memo_node *e)
{
    pthread_mutex_lock(&m->mu);
    const uint64_t *v = hr_strmap_get(&m->by_name, e->s.node.name);
    hr_memo_node *old = v != NULL ? (hr_memo_node *)(uintptr_t)*v : NULL;
    if (old == e) {
        pthread_mutex_unlock(&m->mu);
        return;
    }
    /* The key is copied by the map before old (which owns the name the
     * map's key was copied from, not the key itself) may go. */
    if (!hr_strmap_put(&m->by_name, e->s.node.name, (uint64_t)(uintptr_t)e)) {
        pthread_mutex_unlock(&m->mu);
        return; /* out of memory: not kept, planned again next time */
    }
    if (old != NULL)
        drop(m, old);
    e->refs++; /* the table's */
    if (m->last != NULL)
        m->last->next = e;
    else
        m->first = e;
    m->last = e;
    m->n++;
    while (m->n > m->cap && m->first != NULL && m->first != e) {
        hr_memo_node *gone = m->first;
        uint64_t was;
        (void)hr_strmap_del(&m->by_name, gone->s.node.name, &was);
        drop(m, gone);
    }
    pthread_mutex_unlock(&m->mu);
}

void hr_nodememo_release(hr_nodememo *m, hr_memo_node *e)
{
    if (e == NULL)
        return;
    if (m == NULL) {
        if (--e->refs == 0)
            entry_free(e);
        return;
    }
    pthread_mutex_lock(&m->mu);
    if (--e->refs == 0)
        entry_free(e);
    pthread_mutex_unlock(&m->mu);
}

void hr_nodememo_get_stats(hr_nodememo *m, hr_nodememo_stats *out)
{
    pthread_mutex_lock(&m->mu);
    out->hits = m->hits;
    out->misses = m->misses;
    out->entries = m->n;
    pthread_mutex_unlock(&m->mu);
}
