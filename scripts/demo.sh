#!/usr/bin/env bash
# demo.sh — the README's "run it" command.
#
#   scripts/demo.sh          with a cluster configured ($KUBECONFIG or ~/.kube/config):
#                            read-only — prints what kube-headroom would set there
#                            (`headroom plan` of the live cluster); nothing is written.
#                            Without one: starts the local test cluster (test/cluster),
#                            loads a small multi-tenant workload onto simulated nodes,
#                            runs `headroom run` against it (live, not dry-run: it is our
#                            own throw-away cluster), and shows the limits it set and the
#                            arithmetic behind one of them.
#   scripts/demo.sh --down   stops the controller and the local test cluster
set -euo pipefail
cd "$(dirname "$0")/.."
STATE=${HEADROOM_CLUSTER_DIR:-/tmp/kube-headroom-cluster}

if [ "${1:-}" = "--down" ]; then
  if [ -f "$STATE/headroom.pid" ]; then kill "$(cat "$STATE/headroom.pid")" 2>/dev/null || true; fi
  exec test/cluster/cluster.sh down
fi

scripts/setup.sh
cmake -S . -B build/release -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo -Wno-dev >/dev/null
ninja -C build/release headroom >/dev/null
headroom=$PWD/build/release/headroom

have_cluster() {
  command -v kubectl >/dev/null 2>&1 || return 1
  [ -n "${KUBECONFIG:-}" ] || [ -f "$HOME/.kube/config" ] || return 1
  kubectl version --request-timeout=5s >/dev/null 2>&1
}

if have_cluster; then
  echo "==> what kube-headroom would set on $(kubectl config current-context) (read-only)"
  exec "$headroom" plan
fi

echo "==> no cluster configured: starting the local test cluster (the first run builds it)"
test/cluster/cluster.sh up
eval "$(test/cluster/cluster.sh env)"
if ! kubectl get ns demo-team-0 >/dev/null 2>&1; then
  echo "==> loading 4 simulated 16-core nodes and a mixed workload in 2 managed namespaces"
  test/cluster/mkload.sh --nodes 4 --node-prefix demo-node --cpu 16 --memory 64Gi \
    --workloads 8 --replicas 3 --namespaces 2 --ns-prefix demo-team --managed --wait 120
fi
kubectl apply -f charts/kube-headroom/charts/crds/crds/headroomconfig.yaml >/dev/null
kubectl wait --for condition=established crd/headroomconfigs.kube-headroom.dev --timeout=30s >/dev/null
kubectl apply -f - >/dev/null <<'YAML'
apiVersion: kube-headroom.dev/v1alpha1
kind: HeadroomConfig
metadata: {name: cluster}
spec: {dryRun: false}
YAML
if ! { [ -f "$STATE/headroom.pid" ] && kill -0 "$(cat "$STATE/headroom.pid")" 2>/dev/null; }; then
  "$headroom" run --metrics-addr 127.0.0.1:28080 --webhook-addr "" >"$STATE/headroom.log" 2>&1 &
  echo $! >"$STATE/headroom.pid"
  echo "==> headroom run started (pid $(cat "$STATE/headroom.pid"), log $STATE/headroom.log, metrics http://127.0.0.1:28080/metrics)"
  sleep 8
fi
echo "==> CPU limits kube-headroom set (requests are untouched)"
kubectl get pods -n demo-team-0 -o custom-columns='POD:.metadata.name,NODE:.spec.nodeName,REQUEST:.spec.containers[0].resources.requests.cpu,LIMIT:.spec.containers[0].resources.limits.cpu,QOS:.status.qosClass'
pod=$(kubectl get pods -n demo-team-0 -o jsonpath='{.items[0].metadata.name}')
echo "==> why: headroom explain $pod -n demo-team-0"
"$headroom" explain "$pod" -n demo-team-0
echo
echo "Try: kubectl headroom node demo-node-0   (build/release is kubectl-headroom too)"
echo "Stop everything: scripts/demo.sh --down"
