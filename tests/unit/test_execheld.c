/*
 * test_execheld.c — why a planned write did not go (hr_execute_held;
 * design §9.3, headroom_pod_held): the node's token bucket stops the wave
 * ("rate-limit" for that write and every one after it), a refused write
 * holds the node ("error": 429, 5xx, a transport failure), and a live Node
 * read that fails closes the gate of an increase ("unavailable").
 *
 * The client points at a port where nothing listens (a transport failure
 * at once, the real client and executor): what the real API server answers
 * is the cluster tests'.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include "controller/executor.h"
#include "core/pod.h"
#include "hr_testfile.h"
#include "kube/transport/client.h"

static bool leading(void *ud)
{
    (void)ud;
    return true;
}

static void quiet(void *ud, int level, const char *msg)
{
    (void)ud, (void)level, (void)msg;
}

typedef struct fx {
    char kc[64];
    hr_kclient *k;
    hr_backoff *b;
    hr_ctlmetrics m;
    hr_executor *e;
} fx;

static void mk(fx *f)
{
    assert_int_equal(write_dead_kubeconfig(f->kc, sizeof f->kc, "execheld"), 0);
    hr_kclient_opts ko = {.kubeconfig = f->kc, .timeout_ms = 500};
    hr_err err;
    assert_int_equal(hr_kclient_new(&ko, &f->k, &err), HR_OK);
    assert_int_equal(hr_backoff_new(&f->b, &err), HR_OK);
    hr_ctlmetrics_init(&f->m);
    hr_executor_opts o = {
        .client = f->k, .metrics = &f->m, .backoff = f->b, .leading = leading, .log = quiet};
    assert_int_equal(hr_executor_new(&o, &f->e, &err), HR_OK);
}

static void rm(fx *f)
{
    hr_executor_free(f->e);
    hr_kclient_free(f->k);
    hr_backoff_free(f->b);
    unlink(f->kc);
}

enum { N = 3 };

/* Node `node` with N pods, one resize each (increase: an increase). */
static void run(fx *f, const char *node, bool increase, const char *held[N])
{
    hr_rpod p[N];
    uint64_t rv[N];
    uint8_t uid[N][16];
    hr_action a[N];
    static const char *const names[N] = {"p0", "p1", "p2"};
    memset(uid, 0, sizeof uid);
    for (int i = 0; i < N; i++) {
        p[i] = (hr_rpod){.ns = "ns", .name = names[i], .pod = hr_pod_init()};
        rv[i] = 7;
        uid[i][15] = (uint8_t)(i + 1);
        a[i] = (hr_action){.kind = HR_ACT_RESIZE,
                           .pod = (size_t)i,
                           .current = 2000,
                           .target = increase ? 3000 : 1000,
                           .increase = increase,
                           .apply_body = "{}",
                           .annotation = "{}",
                           .status_patch = "{}",
                           .event_message = "m"};
        held[i] = NULL;
    }
    hr_nodesnap s = {.node = {.name = node, .pods = p, .n = N}, .pod_rv = rv, .pod_uid = uid};
    hr_reconcile r = {.actions = a, .n_actions = N};
    hr_exec_outcome out;
    hr_err err;
    hr_err_clear(&err);
    assert_int_equal(hr_execute_held(f->e, &s, &r, held, &out, &err), HR_OK);
}

static void bucket_and_refusal(void **state)
{
    (void)state;
    fx f;
    mk(&f);
    assert_true(hr_executor_set_node_rate(f.e, 1)); /* one token a node */
    const char *held[N];
    run(&f, "n-dec", false, held);
    /* p0 got the token and was refused (no answer): the node waits its
     * back-off; p1 found the bucket empty, and p2 waits behind it. */
    assert_non_null(held[0]);
    assert_string_equal(held[0], HR_EXEC_HELD_ERROR);
    assert_non_null(held[1]);
    assert_string_equal(held[1], HR_EXEC_HELD_RATE_LIMIT);
    assert_non_null(held[2]);
    assert_string_equal(held[2], HR_EXEC_HELD_RATE_LIMIT);
    rm(&f);
}

static void live_read_fails(void **state)
{
    (void)state;
    fx f;
    mk(&f);
    const char *held[N];
    run(&f, "n-inc", true, held); /* the live Node read fails: no increase goes */
    for (int i = 0; i < N; i++) {
        assert_non_null(held[i]);
        assert_string_equal(held[i], "unavailable");
    }
    rm(&f);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(bucket_and_refusal),
        cmocka_unit_test(live_read_fails),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
