#!/usr/bin/env bash
# demo.sh — the README's "run it" command: kube-headroom's numbers for a cluster.
#
#   scripts/demo.sh          plan the configured cluster ($KUBECONFIG or ~/.kube/config)
#                            read-only; or, when none is configured, start the local
#                            test cluster (test/cluster), load a small multi-tenant
#                            workload onto simulated nodes, and plan that
#   scripts/demo.sh --down   stop the local test cluster the demo started
#
# It never writes to a cluster it did not create: the planner reads a
# `kubectl get … -o json` dump and prints what kube-headroom would do.
set -euo pipefail
cd "$(dirname "$0")/.."

if [ "${1:-}" = "--down" ]; then
  exec test/cluster/cluster.sh down
fi

scripts/setup.sh
cmake -S . -B build/release -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo -Wno-dev >/dev/null
ninja -C build/release headroom >/dev/null
headroom=build/release/headroom

have_cluster() {
  command -v kubectl >/dev/null 2>&1 || return 1
  [ -n "${KUBECONFIG:-}" ] || [ -f "$HOME/.kube/config" ] || return 1
  kubectl version --request-timeout=5s >/dev/null 2>&1
}

if have_cluster; then
  echo "==> planning the cluster of context $(kubectl config current-context) (read-only)"
  kubectl get nodes,pods,namespaces,limitranges -A -o json | "$headroom" plan -f -
  exit 0
fi

echo "==> no cluster configured: starting the local test cluster (first run builds it)"
test/cluster/cluster.sh up
eval "$(test/cluster/cluster.sh env)"
if ! kubectl get ns demo-team-0 >/dev/null 2>&1; then
  echo "==> loading 4 simulated 16-core nodes and a mixed workload in 2 managed namespaces"
  test/cluster/mkload.sh --nodes 4 --node-prefix demo-node --cpu 16 --memory 64Gi \
    --workloads 8 --replicas 3 --namespaces 2 --ns-prefix demo-team --managed --wait 120
fi
echo "==> what kube-headroom would set (scripts/demo.sh --down stops the cluster)"
kubectl get nodes,pods,namespaces,limitranges -A -o json | "$headroom" plan -f -
