/*
 * snapshot.h — a cluster read from a Kubernetes List dump.
 *
 * The input is what `kubectl get nodes,pods,namespaces,limitranges,
 * headroomconfigs -A -o json` (HR_DUMP_KUBECTL) prints: {"kind":"List","items":[...]} with Node, Pod, Namespace,
 * LimitRange items and optionally the HeadroomConfig "cluster". Typed lists
 * (PodList, NodeList, as the raw API returns them, items without a kind)
 * and a single object are accepted too. Other kinds are skipped. Without a
 * HeadroomConfig the config is hr_config_defaults(): dry-run (design §1).
 *
 * A Pod or a Node that cannot be decoded does not refuse the dump (design
 * §15): it is listed in `bad` with the decoder's message. The pod is kept
 * in `pods` too, as an undecodable pod (pod.undecodable, no containers) on
 * the node its spec.nodeName names, so that node's increases are held
 * (booking-unknown, design §6); a pod whose nodeName cannot be read
 * (node_unreadable) holds every node's (n_pods_nowhere). The node is left
 * out of `nodes`, so it is unknown: its pods get no write (node-unknown).
 * Any other object that does not decode (Namespace, LimitRange, the
 * HeadroomConfig) still refuses the whole dump: planning without its
 * labels or bounds could only show limits the cluster would not get.
 *
 * Everything decoded lives in the snapshot's arena; the JSON document and
 * the file buffer are freed before hr_snapshot_read returns. Memory is
 * bounded: the file size, the parser's memory and the decoded objects each
 * have a limit (hr_dump_limits), and hitting one is a clear error.
 */
#ifndef HR_PLAN_SNAPSHOT_H
#define HR_PLAN_SNAPSHOT_H

#include <stdbool.h>
#include <stddef.h>

#include "core/config.h"
#include "core/quota.h"
#include "kube/decode/decode.h"
#include "util/arena.h"
#include "util/err.h"

typedef struct hr_dump_limits {
    size_t max_bytes;       /* largest input accepted */
    size_t max_doc_bytes;   /* parser memory; 0: 4 x input + 64 MiB */
    size_t max_arena_bytes; /* decoded objects; 0: 2 x input + 64 MiB */
} hr_dump_limits;

/* 1 GiB of JSON: a 150k-pod cluster dumps to ~870 MB (notes). */
#define HR_DUMP_MAX_BYTES ((size_t)1 << 30)
#define HR_DUMP_LIMITS_DEFAULT ((hr_dump_limits){HR_DUMP_MAX_BYTES, 0, 0})

/* An object of the dump that could not be decoded. */
typedef struct hr_snapshot_bad {
    const char *kind; /* "pod", "node" */
    const char *ns;   /* "" for nodes */
    const char *name; /* "<items[N]>" when the object has none */
    const char *node; /* a pod's spec.nodeName; NULL: unbound or unreadable */
    bool node_unreadable;
    const char *msg; /* the decoder's one line, naming the field */
} hr_snapshot_bad;

typedef struct hr_snapshot {
    /* The API server is known not to resize pod-level resources (design
     * §2.13; read live): no node does then. A dump: its nodes' own
     * declarations decide. */
    bool no_pod_resize;

    hr_arena arena;  /* owns every object below */
    hr_config cfg;   /* the HeadroomConfig "cluster", or the defaults */
    hr_knode *nodes; /* sorted by name, unique */
    size_t n_nodes;
    hr_kpod *pods; /* sorted by namespace/name, unique */
    size_t n_pods;
    hr_knamespace *namespaces; /* sorted by name, unique */
    size_t n_namespaces;
    hr_klimitrange *limitranges; /* sorted by namespace */
    size_t n_limitranges;
    hr_kquota *quotas; /* ResourceQuotas, in dump order */
    size_t n_quotas;
    size_t n_ignored;     /* items of other kinds */
    hr_snapshot_bad *bad; /* in dump order */
    size_t n_bad;
    size_t n_pods_nowhere; /* undecodable pods whose nodeName cannot be read */
    int64_t now_unix;      /* the wall clock the startup grace is judged at
                              (design §2.12): hr_snapshot_parse's time */
} hr_snapshot;

/* Parse and decode buf[0..len). buf must be followed by at least
 * YYJSON_PADDING_SIZE zero bytes and is modified (parsed in place). `source`
 * names the input in messages ("dump.json", "<stdin>"). On error the
 * snapshot is empty (nothing to free, freeing is harmless). */
HR_MUST_CHECK hr_status hr_snapshot_parse(hr_snapshot *s, char *buf, size_t len,
                                          const hr_dump_limits *lim, const char *source,
                                          hr_err *err);

/* Read path ("-" for stdin) and parse it. */
HR_MUST_CHECK hr_status hr_snapshot_read(hr_snapshot *s, const char *path,
                                         const hr_dump_limits *lim, hr_err *err);

void hr_snapshot_free(hr_snapshot *s);

/* The command that makes a complete dump. */
#define HR_DUMP_KUBECTL \
    "kubectl get nodes,pods,namespaces,limitranges,resourcequotas,headroomconfigs -A -o json"

/* A kind the planner reads that the dump has no object of, and what that
 * does to the plan (for warnings: a partial dump plans quietly wrong). */
typedef struct hr_snapshot_gap {
    const char *kind;   /* "Namespace", "LimitRange", "HeadroomConfig" */
    const char *effect; /* one sentence */
} hr_snapshot_gap;

/* The gaps of s, at most 3, into out; returns how many. */
size_t hr_snapshot_gaps(const hr_snapshot *s, hr_snapshot_gap out[3]);

/* The same from counts of the dump's objects (explain -f, which reads a
 * dump into the cache, not into a snapshot). */
size_t hr_dump_gaps(size_t n_namespaces, size_t n_pods, size_t n_limitranges, bool has_config,
                    hr_snapshot_gap out[3]);

const hr_knode *hr_snapshot_node(const hr_snapshot *s, const char *name);
const hr_kpod *hr_snapshot_pod(const hr_snapshot *s, const char *ns, const char *name);
const hr_knamespace *hr_snapshot_namespace(const hr_snapshot *s, const char *name);
/* LimitRange bounds of a namespace, folded over all its LimitRanges. */
hr_limit_bounds hr_snapshot_bounds(const hr_snapshot *s, const char *ns);

/* The namespace's limits.cpu ResourceQuota with the least room
 * (hr_ns_quota_fold) in out's on, hard and used; on false: none. */
void hr_snapshot_quota(const hr_snapshot *s, const char *ns, hr_ns_quota *out);

#endif
