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
# Environment: KUBECTL (default: the cluster's kubectl), MKLOAD_PARALLEL (kubectl processes creating
# objects at once, default 24), MKLOAD_DELETE_TIMEOUT (seconds --delete waits for namespaces, 600).
#
# Every object gets the label app.kubernetes.io/managed-by=mkload. Nodes carry the annotation
# kwok.x-k8s.io/node=fake (kwok manages them) and labels type=kwok, kubernetes.io/hostname=NAME,
# node.kubernetes.io/instance-type=kwok-<cpu>-<memory>.
set -euo pipefail
HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
STATE=${HEADROOM_CLUSTER_DIR:-/tmp/kube-headroom-cluster}
export KUBECONFIG=${KUBECONFIG:-$STATE/admin.kubeconfig}
# the cluster's own kubectl (v1.37.2) unless KUBECTL says otherwise; any kubectl on PATH otherwise
KUBECTL=${KUBECTL:-$("$HERE/cluster.sh" bin kubectl)}
[ -x "$KUBECTL" ] || KUBECTL=$(command -v kubectl) || { echo "mkload: no kubectl (run cluster.sh build)" >&2; exit 1; }

nodes=10 node_prefix=kwok-node cpu=32 memory=128Gi podcap=110 node_labels=()
workloads=0 replicas=10 kind=deployment namespaces=1 ns_prefix=load managed=0 mix=6:3:1
sidecar_every=4 wait_s="" dry=0 delete=0
usage() { sed -n '2,31p' "$0" | sed 's/^# \{0,1\}//'; exit "${1:-2}"; }
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
  nds=$("$KUBECTL" get nodes -l app.kubernetes.io/managed-by=mkload -o name | grep "^node/$node_prefix-" || true)
  # Namespaces first, and wait (bounded) until they are gone: their pods are finalized by kwok's
  # pod-delete stage, which only works while the pods' nodes still exist.
  if [ -n "$nss" ]; then
    # shellcheck disable=SC2086
    "$KUBECTL" delete $nss --wait=false >/dev/null
    deadline=$(($(date +%s) + ${MKLOAD_DELETE_TIMEOUT:-600}))
    while [ "$(date +%s)" -lt "$deadline" ]; do
      # a failed list (API server busy) is not "gone"
      # shellcheck disable=SC2086
      left=$("$KUBECTL" get $nss --ignore-not-found -o name 2>/dev/null) && [ -z "$left" ] && break
      sleep 1
    done
  fi
  # shellcheck disable=SC2086
  [ -z "$nds" ] || "$KUBECTL" delete $nds --wait=false >/dev/null
  echo "mkload: deleted $(echo "$nss" | grep -c . || true) namespaces and $(echo "$nds" | grep -c . || true) nodes in $(( ($(now_ms) - t0) / 1000 )) s"
  exit 0
fi

# ------------------------------------------------------------------------------ YAML generation
# All YAML comes from single awk processes: forking per object is far too slow at 3,000 pods.
gen_nodes() {
  local extra="" kv
  for kv in "${node_labels[@]+"${node_labels[@]}"}"; do extra+="    ${kv%%=*}: \"${kv#*=}\""$'\n'; done
  awk -v n="$nodes" -v pfx="$node_prefix" -v cpu="$cpu" -v mem="$memory" -v pods="$podcap" -v extra="$extra" 'BEGIN {
    for (i = 0; i < n; i++) {
      name = pfx "-" i
      printf "---\napiVersion: v1\nkind: Node\nmetadata:\n  name: %s\n  annotations:\n    kwok.x-k8s.io/node: fake\n", name
      printf "  labels:\n    app.kubernetes.io/managed-by: mkload\n    type: kwok\n    kubernetes.io/hostname: %s\n", name
      printf "    kubernetes.io/os: linux\n    kubernetes.io/arch: amd64\n    node.kubernetes.io/instance-type: kwok-%s-%s\n", cpu, mem
      printf "%sspec: {}\nstatus:\n", extra
      printf "  allocatable: {cpu: \"%s\", memory: \"%s\", pods: \"%s\"}\n", cpu, mem, pods
      printf "  capacity: {cpu: \"%s\", memory: \"%s\", pods: \"%s\"}\n", cpu, mem, pods
    }
  }'
}

gen_namespaces() {
  awk -v n="$namespaces" -v pfx="$ns_prefix" -v managed="$managed" 'BEGIN {
    for (i = 0; i < n; i++) {
      printf "---\napiVersion: v1\nkind: Namespace\nmetadata:\n  name: %s-%d\n  labels:\n    app.kubernetes.io/managed-by: mkload\n", pfx, i
      if (managed == 1) print "    kube-headroom.dev/mode: managed"
    }
  }'
}

# Burstable: requests cpu 50m..200m / memory 64Mi..256Mi, limits twice that; Guaranteed: limits =
# requests; BestEffort: none. Sizes cycle with the workload index.
gen_workloads() {
  awk -v n="$workloads" -v kind="$kind" -v replicas="$replicas" -v nns="$namespaces" -v nspfx="$ns_prefix" \
      -v mb="$mix_b" -v mg="$mix_g" -v me="$mix_e" -v sce="$sidecar_every" '
  function res(qos, i, ind,   c, m) {
    c = 50 + (i % 4) * 50; m = 64 + (i % 4) * 64
    if (qos == "besteffort") return ind "resources: {}\n"
    if (qos == "guaranteed")
      return sprintf("%sresources:\n%s  requests: {cpu: %dm, memory: %dMi}\n%s  limits: {cpu: %dm, memory: %dMi}\n", ind, ind, c, m, ind, c, m)
    return sprintf("%sresources:\n%s  requests: {cpu: %dm, memory: %dMi}\n%s  limits: {cpu: %dm, memory: %dMi}\n", ind, ind, c, m, ind, 2 * c, 2 * m)
  }
  function podspec(qos, w, sc, ind,   s) {
    s = ind "terminationGracePeriodSeconds: 5\n"
    if (sc) s = s ind "initContainers:\n" ind "- name: sidecar\n" ind "  image: kwok.invalid/sidecar:1\n" ind "  restartPolicy: Always\n" res(qos, w + 1, ind "  ")
    s = s ind "containers:\n" ind "- name: app\n" ind "  image: kwok.invalid/app:1\n" res(qos, w, ind "  ")
    return s
  }
  BEGIN {
    tot = mb + mg + me
    for (w = 0; w < n; w++) {
      r = w % tot
      qos = (r < mb) ? "burstable" : (r < mb + mg) ? "guaranteed" : "besteffort"
      sc = (sce > 0 && w % sce == sce - 1) ? 1 : 0
      ns = nspfx "-" (w % nns); name = "w" w "-" qos
      if (kind == "deployment") {
        printf "---\napiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: %s\n  namespace: %s\n", name, ns
        printf "  labels: {app.kubernetes.io/managed-by: mkload, app: %s}\nspec:\n  replicas: %d\n", name, replicas
        printf "  selector:\n    matchLabels: {app: %s}\n  template:\n    metadata:\n", name
        printf "      labels: {app.kubernetes.io/managed-by: mkload, app: %s, qos: %s}\n    spec:\n%s", name, qos, podspec(qos, w, sc, "      ")
      } else {
        printf "---\napiVersion: v1\nkind: Pod\nmetadata:\n  name: %s\n  namespace: %s\n", name, ns
        printf "  labels: {app.kubernetes.io/managed-by: mkload, app: %s, qos: %s}\nspec:\n%s", name, qos, podspec(qos, w, sc, "  ")
      }
    }
  }'
}

expected_pods() { if [ "$kind" = deployment ]; then echo $((workloads * replicas)); else echo "$workloads"; fi; }

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
if [ "$dry" = 1 ]; then
  gen_nodes; gen_namespaces; gen_workloads
  exit 0
fi
gen_nodes >"$tmp/nodes.yaml"

# split FILE PREFIX N: the documents of FILE spread round-robin over N files PREFIX.0 .. PREFIX.N-1
split_docs() {
  awk -v n="$3" -v p="$2" '/^---$/ {i++} {print > (p "." (i % n))}' "$1"
}
# kubectl VERB over the chunks, PAR processes at a time (one kubectl handles its chunk sequentially)
par_kubectl() { # verb prefix
  local f pids=() rc=0
  for f in "$2".*; do
    [ -s "$f" ] || continue
    "$KUBECTL" "$1" --validate=false -f "$f" >/dev/null 2>"$f.err" &
    pids+=($!)
  done
  for f in "${pids[@]}"; do wait "$f" || rc=1; done
  [ $rc -eq 0 ] && return 0
  # tolerate re-creating existing nodes; anything else is an error
  if cat "$2".*.err | grep -v AlreadyExists | grep . >&2; then return 1; fi
  return 0
}
PAR=${MKLOAD_PARALLEL:-24}
t0=$(now_ms)
# Nodes go in with `create` (status, i.e. allocatable/capacity, is kept on create; existing nodes
# are left alone); namespaces with `apply`; then the workloads with `create` (one request per object,
# the cheapest for the API server; existing ones are left alone). Each step runs PAR kubectls,
# without client-side validation: the YAML is generated here, and each kubectl would otherwise
# download the API server's OpenAPI document first (on a loaded machine that alone times out).
if [ "$nodes" -gt 0 ]; then split_docs "$tmp/nodes.yaml" "$tmp/n" "$PAR"; par_kubectl create "$tmp/n"; fi
gen_namespaces >"$tmp/ns.yaml"
if [ "$namespaces" -gt 0 ]; then "$KUBECTL" apply --validate=false -f "$tmp/ns.yaml" >/dev/null; fi
if [ "$workloads" -gt 0 ]; then
  gen_workloads >"$tmp/w.yaml"
  split_docs "$tmp/w.yaml" "$tmp/w" "$PAR"
  par_kubectl create "$tmp/w"
fi
want=$(expected_pods)
echo "mkload: applied $nodes nodes, $namespaces namespaces, $workloads ${kind}s ($want pods) in $(( ($(now_ms) - t0) / 1000 )) s"

if [ -n "$wait_s" ]; then
  deadline=$(($(date +%s) + wait_s))
  sel=app.kubernetes.io/managed-by=mkload polls=0
  while :; do
    # one cheap list per poll: Deployments' readyReplicas, or bare pods' phase
    if [ "$kind" = deployment ]; then
      running=$("$KUBECTL" get deployments -A -l "$sel" -o jsonpath='{range .items[*]}{.metadata.namespace} {.status.readyReplicas}{"\n"}{end}' 2>/dev/null \
        | awk -v p="$ns_prefix-" 'index($1, p) == 1 { s += $2 } END { print s + 0 }')
      # readyReplicas is the ReplicaSet controller's word, and it can lag for many minutes: a
      # sync it fails ("read version ... is not as new as written version", seen with 3,000
      # pods on a loaded machine) is retried with an exponential back-off while every pod is
      # long Running. When it falls short, every 10th poll counts the Running pods themselves.
      if [ "$running" -lt "$want" ] && [ $((polls % 10)) = 9 ]; then
        running=$("$KUBECTL" get pods -A -l "$sel" --field-selector=status.phase=Running -o jsonpath='{range .items[*]}{.metadata.namespace}{"\n"}{end}' 2>/dev/null \
          | awk -v p="$ns_prefix-" 'index($1, p) == 1 { s++ } END { print s + 0 }')
      fi
      polls=$((polls + 1))
    else
      running=$("$KUBECTL" get pods -A -l "$sel" --field-selector=status.phase=Running -o jsonpath='{range .items[*]}{.metadata.namespace}{"\n"}{end}' 2>/dev/null \
        | awk -v p="$ns_prefix-" 'index($1, p) == 1 { s++ } END { print s + 0 }')
    fi
    ready_nodes=$("$KUBECTL" get nodes -l "$sel" -o jsonpath='{range .items[*]}{.metadata.name} {.status.conditions[?(@.type=="Ready")].status}{"\n"}{end}' 2>/dev/null \
      | awk -v p="$node_prefix-" 'index($1, p) == 1 && $2 == "True" { s++ } END { print s + 0 }')
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
