#!/usr/bin/env bash
# Scale test of the test control plane (needs `cluster.sh up`): SCALE_NODES simulated nodes and
# SCALE_PODS pods (Deployments of 10, a Burstable/Guaranteed/BestEffort mix with sidecars) must all
# come up Running. The time it took is a figure printed against the budget (SCALE_BUDGET, 120 s),
# not a pass/fail line: on a shared machine it measures the neighbours as much as us. The test
# fails only when the pods are not all Running within SCALE_TIMEOUT (600 s). Deletes what it made.
set -uo pipefail
HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
STATE=${HEADROOM_CLUSTER_DIR:-/tmp/kube-headroom-cluster}
export KUBECONFIG=${KUBECONFIG:-$STATE/admin.kubeconfig}
export KUBECTL=${KUBECTL:-$("$HERE/../cluster/cluster.sh" bin kubectl)}
NODES=${SCALE_NODES:-100}
PODS=${SCALE_PODS:-3000}
BUDGET=${SCALE_BUDGET:-120}
LIMIT=${SCALE_TIMEOUT:-600}
REPLICAS=10
PFX=scale-$$

"$KUBECTL" get --raw /readyz >/dev/null 2>&1 || { echo "FAIL  scale: API server not ready; run tests/cluster/cluster.sh up"; echo "0 passed, 1 failed"; exit 1; }
cleanup() {
  "$HERE/../cluster/mkload.sh" --delete --node-prefix "$PFX-node" --ns-prefix "$PFX" || true
}
trap cleanup EXIT

# CPU seconds used by the control plane's processes (recorded by cluster.sh), to tell "slow because
# the machine is shared" from "too much work": 3,000 pods must fit in 2 cores x LIMIT.
cp_cpu() {
  local f tot=0 t
  for f in "$STATE"/pids/*; do
    case $f in *.bin) continue ;; esac
    t=$(awk '{print $14 + $15}' "/proc/$(cat "$f")/stat" 2>/dev/null) || continue
    tot=$((tot + t))
  done
  echo "$tot"
}
HZ=$(getconf CLK_TCK)
c0=$(cp_cpu)
t0=$(date +%s%3N)
out=$("$HERE/../cluster/mkload.sh" --nodes "$NODES" --node-prefix "$PFX-node" --cpu 32 --memory 128Gi --pods 110 \
  --workloads $((PODS / REPLICAS)) --replicas $REPLICAS --namespaces 10 --ns-prefix "$PFX" --managed \
  --wait "$LIMIT" 2>&1)
rc=$?
t1=$(date +%s%3N)
echo "$out"
secs=$(((t1 - t0) / 1000)).$(((t1 - t0) % 1000 / 100))
c1=$(cp_cpu)
echo "scale: control plane used $(((c1 - c0) / HZ)) CPU-seconds in $secs s wall (load average now: $(cut -d' ' -f1-3 /proc/loadavg))"
# strict check after the clock stopped: every pod of ours exists and is Running
if [ $rc -eq 0 ]; then
  phases=$("$KUBECTL" get pods -A -l app.kubernetes.io/managed-by=mkload \
    -o jsonpath='{range .items[*]}{.metadata.namespace} {.status.phase}{"\n"}{end}' | awk -v p="$PFX-" 'index($1, p) == 1 { print $2 }' | sort | uniq -c | tr '\n' ' ')
  echo "scale: pod phases: $phases"
  [ "$(echo "$phases" | awk '{print $1 " " $2}')" = "$PODS Running" ] || { echo "scale: expected exactly $PODS Running pods"; rc=1; }
fi
if [ $((t1 - t0)) -lt $((BUDGET * 1000)) ]; then verdict="within"; else verdict="OVER"; fi
echo "scale: figure: $NODES nodes and $PODS pods Running in $secs s — $verdict the ${BUDGET} s budget"
if [ $rc -eq 0 ]; then
  echo "PASS  scale: $NODES nodes Ready and $PODS pods Running ($secs s)"
  echo "1 passed, 0 failed"
  exit 0
fi
echo "FAIL  scale: $NODES nodes / $PODS pods not all Running within ${LIMIT}s (elapsed $secs s)"
echo "0 passed, 1 failed"
exit 1
