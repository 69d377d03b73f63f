#!/usr/bin/env bash
# Creates simulated nodes (kwok) and a mix of workloads on the test cluster, for tests, benchmarks
# and the demo. Uses $KUBECONFIG, or the test cluster's admin kubeconfig when unset.
#
#   mkload.sh [options]
#     --nodes N            nodes to create (default 10)
#     --node-prefix P      node name prefix (default kwok-node); nodes are P-0 .. P-(N-1)
#     --cpu Q --memory Q --pods N
#                          allocatable (= capacity) of each node (default 32, 128Gi, 110)
#     --node-label K=V     extra node label (repeatable)
#     --workloads N        workloads to create (default 0)
#     --replicas N         pods per Deployment (default 10)
#     --kind deployment|pod
#                          Deployments of --replicas pods, or bare pods (one per workload) (default deployment)
#     --namespaces N       spread workloads over N namespaces (default 1)
#     --ns-prefix P        namespace prefix (default load); namespaces are P-0 .. P-(N-1)
#     --managed            label the namespaces kube-headroom.dev/mode=managed
#     --mix B:G:E          ratio of Burstable : Guaranteed : BestEffort workloads (default 6:3:1)
#     --sidecar-every K    every K-th workload gets a sidecar (init container, restartPolicy Always);
#                          0 = none (default 4)
#     --wait SECONDS       wait until every created pod is Running; print the elapsed time; exit 1 on
#                          timeout (default: do not wait)
#     --dry-run            print the YAML instead of applying it
#     --delete             delete the namespaces (P-*) and nodes (node-prefix-*) instead
#
# Every object gets the label app.kubernetes.io/managed-by=mkload. Nodes carry the annotation
# kwok.x-k8s.io/node=fake (kwok manages them) and labels type=kwok, kubernetes.io/hostname=NAME,
# node.kubernetes.io/instance-type=kwok-<cpu>-<memory>.
set -euo pipefail
HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
STATE=${HEADROOM_CLUSTER_DIR:-/tmp/kube-headroom-cluster}
export KUBECONFIG=${KUBECONFIG:-$STATE/admin.kubeconfig}
KUBECTL=${KUBECTL:-$(command -v kubectl 2>/dev/null || "$HERE/cluster.sh" bin kubectl)}

nodes=10 node_prefix=kwok-node cpu=32 memory=128Gi podcap=110 node_labels=()
workloads=0 replicas=10 kind=deployment namespaces=1 ns_prefix=load managed=0 mix=6:3:1
sidecar_every=4 wait_s="" dry=0 delete=0
usage() { sed -n '2,29p' "$0" | sed 's/^# \{0,1\}//'; exit "${1:-2}"; }
while [ $# -gt 0 ]; do
  case $1 in
    --nodes) nodes=$2; shift ;;
    --node-prefix) node_prefix=$2; shift ;;
    --cpu) cpu=$2; shift ;;
    --memory) memory=$2; shift ;;
    --pods) podcap=$2; shift ;;
    --node-label) node_labels+=("$2"); shift ;;
    --workloads) workloads=$2; shift ;;
    --replicas) replicas=$2; shift ;;
    --kind) kind=$2; shift ;;
    --namespaces) namespaces=$2; shift ;;
    --ns-prefix) ns_prefix=$2; shift ;;
    --managed) managed=1 ;;
    --mix) mix=$2; shift ;;
    --sidecar-every) sidecar_every=$2; shift ;;
    --wait) wait_s=$2; shift ;;
    --dry-run) dry=1 ;;
    --delete) delete=1 ;;
    -h|--help) usage 0 ;;
    *) echo "mkload: unknown option $1" >&2; usage ;;
  esac
  shift
done
case $kind in deployment|pod) ;; *) echo "mkload: --kind must be deployment or pod" >&2; exit 2 ;; esac
IFS=: read -r mix_b mix_g mix_e <<<"$mix"
mix_total=$((mix_b + mix_g + mix_e))
[ "$mix_total" -gt 0 ] || { echo "mkload: bad --mix $mix" >&2; exit 2; }

now_ms() { date +%s%3N; }

if [ "$delete" = 1 ]; then
  t0=$(now_ms)
  nss=$("$KUBECTL" get ns -l app.kubernetes.io/managed-by=mkload -o name | grep "^namespace/$ns_prefix-" || true)
  [ -z "$nss" ] || "$KUBECTL" delete $nss --wait=false >/dev/null
  nds=$("$KUBECTL" get nodes -l app.kubernetes.io/managed-by=mkload -o name | grep "^node/$node_prefix-" || true)
  [ -z "$nds" ] || "$KUBECTL" delete $nds --wait=false >/dev/null
  # wait (bounded) for the namespaces to go: their pods are finalized by kwok's pod-delete stage
  for _ in $(seq 1 600); do
    [ -z "$nss" ] && break
    left=$("$KUBECTL" get $nss --ignore-not-found -o name 2>/dev/null | wc -l)
    [ "$left" -eq 0 ] && break
    sleep 0.2
  done
  echo "mkload: deleted $(echo "$nss" | grep -c . || true) namespaces and $(echo "$nds" | grep -c . || true) nodes in $(( ($(now_ms) - t0) / 1000 )) s"
  exit 0
fi

# ------------------------------------------------------------------------------ YAML generation
gen_nodes() {
  local i name extra="" kv
  for kv in "${node_labels[@]+"${node_labels[@]}"}"; do extra+="    ${kv%%=*}: \"${kv#*=}\""$'\n'; done
  for ((i = 0; i < nodes; i++)); do
    name=$node_prefix-$i
    cat <<EOF
---
apiVersion: v1
kind: Node
metadata:
  name: $name
  annotations:
    kwok.x-k8s.io/node: fake
  labels:
    app.kubernetes.io/managed-by: mkload
    type: kwok
    kubernetes.io/hostname: $name
    kubernetes.io/os: linux
    kubernetes.io/arch: amd64
    node.kubernetes.io/instance-type: kwok-$cpu-$memory
${extra}spec: {}
status:
  allocatable: {cpu: "$cpu", memory: "$memory", pods: "$podcap"}
  capacity: {cpu: "$cpu", memory: "$memory", pods: "$podcap"}
EOF
  done
}

gen_namespaces() {
  local i
  for ((i = 0; i < namespaces; i++)); do
    cat <<EOF
---
apiVersion: v1
kind: Namespace
metadata:
  name: $ns_prefix-$i
  labels:
    app.kubernetes.io/managed-by: mkload
EOF
    [ "$managed" = 0 ] || echo "    kube-headroom.dev/mode: managed"
  done
}

# resources QOS INDEX -> YAML lines (indented for a container)
resources() {
  local qos=$1 i=$2 c m
  c=$((50 + (i % 4) * 50))m    # 50m..200m
  m=$((64 + (i % 4) * 64))Mi   # 64Mi..256Mi
  case $qos in
    burstable) printf '        resources:\n          requests: {cpu: %s, memory: %s}\n          limits: {cpu: %s, memory: %s}\n' \
      "$c" "$m" "$((${c%m} * 2))m" "$((${m%Mi} * 2))Mi" ;;
    guaranteed) printf '        resources:\n          requests: {cpu: %s, memory: %s}\n          limits: {cpu: %s, memory: %s}\n' \
      "$c" "$m" "$c" "$m" ;;
    besteffort) printf '        resources: {}\n' ;;
  esac
}

podspec() { # QOS INDEX SIDECAR -> pod spec lines at indent 4 ("spec:" excluded)
  local qos=$1 i=$2 sc=$3
  echo "    terminationGracePeriodSeconds: 5"
  if [ "$sc" = 1 ]; then
    echo "    initContainers:"
    echo "      - name: sidecar"
    echo "        image: kwok.invalid/sidecar:1"
    echo "        restartPolicy: Always"
    resources "$qos" $((i + 1))
  fi
  echo "    containers:"
  echo "      - name: app"
  echo "        image: kwok.invalid/app:1"
  resources "$qos" "$i"
}

gen_workloads() {
  local w qos sc ns name r
  for ((w = 0; w < workloads; w++)); do
    r=$((w % mix_total))
    if [ $r -lt "$mix_b" ]; then qos=burstable
    elif [ $r -lt $((mix_b + mix_g)) ]; then qos=guaranteed
    else qos=besteffort; fi
    sc=0
    [ "$sidecar_every" -gt 0 ] && [ $((w % sidecar_every)) -eq $((sidecar_every - 1)) ] && sc=1
    ns=$ns_prefix-$((w % namespaces))
    name=w$w-$qos
    if [ "$kind" = deployment ]; then
      cat <<EOF
---
apiVersion: apps/v1
kind: Deployment
metadata:
  name: $name
  namespace: $ns
  labels: {app.kubernetes.io/managed-by: mkload, app: $name}
spec:
  replicas: $replicas
  selector:
    matchLabels: {app: $name}
  template:
    metadata:
      labels: {app.kubernetes.io/managed-by: mkload, app: $name, qos: $qos}
    spec:
EOF
      podspec "$qos" "$w" "$sc" | sed 's/^/    /'
    else
      cat <<EOF
---
apiVersion: v1
kind: Pod
metadata:
  name: $name
  namespace: $ns
  labels: {app.kubernetes.io/managed-by: mkload, app: $name, qos: $qos}
spec:
EOF
      podspec "$qos" "$w" "$sc"
    fi
  done
}

expected_pods() { if [ "$kind" = deployment ]; then echo $((workloads * replicas)); else echo "$workloads"; fi; }

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
gen_nodes >"$tmp/nodes.yaml"
{ gen_namespaces; gen_workloads; } >"$tmp/workloads.yaml"
if [ "$dry" = 1 ]; then
  cat "$tmp/nodes.yaml" "$tmp/workloads.yaml"
  exit 0
fi

t0=$(now_ms)
# Nodes go in with `create` (status, i.e. allocatable/capacity, is kept on create); existing ones are left alone.
if [ "$nodes" -gt 0 ]; then
  "$KUBECTL" create -f "$tmp/nodes.yaml" 2>&1 >/dev/null | grep -v AlreadyExists >&2 || true
fi
if [ "$workloads" -gt 0 ] || [ "$namespaces" -gt 0 ]; then
  # one multi-document apply; kubectl applies in file order, so namespaces come first
  "$KUBECTL" apply -f "$tmp/workloads.yaml" >/dev/null
fi
want=$(expected_pods)
echo "mkload: applied $nodes nodes, $namespaces namespaces, $workloads ${kind}s ($want pods) in $(( ($(now_ms) - t0) / 1000 )) s"

if [ -n "$wait_s" ]; then
  deadline=$(($(date +%s) + wait_s))
  sel=app.kubernetes.io/managed-by=mkload
  while :; do
    running=0
    for ((i = 0; i < namespaces; i++)); do
      n=$("$KUBECTL" get pods -n "$ns_prefix-$i" -l "$sel" --field-selector=status.phase=Running -o name 2>/dev/null | wc -l)
      running=$((running + n))
    done
    ready_nodes=$("$KUBECTL" get nodes -l "$sel" -o jsonpath='{range .items[*]}{.status.conditions[?(@.type=="Ready")].status}{"\n"}{end}' | grep -c True || true)
    if [ "$running" -ge "$want" ] && [ "$ready_nodes" -ge "$nodes" ]; then
      echo "mkload: $running/$want pods Running, $ready_nodes/$nodes nodes Ready after $(( ($(now_ms) - t0) / 1000 )).$(( ($(now_ms) - t0) % 1000 / 100 )) s"
      exit 0
    fi
    if [ "$(date +%s)" -ge "$deadline" ]; then
      echo "mkload: TIMEOUT after ${wait_s}s: $running/$want pods Running, $ready_nodes/$nodes nodes Ready" >&2
      exit 1
    fi
    sleep 1
  done
fi
