/*
 * pods.c — the pod store and the per-node index: fixed 88-byte records in
 * chunks, found by (namespace, name) through a chained hash, linked into
 * their node's list, with the variable part in a varint blob (varint.h).
 *
 * Why these live together: a pod's record *is* the per-node index (the
 * links run through it), so binding, moving and forgetting a pod updates
 * both in one place, and the change feed learns of every node a pod
 * enters or leaves (feed.c). Layout and budget: cache_int.h.
 */
#include "cache/pods.h"

#include <stdlib.h>
#include <string.h>

#include "cache/feed.h"
#include "cache/groups.h"
#include "cache/nodes.h"
#include "cache/store.h"

static uint32_t pod_hash(uint32_t ns, const char *name, size_t len)
{
    return hr_mix32(hr_intern_hash(name, len) ^ hr_mix32(ns));
}

static uint32_t pod_find(const hr_cache *c, uint32_t ns, const char *name, size_t len, uint32_t h)
{
    if (!c->n_pbuckets)
        return NIL;
    for (uint32_t i = c->pbuckets[h & (c->n_pbuckets - 1)]; i != NIL; i = (*PA(c, i)).hnext) {
        const cpod *p = &(*PA(c, i));
        if (p->hash != h || p->ns != ns)
            continue;
        const char *pn;
        size_t pl;
        hr_cblob_name(p->blob, &pn, &pl);
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

/* ------------------------------------------------- the per-node index */

static void node_link(hr_cache *c, uint32_t node, uint32_t pi)
{
    cpod *p = &(*PA(c, pi));
    cnode *n = node_at(c, node);
    p->node = node;
    p->nprev = NIL;
    p->nnext = n->head;
    if (n->head != NIL)
        (*PA(c, n->head)).nprev = pi;
    n->head = pi;
    n->n_pods++;
    hr_cfeed_mark(c, node);
}

static void node_unlink(hr_cache *c, uint32_t pi)
{
    cpod *p = &(*PA(c, pi));
    if (p->node == NIL)
        return;
    cnode *n = node_at(c, p->node);
    if (p->nprev != NIL)
        (*PA(c, p->nprev)).nnext = p->nnext;
    else
        n->head = p->nnext;
    if (p->nnext != NIL)
        (*PA(c, p->nnext)).nprev = p->nprev;
    n->n_pods--;
    hr_cfeed_mark(c, p->node);
    p->node = NIL;
}

static void ns_count(hr_cache *c, uint32_t ns, int delta)
{
    uint32_t v = hr_u32map_get(&c->ns_pods, ns);
    uint32_t nv = (v == NIL ? 0 : v) + (uint32_t)delta;
    if (nv == 0)
        hr_u32map_del(&c->ns_pods, ns);
    else
        hr_u32map_put(&c->ns_pods, ns, nv); /* on failure only a scan is lost */
}

static void release_pod_strings(hr_cache *c, cpod *p)
{
    uint32_t ids[HR_CPOD_MAX_CTR], gid, wid;
    hr_cblob_decode(p->blob, p->n_ctr, ids, NULL, NULL, &gid, &wid, NULL);
    for (uint32_t i = 0; i < p->n_ctr; i++)
        hr_intern_unref(&c->str, ids[i]);
    hr_intern_unref(&c->str, gid);
    hr_intern_unref(&c->str, wid);
    hr_intern_unref(&c->str, p->okind);
    hr_intern_unref(&c->str, p->ogroup);
    hr_intern_unref(&c->str, p->oname);
}

/* The interned id of the pod's group key, 0: none. */
static uint32_t pod_group(const cpod *p)
{
    uint32_t gid;
    hr_cblob_decode(p->blob, p->n_ctr, NULL, NULL, NULL, &gid, NULL, NULL);
    return gid;
}

/* An undecodable pod that says it is bound but not where (cache_int.h). */
static bool pod_nowhere(const cpod *p)
{
    return (p->flags & (PF_UNDECODABLE | PF_BOUND)) == (PF_UNDECODABLE | PF_BOUND) &&
           p->node == NIL;
}

/* One more or one fewer pod that may be on any node. The first one and the
 * last one change every node's booking (unknown / known again): every node
 * is looked at. */
static void nowhere_add(hr_cache *c, int delta)
{
    uint32_t before = c->n_pods_nowhere;
    c->n_pods_nowhere = (uint32_t)((int64_t)before + delta);
    if ((before == 0) != (c->n_pods_nowhere == 0))
        hr_cfeed_all(c);
}

static void pod_remove(hr_cache *c, uint32_t pi)
{
    cpod *p = &(*PA(c, pi));
    if (pod_nowhere(p))
        nowhere_add(c, -1);
    const char *name;
    size_t nl;
    hr_cblob_name(p->blob, &name, &nl);
    node_unlink(c, pi);
    uint32_t *pp = &c->pbuckets[p->hash & (c->n_pbuckets - 1)];
    while (*pp != pi)
        pp = &(*PA(c, *pp)).hnext;
    *pp = p->hnext;
    hr_cstore_report(c, HR_CK_POD, HR_CC_DELETED, hr_intern_str(&c->str, p->ns), name);
    hr_cgroups_del(c, pod_group(p), pi);
    release_pod_strings(c, p);
    ns_count(c, p->ns, -1);
    hr_intern_unref(&c->str, p->ns);
    c->blob_bytes -= hr_cblob_alloc_size(p->blob_len);
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

static uint16_t pod_flags(const hr_kpod *p, const hr_pod *d, const hr_cpod_status *s)
{
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
    f |= d->undecodable ? PF_UNDECODABLE : 0;
    if (s) {
        f |= (uint16_t)((s->resize & 3) << PF_RESIZE_SHIFT);
        f |= s->resizing ? PF_RESIZING : 0;
    }
    return f;
}

static uint32_t pods_find(const hr_cache *c, hr_ckind k, const char *ns, const char *name);

hr_status hr_cpods_put(hr_cache *c, const hr_kpod *p, const hr_cpod_status *s, hr_err *err)
{
    const char *ns = p->meta.ns, *name = p->meta.name;
    if (!ns[0] || !name[0])
        return hr_err_set(err, HR_E_INPUT, "pod without namespace or name");
    if (hr_pod_terminal(&p->pod)) {
        /* Terminal pods book nothing and never come back: forget them. */
        uint32_t i = pods_find(c, HR_CK_POD, ns, name);
        if (i != NIL)
            pod_remove(c, i);
        return HR_OK;
    }
    if (p->pod.n_ctr > HR_CPOD_MAX_CTR)
        return hr_err_set(err, HR_E_LIMIT, "pod %s/%s: %u containers", ns, name, p->pod.n_ctr);
    uint32_t ids[HR_CPOD_MAX_CTR];
    const char *node_name = p->node_name;
    hr_pod podv = p->pod;
    if (p->pod.undecodable && node_name == NULL) {
        /* spec.nodeName cannot change once set: a pod we knew on a node is
         * still there, whatever we can (not) read of it now. */
        uint32_t was = pods_find(c, HR_CK_POD, ns, name);
        if (was != NIL && (*PA(c, was)).node != NIL) {
            node_name = hr_intern_str(&c->str, node_at(c, (*PA(c, was)).node)->name);
            podv.bound = true;
        }
    }
    uint32_t nsid = hr_cstore_intern(c, ns);
    uint32_t ok = hr_cstore_intern(c, p->owner.kind);
    uint32_t og = p->owner.kind ? hr_cstore_intern(c, p->owner.api_group) : 0;
    uint32_t on = p->owner.kind ? hr_cstore_intern(c, p->owner.name) : 0;
    uint32_t nn = hr_cstore_intern(c, node_name);
    size_t len = 0;
    uint32_t gid = 0, wid = 0;
    if (nsid == UINT32_MAX || ok == UINT32_MAX || og == UINT32_MAX || on == UINT32_MAX ||
        nn == UINT32_MAX || (len = hr_cblob_encode(&c->enc, &c->str, p, ids, &gid, &wid)) == 0) {
        uint32_t held[] = {nsid, ok, og, on, nn};
        for (size_t k = 0; k < sizeof held / sizeof held[0]; k++)
            if (held[k] != UINT32_MAX)
                hr_intern_unref(&c->str, held[k]);
        return hr_err_set(err, HR_E_NOMEM, "pod %s/%s: out of memory", ns, name);
    }
    uint32_t node = NIL;
    if (nn) {
        node = hr_cnodes_slot(c, nn); /* takes nn's reference */
        if (node == NIL)
            goto nomem;
    }
    uint16_t flags = pod_flags(p, &podv, s);
    uint64_t rv = hr_cstore_parse_rv(p->meta.resource_version);
    size_t nl = strlen(name);
    uint32_t h = pod_hash(nsid, name, nl);
    uint32_t pi = pod_find(c, nsid, name, nl, h);
    if (pi != NIL) {
        cpod *old = &(*PA(c, pi));
        old->rv = rv;
        /* Our own annotation changing is remembered but recomputes
         * nothing: the controller only compares it before writing. */
        old->status_hash = s ? s->status_hash : 0;
        old->status_mark = s ? s->status_mark : 0;
        old->mark = c->epoch[HR_CK_POD];
        uint8_t uid[16];
        hr_cstore_parse_uid(p->meta.uid, uid);
        if (memcmp(uid, old->uid, sizeof uid) != 0)
            c->removals++; /* a new pod of that name: the old one left (its delete unseen) */
        memcpy(old->uid, uid, sizeof uid);
        bool same = old->node == node && old->flags == flags && old->okind == ok &&
                    old->ogroup == og && old->oname == on && old->n_ctr == p->pod.n_ctr &&
                    old->blob_len == len && memcmp(old->blob, c->enc.buf, len) == 0;
        if (same) {
            /* Only the resourceVersion moved (status heartbeats, our own
             * annotation): nothing to recompute. Drop the duplicate
             * references taken while encoding. */
            for (uint32_t k = 0; k < p->pod.n_ctr; k++)
                hr_intern_unref(&c->str, ids[k]);
            hr_intern_unref(&c->str, gid);
            hr_intern_unref(&c->str, wid);
            hr_intern_unref(&c->str, nsid);
            hr_intern_unref(&c->str, ok);
            hr_intern_unref(&c->str, og);
            hr_intern_unref(&c->str, on);
            return HR_OK;
        }
        uint8_t *nb = malloc(len);
        if (!nb)
            goto nomem_ids;
        memcpy(nb, c->enc.buf, len);
        bool was_nowhere = pod_nowhere(old);
        uint32_t old_gid = pod_group(old);
        if (old_gid != gid)
            hr_cgroups_del(c, old_gid, pi);
        release_pod_strings(c, old);
        hr_intern_unref(&c->str, nsid); /* the record keeps its own */
        c->blob_bytes -= hr_cblob_alloc_size(old->blob_len);
        free(old->blob);
        old->blob = nb;
        old->blob_len = (uint32_t)len;
        c->blob_bytes += hr_cblob_alloc_size(len);
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
            hr_cfeed_mark(c, node);
        }
        if (pod_nowhere(old) != was_nowhere)
            nowhere_add(c, was_nowhere ? -1 : +1);
        if (old_gid != gid)
            (void)hr_cgroups_add(c, gid, pi); /* out of memory: planned alone */
        hr_cstore_report(c, HR_CK_POD, HR_CC_UPDATED, ns, name);
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
    memcpy(blob, c->enc.buf, len);
    np->blob = blob;
    np->blob_len = (uint32_t)len;
    c->blob_bytes += hr_cblob_alloc_size(len);
    np->rv = rv;
    hr_cstore_parse_uid(p->meta.uid, np->uid);
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
    np->status_mark = s ? s->status_mark : 0;
    uint32_t k = h & (c->n_pbuckets - 1);
    np->hnext = c->pbuckets[k];
    c->pbuckets[k] = pi;
    c->n_pods++;
    ns_count(c, nsid, +1);
    if (node != NIL)
        node_link(c, node, pi);
    if (pod_nowhere(np))
        nowhere_add(c, +1);
    (void)hr_cgroups_add(c, gid, pi); /* out of memory: planned alone */
    hr_cstore_report(c, HR_CK_POD, HR_CC_ADDED, ns, name);
    return HR_OK;
nomem_ids:
    /* hr_cnodes_slot kept the node reference in its slot (harmless: the
     * placeholder is collected at the next drain). */
    for (uint32_t j = 0; j < p->pod.n_ctr; j++)
        hr_intern_unref(&c->str, ids[j]);
    hr_intern_unref(&c->str, gid);
    hr_intern_unref(&c->str, wid);
    hr_intern_unref(&c->str, nsid);
    hr_intern_unref(&c->str, ok);
    hr_intern_unref(&c->str, og);
    hr_intern_unref(&c->str, on);
    return hr_err_set(err, HR_E_NOMEM, "pod %s/%s: out of memory", ns, name);
nomem:
    for (uint32_t j = 0; j < p->pod.n_ctr; j++)
        hr_intern_unref(&c->str, ids[j]);
    hr_intern_unref(&c->str, gid);
    hr_intern_unref(&c->str, wid);
    hr_intern_unref(&c->str, nsid);
    hr_intern_unref(&c->str, ok);
    hr_intern_unref(&c->str, og);
    hr_intern_unref(&c->str, on);
    return hr_err_set(err, HR_E_NOMEM, "pod %s/%s: out of memory", ns, name);
}

/* ---------------------------------------------------------- readers */

static void fill_pod_view(const hr_cache *c, uint32_t i, hr_cpod_view *v, hr_cpod_scratch *s)
{
    const cpod *p = &(*PA(c, i));
    uint32_t ids[HR_CPOD_MAX_CTR];
    memset(v, 0, sizeof *v);
    v->id = i;
    v->ns = hr_intern_str(&c->str, p->ns);
    size_t nl;
    hr_cblob_name(p->blob, &v->name, &nl);
    v->node = p->node != NIL ? hr_intern_str(&c->str, node_at(c, p->node)->name) : NULL;
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
    v->status_mark = p->status_mark;
    v->pod = hr_pod_init();
    uint32_t gid, wid, hl;
    hr_cblob_decode(p->blob, p->n_ctr, ids, s->ctr, &v->pod, &gid, &wid, &hl);
    /* The label's value is the owner name's tail (varint.c checked it). */
    v->owner_template_hash =
        hl != 0 && p->oname ? v->owner_name + strlen(v->owner_name) - hl : NULL;
    v->pod.group = gid ? hr_intern_str(&c->str, gid) : NULL;
    v->pod.foreign_writer = wid ? hr_intern_str(&c->str, wid) : NULL;
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
    v->pod.undecodable = (p->flags & PF_UNDECODABLE) != 0;
}

/* The slot of pod ns/name, or NIL: what get and uid share. */
static uint32_t pod_named(const hr_cache *c, const char *ns, const char *name)
{
    uint32_t id = hr_intern_find(&c->str, ns, strlen(ns));
    if (!id)
        return NIL;
    size_t nl = strlen(name);
    return pod_find(c, id, name, nl, pod_hash(id, name, nl));
}

bool hr_cpods_get(const hr_cache *c, const char *ns, const char *name, hr_cpod_view *out,
                  hr_cpod_scratch *s)
{
    uint32_t i = pod_named(c, ns, name);
    if (i == NIL)
        return false;
    fill_pod_view(c, i, out, s);
    return true;
}

bool hr_cpods_uid(const hr_cache *c, const char *ns, const char *name, uint8_t uid[16])
{
    uint32_t i = pod_named(c, ns, name);
    if (i == NIL)
        return false;
    memcpy(uid, (*PA(c, i)).uid, 16);
    return true;
}

bool hr_cpods_at(const hr_cache *c, uint32_t id, hr_cpod_view *out, hr_cpod_scratch *s)
{
    if (id >= c->pods_used || !(*PA(c, id)).ns)
        return false;
    fill_pod_view(c, id, out, s);
    return true;
}

bool hr_cpods_next(const hr_cache *c, uint32_t *iter, hr_cpod_view *out, hr_cpod_scratch *s)
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

size_t hr_cpods_of_node(const hr_cache *c, const char *node, uint32_t *ids, size_t cap)
{
    uint32_t i = hr_cnodes_find(c, node);
    if (i == NIL)
        return 0;
    size_t n = 0;
    for (uint32_t p = node_at(c, i)->head; p != NIL; p = (*PA(c, p)).nnext) {
        if (n < cap)
            ids[n] = p;
        n++;
    }
    return n;
}

/* ---------------------------------------------------------- the store */

static uint32_t pods_find(const hr_cache *c, hr_ckind k, const char *ns, const char *name)
{
    (void)k;
    uint32_t nsid = hr_intern_find(&c->str, ns, strlen(ns));
    if (!nsid)
        return NIL;
    size_t nl = strlen(name);
    return pod_find(c, nsid, name, nl, pod_hash(nsid, name, nl));
}

static uint32_t pods_end(const hr_cache *c, hr_ckind k)
{
    (void)k;
    return c->pods_used;
}

static uint32_t *pods_mark(hr_cache *c, hr_ckind k, uint32_t i)
{
    (void)k;
    cpod *p = PA(c, i);
    return p->ns ? &p->mark : NULL;
}

static bool pods_remove(hr_cache *c, hr_ckind k, uint32_t i)
{
    (void)k;
    pod_remove(c, i);
    return false;
}

const cstore hr_cpods_store = {pods_find, pods_end, pods_mark, pods_remove};

void hr_cpods_free(hr_cache *c)
{
    for (uint32_t i = 0; i < c->pods_used; i++)
        if ((*PA(c, i)).ns)
            free((*PA(c, i)).blob);
    for (uint32_t i = 0; i < c->n_chunks; i++)
        free(c->chunks[i]);
    free(c->chunks);
    free(c->pbuckets);
    hr_u32map_free(&c->ns_pods);
    hr_cgroups_free(c);
}
