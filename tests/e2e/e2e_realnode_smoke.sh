#!/usr/bin/env bash
# e2e_realnode_smoke.sh — the real node (design §14): a real kubelet, containerd and runc beside
# kwok's simulated nodes, and what a resize through `pods/resize` does to a container's cgroup.
#
#   1. the real node is Ready and tainted; a simulated node works beside it;
#   2. a Burstable burner pod runs there; its container's cpu.cfs_quota_us (found through the
#      pod's UID and container ID under the node's cgroup root) is its limit;
#   3. raising and lowering the limit through pods/resize rewrites that quota in place: same
#      container ID, restartCount 0; the status passes through PodResizeInProgress and ends with
#      the new resources and no resize condition (the sequence is printed, with timings);
#   4. a resize beyond the node: the API server refuses it (PodResizeValidator, 403, cause
#      NodeCapacity) before any kubelet sees it; a resize that fits the node but not beside a
#      neighbour is Deferred by the real kubelet and completes once the neighbour goes.
#
# Needs `cluster.sh up` and `cluster.sh real-node up` (the CTest fixtures do both). Prints PASS/FAIL
# per check and "N passed, N failed".
set -uo pipefail
# shellcheck source=../lib/common.sh
. "$(dirname "${BASH_SOURCE[0]}")/../lib/common.sh"
# shellcheck source=../lib/realnode.sh
. "$(dirname "${BASH_SOURCE[0]}")/../lib/realnode.sh"
WORK=$(mktemp -d /tmp/headroom-e2e-rn.XXXXXX)
NS=e2e-rn-smoke-$S
WATCH_PID=""

cleanup() {
  [ -z "$WATCH_PID" ] || kill "$(cat "$WORK/watch.pid")" 2>/dev/null
  delete_objects
  rm -rf "$WORK"
}
trap cleanup EXIT

require_real_node

# ------------------------------------------------------------------- 1. the node
taint=$(k get node "$REAL_NODE" -o jsonpath='{.spec.taints[?(@.key=="'"$REAL_TAINT"'")].effect}')
kver=$(k get node "$REAL_NODE" -o jsonpath='{.status.nodeInfo.kubeletVersion} {.status.nodeInfo.containerRuntimeVersion}')
WHY="taint effect '$taint', versions '$kver'"
check "1a. real node $REAL_NODE Ready, tainted NoSchedule, kubelet $kver" \
  eval '[ "$taint" = NoSchedule ] && [[ $kver == "v1.37."*" containerd://1.6."* ]]'
mkns "$NS" plain
mknode e2e-rn-kwok-$S 4
mkpod "$NS" onkwok e2e-rn-kwok-$S 100m 200m
check "1b. a pod on a simulated node beside it runs (kwok unaffected)" wait_until 30 running "$NS" onkwok

# ------------------------------------------------------------------- 2. a real pod
burner_pod "$NS" burn 200m 500m 2
check "2a. a Burstable burner pod is Running on the real node" wait_until 90 running "$NS" burn
qos=$(k -n "$NS" get pod burn -o jsonpath='{.status.qosClass}')
cid0=$(container_id "$NS" burn)
q=$(cg_quota "$NS" burn 2>/dev/null)
p=$(cg_period "$NS" burn 2>/dev/null)
WHY="qos $qos, quota '$q' period '$p' in $(cg_dir "$REAL_CG_CPU" "$NS" burn 2>/dev/null || echo '(no cgroup)')"
check "2b. its container's cgroup has cfs_quota_us 50000 / period 100000 (limit 500m)" \
  eval '[ "$qos" = Burstable ] && [ "$q" = 50000 ] && [ "$p" = 100000 ]'

# ------------------------------------------------------------------- 3. resize in place
# Every status the API server holds during the resize, stamped on arrival.
# (kubectl execs in a subshell that records its PID: killing it ends the whole pipeline.)
(echo "$BASHPID" >"$WORK/watch.pid" && exec "$KUBECTL" -n "$NS" get pod burn -w --output-watch-events -o json 2>/dev/null) |
  jq --unbuffered -c '.object | {g: .metadata.generation, og: .status.observedGeneration,
      c: [(.status.conditions // [])[] | select(.type | startswith("PodResize")) | {type, status, reason, message}],
      lim: .status.containerStatuses[0].resources.limits.cpu}' |
  while IFS= read -r l; do echo "$(now_ms) $l"; done >"$WORK/watch" &
WATCH_PID=$!
wait_until 10 test -s "$WORK/watch"
resize() { # ns pod json-resources
  k -n "$1" patch pod "$2" --subresource resize -p "{\"spec\":{\"containers\":[{\"name\":\"app\",\"resources\":$3}]}}" 2>&1
}
QF=$(cg_dir "$REAL_CG_CPU" "$NS" burn)/cpu.cfs_quota_us
until_quota() { # value seconds: poll the quota file itself every 20 ms; prints ms after $t0
  local end=$(($(now_ms) + $2 * 1000))
  until [ "$(cat "$QF")" = "$1" ]; do [ "$(now_ms)" -lt "$end" ] || break; sleep 0.02; done
  echo $(($(now_ms) - t0))
}
t0=$(now_ms)
resize "$NS" burn '{"limits":{"cpu":"1200m"}}' >/dev/null
tq=$(until_quota 120000 20)
same_container() { [ "$(container_id "$NS" burn)" = "$cid0" ] && [ "$(restart_count "$NS" burn)" = 0 ]; }
acked() { [ "$(k -n "$NS" get pod burn -o json | jq -r '[.status.containerStatuses[0].resources.limits.cpu, ([(.status.conditions // [])[] | select(.type | startswith("PodResize"))] | length)] | @tsv')" = "$1	0" ]; }
wait_until 20 acked 1200m
ta=$(($(now_ms) - t0))
WHY="quota $(cg_quota "$NS" burn), container $(container_id "$NS" burn) (was $cid0), restarts $(restart_count "$NS" burn)"
check "3a. limit 500m -> 1200m: quota 120000 after ${tq} ms, status acknowledged after ${ta} ms, same container, 0 restarts" \
  eval 'quota_is "$NS" burn 120000 && acked 1200m && same_container'
sleep 1
kill "$(cat "$WORK/watch.pid")" 2>/dev/null
wait "$WATCH_PID" 2>/dev/null
WATCH_PID=""
echo "      the API server's record of the resize (ms after the patch: generation/observedGeneration, resize conditions, status limit):"
awk -v t0="$t0" '{ms = $1 - t0; $1 = ""; printf "      %+6d ms %s\n", ms, $0}' "$WORK/watch"
inprog=$(grep -c '"type":"PodResizeInProgress"' "$WORK/watch")
WHY="$inprog statuses with PodResizeInProgress"
check "3b. the real kubelet reports PodResizeInProgress before it acknowledges" [ "$inprog" -ge 1 ]

t0=$(now_ms)
resize "$NS" burn '{"limits":{"cpu":"300m"}}' >/dev/null
tq=$(until_quota 30000 20)
wait_until 20 acked 300m
WHY="quota $(cg_quota "$NS" burn), container $(container_id "$NS" burn), restarts $(restart_count "$NS" burn)"
check "3c. limit 1200m -> 300m: quota 30000 after ${tq} ms, same container, 0 restarts" \
  eval 'quota_is "$NS" burn 30000 && acked 300m && same_container'

# ------------------------------------------------------------------- 4. beyond the node
alloc=$(milli "$(k get node "$REAL_NODE" -o jsonpath='{.status.allocatable.cpu}')")
big=$((alloc + 1000))
gen0=$(k -n "$NS" get pod burn -o jsonpath='{.metadata.generation}')
out=$(k -n "$NS" patch pod burn --subresource resize -o json \
  -p "{\"spec\":{\"containers\":[{\"name\":\"app\",\"resources\":{\"requests\":{\"cpu\":\"${big}m\"},\"limits\":{\"cpu\":\"${big}m\"}}}]}}" 2>&1)
echo "      API server: $out"
gen1=$(k -n "$NS" get pod burn -o jsonpath='{.metadata.generation}')
WHY="answer: $out"
check "4a. a resize beyond the node (${big}m on ${alloc}m allocatable) is refused by the API server (Forbidden, not enough allocatable)" \
  grep -q "Forbidden.*node didn't have enough allocatable resources: cpu, requested: $big, allocatable: $alloc" <<<"$out"
WHY="generation $gen0 -> $gen1, quota $(cg_quota "$NS" burn)"
check "4b. ... and nothing changed: same generation, quota 30000" eval '[ "$gen0" = "$gen1" ] && quota_is "$NS" burn 30000'

# A neighbour books most of the node; the resize fits the node but not beside it.
nb=$((alloc - 500))
burner_pod "$NS" neighbour "${nb}m" "${nb}m" 1
wait_until 90 running "$NS" neighbour
resize "$NS" burn '{"requests":{"cpu":"1"},"limits":{"cpu":"1"}}' >/dev/null
pending() { k -n "$NS" get pod burn -o json | jq -r '[(.status.conditions // [])[] | select(.type == "PodResizePending")][0] | "\(.reason)|\(.message)"'; }
deferred() { [ "$(pending | cut -d'|' -f1)" = Deferred ]; }
wait_until 20 deferred
pd=$(pending)
echo "      real kubelet: PodResizePending $pd"
WHY="PodResizePending '$pd', quota $(cg_quota "$NS" burn)"
check "4c. a resize that fits the node but not beside a ${nb}m neighbour is Deferred by the real kubelet; quota unchanged" \
  eval '[ "${pd%%|*}" = Deferred ] && grep -q "enough resource: cpu, requested: 1000, used: $nb, capacity: $alloc" <<<"$pd" && quota_is "$NS" burn 30000'
k -n "$NS" delete pod neighbour --wait=false >/dev/null
t0=$(now_ms)
tq=$(until_quota 100000 60)
wait_until 20 acked 1
WHY="quota $(cg_quota "$NS" burn), pending '$(pending)', container $(container_id "$NS" burn)"
check "4d. the neighbour gone, the kubelet retries: quota 100000 after ${tq} ms, no condition, same container, 0 restarts" \
  eval 'quota_is "$NS" burn 100000 && acked 1 && same_container'

finish
