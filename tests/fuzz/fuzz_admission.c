/*
 * fuzz_admission.c — libFuzzer target for the admission review handler.
 *
 * Beyond "never crash, never leak, never read past the input", it checks
 * what every answer must be: a 200 whose body is an AdmissionReview
 * response (valid JSON, allowed: true, a uid), or a 400 with a message —
 * and a mutation always carries a patch that is itself a JSON array.
 * Each input runs under a live config and a dry-run one, with and without
 * namespace knowledge, so every branch of the rules is reachable.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <yyjson.h>

#include "core/config.h"
#include "core/names.h"
#include "webhook/admission.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static bool lookup(void *ud, const char *ns, hr_arena *a, hr_labels *labels,
                   hr_limit_bounds *bounds)
{
    (void)ud;
    static const char *const managed[] = {HR_LABEL_MODE, HR_MODE_MANAGED};
    if (ns[0] == 'x')
        return false;
    const char **kv = hr_arena_calloc(a, 2, sizeof *kv);
    if (kv == NULL)
        return false;
    kv[0] = managed[0];
    kv[1] = ns[0] == 'u' ? "unmanaged" : managed[1];
    *labels = (hr_labels){kv, 1};
    bounds->ctr_max = ns[0] == 'l' ? 1500 : HR_NONE;
    bounds->ctr_ratio_milli = ns[0] == 'r' ? 1500 : HR_NONE;
    bounds->pod_max = ns[0] == 'p' ? 2500 : HR_NONE;
    return true;
}

static void check(const hr_wh_result *r)
{
    if (r->http_status == 400) {
        if (r->outcome != HR_WH_ERROR || r->body.len == 0)
            abort();
        return;
    }
    if (r->http_status != 200 || r->outcome == HR_WH_ERROR)
        abort();
    yyjson_doc *d = yyjson_read(hr_buf_str(&r->body), r->body.len, 0);
    if (d == NULL)
        abort();
    yyjson_val *resp = yyjson_obj_get(yyjson_doc_get_root(d), "response");
    if (!yyjson_get_bool(yyjson_obj_get(resp, "allowed")) ||
        !yyjson_is_str(yyjson_obj_get(resp, "uid")))
        abort();
    bool has_patch = yyjson_obj_get(resp, "patch") != NULL;
    if (has_patch != (r->outcome == HR_WH_MUTATED))
        abort();
    yyjson_doc_free(d);
    if (r->outcome == HR_WH_MUTATED || r->outcome == HR_WH_DRY_RUN) {
        yyjson_doc *p = yyjson_read(hr_buf_str(&r->patch), r->patch.len, 0);
        if (p == NULL || !yyjson_is_arr(yyjson_doc_get_root(p)) ||
            yyjson_arr_size(yyjson_doc_get_root(p)) == 0)
            abort();
        yyjson_doc_free(p);
    }
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    /* A private copy of exactly size bytes: ASan flags any read past it. */
    char *s = malloc(size ? size : 1);
    if (s == NULL)
        return 0;
    if (size)
        memcpy(s, data, size);
    for (int mode = 0; mode < 3; mode++) {
        hr_config cfg;
        hr_config_defaults(&cfg);
        cfg.dry_run = mode == 1;
        cfg.max_multiplier_milli = mode == 2 ? 0 : 10000;
        cfg.initial_multiplier_milli = mode == 2 ? 1000 : 2000;
        hr_wh_env env = {.cfg = &cfg, .own_ns = "headroom", .ns_lookup = mode == 0 ? lookup : NULL};
        hr_wh_result r;
        hr_err err;
        if (hr_admission_review(&env, s, size, &r, &err) == HR_OK)
            check(&r);
        hr_wh_result_free(&r);
    }
    free(s);
    return 0;
}
