#!/usr/bin/env bash
# e2e_robust.sh — robustness end to end (design §5, §6, §10), counted from the API
# server's audit log (its own record of requests, tests/cluster/README.md),
# never from the daemon's counters, with one leader-elected controller
# running as the least-privilege identity of charts/kube-headroom/templates/rbac.yaml:
#
#   U. Unknown node (design §6): a managed pod bound to a Node
#      that does not exist gets no write at all — no request of the
#      controller's user names it — while the metric, the ResizeSkipped event
#      and `headroom explain` give the reason node-unknown; once the Node is
#      created the pod converges to the limit explain computes.
#   R. Live client rate (design §5, §11): clientQPS 2 /
#      clientBurst 2 patched into the HeadroomConfig while the controller
#      runs, then a write wave (60 pods whose nodes' allocatable doubles):
#      every request the limiter paces (all but get/list/watch and the
#      Lease) stays within 2 per second plus the burst in every window.
#   T. SIGTERM during limiter waits (design §10): at clientQPS
#      1 with the wave still pending, SIGTERM: the process exits 0 (not the
#      10 s watchdog) within 10 s, no paced write arrives once the waits are
#      abandoned, and the Lease is released (holder cleared, duration 1 s,
#      renewTime at the release) by an update from the controller's user.
#
# Prints PASS/FAIL per check, figures, and "N passed, N failed".
set -uo pipefail
# shellcheck source=../lib/common.sh
. "$(dirname "${BASH_SOURCE[0]}")/../lib/common.sh"
MPORT=${HEADROOM_E2E_ROBUST_PORT:-$(free_port)}
WORK=$(mktemp -d /tmp/headroom-robust.XXXXXX)
ID=headroom-robust
NS=e2e-r-$S GHOST=e2e-r-ghost-$S
WAVE_NODES=(e2e-r-w0-$S e2e-r-w1-$S e2e-r-w2-$S)
PODS_PER_NODE=60 # enough that the paced wave outlasts the window and the T section (resizes have the limiter to themselves while any is outstanding: 53 of 120 were left after the window, 0 at T0b)
WINDOW_S=20 # how long the paced wave is measured

cleanup() {
  k delete node "$GHOST" --ignore-not-found --wait=false >/dev/null 2>&1
  k -n kube-headroom delete lease kube-headroom --ignore-not-found >/dev/null 2>&1
  cleanup_common
}
trap cleanup EXIT
require_cluster
# Someone else's /readyz on our port would pass for ours.
if curl -s -o /dev/null -m 2 "http://127.0.0.1:$MPORT/"; then
  fail "metrics port" "127.0.0.1:$MPORT is already in use (set HEADROOM_E2E_ROBUST_PORT)"; finish; exit
fi

# Requests the client limiter paces (kube/transport/client.c: every request
# but GET goes through it; the Lease's are made unlimited, lease.c).
PACED='(.verb | IN("get", "list", "watch") | not) and .objectRef.resource != "leases"'
# requestReceivedTimestamp as seconds since the epoch, with the microseconds.
TS='(.requestReceivedTimestamp | capture("^(?<s>[^.]+)[.](?<f>[0-9]+)Z$")) as $c | (($c.s + "Z") | fromdate) + ("0." + $c.f | tonumber)'
epoch() { date +%s.%N; }
paced_ts() { # mark -> the paced requests' times since it, sorted
  mine "$1" "$PACED" | jq -r "$TS" | sort -n
}
# The most requests in any window of W seconds that starts at a request.
maxin() { # W file
  awk -v w="$1" '{t[NR] = $1} END {m = 0; j = 1; for (i = 1; i <= NR; i++) {while (j <= NR && t[j] < t[i] + w) j++; if (j - i > m) m = j - i} print m}' "$2"
}
hcfg_acked() { # the controller has applied the HeadroomConfig's generation
  [ "$(k get headroomconfig cluster -o jsonpath='{.status.observedGeneration}')" = \
    "$(k get headroomconfig cluster -o jsonpath='{.metadata.generation}')" ]
}
set_rate() { # qps burst
  k patch headroomconfig cluster --type=merge \
    -p "{\"spec\":{\"rateLimits\":{\"clientQPS\":$1,\"clientBurst\":$2}}}" >/dev/null
}
leader_is_me() { # the Lease names this process (identity host_PID_time)
  k -n kube-headroom get lease kube-headroom -o jsonpath='{.spec.holderIdentity}' | matches "_${CTL_PID}_"
}
# Managed pods on the wave nodes the planner, reading the live cluster,
# would still write.
pending() {
  local n=0 node c
  for node in "${WAVE_NODES[@]}"; do
    c=$("$HEADROOM" node "$node" -o json 2>/dev/null | jq '[.nodes[0].pods[] | select(.managed and .write)] | length') || c=999
    n=$((n + c))
  done
  echo "$n"
}
none_pending() { [ "$(pending)" = 0 ]; }

k -n kube-headroom delete lease kube-headroom --ignore-not-found >/dev/null 2>&1
start_controller --manage e2e-robust --leader-elect || { fail "controller start" "$START_WHY"; finish; exit; }
WHY="the Lease never named pid $CTL_PID"
check "the controller holds the Lease" wait_until 30 leader_is_me

# ---------------------------------------------------- U. unknown node
m_u=$(audit_mark)
u0=$(metric 'headroom_capacity_skip_total{reason="node-unknown"}')
# Limit 1 on request 200m: planned with allocatable 0 it would become a
# "decrease" to 200m, the write the gate must hold back.
mkpod "$NS" ghost "$GHOST" 200m 1
held() { [ "$(metric 'headroom_capacity_skip_total{reason="node-unknown"}')" -gt "$u0" ]; }
skipped_event() {
  k -n "$NS" get events.events.k8s.io -o json | jq -e --arg p ghost \
    '[.items[] | select(.regarding.name == $p and .reason == "ResizeSkipped" and (.note | test("node-unknown")))] | length == 1' >/dev/null
}
WHY="headroom_capacity_skip_total{reason=\"node-unknown\"} $(metric 'headroom_capacity_skip_total{reason="node-unknown"}') (before $u0)"
check "U1. held pods are counted: headroom_capacity_skip_total{reason=\"node-unknown\"} rises" wait_until 20 held
WHY="no ResizeSkipped event naming node-unknown for the pod"
check "U2. one ResizeSkipped event says node-unknown" wait_until 10 skipped_event
sleep 4 # two more debounce periods: the node is reconciled again
ghost_writes=$(mine "$m_u" '.objectRef.resource == "pods" and .objectRef.name == "ghost" and (.verb | IN("get", "list", "watch") | not)' | wc -l)
WHY="$ghost_writes requests by $ID wrote to pods/ghost; limit now '$(cpu_limit "$NS" ghost)'"
check "U3. audit: no write to the pod by the controller's user, limit still 1" \
  [ "$ghost_writes" = 0 -a "$(cpu_limit "$NS" ghost)" = 1 ]
ex=$("$HEADROOM" explain ghost -n "$NS" --kubeconfig "$USER_KC" 2>&1)
WHY="explain said: $(echo "$ex" | head -n 4 | tr '\n' ' ')"
check "U4. explain: not planned (node-unknown)" grep -q 'not planned (node-unknown)' <<<"$ex"
m_n=$(audit_mark)
mknode "$GHOST" 8
# Alone on 8 cores: min(200m x maxMultiplier 10, 8 cores) = 2 (design §2).
WHY="limit '$(cpu_limit "$NS" ghost)'"
check "U5. the Node appears: the pod converges to 2 cores" wait_until 20 limit_is "$NS" ghost 2
ex=$("$HEADROOM" explain ghost -n "$NS" --kubeconfig "$USER_KC" 2>&1)
want=$(echo "$ex" | awk '/^ *target \(quantum/ {print $NF}')
WHY="explain target '$want', limit '$(cpu_limit "$NS" ghost)'"
check "U6. the applied limit is explain's target ($want)" [ -n "$want" -a "$want" = "$(cpu_limit "$NS" ghost)" ]
resized=$(mine "$m_n" '.objectRef.name == "ghost" and .objectRef.subresource == "resize" and .verb == "patch"' | wc -l)
WHY="$resized resize patches in the audit log"
check "U7. audit: the resize is there once the Node is known (the filter sees writes)" [ "$resized" -ge 1 ]

# ---------------------------------------------------- R. live client rate
for n in "${WAVE_NODES[@]}"; do mknode "$n" 8; done
m_w=$(audit_mark)
{
  for n in "${WAVE_NODES[@]}"; do
    for i in $(seq 1 "$PODS_PER_NODE"); do
      cat <<POD
---
apiVersion: v1
kind: Pod
metadata: {name: $n-p$i, namespace: $NS}
spec:
  nodeName: $n
  containers: [{name: app, image: registry.invalid/app:1, resources: {requests: {cpu: 100m, memory: 16Mi}}}]
POD
    done
  done
} | k apply -f - >/dev/null
t0=$(now_ms)
WHY="$(pending) pods still to write"
check "R0. $(( ${#WAVE_NODES[@]} * PODS_PER_NODE )) pods converge at the default rate" wait_until 40 none_pending
paced_ts "$m_w" >"$WORK/wave1.ts"
echo "figure: first wave converged in $(( $(now_ms) - t0 )) ms at the default rate: $(wc -l <"$WORK/wave1.ts") paced requests, at most $(maxin 1 "$WORK/wave1.ts") in 1 s"

set_rate 2 2
WHY="status.observedGeneration never reached the new generation"
check "R1. clientQPS 2, clientBurst 2 applied live (status at the new generation)" wait_until 20 hcfg_acked
sleep 1 # the status write itself drains from the bucket
m_r=$(audit_mark)
tr0=$(epoch)
# Doubling allocatable (8 -> 16 cores) raises every pod's target: a wave.
for n in "${WAVE_NODES[@]}"; do
  k patch node "$n" --subresource=status --type=merge \
    -p '{"status":{"allocatable":{"cpu":"16"},"capacity":{"cpu":"16"}}}' >/dev/null
done
sleep "$WINDOW_S"
tr1=$(epoch)
left=$(pending)
paced_ts "$m_r" | awk -v a="$tr0" -v b="$tr1" '$1 >= a && $1 < b' >"$WORK/paced.ts"
np=$(wc -l <"$WORK/paced.ts")
verbs=$(mine "$m_r" "$PACED" | jq -r '"\(.verb) \(.objectRef.resource)\(if .objectRef.subresource then "/" + .objectRef.subresource else "" end)"' | sort | uniq -c | awk '{printf "%s%s %s=%s", sep, $2, $3, $1; sep=", "}')
rate=$(awk 'NR == 1 {a = $1} {b = $1} END {if (NR > 1) printf "%.2f", (NR - 1) / (b - a); else print 0}' "$WORK/paced.ts")
echo "figure: $np paced requests in ${WINDOW_S} s ($verbs): $rate/s between the first and the last; $left pods still to write"
viol=""
for w in 1 2 5 10 "$WINDOW_S"; do
  m=$(maxin "$w" "$WORK/paced.ts")
  echo "figure: at most $m paced requests in any ${w} s window (bound $((2 * w + 2)))"
  [ "$m" -le $((2 * w + 2)) ] || viol="$viol ${w}s:$m>$((2 * w + 2))"
done
WHY="over the bound:$viol"
check "R2. audit: every window of W s holds at most 2W + 2 paced requests (W = 1, 2, 5, 10, $WINDOW_S)" [ -z "$viol" ]
# Paced, not idle: the wave was still pending and the limiter was busy.
WHY="$np requests in ${WINDOW_S} s, $left pods still to write"
check "R3. the wave outlasts the window: the limiter, not a lack of work, set the pace (>= $((3 * WINDOW_S / 2)) requests, pods left)" \
  [ "$np" -ge $((3 * WINDOW_S / 2)) -a "$left" -gt 0 ]

# ---------------------------------------------------- T. SIGTERM in limiter waits
set_rate 1 1
WHY="status.observedGeneration never reached the new generation"
check "T0. clientQPS 1, clientBurst 1 applied live" wait_until 20 hcfg_acked
sleep 2 # both workers now hold a reservation a second or two away
left=$(pending)
WHY="$left pods still to write"
check "T0b. the wave is still pending: workers are waiting in the limiter ($left pods to write)" [ "$left" -gt 0 ]
m_t=$(audit_mark)
ts=$(epoch)
kill -TERM "$CTL_PID"
wait "$CTL_PID"
rc=$?
te=$(epoch)
CTL_PID=""
dt=$(awk -v a="$ts" -v b="$te" 'BEGIN {printf "%.2f", b - a}')
echo "figure: SIGTERM with $left pods still to write: exit $rc after $dt s"
WHY="exit status $rc after $dt s (the watchdog exits 1 at 10 s)"
check "T1. SIGTERM: the process exits 0 within 10 s (${dt} s)" \
  [ "$rc" = 0 -a "$(awk -v d="$dt" 'BEGIN {print (d < 10)}')" = 1 ]
late=$(paced_ts "$m_t" | awk -v a="$ts" '$1 > a + 0.5 {printf "+%.2fs ", $1 - a}')
WHY="paced requests arrived at $late after SIGTERM"
check "T2. audit: no paced write arrives later than 0.5 s after SIGTERM (the limiter waits were abandoned)" [ -z "$late" ]
k -n kube-headroom get lease kube-headroom -o json >"$WORK/lease.json"
holder=$(jq -r '.spec.holderIdentity // ""' "$WORK/lease.json")
dur=$(jq -r '.spec.leaseDurationSeconds' "$WORK/lease.json")
renew=$(jq -r '.spec.renewTime | capture("^(?<s>[^.]+)[.](?<f>[0-9]+)Z$") as $c | (($c.s + "Z") | fromdate) + ("0." + $c.f | tonumber)' "$WORK/lease.json")
WHY="holder '$holder', leaseDurationSeconds $dur, renewTime $renew (SIGTERM at $ts)"
check "T3. the Lease is released: no holder, duration 1 s, renewed at the release" \
  [ -z "$holder" -a "$dur" = 1 -a "$(awk -v r="$renew" -v a="$ts" 'BEGIN {print (r >= a - 1)}')" = 1 ]
rel=$(mine "$m_t" '.objectRef.resource == "leases" and .objectRef.name == "kube-headroom" and .verb == "update" and .responseStatus.code == 200' |
  jq -r "$TS" | awk -v a="$ts" '$1 >= a {printf "+%.2fs ", $1 - a}')
WHY="no successful Lease update by $ID after SIGTERM"
check "T4. audit: the release is an update of the Lease by the controller's user (${rel:-none})" [ -n "$rel" ]
WHY="log: $(grep -E 'lease|stopped|shutdown' "$WORK/controller.log" | tail -n 3 | tr '\n' ' ')"
check "T5. the log says lease released, then stopped" \
  sh -c "grep -q 'lease released' '$WORK/controller.log' && grep -q 'msg=\"stopped\"' '$WORK/controller.log'"

echo
finish
