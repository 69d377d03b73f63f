/*
 * test_execconc.c — writes in flight (executor.h, wpool.h, notes.h; design
 * §5): a wave's writes go to the API server at once, up to the write
 * concurrency and no further, and never two writes for one pod at once —
 * neither a resize beside its pod's note nor two notes of one pod.
 *
 * The API server here is a stand-in that answers every request after
 * 100 ms on its own thread per connection (plain HTTP/1.1 on loopback, the
 * real client, the real executor and notes queue) and counts what it holds
 * at once: in all, and per pod (the pod's name from the path, an event's
 * from the object it is about). What the
 * controller does against the real API server is the cluster tests
 * (bench_scale in bench/cluster, tests/e2e/e2e_limits_first.sh,
 * e2e_leader*).
 */
#include <arpa/inet.h>
#include <netinet/in.h>
#include <pthread.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include <cmocka.h>

#include "controller/executor.h"
#include "controller/notes.h"
#include "controller/wpool.h"
#include "util/clock.h"

#define PODS 16
#define CONC 8
#define HOLD_MS 100

/* ------------------------------------------------------------ the server */

typedef struct server {
    int lfd, port;
    pthread_t acceptor;
    pthread_mutex_t mu;
    int now, peak;     /* requests held at once, most ever */
    int pod_now[PODS]; /* per pod p<i> */
    int overlaps;      /* a pod's request came while another of it was held */
    int requests;
    atomic_bool done;
} server;

static server g_srv;

typedef struct conn {
    server *s;
    int fd;
} conn;

/* The pod index a request is about: the path's (/api/v1/namespaces/ns/
 * pods/p<i>[/resize]), or an event's "regarding" object's; -1: none. */
static int pod_of(const char *path, const char *body)
{
    const char *p = strstr(path, "/pods/p");
    int i = -1;
    if (p != NULL) {
        i = atoi(p + 7);
    } else if ((p = strstr(body, "\"regarding\":{")) != NULL &&
               (p = strstr(p, "\"name\":\"p")) != NULL) {
        i = atoi(p + 9);
    }
    return i >= 0 && i < PODS ? i : -1;
}

static void hold(server *s, int pod, int d)
{
    pthread_mutex_lock(&s->mu);
    if (d > 0) {
        s->requests++;
        if (++s->now > s->peak)
            s->peak = s->now;
        if (pod >= 0 && s->pod_now[pod]++ > 0)
            s->overlaps++;
    } else {
        s->now--;
        if (pod >= 0)
            s->pod_now[pod]--;
    }
    pthread_mutex_unlock(&s->mu);
}

static void *conn_main(void *ud)
{
    conn *c = ud;
    char buf[16384];
    size_t have = 0;
    for (;;) {
        char *end = NULL;
        while ((end = memmem(buf, have, "\r\n\r\n", 4)) == NULL) {
            ssize_t n = recv(c->fd, buf + have, sizeof buf - have - 1, 0);
            if (n <= 0 || have + (size_t)n >= sizeof buf - 1)
                goto out;
            have += (size_t)n;
        }
        size_t head = (size_t)(end - buf) + 4;
        buf[have] = 0;
        char path[512] = "";
        if (sscanf(buf, "%*s %511s", path) != 1)
            goto out;
        size_t body = 0;
        const char *cl = strcasestr(buf, "\r\nContent-Length:");
        if (cl != NULL && cl < end)
            body = (size_t)strtoul(cl + 17, NULL, 10);
        const char *ex = strcasestr(buf, "\r\nExpect: 100-continue");
        if (ex != NULL && ex < end && send(c->fd, "HTTP/1.1 100 Continue\r\n\r\n", 25, 0) < 0)
            goto out;
        while (have < head + body) {
            ssize_t n = recv(c->fd, buf + have, sizeof buf - have - 1, 0);
            if (n <= 0 || have + (size_t)n >= sizeof buf - 1)
                goto out;
            have += (size_t)n;
        }
        char saved = buf[head + body];
        buf[head + body] = 0;
        int pod = pod_of(path, buf + head);
        buf[head + body] = saved;
        hold(c->s, pod, 1);
        /* An annotation (a PATCH of the pod itself) takes longer: a note
         * then overlaps the next wave's resize of its pod unless kept
         * apart. */
        bool annotation = strstr(buf, "PATCH ") == buf && strstr(path, "/resize") == NULL;
        hr_mono_sleep_ms(annotation ? 3 * HOLD_MS / 2 : HOLD_MS);
        hold(c->s, pod, -1);
        static const char obj[] = "{\"metadata\":{\"resourceVersion\":\"9\"}}";
        char resp[256];
        int rn = snprintf(resp, sizeof resp,
                          "HTTP/1.1 200 OK\r\nContent-Type: application/json\r\n"
                          "Content-Length: %zu\r\n\r\n%s",
                          sizeof obj - 1, obj);
        if (send(c->fd, resp, (size_t)rn, MSG_NOSIGNAL) != rn)
            goto out;
        memmove(buf, buf + head + body, have - head - body);
        have -= head + body;
    }
out:
    close(c->fd);
    free(c);
    return NULL;
}

static void *accept_main(void *ud)
{
    server *s = ud;
    while (!atomic_load(&s->done)) {
        int fd = accept(s->lfd, NULL, NULL);
        if (fd < 0)
            break;
        conn *c = malloc(sizeof *c);
        pthread_t th;
        if (c == NULL) {
            close(fd);
            continue;
        }
        *c = (conn){s, fd};
        if (pthread_create(&th, NULL, conn_main, c) != 0) {
            close(fd);
            free(c);
            continue;
        }
        pthread_detach(th);
    }
    return NULL;
}

static void server_start(server *s)
{
    memset(s, 0, sizeof *s);
    assert_int_equal(pthread_mutex_init(&s->mu, NULL), 0);
    s->lfd = socket(AF_INET, SOCK_STREAM, 0);
    assert_true(s->lfd >= 0);
    struct sockaddr_in a = {.sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
    socklen_t al = sizeof a;
    assert_int_equal(bind(s->lfd, (struct sockaddr *)&a, sizeof a), 0);
    assert_int_equal(listen(s->lfd, 64), 0);
    assert_int_equal(getsockname(s->lfd, (struct sockaddr *)&a, &al), 0);
    s->port = ntohs(a.sin_port);
    assert_int_equal(pthread_create(&s->acceptor, NULL, accept_main, s), 0);
}

static void server_stop(server *s)
{
    atomic_store(&s->done, true);
    shutdown(s->lfd, SHUT_RDWR);
    close(s->lfd);
    pthread_join(s->acceptor, NULL);
    /* Connection threads end with the client's connections (freed with it). */
}

static void server_counts(server *s, int *peak, int *overlaps, int *requests)
{
    pthread_mutex_lock(&s->mu);
    *peak = s->peak;
    *overlaps = s->overlaps;
    *requests = s->requests;
    s->peak = s->now;
    pthread_mutex_unlock(&s->mu);
}

/* ------------------------------------------------------------ the wave */

typedef struct fx {
    char kc[64];
    hr_kclient *k;
    hr_ctlmetrics m;
    hr_executor *e;
    hr_notes *notes;
    char names[PODS][8];
    hr_rpod pods[PODS];
    uint64_t rv[PODS];
    uint8_t uid[PODS][16];
    hr_action act[PODS];
} fx;

static void quiet(void *ud, int level, const char *msg)
{
    (void)ud, (void)level, (void)msg;
}

static void fx_open(fx *f, int concurrency, bool with_notes)
{
    server_start(&g_srv);
    snprintf(f->kc, sizeof f->kc, "/tmp/hr-execconc-%d.yaml", (int)getpid());
    FILE *fp = fopen(f->kc, "w");
    assert_non_null(fp);
    fprintf(fp,
            "current-context: x\ncontexts:\n- name: x\n  context: {cluster: c, user: u}\n"
            "clusters:\n- name: c\n  cluster: {server: 'http://127.0.0.1:%d'}\n"
            "users:\n- name: u\n  user: {token: t}\n",
            g_srv.port);
    assert_int_equal(fclose(fp), 0);
    hr_kclient_opts ko = {.kubeconfig = f->kc, .timeout_ms = 10000};
    hr_err err;
    assert_int_equal(hr_kclient_new(&ko, &f->k, &err), HR_OK);
    hr_kclient_set_rate(f->k, 1000, 100); /* the pool is under test, not the limiter */
    hr_ctlmetrics_init(&f->m);
    hr_executor_opts o = {
        .client = f->k, .metrics = &f->m, .write_concurrency = concurrency, .log = quiet};
    assert_int_equal(hr_executor_new(&o, &f->e, &err), HR_OK);
    hr_executor_set_node_rate(f->e, 1000);
    if (with_notes) {
        assert_int_equal(
            hr_notes_start(f->k, hr_executor_send_note, f->e, concurrency, &f->notes, &err), HR_OK);
        hr_executor_set_notes(f->e, f->notes);
    }
    for (int i = 0; i < PODS; i++) {
        snprintf(f->names[i], sizeof f->names[i], "p%d", i);
        f->pods[i] = (hr_rpod){.ns = "ns", .name = f->names[i], .pod = hr_pod_init()};
        f->rv[i] = 9;
        f->uid[i][15] = (uint8_t)(i + 1);
        /* Decreases: no live Node read, no gate. */
        f->act[i] = (hr_action){.kind = HR_ACT_RESIZE,
                                .pod = (size_t)i,
                                .current = 2000,
                                .target = 1000,
                                .apply_body = "{}",
                                .status_patch = "{}",
                                .event_message = "2000m -> 1000m"};
    }
}

static void fx_close(fx *f)
{
    hr_notes_stop(f->notes);
    hr_executor_free(f->e);
    hr_kclient_free(f->k);
    server_stop(&g_srv);
    unlink(f->kc);
}

/* The fixture is cmocka's state, opened by a setup and closed by the
 * teardown, which cmocka runs also when a test fails: a failed test's
 * server and client never stay open into the next test. */
static int fx_setup(void **state, bool with_notes)
{
    fx *f = calloc(1, sizeof *f);
    assert_non_null(f);
    *state = f;
    fx_open(f, CONC, with_notes);
    return 0;
}
static int setup_plain(void **state)
{
    return fx_setup(state, false);
}
static int setup_notes(void **state)
{
    return fx_setup(state, true);
}
static int teardown(void **state)
{
    fx *f = *state;
    fx_close(f);
    free(f);
    return 0;
}

static hr_exec_outcome run_wave(fx *f)
{
    hr_nodesnap s = {
        .node = {.name = "n1", .pods = f->pods, .n = PODS}, .pod_rv = f->rv, .pod_uid = f->uid};
    hr_reconcile r = {.actions = f->act, .n_actions = PODS};
    hr_exec_outcome out;
    hr_err err;
    hr_err_clear(&err);
    assert_int_equal(hr_execute(f->e, &s, &r, &out, &err), HR_OK);
    return out;
}

/* Without notes each pod's three writes (resize, annotation, event) follow
 * each other in one item: 16 pods × 350 ms is 5.6 s one at a time, and
 * 0.7 s eight at a time. */
static void wave_writes_in_flight(void **state)
{
    fx *f = *state;
    int64_t t0 = hr_mono_ms();
    hr_exec_outcome out = run_wave(f);
    int64_t took = hr_mono_ms() - t0;
    assert_int_equal(out.writes, 3 * PODS);
    assert_int_equal(out.requeue_ms, -1);
    int peak, overlaps, requests;
    server_counts(&g_srv, &peak, &overlaps, &requests);
    assert_int_equal(requests, 3 * PODS);
    if (peak < CONC / 2 || peak > CONC)
        fail_msg("%d requests held at once, want %d (at least %d, never more)", peak, CONC,
                 CONC / 2);
    assert_true(hr_executor_write_peak(f->e) <= CONC);
    assert_int_equal(overlaps, 0);
    if (took > 3 * PODS * HOLD_MS / 2)
        fail_msg("the wave took %lld ms: one write at a time is %d ms", (long long)took,
                 PODS * 7 * HOLD_MS / 2);
}

/* With notes (limits first) and two waves of the same pods back to back:
 * the second wave's resizes come while the first wave's notes (annotation,
 * event) are being sent, by as many senders as writes in flight. No pod
 * ever has two requests held at once, and the notes also go at once. */
static void notes_and_resizes_apart_per_pod(void **state)
{
    fx *f = *state;
    hr_exec_outcome a = run_wave(f);
    hr_exec_outcome b = run_wave(f);
    assert_int_equal(a.writes, PODS);
    assert_int_equal(b.writes, PODS);
    int64_t until = hr_mono_ms() + 10000;
    while (hr_notes_pending(f->notes) > 0 && hr_mono_ms() < until) {
        hr_mono_sleep_ms(20);
    }
    hr_notes_stop(f->notes); /* the notes in hand are finished */
    f->notes = NULL;
    int peak, overlaps, requests;
    server_counts(&g_srv, &peak, &overlaps, &requests);
    assert_int_equal(overlaps, 0);
    /* 32 resizes, then 16 to 32 notes (a newer one replaces one not yet
     * taken) of two writes each. */
    if (requests < 2 * PODS + 2 * PODS || requests > 2 * PODS + 4 * PODS)
        fail_msg("%d requests", requests);
    if (peak < CONC / 2)
        fail_msg("%d requests held at once, want at least %d", peak, CONC / 2);
}

/* Dry-run (design §9.3): a wave of annotations only. Each one that stands
 * for a resize a live run would write counts in headroom_resizes_total
 * {result="dry-run"}; a held one (a gate) does not; no resize is sent. The
 * series is on the page from the start, at 0. */
static void dry_run_counted(void **state)
{
    fx *f = *state;
    hr_buf page;
    hr_buf_init(&page, 0);
    hr_ctlmetrics_render(&f->m, &page);
    assert_non_null(strstr(hr_buf_str(&page), "\nheadroom_resizes_total{result=\"dry-run\"} 0\n"));
    int held = 0;
    for (int i = 0; i < PODS; i++) {
        f->act[i].kind = HR_ACT_ANNOTATE;
        f->act[i].apply_body = f->act[i].event_message = NULL;
        f->act[i].held = i % 4 != 0;
        held += f->act[i].held;
    }
    hr_exec_outcome out = run_wave(f);
    assert_int_equal(out.writes, PODS);
    assert_int_equal(atomic_load(&f->m.resizes[HR_RES_DRY_RUN]), held);
    assert_int_equal(atomic_load(&f->m.resizes[HR_RES_APPLIED]), 0);
    assert_int_equal(atomic_load(&f->m.writes[HR_WK_RESIZE]), 0);
    hr_buf_reset(&page);
    hr_ctlmetrics_render(&f->m, &page);
    char want[64];
    snprintf(want, sizeof want, "\nheadroom_resizes_total{result=\"dry-run\"} %d\n", held);
    assert_non_null(strstr(hr_buf_str(&page), want));
    hr_buf_free(&page);
}

/* The pool alone: items of two callers' batches share its threads, at most
 * its size at once, and every item runs exactly once. */
typedef struct tally {
    pthread_mutex_t mu;
    int now, peak;
    _Atomic int ran[64];
} tally;

static void item(void *ud, size_t i)
{
    tally *t = ud;
    pthread_mutex_lock(&t->mu);
    if (++t->now > t->peak)
        t->peak = t->now;
    pthread_mutex_unlock(&t->mu);
    hr_mono_sleep_ms(5);
    atomic_fetch_add(&t->ran[i], 1);
    pthread_mutex_lock(&t->mu);
    t->now--;
    pthread_mutex_unlock(&t->mu);
}

typedef struct caller {
    hr_wpool *p;
    tally *t;
} caller;

static void *caller_main(void *ud)
{
    caller *c = ud;
    hr_wpool_run(c->p, item, c->t, 32);
    return NULL;
}

static void pool_bounds_and_runs_each_once(void **state)
{
    (void)state;
    hr_wpool *p = NULL;
    hr_err err;
    assert_int_equal(hr_wpool_start(4, &p, &err), HR_OK);
    assert_int_equal(hr_wpool_threads(p), 4);
    tally t1 = {0}, t2 = {0};
    assert_int_equal(pthread_mutex_init(&t1.mu, NULL), 0);
    assert_int_equal(pthread_mutex_init(&t2.mu, NULL), 0);
    caller c1 = {p, &t1}, c2 = {p, &t2};
    pthread_t a, b;
    assert_int_equal(pthread_create(&a, NULL, caller_main, &c1), 0);
    assert_int_equal(pthread_create(&b, NULL, caller_main, &c2), 0);
    pthread_join(a, NULL);
    pthread_join(b, NULL);
    for (int i = 0; i < 32; i++) {
        assert_int_equal(atomic_load(&t1.ran[i]), 1);
        assert_int_equal(atomic_load(&t2.ran[i]), 1);
    }
    assert_true(t1.peak + t2.peak >= 2);
    assert_true(hr_wpool_peak(p) <= 4);
    assert_true(hr_wpool_peak(p) >= 2);
    hr_wpool_stop(p);
    /* NULL: inline, in order. */
    tally t3 = {0};
    assert_int_equal(pthread_mutex_init(&t3.mu, NULL), 0);
    hr_wpool_run(NULL, item, &t3, 8);
    assert_int_equal(t3.peak, 1);
    for (int i = 0; i < 8; i++)
        assert_int_equal(atomic_load(&t3.ran[i]), 1);
    pthread_mutex_destroy(&t1.mu);
    pthread_mutex_destroy(&t2.mu);
    pthread_mutex_destroy(&t3.mu);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(pool_bounds_and_runs_each_once),
        cmocka_unit_test_setup_teardown(wave_writes_in_flight, setup_plain, teardown),
        cmocka_unit_test_setup_teardown(notes_and_resizes_apart_per_pod, setup_notes, teardown),
        cmocka_unit_test_setup_teardown(dry_run_counted, setup_plain, teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
