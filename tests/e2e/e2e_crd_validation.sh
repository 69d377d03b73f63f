#!/usr/bin/env bash
# e2e_crd_validation.sh — every rule that makes a HeadroomConfig spec invalid, refused at the door
# by the real API server with a message naming the field (design §1.1).
#
# The controller's decoder (src/kube/decode/cfgspec.c, with hr_config_validate in src/core/config.c)
# refuses an invalid spec at run time (Ready False, reason InvalidSpec). The shipped CRD
# (charts/kube-headroom/charts/crds/templates/headroomconfig.yaml) holds each of those rules too, as an
# OpenAPI bound or a CEL rule, so that `kubectl apply` fails instead. The table below has a row per
# rule (the comment above each names it): the good document with one change, applied with
# `kubectl apply --dry-run=server`, must be refused, and the answer must carry the field's path
# and the rule's message. The good document itself must be accepted. --dry-run=server runs
# defaulting and every validation as a real write does but stores nothing.
#
# Then the printer columns: `kubectl get headroomconfig` names Policy, DryRun, Pods, Nodes, Ready
# and Age, and shows a status written through the status subresource. That writes the singleton
# "cluster" (deleted at exit), so the test holds the cluster's lock. No controller; ~10 s.
set -uo pipefail
# shellcheck source=../lib/common.sh
. "$(dirname "${BASH_SOURCE[0]}")/../lib/common.sh"
WORK=$(mktemp -d /tmp/headroom-e2e-crdv.XXXXXX)
made=""
cleanup() {
  [ -z "$made" ] || k delete headroomconfig cluster --ignore-not-found >/dev/null 2>&1
  rm -rf "$WORK"
}
trap cleanup EXIT

require_cluster
install_crd

# The good document: every spec field set, to a valid value other than its default where one
# exists, so that each row changes one field of a document the schema accepts.
cat >"$WORK/good.json" <<'JSON'
{
  "apiVersion": "kube-headroom.dev/v1alpha1",
  "kind": "HeadroomConfig",
  "metadata": {"name": "cluster"},
  "spec": {
    "policy": "TenantFair",
    "tenantLabel": "capsule.clastix.io/tenant",
    "maxGroupSize": 512,
    "quotaReservePercent": 25,
    "dryRun": true,
    "minBurstFloor": "500m",
    "maxMultiplier": "2.5",
    "quantum": "10m",
    "deadband": {"growPercent": 20, "shrinkPercent": 10},
    "debouncePeriod": "1m30s",
    "rateLimits": {"perNodePatchesPerSecond": 5, "clientQPS": 40, "clientBurst": 80},
    "webhook": {"enabled": true, "initialMultiplier": "1.5"},
    "namespaceSelector": {
      "matchLabels": {"team": "a"},
      "matchExpressions": [{"key": "tier", "operator": "In", "values": ["web", "api"]},
                           {"key": "legacy", "operator": "DoesNotExist"}]
    },
    "excludedNamespaces": ["kube-system", "monitoring"],
    "excludedOwners": [{"kind": "DaemonSet", "apiGroup": "apps"}, {"kind": "Job", "name": "backup"}],
    "excludedNodeSelector": {"matchExpressions": [{"key": "gpu", "operator": "Exists"}]},
    "nodePools": [
      {"name": "big", "nodeSelector": {"matchExpressions": [{"key": "size", "operator": "NotIn", "values": ["s"]}]},
       "overrides": {"minBurstFloor": "2", "maxMultiplier": "0", "quantum": "1m",
                     "deadband": {"growPercent": 0, "shrinkPercent": 100}}},
      {"name": "small", "nodeSelector": {"matchLabels": {"size": "s"}}, "overrides": {"maxMultiplier": 4}}
    ]
  }
}
JSON

apply_dry() { # jq filter on the good document: apply the result, the answer in $WORK/out
  jq "$1" "$WORK/good.json" >"$WORK/doc.json" || { echo "bad jq filter: $1" >"$WORK/out"; return 2; }
  k apply --dry-run=server -f "$WORK/doc.json" >"$WORK/out" 2>&1
}

if apply_dry .; then
  pass "the good document (every field set) is accepted"
else
  fail "the good document is refused" "$(tr '\n' ' ' <"$WORK/out")"
  finish
  exit 1
fi

# One row: the jq change, the field's path the answer must name, a fragment of the rule's message.
rows=0
row() { # change field-path message-fragment
  local change=$1 path=$2 want=$3 rc=0
  rows=$((rows + 1))
  apply_dry "$change" || rc=$?
  if [ "$rc" = 0 ]; then
    fail "$path: $change is accepted" "$(tr '\n' ' ' <"$WORK/out")"
  elif [ "$rc" = 2 ]; then
    fail "$path: $change" "$(cat "$WORK/out")"
  elif grep -qF -- "$path" "$WORK/out" && grep -qF -- "$want" "$WORK/out"; then
    pass "$path: $change is refused ($want)"
  else
    fail "$path: $change is refused, but the answer lacks '$path' or '$want'" \
      "$(tr '\n' ' ' <"$WORK/out" | cut -c1-500)"
  fi
}

# cfgspec.c, policy: "unknown policy" (Proportional or TenantFair) — the enum.
row '.spec.policy = "Fair"' 'spec.policy' 'Unsupported value: "Fair"'
# config.c, tenantLabel: hr_label_key_valid, a label key — the pattern, and a CEL rule for the
# prefix's 253 characters (four 63-character DNS labels and "b": 257).
row '.spec.tenantLabel = "not a key"' 'spec.tenantLabel' 'should match'
row '.spec.tenantLabel = "Example.com/tenant"' 'spec.tenantLabel' 'should match'
row '.spec.tenantLabel = (("a" * 63 + ".") * 4 + "b/t")' 'spec.tenantLabel' 'the prefix of spec.tenantLabel must be at most 253 characters'
# cfgspec.c, maxGroupSize: get_int(1, 100000) — the bounds.
row '.spec.maxGroupSize = 0' 'spec.maxGroupSize' 'should be greater than or equal to 1'
row '.spec.maxGroupSize = 100001' 'spec.maxGroupSize' 'should be less than or equal to 100000'
# cfgspec.c, quotaReservePercent: get_int(0, 100) — the bounds.
row '.spec.quotaReservePercent = -1' 'spec.quotaReservePercent' 'should be greater than or equal to 0'
row '.spec.quotaReservePercent = 101' 'spec.quotaReservePercent' 'should be less than or equal to 100'
# cfgspec.c, dryRun: hr_jbool, a boolean.
row '.spec.dryRun = "no"' 'spec.dryRun' 'must be of type boolean'
# hr_config_validate: "spec.minBurstFloor must not be negative".
row '.spec.minBurstFloor = "-1"' 'spec.minBurstFloor' 'spec.minBurstFloor must be a CPU quantity from 0 to'
# cfgspec.c get_q(minBurstFloor): a CPU quantity's syntax (hr_cpu_parse_milli: not a number).
row '.spec.minBurstFloor = "lots"' 'spec.minBurstFloor' 'spec.minBurstFloor must be a CPU quantity from 0 to'
# cfgspec.c get_q(minBurstFloor): in range, millicores in an int64 (hr_cpu_parse_milli: out of range).
row '.spec.minBurstFloor = "1e16"' 'spec.minBurstFloor' 'spec.minBurstFloor must be a CPU quantity from 0 to'
# hr_config_validate: "spec.maxMultiplier must be 0 (no cap) or at least 1".
row '.spec.maxMultiplier = "0.5"' 'spec.maxMultiplier' 'spec.maxMultiplier must be 0 (no cap) or a number from 1 to 100'
# hr_config_validate: "spec.maxMultiplier must be between 0 and 100" (above).
row '.spec.maxMultiplier = "101"' 'spec.maxMultiplier' 'spec.maxMultiplier must be 0 (no cap) or a number from 1 to 100'
# cfgspec.c get_q(maxMultiplier, HR_QK_MILLI): a negative quantity.
row '.spec.maxMultiplier = "-2"' 'spec.maxMultiplier' 'spec.maxMultiplier must be 0 (no cap) or a number from 1 to 100'
# cfgspec.c get_q / hr_jquantity: a JSON real ("binary floating point cannot hold 0.1") — int-or-string.
row '.spec.maxMultiplier = 2.5' 'spec.maxMultiplier' 'must be of type'
# hr_config_validate: "spec.quantum must be at least 1m".
row '.spec.quantum = "0"' 'spec.quantum' 'spec.quantum must be a CPU quantity from 1m to'
# hr_config_validate: "spec.deadband.growPercent must be between 0 and 100" (get_int 0…100).
row '.spec.deadband.growPercent = 101' 'spec.deadband.growPercent' 'should be less than or equal to 100'
# hr_config_validate: "spec.deadband.shrinkPercent must be between 0 and 100" (get_int 0…100).
row '.spec.deadband.shrinkPercent = -1' 'spec.deadband.shrinkPercent' 'should be greater than or equal to 0'
# cfgspec.c get_int: an integer, not a real.
row '.spec.deadband.growPercent = 10.5' 'spec.deadband.growPercent' 'must be of type integer'
# cfgspec.c debouncePeriod: "not a duration" (hr_parse_duration_ms: Go's syntax, no sign).
row '.spec.debouncePeriod = "2 seconds"' 'spec.debouncePeriod' 'should match'
# hr_config_validate: "spec.debouncePeriod must not be negative" (no sign accepted at all).
row '.spec.debouncePeriod = "-1s"' 'spec.debouncePeriod' 'should match'
# cfgspec.c debouncePeriod: "not a duration" when the sum overflows int64 nanoseconds (2562047h).
row '.spec.debouncePeriod = "1000000000h"' 'spec.debouncePeriod' 'spec.debouncePeriod must be a Go duration from 0s to 2562047h47m16s'
# hr_config_validate: "spec.rateLimits.perNodePatchesPerSecond must be at least 1" (get_int 1…1e6).
row '.spec.rateLimits.perNodePatchesPerSecond = 0' 'spec.rateLimits.perNodePatchesPerSecond' 'should be greater than or equal to 1'
# hr_config_validate: "spec.rateLimits.clientQPS must be at least 1"; get_int's upper bound 1e6.
row '.spec.rateLimits.clientQPS = 1000001' 'spec.rateLimits.clientQPS' 'should be less than or equal to 1000000'
# hr_config_validate: "spec.rateLimits.clientBurst must be at least 1" (get_int 1…1e6).
row '.spec.rateLimits.clientBurst = 0' 'spec.rateLimits.clientBurst' 'should be greater than or equal to 1'
# cfgspec.c webhook.enabled: hr_jbool, a boolean.
row '.spec.webhook.enabled = "yes"' 'spec.webhook.enabled' 'must be of type boolean'
# hr_config_validate: "spec.webhook.initialMultiplier must be between 1 and 100" (below).
row '.spec.webhook.initialMultiplier = "0.5"' 'spec.webhook.initialMultiplier' 'spec.webhook.initialMultiplier must be a number from 1 to 100'
# hr_config_validate: "spec.webhook.initialMultiplier must be between 1 and 100" (above).
row '.spec.webhook.initialMultiplier = "101"' 'spec.webhook.initialMultiplier' 'spec.webhook.initialMultiplier must be a number from 1 to 100'
# hr_decode_selector_at: "must not be empty for operator In" — the top-level namespaceSelector.
row '.spec.namespaceSelector.matchExpressions[0] |= del(.values)' 'spec.namespaceSelector.matchExpressions[0].values' 'values must be non-empty for In and NotIn'
# hr_decode_selector_at: "must not be empty for operator NotIn" — values: [] is empty too.
row '.spec.excludedNodeSelector.matchExpressions[0] = {key: "gpu", operator: "NotIn", values: []}' 'spec.excludedNodeSelector.matchExpressions[0].values' 'values must be non-empty for In and NotIn'
# Kubernetes' selector rule (stricter than the decoder, which ignores them): no values for Exists.
row '.spec.excludedNodeSelector.matchExpressions[0].values = ["x"]' 'spec.excludedNodeSelector.matchExpressions[0].values' 'empty for Exists and DoesNotExist'
# hr_decode_selector_at: "unknown operator" (In, NotIn, Exists or DoesNotExist).
row '.spec.namespaceSelector.matchExpressions[1].operator = "Missing"' 'spec.namespaceSelector.matchExpressions[1].operator' 'Unsupported value: "Missing"'
# hr_decode_selector_at: key "missing".
row '.spec.namespaceSelector.matchExpressions[1] |= del(.key)' 'spec.namespaceSelector.matchExpressions[1].key' 'Required value'
# hr_decode_selector_at: matchLabels values are strings.
row '.spec.namespaceSelector.matchLabels.team = 7' 'spec.namespaceSelector.matchLabels.team' 'must be of type string'
# cfgspec.c excludedNamespaces: hr_jstr_array, strings only.
row '.spec.excludedNamespaces[1] = 3' 'spec.excludedNamespaces[1]' 'must be of type string'
# decode_owners: kind "missing" (absent).
row '.spec.excludedOwners[1] |= del(.kind)' 'spec.excludedOwners[1].kind' 'Required value'
# decode_owners: kind "missing" (empty).
row '.spec.excludedOwners[0].kind = ""' 'spec.excludedOwners[0].kind' 'should be at least 1 chars long'
# decode_pools / pools_invalid: "spec.nodePools must have at most 32 pools".
row '.spec.nodePools = [range(33) as $i | {name: "p\($i)", nodeSelector: {}}]' 'spec.nodePools' 'must have at most 32 items'
# decode_pools / pools_invalid: "spec.nodePools[].name must be unique" (duplicate pool name).
row '.spec.nodePools[1].name = "big"' 'spec.nodePools[1]' 'Duplicate value'
# decode_pools / pools_invalid: "spec.nodePools[].name is required" (empty).
row '.spec.nodePools[0].name = ""' 'spec.nodePools[0].name' 'should be at least 1 chars long'
# decode_pools / pools_invalid: "spec.nodePools[].nodeSelector is required".
row '.spec.nodePools[1] |= del(.nodeSelector)' 'spec.nodePools[1].nodeSelector' 'Required value'
# hr_decode_selector_at in a pool: "must not be empty for operator NotIn".
row '.spec.nodePools[0].nodeSelector.matchExpressions[0] |= del(.values)' 'spec.nodePools[0].nodeSelector.matchExpressions[0].values' 'values must be non-empty for In and NotIn'
# node_settings_invalid(pool): "spec.nodePools[].overrides.minBurstFloor must not be negative".
row '.spec.nodePools[0].overrides.minBurstFloor = "-100m"' 'spec.nodePools[0].overrides.minBurstFloor' 'overrides.minBurstFloor must be a CPU quantity from 0 to'
# decode_overrides get_q(minBurstFloor): out of range (millicores in an int64).
row '.spec.nodePools[0].overrides.minBurstFloor = "1e16"' 'spec.nodePools[0].overrides.minBurstFloor' 'overrides.minBurstFloor must be a CPU quantity from 0 to'
# node_settings_invalid(pool): "...overrides.maxMultiplier must be 0 (no cap) or at least 1".
row '.spec.nodePools[1].overrides.maxMultiplier = "0.5"' 'spec.nodePools[1].overrides.maxMultiplier' 'overrides.maxMultiplier must be 0 (no cap) or a number from 1 to 100'
# node_settings_invalid(pool): "...overrides.maxMultiplier must be between 0 and 100".
row '.spec.nodePools[1].overrides.maxMultiplier = "100.5"' 'spec.nodePools[1].overrides.maxMultiplier' 'overrides.maxMultiplier must be 0 (no cap) or a number from 1 to 100'
# node_settings_invalid(pool): "spec.nodePools[].overrides.quantum must be at least 1m".
row '.spec.nodePools[0].overrides.quantum = "0m"' 'spec.nodePools[0].overrides.quantum' 'overrides.quantum must be a CPU quantity from 1m to'
# node_settings_invalid(pool): "...overrides.deadband.growPercent must be between 0 and 100".
row '.spec.nodePools[0].overrides.deadband.growPercent = 101' 'spec.nodePools[0].overrides.deadband.growPercent' 'should be less than or equal to 100'
# node_settings_invalid(pool): "...overrides.deadband.shrinkPercent must be between 0 and 100".
row '.spec.nodePools[0].overrides.deadband.shrinkPercent = 101' 'spec.nodePools[0].overrides.deadband.shrinkPercent' 'should be less than or equal to 100'
# cfgspec.c: spec is an object (hr_jobj).
row '.spec = "all"' 'spec' 'must be of type object'
# Not the decoder's (it ignores every other name): the singleton is named "cluster". A rule on
# the root cannot point at metadata.name (fieldPath must be a path of the schema): its message does.
row '.metadata.name = "other"' 'HeadroomConfig "other" is invalid' 'the HeadroomConfig must be named "cluster"'
echo "figure: $rows invalid documents applied, one per row"

# The printer columns, on a stored object with a status written as the controller writes it.
if k apply -f "$WORK/good.json" >"$WORK/out" 2>&1; then
  made=1
  now=$(date -u +%Y-%m-%dT%H:%M:%SZ)
  k patch headroomconfig cluster --subresource=status --type merge -p "{\"status\":{\"managedPods\":7,
    \"managedNodes\":3,\"conditions\":[{\"type\":\"Ready\",\"status\":\"True\",\"reason\":\"DryRun\",
    \"message\":\"e2e\",\"lastTransitionTime\":\"$now\"}]}}" >"$WORK/out" 2>&1 ||
    fail "the status write (status subresource)" "$(tr '\n' ' ' <"$WORK/out")"
  k get headroomconfig cluster >"$WORK/table" 2>&1
  header=$(head -1 "$WORK/table" | tr -s ' ')
  line=$(sed -n 2p "$WORK/table" | tr -s ' ' | cut -d' ' -f1-6)
  WHY="$(tr '\n' '|' <"$WORK/table")"
  check "kubectl get: the header is NAME POLICY DRYRUN PODS NODES READY AGE" \
    [ "$header" = "NAME POLICY DRYRUN PODS NODES READY AGE" ]
  check "kubectl get: the row shows cluster TenantFair true 7 3 True" \
    [ "$line" = "cluster TenantFair true 7 3 True" ]
else
  fail "the good document is not stored" "$(tr '\n' ' ' <"$WORK/out")"
fi

finish
