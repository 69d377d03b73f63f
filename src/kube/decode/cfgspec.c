/*
 * cfgspec.c — the spec of HeadroomConfig "cluster" into hr_config (§1).
 *
 * Starts from hr_config_defaults() and overrides what the spec sets. A
 * spec without dryRun is dry-run, as the CRD's schema default says (design
 * §1.2): the object the API server hands over normally carries that
 * default, but a dump or a CRD installed without defaults may not, and it
 * must mean the same. Only spec.dryRun: false is live. Anything the CRD
 * schema should have refused but did not (or a hand-written dump) is an
 * error naming the field, and the result must also pass
 * hr_config_validate.
 */
#include <stdint.h>
#include <string.h>

#include "core/grace.h"
#include "core/names.h"
#include "kube/decode/cfgspec.h"
#include "kube/decode/common.h"

bool hr_parse_duration_ms(const char *s, size_t len, int64_t *ms)
{
    /* Go's time.ParseDuration, without the sign: a sequence of
     * decimal numbers each with a unit. Accumulated in nanoseconds. */
    static const struct {
        const char *u;
        int64_t ns;
    } units[] = {
        {"ns", 1},       {"us", 1000},      {"\xc2\xb5s", 1000}, {"\xce\xbcs", 1000},
        {"ms", 1000000}, {"s", 1000000000}, {"m", 60000000000},  {"h", 3600000000000},
    };
    size_t i = 0;
    if (len == 1 && s[0] == '0') {
        *ms = 0;
        return true;
    }
    if (len == 0)
        return false;
    int64_t total = 0;
    while (i < len) {
        int64_t whole = 0, frac = 0, scale = 1;
        size_t digits = 0;
        while (i < len && s[i] >= '0' && s[i] <= '9') {
            if (whole > (INT64_MAX - 9) / 10)
                return false;
            whole = whole * 10 + (s[i++] - '0');
            digits++;
        }
        if (i < len && s[i] == '.') {
            i++;
            while (i < len && s[i] >= '0' && s[i] <= '9') {
                if (scale < 1000000000) { /* nanoseconds: 9 digits do */
                    frac = frac * 10 + (s[i] - '0');
                    scale *= 10;
                }
                i++;
                digits++;
            }
        }
        if (!digits)
            return false;
        size_t best = 0;
        int64_t mult = 0;
        for (size_t u = 0; u < sizeof units / sizeof units[0]; u++) {
            size_t ul = strlen(units[u].u);
            if (ul > best && len - i >= ul && memcmp(s + i, units[u].u, ul) == 0) {
                best = ul;
                mult = units[u].ns;
            }
        }
        if (!best)
            return false;
        i += best;
        if (whole > INT64_MAX / mult)
            return false;
        /* frac·mult/scale split as frac·(mult/scale) + frac·(mult%scale)/scale:
         * frac < scale <= 1e9 keeps both products in range. */
        int64_t part = whole * mult + frac * (mult / scale) + frac * (mult % scale) / scale;
        if (part < 0 || total > INT64_MAX - part)
            return false;
        total += part;
    }
    *ms = total / 1000000;
    return true;
}

static hr_status decode_owners(const hr_kctx *c, const hr_jpath *p, yyjson_val *v, hr_config *cfg)
{
    yyjson_val *arr;
    void *items;
    hr_status st = hr_jarr_items(c, p, v, UINT32_MAX, "owners", sizeof(hr_owner_ref), &arr, &items);
    if (st || !arr)
        return st;
    hr_owner_ref *refs = items;
    size_t n = yyjson_arr_size(arr), i, max;
    yyjson_val *e;
    yyjson_arr_foreach(arr, i, max, e)
    {
        hr_jpath pe = HR_JP_IDX(p, i);
        if (!yyjson_is_obj(e))
            return hr_kfail(c, &pe, HR_E_INPUT, "expected an object, got %s", hr_jtype_str(e));
        hr_jpath pk = HR_JP_KEY(&pe, "kind");
        hr_jpath pg = HR_JP_KEY(&pe, "apiGroup");
        hr_jpath pn = HR_JP_KEY(&pe, "name");
        /* An absent apiGroup matches any group, an absent name any name. */
        if ((st = hr_jstr(c, &pk, hr_jget(e, "kind"), NULL, &refs[i].kind)) ||
            (st = hr_jstr(c, &pg, hr_jget(e, "apiGroup"), NULL, &refs[i].api_group)) ||
            (st = hr_jstr(c, &pn, hr_jget(e, "name"), NULL, &refs[i].name)))
            return st;
        if (!refs[i].kind || !refs[i].kind[0])
            return hr_kfail(c, &pk, HR_E_INPUT, "missing");
    }
    cfg->excluded_owners = refs;
    cfg->n_excluded_owners = (uint32_t)n;
    return HR_OK;
}

/* Present and not null: a pool's override is set only when written. */
static bool given(yyjson_val *obj, const char *key)
{
    yyjson_val *v = hr_jget(obj, key);
    return v != NULL && !yyjson_is_null(v);
}

static hr_status get_int(const hr_kctx *c, const hr_jpath *p, yyjson_val *obj, const char *key,
                         int64_t lo, int64_t hi, int *out)
{
    hr_jpath pk = HR_JP_KEY(p, key);
    int64_t v = *out;
    hr_status st = hr_jint(c, &pk, hr_jget(obj, key), lo, hi, &v);
    if (!st)
        *out = (int)v;
    return st;
}

static hr_status get_q(const hr_kctx *c, const hr_jpath *p, yyjson_val *obj, const char *key,
                       hr_qkind kind, int64_t *out)
{
    hr_jpath pk = HR_JP_KEY(p, key);
    int64_t v;
    hr_status st = hr_jquantity(c, &pk, hr_jget(obj, key), kind, &v);
    if (!st && v != HR_NONE)
        *out = v;
    return st;
}

/* spec.nodePools[i].overrides: the node settings, under the top-level
 * names; each one given sets its HR_POOL_* bit. */
static hr_status decode_overrides(const hr_kctx *c, const hr_jpath *p, yyjson_val *v,
                                  hr_node_pool *np)
{
    yyjson_val *o, *db;
    hr_jpath pdb = HR_JP_KEY(p, "deadband");
    hr_status st;
    if ((st = hr_jobj(c, p, v, &o)) || !o)
        return st;
    np->set |= (given(o, "minBurstFloor") ? HR_POOL_FLOOR : 0) |
               (given(o, "maxMultiplier") ? HR_POOL_MULT : 0) |
               (given(o, "quantum") ? HR_POOL_QUANTUM : 0);
    if ((st = get_q(c, p, o, "minBurstFloor", HR_QK_CPU, &np->min_burst_floor)) ||
        (st = get_q(c, p, o, "maxMultiplier", HR_QK_MILLI, &np->max_multiplier_milli)) ||
        (st = get_q(c, p, o, "quantum", HR_QK_CPU, &np->quantum)) ||
        (st = hr_jobj(c, &pdb, hr_jget(o, "deadband"), &db)) || !db)
        return st;
    np->set |= (given(db, "growPercent") ? HR_POOL_GROW : 0) |
               (given(db, "shrinkPercent") ? HR_POOL_SHRINK : 0);
    if ((st = get_int(c, &pdb, db, "growPercent", 0, 100, &np->grow_percent)) ||
        (st = get_int(c, &pdb, db, "shrinkPercent", 0, 100, &np->shrink_percent)))
        return st;
    return HR_OK;
}

/* spec.nodePools (design §2.11): name and nodeSelector required, names
 * unique, at most HR_POOLS_MAX; the bounds are hr_config_validate's. */
static hr_status decode_pools(const hr_kctx *c, const hr_jpath *p, yyjson_val *v, hr_config *cfg)
{
    yyjson_val *arr;
    void *items;
    hr_status st =
        hr_jarr_items(c, p, v, HR_POOLS_MAX, "pools", sizeof(hr_node_pool), &arr, &items);
    if (st || !arr)
        return st;
    hr_node_pool *pools = items;
    size_t n = yyjson_arr_size(arr), i, max;
    yyjson_val *e;
    yyjson_arr_foreach(arr, i, max, e)
    {
        hr_jpath pe = HR_JP_IDX(p, i);
        hr_jpath pn = HR_JP_KEY(&pe, "name");
        hr_jpath psel = HR_JP_KEY(&pe, "nodeSelector");
        hr_jpath pov = HR_JP_KEY(&pe, "overrides");
        if (!yyjson_is_obj(e))
            return hr_kfail(c, &pe, HR_E_INPUT, "expected an object, got %s", hr_jtype_str(e));
        if ((st = hr_jstr(c, &pn, hr_jget(e, "name"), NULL, &pools[i].name)))
            return st;
        if (!pools[i].name || !pools[i].name[0])
            return hr_kfail(c, &pn, HR_E_INPUT, "missing");
        for (size_t k = 0; k < i; k++) {
            if (strcmp(pools[k].name, pools[i].name) != 0)
                continue;
            char q[48];
            return hr_kfail(c, &pn, HR_E_INPUT, "duplicate pool name \"%s\"",
                            hr_err_quote(q, sizeof q, pools[i].name, strlen(pools[i].name), 24));
        }
        if ((st = hr_decode_selector_at(c, &psel, hr_jget(e, "nodeSelector"), &pools[i].selector)))
            return st;
        if (!pools[i].selector.set)
            return hr_kfail(c, &psel, HR_E_INPUT, "missing");
        if ((st = decode_overrides(c, &pov, hr_jget(e, "overrides"), &pools[i])))
            return st;
    }
    cfg->pools = pools;
    cfg->n_pools = (uint32_t)n;
    return HR_OK;
}

hr_status hr_decode_config(yyjson_val *obj, hr_arena *a, hr_kconfig *out, hr_err *err)
{
    hr_kctx c = {a, err, "headroomconfig", NULL, NULL};
    memset(out, 0, sizeof *out);
    hr_config *cfg = &out->cfg;
    hr_config_defaults(cfg);
    cfg->present = true; /* dry_run stays true: only spec.dryRun: false is live */
    yyjson_val *meta;
    hr_status st = hr_decode_meta(&c, obj, false, &out->meta, &meta);
    if (st)
        return st;
    hr_jpath ps = HR_JP_KEY(NULL, "spec");
    yyjson_val *spec;
    if ((st = hr_jobj(&c, &ps, hr_jget(obj, "spec"), &spec)))
        return st;
    if (!spec)
        return HR_OK;

    hr_jpath ppol = HR_JP_KEY(&ps, "policy");
    const char *pol;
    size_t pl;
    if ((st = hr_jstr_ref(&c, &ppol, hr_jget(spec, "policy"), &pol, &pl)))
        return st;
    /* The CRD's enum (design §1.1); absent is the default, Proportional. */
    if (pol && pl == 12 && memcmp(pol, "Proportional", 12) == 0) {
        cfg->policy = HR_POLICY_PROPORTIONAL;
    } else if (pol && pl == 10 && memcmp(pol, "TenantFair", 10) == 0) {
        cfg->policy = HR_POLICY_TENANT_FAIR;
    } else if (pol) {
        char q[48];
        return hr_kfail(&c, &ppol, HR_E_INPUT, "unknown policy \"%s\" (Proportional or TenantFair)",
                        hr_err_quote(q, sizeof q, pol, pl, 24));
    }
    hr_jpath pdry = HR_JP_KEY(&ps, "dryRun");
    if ((st = hr_jbool(&c, &pdry, hr_jget(spec, "dryRun"), &cfg->dry_run)) ||
        (st = get_q(&c, &ps, spec, "minBurstFloor", HR_QK_CPU, &cfg->min_burst_floor)) ||
        (st = get_q(&c, &ps, spec, "maxMultiplier", HR_QK_MILLI, &cfg->max_multiplier_milli)) ||
        (st = get_q(&c, &ps, spec, "quantum", HR_QK_CPU, &cfg->quantum)))
        return st;

    hr_jpath pdb = HR_JP_KEY(&ps, "deadband");
    yyjson_val *db;
    if ((st = hr_jobj(&c, &pdb, hr_jget(spec, "deadband"), &db)) ||
        (st = get_int(&c, &pdb, db, "growPercent", 0, 100, &cfg->grow_percent)) ||
        (st = get_int(&c, &pdb, db, "shrinkPercent", 0, 100, &cfg->shrink_percent)))
        return st;

    hr_jpath pdeb = HR_JP_KEY(&ps, "debouncePeriod");
    const char *d;
    size_t dl;
    if ((st = hr_jstr_ref(&c, &pdeb, hr_jget(spec, "debouncePeriod"), &d, &dl)))
        return st;
    if (d && !hr_parse_duration_ms(d, dl, &cfg->debounce_ms)) {
        char q[48];
        return hr_kfail(&c, &pdeb, HR_E_INPUT, "not a duration \"%s\" (e.g. \"2s\", \"500ms\")",
                        hr_err_quote(q, sizeof q, d, dl, 24));
    }

    hr_jpath prl = HR_JP_KEY(&ps, "rateLimits");
    yyjson_val *rl;
    if ((st = hr_jobj(&c, &prl, hr_jget(spec, "rateLimits"), &rl)) ||
        (st = get_int(&c, &prl, rl, "perNodePatchesPerSecond", 1, 1000000, &cfg->per_node_pps)) ||
        (st = get_int(&c, &prl, rl, "clientQPS", 1, 1000000, &cfg->client_qps)) ||
        (st = get_int(&c, &prl, rl, "clientBurst", 1, 1000000, &cfg->client_burst)))
        return st;

    hr_jpath pwh = HR_JP_KEY(&ps, "webhook");
    hr_jpath pwe = HR_JP_KEY(&pwh, "enabled");
    yyjson_val *wh;
    if ((st = hr_jobj(&c, &pwh, hr_jget(spec, "webhook"), &wh)) ||
        (st = hr_jbool(&c, &pwe, hr_jget(wh, "enabled"), &cfg->webhook_enabled)) ||
        (st =
             get_q(&c, &pwh, wh, "initialMultiplier", HR_QK_MILLI, &cfg->initial_multiplier_milli)))
        return st;

    /* Absent selector keeps the default (mode=managed); {} selects all. */
    hr_jpath pns = HR_JP_KEY(&ps, "namespaceSelector");
    yyjson_val *nss = hr_jget(spec, "namespaceSelector");
    if (nss && !yyjson_is_null(nss) &&
        (st = hr_decode_selector_at(&c, &pns, nss, &cfg->ns_selector)))
        return st;
    hr_jpath pens = HR_JP_KEY(&ps, "excludedNamespaces");
    const char *const *ens = NULL;
    uint32_t n_ens = 0;
    bool have_ens;
    if ((st = hr_jstr_array(&c, &pens, hr_jget(spec, "excludedNamespaces"), &ens, &n_ens,
                            &have_ens)))
        return st;
    if (have_ens) {
        cfg->excluded_ns = ens;
        cfg->n_excluded_ns = n_ens;
    }
    /* Design §2.12: spec.startupGrace.seconds; absent (or 0) keeps it off. */
    hr_jpath psg = HR_JP_KEY(&ps, "startupGrace");
    hr_jpath psgs = HR_JP_KEY(&psg, "seconds");
    yyjson_val *sg;
    if ((st = hr_jobj(&c, &psg, hr_jget(spec, "startupGrace"), &sg)) ||
        (st = hr_jint(&c, &psgs, hr_jget(sg, "seconds"), 0, HR_GRACE_SECONDS_MAX,
                      &cfg->startup_grace_s)))
        return st;
    hr_jpath peo = HR_JP_KEY(&ps, "excludedOwners");
    hr_jpath pen = HR_JP_KEY(&ps, "excludedNodeSelector");
    if ((st = decode_owners(&c, &peo, hr_jget(spec, "excludedOwners"), cfg)) ||
        (st = hr_decode_selector_at(&c, &pen, hr_jget(spec, "excludedNodeSelector"),
                                    &cfg->excluded_nodes)))
        return st;
    hr_jpath pnp = HR_JP_KEY(&ps, "nodePools");
    if ((st = decode_pools(&c, &pnp, hr_jget(spec, "nodePools"), cfg)))
        return st;
    /* Design §2.9: the namespace label naming its tenant; absent keeps the
     * default (hr_config_validate checks it is a label key). */
    if ((st = get_int(&c, &ps, spec, "maxGroupSize", 1, HR_MAX_GROUP_SIZE_LIMIT,
                      &cfg->max_group_size)))
        return st;
    if ((st = get_int(&c, &ps, spec, "quotaReservePercent", 0, 100, &cfg->quota_reserve_percent)))
        return st;
    hr_jpath ptl = HR_JP_KEY(&ps, "tenantLabel");
    if ((st = hr_jstr(&c, &ptl, hr_jget(spec, "tenantLabel"), HR_LABEL_TENANT, &cfg->tenant_label)))
        return st;

    const char *why = hr_config_validate(cfg);
    if (why)
        return hr_kfail(&c, NULL, HR_E_INPUT, "invalid: %s", why);
    return HR_OK;
}
