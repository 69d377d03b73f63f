/*
 * gauges.c — the gauge table: node name -> what its last reconcile saw.
 */
#include "gauges.h"

#include <inttypes.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "server/metrics.h"
#include "util/strmap.h"

/* A node's series are rendered when its reconcile records them, not at
 * every scrape: a scrape then only copies text (bench_metrics). The text
 * holds one block per family of fams[], in its order; off[f] is where
 * family f's block starts, off[N_FAMS] its end. */
#define N_FAMS 15
typedef struct entry {
    uint32_t n_managed, n_deferred;
    char *text;
    size_t off[N_FAMS + 1];
} entry;

struct hr_gauges {
    pthread_mutex_t mu;
    hr_strmap nodes; /* node -> entry* */
};

const char *hr_gauge_hold(const hr_pod_plan *pp, bool dry_run)
{
    if (pp->gate == HR_GATE_NODE_UNKNOWN)
        return hr_gate_str(pp->gate);
    if (pp->target == HR_NONE || pp->target == pp->current)
        return NULL;
    if (!pp->write)
        return HR_GAUGE_HOLD_DEADBAND;
    if (pp->gate != HR_GATE_PASS)
        return hr_gate_str(pp->gate);
    return dry_run ? HR_GAUGE_HOLD_DRY_RUN : NULL;
}

hr_gauges *hr_gauges_new(void)
{
    hr_gauges *g = calloc(1, sizeof *g);
    if (g == NULL)
        return NULL;
    if (pthread_mutex_init(&g->mu, NULL) != 0) {
        free(g);
        return NULL;
    }
    hr_strmap_init(&g->nodes);
    return g;
}

static void entry_free(entry *e)
{
    if (e == NULL)
        return;
    free(e->text);
    free(e);
}

void hr_gauges_free(hr_gauges *g)
{
    if (g == NULL)
        return;
    size_t i = 0;
    uint64_t v;
    while (hr_strmap_next(&g->nodes, &i, NULL, &v))
        entry_free((entry *)(uintptr_t)v);
    hr_strmap_free(&g->nodes);
    pthread_mutex_destroy(&g->mu);
    free(g);
}

/* Millicores as decimal cores ("1.200"), which is what the families count.
 * Formatted by hand: this runs once per series, 150,000 times a scrape. */
static void put_cores(hr_buf *out, int64_t milli)
{
    char tmp[32];
    size_t n = sizeof tmp;
    uint64_t m = milli < 0 ? (uint64_t)0 - (uint64_t)milli : (uint64_t)milli;
    tmp[--n] = '\n';
    for (int k = 0; k < 3; k++, m /= 10)
        tmp[--n] = (char)('0' + m % 10);
    tmp[--n] = '.';
    do {
        tmp[--n] = (char)('0' + m % 10);
        m /= 10;
    } while (m != 0);
    if (milli < 0)
        tmp[--n] = '-';
    hr_buf_append(out, tmp + n, sizeof tmp - n);
}

/* A label value: one append when nothing needs escaping (the usual case
 * for Kubernetes names), the escaping writer otherwise. */
static void put_label(hr_buf *out, const char *v)
{
    size_t len = strcspn(v, "\\\"\n");
    if (v[len] == '\0')
        hr_buf_append(out, v, len);
    else
        hr_metrics_label_value(out, v);
}

/* One literal apart: a concatenation inside the table reads as a missing
 * comma. */
static const char pool_help[] = "Always 1: the spec.nodePools entry whose nodeSelector matches "
                                "the node first, or \"(top level)\".";
static const char held_help[] = "1 while a managed pod's limit is not at its target and its write "
                                "is held, with the reason (design 9.3).";
static const char undecodable_help[] = "1 while a pod on the node could not be decoded, so no CPU "
                                       "limit increase on the node is written (booking-unknown).";
static const char group_help[] = "1 while a pod's group (design 2.10) has more members than "
                                 "spec.maxGroupSize: the whole group is left unmanaged.";
static const char foreign_help[] = "1 while another field manager writes a pod's CPU limit "
                                   "(foreign-writer, design 4): the pod is left to it.";

static const char grace_help[] = "When the startup grace (design 2.12) of a pod whose limit it "
                                 "keeps ends, Unix seconds, unless the pod turns Ready first.";

/* Name, help; the node families first, then the pod families (design §9.3). */
static const char *const fams[N_FAMS][2] = {
    {"headroom_node_factor", "Limit/request factor of managed pods on the node (1 + S/M)."},
    {"headroom_node_slack_cores", "Allocatable CPU not booked by any request (may be negative)."},
    {"headroom_node_booked_ratio", "Booked requests over allocatable CPU."},
    {"headroom_node_pool_info", pool_help},
    {"headroom_node_managed_pods", "Pods on the node whose CPU limits kube-headroom manages."},
    {"headroom_node_allocatable_cores", "Allocatable CPU of the node (A)."},
    {"headroom_node_booked_cores", "CPU requests booked on the node (R)."},
    {"headroom_pod_limit_cores", "CPU limit of a managed pod (sum over managed containers)."},
    {"headroom_pod_target_cores", "CPU limit the policy wants for a managed pod now (sum over "
                                  "managed containers)."},
    {"headroom_pod_held", held_help},
    {"headroom_pod_info", "Always 1 per managed pod: the node it is bound to."},
    {"headroom_pod_undecodable", undecodable_help},
    {"headroom_pod_group_too_large", group_help},
    {"headroom_pod_foreign_writer", foreign_help},
    {"headroom_pod_startup_grace_until_seconds", grace_help},
};
enum {
    F_FACTOR,
    F_SLACK,
    F_RATIO,
    F_POOL,
    F_MANAGED,
    F_ALLOC,
    F_BOOKED,
    F_POD_LIMIT,
    F_POD_TARGET,
    F_POD_HELD,
    F_POD_INFO,
    F_POD_UNDECODABLE,
    F_POD_GROUP_TOO_LARGE,
    F_POD_FOREIGN_WRITER,
    F_POD_GRACE,
};

/* name{node="…"} and a value in cores. */
static void node_cores(hr_buf *b, int f, const char *node, int64_t milli)
{
    hr_buf_puts(b, fams[f][0]);
    hr_buf_append(b, "{node=\"", 7);
    put_label(b, node);
    hr_buf_append(b, "\"} ", 3);
    put_cores(b, milli);
}

/* name{namespace="…",pod="…" and the closing of the label set is the
 * caller's. */
static void pod_head(hr_buf *b, int f, const hr_gauge_pod *p)
{
    hr_buf_puts(b, fams[f][0]);
    hr_buf_append(b, "{namespace=\"", 12);
    put_label(b, p->ns);
    hr_buf_append(b, "\",pod=\"", 7);
    put_label(b, p->name);
}

static entry *entry_new(const char *node, const char *pool, const hr_node_plan *plan,
                        uint32_t n_deferred, const hr_gauge_pod *pods, size_t n)
{
    entry *e = calloc(1, sizeof *e);
    if (e == NULL)
        return NULL;
    hr_buf b;
    hr_buf_init(&b, 0);
    int64_t vals[3] = {hr_node_factor_milli(plan), plan->slack,
                       plan->allocatable > 0 ? plan->booked * 1000 / plan->allocatable : 0};
    for (int f = F_FACTOR; f <= F_RATIO; f++) {
        e->off[f] = b.len;
        node_cores(&b, f, node, vals[f]);
    }
    /* Design §9.3: the pool as an info series, joined by node in the
     * dashboard; at most HR_POOLS_MAX + 1 values. */
    e->off[F_POOL] = b.len;
    hr_buf_puts(&b, "headroom_node_pool_info{node=\"");
    put_label(&b, node);
    hr_buf_append(&b, "\",pool=\"", 8);
    put_label(&b, pool != NULL ? pool : HR_POOL_TOP_LEVEL);
    hr_buf_append(&b, "\"} 1\n", 5);
    e->off[F_MANAGED] = b.len;
    hr_buf_puts(&b, "headroom_node_managed_pods{node=\"");
    put_label(&b, node);
    hr_buf_printf(&b, "\"} %" PRIu32 "\n", plan->n_managed);
    e->off[F_ALLOC] = b.len;
    node_cores(&b, F_ALLOC, node, plan->allocatable);
    e->off[F_BOOKED] = b.len;
    node_cores(&b, F_BOOKED, node, plan->booked);
    for (int f = F_POD_LIMIT; f <= F_POD_FOREIGN_WRITER; f++) {
        e->off[f] = b.len;
        for (size_t k = 0; k < n; k++) {
            const hr_gauge_pod *p = &pods[k];
            /* An undecodable or refused pod has its own family only. */
            if ((f == F_POD_UNDECODABLE) != p->undecodable ||
                (f == F_POD_GROUP_TOO_LARGE) != p->group_too_large ||
                (f == F_POD_FOREIGN_WRITER) != (p->foreign_writer != NULL))
                continue;
            if (f == F_POD_HELD ? p->held == NULL : p->parked)
                continue;
            if (f == F_POD_TARGET && p->target <= 0)
                continue;
            pod_head(&b, f, p);
            if (f == F_POD_HELD) {
                hr_buf_append(&b, "\",reason=\"", 10);
                put_label(&b, p->held);
                hr_buf_append(&b, "\"} 1\n", 5);
            } else if (f == F_POD_FOREIGN_WRITER) {
                hr_buf_append(&b, "\",node=\"", 8);
                put_label(&b, node);
                hr_buf_append(&b, "\",manager=\"", 11);
                put_label(&b, p->foreign_writer);
                hr_buf_append(&b, "\"} 1\n", 5);
            } else if (f == F_POD_INFO || f == F_POD_UNDECODABLE || f == F_POD_GROUP_TOO_LARGE) {
                hr_buf_append(&b, "\",node=\"", 8);
                put_label(&b, node);
                hr_buf_append(&b, "\"} 1\n", 5);
            } else {
                hr_buf_append(&b, "\"} ", 3);
                put_cores(&b, f == F_POD_LIMIT ? p->limit : p->target);
            }
        }
    }
    /* Design §2.12: the end of each kept startup grace, a managed pod's. */
    e->off[F_POD_GRACE] = b.len;
    for (size_t k = 0; k < n; k++) {
        const hr_gauge_pod *p = &pods[k];
        if (p->grace_until <= 0 || p->parked || p->undecodable || p->group_too_large ||
            p->foreign_writer != NULL)
            continue;
        pod_head(&b, F_POD_GRACE, p);
        hr_buf_append(&b, "\",node=\"", 8);
        put_label(&b, node);
        hr_buf_printf(&b, "\"} %" PRId64 "\n", p->grace_until);
    }
    e->off[N_FAMS] = b.len;
    if (hr_buf_failed(&b)) {
        hr_buf_free(&b);
        free(e);
        return NULL;
    }
    e->text = b.data; /* the entry keeps the buffer's memory */
    if (e->text == NULL)
        e->text = calloc(1, 1);
    if (e->text == NULL) {
        free(e);
        return NULL;
    }
    e->n_managed = plan->n_managed;
    e->n_deferred = n_deferred;
    return e;
}

bool hr_gauges_record(hr_gauges *g, const char *node, const char *pool, const hr_node_plan *plan,
                      uint32_t n_deferred, const hr_gauge_pod *pods, size_t n,
                      hr_gauge_delta *delta)
{
    entry *e = NULL;
    if (plan != NULL && (e = entry_new(node, pool, plan, n_deferred, pods, n)) == NULL)
        return false;
    pthread_mutex_lock(&g->mu);
    uint64_t *slot = hr_strmap_get(&g->nodes, node);
    entry *prev = slot != NULL ? (entry *)(uintptr_t)*slot : NULL;
    if (e != NULL && !hr_strmap_put(&g->nodes, node, (uint64_t)(uintptr_t)e)) {
        pthread_mutex_unlock(&g->mu);
        entry_free(e);
        return false;
    }
    if (e == NULL)
        hr_strmap_del(&g->nodes, node, NULL);
    *delta = (hr_gauge_delta){
        (e ? (int64_t)e->n_managed : 0) - (prev ? (int64_t)prev->n_managed : 0),
        (e ? e->n_managed > 0 : 0) - (prev ? prev->n_managed > 0 : 0),
        (e ? (int64_t)e->n_deferred : 0) - (prev ? (int64_t)prev->n_deferred : 0),
    };
    pthread_mutex_unlock(&g->mu);
    entry_free(prev);
    return true;
}

void hr_gauges_render(hr_gauges *g, hr_buf *out)
{
    pthread_mutex_lock(&g->mu);
    for (int f = 0; f < N_FAMS; f++) {
        hr_buf_printf(out, "# HELP %s %s\n# TYPE %s gauge\n", fams[f][0], fams[f][1], fams[f][0]);
        size_t i = 0;
        uint64_t v;
        while (hr_strmap_next(&g->nodes, &i, NULL, &v)) {
            const entry *e = (const entry *)(uintptr_t)v;
            hr_buf_append(out, e->text + e->off[f], e->off[f + 1] - e->off[f]);
        }
    }
    pthread_mutex_unlock(&g->mu);
}
