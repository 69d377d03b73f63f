#!/usr/bin/env bash
# e2e_nodepools.sh — spec.nodePools on the real control plane (issue 17,
# design §2.11): two node pools with different multipliers, a live change of
# one pool's override, the schema's refusals and a refusal only the decoder
# makes (fail closed).
#
# Two simulated 16-core kwok nodes labelled e2e-pool=a-$S and e2e-pool=b-$S,
# two 1000m pods on each (S = 14000, so each pod's raw target is 8000m and the
# pool's maxMultiplier caps it); the top level says maxMultiplier 10 and the
# controller runs as the least-privilege user of the chart's RBAC.
#  P1  pool-a (maxMultiplier 3) gives its node's pods 3000m, pool-b (6) 6000m;
#      `headroom plan -f` of a dump taken then plans the same limits, and
#      `explain -f` names the pool
#  P2  status.nodePools reports each pool with 1 node; headroom_node_pool_info
#      labels each node with its pool
#  P3  pool-a's override changed live to 4: its two pods are resized to
#      4000m, once each, and the pods of pool-b get no write at all (audit
#      record), nor is pool-b's node even re-planned (no decision logged)
#  P4  node b relabelled into pool-a: its pods follow pool-a (4000m), the
#      status counts move to pool-a 2, pool-b 0
#  P5  the API server refuses duplicate pool names, an out-of-bounds override
#      and a selector operator In without values (the CRD schema's messages)
#  P6  a pool multiplier of 0.5 passes the schema but not the decoder: Ready
#      False, InvalidSpec naming spec.nodePools, the last good config stays in
#      force (no write)
# Prints PASS/FAIL per check and "N passed, N failed"; exits non-zero on a
# failure. Needs `tests/cluster/cluster.sh up`. About 60 s.
set -uo pipefail
# shellcheck source=../lib/common.sh
. "$(dirname "${BASH_SOURCE[0]}")/../lib/common.sh"
MPORT=${HEADROOM_E2E_NODEPOOLS_PORT:-$(free_port)}
WORK=$(mktemp -d /tmp/headroom-e2e.XXXXXX)
NS=e2e-np-$S NA=e2e-np-a-$S NB=e2e-np-b-$S ID=headroom-e2e-np

trap cleanup_common EXIT

limits() { # -> "pod=millicores" of each pod in the namespace, sorted (one request)
  k -n "$NS" get pods -o json 2>/dev/null |
    jq -r '.items[] | "\(.metadata.name)=" +
      (.spec.containers[0].resources.limits.cpu // "" |
        if . == "" then "" elif endswith("m") then .[:-1] else (tonumber * 1000 | tostring) end)' |
    sort
}
want() { printf 'a-0=%s\na-1=%s\nb-0=%s\nb-1=%s\n' "$1" "$1" "$2" "$2"; } # milli on a, milli on b
want_all() { [ "$(limits)" = "$(want "$1" "$2")" ]; }
planned() { # -> "pod=target" from the offline planner on a dump taken now
  dump_cluster && planned_targets ".namespace == \"$NS\"" | sed "s#^$NS/##"
}
pool_status() { k get headroomconfig cluster -o json | jq -c '[.status.nodePools[]? | [.name, .nodes]]'; }
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
decisions() { # offset node -> decisions logged for the node after the byte offset
  tail -c +"$(($1 + 1))" "$WORK/controller.log" | grep -c "msg=decision node=$2 " || true
}

require_cluster
# The pods exist before the controller starts: its first plan sees both pools full.
manage_stage e2e-nodepools 'maxMultiplier: "10"' "$(pools 3 6)" || { fail "setup" "$START_WHY"; finish; exit; }
mknode "$NA" 16
mknode "$NB" 16
k label node "$NA" "e2e-pool=a-$S" >/dev/null
k label node "$NB" "e2e-pool=b-$S" >/dev/null
for p in a-0 a-1; do mkpod "$NS" "$p" "$NA" 1000m; done
for p in b-0 b-1; do mkpod "$NS" "$p" "$NB" 1000m; done
all_running() { [ "$(k -n "$NS" get pods --field-selector status.phase=Running -o name | wc -l)" = 4 ]; }
wait_until 60 all_running
start_controller || { fail "controller start" "$START_WHY"; finish; exit; }

# P1: each pool's cap (the top level's 10 would give 8000m everywhere).
wait_until 60 want_all 3000 6000
L=$(limits) P=$(planned)
WHY="limits: $(echo $L)"
check "P1 pool-a (maxMultiplier 3): 3000m; pool-b (6): 6000m" [ "$L" = "$(want 3000 6000)" ]
WHY="limits: $(echo $L); planner: $(echo $P)"
check "P1 the limits are the offline planner's targets (plan -f of a dump)" [ "$L" = "$P" ]
E=$("$HEADROOM" explain "$NS/b-0" -f "$WORK/dump.json" 2>&1)
WHY=$(grep -m1 'pool' <<<"$E")
check "P1 explain -f names the pool: pool-b, maxMultiplier 6" grep -q "pool pool-b: .*maxMultiplier 6.000" <<<"$E"

# P2: the status counts (written within 10 s of the first reconciles) and the info series.
wait_until 30 eval '[ "$(pool_status)" = "[[\"pool-a\",1],[\"pool-b\",1]]" ]'
WHY="status.nodePools: $(pool_status)"
check "P2 status.nodePools: pool-a 1 node, pool-b 1 node" [ "$(pool_status)" = '[["pool-a",1],["pool-b",1]]' ]
WHY="pool-a: $(metric "headroom_node_pool_info{node=\"$NA\",pool=\"pool-a\"}"), pool-b: $(metric "headroom_node_pool_info{node=\"$NB\",pool=\"pool-b\"}")"
info_ok() {
  [ "$(metric "headroom_node_pool_info{node=\"$NA\",pool=\"pool-a\"}")" = 1 ] &&
    [ "$(metric "headroom_node_pool_info{node=\"$NB\",pool=\"pool-b\"}")" = 1 ]
}
check "P2 headroom_node_pool_info labels each node with its pool" info_ok

# P3: change pool-a's multiplier live; only pool-a's pods are written, only its node re-planned.
quiet_for 3 40 "$MPORT" >/dev/null
mark=$(audit_mark) logoff=$(stat -c %s "$WORK/controller.log")
k patch headroomconfig cluster --type json \
  -p '[{"op":"replace","path":"/spec/nodePools/0/overrides/maxMultiplier","value":"4"}]' >/dev/null
t0=$(now_ms)
wait_until 60 want_all 4000 6000
took=$(($(now_ms) - t0))
quiet_for 3 40 "$MPORT" >/dev/null
WHY="limits after ${took} ms: $(echo "$(limits)")"
check "P3 pool-a's pods 4000m, pool-b's still 6000m" want_all 4000 6000
A_RESIZES=$(audit_write_count "$mark" "$ID" \
  ".objectRef.resource == \"pods\" and .objectRef.subresource == \"resize\" and (.objectRef.name | startswith(\"a-\"))")
B_WRITES=$(audit_writes "$mark" "$ID" '.objectRef.resource == "pods" and (.objectRef.name | startswith("b-"))')
WHY="resizes of pool-a's pods: $A_RESIZES"
check "P3 each pod of pool-a resized once (audit: 2 resizes)" [ "$A_RESIZES" = 2 ]
WHY="writes to pool-b's pods: ${B_WRITES:-none}"
check "P3 no write of any kind to pool-b's pods (audit)" [ -z "$B_WRITES" ]
DA=$(decisions "$logoff" "$NA") DB=$(decisions "$logoff" "$NB")
WHY="decisions logged: $NA $DA, $NB $DB"
check "P3 only pool-a's node re-planned (decisions logged for it, none for pool-b's)" \
  eval '[ "$DA" -gt 0 ] && [ "$DB" = 0 ]'

# P4: a node's labels move it between pools.
k label node "$NB" --overwrite "e2e-pool=a-$S" >/dev/null
wait_until 60 want_all 4000 4000
WHY="limits: $(echo "$(limits)")"
check "P4 node b relabelled into pool-a: its pods follow pool-a (4000m)" want_all 4000 4000
wait_until 30 eval '[ "$(pool_status)" = "[[\"pool-a\",2],[\"pool-b\",0]]" ]'
WHY="status.nodePools: $(pool_status)"
check "P4 status.nodePools: pool-a 2 nodes, pool-b 0" [ "$(pool_status)" = '[["pool-a",2],["pool-b",0]]' ]

# P5: the CRD schema refuses what it can.
check "P5 the API server refuses a duplicate pool name" refused \
  '[{"op":"replace","path":"/spec/nodePools/1/name","value":"pool-a"}]' 'Duplicate value'
check "P5 the API server refuses an override out of bounds (maxMultiplier 101)" refused \
  '[{"op":"replace","path":"/spec/nodePools/1/overrides/maxMultiplier","value":"101"}]' \
  'maxMultiplier must be between 0 and 100'
check "P5 the API server refuses a selector requirement In without values" refused \
  '[{"op":"replace","path":"/spec/nodePools/1/nodeSelector","value":{"matchExpressions":[{"key":"k","operator":"In"}]}}]' \
  'values must be non-empty for In and NotIn'

# P6: what passes the schema but not the decoder: invalid, fail closed.
quiet_for 3 40 "$MPORT" >/dev/null
mark=$(audit_mark)
k patch headroomconfig cluster --type json \
  -p '[{"op":"replace","path":"/spec/nodePools/0/overrides/maxMultiplier","value":"0.5"}]' >/dev/null
wait_until 30 eval '[ "$(ready)" = "False/InvalidSpec" ]'
MSG=$(k get headroomconfig cluster -o jsonpath='{.status.conditions[?(@.type=="Ready")].message}')
WHY="Ready: $(ready): $MSG"
check "P6 a pool multiplier of 0.5: Ready False, InvalidSpec, naming spec.nodePools" \
  eval '[ "$(ready)" = False/InvalidSpec ] && grep -q "spec.nodePools" <<<"$MSG"'
sleep 3
W=$(audit_writes "$mark" "$ID" '.objectRef.resource == "pods"')
WHY="limits: $(echo "$(limits)"); pod writes: ${W:-none}"
check "P6 the last good config stays in force: no pod written, limits unchanged" \
  eval '[ -z "$W" ] && want_all 4000 4000'
finish
