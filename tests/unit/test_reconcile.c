/*
 * test_reconcile.c — a node snapshot becomes the right actions: resizes
 * with their body, annotation and event; dry-run annotations only when the
 * numbers change; increases refused under DiskPressure while decreases go,
 * the held pod's annotation saying why once (then nothing while unchanged);
 * nothing at all written on a node that is not in the cache.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "controller/reconcile.h"
#include "kube/write/status_note.h"

/* Two single-container managed pods on a 16-core node: 1000m with a 2000m
 * limit and 3000m with none. S = 12000, M = 4000: targets 4000 and 12000. */
static hr_container ctr[2];
static hr_rpod pods[2];
static const char *names0[] = {"app"};
static const char *names1[] = {"main"};

static hr_rnode setup_node(void)
{
    ctr[0] = (hr_container){1000, 2000, 100, HR_NONE, HR_CTR_APP, false};
    ctr[1] = (hr_container){3000, HR_NONE, 100, HR_NONE, HR_CTR_APP, false};
    for (int i = 0; i < 2; i++) {
        pods[i] = (hr_rpod){0};
        pods[i].ns = "team-a";
        pods[i].pod = hr_pod_init();
        pods[i].pod.ctr = &ctr[i];
        pods[i].pod.n_ctr = 1;
    }
    pods[0].name = "small";
    pods[0].ctr_names = names0;
    pods[1].name = "big";
    pods[1].ctr_names = names1;
    return (hr_rnode){"n1", {16000, true, false, false, false}, pods, 2};
}

static hr_config live_config(void)
{
    hr_config c;
    hr_config_defaults(&c);
    c.present = true;
    c.dry_run = false;
    return c;
}

static void resizes_with_body_annotation_event(void **state)
{
    (void)state;
    hr_rnode rn = setup_node();
    hr_config c = live_config();
    hr_arena a;
    hr_arena_init(&a, 0);
    hr_reconcile r;
    hr_err err;
    assert_int_equal(hr_reconcile_node(&c, &rn, 1795000000, &a, &r, &err), HR_OK);
    assert_int_equal(r.n_actions, 2);
    assert_int_equal(r.actions[0].kind, HR_ACT_RESIZE);
    assert_int_equal(r.actions[0].target, 4000);
    assert_true(r.actions[0].increase);
    assert_non_null(strstr(r.actions[0].apply_body,
                           "{\"name\":\"app\",\"resources\":{\"limits\":{\"cpu\":\"4\"}}}"));
    assert_string_equal(r.actions[0].event_message,
                        "2000m \xe2\x86\x92 4000m (factor 4.00, slack 12/16 cores)");
    assert_non_null(strstr(r.actions[0].annotation, "\"dryRun\":false"));
    /* The annotation says the limit the resize writes, and no reason. */
    assert_non_null(strstr(r.actions[0].annotation,
                           "\"targetLimit\":\"4000m\",\"limits\":{\"app\":\"4000m\"},"
                           "\"cap\":\"none\""));
    assert_null(strstr(r.actions[0].annotation, "\"reason\""));
    assert_int_equal(r.actions[1].kind, HR_ACT_RESIZE);
    assert_int_equal(r.actions[1].target, 12000);
    assert_false(r.actions[1].increase); /* no limit before: not an increase */
    hr_arena_free(&a);
}

/* The pods carry the annotations of r's actions, as the watch brings them back. */
static void carry_notes(const hr_reconcile *r)
{
    for (size_t i = 0; i < r->n_actions; i++) {
        const char *t = r->actions[i].annotation;
        pods[r->actions[i].pod].status_hash = hr_status_note_hash(t, strlen(t));
        pods[r->actions[i].pod].status_mark = hr_status_note_mark(t, strlen(t));
    }
}

static void dry_run_annotates_only_on_change(void **state)
{
    (void)state;
    hr_rnode rn = setup_node();
    hr_config c;
    hr_config_defaults(&c); /* no HeadroomConfig: dry-run */
    hr_arena a;
    hr_arena_init(&a, 0);
    hr_reconcile r;
    hr_err err;
    assert_int_equal(hr_reconcile_node(&c, &rn, 1795000000, &a, &r, &err), HR_OK);
    assert_int_equal(r.n_actions, 2);
    assert_int_equal(r.actions[0].kind, HR_ACT_ANNOTATE);
    assert_true(r.actions[0].held); /* a live run would resize it: headroom_resizes_total dry-run */
    assert_null(r.actions[0].apply_body);
    assert_non_null(strstr(r.actions[0].annotation, "\"dryRun\":true"));

    /* The pods now carry that annotation: a later reconcile writes nothing. */
    carry_notes(&r);
    hr_reconcile r2;
    assert_int_equal(hr_reconcile_node(&c, &rn, 1795000600, &a, &r2, &err), HR_OK);
    assert_int_equal(r2.n_actions, 0);
    hr_arena_free(&a);
}

/* Dry-run writes a note when a live run would write: the noted target
 * stands for the limit, and the deadband applies to it. The node's
 * figures moving within it rewrite nothing; past it, the note follows. */
static void dry_run_deadband_on_noted_target(void **state)
{
    (void)state;
    hr_rnode rn = setup_node();
    hr_config c;
    hr_config_defaults(&c); /* dry-run; grow 10 %, shrink 5 % */
    hr_arena a;
    hr_arena_init(&a, 0);
    hr_reconcile r;
    hr_err err;
    assert_int_equal(hr_reconcile_node(&c, &rn, 1795000000, &a, &r, &err), HR_OK);
    assert_int_equal(r.n_actions, 2);
    carry_notes(&r);

    /* 16 -> 16.4 cores: targets 4100m and 12300m, 2.5 % up, every figure
     * of the notes changed: no write. */
    rn.node.allocatable = 16400;
    assert_int_equal(hr_reconcile_node(&c, &rn, 1795000060, &a, &r, &err), HR_OK);
    assert_int_equal(r.n_actions, 0);
    /* 16 -> 15.6 cores: targets 3900m and 11700m, 2.5 % down: none either. */
    rn.node.allocatable = 15600;
    assert_int_equal(hr_reconcile_node(&c, &rn, 1795000060, &a, &r, &err), HR_OK);
    assert_int_equal(r.n_actions, 0);
    /* 16 -> 15 cores: 3750m and 11250m, 6.25 % down: both rewritten. */
    rn.node.allocatable = 15000;
    assert_int_equal(hr_reconcile_node(&c, &rn, 1795000120, &a, &r, &err), HR_OK);
    assert_int_equal(r.n_actions, 2);
    assert_int_equal(r.actions[0].kind, HR_ACT_ANNOTATE);
    assert_non_null(strstr(r.actions[0].annotation, "\"targetLimit\":\"3750m\""));
    carry_notes(&r);
    assert_int_equal(hr_reconcile_node(&c, &rn, 1795000180, &a, &r, &err), HR_OK);
    assert_int_equal(r.n_actions, 0);

    /* A note a live run wrote ("dryRun":false) is rewritten once changed,
     * whatever the deadband: it must say dry-run. */
    hr_config live = live_config();
    hr_reconcile rl;
    assert_int_equal(hr_reconcile_node(&live, &rn, 1795000180, &a, &rl, &err), HR_OK);
    carry_notes(&rl);
    assert_int_equal(hr_reconcile_node(&c, &rn, 1795000240, &a, &r, &err), HR_OK);
    assert_int_equal(r.n_actions, 2);
    assert_non_null(strstr(r.actions[0].annotation, "\"dryRun\":true"));
    hr_arena_free(&a);
}

static void pressure_skips_increase_allows_decrease(void **state)
{
    (void)state;
    hr_rnode rn = setup_node();
    ctr[1].cpu_lim = 20000; /* big pod above its target: a decrease */
    rn.node.disk_pressure = true;
    hr_config c = live_config();
    hr_arena a;
    hr_arena_init(&a, 0);
    hr_reconcile r;
    hr_err err;
    assert_int_equal(hr_reconcile_node(&c, &rn, 1795000000, &a, &r, &err), HR_OK);
    assert_int_equal(r.n_actions, 2);
    assert_int_equal(r.actions[0].kind, HR_ACT_SKIP);
    assert_int_equal(r.actions[0].gate, HR_GATE_PRESSURE);
    assert_null(r.actions[0].apply_body);
    /* The held pod's annotation says why, with the target it would get. */
    assert_non_null(r.actions[0].status_patch);
    assert_non_null(strstr(r.actions[0].annotation, "\"targetLimit\":\"4000m\""));
    assert_non_null(strstr(r.actions[0].annotation, "\"reason\":\"pressure\""));
    assert_int_equal(r.actions[1].kind, HR_ACT_RESIZE);
    assert_int_equal(r.actions[1].target, 12000);
    assert_null(strstr(r.actions[1].annotation, "\"reason\""));

    /* The pod now carries that annotation: still held, nothing to send. */
    pods[0].status_hash =
        hr_status_note_hash(r.actions[0].annotation, strlen(r.actions[0].annotation));
    hr_reconcile r2;
    assert_int_equal(hr_reconcile_node(&c, &rn, 1795000600, &a, &r2, &err), HR_OK);
    assert_int_equal(r2.actions[0].kind, HR_ACT_SKIP);
    assert_int_equal(r2.actions[0].gate, HR_GATE_PRESSURE);
    assert_null(r2.actions[0].status_patch);
    assert_null(r2.actions[0].annotation);

    /* The pressure clears and the limit already is the target (inside the
     * deadband): the annotation still says "pressure", so it is rewritten
     * once, without the reason, with the write that goes with it... */
    assert_true(hr_status_note_held(pods[0].status_hash));
    rn.node.disk_pressure = false;
    int64_t held_lim = ctr[0].cpu_lim;
    ctr[0].cpu_lim = 4000;
    hr_reconcile r4;
    assert_int_equal(hr_reconcile_node(&c, &rn, 1795000700, &a, &r4, &err), HR_OK);
    assert_true(r4.n_actions >= 1);
    assert_int_equal(r4.actions[0].pod, 0);
    assert_int_equal(r4.actions[0].kind, HR_ACT_RESIZE);
    assert_null(strstr(r4.actions[0].annotation, "\"reason\""));
    /* ...and then, carrying it, the pod is left alone. */
    uint32_t cleared =
        hr_status_note_hash(r4.actions[0].annotation, strlen(r4.actions[0].annotation));
    assert_false(hr_status_note_held(cleared));
    uint32_t was = pods[0].status_hash;
    pods[0].status_hash = cleared;
    hr_reconcile r5;
    assert_int_equal(hr_reconcile_node(&c, &rn, 1795000800, &a, &r5, &err), HR_OK);
    for (size_t i = 0; i < r5.n_actions; i++)
        assert_int_not_equal(r5.actions[i].pod, 0);
    pods[0].status_hash = was;
    ctr[0].cpu_lim = held_lim;
    rn.node.disk_pressure = true;

    /* Dry-run: the annotation of the held increase says the gate too. */
    hr_config dry;
    hr_config_defaults(&dry);
    hr_reconcile r3;
    assert_int_equal(hr_reconcile_node(&dry, &rn, 1795000000, &a, &r3, &err), HR_OK);
    assert_int_equal(r3.actions[0].kind, HR_ACT_ANNOTATE);
    assert_false(r3.actions[0].held);
    assert_non_null(strstr(r3.actions[0].annotation, "\"reason\":\"pressure\""));
    assert_non_null(strstr(r3.actions[0].annotation, "\"dryRun\":true"));
    pods[0].status_hash = 0;
    hr_arena_free(&a);
}

static void steady_state_writes_nothing(void **state)
{
    (void)state;
    hr_rnode rn = setup_node();
    ctr[0].cpu_lim = 4000;
    ctr[1].cpu_lim = 12500; /* within the 5% shrink deadband of 12000 */
    hr_config c = live_config();
    hr_arena a;
    hr_arena_init(&a, 0);
    hr_reconcile r;
    hr_err err;
    assert_int_equal(hr_reconcile_node(&c, &rn, 1795000000, &a, &r, &err), HR_OK);
    assert_int_equal(r.n_actions, 0);
    hr_arena_free(&a);
}

/* Design §6: a Node that is not in the cache has no known allocatable, so
 * nothing on it is planned or written, in either direction, live or dry-run:
 * a plan with A = 0 would turn every burst into a "decrease". */
static void unknown_node_writes_nothing(void **state)
{
    (void)state;
    hr_rnode rn = setup_node();
    ctr[1].cpu_lim = 20000; /* would be a decrease on a known node */
    rn.node = (hr_node){0};
    hr_config live = live_config(), dry;
    hr_config_defaults(&dry);
    const hr_config *cfgs[] = {&live, &dry};
    for (int k = 0; k < 2; k++) {
        hr_arena a;
        hr_arena_init(&a, 0);
        hr_reconcile r;
        hr_err err;
        assert_int_equal(hr_reconcile_node(cfgs[k], &rn, 1795000000, &a, &r, &err), HR_OK);
        assert_int_equal(r.n_actions, 2); /* one held action per managed pod */
        for (size_t i = 0; i < r.n_actions; i++) {
            assert_int_equal(r.actions[i].kind, HR_ACT_SKIP);
            assert_int_equal(r.actions[i].gate, HR_GATE_NODE_UNKNOWN);
            assert_null(r.actions[i].apply_body);
            assert_null(r.actions[i].status_patch);
            assert_int_equal(r.pods[r.actions[i].pod].target, HR_NONE);
            assert_false(r.pods[r.actions[i].pod].write);
        }
        assert_int_equal(r.limits[0], HR_NONE);
        assert_int_equal(r.limits[1], HR_NONE);
        hr_arena_free(&a);
    }
    assert_string_equal(hr_gate_str(HR_GATE_NODE_UNKNOWN), "node-unknown");
}

/* Design §6: a node whose booking is unknown (an undecodable pod on it, or
 * one that may be anywhere) holds the increase, live and in dry-run; its
 * annotation says booking-unknown without the target figures (the slack is
 * only an upper bound); the decrease goes. */
static void booking_unknown_holds_increases(void **state)
{
    (void)state;
    hr_rnode rn = setup_node();
    ctr[1].cpu_lim = 20000; /* a decrease */
    rn.node.booking_unknown = true;
    hr_config live = live_config(), dry;
    hr_config_defaults(&dry);
    const hr_config *cfgs[] = {&live, &dry};
    for (int k = 0; k < 2; k++) {
        hr_arena a;
        hr_arena_init(&a, 0);
        hr_reconcile r;
        hr_err err;
        assert_int_equal(hr_reconcile_node(cfgs[k], &rn, 1795000000, &a, &r, &err), HR_OK);
        assert_true(r.plan.booking_unknown);
        assert_int_equal(r.n_actions, 2);
        assert_int_equal(r.actions[0].kind, HR_ACT_SKIP);
        assert_int_equal(r.actions[0].gate, HR_GATE_BOOKING_UNKNOWN);
        assert_true(r.actions[0].target > r.actions[0].current);
        assert_null(r.actions[0].apply_body);
        assert_non_null(r.actions[0].status_patch);
        assert_non_null(strstr(r.actions[0].annotation, "\"reason\":\"booking-unknown\""));
        assert_null(strstr(r.actions[0].annotation, "targetLimit"));
        assert_non_null(strstr(r.actions[0].annotation, "\"request\":\"1000m\""));
        assert_int_equal(r.actions[1].kind, k == 0 ? HR_ACT_RESIZE : HR_ACT_ANNOTATE);
        assert_false(r.actions[1].increase);
        hr_arena_free(&a);
    }
}

/* The same pods on the same node once it is known: one increase, one
 * decrease — the held pods above were real writes-to-be. */
static void known_node_writes_both(void **state)
{
    (void)state;
    hr_rnode rn = setup_node();
    ctr[1].cpu_lim = 20000;
    hr_config c = live_config();
    hr_arena a;
    hr_arena_init(&a, 0);
    hr_reconcile r;
    hr_err err;
    assert_int_equal(hr_reconcile_node(&c, &rn, 1795000000, &a, &r, &err), HR_OK);
    assert_int_equal(r.n_actions, 2);
    assert_int_equal(r.actions[0].kind, HR_ACT_RESIZE);
    assert_true(r.actions[0].increase);
    assert_int_equal(r.actions[1].kind, HR_ACT_RESIZE);
    assert_false(r.actions[1].increase);
    hr_arena_free(&a);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(resizes_with_body_annotation_event),
        cmocka_unit_test(dry_run_annotates_only_on_change),
        cmocka_unit_test(dry_run_deadband_on_noted_target),
        cmocka_unit_test(pressure_skips_increase_allows_decrease),
        cmocka_unit_test(steady_state_writes_nothing),
        cmocka_unit_test(unknown_node_writes_nothing),
        cmocka_unit_test(known_node_writes_both),
        cmocka_unit_test(booking_unknown_holds_increases),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
