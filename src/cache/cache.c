/*
 * cache.c — the compact cache (see cache.h for what and why).
 *
 * Layout, chosen for bytes per pod:
 *  - pods live in one array of fixed 80-byte records, addressed by index
 *    (32-bit links instead of 64-bit pointers); free slots are chained;
 *  - a pod's variable part (name, containers, rare optional fields) is one
 *    malloc'd blob of varints: requests like 250m or 512Mi take 2–5 bytes
 *    instead of 8, and equality of two blobs is one memcmp — which is how
 *    an update that changed nothing we keep is recognised (no enqueue);
 *  - strings that repeat are interned (intern.h) and named by 32-bit ids;
 *  - the pods of a node form a doubly-linked list through the records, so
 *    moving a pod between nodes is O(1) and costs no per-node array;
 *  - (namespace, name) → pod is a chained hash through the records.
 * Nodes and namespaces are few (thousands): plain records found through a
 * small open-addressing map keyed by the interned name id.
 */
#include "cache/cache.h"

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cache/intern.h"
#include "core/eligibility.h"
#include "core/names.h"

#define NIL UINT32_MAX

/* ---------------------------------------------------------- u32 map */

/* Open addressing, linear probing, backward-shift deletion. Keys are
 * non-zero interned ids; 0 marks an empty slot. */
typedef struct u32map {
    uint32_t *keys, *vals;
    uint32_t cap, n;
} u32map;

static uint32_t mix32(uint32_t x)
{
    x ^= x >> 16;
    x *= 0x7feb352du;
    x ^= x >> 15;
    x *= 0x846ca68bu;
    x ^= x >> 16;
    return x;
}

static uint32_t map_get(const u32map *m, uint32_t key)
{
    if (!m->cap)
        return NIL;
    for (uint32_t i = mix32(key) & (m->cap - 1);; i = (i + 1) & (m->cap - 1)) {
        if (m->keys[i] == key)
            return m->vals[i];
        if (!m->keys[i])
            return NIL;
    }
}

static int map_grow(u32map *m)
{
    uint32_t nc = m->cap ? m->cap * 2 : 16;
    uint32_t *k = calloc(nc, sizeof *k), *v = calloc(nc, sizeof *v);
    if (!k || !v) {
        free(k);
        free(v);
        return -1;
    }
    for (uint32_t i = 0; i < m->cap; i++) {
        if (!m->keys[i])
            continue;
        uint32_t j = mix32(m->keys[i]) & (nc - 1);
        while (k[j])
            j = (j + 1) & (nc - 1);
        k[j] = m->keys[i];
        v[j] = m->vals[i];
    }
    free(m->keys);
    free(m->vals);
    m->keys = k;
    m->vals = v;
    m->cap = nc;
    return 0;
}

static int map_put(u32map *m, uint32_t key, uint32_t val)
{
    if ((uint64_t)(m->n + 1) * 10 > (uint64_t)m->cap * 7 && map_grow(m) != 0)
        return -1;
    uint32_t i = mix32(key) & (m->cap - 1);
    while (m->keys[i] && m->keys[i] != key)
        i = (i + 1) & (m->cap - 1);
    if (!m->keys[i])
        m->n++;
    m->keys[i] = key;
    m->vals[i] = val;
    return 0;
}

static void map_del(u32map *m, uint32_t key)
{
    if (!m->cap)
        return;
    uint32_t mask = m->cap - 1, i = mix32(key) & mask;
    while (m->keys[i] != key) {
        if (!m->keys[i])
            return;
        i = (i + 1) & mask;
    }
    /* Shift later members of the cluster back so lookups never stop at
     * the hole before reaching them. */
    for (uint32_t j = (i + 1) & mask; m->keys[j]; j = (j + 1) & mask) {
        uint32_t home = mix32(m->keys[j]) & mask;
        if (((j - home) & mask) >= ((j - i) & mask)) {
            m->keys[i] = m->keys[j];
            m->vals[i] = m->vals[j];
            i = j;
        }
    }
    m->keys[i] = 0;
    m->n--;
}

static void map_free(u32map *m)
{
    free(m->keys);
    free(m->vals);
    memset(m, 0, sizeof *m);
}

static size_t map_bytes(const u32map *m)
{
    return (size_t)m->cap * 8;
}

/* ---------------------------------------------------------- records */

enum {
    PF_PHASE = 0x7, /* hr_phase */
    PF_BOUND = 1 << 3,
    PF_MIRROR = 1 << 4,
    PF_WINDOWS = 1 << 5,
    PF_OPTED_OUT = 1 << 6,
    PF_STATUS_RES = 1 << 7,
    PF_MAXCPU_BAD = 1 << 8,
    PF_POD_RES = 1 << 9,
    PF_DELETING = 1 << 10,
    PF_RESIZE_SHIFT = 11, /* 2 bits: hr_resize_state */
    PF_RESIZING = 1 << 13,
    PF_OWNER_CTRL = 1 << 14,
};

typedef struct cpod {
    uint8_t *blob;     /* name, containers, optional fields (varints) */
    uint64_t rv;
    uint8_t uid[16];
    uint32_t hash;     /* of (ns, name), kept for rehashing */
    uint32_t hnext;    /* hash chain; free-list link when the slot is free */
    uint32_t nprev, nnext; /* the node's pod list */
    uint32_t ns;       /* interned; 0 marks a free slot */
    uint32_t node;     /* node slot, NIL when unbound */
    uint32_t okind, ogroup, oname; /* interned owner reference */
    uint32_t mark;     /* relist epoch last seen */
    uint32_t blob_len;
    uint16_t flags;
    uint16_t n_ctr;
    uint32_t status_hash; /* of our status annotation (kube/write/status_note.h) */
} cpod;

enum {
    NF_PRESENT = 1 << 0,
    NF_HAS_ALLOC = 1 << 1,
    NF_READY = 1 << 2,
    NF_DISK = 1 << 3,
    NF_PID = 1 << 4,
    NF_WINDOWS = 1 << 5,
    NF_DIRTY = 1 << 6,
};

_Static_assert(sizeof(cpod) == 88, "the pod record is the budget's core");

#define CHUNK_SHIFT 12
#define CHUNK_PODS (1u << CHUNK_SHIFT)
#define PA(c, i) (&(c)->chunks[(i) >> CHUNK_SHIFT][(i) & (CHUNK_PODS - 1)])

typedef struct cnode {
    uint32_t name;     /* interned; 0 marks a free slot */
    uint32_t head;     /* first pod, NIL */
    uint32_t n_pods;
    uint32_t mark;
    uint32_t n_labels; /* pairs */
    uint8_t flags;
    const char **labels; /* kv pointers to interned strings */
    uint64_t rv;
    int64_t allocatable;
} cnode;

typedef struct cns {
    uint32_t name;     /* interned; 0 marks a free slot */
    uint32_t mark;
    uint32_t n_labels;
    const char **labels;
    uint64_t rv;
} cns;

typedef struct clr {
    uint32_t ns;       /* interned */
    char *name;
    uint32_t mark;
    uint64_t rv;
    hr_limit_bounds bounds;
} clr;

typedef struct cquota {
    uint32_t ns; /* interned */
    char *name;
    uint32_t mark;
    uint64_t rv;
    bool limits_cpu;
} cquota;

struct hr_cache {
    pthread_mutex_t mu;
    hr_intern str;

    cpod **chunks; /* pods in fixed chunks: growth never copies or doubles */
    uint32_t n_chunks, chunks_cap;
    uint32_t pods_cap, pods_used, n_pods, pod_free;
    uint32_t *pbuckets;
    uint32_t n_pbuckets;
    size_t blob_bytes;
    u32map ns_pods; /* ns id -> number of cached pods in it */

    cnode *nodes;
    uint32_t nodes_cap, nodes_used, node_free_n;
    uint32_t *node_free;
    u32map node_by_name;
    uint32_t *dirty;
    uint32_t n_dirty, dirty_cap;
    bool all_dirty;

    cns *nss;
    uint32_t nss_cap, nss_used;
    uint32_t *ns_free;
    uint32_t ns_free_n;
    u32map ns_by_name;

    clr *lrs;
    uint32_t n_lrs, lrs_cap;

    cquota *quotas;
    uint32_t n_quotas, quotas_cap;

    hr_config cfg;
    hr_arena cfg_arena;
    int64_t cfg_generation;
    uint64_t cfg_rv;
    uint32_t cfg_mark;
    char cfg_invalid[HR_ERR_MSG_MAX];
    hr_kcfg_status cfgst; /* the object's status, strings in cfgst_arena */
    hr_arena cfgst_arena;

    uint32_t epoch[HR_CK_COUNT_];
    uint64_t changes[HR_CK_COUNT_];

    uint8_t *enc; /* scratch for encoding a blob */
    size_t enc_cap;

    hr_cache_observer obs;
    void *obs_ud;
};

const char *hr_ckind_str(hr_ckind k)
{
    static const char *n[] = {"pods", "nodes", "namespaces", "limitranges",
                              "headroomconfigs", "resourcequotas"};
    return (unsigned)k < HR_CK_COUNT_ ? n[k] : "?";
}

static void report(hr_cache *c, hr_ckind k, hr_cchange what, const char *ns,
                   const char *name)
{
    c->changes[k]++;
    if (c->obs)
        c->obs(c->obs_ud, k, what, ns, name);
}

hr_status hr_cache_new(hr_cache **out, hr_err *err)
{
    *out = NULL;
    hr_cache *c = calloc(1, sizeof *c);
    if (!c)
        return hr_err_set(err, HR_E_NOMEM, "cache: out of memory");
    if (pthread_mutex_init(&c->mu, NULL) != 0) {
        free(c);
        return hr_err_set(err, HR_E_NOMEM, "cache: mutex");
    }
    hr_intern_init(&c->str);
    c->pod_free = NIL;
    hr_config_defaults(&c->cfg);
    hr_arena_init(&c->cfg_arena, 4096);
    hr_arena_init(&c->cfgst_arena, 1024);
    c->cfgst = (hr_kcfg_status){.generation = -1, .observed_generation = -1,
                                .managed_pods = -1, .managed_nodes = -1};
    for (int k = 0; k < HR_CK_COUNT_; k++)
        c->epoch[k] = 1;
    *out = c;
    return HR_OK;
}

static void free_labels(hr_cache *c, const char **kv, uint32_t n)
{
    if (!kv)
        return;
    for (uint32_t i = 0; i < 2 * n; i++)
        hr_intern_unref(&c->str, hr_intern_id_of(kv[i]));
    free(kv);
}

void hr_cache_free(hr_cache *c)
{
    if (!c)
        return;
    for (uint32_t i = 0; i < c->pods_used; i++)
        if ((*PA(c, i)).ns)
            free((*PA(c, i)).blob);
    for (uint32_t i = 0; i < c->n_chunks; i++)
        free(c->chunks[i]);
    free(c->chunks);
    free(c->pbuckets);
    map_free(&c->ns_pods);
    for (uint32_t i = 0; i < c->nodes_used; i++)
        free(c->nodes[i].labels);
    free(c->nodes);
    free(c->node_free);
    map_free(&c->node_by_name);
    free(c->dirty);
    for (uint32_t i = 0; i < c->nss_used; i++)
        free(c->nss[i].labels);
    free(c->nss);
    free(c->ns_free);
    map_free(&c->ns_by_name);
    for (uint32_t i = 0; i < c->n_lrs; i++)
        free(c->lrs[i].name);
    free(c->lrs);
    for (uint32_t i = 0; i < c->n_quotas; i++)
        free(c->quotas[i].name);
    free(c->quotas);
    hr_arena_free(&c->cfg_arena);
    hr_arena_free(&c->cfgst_arena);
    free(c->enc);
    hr_intern_free(&c->str);
    pthread_mutex_destroy(&c->mu);
    free(c);
}

void hr_cache_set_observer(hr_cache *c, hr_cache_observer fn, void *ud)
{
    pthread_mutex_lock(&c->mu);
    c->obs = fn;
    c->obs_ud = ud;
    pthread_mutex_unlock(&c->mu);
}

void hr_cache_lock(hr_cache *c)
{
    pthread_mutex_lock(&c->mu);
}

void hr_cache_unlock(hr_cache *c)
{
    pthread_mutex_unlock(&c->mu);
}

/* ----------------------------------------------------------- helpers */

static uint64_t parse_rv(const char *s)
{
    /* etcd-backed API servers hand out decimal revisions, and since
     * Kubernetes 1.35 they are documented as comparable integers; anything
     * else reads as 0 ("unknown, never newer"). */
    uint64_t v = 0;
    if (!s || !*s)
        return 0;
    for (; *s; s++) {
        if (*s < '0' || *s > '9' || v > (UINT64_MAX - 9) / 10)
            return 0;
        v = v * 10 + (uint64_t)(*s - '0');
    }
    return v;
}

static int hexval(char ch)
{
    if (ch >= '0' && ch <= '9')
        return ch - '0';
    if (ch >= 'a' && ch <= 'f')
        return ch - 'a' + 10;
    if (ch >= 'A' && ch <= 'F')
        return ch - 'A' + 10;
    return -1;
}

static void parse_uid(const char *s, uint8_t out[16])
{
    uint8_t u[16];
    size_t k = 0;
    memset(out, 0, 16);
    if (!s || strlen(s) != 36)
        return;
    for (size_t i = 0; i < 36;) {
        if (i == 8 || i == 13 || i == 18 || i == 23) {
            if (s[i] != '-')
                return;
            i++;
            continue;
        }
        int h = hexval(s[i]), l = hexval(s[i + 1]);
        if (h < 0 || l < 0)
            return;
        u[k++] = (uint8_t)(h << 4 | l);
        i += 2;
    }
    memcpy(out, u, 16);
}

/* -------------------------------------------------------- blob codec */

static int enc_reserve(hr_cache *c, size_t n)
{
    if (n <= c->enc_cap)
        return 0;
    size_t nc = c->enc_cap ? c->enc_cap : 256;
    while (nc < n)
        nc *= 2;
    uint8_t *p = realloc(c->enc, nc);
    if (!p)
        return -1;
    c->enc = p;
    c->enc_cap = nc;
    return 0;
}

static size_t put_varint(uint8_t *p, uint64_t v)
{
    size_t n = 0;
    while (v >= 0x80) {
        p[n++] = (uint8_t)(v | 0x80);
        v >>= 7;
    }
    p[n++] = (uint8_t)v;
    return n;
}

static uint64_t get_varint(const uint8_t **p)
{
    uint64_t v = 0;
    unsigned shift = 0;
    const uint8_t *q = *p;
    while (*q & 0x80) {
        v |= (uint64_t)(*q++ & 0x7f) << shift;
        shift += 7;
    }
    v |= (uint64_t)*q++ << shift;
    *p = q;
    return v;
}

/* Quantities are ≥ 0 or HR_NONE (-1): +1 makes them unsigned and puts
 * "none" in one byte. */
static uint64_t q_enc(int64_t v)
{
    return (uint64_t)v + 1;
}

static int64_t q_dec(uint64_t v)
{
    return (int64_t)(v - 1);
}

/* Encode pod p into c->enc; container names are interned (references
 * taken, into ids[]). Returns the length, 0 on out of memory. */
static size_t encode_pod(hr_cache *c, const hr_kpod *p, uint32_t *ids)
{
    size_t nl = strlen(p->meta.name);
    /* Upper bound: 10 bytes per varint. */
    size_t need = 11 + nl + (size_t)p->pod.n_ctr * (10 + 1 + 40) + 30;
    if (enc_reserve(c, need) != 0)
        return 0;
    uint8_t *o = c->enc;
    size_t n = put_varint(o, nl);
    /* NUL-terminated, so readers get the name without a copy. */
    memcpy(o + n, p->meta.name, nl + 1);
    n += nl + 1;
    for (uint32_t i = 0; i < p->pod.n_ctr; i++) {
        const hr_container *k = &p->pod.ctr[i];
        const char *cn = p->ctr_names ? p->ctr_names[i] : "";
        uint32_t id = hr_intern_get(&c->str, cn, strlen(cn));
        if (id == UINT32_MAX) {
            for (uint32_t j = 0; j < i; j++)
                hr_intern_unref(&c->str, ids[j]);
            return 0;
        }
        ids[i] = id;
        n += put_varint(o + n, id);
        o[n++] = (uint8_t)((k->kind & 3) | (k->cpu_restart ? 4 : 0));
        n += put_varint(o + n, q_enc(k->cpu_req));
        n += put_varint(o + n, q_enc(k->cpu_lim));
        n += put_varint(o + n, q_enc(k->mem_req));
        n += put_varint(o + n, q_enc(k->mem_lim));
    }
    n += put_varint(o + n, q_enc(p->pod.overhead_cpu));
    n += put_varint(o + n, q_enc(p->pod.pod_cpu_req));
    n += put_varint(o + n, q_enc(p->pod.max_cpu));
    return n;
}

static void blob_name(const uint8_t *b, const char **name, size_t *len)
{
    const uint8_t *q = b;
    *len = (size_t)get_varint(&q);
    *name = (const char *)q;
}

/* Walk a blob's containers: container name ids go to ids (may be NULL),
 * container views to ctr (may be NULL), optional fields to pod (may be
 * NULL). */
static void decode_blob(const cpod *p, uint32_t *ids, hr_container *ctr,
                        hr_pod *pod)
{
    const uint8_t *q = p->blob;
    uint64_t nl = get_varint(&q);
    q += nl + 1;
    for (uint32_t i = 0; i < p->n_ctr; i++) {
        uint32_t id = (uint32_t)get_varint(&q);
        uint8_t f = *q++;
        hr_container k;
        k.kind = f & 3;
        k.cpu_restart = (f & 4) != 0;
        k.cpu_req = q_dec(get_varint(&q));
        k.cpu_lim = q_dec(get_varint(&q));
        k.mem_req = q_dec(get_varint(&q));
        k.mem_lim = q_dec(get_varint(&q));
        if (ids)
            ids[i] = id;
        if (ctr)
            ctr[i] = k;
    }
    int64_t ov = q_dec(get_varint(&q));
    int64_t pr = q_dec(get_varint(&q));
    int64_t mc = q_dec(get_varint(&q));
    if (pod) {
        pod->overhead_cpu = ov;
        pod->pod_cpu_req = pr;
        pod->max_cpu = mc;
    }
}

static size_t blob_alloc_size(size_t len)
{
    /* glibc: usable size rounded to 16 with an 8-byte header; counted so
     * the cache's own figure is honest about malloc's share. */
    size_t s = len + 8;
    if (s < 32)
        s = 32;
    return (s + 15) & ~(size_t)15;
}

/* ---------------------------------------------------------- pods */

static uint32_t pod_hash(uint32_t ns, const char *name, size_t len)
{
    return mix32(hr_intern_hash(name, len) ^ mix32(ns));
}

static uint32_t pod_find(const hr_cache *c, uint32_t ns, const char *name,
                         size_t len, uint32_t h)
{
    if (!c->n_pbuckets)
        return NIL;
    for (uint32_t i = c->pbuckets[h & (c->n_pbuckets - 1)]; i != NIL;
         i = (*PA(c, i)).hnext) {
        const cpod *p = &(*PA(c, i));
        if (p->hash != h || p->ns != ns)
            continue;
        const char *pn;
        size_t pl;
        blob_name(p->blob, &pn, &pl);
        if (pl == len && memcmp(pn, name, len) == 0)
            return i;
    }
    return NIL;
}

static int pod_rehash(hr_cache *c, uint32_t nb)
{
    uint32_t *b = malloc((size_t)nb * sizeof *b);
    if (!b)
        return -1;
    memset(b, 0xff, (size_t)nb * sizeof *b);
    for (uint32_t i = 0; i < c->pods_used; i++) {
        cpod *p = &(*PA(c, i));
        if (!p->ns)
            continue;
        uint32_t k = p->hash & (nb - 1);
        p->hnext = b[k];
        b[k] = i;
    }
    free(c->pbuckets);
    c->pbuckets = b;
    c->n_pbuckets = nb;
    return 0;
}

static void mark_dirty(hr_cache *c, uint32_t node)
{
    if (node == NIL)
        return;
    cnode *n = &c->nodes[node];
    if (n->flags & NF_DIRTY)
        return;
    if (c->n_dirty >= c->dirty_cap) {
        uint32_t nc = c->dirty_cap ? c->dirty_cap * 2 : 64;
        uint32_t *d = realloc(c->dirty, (size_t)nc * sizeof *d);
        if (!d) {
            /* Cannot remember this one node: remember everything. */
            c->all_dirty = true;
            return;
        }
        c->dirty = d;
        c->dirty_cap = nc;
    }
    n->flags |= NF_DIRTY;
    c->dirty[c->n_dirty++] = node;
}

/* The node slot for an interned name, created as a placeholder when
 * unknown. Takes over the caller's reference to name when it creates the
 * slot, drops it otherwise. NIL on out of memory. */
static uint32_t node_slot(hr_cache *c, uint32_t name)
{
    uint32_t i = map_get(&c->node_by_name, name);
    if (i != NIL) {
        hr_intern_unref(&c->str, name);
        return i;
    }
    if (c->node_free_n) {
        i = c->node_free[--c->node_free_n];
    } else {
        if (c->nodes_used >= c->nodes_cap) {
            uint32_t nc = c->nodes_cap ? c->nodes_cap * 2 : 64;
            cnode *p = realloc(c->nodes, (size_t)nc * sizeof *p);
            uint32_t *f = realloc(c->node_free, (size_t)nc * sizeof *f);
            if (p)
                c->nodes = p;
            if (f)
                c->node_free = f;
            if (!p || !f)
                goto nomem;
            c->nodes_cap = nc;
        }
        i = c->nodes_used++;
    }
    if (map_put(&c->node_by_name, name, i) != 0) {
        c->node_free[c->node_free_n++] = i;
        goto nomem;
    }
    c->nodes[i] = (cnode){name, NIL, 0, 0, 0, 0, NULL, 0, 0};
    return i;
nomem:
    hr_intern_unref(&c->str, name);
    return NIL;
}

static void node_link(hr_cache *c, uint32_t node, uint32_t pi)
{
    cpod *p = &(*PA(c, pi));
    cnode *n = &c->nodes[node];
    p->node = node;
    p->nprev = NIL;
    p->nnext = n->head;
    if (n->head != NIL)
        (*PA(c, n->head)).nprev = pi;
    n->head = pi;
    n->n_pods++;
    mark_dirty(c, node);
}

static void node_unlink(hr_cache *c, uint32_t pi)
{
    cpod *p = &(*PA(c, pi));
    if (p->node == NIL)
        return;
    cnode *n = &c->nodes[p->node];
    if (p->nprev != NIL)
        (*PA(c, p->nprev)).nnext = p->nnext;
    else
        n->head = p->nnext;
    if (p->nnext != NIL)
        (*PA(c, p->nnext)).nprev = p->nprev;
    n->n_pods--;
    mark_dirty(c, p->node);
    p->node = NIL;
}

static void ns_count(hr_cache *c, uint32_t ns, int delta)
{
    uint32_t v = map_get(&c->ns_pods, ns);
    uint32_t nv = (v == NIL ? 0 : v) + (uint32_t)delta;
    if (nv == 0)
        map_del(&c->ns_pods, ns);
    else
        map_put(&c->ns_pods, ns, nv); /* on failure only a scan is lost */
}

static void release_pod_strings(hr_cache *c, cpod *p)
{
    uint32_t ids[HR_CPOD_MAX_CTR];
    decode_blob(p, ids, NULL, NULL);
    for (uint32_t i = 0; i < p->n_ctr; i++)
        hr_intern_unref(&c->str, ids[i]);
    hr_intern_unref(&c->str, p->okind);
    hr_intern_unref(&c->str, p->ogroup);
    hr_intern_unref(&c->str, p->oname);
}

static void pod_remove(hr_cache *c, uint32_t pi)
{
    cpod *p = &(*PA(c, pi));
    const char *name;
    size_t nl;
    blob_name(p->blob, &name, &nl);
    node_unlink(c, pi);
    uint32_t *pp = &c->pbuckets[p->hash & (c->n_pbuckets - 1)];
    while (*pp != pi)
        pp = &(*PA(c, *pp)).hnext;
    *pp = p->hnext;
    report(c, HR_CK_POD, HR_CC_DELETED, hr_intern_str(&c->str, p->ns), name);
    release_pod_strings(c, p);
    ns_count(c, p->ns, -1);
    hr_intern_unref(&c->str, p->ns);
    c->blob_bytes -= blob_alloc_size(p->blob_len);
    free(p->blob);
    memset(p, 0, sizeof *p);
    p->hnext = c->pod_free;
    c->pod_free = pi;
    c->n_pods--;
}

static uint32_t pod_alloc(hr_cache *c)
{
    if (c->pod_free != NIL) {
        uint32_t i = c->pod_free;
        c->pod_free = (*PA(c, i)).hnext;
        return i;
    }
    if (c->pods_used >= c->pods_cap) {
        if (c->pods_cap >= NIL / 2)
            return NIL;
        if (c->n_chunks >= c->chunks_cap) {
            uint32_t nc = c->chunks_cap ? c->chunks_cap * 2 : 16;
            cpod **p = realloc(c->chunks, (size_t)nc * sizeof *p);
            if (!p)
                return NIL;
            c->chunks = p;
            c->chunks_cap = nc;
        }
        cpod *chunk = calloc(CHUNK_PODS, sizeof *chunk);
        if (!chunk)
            return NIL;
        c->chunks[c->n_chunks++] = chunk;
        c->pods_cap += CHUNK_PODS;
    }
    return c->pods_used++;
}

static uint16_t pod_flags(const hr_kpod *p, const hr_cpod_status *s)
{
    const hr_pod *d = &p->pod;
    uint16_t f = (uint16_t)(d->phase & PF_PHASE);
    f |= d->bound ? PF_BOUND : 0;
    f |= d->mirror ? PF_MIRROR : 0;
    f |= d->windows ? PF_WINDOWS : 0;
    f |= d->opted_out ? PF_OPTED_OUT : 0;
    f |= d->status_resources ? PF_STATUS_RES : 0;
    f |= d->max_cpu_invalid ? PF_MAXCPU_BAD : 0;
    f |= d->pod_resources ? PF_POD_RES : 0;
    f |= p->deleting ? PF_DELETING : 0;
    f |= p->owner.controller ? PF_OWNER_CTRL : 0;
    if (s) {
        f |= (uint16_t)((s->resize & 3) << PF_RESIZE_SHIFT);
        f |= s->resizing ? PF_RESIZING : 0;
    }
    return f;
}

static uint32_t intern_s(hr_cache *c, const char *s)
{
    return s ? hr_intern_get(&c->str, s, strlen(s)) : 0;
}

static void del_pod_named(hr_cache *c, const char *ns, const char *name)
{
    uint32_t nsid = hr_intern_find(&c->str, ns, strlen(ns));
    if (!nsid)
        return;
    size_t nl = strlen(name);
    uint32_t i = pod_find(c, nsid, name, nl, pod_hash(nsid, name, nl));
    if (i != NIL)
        pod_remove(c, i);
}

static hr_status put_pod_locked(hr_cache *c, const hr_kpod *p,
                                const hr_cpod_status *s, hr_err *err)
{
    const char *ns = p->meta.ns, *name = p->meta.name;
    if (!ns[0] || !name[0])
        return hr_err_set(err, HR_E_INPUT, "pod without namespace or name");
    if (hr_pod_terminal(&p->pod)) {
        /* Terminal pods book nothing and never come back: forget them. */
        del_pod_named(c, ns, name);
        return HR_OK;
    }
    if (p->pod.n_ctr > HR_CPOD_MAX_CTR)
        return hr_err_set(err, HR_E_LIMIT, "pod %s/%s: %u containers", ns,
                          name, p->pod.n_ctr);
    uint32_t ids[HR_CPOD_MAX_CTR];
    uint32_t nsid = intern_s(c, ns);
    uint32_t ok = intern_s(c, p->owner.kind);
    uint32_t og = p->owner.kind ? intern_s(c, p->owner.api_group) : 0;
    uint32_t on = p->owner.kind ? intern_s(c, p->owner.name) : 0;
    uint32_t nn = intern_s(c, p->node_name);
    size_t len = 0;
    if (nsid == UINT32_MAX || ok == UINT32_MAX || og == UINT32_MAX ||
        on == UINT32_MAX || nn == UINT32_MAX ||
        (len = encode_pod(c, p, ids)) == 0) {
        uint32_t held[] = {nsid, ok, og, on, nn};
        for (size_t k = 0; k < sizeof held / sizeof held[0]; k++)
            if (held[k] != UINT32_MAX)
                hr_intern_unref(&c->str, held[k]);
        return hr_err_set(err, HR_E_NOMEM, "pod %s/%s: out of memory", ns,
                          name);
    }
    uint32_t node = NIL;
    if (nn) {
        node = node_slot(c, nn); /* takes nn's reference */
        if (node == NIL)
            goto nomem;
    }
    uint16_t flags = pod_flags(p, s);
    uint64_t rv = parse_rv(p->meta.resource_version);
    size_t nl = strlen(name);
    uint32_t h = pod_hash(nsid, name, nl);
    uint32_t pi = pod_find(c, nsid, name, nl, h);
    if (pi != NIL) {
        cpod *old = &(*PA(c, pi));
        old->rv = rv;
        /* Our own annotation changing is remembered but recomputes
         * nothing: the controller only compares it before writing. */
        old->status_hash = s ? s->status_hash : 0;
        old->mark = c->epoch[HR_CK_POD];
        parse_uid(p->meta.uid, old->uid);
        bool same = old->node == node && old->flags == flags &&
                    old->okind == ok && old->ogroup == og &&
                    old->oname == on && old->n_ctr == p->pod.n_ctr &&
                    old->blob_len == len &&
                    memcmp(old->blob, c->enc, len) == 0;
        if (same) {
            /* Only the resourceVersion moved (status heartbeats, our own
             * annotation): nothing to recompute. Drop the duplicate
             * references taken while encoding. */
            for (uint32_t k = 0; k < p->pod.n_ctr; k++)
                hr_intern_unref(&c->str, ids[k]);
            hr_intern_unref(&c->str, nsid);
            hr_intern_unref(&c->str, ok);
            hr_intern_unref(&c->str, og);
            hr_intern_unref(&c->str, on);
            return HR_OK;
        }
        uint8_t *nb = malloc(len);
        if (!nb)
            goto nomem_ids;
        memcpy(nb, c->enc, len);
        release_pod_strings(c, old);
        hr_intern_unref(&c->str, nsid); /* the record keeps its own */
        c->blob_bytes -= blob_alloc_size(old->blob_len);
        free(old->blob);
        old->blob = nb;
        old->blob_len = (uint32_t)len;
        c->blob_bytes += blob_alloc_size(len);
        old->n_ctr = (uint16_t)p->pod.n_ctr;
        old->flags = flags;
        old->okind = ok;
        old->ogroup = og;
        old->oname = on;
        if (old->node != node) {
            node_unlink(c, pi); /* dirties the node it leaves */
            if (node != NIL)
                node_link(c, node, pi);
        } else {
            mark_dirty(c, node);
        }
        report(c, HR_CK_POD, HR_CC_UPDATED, ns, name);
        return HR_OK;
    }
    if (c->n_pods + 1 > c->n_pbuckets) {
        uint32_t nb = c->n_pbuckets ? c->n_pbuckets * 2 : 1024;
        if (pod_rehash(c, nb) != 0)
            goto nomem_ids;
    }
    uint8_t *blob = malloc(len);
    if (!blob)
        goto nomem_ids;
    pi = pod_alloc(c);
    if (pi == NIL) {
        free(blob);
        goto nomem_ids;
    }
    cpod *np = &(*PA(c, pi));
    memset(np, 0, sizeof *np);
    memcpy(blob, c->enc, len);
    np->blob = blob;
    np->blob_len = (uint32_t)len;
    c->blob_bytes += blob_alloc_size(len);
    np->rv = rv;
    parse_uid(p->meta.uid, np->uid);
    np->hash = h;
    np->ns = nsid;
    np->node = NIL;
    np->okind = ok;
    np->ogroup = og;
    np->oname = on;
    np->mark = c->epoch[HR_CK_POD];
    np->flags = flags;
    np->n_ctr = (uint16_t)p->pod.n_ctr;
    np->status_hash = s ? s->status_hash : 0;
    uint32_t k = h & (c->n_pbuckets - 1);
    np->hnext = c->pbuckets[k];
    c->pbuckets[k] = pi;
    c->n_pods++;
    ns_count(c, nsid, +1);
    if (node != NIL)
        node_link(c, node, pi);
    report(c, HR_CK_POD, HR_CC_ADDED, ns, name);
    return HR_OK;
nomem_ids:
    /* node_slot kept the node reference in its slot (harmless: the
     * placeholder is collected at the next drain). */
    for (uint32_t j = 0; j < p->pod.n_ctr; j++)
        hr_intern_unref(&c->str, ids[j]);
    hr_intern_unref(&c->str, nsid);
    hr_intern_unref(&c->str, ok);
    hr_intern_unref(&c->str, og);
    hr_intern_unref(&c->str, on);
    return hr_err_set(err, HR_E_NOMEM, "pod %s/%s: out of memory", ns, name);
nomem:
    for (uint32_t j = 0; j < p->pod.n_ctr; j++)
        hr_intern_unref(&c->str, ids[j]);
    hr_intern_unref(&c->str, nsid);
    hr_intern_unref(&c->str, ok);
    hr_intern_unref(&c->str, og);
    hr_intern_unref(&c->str, on);
    return hr_err_set(err, HR_E_NOMEM, "pod %s/%s: out of memory", ns, name);
}

hr_status hr_cache_put_pod(hr_cache *c, const hr_kpod *p,
                           const hr_cpod_status *s, hr_err *err)
{
    pthread_mutex_lock(&c->mu);
    hr_status st = put_pod_locked(c, p, s, err);
    pthread_mutex_unlock(&c->mu);
    return st;
}

/* ---------------------------------------------------------- labels */

/* Intern a label set into a kv pointer array (NULL when empty). */
static int intern_labels(hr_cache *c, const hr_labels *l, const char ***out)
{
    *out = NULL;
    if (!l->n)
        return 0;
    const char **kv = malloc((size_t)l->n * 2 * sizeof *kv);
    if (!kv)
        return -1;
    for (uint32_t i = 0; i < 2 * l->n; i++) {
        const char *s = l->kv[i] ? l->kv[i] : "";
        uint32_t id = hr_intern_get(&c->str, s, strlen(s));
        if (id == UINT32_MAX) {
            for (uint32_t j = 0; j < i; j++)
                hr_intern_unref(&c->str, hr_intern_id_of(kv[j]));
            free(kv);
            return -1;
        }
        kv[i] = hr_intern_str(&c->str, id);
    }
    *out = kv;
    return 0;
}

static bool labels_equal(const char **a, uint32_t na, const char **b,
                         uint32_t nb)
{
    if (na != nb)
        return false;
    /* Interned: equal strings are the same pointer. */
    return na == 0 || memcmp(a, b, (size_t)na * 2 * sizeof *a) == 0;
}

/* ---------------------------------------------------------- nodes */

static void node_clear(hr_cache *c, cnode *n)
{
    free_labels(c, n->labels, n->n_labels);
    n->labels = NULL;
    n->n_labels = 0;
    n->flags &= NF_DIRTY;
    n->allocatable = 0;
    n->rv = 0;
}

static hr_status put_node_locked(hr_cache *c, const hr_knode *k, hr_err *err)
{
    const char *name = k->meta.name;
    uint32_t id = intern_s(c, name);
    if (!id)
        return hr_err_set(err, HR_E_INPUT, "node without a name");
    if (id == UINT32_MAX)
        return hr_err_set(err, HR_E_NOMEM, "node %s: out of memory", name);
    uint32_t i = node_slot(c, id);
    if (i == NIL)
        return hr_err_set(err, HR_E_NOMEM, "node %s: out of memory", name);
    cnode *n = &c->nodes[i];
    const char **kv;
    if (intern_labels(c, &k->meta.labels, &kv) != 0)
        return hr_err_set(err, HR_E_NOMEM, "node %s: out of memory", name);
    uint8_t flags = NF_PRESENT;
    flags |= k->has_allocatable ? NF_HAS_ALLOC : 0;
    flags |= k->ready ? NF_READY : 0;
    flags |= k->node.disk_pressure ? NF_DISK : 0;
    flags |= k->node.pid_pressure ? NF_PID : 0;
    flags |= k->windows ? NF_WINDOWS : 0;
    bool was = (n->flags & NF_PRESENT) != 0;
    n->rv = parse_rv(k->meta.resource_version);
    n->mark = c->epoch[HR_CK_NODE];
    if (was && (n->flags & ~NF_DIRTY) == flags &&
        n->allocatable == k->node.allocatable &&
        labels_equal(n->labels, n->n_labels, kv, k->meta.labels.n)) {
        /* Heartbeats: conditions' timestamps moved, nothing we keep. */
        free_labels(c, kv, k->meta.labels.n);
        return HR_OK;
    }
    free_labels(c, n->labels, n->n_labels);
    n->labels = kv;
    n->n_labels = k->meta.labels.n;
    n->flags = (uint8_t)((n->flags & NF_DIRTY) | flags);
    n->allocatable = k->node.allocatable;
    mark_dirty(c, i);
    report(c, HR_CK_NODE, was ? HR_CC_UPDATED : HR_CC_ADDED, "", name);
    return HR_OK;
}

hr_status hr_cache_put_node(hr_cache *c, const hr_knode *n, hr_err *err)
{
    pthread_mutex_lock(&c->mu);
    hr_status st = put_node_locked(c, n, err);
    pthread_mutex_unlock(&c->mu);
    return st;
}

static void node_delete(hr_cache *c, uint32_t i)
{
    cnode *n = &c->nodes[i];
    if (!(n->flags & NF_PRESENT))
        return;
    node_clear(c, n);
    mark_dirty(c, i);
    report(c, HR_CK_NODE, HR_CC_DELETED, "", hr_intern_str(&c->str, n->name));
}

/* ---------------------------------------------------------- namespaces */

/* A namespace's labels decide whether its pods are managed: every node
 * with one of its pods must look again. */
static void dirty_ns_nodes(hr_cache *c, uint32_t nsid)
{
    if (map_get(&c->ns_pods, nsid) == NIL)
        return;
    for (uint32_t i = 0; i < c->pods_used; i++)
        if ((*PA(c, i)).ns == nsid)
            mark_dirty(c, (*PA(c, i)).node);
}

static hr_status put_ns_locked(hr_cache *c, const hr_knamespace *k,
                               hr_err *err)
{
    const char *name = k->meta.name;
    uint32_t id = intern_s(c, name);
    if (!id)
        return hr_err_set(err, HR_E_INPUT, "namespace without a name");
    if (id == UINT32_MAX)
        return hr_err_set(err, HR_E_NOMEM, "namespace %s: out of memory",
                          name);
    const char **kv;
    if (intern_labels(c, &k->meta.labels, &kv) != 0) {
        hr_intern_unref(&c->str, id);
        return hr_err_set(err, HR_E_NOMEM, "namespace %s: out of memory",
                          name);
    }
    uint32_t i = map_get(&c->ns_by_name, id);
    if (i != NIL) {
        cns *n = &c->nss[i];
        hr_intern_unref(&c->str, id);
        n->rv = parse_rv(k->meta.resource_version);
        n->mark = c->epoch[HR_CK_NAMESPACE];
        if (labels_equal(n->labels, n->n_labels, kv, k->meta.labels.n)) {
            free_labels(c, kv, k->meta.labels.n);
            return HR_OK;
        }
        free_labels(c, n->labels, n->n_labels);
        n->labels = kv;
        n->n_labels = k->meta.labels.n;
        dirty_ns_nodes(c, id);
        report(c, HR_CK_NAMESPACE, HR_CC_UPDATED, "", name);
        return HR_OK;
    }
    if (c->ns_free_n) {
        i = c->ns_free[--c->ns_free_n];
    } else {
        if (c->nss_used >= c->nss_cap) {
            uint32_t nc = c->nss_cap ? c->nss_cap * 2 : 64;
            cns *p = realloc(c->nss, (size_t)nc * sizeof *p);
            uint32_t *f = realloc(c->ns_free, (size_t)nc * sizeof *f);
            if (p)
                c->nss = p;
            if (f)
                c->ns_free = f;
            if (!p || !f) {
                free_labels(c, kv, k->meta.labels.n);
                hr_intern_unref(&c->str, id);
                return hr_err_set(err, HR_E_NOMEM,
                                  "namespace %s: out of memory", name);
            }
            c->nss_cap = nc;
        }
        i = c->nss_used++;
    }
    if (map_put(&c->ns_by_name, id, i) != 0) {
        c->ns_free[c->ns_free_n++] = i;
        free_labels(c, kv, k->meta.labels.n);
        hr_intern_unref(&c->str, id);
        return hr_err_set(err, HR_E_NOMEM, "namespace %s: out of memory",
                          name);
    }
    c->nss[i] = (cns){id, c->epoch[HR_CK_NAMESPACE], k->meta.labels.n, kv,
                      parse_rv(k->meta.resource_version)};
    dirty_ns_nodes(c, id);
    report(c, HR_CK_NAMESPACE, HR_CC_ADDED, "", name);
    return HR_OK;
}

hr_status hr_cache_put_namespace(hr_cache *c, const hr_knamespace *n,
                                 hr_err *err)
{
    pthread_mutex_lock(&c->mu);
    hr_status st = put_ns_locked(c, n, err);
    pthread_mutex_unlock(&c->mu);
    return st;
}

static void ns_delete(hr_cache *c, uint32_t i)
{
    cns *n = &c->nss[i];
    uint32_t id = n->name;
    dirty_ns_nodes(c, id);
    report(c, HR_CK_NAMESPACE, HR_CC_DELETED, "", hr_intern_str(&c->str, id));
    free_labels(c, n->labels, n->n_labels);
    map_del(&c->ns_by_name, id);
    hr_intern_unref(&c->str, id);
    memset(n, 0, sizeof *n);
    c->ns_free[c->ns_free_n++] = i; /* cap ≥ slots, so it fits */
}

/* ---------------------------------------------------------- LimitRanges */

static uint32_t lr_find(const hr_cache *c, uint32_t ns, const char *name)
{
    for (uint32_t i = 0; i < c->n_lrs; i++)
        if (c->lrs[i].ns == ns && strcmp(c->lrs[i].name, name) == 0)
            return i;
    return NIL;
}

static bool bounds_equal(const hr_limit_bounds *a, const hr_limit_bounds *b)
{
    return a->ctr_max == b->ctr_max &&
           a->ctr_ratio_milli == b->ctr_ratio_milli && a->pod_max == b->pod_max;
}

static hr_status put_lr_locked(hr_cache *c, const hr_klimitrange *k,
                               hr_err *err)
{
    const char *ns = k->meta.ns, *name = k->meta.name;
    if (!ns[0] || !name[0])
        return hr_err_set(err, HR_E_INPUT, "limitrange without namespace or name");
    uint32_t nsid = intern_s(c, ns);
    if (nsid == UINT32_MAX)
        return hr_err_set(err, HR_E_NOMEM, "limitrange %s/%s: out of memory",
                          ns, name);
    uint32_t i = lr_find(c, nsid, name);
    if (i != NIL) {
        clr *l = &c->lrs[i];
        hr_intern_unref(&c->str, nsid);
        l->rv = parse_rv(k->meta.resource_version);
        l->mark = c->epoch[HR_CK_LIMITRANGE];
        if (bounds_equal(&l->bounds, &k->bounds))
            return HR_OK;
        l->bounds = k->bounds;
        c->all_dirty = true;
        report(c, HR_CK_LIMITRANGE, HR_CC_UPDATED, ns, name);
        return HR_OK;
    }
    if (c->n_lrs >= c->lrs_cap) {
        uint32_t nc = c->lrs_cap ? c->lrs_cap * 2 : 16;
        clr *p = realloc(c->lrs, (size_t)nc * sizeof *p);
        if (!p) {
            hr_intern_unref(&c->str, nsid);
            return hr_err_set(err, HR_E_NOMEM,
                              "limitrange %s/%s: out of memory", ns, name);
        }
        c->lrs = p;
        c->lrs_cap = nc;
    }
    char *nm = strdup(name);
    if (!nm) {
        hr_intern_unref(&c->str, nsid);
        return hr_err_set(err, HR_E_NOMEM, "limitrange %s/%s: out of memory",
                          ns, name);
    }
    c->lrs[c->n_lrs++] = (clr){nsid, nm, c->epoch[HR_CK_LIMITRANGE],
                               parse_rv(k->meta.resource_version), k->bounds};
    c->all_dirty = true;
    report(c, HR_CK_LIMITRANGE, HR_CC_ADDED, ns, name);
    return HR_OK;
}

hr_status hr_cache_put_limitrange(hr_cache *c, const hr_klimitrange *l,
                                  hr_err *err)
{
    pthread_mutex_lock(&c->mu);
    hr_status st = put_lr_locked(c, l, err);
    pthread_mutex_unlock(&c->mu);
    return st;
}

static void lr_delete(hr_cache *c, uint32_t i)
{
    clr *l = &c->lrs[i];
    report(c, HR_CK_LIMITRANGE, HR_CC_DELETED, hr_intern_str(&c->str, l->ns),
           l->name);
    hr_intern_unref(&c->str, l->ns);
    free(l->name);
    c->lrs[i] = c->lrs[--c->n_lrs];
    c->all_dirty = true;
}

/* ---------------------------------------------------------- ResourceQuotas */

static uint32_t quota_find(const hr_cache *c, uint32_t ns, const char *name)
{
    for (uint32_t i = 0; i < c->n_quotas; i++)
        if (c->quotas[i].ns == ns && strcmp(c->quotas[i].name, name) == 0)
            return i;
    return NIL;
}

/* Quotas change no plan (the policy does not read them): no node is made
 * dirty, only the change is reported. */
static hr_status put_quota_locked(hr_cache *c, const hr_kquota *k, hr_err *err)
{
    const char *ns = k->meta.ns, *name = k->meta.name;
    if (!ns[0] || !name[0])
        return hr_err_set(err, HR_E_INPUT, "resourcequota without namespace or name");
    uint32_t nsid = intern_s(c, ns);
    if (nsid == UINT32_MAX)
        return hr_err_set(err, HR_E_NOMEM, "resourcequota %s/%s: out of memory", ns, name);
    uint32_t i = quota_find(c, nsid, name);
    if (i != NIL) {
        cquota *q = &c->quotas[i];
        hr_intern_unref(&c->str, nsid);
        q->rv = parse_rv(k->meta.resource_version);
        q->mark = c->epoch[HR_CK_QUOTA];
        if (q->limits_cpu == k->limits_cpu)
            return HR_OK;
        q->limits_cpu = k->limits_cpu;
        report(c, HR_CK_QUOTA, HR_CC_UPDATED, ns, name);
        return HR_OK;
    }
    if (c->n_quotas >= c->quotas_cap) {
        uint32_t nc = c->quotas_cap ? c->quotas_cap * 2 : 16;
        cquota *p = realloc(c->quotas, (size_t)nc * sizeof *p);
        if (!p) {
            hr_intern_unref(&c->str, nsid);
            return hr_err_set(err, HR_E_NOMEM, "resourcequota %s/%s: out of memory", ns, name);
        }
        c->quotas = p;
        c->quotas_cap = nc;
    }
    char *nm = strdup(name);
    if (!nm) {
        hr_intern_unref(&c->str, nsid);
        return hr_err_set(err, HR_E_NOMEM, "resourcequota %s/%s: out of memory", ns, name);
    }
    c->quotas[c->n_quotas++] = (cquota){nsid, nm, c->epoch[HR_CK_QUOTA],
                                        parse_rv(k->meta.resource_version), k->limits_cpu};
    report(c, HR_CK_QUOTA, HR_CC_ADDED, ns, name);
    return HR_OK;
}

hr_status hr_cache_put_quota(hr_cache *c, const hr_kquota *q, hr_err *err)
{
    pthread_mutex_lock(&c->mu);
    hr_status st = put_quota_locked(c, q, err);
    pthread_mutex_unlock(&c->mu);
    return st;
}

static void quota_delete(hr_cache *c, uint32_t i)
{
    cquota *q = &c->quotas[i];
    report(c, HR_CK_QUOTA, HR_CC_DELETED, hr_intern_str(&c->str, q->ns), q->name);
    hr_intern_unref(&c->str, q->ns);
    free(q->name);
    c->quotas[i] = c->quotas[--c->n_quotas];
}

/* ---------------------------------------------------------- config */

hr_status hr_cache_put_config(hr_cache *c, const hr_kconfig *k,
                              int64_t generation, hr_arena *a, hr_err *err)
{
    (void)err;
    if (strcmp(k->meta.name, HR_CONFIG_NAME) != 0) {
        hr_arena_free(a);
        return HR_OK;
    }
    pthread_mutex_lock(&c->mu);
    bool was = c->cfg.present;
    c->cfg_rv = parse_rv(k->meta.resource_version);
    c->cfg_mark = c->epoch[HR_CK_CONFIG];
    if (was && generation > 0 && generation == c->cfg_generation &&
        !c->cfg_invalid[0]) {
        pthread_mutex_unlock(&c->mu);
        hr_arena_free(a);
        return HR_OK;
    }
    c->cfg_generation = generation;
    c->cfg_invalid[0] = '\0';
    hr_arena_free(&c->cfg_arena);
    c->cfg_arena = *a;
    hr_arena_init(a, a->chunk_size);
    c->cfg = k->cfg;
    c->cfg.present = true;
    /* Recompute everything on any change: the knobs touch every node. The
     * caller filters out status-only updates by generation. */
    c->all_dirty = true;
    report(c, HR_CK_CONFIG, was ? HR_CC_UPDATED : HR_CC_ADDED, "",
           HR_CONFIG_NAME);
    pthread_mutex_unlock(&c->mu);
    return HR_OK;
}

void hr_cache_config_invalid(hr_cache *c, const char *msg)
{
    pthread_mutex_lock(&c->mu);
    snprintf(c->cfg_invalid, sizeof c->cfg_invalid, "%s", msg ? msg : "");
    c->cfg_mark = c->epoch[HR_CK_CONFIG];
    pthread_mutex_unlock(&c->mu);
}

static void cfgst_reset(hr_cache *c)
{
    hr_arena_free(&c->cfgst_arena);
    c->cfgst = (hr_kcfg_status){.generation = -1, .observed_generation = -1,
                                .managed_pods = -1, .managed_nodes = -1};
}

hr_status hr_cache_put_config_status(hr_cache *c, const hr_kcfg_status *s, hr_err *err)
{
    /* Copied into a fresh arena, swapped in only when whole. */
    hr_arena a;
    hr_arena_init(&a, 1024);
    hr_arena_set_limit(&a, (size_t)4 << 20);
    hr_kcfg_status t = *s;
    for (size_t i = 0; i < t.n_cond; i++) {
        hr_kcondition *k = &t.cond[i];
        const char **f[] = {&k->type, &k->status, &k->reason, &k->message,
                            &k->last_transition};
        for (size_t j = 0; j < sizeof f / sizeof *f; j++) {
            if (!(*f[j] = hr_arena_strdup(&a, *f[j] ? *f[j] : ""))) {
                hr_arena_free(&a);
                return hr_err_set(err, HR_E_NOMEM, "headroomconfig status: out of memory");
            }
        }
    }
    pthread_mutex_lock(&c->mu);
    hr_arena_free(&c->cfgst_arena);
    c->cfgst_arena = a;
    c->cfgst = t;
    pthread_mutex_unlock(&c->mu);
    return HR_OK;
}

static void config_delete(hr_cache *c)
{
    cfgst_reset(c);
    if (!c->cfg.present && !c->cfg_invalid[0])
        return;
    bool was = c->cfg.present;
    hr_arena_free(&c->cfg_arena);
    hr_config_defaults(&c->cfg);
    c->cfg_invalid[0] = '\0';
    c->cfg_rv = 0;
    c->cfg_generation = 0;
    if (was) {
        c->all_dirty = true;
        report(c, HR_CK_CONFIG, HR_CC_DELETED, "", HR_CONFIG_NAME);
    }
}

/* ---------------------------------------------------------- deletes */

static void del_locked(hr_cache *c, hr_ckind kind, const char *ns,
                       const char *name)
{
    uint32_t id, i;
    switch (kind) {
    case HR_CK_POD:
        del_pod_named(c, ns, name);
        break;
    case HR_CK_NODE:
        id = hr_intern_find(&c->str, name, strlen(name));
        i = id ? map_get(&c->node_by_name, id) : NIL;
        if (i != NIL)
            node_delete(c, i);
        break;
    case HR_CK_NAMESPACE:
        id = hr_intern_find(&c->str, name, strlen(name));
        i = id ? map_get(&c->ns_by_name, id) : NIL;
        if (i != NIL)
            ns_delete(c, i);
        break;
    case HR_CK_LIMITRANGE:
        id = hr_intern_find(&c->str, ns, strlen(ns));
        i = id ? lr_find(c, id, name) : NIL;
        if (i != NIL)
            lr_delete(c, i);
        break;
    case HR_CK_CONFIG:
        if (strcmp(name, HR_CONFIG_NAME) == 0)
            config_delete(c);
        break;
    case HR_CK_QUOTA:
        id = hr_intern_find(&c->str, ns, strlen(ns));
        i = id ? quota_find(c, id, name) : NIL;
        if (i != NIL)
            quota_delete(c, i);
        break;
    default:
        break;
    }
}

void hr_cache_del(hr_cache *c, hr_ckind kind, const char *ns,
                  const char *name)
{
    pthread_mutex_lock(&c->mu);
    del_locked(c, kind, ns ? ns : "", name ? name : "");
    pthread_mutex_unlock(&c->mu);
}

void hr_cache_touch(hr_cache *c, hr_ckind kind, const char *ns,
                    const char *name)
{
    if (!name)
        return;
    ns = ns ? ns : "";
    pthread_mutex_lock(&c->mu);
    uint32_t e = c->epoch[kind], id, i;
    switch (kind) {
    case HR_CK_POD:
        id = hr_intern_find(&c->str, ns, strlen(ns));
        i = id ? pod_find(c, id, name, strlen(name),
                          pod_hash(id, name, strlen(name)))
               : NIL;
        if (i != NIL)
            (*PA(c, i)).mark = e;
        break;
    case HR_CK_NODE:
        id = hr_intern_find(&c->str, name, strlen(name));
        i = id ? map_get(&c->node_by_name, id) : NIL;
        if (i != NIL)
            c->nodes[i].mark = e;
        break;
    case HR_CK_NAMESPACE:
        id = hr_intern_find(&c->str, name, strlen(name));
        i = id ? map_get(&c->ns_by_name, id) : NIL;
        if (i != NIL)
            c->nss[i].mark = e;
        break;
    case HR_CK_LIMITRANGE:
        id = hr_intern_find(&c->str, ns, strlen(ns));
        i = id ? lr_find(c, id, name) : NIL;
        if (i != NIL)
            c->lrs[i].mark = e;
        break;
    case HR_CK_CONFIG:
        c->cfg_mark = e;
        break;
    case HR_CK_QUOTA:
        id = hr_intern_find(&c->str, ns, strlen(ns));
        i = id ? quota_find(c, id, name) : NIL;
        if (i != NIL)
            c->quotas[i].mark = e;
        break;
    default:
        break;
    }
    pthread_mutex_unlock(&c->mu);
}

/* ---------------------------------------------------------- relist */

void hr_cache_relist_begin(hr_cache *c, hr_ckind kind)
{
    pthread_mutex_lock(&c->mu);
    c->epoch[kind]++;
    if (!c->epoch[kind])
        c->epoch[kind] = 1;
    pthread_mutex_unlock(&c->mu);
}

size_t hr_cache_relist_end(hr_cache *c, hr_ckind kind, bool complete)
{
    if (!complete)
        return 0;
    size_t n = 0;
    pthread_mutex_lock(&c->mu);
    uint32_t e = c->epoch[kind];
    switch (kind) {
    case HR_CK_POD:
        for (uint32_t i = 0; i < c->pods_used; i++)
            if ((*PA(c, i)).ns && (*PA(c, i)).mark != e) {
                pod_remove(c, i);
                n++;
            }
        break;
    case HR_CK_NODE:
        for (uint32_t i = 0; i < c->nodes_used; i++)
            if (c->nodes[i].name && (c->nodes[i].flags & NF_PRESENT) &&
                c->nodes[i].mark != e) {
                node_delete(c, i);
                n++;
            }
        break;
    case HR_CK_NAMESPACE:
        for (uint32_t i = 0; i < c->nss_used; i++)
            if (c->nss[i].name && c->nss[i].mark != e) {
                ns_delete(c, i);
                n++;
            }
        break;
    case HR_CK_LIMITRANGE:
        for (uint32_t i = 0; i < c->n_lrs;)
            if (c->lrs[i].mark != e) {
                lr_delete(c, i); /* moves the last one into i */
                n++;
            } else {
                i++;
            }
        break;
    case HR_CK_CONFIG:
        if ((c->cfg.present || c->cfg_invalid[0]) && c->cfg_mark != e) {
            config_delete(c);
            n++;
        }
        break;
    case HR_CK_QUOTA:
        for (uint32_t i = 0; i < c->n_quotas;)
            if (c->quotas[i].mark != e) {
                quota_delete(c, i); /* moves the last one into i */
                n++;
            } else {
                i++;
            }
        break;
    default:
        break;
    }
    pthread_mutex_unlock(&c->mu);
    return n;
}

/* ---------------------------------------------------------- readers */

static void fill_pod_view(const hr_cache *c, uint32_t i, hr_cpod_view *v,
                          hr_cpod_scratch *s)
{
    const cpod *p = &(*PA(c, i));
    uint32_t ids[HR_CPOD_MAX_CTR];
    memset(v, 0, sizeof *v);
    v->id = i;
    v->ns = hr_intern_str(&c->str, p->ns);
    size_t nl;
    blob_name(p->blob, &v->name, &nl);
    v->node = p->node != NIL ? hr_intern_str(&c->str, c->nodes[p->node].name)
                             : NULL;
    v->rv = p->rv;
    memcpy(v->uid, p->uid, 16);
    v->owner_kind = p->okind ? hr_intern_str(&c->str, p->okind) : NULL;
    v->owner_group = hr_intern_str(&c->str, p->ogroup);
    v->owner_name = hr_intern_str(&c->str, p->oname);
    v->owner_controller = (p->flags & PF_OWNER_CTRL) != 0;
    v->deleting = (p->flags & PF_DELETING) != 0;
    v->resize = (uint8_t)((p->flags >> PF_RESIZE_SHIFT) & 3);
    v->resizing = (p->flags & PF_RESIZING) != 0;
    v->status_hash = p->status_hash;
    v->pod = hr_pod_init();
    decode_blob(p, ids, s->ctr, &v->pod);
    for (uint32_t k = 0; k < p->n_ctr; k++)
        s->names[k] = hr_intern_str(&c->str, ids[k]);
    v->pod.ctr = s->ctr;
    v->pod.n_ctr = p->n_ctr;
    v->ctr_names = s->names;
    v->pod.phase = p->flags & PF_PHASE;
    v->pod.bound = (p->flags & PF_BOUND) != 0;
    v->pod.mirror = (p->flags & PF_MIRROR) != 0;
    v->pod.windows = (p->flags & PF_WINDOWS) != 0;
    v->pod.opted_out = (p->flags & PF_OPTED_OUT) != 0;
    v->pod.status_resources = (p->flags & PF_STATUS_RES) != 0;
    v->pod.max_cpu_invalid = (p->flags & PF_MAXCPU_BAD) != 0;
    v->pod.pod_resources = (p->flags & PF_POD_RES) != 0;
}

bool hr_cache_pod_get(const hr_cache *c, const char *ns, const char *name,
                      hr_cpod_view *out, hr_cpod_scratch *s)
{
    uint32_t id = hr_intern_find(&c->str, ns, strlen(ns));
    if (!id)
        return false;
    size_t nl = strlen(name);
    uint32_t i = pod_find(c, id, name, nl, pod_hash(id, name, nl));
    if (i == NIL)
        return false;
    fill_pod_view(c, i, out, s);
    return true;
}

bool hr_cache_pod_at(const hr_cache *c, uint32_t id, hr_cpod_view *out,
                     hr_cpod_scratch *s)
{
    if (id >= c->pods_used || !(*PA(c, id)).ns)
        return false;
    fill_pod_view(c, id, out, s);
    return true;
}

bool hr_cache_pod_next(const hr_cache *c, uint32_t *iter, hr_cpod_view *out,
                       hr_cpod_scratch *s)
{
    for (uint32_t i = *iter; i < c->pods_used; i++) {
        if ((*PA(c, i)).ns) {
            fill_pod_view(c, i, out, s);
            *iter = i + 1;
            return true;
        }
    }
    *iter = c->pods_used;
    return false;
}

static uint32_t node_find(const hr_cache *c, const char *name)
{
    uint32_t id = name ? hr_intern_find(&c->str, name, strlen(name)) : 0;
    return id ? map_get(&c->node_by_name, id) : NIL;
}

size_t hr_cache_node_pods(const hr_cache *c, const char *node, uint32_t *ids,
                          size_t cap)
{
    uint32_t i = node_find(c, node);
    if (i == NIL)
        return 0;
    size_t n = 0;
    for (uint32_t p = c->nodes[i].head; p != NIL; p = (*PA(c, p)).nnext) {
        if (n < cap)
            ids[n] = p;
        n++;
    }
    return n;
}

static void fill_node_view(const hr_cache *c, uint32_t i, hr_cnode_view *v)
{
    const cnode *n = &c->nodes[i];
    memset(v, 0, sizeof *v);
    v->name = hr_intern_str(&c->str, n->name);
    v->present = (n->flags & NF_PRESENT) != 0;
    v->node.allocatable = n->allocatable;
    v->node.known = v->present;
    v->node.disk_pressure = (n->flags & NF_DISK) != 0;
    v->node.pid_pressure = (n->flags & NF_PID) != 0;
    v->has_allocatable = (n->flags & NF_HAS_ALLOC) != 0;
    v->ready = (n->flags & NF_READY) != 0;
    v->windows = (n->flags & NF_WINDOWS) != 0;
    v->rv = n->rv;
    v->labels = (hr_labels){(const char *const *)n->labels, n->n_labels};
    v->n_pods = n->n_pods;
}

bool hr_cache_node_get(const hr_cache *c, const char *name,
                       hr_cnode_view *out)
{
    uint32_t i = node_find(c, name);
    if (i == NIL)
        return false;
    fill_node_view(c, i, out);
    return true;
}

bool hr_cache_node_next(const hr_cache *c, uint32_t *iter, hr_cnode_view *out)
{
    for (uint32_t i = *iter; i < c->nodes_used; i++) {
        if (c->nodes[i].name) {
            fill_node_view(c, i, out);
            *iter = i + 1;
            return true;
        }
    }
    *iter = c->nodes_used;
    return false;
}

static void fill_ns_view(const hr_cache *c, uint32_t i, hr_cns_view *v)
{
    const cns *n = &c->nss[i];
    v->name = hr_intern_str(&c->str, n->name);
    v->rv = n->rv;
    v->labels = (hr_labels){(const char *const *)n->labels, n->n_labels};
}

bool hr_cache_ns_get(const hr_cache *c, const char *name, hr_cns_view *out)
{
    uint32_t id = hr_intern_find(&c->str, name, strlen(name));
    uint32_t i = id ? map_get(&c->ns_by_name, id) : NIL;
    if (i == NIL)
        return false;
    fill_ns_view(c, i, out);
    return true;
}

bool hr_cache_ns_next(const hr_cache *c, uint32_t *iter, hr_cns_view *out)
{
    for (uint32_t i = *iter; i < c->nss_used; i++) {
        if (c->nss[i].name) {
            fill_ns_view(c, i, out);
            *iter = i + 1;
            return true;
        }
    }
    *iter = c->nss_used;
    return false;
}

hr_limit_bounds hr_cache_ns_bounds(const hr_cache *c, const char *ns)
{
    hr_limit_bounds b = HR_LIMIT_BOUNDS_NONE;
    uint32_t id = hr_intern_find(&c->str, ns, strlen(ns));
    if (!id)
        return b;
    for (uint32_t i = 0; i < c->n_lrs; i++)
        if (c->lrs[i].ns == id)
            hr_limit_bounds_merge(&b, &c->lrs[i].bounds);
    return b;
}

size_t hr_cache_limitrange_count(const hr_cache *c)
{
    return c->n_lrs;
}

const hr_config *hr_cache_config(const hr_cache *c, const char **invalid)
{
    if (invalid)
        *invalid = c->cfg_invalid[0] ? c->cfg_invalid : NULL;
    return &c->cfg;
}

bool hr_cache_config_object(const hr_cache *c, int64_t *gen_in_force,
                            const hr_kcfg_status **status)
{
    *gen_in_force = c->cfg.present ? c->cfg_generation : -1;
    *status = &c->cfgst;
    return c->cfg.present || c->cfg_invalid[0];
}

size_t hr_cache_quota_namespaces(const hr_cache *c, const char **out, size_t cap)
{
    size_t n = 0;
    for (uint32_t i = 0; i < c->n_quotas; i++) {
        if (!c->quotas[i].limits_cpu)
            continue;
        bool seen = false;
        for (uint32_t j = 0; j < i && !seen; j++)
            seen = c->quotas[j].limits_cpu && c->quotas[j].ns == c->quotas[i].ns;
        if (seen)
            continue;
        if (n < cap)
            out[n] = hr_intern_str(&c->str, c->quotas[i].ns);
        n++;
    }
    return n;
}

static int cmp_cstr(const void *a, const void *b)
{
    return strcmp(*(const char *const *)a, *(const char *const *)b);
}

hr_status hr_cache_managed_quota_ns(const hr_cache *c, const char *own_ns, const char ***out,
                                    size_t *n, hr_err *err)
{
    *out = NULL;
    *n = 0;
    size_t total = hr_cache_quota_namespaces(c, NULL, 0);
    if (total == 0)
        return HR_OK;
    const char **ns = malloc(total * sizeof *ns);
    if (!ns)
        return hr_err_set(err, HR_E_NOMEM, "cache: out of memory");
    hr_cache_quota_namespaces(c, ns, total);
    size_t kept = 0;
    for (size_t i = 0; i < total; i++) {
        hr_cns_view v;
        if (hr_cache_ns_get(c, ns[i], &v) &&
            hr_namespace_state(&c->cfg, ns[i], &v.labels, own_ns) == HR_NS_MANAGED)
            ns[kept++] = ns[i];
    }
    qsort(ns, kept, sizeof *ns, cmp_cstr);
    *out = ns;
    *n = kept;
    return HR_OK;
}

size_t hr_cache_dirty_count(const hr_cache *c)
{
    if (!c->all_dirty)
        return c->n_dirty;
    size_t n = 0;
    for (uint32_t i = 0; i < c->nodes_used; i++)
        n += c->nodes[i].name != 0;
    return n;
}

/* A placeholder node nobody points to any more. */
static void node_gc(hr_cache *c, uint32_t i)
{
    cnode *n = &c->nodes[i];
    if (!n->name || (n->flags & (NF_PRESENT | NF_DIRTY)) || n->n_pods)
        return;
    map_del(&c->node_by_name, n->name);
    hr_intern_unref(&c->str, n->name);
    free(n->labels);
    memset(n, 0, sizeof *n);
    c->node_free[c->node_free_n++] = i;
}

size_t hr_cache_drain(hr_cache *c, void (*fn)(void *ud, const char *node),
                      void *ud)
{
    size_t n = 0;
    if (c->all_dirty) {
        for (uint32_t i = 0; i < c->nodes_used; i++) {
            cnode *d = &c->nodes[i];
            if (!d->name)
                continue;
            if (fn)
                fn(ud, hr_intern_str(&c->str, d->name));
            d->flags &= (uint8_t)~NF_DIRTY;
            n++;
        }
    } else {
        for (uint32_t k = 0; k < c->n_dirty; k++) {
            cnode *d = &c->nodes[c->dirty[k]];
            if (fn)
                fn(ud, hr_intern_str(&c->str, d->name));
            d->flags &= (uint8_t)~NF_DIRTY;
            n++;
        }
    }
    for (uint32_t k = 0; k < c->n_dirty; k++)
        node_gc(c, c->dirty[k]);
    if (c->all_dirty)
        for (uint32_t i = 0; i < c->nodes_used; i++)
            node_gc(c, i);
    c->n_dirty = 0;
    c->all_dirty = false;
    return n;
}

void hr_cache_get_stats(const hr_cache *c, hr_cache_stats *o)
{
    memset(o, 0, sizeof *o);
    o->pods = c->n_pods;
    for (uint32_t i = 0; i < c->nodes_used; i++) {
        if (!c->nodes[i].name)
            continue;
        if (c->nodes[i].flags & NF_PRESENT)
            o->nodes++;
        else
            o->node_placeholders++;
    }
    o->namespaces = c->ns_by_name.n;
    o->limitranges = c->n_lrs;
    o->quotas = c->n_quotas;
    o->strings = c->str.live;
    o->string_bytes = c->str.bytes;
    o->pod_bytes = (size_t)c->pods_cap * sizeof(cpod) +
                   (size_t)c->chunks_cap * sizeof(cpod *) +
                   (size_t)c->n_pbuckets * sizeof(uint32_t) + c->blob_bytes;
    size_t label_bytes = 0;
    for (uint32_t i = 0; i < c->nodes_used; i++)
        label_bytes += (size_t)c->nodes[i].n_labels * 2 * sizeof(char *);
    for (uint32_t i = 0; i < c->nss_used; i++)
        label_bytes += (size_t)c->nss[i].n_labels * 2 * sizeof(char *);
    o->bytes = sizeof *c + o->pod_bytes + o->string_bytes + label_bytes +
               (size_t)c->nodes_cap * (sizeof(cnode) + 4) +
               (size_t)c->nss_cap * (sizeof(cns) + 4) +
               (size_t)c->lrs_cap * sizeof(clr) + (size_t)c->quotas_cap * sizeof(cquota) +
               map_bytes(&c->ns_pods) +
               map_bytes(&c->node_by_name) + map_bytes(&c->ns_by_name) +
               (size_t)c->dirty_cap * 4 + c->enc_cap +
               hr_arena_bytes(&c->cfg_arena) + hr_arena_bytes(&c->cfgst_arena);
    memcpy(o->changes, c->changes, sizeof o->changes);
}
