/*
 * fuzz_objects.c — libFuzzer target for the small decoders: Node,
 * Namespace, LimitRange, ResourceQuota, VerticalPodAutoscaler,
 * HeadroomConfig (spec and status), each run on the same arbitrary JSON.
 *
 * A VPA that decodes must give a writer name and exceptions the rule can
 * read: each name followed by ',', none empty, none "*"; every listed
 * container answers the other way round from the default.
 *
 * An error must say something on one line; a HeadroomConfig status that
 * decodes must give a status body (cfgstatus.h) that is valid JSON and,
 * read back as the API server would store it, needs no further write.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <yyjson.h>

#include "controller/cfgstatus.h"
#include "kube/decode/decode.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void check_err(hr_status st, const hr_err *err)
{
    if (st && (!err->msg[0] || strchr(err->msg, '\n')))
        abort();
}

static void status_round_trip(const hr_kcfg_status *obs, hr_arena *a)
{
    const char *ns[] = {"a", "b\"c"};
    hr_cfgstatus_in in = {
        .generation = obs->generation >= 0 ? obs->generation : 0,
        .gen_in_force = obs->observed_generation,
        .invalid = obs->n_cond ? obs->cond[0].message : NULL,
        .managed_pods = obs->managed_pods >= 0 ? obs->managed_pods : 0,
        .managed_nodes = 3,
        .quota_ns = ns,
        .n_quota_ns = obs->n_cond % 3,
        .observed = obs,
        .now_unix = 1796025600,
    };
    hr_buf b;
    hr_buf_init(&b, 0);
    hr_cfgstatus_build(&in, &b);
    if (hr_buf_failed(&b))
        abort();
    yyjson_doc *d = yyjson_read(hr_buf_str(&b), b.len, 0);
    if (!d)
        abort(); /* the body must be JSON whatever the messages hold */
    /* As stored: the same generation in metadata. */
    yyjson_mut_doc *m = yyjson_doc_mut_copy(d, NULL);
    yyjson_mut_val *meta = yyjson_mut_obj_get(yyjson_mut_doc_get_root(m), "metadata");
    yyjson_mut_obj_add_int(m, meta, "generation", in.generation);
    yyjson_doc *stored = yyjson_mut_doc_imut_copy(m, NULL);
    hr_kcfg_status back;
    hr_err err;
    if (!stored || hr_decode_config_status(yyjson_doc_get_root(stored), a, &back, &err) != HR_OK)
        abort();
    in.observed = &back;
    in.now_unix += 1000;
    hr_buf b2;
    hr_buf_init(&b2, 0);
    if (hr_cfgstatus_build(&in, &b2) != HR_CFGST_SAME)
        abort();
    hr_buf_free(&b2);
    yyjson_doc_free(stored);
    yyjson_mut_doc_free(m);
    yyjson_doc_free(d);
    hr_buf_free(&b);
}

static void vpa_check(const hr_kvpa *v)
{
    const hr_vpa *x = &v->vpa;
    if (!x->writer || !x->target_name || !x->exceptions ||
        strncmp(x->writer, HR_VPA_WRITER_PREFIX, strlen(HR_VPA_WRITER_PREFIX)) != 0)
        abort();
    char name[256];
    for (const char *e = x->exceptions; *e;) {
        const char *end = strchr(e, ',');
        if (!end || end == e)
            abort(); /* every name is followed by ',' and none is empty */
        size_t l = (size_t)(end - e);
        if (l == 1 && e[0] == '*')
            abort();
        if (l < sizeof name) {
            memcpy(name, e, l);
            name[l] = '\0';
            if (hr_vpa_controls(x, name) == x->dflt_limits)
                abort();
        }
        e = end + 1;
    }
    hr_vpa_owner o = {"ReplicaSet", "apps", "web-abc", "abc"};
    (void)hr_vpa_targets(x, &o);
}

static void decode_all(yyjson_val *root)
{
    hr_arena a;
    hr_arena_init(&a, 1024);
    hr_arena_set_limit(&a, 16 << 20);
    hr_err err;
    hr_knode n;
    hr_knamespace ns;
    hr_klimitrange lr;
    hr_kquota q;
    hr_kconfig c;
    hr_kcfg_status cs;
    check_err(hr_decode_node(root, &a, &n, &err), &err);
    check_err(hr_decode_namespace(root, &a, &ns, &err), &err);
    check_err(hr_decode_limitrange(root, &a, &lr, &err), &err);
    check_err(hr_decode_resourcequota(root, &a, &q, &err), &err);
    hr_kvpa v;
    hr_status vst = hr_decode_vpa(root, &a, &v, &err);
    check_err(vst, &err);
    if (vst == HR_OK)
        vpa_check(&v);
    check_err(hr_decode_config(root, &a, &c, &err), &err);
    hr_status st = hr_decode_config_status(root, &a, &cs, &err);
    check_err(st, &err);
    if (st == HR_OK)
        status_round_trip(&cs, &a);
    hr_arena_free(&a);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    yyjson_doc *d1 = yyjson_read((const char *)data, size, 0);
    if (d1) {
        decode_all(yyjson_doc_get_root(d1));
        yyjson_doc_free(d1);
    }
    yyjson_doc *d2 = yyjson_read((const char *)data, size, YYJSON_READ_NUMBER_AS_RAW);
    if (d2) {
        decode_all(yyjson_doc_get_root(d2));
        yyjson_doc_free(d2);
    }
    return 0;
}
