/*
 * test_execmem.c — the executor's memory follows the cache: after pods and
 * nodes are created and deleted through the cache, the sweep leaves no
 * per-pod entry ("already reported" marks), no back-off entry and no
 * per-node token bucket behind; a pod recreated under the same name with a new uid inherits no
 * marks of the old one, and no note queued for a pod that left waits in
 * the notes queue (design §5). And a wave that loses leadership — at
 * the executor's own check, or in the client right before a write is sent
 * — stops, sends nothing more, is requeued, and keeps no "already
 * reported" mark for an event it did not send (design §10).
 */
#include <pthread.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>
#include <yyjson.h>

#include "cache/cache.h"
#include "cache/sink.h"
#include "controller/executor.h"
#include "controller/notes.h"
#include "hr_testfile.h"

typedef struct fx {
    hr_cache *c;
    hr_csink *sink[HR_CK_COUNT_];
    hr_wsink ws[HR_CK_COUNT_];
    hr_kclient *k;
    char kc[64];
    bool leading;
    int leading_calls_left; /* > 0: leading turns false after this many asks */
    int64_t lease_until;    /* the client's write lease (HR_KUNTIL_NONE: none) */
    hr_ctlmetrics m;
    hr_backoff *b;
} fx;

static bool leading(void *ud)
{
    fx *f = ud;
    if (f->leading_calls_left > 0 && --f->leading_calls_left == 0)
        f->leading = false;
    return f->leading;
}

static int64_t lease_until(void *ud)
{
    return ((fx *)ud)->lease_until;
}

static void quiet(void *ud, int level, const char *msg)
{
    (void)ud, (void)level, (void)msg;
}

static void feed(fx *f, hr_ckind k, const char *json)
{
    yyjson_doc *d = yyjson_read(json, strlen(json), 0);
    assert_non_null(d);
    hr_err err;
    hr_err_clear(&err);
    assert_int_equal(f->ws[k].upsert(f->ws[k].ud, yyjson_doc_get_root(d), &err), HR_OK);
    yyjson_doc_free(d);
}

static void put_node(fx *f, const char *name)
{
    char buf[512];
    snprintf(buf, sizeof buf,
             "{\"metadata\":{\"name\":\"%s\",\"resourceVersion\":\"1\"},"
             "\"status\":{\"allocatable\":{\"cpu\":\"4\"},\"conditions\":["
             "{\"type\":\"Ready\",\"status\":\"True\"}]}}",
             name);
    feed(f, HR_CK_NODE, buf);
}

/* uid: a number spelled into the last group of a UUID. */
static void put_pod(fx *f, const char *name, const char *node, int uid)
{
    char buf[1024];
    snprintf(buf, sizeof buf,
             "{\"metadata\":{\"namespace\":\"ns\",\"name\":\"%s\","
             "\"uid\":\"0f1e2d3c-4b5a-6978-8796-%012d\",\"resourceVersion\":\"7\"},"
             "\"spec\":{\"nodeName\":\"%s\",\"containers\":[{\"name\":\"app\","
             "\"resources\":{\"requests\":{\"cpu\":\"100m\"}}}]},"
             "\"status\":{\"phase\":\"Running\"}}",
             name, uid, node);
    feed(f, HR_CK_POD, buf);
}

static void uid_of(int n, uint8_t uid[16])
{
    static const uint8_t head[10] = {0x0f, 0x1e, 0x2d, 0x3c, 0x4b, 0x5a, 0x69, 0x78, 0x87, 0x96};
    char tail[13];
    snprintf(tail, sizeof tail, "%012d", n);
    memcpy(uid, head, 10);
    for (int i = 0; i < 6; i++) {
        unsigned b;
        assert_int_equal(sscanf(tail + 2 * i, "%2x", &b), 1);
        uid[10 + i] = (uint8_t)b;
    }
}

static hr_executor *mk_exec(fx *f)
{
    assert_int_equal(write_dead_kubeconfig(f->kc, sizeof f->kc, "execmem"), 0);
    hr_kclient_opts ko = {.kubeconfig = f->kc, .timeout_ms = 500};
    hr_err err;
    assert_int_equal(hr_kclient_new(&ko, &f->k, &err), HR_OK);
    assert_int_equal(hr_backoff_new(&f->b, &err), HR_OK);
    hr_ctlmetrics_init(&f->m);
    hr_executor_opts o = {.client = f->k,
                          .metrics = &f->m,
                          .backoff = f->b,
                          .leading = leading,
                          .leading_until = lease_until,
                          .leading_ud = f,
                          .log = quiet};
    hr_executor *e = NULL;
    assert_int_equal(hr_executor_new(&o, &e, &err), HR_OK);
    return e;
}

static int setup(void **state)
{
    fx *f = calloc(1, sizeof *f);
    hr_err err;
    assert_int_equal(hr_cache_new(&f->c, &err), HR_OK);
    for (int k = 0; k < HR_CK_COUNT_; k++) {
        assert_int_equal(hr_csink_new(f->c, (hr_ckind)k, &f->sink[k], &err), HR_OK);
        f->ws[k] = hr_csink_wsink(f->sink[k]);
    }
    *state = f;
    return 0;
}

static int teardown(void **state)
{
    fx *f = *state;
    for (int k = 0; k < HR_CK_COUNT_; k++)
        hr_csink_free(f->sink[k]);
    hr_cache_free(f->c);
    if (f->k != NULL)
        hr_kclient_free(f->k);
    hr_backoff_free(f->b);
    if (f->kc[0])
        unlink(f->kc);
    free(f);
    return 0;
}

/* One reconcile of one pod on node, as the executor sees it: the kubelet
 * called its resize Infeasible (an "already reported" mark), and, when
 * leading, a dry-run annotation (a token from the node's bucket; the write
 * itself goes nowhere). */
static void execute_one(fx *f, hr_executor *e, const char *node, const char *name, int uid)
{
    hr_rpod p = {.ns = "ns", .name = name, .pod = hr_pod_init(), .resize = HR_RS_INFEASIBLE};
    uint64_t rv = 7;
    uint8_t u[1][16];
    uid_of(uid, u[0]);
    hr_nodesnap s = {.node = {.name = node, .pods = &p, .n = 1}, .pod_rv = &rv, .pod_uid = u};
    hr_action a = {.kind = HR_ACT_ANNOTATE, .pod = 0, .status_patch = "{}"};
    hr_reconcile r = {.actions = &a, .n_actions = f->leading ? 1 : 0};
    hr_exec_outcome out;
    hr_err err;
    hr_err_clear(&err);
    assert_int_equal(hr_execute(e, &s, &r, &out, &err), HR_OK);
}

static size_t sweep_all(fx *f, hr_executor *e)
{
    size_t n = 0;
    hr_cache_lock(f->c);
    hr_cache_drain(f->c, NULL, NULL); /* frees placeholders, as the feeder does */
    for (int i = 0; i < 64; i++)
        n += hr_executor_sweep(e, f->c, 16);
    hr_cache_unlock(f->c);
    return n;
}

static void churn_leaves_nothing(void **state)
{
    fx *f = *state;
    hr_executor *e = mk_exec(f);
    f->leading = true;
    enum { NODES = 4, PODS = 40 };
    char node[32], pod[32];
    for (int i = 0; i < NODES; i++) {
        snprintf(node, sizeof node, "n%d", i);
        put_node(f, node);
    }
    for (int i = 0; i < PODS; i++) {
        snprintf(node, sizeof node, "n%d", i % NODES);
        snprintf(pod, sizeof pod, "p%d", i);
        put_pod(f, pod, node, i + 1);
        execute_one(f, e, node, pod, i + 1);
    }
    hr_executor_stats st;
    hr_executor_get_stats(e, &st);
    assert_int_equal(st.reported, PODS);
    assert_int_equal(st.buckets, NODES);
    assert_int_equal(hr_backoff_prune(f->b, 0, NULL, NULL), PODS); /* each Infeasible pod parked */
    /* While everything is cached, the sweep keeps everything. */
    assert_int_equal(sweep_all(f, e), 0);
    hr_executor_get_stats(e, &st);
    assert_int_equal(st.reported, PODS);
    assert_int_equal(st.buckets, NODES);

    for (int i = 0; i < PODS; i++) {
        snprintf(pod, sizeof pod, "p%d", i);
        hr_cache_del(f->c, HR_CK_POD, "ns", pod);
    }
    for (int i = 0; i < NODES; i++) {
        snprintf(node, sizeof node, "n%d", i);
        hr_cache_del(f->c, HR_CK_NODE, "", node);
    }
    assert_int_equal(sweep_all(f, e), PODS + NODES);
    hr_executor_get_stats(e, &st);
    assert_int_equal(st.reported, 0);
    assert_int_equal(st.last_rv, 0);
    assert_int_equal(st.buckets, 0);
    assert_int_equal(hr_backoff_prune(f->b, 0, NULL, NULL), 0);
    hr_executor_free(e);
}

static void recreated_pod_starts_clean(void **state)
{
    fx *f = *state;
    hr_executor *e = mk_exec(f);
    f->leading = true; /* the writes go to port 1 and fail: only the marks matter */
    put_node(f, "n1");
    put_pod(f, "db-0", "n1", 1);
    execute_one(f, e, "n1", "db-0", 1);
    uint8_t old_uid[16], new_uid[16];
    uid_of(1, old_uid);
    uid_of(2, new_uid);
    uint64_t rv;
    unsigned rep;
    hr_executor_pod_marks(e, "ns", "db-0", old_uid, &rv, &rep);
    assert_int_not_equal(rep, 0);

    /* StatefulSet style: same namespace and name, a new uid. */
    hr_cache_del(f->c, HR_CK_POD, "ns", "db-0");
    put_pod(f, "db-0", "n1", 2);
    hr_executor_pod_marks(e, "ns", "db-0", new_uid, &rv, &rep);
    assert_int_equal(rep, 0);
    assert_int_equal(rv, 0);
    /* The old pod's marks go with the sweep; the new pod's stay. */
    execute_one(f, e, "n1", "db-0", 2);
    assert_int_equal(sweep_all(f, e), 1);
    hr_executor_pod_marks(e, "ns", "db-0", old_uid, &rv, &rep);
    assert_int_equal(rep, 0);
    hr_executor_pod_marks(e, "ns", "db-0", new_uid, &rv, &rep);
    assert_int_not_equal(rep, 0);
    hr_executor_stats st;
    hr_executor_get_stats(e, &st);
    assert_int_equal(st.reported, 1);
    hr_executor_free(e);
}

/* The notes' one sender, held in its first send until released: what is
 * put after it stays queued. */
typedef struct holder {
    pthread_mutex_t mu;
    pthread_cond_t cv;
    bool hold, holding;
} holder;

static void held_send(void *ud, const hr_note *n)
{
    holder *h = ud;
    (void)n;
    pthread_mutex_lock(&h->mu);
    h->holding = true;
    pthread_cond_broadcast(&h->cv);
    while (h->hold)
        pthread_cond_wait(&h->cv, &h->mu);
    pthread_mutex_unlock(&h->mu);
}

static void put_note(hr_notes *q, const char *name, int uid)
{
    uint8_t u[16];
    uid_of(uid, u);
    char key[128];
    int at = snprintf(key, sizeof key, "ns/%s/", name);
    for (int i = 0; i < 16; i++)
        at += snprintf(key + at, sizeof key - (size_t)at, "%02x", u[i]);
    hr_note n = {.key = key, .ns = "ns", .name = name, .patch = "{}", .event = "e"};
    assert_true(hr_notes_put(q, &n));
}

/* Notes wait behind resizes under churn (notes.h): the notes of pods
 * deleted, or recreated under their name, before their turn leave the
 * queue with the sweep, the others stay (the soak's leak: 3,195 pods
 * churned in 5 minutes, RSS +2.1 MB after the warm-up and rising). */
static void notes_of_gone_pods_leave_the_queue(void **state)
{
    fx *f = *state;
    hr_executor *e = mk_exec(f);
    holder h = {.hold = true};
    assert_int_equal(pthread_mutex_init(&h.mu, NULL), 0);
    assert_int_equal(pthread_cond_init(&h.cv, NULL), 0);
    hr_notes *q = NULL;
    hr_err err;
    assert_int_equal(hr_notes_start(NULL, held_send, &h, 1, &q, &err), HR_OK);
    hr_executor_set_notes(e, q);
    assert_int_equal(sweep_all(f, e), 0); /* a queue that never held a note */
    put_node(f, "n1");
    put_pod(f, "busy", "n1", 999);
    put_note(q, "busy", 999); /* taken at once: the sender holds it */
    pthread_mutex_lock(&h.mu);
    while (!h.holding)
        pthread_cond_wait(&h.cv, &h.mu);
    pthread_mutex_unlock(&h.mu);
    enum { PODS = 600 }; /* more than one sweep's budget (16) many times over */
    char pod[32];
    for (int i = 0; i < PODS; i++) {
        snprintf(pod, sizeof pod, "p%d", i);
        put_pod(f, pod, "n1", i + 1);
        put_note(q, pod, i + 1);
    }
    assert_int_equal(hr_notes_pending(q), PODS);
    assert_int_equal(sweep_all(f, e), 0); /* all cached: all kept */
    assert_int_equal(hr_notes_pending(q), PODS);
    /* Two of three deleted; of the rest, every ninth recreated (a new uid). */
    int live = 0;
    for (int i = 0; i < PODS; i++) {
        snprintf(pod, sizeof pod, "p%d", i);
        if (i % 3 != 0) {
            hr_cache_del(f->c, HR_CK_POD, "ns", pod);
        } else if (i % 9 == 0) {
            hr_cache_del(f->c, HR_CK_POD, "ns", pod);
            put_pod(f, pod, "n1", 100000 + i);
        } else {
            live++;
        }
    }
    size_t dropped = 0;
    for (int pass = 0; pass < 8; pass++)
        dropped += sweep_all(f, e);
    assert_int_equal(dropped, PODS - live);
    assert_int_equal(hr_notes_pending(q), live);
    hr_executor_stats st;
    hr_executor_get_stats(e, &st);
    assert_int_equal(st.notes, live);
    pthread_mutex_lock(&h.mu);
    h.hold = false;
    pthread_cond_broadcast(&h.cv);
    pthread_mutex_unlock(&h.mu);
    hr_notes_stop(q);
    hr_executor_set_notes(e, NULL);
    hr_executor_free(e);
    pthread_cond_destroy(&h.cv);
    pthread_mutex_destroy(&h.mu);
}

/* One node, one Infeasible pod (an event to report) and two annotations. */
static hr_exec_outcome wave(fx *f, hr_executor *e, bool infeasible)
{
    hr_rpod p[2] = {
        {.ns = "ns",
         .name = "a",
         .pod = hr_pod_init(),
         .resize = infeasible ? HR_RS_INFEASIBLE : 0},
        {.ns = "ns", .name = "b", .pod = hr_pod_init()},
    };
    uint64_t rv[2] = {7, 7};
    uint8_t u[2][16];
    uid_of(1, u[0]);
    uid_of(2, u[1]);
    hr_nodesnap s = {.node = {.name = "n1", .pods = p, .n = 2}, .pod_rv = rv, .pod_uid = u};
    hr_action a[2] = {{.kind = HR_ACT_ANNOTATE, .pod = 0, .status_patch = "{}"},
                      {.kind = HR_ACT_ANNOTATE, .pod = 1, .status_patch = "{}"}};
    hr_reconcile r = {.actions = a, .n_actions = 2};
    hr_exec_outcome out;
    hr_err err;
    hr_err_clear(&err);
    assert_int_equal(hr_execute(e, &s, &r, &out, &err), HR_OK);
    (void)f;
    return out;
}

static unsigned marks_of(hr_executor *e, const char *name, int uid)
{
    uint8_t u[16];
    uid_of(uid, u);
    uint64_t rv;
    unsigned rep;
    hr_executor_pod_marks(e, "ns", name, u, &rv, &rep);
    return rep;
}

/* Leadership gone in the client, right before the bytes go out (after the
 * limiter wait): the event is not sent, its mark is taken back, nothing is
 * written and the node comes back after HR_EXEC_LEASE_REQUEUE_MS. */
static void lease_lost_in_client_requeues(void **state)
{
    fx *f = *state;
    hr_executor *e = mk_exec(f);
    f->leading = true;
    f->lease_until = 0; /* the client's view: not leading */
    hr_kclient_set_write_lease(f->k, lease_until, f);
    hr_exec_outcome out = wave(f, e, true);
    assert_int_equal(out.requeue_ms, HR_EXEC_LEASE_REQUEUE_MS);
    assert_int_equal(out.writes, 0);
    assert_int_equal(marks_of(e, "a", 1), 0); /* said by whoever leads next */
    /* Without the infeasible event: the first annotation is refused. */
    out = wave(f, e, false);
    assert_int_equal(out.requeue_ms, HR_EXEC_LEASE_REQUEUE_MS);
    assert_int_equal(out.writes, 0);
    /* Leading again: the same wave is sent (port 1 refuses it: 3 writes
     * counted, the event and two annotations) and the mark stays. */
    f->lease_until = HR_KUNTIL_NONE;
    out = wave(f, e, true);
    assert_int_equal(out.writes, 3);
    assert_int_not_equal(marks_of(e, "a", 1), 0);
    hr_kclient_set_write_lease(f->k, NULL, NULL);
    hr_executor_free(e);
}

/* Leadership gone between two writes (the executor's own ask as each
 * write's turn comes, after both actions' checks): the first annotation
 * went, the second does not, and the node is requeued — not dropped. Gone
 * during the checks (before any write): nothing is sent. Not leading at
 * all: the event is neither sent nor marked. */
static void lease_lost_mid_wave_requeues(void **state)
{
    fx *f = *state;
    hr_executor *e = mk_exec(f);
    f->leading = true;
    f->leading_calls_left = 4; /* two checks, the first write's ask, then false */
    hr_exec_outcome out = wave(f, e, false);
    assert_int_equal(out.writes, 1);
    assert_int_equal(out.requeue_ms, HR_EXEC_LEASE_REQUEUE_MS);
    f->leading = true;
    f->leading_calls_left = 2; /* the first action's check, then false */
    out = wave(f, e, false);
    assert_int_equal(out.writes, 0);
    assert_int_equal(out.requeue_ms, HR_EXEC_LEASE_REQUEUE_MS);
    f->leading = false;
    f->leading_calls_left = 0;
    out = wave(f, e, true);
    assert_int_equal(out.writes, 0);
    assert_int_equal(out.requeue_ms, HR_EXEC_LEASE_REQUEUE_MS);
    assert_int_equal(marks_of(e, "a", 1), 0);
    hr_executor_free(e);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(churn_leaves_nothing, setup, teardown),
        cmocka_unit_test_setup_teardown(recreated_pod_starts_clean, setup, teardown),
        cmocka_unit_test_setup_teardown(notes_of_gone_pods_leave_the_queue, setup, teardown),
        cmocka_unit_test_setup_teardown(lease_lost_in_client_requeues, setup, teardown),
        cmocka_unit_test_setup_teardown(lease_lost_mid_wave_requeues, setup, teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
