/*
 * cfgstore.c — the HeadroomConfig store: the singleton "cluster" config in
 * force (defaults with dry-run while there is none), why the last one seen
 * was refused, and the status the object carries.
 *
 * Why the status is kept apart from the spec: the status writer compares
 * the status it would write with the one the watch brought back, and must
 * see it even when the spec is refused (design §11: Ready=False with the
 * reason), so a refused spec keeps the last good config in force while its
 * status still comes in. An update with the generation already in force (a
 * status write) moves only the resourceVersion, so the controller's own
 * status writes do not make every node dirty.
 */
#include "cache/cfgstore.h"

#include <stdio.h>
#include <string.h>

#include "cache/feed.h"
#include "cache/nodes.h"
#include "cache/store.h"
#include "core/names.h"

/* The status while none has been seen: every count and generation unknown. */
static const hr_kcfg_status NO_STATUS = {
    .generation = -1, .observed_generation = -1, .managed_pods = -1, .managed_nodes = -1};

void hr_ccfg_init(hr_cache *c)
{
    hr_config_defaults(&c->cfg);
    hr_arena_init(&c->cfg_arena, 4096);
    hr_arena_init(&c->cfgst_arena, 1024);
    c->cfgst = NO_STATUS;
}

void hr_ccfg_free(hr_cache *c)
{
    hr_arena_free(&c->cfg_arena);
    hr_arena_free(&c->cfgst_arena);
}

bool hr_ccfg_put(hr_cache *c, const hr_kconfig *k, int64_t generation, hr_arena *a)
{
    if (strcmp(k->meta.name, HR_CONFIG_NAME) != 0)
        return false;
    bool was = c->cfg.present;
    c->cfg_rv = hr_cstore_parse_rv(k->meta.resource_version);
    c->cfg_mark = c->epoch[HR_CK_CONFIG];
    if (was && generation > 0 && generation == c->cfg_generation && !c->cfg_invalid[0])
        return false;
    c->cfg_generation = generation;
    hr_config next = k->cfg;
    next.present = true;
    /* Recompute everything on any change: the knobs touch every node. The
     * caller filters out status-only updates by generation. A change of
     * only what a node pool can set re-plans exactly the nodes whose
     * settings moved (design §2.11); that needs the old config in force,
     * whose arena goes below. */
    if (was && !c->cfg_invalid[0] && hr_config_same_but_node_settings(&c->cfg, &next))
        hr_cnodes_mark_settings(c, &c->cfg, &next);
    else
        hr_cfeed_all(c);
    c->cfg_invalid[0] = '\0';
    hr_arena_free(&c->cfg_arena);
    c->cfg_arena = *a;
    hr_arena_init(a, a->chunk_size);
    c->cfg = next;
    hr_cstore_report(c, HR_CK_CONFIG, was ? HR_CC_UPDATED : HR_CC_ADDED, "", HR_CONFIG_NAME);
    return true;
}

void hr_ccfg_invalid(hr_cache *c, const char *msg)
{
    snprintf(c->cfg_invalid, sizeof c->cfg_invalid, "%s", msg ? msg : "");
    c->cfg_mark = c->epoch[HR_CK_CONFIG];
}

static void cfgst_reset(hr_cache *c)
{
    hr_arena_free(&c->cfgst_arena);
    c->cfgst = NO_STATUS;
}

/* *s replaced by its copy in a ("" for none); false when a is out of memory. */
static bool own_str(hr_arena *a, const char **s)
{
    return (*s = hr_arena_strdup(a, *s ? *s : "")) != NULL;
}

hr_status hr_ccfg_copy_status(const hr_kcfg_status *s, hr_arena *a, hr_kcfg_status *t, hr_err *err)
{
    hr_arena_init(a, 1024);
    hr_arena_set_limit(a, (size_t)4 << 20);
    *t = *s;
    bool ok = true;
    for (size_t i = 0; ok && i < t->n_cond; i++) {
        hr_kcondition *k = &t->cond[i];
        ok = own_str(a, &k->type) && own_str(a, &k->status) && own_str(a, &k->reason) &&
             own_str(a, &k->message) && own_str(a, &k->last_transition);
    }
    for (size_t i = 0; ok && i < t->n_pools; i++)
        ok = own_str(a, &t->pools[i].name);
    if (!ok) {
        hr_arena_free(a);
        return hr_err_set(err, HR_E_NOMEM, "headroomconfig status: out of memory");
    }
    return HR_OK;
}

void hr_ccfg_set_status(hr_cache *c, const hr_arena *a, const hr_kcfg_status *t)
{
    hr_arena_free(&c->cfgst_arena);
    c->cfgst_arena = *a;
    c->cfgst = *t;
}

static void config_delete(hr_cache *c)
{
    cfgst_reset(c);
    if (!c->cfg.present && !c->cfg_invalid[0])
        return;
    bool was = c->cfg.present;
    hr_arena_free(&c->cfg_arena);
    hr_config_defaults(&c->cfg);
    c->cfg_invalid[0] = '\0';
    c->cfg_rv = 0;
    c->cfg_generation = 0;
    if (was) {
        hr_cfeed_all(c);
        hr_cstore_report(c, HR_CK_CONFIG, HR_CC_DELETED, "", HR_CONFIG_NAME);
    }
}

/* ---------------------------------------------------------- readers */

const hr_config *hr_ccfg_get(const hr_cache *c, const char **invalid)
{
    if (invalid)
        *invalid = c->cfg_invalid[0] ? c->cfg_invalid : NULL;
    return &c->cfg;
}

bool hr_ccfg_object(const hr_cache *c, int64_t *gen_in_force, const hr_kcfg_status **status)
{
    *gen_in_force = c->cfg.present ? c->cfg_generation : -1;
    *status = &c->cfgst;
    return c->cfg.present || c->cfg_invalid[0];
}

/* ---------------------------------------------------------- the store */

/* One slot, 0, holding the config named "cluster"; any other name is not
 * ours (hr_cache_put_config ignores it). */
static uint32_t cfg_find(const hr_cache *c, hr_ckind k, const char *ns, const char *name)
{
    (void)c, (void)k, (void)ns;
    return strcmp(name, HR_CONFIG_NAME) == 0 ? 0 : NIL;
}

static uint32_t cfg_end(const hr_cache *c, hr_ckind k)
{
    (void)c, (void)k;
    return 1;
}

static uint32_t *cfg_mark(hr_cache *c, hr_ckind k, uint32_t i)
{
    (void)k, (void)i;
    return c->cfg.present || c->cfg_invalid[0] ? &c->cfg_mark : NULL;
}

static bool cfg_remove(hr_cache *c, hr_ckind k, uint32_t i)
{
    (void)k, (void)i;
    config_delete(c);
    return false;
}

const cstore hr_ccfg_store = {cfg_find, cfg_end, cfg_mark, cfg_remove};
