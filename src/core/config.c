/*
 * config.c — HeadroomConfig defaults (design §1), the checks the CRD
 * schema cannot make for us, and the precedence of design §11.
 */
#include "config.h"

#include <stddef.h>
#include <string.h>

#include "names.h"
#include "tenant.h"

static const char *const default_mode_values[] = {HR_MODE_MANAGED};
static const hr_requirement default_ns_req[] = {
    {HR_LABEL_MODE, HR_SEL_IN, default_mode_values, 1},
};
static const char *const default_excluded_ns[] = {"kube-system"};

void hr_config_defaults(hr_config *c)
{
    *c = (hr_config){
        .present = false,
        .policy = HR_POLICY_PROPORTIONAL,
        .dry_run = true,
        .min_burst_floor = 1000,
        .max_multiplier_milli = 10000,
        .quantum = 10,
        .grow_percent = 10,
        .shrink_percent = 5,
        .debounce_ms = 2000,
        .per_node_pps = 10,
        .client_qps = 50,
        .client_burst = 100,
        .webhook_enabled = true,
        .initial_multiplier_milli = 2000,
        .ns_selector = {true, default_ns_req, 1},
        .excluded_ns = default_excluded_ns,
        .n_excluded_ns = 1,
        .excluded_owners = NULL,
        .n_excluded_owners = 0,
        .excluded_nodes = {false, NULL, 0},
        .pools = NULL,
        .n_pools = 0,
        .tenant_label = HR_LABEL_TENANT,
        .max_group_size = HR_MAX_GROUP_SIZE,
        .quota_reserve_percent = 10,
    };
}

const char *hr_policy_str(hr_policy p)
{
    return p == HR_POLICY_TENANT_FAIR ? "TenantFair" : "Proportional";
}

const char *hr_policy_version(hr_policy p)
{
    return p == HR_POLICY_TENANT_FAIR ? HR_POLICY_NAME_TENANT_FAIR : HR_POLICY_NAME;
}

void hr_config_effective(const hr_config *cluster, hr_dry_run_flag dry_run, hr_config *out)
{
    if (cluster == NULL)
        hr_config_defaults(out);
    else if (out != cluster)
        *out = *cluster;
    /* No HeadroomConfig: the safe adoption path. */
    if (!out->present)
        out->dry_run = true;
    /* --dry-run beats spec.dryRun, both ways. */
    if (dry_run == HR_DRY_RUN_ON)
        out->dry_run = true;
    else if (dry_run == HR_DRY_RUN_OFF)
        out->dry_run = false;
}

bool hr_dry_run_from_flag(hr_dry_run_flag dry_run)
{
    return dry_run == HR_DRY_RUN_ON || dry_run == HR_DRY_RUN_OFF;
}

int hr_config_pool_index(const hr_config *c, const hr_labels *node_labels)
{
    if (node_labels == NULL)
        return -1;
    for (uint32_t i = 0; i < c->n_pools; i++)
        if (hr_selector_matches(&c->pools[i].selector, node_labels))
            return (int)i;
    return -1;
}

const hr_node_pool *hr_config_for_node(const hr_config *top, const hr_labels *node_labels,
                                       hr_config *out)
{
    int i = hr_config_pool_index(top, node_labels);
    if (out != top)
        *out = *top;
    if (i < 0)
        return NULL;
    const hr_node_pool *p = &top->pools[i];
    if (p->set & HR_POOL_FLOOR)
        out->min_burst_floor = p->min_burst_floor;
    if (p->set & HR_POOL_MULT)
        out->max_multiplier_milli = p->max_multiplier_milli;
    if (p->set & HR_POOL_QUANTUM)
        out->quantum = p->quantum;
    if (p->set & HR_POOL_GROW)
        out->grow_percent = p->grow_percent;
    if (p->set & HR_POOL_SHRINK)
        out->shrink_percent = p->shrink_percent;
    return p;
}

const char *hr_pool_name(const hr_node_pool *p)
{
    return p != NULL && p->name != NULL ? p->name : HR_POOL_TOP_LEVEL;
}

bool hr_config_node_same(const hr_config *a, const hr_config *b)
{
    return a->min_burst_floor == b->min_burst_floor &&
           a->max_multiplier_milli == b->max_multiplier_milli && a->quantum == b->quantum &&
           a->grow_percent == b->grow_percent && a->shrink_percent == b->shrink_percent;
}

static bool str_same(const char *a, const char *b)
{
    return (a == NULL || b == NULL) ? a == b : strcmp(a, b) == 0;
}

static bool selector_same(const hr_selector *a, const hr_selector *b)
{
    if (a->set != b->set || a->n != b->n)
        return false;
    for (uint32_t i = 0; i < a->n; i++) {
        const hr_requirement *x = &a->req[i], *y = &b->req[i];
        if (x->op != y->op || x->n_values != y->n_values || !str_same(x->key, y->key))
            return false;
        for (uint32_t k = 0; k < x->n_values; k++)
            if (!str_same(x->values[k], y->values[k]))
                return false;
    }
    return true;
}

bool hr_config_same_but_node_settings(const hr_config *a, const hr_config *b)
{
    if (a->present != b->present || a->policy != b->policy || a->dry_run != b->dry_run ||
        a->debounce_ms != b->debounce_ms || a->per_node_pps != b->per_node_pps ||
        a->client_qps != b->client_qps || a->client_burst != b->client_burst ||
        a->webhook_enabled != b->webhook_enabled ||
        a->initial_multiplier_milli != b->initial_multiplier_milli ||
        !selector_same(&a->ns_selector, &b->ns_selector) ||
        !selector_same(&a->excluded_nodes, &b->excluded_nodes) ||
        a->n_excluded_ns != b->n_excluded_ns || a->n_excluded_owners != b->n_excluded_owners ||
        !str_same(a->tenant_label, b->tenant_label) || a->max_group_size != b->max_group_size)
        return false;
    if (a->quota_reserve_percent != b->quota_reserve_percent)
        return false;
    for (uint32_t i = 0; i < a->n_excluded_ns; i++)
        if (!str_same(a->excluded_ns[i], b->excluded_ns[i]))
            return false;
    for (uint32_t i = 0; i < a->n_excluded_owners; i++) {
        const hr_owner_ref *x = &a->excluded_owners[i], *y = &b->excluded_owners[i];
        if (!str_same(x->kind, y->kind) || !str_same(x->api_group, y->api_group) ||
            !str_same(x->name, y->name))
            return false;
    }
    /* The startup grace (§2.12) changes what every node's plan keeps. */
    if (a->startup_grace_s != b->startup_grace_s)
        return false;
    return true;
}

/* The bounds of design §1.1 on the settings a pool may override, for the
 * top level (pool NULL) and for each pool, with the field's name. */
static const char *node_settings_invalid(const hr_config *c, const hr_node_pool *p)
{
    bool top = p == NULL;
    if ((top || (p->set & HR_POOL_FLOOR)) && (top ? c->min_burst_floor : p->min_burst_floor) < 0)
        return top ? "spec.minBurstFloor must not be negative"
                   : "spec.nodePools[].overrides.minBurstFloor must not be negative";
    int64_t m = top ? c->max_multiplier_milli : p->max_multiplier_milli;
    if ((top || (p->set & HR_POOL_MULT)) && (m < 0 || m > 100000))
        return top ? "spec.maxMultiplier must be between 0 and 100"
                   : "spec.nodePools[].overrides.maxMultiplier must be between 0 and 100";
    if ((top || (p->set & HR_POOL_MULT)) && m != 0 && m < 1000)
        return top ? "spec.maxMultiplier must be 0 (no cap) or at least 1"
                   : "spec.nodePools[].overrides.maxMultiplier must be 0 (no cap) or at least 1";
    if ((top || (p->set & HR_POOL_QUANTUM)) && (top ? c->quantum : p->quantum) < 1)
        return top ? "spec.quantum must be at least 1m"
                   : "spec.nodePools[].overrides.quantum must be at least 1m";
    int g = top ? c->grow_percent : p->grow_percent;
    if ((top || (p->set & HR_POOL_GROW)) && (g < 0 || g > 100))
        return top ? "spec.deadband.growPercent must be between 0 and 100"
                   : "spec.nodePools[].overrides.deadband.growPercent must be between 0 and 100";
    int sh = top ? c->shrink_percent : p->shrink_percent;
    if ((top || (p->set & HR_POOL_SHRINK)) && (sh < 0 || sh > 100))
        return top ? "spec.deadband.shrinkPercent must be between 0 and 100"
                   : "spec.nodePools[].overrides.deadband.shrinkPercent must be between 0 and 100";
    return NULL;
}

static const char *pools_invalid(const hr_config *c)
{
    if (c->n_pools > HR_POOLS_MAX)
        return "spec.nodePools must have at most 32 pools";
    for (uint32_t i = 0; i < c->n_pools; i++) {
        const hr_node_pool *p = &c->pools[i];
        if (p->name == NULL || p->name[0] == '\0')
            return "spec.nodePools[].name is required";
        if (!p->selector.set)
            return "spec.nodePools[].nodeSelector is required";
        for (uint32_t k = 0; k < i; k++)
            if (strcmp(c->pools[k].name, p->name) == 0)
                return "spec.nodePools[].name must be unique";
        const char *why = node_settings_invalid(c, p);
        if (why != NULL)
            return why;
    }
    return NULL;
}

const char *hr_config_validate(const hr_config *c)
{
    if (c->policy != HR_POLICY_PROPORTIONAL && c->policy != HR_POLICY_TENANT_FAIR)
        return "spec.policy must be Proportional or TenantFair";
    const char *why = node_settings_invalid(c, NULL);
    if (why != NULL)
        return why;
    if (c->initial_multiplier_milli < 1000 || c->initial_multiplier_milli > 100000)
        return "spec.webhook.initialMultiplier must be between 1 and 100";
    if (c->debounce_ms < 0)
        return "spec.debouncePeriod must not be negative";
    if (c->per_node_pps < 1)
        return "spec.rateLimits.perNodePatchesPerSecond must be at least 1";
    if (c->client_qps < 1)
        return "spec.rateLimits.clientQPS must be at least 1";
    if (c->client_burst < 1)
        return "spec.rateLimits.clientBurst must be at least 1";
    if (c->startup_grace_s < 0 || c->startup_grace_s > 86400)
        return "spec.startupGrace.seconds must be between 0 and 86400";
    if (c->tenant_label != NULL && !hr_label_key_valid(c->tenant_label))
        return "spec.tenantLabel must be a label key ([prefix/]name)";
    if (c->max_group_size < 1 || c->max_group_size > HR_MAX_GROUP_SIZE_LIMIT)
        return "spec.maxGroupSize must be between 1 and 100000";
    if (c->quota_reserve_percent < 0 || c->quota_reserve_percent > 100)
        return "spec.quotaReservePercent must be between 0 and 100";
    return pools_invalid(c);
}
