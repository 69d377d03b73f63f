/*
 * statusnote.c — the status annotation's JSON into hr_knote, every field
 * checked for its type and, for the words a terminal will show, their
 * alphabet.
 */
#include "kube/decode/statusnote.h"

#include <string.h>
#include <yyjson.h>

#include "core/quantity.h"
#include "kube/decode/common.h"

static const char *const cap_words[HR_KNOTE_CAP_COUNT_] = {
    [HR_KNOTE_CAP_MULTIPLIER] = "multiplier",
    [HR_KNOTE_CAP_ALLOCATABLE] = "allocatable",
    [HR_KNOTE_CAP_MAX_CPU] = "max-cpu",
    [HR_KNOTE_CAP_LIMITRANGE] = "limitrange",
};

const char *hr_knote_cap_str(hr_knote_cap k)
{
    return (unsigned)k < HR_KNOTE_CAP_COUNT_ ? cap_words[k] : "?";
}

/* A word from the input, safe to print: 1–63 characters of alpha. */
static hr_status word(const hr_kctx *c, const hr_jpath *p, yyjson_val *v, const char *alpha,
                      const char **out)
{
    hr_status st = hr_jstr(c, p, v, "", out);
    if (st || !v || yyjson_is_null(v))
        return st;
    size_t n = strlen(*out);
    if (n == 0 || n > 63 || strspn(*out, alpha) != n)
        return hr_kfail(c, p, HR_E_INPUT, "not a word of [%s], 1 to 63 long", alpha);
    return HR_OK;
}

#define TOKEN "abcdefghijklmnopqrstuvwxyz0123456789.-"
#define TIME "0123456789TZ:.+-"

static hr_status cpu(const hr_kctx *c, const hr_jpath *up, yyjson_val *o, const char *key,
                     int64_t *out)
{
    hr_jpath p = HR_JP_KEY(up, key);
    return hr_jquantity(c, &p, hr_jget(o, key), HR_QK_CPU, out);
}

static hr_status count(const hr_kctx *c, yyjson_val *o, const char *key, int64_t *out)
{
    hr_jpath p = HR_JP_KEY(NULL, key);
    *out = -1;
    return hr_jint(c, &p, hr_jget(o, key), 0, INT64_MAX, out);
}

static hr_status limits(const hr_kctx *c, yyjson_val *root, hr_knote *out)
{
    hr_jpath pl = HR_JP_KEY(NULL, "limits");
    yyjson_val *o;
    hr_status st = hr_jobj(c, &pl, hr_jget(root, "limits"), &o);
    if (st || o == NULL)
        return st;
    if (yyjson_obj_size(o) > HR_KNOTE_LIMITS_MAX)
        return hr_kfail(c, &pl, HR_E_INPUT, "%zu containers, at most %d", yyjson_obj_size(o),
                        HR_KNOTE_LIMITS_MAX);
    size_t i, max;
    yyjson_val *k, *v;
    yyjson_obj_foreach(o, i, max, k, v)
    {
        hr_knote_limit *l = &out->limits[out->n_limits];
        hr_jpath pk = HR_JP_KEY(&pl, "(name)");
        if ((st = word(c, &pk, k, TOKEN, &l->container)))
            return st;
        hr_jpath pv = HR_JP_KEY(&pl, l->container);
        if ((st = hr_jquantity(c, &pv, v, HR_QK_CPU, &l->milli)))
            return st;
        if (l->milli == HR_NONE)
            return hr_kfail(c, &pv, HR_E_INPUT, "expected a quantity string, got null");
        out->n_limits++;
    }
    return HR_OK;
}

static hr_status caps(const hr_kctx *c, yyjson_val *root, hr_knote *out)
{
    hr_jpath pc = HR_JP_KEY(NULL, "caps");
    yyjson_val *o;
    hr_status st = hr_jobj(c, &pc, hr_jget(root, "caps"), &o);
    for (int k = 0; k < HR_KNOTE_CAP_COUNT_ && !st; k++)
        st = cpu(c, &pc, o, cap_words[k], &out->caps[k]);
    return st;
}

static const char *const v2_keys[] = {
    "allocatable", "booked", "managedPods", "request", "floor",  "burst",        "targetLimit",
    "limits",      "cap",    "capLimit",    "caps",    "reason", "limitsOmitted"};

hr_status hr_decode_status_note(const char *text, size_t len, const char *ns, const char *name,
                                hr_arena *a, hr_knote *out, hr_err *err)
{
    hr_kctx c = {a, err, "status annotation of pod", ns, name};
    memset(out, 0, sizeof *out);
    out->version = 1;
    out->dry_run = -1;
    out->computed_at = out->policy = out->cap = out->reason = "";
    yyjson_read_err re;
    yyjson_doc *d = yyjson_read_opts((char *)(uintptr_t)text, len, 0, NULL, &re);
    if (d == NULL)
        return hr_kfail(&c, NULL, HR_E_INPUT, "not JSON at byte %zu: %s", re.pos, re.msg);
    yyjson_val *root = yyjson_doc_get_root(d);
    hr_status st = HR_OK;
    if (!yyjson_is_obj(root)) {
        st = hr_kfail(&c, NULL, HR_E_INPUT, "expected an object, got %s", hr_jtype_str(root));
        goto out;
    }
    for (size_t k = 0; k < sizeof v2_keys / sizeof v2_keys[0]; k++)
        if (yyjson_obj_get(root, v2_keys[k]))
            out->version = 2;
    hr_jpath pf = HR_JP_KEY(NULL, "factor"), pcap = HR_JP_KEY(NULL, "cap");
    hr_jpath pr = HR_JP_KEY(NULL, "reason"), pt = HR_JP_KEY(NULL, "computedAt");
    hr_jpath pp = HR_JP_KEY(NULL, "policy"), pd = HR_JP_KEY(NULL, "dryRun");
    bool dry = false;
    yyjson_val *dv = yyjson_obj_get(root, "dryRun");
    if ((st = hr_jquantity(&c, &pf, yyjson_obj_get(root, "factor"), HR_QK_MILLI,
                           &out->factor_milli)) ||
        (st = cpu(&c, NULL, root, "slack", &out->slack)) ||
        (st = cpu(&c, NULL, root, "managedRequests", &out->managed_requests)) ||
        (st = count(&c, root, "nodePods", &out->node_pods)) ||
        (st = cpu(&c, NULL, root, "allocatable", &out->allocatable)) ||
        (st = cpu(&c, NULL, root, "booked", &out->booked)) ||
        (st = count(&c, root, "managedPods", &out->managed_pods)) ||
        (st = cpu(&c, NULL, root, "request", &out->request)) ||
        (st = cpu(&c, NULL, root, "floor", &out->floor)) ||
        (st = cpu(&c, NULL, root, "burst", &out->burst)) ||
        (st = cpu(&c, NULL, root, "targetLimit", &out->target_limit)) ||
        (st = limits(&c, root, out)) ||
        (st = count(&c, root, "limitsOmitted", &out->limits_omitted)) ||
        (st = word(&c, &pcap, yyjson_obj_get(root, "cap"), TOKEN, &out->cap)) ||
        (st = cpu(&c, NULL, root, "capLimit", &out->cap_limit)) || (st = caps(&c, root, out)) ||
        (st = word(&c, &pr, yyjson_obj_get(root, "reason"), TOKEN, &out->reason)) ||
        (st = word(&c, &pt, yyjson_obj_get(root, "computedAt"), TIME, &out->computed_at)) ||
        (st = word(&c, &pp, yyjson_obj_get(root, "policy"), TOKEN, &out->policy)) ||
        (st = hr_jbool(&c, &pd, dv, &dry)))
        goto out;
    if (dv && !yyjson_is_null(dv))
        out->dry_run = dry;
out:
    yyjson_doc_free(d);
    return st;
}
