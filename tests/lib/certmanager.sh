# certmanager.sh — real cert-manager (CERT_MANAGER_VERSION, tests/cluster/versions.env; built by
# `cluster.sh tool cert-manager`) as a test tool: its controller and CA injector as two processes
# on this host against the test cluster, each with a kubeconfig of its own (user cert-manager,
# group system:masters: a test tool, not the product, so it gets no RBAC of ours to keep up to
# date), leader election in kube-system as its chart has it. No cert-manager webhook: nothing
# here needs its defaulting or validation. Sourced after common.sh.
#
#   certmanager_up DIR    its CRDs applied and Established, both processes started (PIDs and logs
#                         in DIR: cm-controller.{pid,log}, cm-cainjector.{pid,log}); exit 1 with
#                         CM_WHY when a step fails
#   certmanager_down DIR  both processes stopped by their PIDs, their Leases and CRDs deleted
#                         (every Issuer, ClusterIssuer and Certificate with them)
# shellcheck shell=bash
# shellcheck source=../cluster/versions.env
. "$ROOT/tests/cluster/versions.env"
CM_DIR=""
CM_WHY=""

certmanager_up() { # dir
  local dir=$1 kc out p
  CM_DIR=$("$CLUSTER" tool cert-manager) || { CM_WHY="cluster.sh tool cert-manager failed"; return 1; }
  # Big CRDs: server-side apply (no last-applied annotation).
  out=$(k apply --server-side --force-conflicts -f "$CM_DIR/crds.yaml" 2>&1) ||
    { CM_WHY="its CRDs: $out"; return 1; }
  out=$(k wait --for=condition=Established --timeout=30s crd/certificates.cert-manager.io \
    crd/issuers.cert-manager.io crd/clusterissuers.cert-manager.io crd/certificaterequests.cert-manager.io 2>&1) ||
    { CM_WHY="its CRDs not Established: $out"; return 1; }
  kc=$("$CLUSTER" user-kubeconfig cert-manager system:masters) || { CM_WHY="no kubeconfig for user cert-manager"; return 1; }
  p=$(free_port) || { CM_WHY="no free port for its metrics"; return 1; }
  "$CM_DIR/bin/controller" --kubeconfig="$kc" --leader-election-namespace=kube-system \
    --cluster-resource-namespace=kube-system --metrics-listen-address="127.0.0.1:$p" \
    >"$dir/cm-controller.log" 2>&1 &
  echo $! >"$dir/cm-controller.pid"
  "$CM_DIR/bin/cainjector" --kubeconfig="$kc" --leader-election-namespace=kube-system \
    >"$dir/cm-cainjector.log" 2>&1 &
  echo $! >"$dir/cm-cainjector.pid"
  sleep 1
  for p in controller cainjector; do
    kill -0 "$(cat "$dir/cm-$p.pid")" 2>/dev/null ||
      { CM_WHY="its $p exited at start: $(tail -n 5 "$dir/cm-$p.log")"; return 1; }
  done
}

certmanager_down() { # dir
  local dir=$1 p pid
  for p in controller cainjector; do
    [ -f "$dir/cm-$p.pid" ] || continue
    pid=$(cat "$dir/cm-$p.pid")
    # SIGTERM: each releases its Lease (ReleaseOnCancel); SIGKILL after 10 s.
    kill "$pid" 2>/dev/null && for _ in $(seq 1 50); do kill -0 "$pid" 2>/dev/null || break; sleep 0.2; done
    kill -KILL "$pid" 2>/dev/null
    wait "$pid" 2>/dev/null
    rm -f "$dir/cm-$p.pid"
  done
  k -n kube-system delete lease cert-manager-controller cert-manager-cainjector-leader-election \
    --ignore-not-found >/dev/null 2>&1
  [ -z "$CM_DIR" ] || k delete -f "$CM_DIR/crds.yaml" --ignore-not-found --wait=true --timeout=60s >/dev/null 2>&1
}
