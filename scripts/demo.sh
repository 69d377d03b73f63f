#!/usr/bin/env bash
# demo.sh — the README's "run it" command: watch one pod's CPU ceiling follow
# how booked its node is.
#
#   scripts/demo.sh            with a cluster configured ($KUBECONFIG or ~/.kube/config):
#                              read-only — `headroom plan` of that cluster, nothing written.
#                              Without one: the local demo below.
#   scripts/demo.sh --local    the local demo even when a cluster is configured: its own
#                              throw-away control plane (tests/cluster, simulated kwok nodes)
#                              in its own state directory, on ports cluster.sh chooses free
#                              and claims for it, so it never meets the test suite's clusters
#                              or a developer's; one 16-core node; a pod "solo" requesting
#                              2 cores lands alone, then neighbours land one by one and
#                              `headroom run` (live, dryRun: false) brings its ceiling down
#                              step by step; a table of each step, one `headroom explain`,
#                              the command that undoes it. The controller and the cluster
#                              keep running afterwards, to explore.
#   scripts/demo.sh --down     stops the demo's controller and its cluster, removes its state
#   --no-pause                 never wait for Enter between steps (the default when stdin is
#                              not a terminal: tests, CI)
#
# Where it runs: HEADROOM_DEMO_DIR (/tmp/kube-headroom-demo, apart from the test suite's
# /tmp/kube-headroom-cluster). Its ports are its cluster's: cluster.sh up picks a free port base
# (HEADROOM_DEMO_PORT_BASE to choose one) and records them in $HEADROOM_DEMO_DIR/ports.env; the
# controller's metrics take the first port the cluster leaves to its users (USER_PORT_FIRST, the
# base + 50; tests/cluster/README.md "Ports"). HEADROOM_BIN: use this binary instead of
# building build/release/headroom (then scripts/setup.sh is not run either).
set -euo pipefail
ROOT=$(cd "$(dirname "$0")/.." && pwd)
SELF=$ROOT/scripts/demo.sh
cd "$ROOT"

mode=auto pause=auto
for a in "$@"; do
  case "$a" in
    --local) mode=local ;;
    --down) mode=down ;;
    --no-pause) pause=no ;;
    -h | --help) sed -n '2,/^set -euo/p' "$0" | sed '$d; s/^# \{0,1\}//'; exit 0 ;;
    *) echo "demo.sh: unknown flag \"$a\" (--local, --down, --no-pause, --help)" >&2; exit 2 ;;
  esac
done
[ "$pause" = auto ] && { [ -t 0 ] && pause=yes || pause=no; }

DEMO_DIR=${HEADROOM_DEMO_DIR:-/tmp/kube-headroom-demo}
NS=headroom-demo NODE=demo-node

# cluster.sh with the demo's directory (never the caller's HEADROOM_CLUSTER_DIR, port base or
# Kubernetes version: the demo runs the pinned one), and no audit record: the suite asserts from
# it, the demo has nobody to read it (tests/cluster/README.md). Its ports are found again from
# $DEMO_DIR/ports.env, so `--down` needs only the directory.
cluster() {
  env -u HEADROOM_PORT_BASE -u HEADROOM_K8S_VERSION HEADROOM_AUDIT=off HEADROOM_CLUSTER_DIR="$DEMO_DIR" \
    ${HEADROOM_DEMO_PORT_BASE:+HEADROOM_PORT_BASE=$HEADROOM_DEMO_PORT_BASE} "$ROOT/tests/cluster/cluster.sh" "$@"
}
# The exact command that stops this demo (the directory only when it is not the default).
stop_cmd() {
  if [ "$DEMO_DIR" = /tmp/kube-headroom-demo ]; then echo "$SELF --down"; else echo "HEADROOM_DEMO_DIR=$DEMO_DIR $SELF --down"; fi
}
# The controller this demo started: its PID file names the binary, so a reused PID is not ours.
controller_pid() {
  local pid bin exe
  pid=$(cat "$DEMO_DIR/headroom.pid" 2>/dev/null) || return 1
  bin=$(cat "$DEMO_DIR/headroom.bin" 2>/dev/null) || return 1
  exe=$(readlink "/proc/$pid/exe" 2>/dev/null) || return 1
  [ "${exe% (deleted)}" = "$bin" ] && echo "$pid"
}

if [ "$mode" = down ]; then
  if pid=$(controller_pid); then
    kill -TERM "$pid"
    for _ in $(seq 100); do kill -0 "$pid" 2>/dev/null || break; sleep 0.1; done
    if kill -0 "$pid" 2>/dev/null; then echo "demo: headroom run ($pid) ignored SIGTERM for 10 s" >&2; exit 1; fi
    echo "demo: stopped headroom run (pid $pid)"
  fi
  cluster down
  exit 0
fi

if [ -n "${HEADROOM_BIN:-}" ]; then
  headroom=$HEADROOM_BIN
else
  scripts/setup.sh
  cmake -S . -B build/release -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo -Wno-dev >/dev/null
  ninja -C build/release headroom >/dev/null
  headroom=$ROOT/build/release/headroom
fi
[ -x "$headroom" ] || { echo "demo: no headroom binary at $headroom" >&2; exit 1; }

have_cluster() {
  command -v kubectl >/dev/null 2>&1 || return 1
  [ -n "${KUBECONFIG:-}" ] || [ -f "$HOME/.kube/config" ] || return 1
  kubectl version --request-timeout=5s >/dev/null 2>&1
}
if [ "$mode" = auto ] && have_cluster; then
  echo "==> what kube-headroom would set on $(kubectl config current-context) (read-only; scripts/demo.sh --local for the local demo)"
  exec "$headroom" plan
fi

# ---------------------------------------------------------------- the cluster
echo "==> starting the demo's own local cluster in $DEMO_DIR"
cluster build # a no-op when warm; the first run builds the pinned control plane (20-40 min)
upl=$(mktemp)
if ! cluster up >"$upl" 2>&1; then cat "$upl" >&2; rm -f "$upl"; exit 1; fi
rm -f "$upl"
[ -f "$DEMO_DIR/ports.env" ] || { echo "demo: $DEMO_DIR has no ports.env (started by an older cluster.sh): run $(stop_cmd) first" >&2; exit 1; }
# shellcheck disable=SC1091 # API_PORT, USER_PORT_FIRST, ...: what cluster.sh up chose
. "$DEMO_DIR/ports.env"
MPORT=$USER_PORT_FIRST
echo "DEMO_METRICS_PORT=$MPORT" >"$DEMO_DIR/demo.env"
echo "==> its API server is 127.0.0.1:$API_PORT (ports $PORT_BASE-$((PORT_BASE + 99)), $DEMO_DIR/ports.env)"
export KUBECONFIG=$DEMO_DIR/admin.kubeconfig
KUBECTL=$(cluster bin kubectl)
k() { "$KUBECTL" "$@"; }

if ! crd_err=$(k apply -f charts/kube-headroom/charts/crds/templates/headroomconfig.yaml 2>&1 >/dev/null) ||
  ! crd_err=$(k wait --for condition=established crd/headroomconfigs.kube-headroom.dev --timeout=30s 2>&1); then
  echo "demo: the CRD in charts/kube-headroom/charts/crds/templates/headroomconfig.yaml does not install: $crd_err" >&2
  exit 1
fi
# dryRun stated, not left to a default: this throw-away cluster is written live.
k apply -f - >/dev/null <<'YAML'
apiVersion: kube-headroom.dev/v1alpha1
kind: HeadroomConfig
metadata: {name: cluster}
spec: {dryRun: false}
YAML
# A fresh story each run: the namespace and the node are made anew.
if k get namespace "$NS" >/dev/null 2>&1; then
  k delete namespace "$NS" --timeout=90s >/dev/null
fi
k delete node "$NODE" --ignore-not-found >/dev/null
k create namespace "$NS" >/dev/null
k label namespace "$NS" kube-headroom.dev/mode=managed >/dev/null
for _ in $(seq 150); do k -n "$NS" get serviceaccount default >/dev/null 2>&1 && break; sleep 0.2; done
k apply -f - >/dev/null <<NODE
apiVersion: v1
kind: Node
metadata:
  name: $NODE
  annotations: {kwok.x-k8s.io/node: fake}
  labels: {type: kwok, kubernetes.io/hostname: $NODE}
status:
  allocatable: {cpu: "16", memory: 64Gi, pods: "110"}
  capacity: {cpu: "16", memory: 64Gi, pods: "110"}
NODE

if ! pid=$(controller_pid); then
  setsid "$headroom" run --kubeconfig "$KUBECONFIG" --namespace kube-headroom \
    --metrics-addr "127.0.0.1:$MPORT" --metrics-secure=false --probe-addr "" --webhook-addr "" \
    >"$DEMO_DIR/headroom.log" 2>&1 </dev/null &
  pid=$!
  echo "$pid" >"$DEMO_DIR/headroom.pid"
  readlink -f "$headroom" >"$DEMO_DIR/headroom.bin"
fi
for _ in $(seq 300); do curl -sf "http://127.0.0.1:$MPORT/readyz" >/dev/null 2>&1 && break; sleep 0.2; done
curl -sf "http://127.0.0.1:$MPORT/readyz" >/dev/null || {
  echo "demo: headroom run is not ready; its log:" >&2; tail -20 "$DEMO_DIR/headroom.log" >&2; exit 1
}
echo "==> headroom run is up (pid $pid, log $DEMO_DIR/headroom.log); stop it all with: $(stop_cmd)"

# ---------------------------------------------------------------- the story
landpod() { # name cpu-request
  k apply -f - >/dev/null <<POD
apiVersion: v1
kind: Pod
metadata: {name: $1, namespace: $NS}
spec:
  nodeName: $NODE
  containers:
  - name: app
    image: registry.invalid/app:1
    resources:
      requests: {cpu: "$2", memory: 256Mi}
POD
}
cores() { # millicores -> "16", "2.5", "0.25"
  awk -v m="$1" 'BEGIN { s = sprintf("%.3f", m / 1000); sub(/0+$/, "", s); sub(/\.$/, "", s); print s }'
}
limit_milli() { # pod -> its CPU limit in millicores ("" when none)
  local l
  l=$(k -n "$NS" get pod "$1" -o jsonpath='{.spec.containers[0].resources.limits.cpu}')
  case "$l" in "") echo "" ;; *m) echo "${l%m}" ;; *) awk -v c="$l" 'BEGIN { printf "%d", c * 1000 }' ;; esac
}
plan_json() { "$headroom" node "$NODE" -o json; }
# Settled: every pod on the node has a limit and the controller has nothing left to write.
settled() {
  local j
  j=$(plan_json) || return 1
  jq -e --arg n "$1" '[.nodes[].pods[] | select(.managed)] as $p
    | ($p | length) == ($n | tonumber)
    and ([$p[] | select(.limitMilli == null or .write)] | length) == 0' <<<"$j" >/dev/null
}
wait_settled() { # managed pods expected
  for _ in $(seq 300); do settled "$1" && return 0; sleep 0.2; done
  echo "demo: the controller did not settle in 60 s; its log:" >&2; tail -20 "$DEMO_DIR/headroom.log" >&2
  exit 1
}
step() { [ "$pause" = yes ] && { read -r -p "    (Enter: next step) " _ || true; }; return 0; }

row() { # step what before-limit-milli
  local j a r s f l
  j=$(plan_json)
  a=$(jq '.nodes[0].allocatableMilli' <<<"$j")
  r=$(jq '.nodes[0].bookedMilli' <<<"$j")
  s=$(jq '.nodes[0].slackMilli' <<<"$j")
  f=$(jq -r '.nodes[0].factor' <<<"$j" | awk '{ printf "%.2f", $1 }')
  l=$(limit_milli solo)
  local change
  if [ -z "$3" ]; then change="$(cores "$l")"; else change="$(cores "$3") -> $(cores "$l")"; fi
  printf '%-4s %-26s %9s %7s %6s %7s  %s\n' "$1" "$2" "$(cores "$a")" "$(cores "$r")" "$(cores "$s")" "$f" "$change"
}
header() { printf '%-4s %-26s %9s %7s %6s %7s  %s\n' STEP "LANDED ON $NODE" ALLOCATABLE BOOKED SLACK FACTOR "SOLO'S CPU LIMIT (cores)"; }

cat <<TXT

==> the idea: a pod's CPU limit (its ceiling) is its request plus a share, in proportion to its
    request, of the CPU nobody has booked on its node. Node $NODE has 16 cores.
    Pod "solo" requests 2 cores and lands alone; then neighbours land, one at a time.
    Each row is what the controller (headroom run) wrote once the node settled:
      booked = every request on the node, slack = allocatable - booked,
      factor = 1 + slack / managed requests: each managed pod's limit is its request x factor.
TXT
step
header
landpod solo 2
wait_settled 1
row 0 "solo (requests 2)" ""
echo "    alone it may use the whole node (16); 10x its request would be 20, so the node is the cap"
before=$(limit_milli solo)
n=1
for spec in "web-1 2" "web-2 4" "batch-3 8"; do
  set -- $spec
  step
  landpod "$1" "$2"
  n=$((n + 1))
  wait_settled "$n"
  row "$((n - 1))" "+ $1 (requests $2)" "$before"
  before=$(limit_milli solo)
done

echo
echo "==> the node now: every pod's request, limit and target (headroom node $NODE)"
"$headroom" node "$NODE"
echo
echo "==> why solo's limit is $(cores "$(limit_milli solo)"): headroom explain solo -n $NS"
"$headroom" explain solo -n "$NS"
cat <<TXT

==> to undo it: kubectl label namespace $NS kube-headroom.dev/mode-
    The namespace is no longer managed: kube-headroom stops writing its pods' CPU limits from then
    on. Limits it already wrote stay exactly as they are (nothing is reverted or removed); a pod
    gets the limit of its own spec back only when it is recreated.

Try:   export KUBECONFIG=$KUBECONFIG PATH=$DEMO_DIR/bin:\$PATH
       kubectl delete pod -n $NS batch-3      # and watch solo's limit go back up
       $headroom node $NODE
Stop:  $(stop_cmd)
TXT
