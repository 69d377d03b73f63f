/*
 * snapshot.c — read a List dump into an hr_snapshot.
 *
 * Two passes over the items: the first counts each kind so every array is
 * allocated once in the arena at its final size; the second decodes. The
 * arrays are then sorted, which makes every later lookup a binary search
 * and every output order deterministic whatever order kubectl printed.
 *
 * yyjson parses in place with numbers kept as raw text, so a quantity
 * written as a bare number ("cpu": 1e999) reaches the quantity parser and
 * gets an error naming its field. The parser's allocations go through a
 * counting allocator: hostile input ("[0,0,0,...]" needs 16 bytes of parse
 * tree per 2 bytes of input) meets a limit instead of the OOM killer.
 */
#include "plan/snapshot.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "util/file.h"

typedef struct counting_alc {
    size_t used;
    size_t limit;
} counting_alc;

/* Each block carries its size in front so free and realloc can account. */
#define ALC_HDR 16

static void *calc_malloc(void *ctx, size_t size)
{
    counting_alc *c = ctx;
    if (size > c->limit || c->used > c->limit - size)
        return NULL;
    unsigned char *p = malloc(size + ALC_HDR);
    if (!p)
        return NULL;
    memcpy(p, &size, sizeof size);
    c->used += size;
    return p + ALC_HDR;
}

static void calc_free(void *ctx, void *ptr)
{
    counting_alc *c = ctx;
    if (!ptr)
        return;
    unsigned char *p = (unsigned char *)ptr - ALC_HDR;
    size_t size;
    memcpy(&size, p, sizeof size);
    c->used -= size;
    free(p);
}

static void *calc_realloc(void *ctx, void *ptr, size_t old_size, size_t size)
{
    counting_alc *c = ctx;
    if (!ptr)
        return calc_malloc(ctx, size);
    unsigned char *p = (unsigned char *)ptr - ALC_HDR;
    size_t old;
    memcpy(&old, p, sizeof old);
    if (size > old && (size - old > c->limit || c->used > c->limit - (size - old)))
        return NULL;
    unsigned char *np = realloc(p, size + ALC_HDR);
    if (!np)
        return NULL;
    memcpy(np, &size, sizeof size);
    c->used = c->used - old + size;
    return np + ALC_HDR;
}

static int cmp_str(const char *a, const char *b)
{
    return strcmp(a, b);
}

static int cmp_node(const void *x, const void *y)
{
    const hr_knode *a = x, *b = y;
    return cmp_str(a->meta.name, b->meta.name);
}

static int cmp_pod(const void *x, const void *y)
{
    const hr_kpod *a = x, *b = y;
    int c = cmp_str(a->meta.ns, b->meta.ns);
    return c ? c : cmp_str(a->meta.name, b->meta.name);
}

static int cmp_ns(const void *x, const void *y)
{
    const hr_knamespace *a = x, *b = y;
    return cmp_str(a->meta.name, b->meta.name);
}

static int cmp_lr(const void *x, const void *y)
{
    const hr_klimitrange *a = x, *b = y;
    int c = cmp_str(a->meta.ns, b->meta.ns);
    return c ? c : cmp_str(a->meta.name, b->meta.name);
}

typedef enum item_kind {
    K_OTHER = 0,
    K_POD,
    K_NODE,
    K_NAMESPACE,
    K_LIMITRANGE,
    K_CONFIG,
    K_QUOTA,
} item_kind;

static item_kind kind_of(const char *k, size_t len)
{
    struct {
        const char *name;
        item_kind kind;
    } map[] = {
        {"Pod", K_POD},
        {"Node", K_NODE},
        {"Namespace", K_NAMESPACE},
        {"LimitRange", K_LIMITRANGE},
        {"HeadroomConfig", K_CONFIG},
        {"ResourceQuota", K_QUOTA},
    };
    for (size_t i = 0; i < sizeof map / sizeof map[0]; i++)
        if (strlen(map[i].name) == len && memcmp(map[i].name, k, len) == 0)
            return map[i].kind;
    return K_OTHER;
}

/* The kind of one item; typed lists ("PodList") leave it out of items. */
static hr_status item_kind_of(yyjson_val *item, size_t idx, item_kind list_kind, item_kind *out,
                              hr_err *err)
{
    if (!yyjson_is_obj(item))
        return hr_err_set(err, HR_E_INPUT, "items[%zu]: expected an object, got %s", idx,
                          yyjson_is_arr(item)    ? "an array"
                          : yyjson_is_str(item)  ? "a string"
                          : yyjson_is_bool(item) ? "a boolean"
                          : yyjson_is_null(item) ? "null"
                                                 : "a number");
    yyjson_val *k = yyjson_obj_get(item, "kind");
    if (!k || yyjson_is_null(k)) {
        if (list_kind == K_OTHER)
            return hr_err_set(err, HR_E_INPUT, "items[%zu]: kind: missing", idx);
        *out = list_kind;
        return HR_OK;
    }
    if (!yyjson_is_str(k))
        return hr_err_set(err, HR_E_INPUT, "items[%zu]: kind: expected a string", idx);
    *out = kind_of(yyjson_get_str(k), yyjson_get_len(k));
    return HR_OK;
}

static bool is_cluster_config(yyjson_val *item)
{
    yyjson_val *meta = yyjson_obj_get(item, "metadata");
    return yyjson_is_obj(meta) && yyjson_equals_str(yyjson_obj_get(meta, "name"), "cluster");
}

void hr_snapshot_free(hr_snapshot *s)
{
    hr_arena_free(&s->arena);
    memset(s, 0, sizeof *s);
    hr_arena_init(&s->arena, 0);
    hr_config_defaults(&s->cfg);
}

static hr_status duplicate(hr_err *err, const char *kind, const char *ns, const char *name)
{
    char qn[72], qname[72];
    hr_err_quote(qn, sizeof qn, ns, strlen(ns), 63);
    hr_err_quote(qname, sizeof qname, name, strlen(name), 63);
    return hr_err_set(err, HR_E_INPUT, "%s %s%s%s: appears twice in the dump", kind, qn,
                      ns[0] ? "/" : "", qname);
}

/* Sort the arrays and refuse duplicates: two objects with one name cannot
 * come from one cluster, and would make lookups ambiguous. */
static hr_status sort_and_check(hr_snapshot *s, hr_err *err)
{
    if (s->n_nodes)
        qsort(s->nodes, s->n_nodes, sizeof *s->nodes, cmp_node);
    if (s->n_pods)
        qsort(s->pods, s->n_pods, sizeof *s->pods, cmp_pod);
    if (s->n_namespaces)
        qsort(s->namespaces, s->n_namespaces, sizeof *s->namespaces, cmp_ns);
    if (s->n_limitranges)
        qsort(s->limitranges, s->n_limitranges, sizeof *s->limitranges, cmp_lr);
    for (size_t i = 1; i < s->n_nodes; i++)
        if (!cmp_node(&s->nodes[i - 1], &s->nodes[i]))
            return duplicate(err, "node", "", s->nodes[i].meta.name);
    for (size_t i = 1; i < s->n_pods; i++)
        if (!cmp_pod(&s->pods[i - 1], &s->pods[i]))
            return duplicate(err, "pod", s->pods[i].meta.ns, s->pods[i].meta.name);
    for (size_t i = 1; i < s->n_namespaces; i++)
        if (!cmp_ns(&s->namespaces[i - 1], &s->namespaces[i]))
            return duplicate(err, "namespace", "", s->namespaces[i].meta.name);
    for (size_t i = 1; i < s->n_limitranges; i++)
        if (!cmp_lr(&s->limitranges[i - 1], &s->limitranges[i]))
            return duplicate(err, "limitrange", s->limitranges[i].meta.ns,
                             s->limitranges[i].meta.name);
    return HR_OK;
}

/* A Pod or Node the decoder refused (snapshot.h): listed, and a pod kept as
 * undecodable. The decoder's message is in err; it is cleared. */
static hr_status keep_bad(hr_snapshot *s, yyjson_val *it, size_t idx, item_kind k, hr_err *err)
{
    hr_arena *a = &s->arena;
    hr_snapshot_bad *b = &s->bad[s->n_bad];
    *b = (hr_snapshot_bad){0};
    b->kind = k == K_POD ? "pod" : "node";
    b->msg = hr_arena_strdup(a, err->msg);
    const char *ns, *name;
    if (!hr_decode_key(it, a, &ns, &name)) {
        char unnamed[40];
        snprintf(unnamed, sizeof unnamed, "<items[%zu]>", idx);
        yyjson_val *x = yyjson_obj_get(yyjson_obj_get(it, "metadata"), "namespace");
        ns = yyjson_is_str(x) ? hr_arena_strndup(a, yyjson_get_str(x), yyjson_get_len(x)) : "";
        name = hr_arena_strdup(a, unnamed);
    }
    if (!b->msg || !ns || !name)
        return hr_err_set(err, HR_E_NOMEM, "out of memory");
    b->ns = k == K_POD ? ns : "";
    b->name = name;
    if (k == K_POD) {
        hr_kpod *kp = &s->pods[s->n_pods];
        if (!hr_decode_pod_undecodable(it, a, b->msg, kp))
            return hr_err_set(err, HR_E_NOMEM, "out of memory");
        kp->meta.ns = ns;
        kp->meta.name = name;
        b->node = kp->node_name;
        b->node_unreadable = kp->node_unreadable;
        if (kp->node_unreadable && !hr_pod_terminal(&kp->pod))
            s->n_pods_nowhere++;
        s->n_pods++;
    }
    s->n_bad++;
    hr_err_clear(err);
    return HR_OK;
}

static hr_status decode_items(hr_snapshot *s, yyjson_val *items, yyjson_val *single,
                              item_kind list_kind, hr_err *err)
{
    size_t n_items = items ? yyjson_arr_size(items) : 1;
    size_t count[K_QUOTA + 1] = {0};
    size_t i;
    yyjson_val *it;
    hr_status st;
    /* Pass 1: kinds and counts (and the shape errors, before any work).
     * Arrays are walked with iterators: yyjson_arr_get(i) is O(i). */
    yyjson_arr_iter iter;
    if (items)
        yyjson_arr_iter_init(items, &iter);
    for (i = 0; i < n_items; i++) {
        it = items ? yyjson_arr_iter_next(&iter) : single;
        item_kind k;
        if ((st = item_kind_of(it, i, list_kind, &k, err)))
            return st;
        count[k]++;
    }
    hr_arena *a = &s->arena;
    s->nodes = hr_arena_calloc(a, count[K_NODE] + 1, sizeof *s->nodes);
    s->pods = hr_arena_calloc(a, count[K_POD] + 1, sizeof *s->pods);
    s->namespaces = hr_arena_calloc(a, count[K_NAMESPACE] + 1, sizeof *s->namespaces);
    s->limitranges = hr_arena_calloc(a, count[K_LIMITRANGE] + 1, sizeof *s->limitranges);
    s->bad = hr_arena_calloc(a, count[K_POD] + count[K_NODE] + 1, sizeof *s->bad);
    s->quotas = hr_arena_calloc(a, count[K_QUOTA] + 1, sizeof *s->quotas);
    if (!s->nodes || !s->pods || !s->namespaces || !s->limitranges || !s->bad || !s->quotas)
        return hr_err_set(err, HR_E_NOMEM, "out of memory for %zu objects", n_items);
    bool have_cfg = false;
    /* Pass 2: decode. */
    if (items)
        yyjson_arr_iter_init(items, &iter);
    for (i = 0; i < n_items; i++) {
        it = items ? yyjson_arr_iter_next(&iter) : single;
        item_kind k;
        if ((st = item_kind_of(it, i, list_kind, &k, err)))
            return st;
        switch (k) {
        case K_POD:
            st = hr_decode_pod(it, a, &s->pods[s->n_pods], err);
            if (st == HR_OK)
                s->n_pods++;
            else if (st == HR_E_INPUT)
                st = keep_bad(s, it, i, k, err);
            break;
        case K_NODE:
            st = hr_decode_node(it, a, &s->nodes[s->n_nodes], err);
            if (st == HR_OK)
                s->n_nodes++;
            else if (st == HR_E_INPUT)
                st = keep_bad(s, it, i, k, err);
            break;
        case K_NAMESPACE:
            st = hr_decode_namespace(it, a, &s->namespaces[s->n_namespaces++], err);
            break;
        case K_LIMITRANGE:
            st = hr_decode_limitrange(it, a, &s->limitranges[s->n_limitranges++], err);
            break;
        case K_QUOTA: st = hr_decode_resourcequota(it, a, &s->quotas[s->n_quotas++], err); break;
        case K_CONFIG:
            /* Only the singleton counts (design §1); others are not ours. */
            if (!is_cluster_config(it)) {
                s->n_ignored++;
                break;
            }
            if (have_cfg)
                return hr_err_set(err, HR_E_INPUT,
                                  "headroomconfig cluster: appears twice in "
                                  "the dump");
            hr_kconfig kc;
            st = hr_decode_config(it, a, &kc, err);
            if (!st) {
                s->cfg = kc.cfg;
                have_cfg = true;
            }
            break;
        default: s->n_ignored++; break;
        }
        if (st)
            return st;
    }
    return sort_and_check(s, err);
}

static void where(const char *buf, size_t len, size_t pos, size_t *line, size_t *col)
{
    *line = 1;
    *col = 1;
    for (size_t i = 0; i < pos && i < len; i++) {
        if (buf[i] == '\n') {
            (*line)++;
            *col = 1;
        } else {
            (*col)++;
        }
    }
}

hr_status hr_snapshot_parse(hr_snapshot *s, char *buf, size_t len, const hr_dump_limits *lim,
                            const char *source, hr_err *err)
{
    memset(s, 0, sizeof *s);
    hr_arena_init(&s->arena, 0);
    hr_config_defaults(&s->cfg);
    s->now_unix = (int64_t)time(NULL);
    hr_dump_limits l = lim ? *lim : HR_DUMP_LIMITS_DEFAULT;
    if (!l.max_bytes)
        l.max_bytes = HR_DUMP_MAX_BYTES;
    if (len > l.max_bytes)
        return hr_err_set(err, HR_E_LIMIT, "%s: %zu bytes, larger than the limit of %zu", source,
                          len, l.max_bytes);
    const size_t mib64 = (size_t)64 << 20;
    counting_alc cnt = {0, l.max_doc_bytes ? l.max_doc_bytes : 4 * len + mib64};
    hr_arena_set_limit(&s->arena, l.max_arena_bytes ? l.max_arena_bytes : 2 * len + mib64);
    yyjson_alc alc = {calc_malloc, calc_realloc, calc_free, &cnt};
    yyjson_read_err rerr;
    yyjson_doc *doc =
        yyjson_read_opts(buf, len, YYJSON_READ_INSITU | YYJSON_READ_NUMBER_AS_RAW, &alc, &rerr);
    if (!doc) {
        if (rerr.code == YYJSON_READ_ERROR_MEMORY_ALLOCATION)
            return hr_err_set(err, HR_E_NOMEM,
                              "%s: parsing needs more than %zu MiB of "
                              "memory (the limit for a %zu-byte input)",
                              source, cnt.limit >> 20, len);
        if (len == 0 || rerr.code == YYJSON_READ_ERROR_EMPTY_CONTENT)
            return hr_err_set(err, HR_E_INPUT,
                              "%s: empty input, expected a "
                              "Kubernetes List in JSON",
                              source);
        size_t line, col;
        where(buf, len, rerr.pos, &line, &col);
        return hr_err_set(err, HR_E_INPUT,
                          "%s: not valid JSON at line %zu, column %zu "
                          "(byte %zu): %s",
                          source, line, col, rerr.pos, rerr.msg ? rerr.msg : "?");
    }
    yyjson_val *root = yyjson_doc_get_root(doc);
    hr_status st = HR_OK;
    if (!yyjson_is_obj(root)) {
        st = hr_err_set(err, HR_E_INPUT,
                        "%s: expected a Kubernetes List (an object with "
                        "\"items\"), got %s",
                        source, yyjson_is_arr(root) ? "an array" : "a scalar");
        goto out;
    }
    yyjson_val *kind = yyjson_obj_get(root, "kind");
    yyjson_val *items = yyjson_obj_get(root, "items");
    const char *ks = yyjson_is_str(kind) ? yyjson_get_str(kind) : NULL;
    size_t kl = ks ? yyjson_get_len(kind) : 0;
    if (items && !yyjson_is_null(items)) {
        if (!yyjson_is_arr(items)) {
            st = hr_err_set(err, HR_E_INPUT, "%s: items: expected an array", source);
            goto out;
        }
        /* "PodList" -> items are Pods even without their own kind. */
        item_kind lk = K_OTHER;
        if (ks && kl > 4 && memcmp(ks + kl - 4, "List", 4) == 0)
            lk = kind_of(ks, kl - 4);
        st = decode_items(s, items, NULL, lk, err);
    } else if (ks && kind_of(ks, kl) != K_OTHER) {
        st = decode_items(s, NULL, root, K_OTHER, err);
    } else {
        char q[48];
        st = hr_err_set(err, HR_E_INPUT,
                        "%s: expected a Kubernetes List (kind List with "
                        "items), got kind \"%s\"",
                        source, ks ? hr_err_quote(q, sizeof q, ks, kl, 32) : "");
    }
out:
    yyjson_doc_free(doc);
    if (st) {
        hr_arena_free(&s->arena);
        memset(s, 0, sizeof *s);
        hr_arena_init(&s->arena, 0);
        hr_config_defaults(&s->cfg);
        if (st == HR_E_NOMEM && err && !strstr(err->msg, "MiB"))
            hr_err_prefix(err,
                          "%s: over the memory limit for a %zu-byte "
                          "input",
                          source, len);
    }
    return st;
}

hr_status hr_snapshot_read(hr_snapshot *s, const char *path, const hr_dump_limits *lim, hr_err *err)
{
    memset(s, 0, sizeof *s);
    hr_arena_init(&s->arena, 0);
    hr_config_defaults(&s->cfg);
    hr_dump_limits l = lim ? *lim : HR_DUMP_LIMITS_DEFAULT;
    char *buf;
    size_t len;
    hr_status st = hr_file_slurp(path, l.max_bytes ? l.max_bytes : HR_DUMP_MAX_BYTES,
                                 YYJSON_PADDING_SIZE, &buf, &len, err);
    if (st)
        return st;
    const char *source = strcmp(path, "-") == 0 ? "<stdin>" : path;
    st = hr_snapshot_parse(s, buf, len, &l, source, err);
    free(buf);
    return st;
}

const hr_knode *hr_snapshot_node(const hr_snapshot *s, const char *name)
{
    size_t lo = 0, hi = s->n_nodes;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        int c = strcmp(s->nodes[mid].meta.name, name);
        if (c == 0)
            return &s->nodes[mid];
        if (c < 0)
            lo = mid + 1;
        else
            hi = mid;
    }
    return NULL;
}

const hr_kpod *hr_snapshot_pod(const hr_snapshot *s, const char *ns, const char *name)
{
    size_t lo = 0, hi = s->n_pods;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        int c = strcmp(s->pods[mid].meta.ns, ns);
        if (!c)
            c = strcmp(s->pods[mid].meta.name, name);
        if (c == 0)
            return &s->pods[mid];
        if (c < 0)
            lo = mid + 1;
        else
            hi = mid;
    }
    return NULL;
}

const hr_knamespace *hr_snapshot_namespace(const hr_snapshot *s, const char *name)
{
    size_t lo = 0, hi = s->n_namespaces;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        int c = strcmp(s->namespaces[mid].meta.name, name);
        if (c == 0)
            return &s->namespaces[mid];
        if (c < 0)
            lo = mid + 1;
        else
            hi = mid;
    }
    return NULL;
}

hr_limit_bounds hr_snapshot_bounds(const hr_snapshot *s, const char *ns)
{
    hr_limit_bounds b = HR_LIMIT_BOUNDS_NONE;
    size_t lo = 0, hi = s->n_limitranges;
    while (lo < hi) { /* first LimitRange of ns */
        size_t mid = lo + (hi - lo) / 2;
        if (strcmp(s->limitranges[mid].meta.ns, ns) < 0)
            lo = mid + 1;
        else
            hi = mid;
    }
    for (size_t i = lo; i < s->n_limitranges && !strcmp(s->limitranges[i].meta.ns, ns); i++)
        hr_limit_bounds_merge(&b, &s->limitranges[i].bounds);
    return b;
}

void hr_snapshot_quota(const hr_snapshot *s, const char *ns, hr_ns_quota *out)
{
    *out = (hr_ns_quota){.on = false};
    for (size_t i = 0; i < s->n_quotas; i++)
        if (s->quotas[i].limits_cpu && !strcmp(s->quotas[i].meta.ns, ns))
            hr_ns_quota_fold(out, s->quotas[i].hard_cpu, s->quotas[i].used_cpu);
}

size_t hr_snapshot_gaps(const hr_snapshot *s, hr_snapshot_gap out[3])
{
    return hr_dump_gaps(s->n_namespaces, s->n_pods, s->n_limitranges, s->cfg.present, out);
}

size_t hr_dump_gaps(size_t n_namespaces, size_t n_pods, size_t n_limitranges, bool has_config,
                    hr_snapshot_gap out[3])
{
    size_t n = 0;
    if (n_namespaces == 0 && n_pods > 0)
        out[n++] = (hr_snapshot_gap){"Namespace",
                                     "no namespace labels are known, so no pod's namespace is "
                                     "selected (every pod reads as namespace-not-selected)"};
    if (n_limitranges == 0)
        out[n++] = (hr_snapshot_gap){"LimitRange",
                                     "if the cluster has LimitRanges, their CPU bounds do not cap "
                                     "these targets"};
    if (!has_config)
        out[n++] = (hr_snapshot_gap){"HeadroomConfig",
                                     "the defaults apply (dry-run); if the cluster has a "
                                     "HeadroomConfig \"cluster\", its settings are not used"};
    return n;
}
