/*
 * cache_int.h — the insides of the compact cache. PRIVATE to src/cache/:
 * no file outside this folder includes it (cache.h is the API; a test that
 * wants a figure asks hr_cache_get_stats).
 *
 * Why a private header: the cache is split by concern (cache.c the API,
 * store.c the machinery every kind shares, one file per kind, feed.c the
 * change feed, varint.c the pod blob codec), and those files must agree on
 * the records and on struct hr_cache. Declaring the types here, once,
 * keeps cache.h the contract other layers compile against, unchanged by
 * how the inside is cut. It declares no function (see the end).
 *
 * Layout, chosen for bytes per pod:
 *  - pods live in fixed chunks of fixed 88-byte records (asserted below),
 *    addressed by index (32-bit links instead of 64-bit pointers); free
 *    slots are chained;
 *  - a pod's variable part (name, containers, rare optional fields) is one
 *    malloc'd blob of varints (varint.h): requests like 250m or 512Mi take
 *    2–5 bytes instead of 8, and equality of two blobs is one memcmp —
 *    which is how an update that changed nothing we keep is recognised (no
 *    enqueue);
 *  - strings that repeat are interned (intern.h) and named by 32-bit ids;
 *  - the pods of a node form a doubly-linked list through the records, so
 *    moving a pod between nodes is O(1) and costs no per-node array;
 *  - (namespace, name) → pod is a chained hash through the records.
 * Nodes and namespaces are few (thousands): plain records in a slot table
 * found through a small open-addressing map keyed by the interned name id.
 * LimitRanges, ResourceQuotas and VerticalPodAutoscalers are fewer still
 * (tens to hundreds): rows of a small table, found by a scan.
 *
 * Every kind is a *store* (cstore below): whatever its records look like,
 * it can find an object by (namespace, name), tell the relist mark of a
 * slot, and remove a slot. store.c writes delete, touch and the relist
 * sweep once over those operations; the kind files write only what is
 * particular to their kind (what is kept, what a change dirties).
 *
 * The functions of each file are declared in the header of the same name
 * (store.h, pods.h, ...), as private as this one; all of them expect the
 * cache lock held. Only cache.c, where every entry point of cache.h is,
 * takes it, so the locking contract cache.h documents is kept in one
 * place.
 */
#ifndef HR_CACHE_CACHE_INT_H
#define HR_CACHE_CACHE_INT_H

#include <pthread.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "cache/cache.h"
#include "cache/intern.h"
#include "cache/u32map.h"
#include "cache/varint.h"

#define NIL UINT32_MAX

/* ---------------------------------------------------------- pod records */

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
    /* The pod could not be decoded (design §15): no containers, and its
     * node's booking is unknown. With PF_BOUND set but no node, its
     * spec.nodeName could not be read either: it may be on any node. */
    PF_UNDECODABLE = 1 << 15,
};

typedef struct cpod {
    uint8_t *blob; /* name, containers, optional fields (varint.h) */
    uint64_t rv;
    uint8_t uid[16];
    uint32_t hash;                 /* of (ns, name), kept for rehashing */
    uint32_t hnext;                /* hash chain; free-list link when the slot is free */
    uint32_t nprev, nnext;         /* the node's pod list */
    uint32_t ns;                   /* interned; 0 marks a free slot */
    uint32_t node;                 /* node slot, NIL when unbound */
    uint32_t okind, ogroup, oname; /* interned owner reference */
    uint32_t mark;                 /* relist epoch last seen */
    uint32_t blob_len;
    uint16_t flags;
    uint16_t n_ctr;
    uint32_t status_hash; /* of our status annotation (kube/write/status_note.h) */
    uint32_t status_mark; /* its target and dryRun, same header */
} cpod;

_Static_assert(sizeof(cpod) == 88, "the pod record is the budget's core");

#define CHUNK_SHIFT 12
#define CHUNK_PODS (1u << CHUNK_SHIFT)
#define PA(c, i) (&(c)->chunks[(i) >> CHUNK_SHIFT][(i) & (CHUNK_PODS - 1)])

/* ---------------------------------------------------------- slot tables */

/* Records found by an interned name (nodes, namespaces): each record's
 * first field is its uint32_t name id, 0 marking a free slot; released
 * slots are reused before the array grows. The table does not know the
 * record type: callers pass its size and cast recs. */
typedef struct cslots {
    void *recs;         /* cap records */
    uint32_t cap, used; /* slots below used have been handed out */
    uint32_t *free;     /* released slots (room for cap) */
    uint32_t free_n;
    u32map by_name; /* name id -> slot */
} cslots;

enum {
    NF_PRESENT = 1 << 0,
    NF_HAS_ALLOC = 1 << 1,
    NF_READY = 1 << 2,
    NF_DISK = 1 << 3,
    NF_PID = 1 << 4,
    NF_WINDOWS = 1 << 5,
    NF_DIRTY = 1 << 6,
    NF_UNDECODABLE = 1 << 7, /* the Node object exists but could not be
                                decoded: unknown, like a placeholder */
    NF_POD_RESIZE = 1 << 8,  /* declares HR_FEATURE_POD_RESIZE (design §2.13) */
};

typedef struct cnode {
    uint32_t name; /* interned; 0 marks a free slot */
    uint32_t head; /* first pod, NIL */
    uint32_t n_pods;
    uint32_t mark;
    uint32_t n_labels; /* pairs */
    uint16_t flags;
    const char **labels; /* kv pointers to interned strings */
    uint64_t rv;
    int64_t allocatable;
    uint64_t version; /* the change clock when the node was last marked (feed.h) */
} cnode;

typedef struct cns {
    uint32_t name; /* interned; 0 marks a free slot */
    uint32_t mark;
    uint32_t n_labels;
    uint32_t weight; /* TenantFair weight (hr_tenant_weight), parsed at put;
                        the top bit: the label was invalid (read as 1) */
    const char **labels;
    uint64_t rv;
} cns;

/* ---------------------------------------------------------- row tables */

/* A namespaced object kept by name in a small table (LimitRanges,
 * ResourceQuotas): the header, then the kind's payload right after it. */
typedef struct crow {
    uint32_t ns;   /* interned */
    uint32_t mark; /* relist epoch last seen */
    char *name;
    uint64_t rv;
} crow;

typedef struct crows {
    uint8_t *rows; /* n rows of `size` bytes */
    uint32_t n, cap;
    size_t size;      /* of one row, header included */
    const char *what; /* "limitrange": the kind in messages */
    bool dirties_all; /* a change (add, update, delete) dirties every node */
    /* Gives back what a payload holds (interned ids), NULL: nothing. Called
     * for a payload that leaves the table, or is not taken in. */
    void (*release)(hr_cache *c, const void *payload);
} crows;

typedef struct clr {
    crow h;
    hr_limit_bounds bounds;
} clr;

/* A quota's limits.cpu (the payload compared byte for byte: no padding). */
typedef struct cquota_cpu {
    int64_t hard; /* spec.hard limits.cpu; HR_NONE: the quota does not bound it */
    int64_t used; /* status.used limits.cpu; HR_NONE: not counted yet */
} cquota_cpu;

typedef struct cquota {
    crow h;
    cquota_cpu cpu;
} cquota;

/* A VPA (design §4, foreign-writer): interned strings, compared as bytes
 * (no padding). */
typedef struct cvpa_spec {
    uint32_t writer;      /* "VerticalPodAutoscaler NS/NAME" */
    uint32_t target_name; /* spec.targetRef.name, 0: none */
    uint32_t exceptions;  /* hr_vpa.exceptions, 0: none */
    uint8_t target;       /* hr_vpa_target */
    uint8_t writes;
    uint8_t dflt_limits;
    uint8_t pad_; /* always 0 */
} cvpa_spec;

typedef struct cvpa {
    crow h;
    cvpa_spec v;
} cvpa;

/* ---------------------------------------------------------- the cache */

/* The group index (groups.h): one record per group key with members. */
typedef struct cgroup {
    uint32_t key;    /* interned group key id; 0: a free slot */
    uint32_t n, cap; /* members */
    uint32_t *pods;  /* their pod slots */
} cgroup;

typedef struct cgroups {
    cgroup *recs;
    uint32_t cap, used, n; /* n: groups with members */
    uint32_t *free;        /* released slots */
    uint32_t free_n;
    u32map by_key; /* key id -> slot */
} cgroups;

struct hr_cache {
    pthread_mutex_t mu;
    hr_intern str;

    cpod **chunks; /* pods in fixed chunks: growth never copies or doubles */
    uint32_t n_chunks, chunks_cap;
    uint32_t pods_cap, pods_used, n_pods, pod_free;
    uint32_t *pbuckets;
    uint32_t n_pbuckets;
    size_t blob_bytes;
    u32map ns_pods;          /* ns id -> number of cached pods in it */
    cgroups groups;          /* group key id -> member pods (groups.h) */
    uint32_t n_pods_nowhere; /* undecodable pods whose node cannot be read */

    cslots nodes; /* of cnode */
    uint32_t *dirty;
    uint32_t n_dirty, dirty_cap;
    bool all_dirty;
    bool server_pod_resize; /* hr_cache_set_server_pod_resize */
    uint64_t clock;         /* the change clock: ticks at every mark (feed.h) */
    uint64_t world_version; /* its value when every node was marked at once */

    cslots nss; /* of cns */

    crows lrs;    /* of clr */
    crows quotas; /* of cquota */
    crows vpas;   /* of cvpa */

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
    uint64_t removals; /* objects of any kind deleted (hr_cache_removals) */

    hr_cenc enc; /* scratch for encoding a blob */

    hr_cache_observer obs;
    void *obs_ud;
    void (*kick)(void *ud); /* hr_cache_set_kick; NULL: none */
    void *kick_ud;
};

static inline cnode *node_at(const hr_cache *c, uint32_t i)
{
    return &((cnode *)c->nodes.recs)[i];
}

static inline cns *ns_at(const hr_cache *c, uint32_t i)
{
    return &((cns *)c->nss.recs)[i];
}

static inline crow *row_at(const crows *t, uint32_t i)
{
    return (crow *)(void *)(t->rows + (size_t)i * t->size);
}

/* ---------------------------------------------------------- stores */

/* What store.c needs of a kind to delete, touch and sweep its objects; each
 * kind's file defines one (declared in its header). */
typedef struct cstore {
    /* The slot of (ns, name) — ns is "" for cluster-scoped kinds — or NIL.
     * Never creates anything. */
    uint32_t (*find)(const hr_cache *c, hr_ckind k, const char *ns, const char *name);
    /* One past the last slot a sweep visits (read again after a remove). */
    uint32_t (*end)(const hr_cache *c, hr_ckind k);
    /* The relist mark of the object in slot i; NULL when the slot holds no
     * object (a free slot, a node known only from its pods, no config). */
    uint32_t *(*mark)(hr_cache *c, hr_ckind k, uint32_t i);
    /* Delete the object in slot i and report it. True when another object
     * now sits in slot i (a row table moves its last row there). */
    bool (*remove)(hr_cache *c, hr_ckind k, uint32_t i);
} cstore;

#endif
