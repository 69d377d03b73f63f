/*
 * backoff.c — the parked-pods table: a small mutex-guarded list.
 *
 * Refusals are rare (a quota, an Infeasible node), so the table holds a
 * handful of entries; a linear scan is the simplest thing that is fast
 * enough, and entries expire on their own.
 */
#include "backoff.h"

#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef struct entry {
    char *key;  /* "ns/name", owned */
    char *node; /* owned; NULL: not known */
    int64_t until;
    const char *reason;
} entry;

struct hr_backoff {
    pthread_mutex_t mu;
    entry *e;
    size_t n, cap;
    _Atomic uint64_t changes; /* parks and removals (hr_backoff_changes) */
};

hr_status hr_backoff_new(hr_backoff **out, hr_err *err)
{
    hr_backoff *b = calloc(1, sizeof *b);
    if (b == NULL)
        return hr_err_set(err, HR_E_NOMEM, "backoff table: out of memory");
    if (pthread_mutex_init(&b->mu, NULL) != 0) {
        free(b);
        return hr_err_set(err, HR_E_NOMEM, "backoff table: cannot create a lock");
    }
    *out = b;
    return HR_OK;
}

void hr_backoff_free(hr_backoff *b)
{
    if (b == NULL)
        return;
    for (size_t i = 0; i < b->n; i++) {
        free(b->e[i].key);
        free(b->e[i].node);
    }
    free(b->e);
    pthread_mutex_destroy(&b->mu);
    free(b);
}

static entry *find(hr_backoff *b, const char *ns, const char *name)
{
    size_t ln = strlen(ns);
    for (size_t i = 0; i < b->n; i++) {
        const char *k = b->e[i].key;
        if (strncmp(k, ns, ln) == 0 && k[ln] == '/' && strcmp(k + ln + 1, name) == 0)
            return &b->e[i];
    }
    return NULL;
}

hr_status hr_backoff_park(hr_backoff *b, const char *ns, const char *name, const char *node,
                          int64_t now_ms, int64_t period_ms, const char *reason)
{
    hr_status st = HR_OK;
    char *nd = NULL;
    if (node != NULL && (nd = strdup(node)) == NULL)
        return HR_E_NOMEM;
    pthread_mutex_lock(&b->mu);
    entry *e = find(b, ns, name);
    if (e == NULL) {
        if (b->n == b->cap) {
            size_t ncap = b->cap ? b->cap * 2 : 16;
            entry *ne = realloc(b->e, ncap * sizeof *ne);
            if (ne == NULL) {
                st = HR_E_NOMEM;
                goto out;
            }
            b->e = ne;
            b->cap = ncap;
        }
        size_t len = strlen(ns) + strlen(name) + 2;
        char *key = malloc(len);
        if (key == NULL) {
            st = HR_E_NOMEM;
            goto out;
        }
        snprintf(key, len, "%s/%s", ns, name);
        e = &b->e[b->n++];
        e->key = key;
        e->node = NULL;
    }
    free(e->node);
    e->node = nd;
    nd = NULL;
    e->until = now_ms + period_ms;
    e->reason = reason;
    atomic_fetch_add(&b->changes, 1);
out:
    pthread_mutex_unlock(&b->mu);
    free(nd);
    return st;
}

bool hr_backoff_active(hr_backoff *b, const char *ns, const char *name, int64_t now_ms,
                       const char **reason)
{
    pthread_mutex_lock(&b->mu);
    entry *e = find(b, ns, name);
    bool on = e != NULL && e->until > now_ms;
    if (on && reason != NULL)
        *reason = e->reason;
    pthread_mutex_unlock(&b->mu);
    return on;
}

static void remove_at(hr_backoff *b, size_t i)
{
    atomic_fetch_add(&b->changes, 1);
    free(b->e[i].key);
    free(b->e[i].node);
    b->e[i] = b->e[--b->n];
    b->e[b->n] = (entry){0}; /* the vacated slot keeps no pointer it no longer owns */
}

void hr_backoff_forget(hr_backoff *b, const char *ns, const char *name)
{
    pthread_mutex_lock(&b->mu);
    entry *e = find(b, ns, name);
    if (e != NULL)
        remove_at(b, (size_t)(e - b->e));
    pthread_mutex_unlock(&b->mu);
}

size_t hr_backoff_prune(hr_backoff *b, int64_t now_ms, hr_backoff_expired_fn expired, void *ud)
{
    /* The nodes of what expired, handed over after the lock: the callback
     * takes other locks (the node queue's), and the executor takes this one
     * under the cache's. Out of memory: dropped without a call, as before
     * this existed (the pod waits for its node's next event). */
    char **nodes = NULL;
    size_t n_nodes = 0;
    pthread_mutex_lock(&b->mu);
    for (size_t i = 0; i < b->n;) {
        if (b->e[i].until > now_ms) {
            i++;
            continue;
        }
        if (expired != NULL && b->e[i].node != NULL) {
            char **nn = realloc(nodes, (n_nodes + 1) * sizeof *nn);
            if (nn != NULL) {
                nodes = nn;
                nodes[n_nodes++] = b->e[i].node;
                b->e[i].node = NULL; /* now ours */
            }
        }
        remove_at(b, i);
    }
    size_t n = b->n;
    pthread_mutex_unlock(&b->mu);
    for (size_t i = 0; i < n_nodes; i++) {
        expired(ud, nodes[i]);
        free(nodes[i]);
    }
    free(nodes);
    return n;
}

int64_t hr_backoff_next_expiry(hr_backoff *b)
{
    pthread_mutex_lock(&b->mu);
    int64_t next = -1;
    for (size_t i = 0; i < b->n; i++)
        if (next < 0 || b->e[i].until < next)
            next = b->e[i].until;
    pthread_mutex_unlock(&b->mu);
    return next;
}

uint64_t hr_backoff_changes(hr_backoff *b)
{
    return atomic_load(&b->changes);
}
