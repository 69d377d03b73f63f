/*
 * cache.h — the compact cache of the cluster: pods, nodes, namespaces,
 * LimitRanges, ResourceQuotas, VerticalPodAutoscalers and the HeadroomConfig, reduced to what the policy,
 * eligibility, gates and `explain` need (design §2–§9). Never whole objects.
 *
 * Why so small: a cache of whole Pod objects costs 7–40 KB per pod; the
 * budget here is 256 bytes (design §16). A pod is a fixed 88-byte record
 * (ids of interned strings, flags, resourceVersion, uid, index links; the
 * size is asserted in cache_int.h, the cache's private header) plus
 * one varint-packed blob holding its name and its containers' requests and
 * limits; strings repeated across pods (namespace, node, container, owner
 * names, label keys and values) are interned once.
 *
 * What it offers the controller:
 *  - O(1) lookup of a pod by namespace/name, and the pods of a node (a
 *    per-node intrusive list);
 *  - the resourceVersion of every object (never act on a cache older than
 *    our own write, design §5);
 *  - a change feed: the set of node names whose plan may have changed
 *    (design §5's enqueue rules), drained by the controller;
 *  - relist by difference: between relist_begin and relist_end every put
 *    marks its object seen; at the end, what was not seen is deleted and
 *    reported. Objects that did not change produce no change, so a relist
 *    never reports duplicates.
 *
 * Terminal pods (Succeeded/Failed) leave the cache: they book nothing.
 * A pod that cannot be decoded is kept all the same, as an undecodable
 * record (pod.undecodable: its name, uid and node, no containers), so its
 * node's booking reads as unknown instead of silently lower (design §6).
 *
 * Thread-safety: one mutex. Writers (put/del/relist) take it themselves;
 * readers (get/foreach/drain) must be called between hr_cache_lock and
 * hr_cache_unlock, and what they return is valid only until the unlock.
 */
#ifndef HR_CACHE_CACHE_H
#define HR_CACHE_CACHE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "core/config.h"
#include "core/gates.h"
#include "core/pod.h"
#include "core/quota.h"
#include "core/selector.h"
#include "core/vpa.h"
#include "kube/decode/decode.h"
#include "util/arena.h"
#include "util/err.h"

typedef struct hr_cache hr_cache;

typedef enum hr_ckind {
    HR_CK_POD = 0,
    HR_CK_NODE,
    HR_CK_NAMESPACE,
    HR_CK_LIMITRANGE,
    HR_CK_CONFIG,
    HR_CK_QUOTA,
    HR_CK_VPA, /* VerticalPodAutoscalers: optional, only while the CRD is served */
    HR_CK_COUNT_
} hr_ckind;

const char *hr_ckind_str(hr_ckind k); /* "pods", "nodes", ... */

typedef enum hr_cchange {
    HR_CC_ADDED = 0,
    HR_CC_UPDATED, /* something the cache keeps changed */
    HR_CC_DELETED, /* deleted, turned terminal, or vanished in a relist */
} hr_cchange;

/* Called with the cache lock held, for every change the cache keeps (not
 * for updates that only move the resourceVersion). Must not call back into
 * the cache. */
typedef void (*hr_cache_observer)(void *ud, hr_ckind kind, hr_cchange what, const char *ns,
                                  const char *name);

/* hr_resize_state, the kubelet's verdict on a pending resize (HR_RS_NONE,
 * HR_RS_DEFERRED, HR_RS_INFEASIBLE), is the decoder's (kube/decode/pod.h). */

HR_MUST_CHECK hr_status hr_cache_new(hr_cache **out, hr_err *err);
void hr_cache_free(hr_cache *c);

void hr_cache_set_observer(hr_cache *c, hr_cache_observer fn, void *ud);

/* The readers' doorbell: fn(ud) is called with the cache lock held after
 * every change the observer sees and whenever a node joins the change
 * feed, so a reader that sleeps until something changes (the controller's
 * feeder and status writer) need not poll. fn must only take a leaf lock
 * (hr_waker_kick) and never call back into the cache. NULL: none. */
void hr_cache_set_kick(hr_cache *c, void (*fn)(void *ud), void *ud);

/* Does the API server accept a resize of pod-level resources (design
 * §2.13, hr_kversion_pod_resize)? Set once, at start, before the watches;
 * false until then: no node view says pod_resize. */
void hr_cache_set_server_pod_resize(hr_cache *c, bool on);
/* Rings the doorbell with nothing changed: a watch became synced (cache/informers.c), which
 * a reader waiting for the sync must hear of. Takes the lock (not held by the caller). */
void hr_cache_ring(hr_cache *c);

void hr_cache_lock(hr_cache *c);
void hr_cache_unlock(hr_cache *c);

/* ------------------------------------------------------------ writers */

/* Extra pod status hr_decode_pod leaves out (hr_decode_pod_status reads
 * it; cache/sink.c hands it over). */
typedef struct hr_cpod_status {
    uint8_t resize;       /* hr_resize_state */
    bool resizing;        /* condition PodResizeInProgress present */
    uint32_t status_hash; /* hr_status_note_hash of our annotation, 0: none */
    uint32_t status_mark; /* hr_status_note_mark of it: its target, dryRun */
} hr_cpod_status;

HR_MUST_CHECK hr_status hr_cache_put_pod(hr_cache *c, const hr_kpod *p, const hr_cpod_status *s,
                                         hr_err *err);
HR_MUST_CHECK hr_status hr_cache_put_node(hr_cache *c, const hr_knode *n, hr_err *err);
HR_MUST_CHECK hr_status hr_cache_put_namespace(hr_cache *c, const hr_knamespace *n, hr_err *err);
HR_MUST_CHECK hr_status hr_cache_put_limitrange(hr_cache *c, const hr_klimitrange *l, hr_err *err);
/* Takes ownership of *a (the arena k's pointers live in) and leaves *a
 * empty. A config not named "cluster" is ignored. generation is
 * metadata.generation: an update with the generation already in force
 * (a status write) changes only the resourceVersion, so the controller's
 * own status updates do not make every node dirty. */
HR_MUST_CHECK hr_status hr_cache_put_config(hr_cache *c, const hr_kconfig *k, int64_t generation,
                                            hr_arena *a, hr_err *err);
/* The config object exists but cannot be used: keep the last good one and
 * remember why (design §11: Ready=False with the reason). */
void hr_cache_config_invalid(hr_cache *c, const char *msg);
/* The status the config object carries (copied), valid or not: what the
 * status writer compares its own view against. */
HR_MUST_CHECK hr_status hr_cache_put_config_status(hr_cache *c, const hr_kcfg_status *s,
                                                   hr_err *err);
/* Quotas are kept as their limits.cpu: hard and used. */
HR_MUST_CHECK hr_status hr_cache_put_quota(hr_cache *c, const hr_kquota *q, hr_err *err);
/* VPAs are kept as what design §4 (foreign-writer) needs: target, whether
 * they write, which containers' CPU limits. */
HR_MUST_CHECK hr_status hr_cache_put_vpa(hr_cache *c, const hr_kvpa *v, hr_err *err);

/* A Node object that cannot be decoded (design §6, §15): whatever was
 * cached of it is dropped and the node is unknown (present false,
 * undecodable true: no write in either direction) until it decodes or is
 * deleted. rv is its metadata.resourceVersion ("" when unreadable). */
HR_MUST_CHECK hr_status hr_cache_put_node_undecodable(hr_cache *c, const char *name, const char *rv,
                                                      hr_err *err);

/* Deletes; a missing object is not an error. ns is "" for cluster-scoped
 * kinds. */
void hr_cache_del(hr_cache *c, hr_ckind kind, const char *ns, const char *name);

/* An object seen in a relist that could not be decoded: keep what the
 * cache has for it instead of deleting it at relist_end. */
void hr_cache_touch(hr_cache *c, hr_ckind kind, const char *ns, const char *name);

void hr_cache_relist_begin(hr_cache *c, hr_ckind kind);
/* complete false: the relist was abandoned; nothing is swept. Returns the
 * number of objects deleted. */
size_t hr_cache_relist_end(hr_cache *c, hr_ckind kind, bool complete);

/* ---------------------------------------------- readers (lock held) */

/* One pod, with containers decoded into caller-provided space. */
typedef struct hr_cpod_view {
    uint32_t id; /* stable while the pod stays cached */
    const char *ns, *name;
    const char *node;       /* NULL when not bound */
    uint64_t rv;            /* metadata.resourceVersion (0 if not numeric) */
    uint8_t uid[16];        /* all zero when not a UUID */
    const char *owner_kind; /* NULL: no owner */
    const char *owner_group, *owner_name;
    bool owner_controller;
    const char *owner_template_hash; /* the pod-template-hash label when the owner is
                                        a ReplicaSet named "<deployment>-<it>", NULL
                                        otherwise (design §4, hr_vpa_owner) */
    bool deleting;
    uint8_t resize; /* hr_resize_state */
    bool resizing;
    uint32_t status_hash; /* fingerprint of kube-headroom.dev/status, 0: none */
    uint32_t status_mark; /* its target and dryRun (kube/write/status_note.h) */
    hr_pod pod;           /* context fields neutral (hr_pod_init) */
    const char *const *ctr_names;
} hr_cpod_view;

/* Room for a view's containers. Pods with more containers than
 * HR_CPOD_MAX_CTR cannot exist: the decoder refuses more than 4096. */
#define HR_CPOD_MAX_CTR 4096
typedef struct hr_cpod_scratch {
    hr_container ctr[HR_CPOD_MAX_CTR];
    const char *names[HR_CPOD_MAX_CTR];
} hr_cpod_scratch;

/* false when absent. */
bool hr_cache_pod_get(const hr_cache *c, const char *ns, const char *name, hr_cpod_view *out,
                      hr_cpod_scratch *s);
/* Only the pod's uid (no decoding): is ns/name cached, and as which pod?
 * false when absent. */
bool hr_cache_pod_uid(const hr_cache *c, const char *ns, const char *name, uint8_t uid[16]);
bool hr_cache_pod_at(const hr_cache *c, uint32_t id, hr_cpod_view *out, hr_cpod_scratch *s);

/* Ids of the pods in the group of key (design §2.10, hr_pod.group), any
 * order. Returns how many there are, writing at most cap. */
size_t hr_cache_group_pods(const hr_cache *c, const char *key, uint32_t *ids, size_t cap);
/* Groups with at least one cached member: the index's size
 * (headroom_groups). */
size_t hr_cache_n_groups(const hr_cache *c);

/* Ids of the pods bound to node (any order). Returns how many there are,
 * writing at most cap. */
size_t hr_cache_node_pods(const hr_cache *c, const char *node, uint32_t *ids, size_t cap);

/* Iterate over all pods: start with *iter = 0; false at the end. */
bool hr_cache_pod_next(const hr_cache *c, uint32_t *iter, hr_cpod_view *out, hr_cpod_scratch *s);

typedef struct hr_cnode_view {
    const char *name;
    bool present;     /* false: only known from its pods, or undecodable */
    bool undecodable; /* the Node object exists but could not be decoded */
    hr_node node;     /* known = present */
    bool has_allocatable, ready, windows;
    bool pod_resize; /* the node declares HR_FEATURE_POD_RESIZE and the API
                        server resizes pod-level resources
                        (hr_cache_set_server_pod_resize, design §2.13) */
    uint64_t rv;
    hr_labels labels;
    uint32_t n_pods;
} hr_cnode_view;

bool hr_cache_node_get(const hr_cache *c, const char *name, hr_cnode_view *out);
/* Iterate over nodes, placeholders included. */
bool hr_cache_node_next(const hr_cache *c, uint32_t *iter, hr_cnode_view *out);

/* Undecodable pods whose spec.nodeName cannot be read either (a pod is put
 * with pod.undecodable and node_unreadable, kube/decode/pod.h): each may
 * be on any node, so while there is one every node's booking is unknown
 * (design §6). The first one and the last one make every node dirty. */
uint32_t hr_cache_pods_nowhere(const hr_cache *c);

/* Node name's version: it changes whenever anything the node's plan reads
 * changes in the cache (the node, its pods, their namespaces, or what
 * makes every node dirty: a config, a LimitRange…); a node the cache
 * does not hold has the version of "every node", which moves on as soon
 * as it appears. Equal versions: the node plans as it did. */
uint64_t hr_cache_node_version(const hr_cache *c, const char *name);

/* How many objects (of any kind) have left the cache since it was made:
 * deleted, or not seen again by a relist. Unchanged means nothing a
 * reader keeps per pod or node can have gone stale by a deletion (the
 * executor's sweeps, controller.c). Lock held. */
uint64_t hr_cache_removals(const hr_cache *c);

typedef struct hr_cns_view {
    const char *name;
    uint64_t rv;
    hr_labels labels;
    uint32_t weight;     /* its kube-headroom.dev/weight label, parsed once
                            (hr_tenant_weight): >= 1 */
    bool weight_invalid; /* the label is there but not a weight: read as 1 */
} hr_cns_view;

bool hr_cache_ns_get(const hr_cache *c, const char *name, hr_cns_view *out);
bool hr_cache_ns_next(const hr_cache *c, uint32_t *iter, hr_cns_view *out);

/* LimitRange bounds of a namespace, folded over its LimitRanges. */
hr_limit_bounds hr_cache_ns_bounds(const hr_cache *c, const char *ns);
size_t hr_cache_limitrange_count(const hr_cache *c);

/* The config in force (defaults with dry_run when none); *invalid (may be
 * NULL) receives the reason the last seen config was refused, or NULL. */
const hr_config *hr_cache_config(const hr_cache *c, const char **invalid);

/* Per pool of the config in force, how many Node objects it applies to
 * (counts[i] for pools[i], HR_POOLS_MAX slots); the status's nodePools. */
void hr_cache_pool_counts(const hr_cache *c, int64_t *counts);

/* Does the HeadroomConfig object exist (valid or not)? *gen_in_force is the
 * generation of the config in force (-1: defaults), *status what the object's
 * status says (numbers -1 when absent). */
bool hr_cache_config_object(const hr_cache *c, int64_t *gen_in_force,
                            const hr_kcfg_status **status);

/* The namespace's ResourceQuota on limits.cpu with the least room (hard −
 * used, hr_ns_quota_fold) in out's on, hard and used (the rest 0); on
 * false: none bounds limits.cpu there (the quota cap, design §2.3). */
void hr_cache_ns_quota(const hr_cache *c, const char *ns, hr_ns_quota *out);

/* The writer name ("VerticalPodAutoscaler NS/NAME") of the first cached VPA
 * of the pod's namespace that writes the CPU limit of a container of it the
 * policy manages (hr_vpa_writes_pod, design §4), NULL: none. Valid while
 * the lock is held. */
const char *hr_cache_vpa_writer(const hr_cache *c, const hr_cpod_view *v);
/* The same for a pod not cached (the webhook's, being created): the first
 * cached VPA of namespace ns that writes the CPU limit of a container of
 * pod (names[i]: container i's name) whose direct owner is owner. */
const char *hr_cache_vpa_writer_of(const hr_cache *c, const char *ns, const hr_vpa_owner *owner,
                                   const hr_pod *pod, const char *const *names);
size_t hr_cache_vpa_count(const hr_cache *c);

/* Namespaces with a ResourceQuota on limits.cpu, each once, in no order.
 * Returns how many there are, writing at most cap. */
size_t hr_cache_quota_namespaces(const hr_cache *c, const char **out, size_t cap);

/* Of those, the ones the config in force manages (own_ns, the controller's
 * namespace, never is), sorted: what the HeadroomConfig status and
 * `preflight` name. *out is malloc'ed (free it; NULL when none), its strings
 * valid while the lock is held. */
HR_MUST_CHECK hr_status hr_cache_managed_quota_ns(const hr_cache *c, const char *own_ns,
                                                  const char ***out, size_t *n, hr_err *err);

/* The change feed: calls fn once per dirty node and clears the set. All
 * nodes count as dirty after a LimitRange or config change. Returns the
 * number of nodes reported. A reader like the others (lock held): it also
 * frees the placeholder nodes whose last pod left, which the watch threads'
 * puts would otherwise race with. fn runs with the lock held and must not
 * call back into the cache; node is valid only during the call. */
size_t hr_cache_drain(hr_cache *c, void (*fn)(void *ud, const char *node), void *ud);
size_t hr_cache_dirty_count(const hr_cache *c);

typedef struct hr_cache_stats {
    size_t pods, nodes, node_placeholders, namespaces, limitranges, quotas, vpas;
    size_t strings;                 /* distinct interned strings */
    size_t bytes;                   /* memory the cache holds, by its own accounting */
    size_t pod_bytes;               /* of which pod records and blobs (with malloc overhead) */
    size_t string_bytes;            /* of which the intern table */
    uint64_t changes[HR_CK_COUNT_]; /* changes reported, per kind */
} hr_cache_stats;

void hr_cache_get_stats(const hr_cache *c, hr_cache_stats *out);

#endif
