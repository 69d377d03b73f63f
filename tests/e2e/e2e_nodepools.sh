#!/usr/bin/env bash
# e2e_nodepools.sh — what is refused in spec.nodePools on the real control plane (design §2.11,
# "Validation"): the CRD schema's refusals, and the decoder's of a spec an older CRD let through
# (fail closed). What the pools do to limits (each pool's cap, a live override change rewriting
# exactly its pods, a relabelled node, status.nodePools, headroom_node_pool_info, `plan -f`,
# `explain -f`) is the policy scenario tests/scenarios/nodepools.yaml.
#
# One simulated 16-core kwok node labelled e2e-pool=a-$S with two 1000m pods, in pool-a
# (maxMultiplier 3: 3000m each, a precondition); pool-b (6) selects nothing. The top level says
# maxMultiplier 10 and the controller runs as the least-privilege user of the chart's RBAC.
#  V1  the API server refuses duplicate pool names, an out-of-bounds override (101, 0.5) and a
#      selector operator In without values (the CRD schema's messages)
#  V2  a pool multiplier of 0.5, refused by the schema too (V1) but stored under an older, looser
#      CRD (tests/lib/common.sh patch_past_schema), is refused by the decoder: Ready False,
#      InvalidSpec naming spec.nodePools, the last good config stays in force (no write)
# Prints PASS/FAIL per check and "N passed, N failed"; exits non-zero on a failure. Needs
# `tests/cluster/cluster.sh up`. About 20 s.
set -uo pipefail
# shellcheck source=../lib/common.sh
. "$(dirname "${BASH_SOURCE[0]}")/../lib/common.sh"
MPORT=${HEADROOM_E2E_NODEPOOLS_PORT:-$(free_port)}
WORK=$(mktemp -d /tmp/headroom-e2e.XXXXXX)
NS=e2e-np-$S NA=e2e-np-a-$S ID=headroom-e2e-np

trap cleanup_common EXIT

limits() { # -> "pod=millicores" of each pod in the namespace, sorted (one request)
  k -n "$NS" get pods -o json 2>/dev/null |
    jq -r '.items[] | "\(.metadata.name)=" +
      (.spec.containers[0].resources.limits.cpu // "" |
        if . == "" then "" elif endswith("m") then .[:-1] else (tonumber * 1000 | tostring) end)' |
    sort
}
want_all() { [ "$(limits)" = "$(printf 'a-0=%s\na-1=%s' "$1" "$1")" ]; } # milli of both pods
ready() { k get headroomconfig cluster -o jsonpath='{.status.conditions[?(@.type=="Ready")].status}/{.status.conditions[?(@.type=="Ready")].reason}'; }
pools() { # pool-a multiplier, pool-b multiplier -> spec.nodePools, one line (manage_stage's spec)
  printf 'nodePools: [{name: pool-a, nodeSelector: {matchLabels: {e2e-pool: a-%s}}, overrides: {maxMultiplier: "%s"}}, ' "$S" "$1"
  printf '{name: pool-b, nodeSelector: {matchExpressions: [{key: e2e-pool, operator: In, values: [b-%s]}]}, overrides: {maxMultiplier: "%s"}}]\n' "$S" "$2"
}
refused() { # json-patch expected-message: the API server refuses the patch with that message
  local out
  out=$(k patch headroomconfig cluster --type json -p "$1" 2>&1) && { WHY="accepted"; return 1; }
  WHY=$out
  grep -qF "$2" <<<"$out"
}

require_cluster
manage_stage e2e-nodepools 'maxMultiplier: "10"' "$(pools 3 6)" || { fail "setup" "$START_WHY"; finish; exit; }
mknode "$NA" 16
k label node "$NA" "e2e-pool=a-$S" >/dev/null
for p in a-0 a-1; do mkpod "$NS" "$p" "$NA" 1000m; done
all_running() { [ "$(k -n "$NS" get pods --field-selector status.phase=Running -o name | wc -l)" = 2 ]; }
wait_until 60 all_running
start_controller || { fail "controller start" "$START_WHY"; finish; exit; }
wait_until 60 want_all 3000 ||
  { fail "setup: pool-a's pods at 3000m (maxMultiplier 3)" "limits: $(echo $(limits))"; finish; exit; }

# V1: the CRD schema refuses what it can.
check "V1 the API server refuses a duplicate pool name" refused \
  '[{"op":"replace","path":"/spec/nodePools/1/name","value":"pool-a"}]' 'Duplicate value'
check "V1 the API server refuses an override out of bounds (maxMultiplier 101)" refused \
  '[{"op":"replace","path":"/spec/nodePools/1/overrides/maxMultiplier","value":"101"}]' \
  'overrides.maxMultiplier must be 0 (no cap) or a number from 1 to 100'
check "V1 the API server refuses an override between 0 and 1 (maxMultiplier 0.5)" refused \
  '[{"op":"replace","path":"/spec/nodePools/0/overrides/maxMultiplier","value":"0.5"}]' \
  'overrides.maxMultiplier must be 0 (no cap) or a number from 1 to 100'
check "V1 the API server refuses a selector requirement In without values" refused \
  '[{"op":"replace","path":"/spec/nodePools/1/nodeSelector","value":{"matchExpressions":[{"key":"k","operator":"In"}]}}]' \
  'values must be non-empty for In and NotIn'

# V2: what an older CRD let through is refused by the decoder: invalid, fail closed.
quiet_for 3 40 "$MPORT" >/dev/null
mark=$(audit_mark)
patch_past_schema '[{"op":"replace","path":"/spec/nodePools/0/overrides/maxMultiplier","value":"0.5"}]' ||
  fail "V2 the pool multiplier of 0.5 stored under a looser CRD" "$WHY"
wait_until 30 eval '[ "$(ready)" = "False/InvalidSpec" ]'
MSG=$(k get headroomconfig cluster -o jsonpath='{.status.conditions[?(@.type=="Ready")].message}')
WHY="Ready: $(ready): $MSG"
check "V2 a pool multiplier of 0.5: Ready False, InvalidSpec, naming spec.nodePools" \
  eval '[ "$(ready)" = False/InvalidSpec ] && grep -q "spec.nodePools" <<<"$MSG"'
sleep 3
W=$(audit_writes "$mark" "$ID" '.objectRef.resource == "pods"')
WHY="limits: $(echo "$(limits)"); pod writes: ${W:-none}"
check "V2 the last good config stays in force: no pod written, limits unchanged" \
  eval '[ -z "$W" ] && want_all 3000'
finish
