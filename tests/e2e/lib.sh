# lib.sh — what the end-to-end scripts share: where the cluster and the
# binaries are, PASS/FAIL bookkeeping, waiting, and the few objects every
# test makes (simulated nodes, namespaces, single-container pods), plus the
# least-privilege identity the controller runs as (the chart's RBAC,
# charts/kube-headroom/templates/rbac.yaml).
#
# Sourced, not run. Each script sets its own traps and ports; every object
# it makes carries $S (its PID), so reruns and parallel runs never collide.
# shellcheck shell=bash
HERE=$(cd "$(dirname "${BASH_SOURCE[1]}")" && pwd)
ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd) # from lib.sh itself: bench/soak.sh sources it too
CLUSTER=$ROOT/test/cluster/cluster.sh
STATE=${HEADROOM_CLUSTER_DIR:-/tmp/kube-headroom-cluster}
export KUBECONFIG=${KUBECONFIG:-$STATE/admin.kubeconfig}
KUBECTL=${KUBECTL:-$("$CLUSTER" bin kubectl)}
HEADROOM=${HEADROOM_BIN:-$ROOT/build/release/headroom}
PROMCHECK=${PROMCHECK:-$(dirname "$HEADROOM")/tests/promcheck}
S=$$
k() { "$KUBECTL" "$@"; }
HELM=${HELM:-$("$CLUSTER" bin helm)}
CHART=$ROOT/charts/kube-headroom
CRD_FILE=$CHART/charts/crds/crds/headroomconfig.yaml
# The chart's objects as the one-file install names them (release kube-headroom
# in kube-headroom): chart_objects [helm template flags, e.g. --show-only FILE]
chart_objects() { "$HELM" template kube-headroom "$CHART" --namespace kube-headroom "$@"; }

passed=0 failed=0
WHY=""
pass() { printf 'PASS  %s\n' "$1"; passed=$((passed + 1)); }
fail() { printf 'FAIL  %s: %s\n' "$1" "$2"; failed=$((failed + 1)); }
check() { # name, condition-as-command...
  local name=$1; shift
  if "$@"; then pass "$name"; else fail "$name" "${WHY:-condition false}"; fi
  WHY=""
}
finish() { echo "$passed passed, $failed failed"; [ "$failed" -eq 0 ]; }
now_ms() { echo $(($(date +%s%N) / 1000000)); }
wait_until() { # seconds, cmd...
  local end=$(($(now_ms) + $1 * 1000)); shift
  until "$@" >/dev/null 2>&1; do
    [ "$(now_ms)" -lt "$end" ] || return 1
    sleep 0.2
  done
}
require_cluster() {
  k get --raw /readyz >/dev/null 2>&1 || { echo "FAIL  cluster: API server not ready"; echo "0 passed, 1 failed"; exit 1; }
  [ -f "$AUDIT" ] || {
    echo "FAIL  cluster: no audit record at $AUDIT: the suite asserts from it (start the cluster"
    echo "      with the default HEADROOM_AUDIT=on, test/cluster/README.md)"
    echo "0 passed, 1 failed"
    exit 1
  }
  [ -x "$HEADROOM" ] || { echo "FAIL  no headroom binary at $HEADROOM"; echo "0 passed, 1 failed"; exit 1; }
  local who
  if who=$(other_controller); then
    echo "FAIL  cluster: another kube-headroom controller acts on this cluster: $who."
    echo "      Its writes would mix with this test's. Stop it (the demo: scripts/demo.sh --down),"
    echo "      or run the tests on a cluster of their own (HEADROOM_CLUSTER_DIR, HEADROOM_*_PORT)."
    echo "0 passed, 1 failed"
    exit 1
  fi
}
# Who else acts on this cluster, or nothing (exit 1). Two signs, each enough alone:
#  - a `headroom run` process with a TCP connection to this API server (ss -p: root sees every
#    process's sockets, as in CI) — whatever kubeconfig or flag pointed it here, that connection
#    is how a local controller acts; a PID file or a port guess would miss one started by hand;
#  - a Lease "kube-headroom" (any namespace) that its holder keeps renewing — a --leader-elect
#    controller that is not on this machine. A held Lease whose holder has died (a killed test
#    controller) is waited out, at most its duration, not refused.
other_controller() {
  local port pid exe
  port=$(k config view --minify -o jsonpath='{.clusters[0].cluster.server}' 2>/dev/null)
  port=${port##*:}; port=${port%%/*}
  for pid in $(ss -Htnp state established "( dport = :$port )" 2>/dev/null | grep -o 'pid=[0-9]*' | cut -d= -f2 | sort -u); do
    exe=$(readlink "/proc/$pid/exe" 2>/dev/null) || continue
    [ "$(basename "${exe% (deleted)}")" = headroom ] || continue
    [ "$(tr '\0' '\n' <"/proc/$pid/cmdline" 2>/dev/null | sed -n 2p)" = run ] || continue
    echo "pid $pid ($(tr '\0' ' ' <"/proc/$pid/cmdline" | cut -c1-200)) is connected to its API server 127.0.0.1:$port"
    return 0
  done
  local first left l
  first=$(fresh_leases)
  [ -n "$first" ] || return 1
  # Wait until each would have expired, then look again: one still fresh was renewed.
  left=$(awk '{print $3}' <<<"$first" | sort -n | tail -1)
  sleep "$((left > 30 ? 31 : left + 1))"
  while read -r l; do
    [ -n "$l" ] || continue
    echo "Lease $(awk '{print $1}' <<<"$l") is held and renewed by $(awk '{print $2}' <<<"$l")"
    return 0
  done <<<"$(fresh_leases)"
  return 1
}
fresh_leases() { # -> "ns/name holder seconds-left" of each Lease kube-headroom held and unexpired
  k get leases -A --field-selector metadata.name=kube-headroom -o json 2>/dev/null |
    jq -r '.items[] | select((.spec.holderIdentity // "") != "" and .spec.renewTime != null)
      | ((.spec.renewTime | sub("\\.[0-9]+"; "") | fromdateiso8601) + (.spec.leaseDurationSeconds // 15) - now) as $left
      | select($left > 0) | "\(.metadata.namespace)/\(.metadata.name) \(.spec.holderIdentity) \($left | ceil)"'
}

# ------------------------------------------------------------- the daemon
# metric and writes read the daemon on $MPORT over plain HTTP: every script
# that starts `headroom run` passes "${PLAIN_METRICS[@]}" (metrics without
# TLS or tokens, /healthz and /readyz beside them, no probe port of its own
# to collide on). e2e_metrics_auth.sh tests the secured default.
PLAIN_METRICS=(--metrics-secure=false --probe-addr=)
metric() { # 'name{labels}' -> value (0 when absent)
  curl -sf "http://127.0.0.1:$MPORT/metrics" | awk -v m="$1" '$1 == m {print $2; f=1} END {if (!f) print 0}'
}
writes() { # [port]: every write the daemon made, whatever its kind
  curl -sf "http://127.0.0.1:${1:-$MPORT}/metrics" | awk '$1 ~ /^headroom_writes_total[{]/ {s += $2} END {print s + 0}'
}
CTL_PID=""
start_controller() { # extra flags... (as $USER_KC, logging to $WORK/controller.log)
  "$HEADROOM" run --kubeconfig "$USER_KC" --namespace kube-headroom \
    --metrics-addr "127.0.0.1:$MPORT" "${PLAIN_METRICS[@]}" --webhook-addr "" -v "$@" >>"$WORK/controller.log" 2>&1 &
  CTL_PID=$!
  wait_until 60 curl -sf "http://127.0.0.1:$MPORT/readyz"
}
stop_controller() { # signal
  [ -n "$CTL_PID" ] || return 0
  kill "-${1:-TERM}" "$CTL_PID" 2>/dev/null
  wait "$CTL_PID" 2>/dev/null
  CTL_PID=""
}

# The CRD, the chart's RBAC, and a user bound to its roles: sets USER_KC.
install_identity() { # user name
  k apply -f "$CRD_FILE" >/dev/null
  k wait --for condition=established crd/headroomconfigs.kube-headroom.dev --timeout=30s >/dev/null
  k create namespace kube-headroom >/dev/null 2>&1
  chart_objects --show-only templates/serviceaccount.yaml --show-only templates/rbac.yaml | k apply -f - >/dev/null
  USER_KC=$("$CLUSTER" user-kubeconfig "$1")
  k create clusterrolebinding "$1" --clusterrole=kube-headroom --user="$1" >/dev/null 2>&1
  k -n kube-headroom create rolebinding "$1" --role=kube-headroom-leader-election --user="$1" >/dev/null 2>&1
}
remove_identity() { # user name
  k delete clusterrolebinding "$1" >/dev/null 2>&1
  k -n kube-headroom delete rolebinding "$1" >/dev/null 2>&1
}

# ------------------------------------------------------------- audit log
# The API server's own record (test/cluster/README.md): count requests from
# it, not from the daemon's counters. audit_mark prints the current line
# count; audit_since MARK [jq filter] prints the events after it, one compact
# JSON object per line, optionally filtered (e.g. 'select(.verb=="patch")').
AUDIT=${HEADROOM_AUDIT_LOG:-$STATE/audit.log}
audit_mark() { [ -f "$AUDIT" ] && wc -l <"$AUDIT" || echo 0; }
audit_since() { # mark [jq filter]
  tail -n +"$(($1 + 1))" "$AUDIT" | jq -c "${2:-.}"
}
# The writes of USER after MARK, one line each: "time verb resource[/sub] ns/name code", in the
# order the API server received them; an optional jq condition on the event narrows them, e.g.
# '.objectRef.subresource == "resize"' or '.objectRef.namespace == "x"'. The audit record is
# written once a request completes: a write still in flight is not in it yet.
audit_writes() { # mark user [jq condition]
  audit_since "$1" "select(.user.username == \"$2\" and (.verb | test(\"^(create|update|patch|delete|deletecollection)$\")) and (${3:-true}))
    | \"\(.requestReceivedTimestamp) \(.verb) \(.objectRef.resource)\(if .objectRef.subresource then \"/\" + .objectRef.subresource else \"\" end) \(.objectRef.namespace // \"-\")/\(.objectRef.name // \"-\") \(.responseStatus.code)\"" |
    jq -r . | sort
}
# The same, counted.
audit_write_count() { audit_writes "$@" | wc -l; }

# ------------------------------------------------------------- objects
NODES=() NSS=()
delete_objects() {
  [ ${#NSS[@]} -eq 0 ] || k delete namespace "${NSS[@]}" --ignore-not-found --wait=false >/dev/null 2>&1
  [ ${#NODES[@]} -eq 0 ] || k delete node "${NODES[@]}" --ignore-not-found --wait=false >/dev/null 2>&1
}
mknode() { # name cpu
  NODES+=("$1")
  k apply -f - >/dev/null <<NODE
apiVersion: v1
kind: Node
metadata:
  name: $1
  annotations: {kwok.x-k8s.io/node: fake}
  labels: {type: kwok, kubernetes.io/hostname: $1}
status:
  allocatable: {cpu: "$2", memory: 64Gi, pods: "110"}
  capacity: {cpu: "$2", memory: 64Gi, pods: "110"}
NODE
}
mkns() { # name managed|plain
  NSS+=("$1")
  k create namespace "$1" >/dev/null
  [ "$2" = managed ] && k label namespace "$1" kube-headroom.dev/mode=managed >/dev/null
  wait_until 30 k -n "$1" get serviceaccount default
}
mkpod() { # ns name node cpu-request [cpu-limit] [extra metadata yaml]
  local lim=""
  [ -n "${5:-}" ] && lim="limits: {cpu: \"$5\"}"
  k apply -f - >/dev/null <<POD
apiVersion: v1
kind: Pod
metadata:
  name: $2
  namespace: $1
  ${6:-}
spec:
  nodeName: $3
  containers:
  - name: app
    image: registry.invalid/app:1
    resources:
      requests: {cpu: "$4", memory: 64Mi}
      $lim
POD
}
cpu_limit() { # ns pod [container]
  k -n "$1" get pod "$2" -o jsonpath="{.spec.containers[?(@.name==\"${3:-app}\")].resources.limits.cpu}" 2>/dev/null
}
limit_is() { [ "$(cpu_limit "$1" "$2" "${4:-app}")" = "$3" ]; }
running() { [ "$(k -n "$1" get pod "$2" -o jsonpath='{.status.phase}')" = Running ]; }
restarts() { # ns -> total container restarts in the namespace
  k -n "$1" get pods -o json | jq '[.items[].status.containerStatuses[]?.restartCount] | add // 0'
}
