/*
 * test_nodememo.c — the memo of other nodes' plans (controller/nodememo.h)
 * and the cache's node versions it trusts (cache.h hr_cache_node_version):
 * an entry is reused only while its node's version, the back-off count and
 * its age hold; a group planned through the memo gets exactly what it gets
 * planned afresh, before and after a change (design §2.10).
 */
#include <pthread.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <cmocka.h>
#include <yyjson.h>

#include "cache/cache.h"
#include "cache/sink.h"
#include "controller/groups.h"
#include "controller/nodememo.h"

static void put(hr_cache *c, hr_ckind k, const char *json)
{
    hr_csink *s;
    hr_err err;
    assert_int_equal(hr_csink_new(c, k, &s, &err), HR_OK);
    hr_wsink w = hr_csink_wsink(s);
    yyjson_doc *d = yyjson_read(json, strlen(json), 0);
    assert_non_null(d);
    if (w.upsert(w.ud, yyjson_doc_get_root(d), &err) != HR_OK)
        fail_msg("upsert: %s", err.msg);
    yyjson_doc_free(d);
    hr_csink_free(s);
}

static void put_pod(hr_cache *c, const char *ns, const char *name, int node, int mcpu, bool member)
{
    char b[1024];
    snprintf(b, sizeof b,
             "{\"metadata\":{\"name\":\"%s\",\"namespace\":\"%s\",\"uid\":\"u-%s-%s\","
             "\"resourceVersion\":\"1\"%s},\"spec\":{\"nodeName\":\"n%d\",\"containers\":"
             "[{\"name\":\"app\",\"resources\":{\"requests\":{\"cpu\":\"%dm\"}}}]},"
             "\"status\":{\"phase\":\"Running\",\"containerStatuses\":[{\"name\":\"app\","
             "\"resources\":{\"requests\":{\"cpu\":\"%dm\"}}}]}}",
             name, ns, ns, name,
             member ? ",\"labels\":{\"kube-headroom.dev/group-uniform\":\"true\","
                      "\"kube-headroom.dev/group\":\"train\"}"
                    : "",
             node, mcpu, mcpu);
    put(c, HR_CK_POD, b);
}

/* Six 16-core nodes; a gang member of 2000m on each; others book 0..5 cores. */
static hr_cache *gang_cache(void)
{
    hr_cache *c;
    hr_err err;
    assert_int_equal(hr_cache_new(&c, &err), HR_OK);
    put(c, HR_CK_CONFIG,
        "{\"metadata\":{\"name\":\"cluster\",\"resourceVersion\":\"1\",\"uid\":\"c\"},"
        "\"spec\":{\"dryRun\":false}}");
    put(c, HR_CK_NAMESPACE,
        "{\"metadata\":{\"name\":\"ml\",\"resourceVersion\":\"1\",\"uid\":\"ns-ml\","
        "\"labels\":{\"kube-headroom.dev/mode\":\"managed\"}}}");
    for (int n = 0; n < 6; n++) {
        char b[256], name[32];
        snprintf(b, sizeof b,
                 "{\"metadata\":{\"name\":\"n%d\",\"resourceVersion\":\"1\"},\"status\":"
                 "{\"allocatable\":{\"cpu\":\"16\",\"pods\":\"110\"},"
                 "\"conditions\":[{\"type\":\"Ready\",\"status\":\"True\"}]}}",
                 n);
        put(c, HR_CK_NODE, b);
        snprintf(name, sizeof name, "train-%d", n);
        put_pod(c, "ml", name, n, 2000, true);
        if (n > 0) {
            snprintf(name, sizeof name, "filler-%d", n);
            put_pod(c, "other", name, n, 1000 * n, false);
        }
    }
    hr_cache_lock(c);
    hr_cache_drain(c, NULL, NULL);
    hr_cache_unlock(c);
    return c;
}

/* The targets and verdicts of node n's pods, planned with memo m (NULL:
 * afresh), into out (target, write per pod, by name order of the node). */
typedef struct verdict {
    char name[32];
    int64_t target;
    bool write;
    int64_t own;
} verdict;

static size_t plan_node(hr_cache *c, int n, hr_nodememo *m, int64_t now_ms, verdict *out,
                        size_t *planned)
{
    char name[16];
    snprintf(name, sizeof name, "n%d", n);
    hr_arena a;
    hr_arena_init(&a, 0);
    hr_nodesnap_opts so = {NULL, NULL, now_ms, HR_DRY_RUN_UNSET, 0};
    hr_nodesnap s;
    hr_reconcile r;
    hr_err err;
    hr_groups g = {.cache = c, .opts = &so, .cfg = &s.cfg, .a = &a, .memo = m};
    if (hr_nodesnap_take(c, name, &so, &a, &s, &err) != HR_OK ||
        hr_reconcile_node_with(&s.cfg, &s.node, 0, hr_groups_apply, &g, &a, &r, &err) != HR_OK)
        fail_msg("reconcile %s: %s", name, err.msg);
    for (size_t i = 0; i < s.node.n; i++) {
        snprintf(out[i].name, sizeof out[i].name, "%s", s.node.pods[i].name);
        out[i].target = r.pods[i].target;
        out[i].write = r.pods[i].write;
        out[i].own = g.own_target[i];
    }
    if (planned != NULL)
        *planned += g.planned;
    size_t k = s.node.n;
    hr_arena_free(&a);
    return k;
}

/* Every member's node planned through m gives what it gets afresh. */
static size_t same_as_afresh(hr_cache *c, hr_nodememo *m, int64_t now_ms)
{
    size_t planned = 0;
    for (int n = 0; n < 6; n++) {
        verdict with[8], without[8];
        size_t k = plan_node(c, n, m, now_ms, with, &planned);
        assert_int_equal(plan_node(c, n, NULL, now_ms, without, NULL), k);
        for (size_t i = 0; i < k; i++) {
            assert_string_equal(with[i].name, without[i].name);
            if (with[i].target != without[i].target || with[i].write != without[i].write ||
                with[i].own != without[i].own)
                fail_msg("n%d %s: memo %lld/%d/%lld, afresh %lld/%d/%lld", n, with[i].name,
                         (long long)with[i].target, with[i].write, (long long)with[i].own,
                         (long long)without[i].target, without[i].write, (long long)without[i].own);
        }
    }
    return planned;
}

static void versions_follow_changes(void **state)
{
    (void)state;
    hr_cache *c = gang_cache();
    hr_cache_lock(c);
    uint64_t v1 = hr_cache_node_version(c, "n1"), v2 = hr_cache_node_version(c, "n2");
    uint64_t none = hr_cache_node_version(c, "no-such-node");
    hr_cache_unlock(c);
    put_pod(c, "other", "newcomer", 1, 500, false);
    hr_cache_lock(c);
    assert_true(hr_cache_node_version(c, "n1") != v1);
    assert_int_equal(hr_cache_node_version(c, "n2"), v2);
    assert_int_equal(hr_cache_node_version(c, "no-such-node"), none);
    hr_cache_unlock(c);
    /* A config change is every node's. */
    put(c, HR_CK_CONFIG,
        "{\"metadata\":{\"name\":\"cluster\",\"resourceVersion\":\"2\",\"uid\":\"c\"},"
        "\"spec\":{\"dryRun\":false,\"policy\":\"TenantFair\"}}");
    hr_cache_lock(c);
    assert_true(hr_cache_node_version(c, "n2") != v2);
    hr_cache_unlock(c);
    hr_cache_free(c);
}

static void memo_matches_afresh(void **state)
{
    (void)state;
    hr_cache *c = gang_cache();
    hr_nodememo *m = hr_nodememo_new(0, 60000);
    assert_non_null(m);
    /* First round: every other node planned once, then reused. */
    size_t planned = same_as_afresh(c, m, 1000);
    assert_int_equal(planned, 6);
    /* A pod lands beside train-0: only n0 is planned again. */
    put_pod(c, "other", "neighbour", 0, 8000, false);
    assert_int_equal(same_as_afresh(c, m, 2000), 1);
    /* Nothing changed: nothing planned. */
    assert_int_equal(same_as_afresh(c, m, 3000), 0);
    /* Too old: planned again. */
    assert_int_equal(same_as_afresh(c, m, 3000 + 61000), 6);
    hr_nodememo_stats st;
    hr_nodememo_get_stats(m, &st);
    assert_int_equal(st.entries, 6);
    hr_nodememo_free(m);
    hr_cache_free(c);
}

static hr_memo_node *entry_for(const char *name, uint64_t version)
{
    hr_memo_node *e = hr_nodememo_entry();
    assert_non_null(e);
    e->s.node.name = hr_arena_strdup(&e->a, name);
    e->s.version = version;
    e->planned_ms = 100;
    return e;
}

/* The table: replace, evict the oldest, references keep an entry alive
 * (ASan sees a use after free or a leak). */
static void table(void **state)
{
    (void)state;
    hr_nodememo *m = hr_nodememo_new(2, 1000);
    hr_memo_node *a = entry_for("a", 7);
    hr_nodememo_put(m, a);
    assert_ptr_equal(hr_nodememo_get(m, "a", 7, 0, 500), a);
    hr_nodememo_release(m, a);
    assert_null(hr_nodememo_get(m, "a", 8, 0, 500));  /* another version */
    assert_null(hr_nodememo_get(m, "a", 7, 1, 500));  /* a back-off moved */
    assert_null(hr_nodememo_get(m, "a", 7, 0, 1200)); /* too old */
    /* A newer plan of a replaces it; the old one lives while referenced. */
    hr_memo_node *a2 = entry_for("a", 9);
    hr_nodememo_put(m, a2);
    assert_null(hr_nodememo_get(m, "a", 7, 0, 500));
    assert_string_equal(a->s.node.name, "a"); /* still ours */
    hr_nodememo_release(m, a);                /* freed now */
    hr_nodememo_release(m, a2);
    /* Over the cap: the oldest put goes. */
    hr_memo_node *b = entry_for("b", 1), *c = entry_for("c", 1);
    hr_nodememo_put(m, b);
    hr_nodememo_put(m, c);
    assert_null(hr_nodememo_get(m, "a", 9, 0, 500));
    hr_memo_node *got = hr_nodememo_get(m, "c", 1, 0, 500);
    assert_ptr_equal(got, c);
    hr_nodememo_release(m, got);
    hr_nodememo_release(m, b);
    hr_nodememo_release(m, c);
    hr_nodememo_stats st;
    hr_nodememo_get_stats(m, &st);
    assert_int_equal(st.entries, 2);
    hr_nodememo_free(m);
}

/* Threads: four reconcilers share one memo while pods land (the
 * ThreadSanitizer build proves the table's lock and the entries' read-only
 * sharing; the plain build, that nothing crashes or leaks). */
typedef struct racer {
    hr_cache *c;
    hr_nodememo *m;
    int seed;
} racer;

static void *racer_main(void *ud)
{
    racer *x = ud;
    unsigned r = (unsigned)x->seed;
    for (int i = 0; i < 150; i++) {
        verdict v[16];
        r = r * 1103515245u + 12345u;
        (void)plan_node(x->c, (int)((r >> 16) % 6), x->m, 1000 + i, v, NULL);
    }
    return NULL;
}

static void shared_by_threads(void **state)
{
    (void)state;
    hr_cache *c = gang_cache();
    hr_nodememo *m = hr_nodememo_new(4, 60000);
    pthread_t t[4];
    racer x[4];
    for (int i = 0; i < 4; i++) {
        x[i] = (racer){c, m, i + 1};
        assert_int_equal(pthread_create(&t[i], NULL, racer_main, &x[i]), 0);
    }
    for (int i = 0; i < 20; i++) {
        char name[32];
        snprintf(name, sizeof name, "churn-%d", i);
        put_pod(c, "other", name, i % 6, 100, false);
    }
    for (int i = 0; i < 4; i++)
        pthread_join(t[i], NULL);
    (void)same_as_afresh(c, m, 5000); /* every answer still the fresh one */
    hr_nodememo_free(m);
    hr_cache_free(c);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(versions_follow_changes),
        cmocka_unit_test(memo_matches_afresh),
        cmocka_unit_test(table),
        cmocka_unit_test(shared_by_threads),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
