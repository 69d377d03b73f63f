#!/usr/bin/env bash
# e2e_tenantfair.sh — policy: TenantFair on the real control plane (issue 17,
# design §2.9): the live HeadroomConfig is switched from Proportional to
# TenantFair, and the limits follow the offline planner's targets.
#
# On one simulated 16-core kwok node: namespace A (no weight label) runs five
# 1000m pods, namespace B (kube-headroom.dev/weight=3) one 1000m pod; the
# controller runs as the least-privilege user of the chart's RBAC. Under
# Proportional every pod gets 1000 + 10000/6 → 2670m. The HeadroomConfig is
# patched to policy: TenantFair: S = 10000, W = 4, so A's pods get 1500m each
# and B's 8500m (design §2.9's worked example) — checked against the hand
# values and against `headroom plan -f` of a dump of the cluster taken then,
# and the status annotations name tenantfair-v1. Prints PASS/FAIL per check
# and "N passed, N failed"; exits non-zero on a failure. Needs
# `tests/cluster/cluster.sh up`. About 30 s.
set -uo pipefail
# shellcheck source=../lib/common.sh
. "$(dirname "${BASH_SOURCE[0]}")/../lib/common.sh"
MPORT=${HEADROOM_E2E_TENANTFAIR_PORT:-$(free_port)}
WORK=$(mktemp -d /tmp/headroom-e2e.XXXXXX)
NSA=e2e-tf-a-$S NSB=e2e-tf-b-$S NODE=e2e-tf-n-$S
PODS=("$NSA web-0" "$NSA web-1" "$NSA web-2" "$NSA web-3" "$NSA web-4" "$NSB db-0")

cleanup() {
  stop_controller KILL
  delete_objects
  k delete headroomconfig cluster --ignore-not-found >/dev/null 2>&1
  remove_identity headroom-e2e-tf
  if [ "$failed" -gt 0 ]; then echo "--- controller log (tail)"; tail -n 40 "$WORK/controller.log"; fi
  rm -rf "$WORK"
}
trap cleanup EXIT

limits() { # -> "ns/pod=millicores" of each pod on the node, sorted (one request)
  k get pods -A --field-selector "spec.nodeName=$NODE" -o json 2>/dev/null |
    jq -r '.items[] | "\(.metadata.namespace)/\(.metadata.name)=" +
      (.spec.containers[0].resources.limits.cpu // "" |
        if . == "" then "" elif endswith("m") then .[:-1] else (tonumber * 1000 | tostring) end)' |
    sort
}
want() { # milli for A's pods, milli for B's -> the lines limits prints then
  { for i in 0 1 2 3 4; do echo "$NSA/web-$i=$1"; done; echo "$NSB/db-0=$2"; } | sort
}
want_all() { [ "$(limits)" = "$(want "$1" "$2")" ]; }
planned() { # -> "ns/pod=target" from the offline planner on a dump taken now
  dump_cluster && planned_targets '$node == "'"$NODE"'"'
}
annotation() { k -n "$1" get pod "$2" -o jsonpath='{.metadata.annotations.kube-headroom\.dev/status}' 2>/dev/null; }
policy_named() { # name -> every pod's status annotation on the node says that policy
  [ "$(k get pods -A --field-selector "spec.nodeName=$NODE" -o json 2>/dev/null |
    jq --arg p "$1" '[.items[] | .metadata.annotations["kube-headroom.dev/status"] // "" |
      select(contains("\"policy\":\"" + $p + "\""))] | length')" = ${#PODS[@]} ]
}

require_cluster
install_identity headroom-e2e-tf
mkns "$NSA" managed
mkns "$NSB" managed
k label namespace "$NSB" kube-headroom.dev/weight=3 >/dev/null
mknode "$NODE" 16
k delete headroomconfig cluster --ignore-not-found >/dev/null 2>&1
printf 'apiVersion: kube-headroom.dev/v1alpha1\nkind: HeadroomConfig\nmetadata: {name: cluster}\nspec: {dryRun: false}\n' |
  k create -f - >/dev/null
for p in "${PODS[@]}"; do
  read -r ns pod <<<"$p"
  mkpod "$ns" "$pod" "$NODE" 1000m
done
all_running() {
  [ "$(k get pods -A --field-selector "spec.nodeName=$NODE,status.phase=Running" -o name 2>/dev/null |
    wc -l)" = ${#PODS[@]} ]
}
wait_until 60 all_running
start_controller || { fail "controller start" "not ready within 60 s"; finish; exit; }

# Proportional (the default): F = 1 + 10000/6000, every pod 2666.7 → 2670m.
wait_until 60 want_all 2670 2670
L=$(limits) P=$(planned)
WHY="limits: $(echo $L)"
check "Proportional: every pod 2670m (1000m + 10000m·1000/6000)" [ "$L" = "$(want 2670 2670)" ]
WHY="limits: $(echo $L); planner: $(echo $P)"
check "Proportional: the limits are the planner's targets" [ "$L" = "$P" ]

# Switch the live HeadroomConfig to TenantFair.
k patch headroomconfig cluster --type merge -p '{"spec":{"policy":"TenantFair"}}' >/dev/null
t0=$(now_ms)
wait_until 60 want_all 1500 8500
took=$(($(now_ms) - t0))
L=$(limits) P=$(planned)
WHY="limits after ${took} ms: $(echo $L)"
check "TenantFair: A's five pods 1500m (S_a = 2500), B's pod 8500m (weight 3: S_b = 7500)" \
  [ "$L" = "$(want 1500 8500)" ]
WHY="limits: $(echo $L); planner: $(echo $P)"
check "TenantFair: the limits are the offline planner's targets (plan -f of a dump)" [ "$L" = "$P" ]
wait_until 30 policy_named tenantfair-v1
WHY="$NSB/db-0: $(annotation "$NSB" db-0)"
check "the status annotations name the policy tenantfair-v1" policy_named tenantfair-v1
WHY=$("$HEADROOM" node "$NODE" -f "$WORK/dump.json" 2>&1 | grep tenant)
check "node shows each tenant's weight and slack share" \
  grep -q "tenant $NSB  weight 3/4  slack share 7500m" <<<"$WHY"
finish
