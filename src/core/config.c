/*
 * config.c — HeadroomConfig defaults (design §1), the checks the CRD
 * schema cannot make for us, and the precedence of design §11.
 */
#include "config.h"

#include <stddef.h>

#include "names.h"

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

const char *hr_config_validate(const hr_config *c)
{
    if (c->policy != HR_POLICY_PROPORTIONAL && c->policy != HR_POLICY_TENANT_FAIR)
        return "spec.policy must be Proportional or TenantFair";
    if (c->min_burst_floor < 0)
        return "spec.minBurstFloor must not be negative";
    if (c->max_multiplier_milli < 0 || c->max_multiplier_milli > 100000)
        return "spec.maxMultiplier must be between 0 and 100";
    if (c->max_multiplier_milli != 0 && c->max_multiplier_milli < 1000)
        return "spec.maxMultiplier must be 0 (no cap) or at least 1";
    if (c->initial_multiplier_milli < 1000 || c->initial_multiplier_milli > 100000)
        return "spec.webhook.initialMultiplier must be between 1 and 100";
    if (c->quantum < 1)
        return "spec.quantum must be at least 1m";
    if (c->grow_percent < 0 || c->grow_percent > 100)
        return "spec.deadband.growPercent must be between 0 and 100";
    if (c->shrink_percent < 0 || c->shrink_percent > 100)
        return "spec.deadband.shrinkPercent must be between 0 and 100";
    if (c->debounce_ms < 0)
        return "spec.debouncePeriod must not be negative";
    if (c->per_node_pps < 1)
        return "spec.rateLimits.perNodePatchesPerSecond must be at least 1";
    if (c->client_qps < 1)
        return "spec.rateLimits.clientQPS must be at least 1";
    if (c->client_burst < 1)
        return "spec.rateLimits.clientBurst must be at least 1";
    return NULL;
}
