#!/usr/bin/env bash
# e2e_decode.sh — a pod the API server admits but our decoder cannot read
# (design §6 booking-unknown, §15).
#
# The API server stores any quantity resource.Quantity can parse, and does
# not bound a CPU request: `cpu: "1e16"` (10^16 cores, 10^19 millicores, more
# than an int64 of millicores holds) is admitted, bound with spec.nodeName
# and Running on a kwok node. Our decoder refuses it ("out of range"), so its
# node's booking is unknown. This script shows, on the real control plane and
# the controller running as charts/kube-headroom/templates/rbac.yaml's least-privilege user:
#   - the pod exists on the node, and the controller logs it once and counts
#     headroom_decode_errors_total{resource="pods"};
#   - decreases on that node still go, increases freeze (a neighbour whose
#     target grows keeps its limit), counted in
#     headroom_capacity_skip_total{reason="booking-unknown"}, one
#     ResizeSkipped event, and `headroom explain` says why;
#   - the pod at fault is named: a Warning event Undecodable on it, and
#     headroom_pod_undecodable{namespace,pod,node} 1 while it holds;
#   - once the pod is deleted the node converges;
#   - a pod the decoder reads softly holds nothing (design §6):
#     in an unmanaged namespace, requests.memory: 1e30 and limits.cpu: 1e16
#     are admitted, their CPU requests are booked (a falls) and an increase
#     on the node is written (a rises when one of them goes).
# Prints PASS/FAIL per check and "N passed, N failed"; exits non-zero on any
# failure. Needs `tests/cluster/cluster.sh up`. Quick (about 30 s).
set -uo pipefail
# shellcheck source=../lib/common.sh
. "$(dirname "${BASH_SOURCE[0]}")/../lib/common.sh"
MPORT=${HEADROOM_E2E_DECODE_PORT:-$(free_port)}
WORK=$(mktemp -d /tmp/headroom-e2e.XXXXXX)
NS=e2e-dec-$S
NS2=e2e-dec-plain-$S
N1=e2e-dec-n1-$S

cleanup() {
  stop_controller KILL
  delete_objects
  k delete headroomconfig cluster --ignore-not-found >/dev/null 2>&1
  remove_identity headroom-e2e-decode
  if [ "$failed" -gt 0 ]; then echo "--- controller log (tail)"; tail -n 60 "$WORK/controller.log"; fi
  rm -rf "$WORK"
}
trap cleanup EXIT

events_for() { # ns pod reason -> count
  k -n "$1" get events.events.k8s.io -o json 2>/dev/null |
    jq --arg p "$2" --arg r "$3" '[.items[] | select(.regarding.name == $p and .reason == $r)] | length'
}
# A pod whose CPU request and limit no int64 of millicores holds.
mkhuge() { # ns name node
  k apply -f - >/dev/null <<POD
apiVersion: v1
kind: Pod
metadata: {name: $2, namespace: $1}
spec:
  nodeName: $3
  containers:
  - name: app
    image: registry.invalid/app:1
    resources:
      requests: {cpu: "1e16", memory: 64Mi}
      limits: {cpu: "1e16", memory: 64Mi}
POD
}

require_cluster
install_identity headroom-e2e-decode
mkns "$NS" managed
mkns "$NS2" plain
mknode "$N1" 8
k apply -f - >/dev/null <<EOF
apiVersion: kube-headroom.dev/v1alpha1
kind: HeadroomConfig
metadata: {name: cluster}
spec: {dryRun: false, debouncePeriod: 300ms}
EOF
start_controller || fail "controller start" "not ready within 60 s"

# 1 core alone on 8 cores: min(1 x 10, 8) = 8.
mkpod "$NS" a "$N1" 1 1
WHY="limit of a: '$(cpu_limit "$NS" a)'"
check "baseline: 1 core alone on 8 cores gets 8" wait_until 20 limit_is "$NS" a 8

# ------------------------------------------------ the API server admits it
mkhuge "$NS" huge "$N1"
stored=$(k -n "$NS" get pod huge -o jsonpath='{.spec.containers[0].resources.requests.cpu}/{.spec.nodeName}' 2>&1)
WHY="stored request/node: '$stored', phase '$(k -n "$NS" get pod huge -o jsonpath='{.status.phase}' 2>&1)'"
check "the API server admits cpu: 1e16 and the pod runs on $N1" \
  wait_until 20 running "$NS" huge
decoded_err() { [ "$(metric 'headroom_decode_errors_total{resource="pods"}')" = 1 ]; }
WHY="headroom_decode_errors_total{resource=\"pods\"} = $(metric 'headroom_decode_errors_total{resource="pods"}')"
check "headroom_decode_errors_total{resource=\"pods\"} counts it (1)" wait_until 10 decoded_err

# ------------------------------------------------ decreases still go
# b: 3 cores. R = 1 + 3 (huge books what we cannot know), S = 4, M = 4: a -> 2.
mkpod "$NS" b "$N1" 3 3
WHY="limit of a: '$(cpu_limit "$NS" a)'"
check "a decrease on that node still goes (a: 8 -> 2)" wait_until 20 limit_is "$NS" a 2

# ------------------------------------------------ increases freeze
skips0=$(metric 'headroom_capacity_skip_total{reason="booking-unknown"}')
k -n "$NS" delete pod b --wait=false >/dev/null
skipped() { [ "$(metric 'headroom_capacity_skip_total{reason="booking-unknown"}')" -gt "$skips0" ]; }
wait_until 20 skipped
sleep 3 # several debounce periods: a write would have happened by now
WHY="limit of a '$(cpu_limit "$NS" a)', booking-unknown skips $skips0 -> $(metric 'headroom_capacity_skip_total{reason="booking-unknown"}')"
check "the neighbour whose target grows (2 -> 8) keeps its limit; skip counted as booking-unknown" \
  eval 'limit_is "$NS" a 2 && skipped'
WHY="ResizeSkipped events on a: $(events_for "$NS" a ResizeSkipped)"
check "one ResizeSkipped event says why" wait_until 10 test "$(events_for "$NS" a ResizeSkipped)" = 1
out=$("$HEADROOM" explain a -n "$NS" --kubeconfig "$USER_KC" 2>&1)
explain_ok() { echo "$out" | matches 'booking-unknown' && echo "$out" | matches "$NS/huge could not be decoded"; }
WHY="explain said: $(echo "$out" | grep -E 'booking|decoded|held' | tr '\n' ' ')"
check "explain shows the reason (booking-unknown) and names the undecodable pod" explain_ok
out=$("$HEADROOM" explain huge -n "$NS" --kubeconfig "$USER_KC" 2>&1)
WHY="explain huge said: $(echo "$out" | tail -n 4 | tr '\n' ' ')"
check "explain of the pod itself names the field" \
  eval 'echo "$out" | matches "resources.requests.cpu: out of range"'
WHY="Undecodable events on huge: $(events_for "$NS" huge Undecodable)"
check "the pod at fault carries one Warning event Undecodable" \
  wait_until 10 test "$(events_for "$NS" huge Undecodable)" = 1
held_series="headroom_pod_undecodable{namespace=\"$NS\",pod=\"huge\",node=\"$N1\"}"
WHY="$held_series = $(metric "$held_series")"
check "headroom_pod_undecodable names it (1)" wait_until 10 test "$(metric "$held_series")" = 1
# Send it again (a label change is a MODIFIED event): still one line, one count.
k -n "$NS" label pod huge e2e-touched=yes >/dev/null
sleep 1
logged=$(grep -c "$NS/huge: spec.containers\[0\].resources.requests.cpu: out of range" "$WORK/controller.log")
WHY="$logged log lines, decode errors $(metric 'headroom_decode_errors_total{resource="pods"}')"
check "logged and counted once, with the field, though the pod was sent again" \
  eval '[ "$logged" = 1 ] && decoded_err'

# ------------------------------------------------ deleted: the node converges
k -n "$NS" delete pod huge --wait=false >/dev/null
WHY="limit of a: '$(cpu_limit "$NS" a)'"
check "after deleting it the node converges (a: 2 -> 8)" wait_until 20 limit_is "$NS" a 8
WHY="$held_series = $(metric "$held_series")"
check "and its headroom_pod_undecodable series is gone" wait_until 10 test "$(metric "$held_series")" = 0

# ------------------------------------------------ soft quantities hold nothing
# Unmanaged namespace; the API server admits both. Their CPU requests are read
# and booked: R = 1 + 1 + 0.5, S = 5.5, a -> 1 + 5.5 = 6.5 (a decrease).
k apply -f - >/dev/null <<POD
apiVersion: v1
kind: Pod
metadata: {name: oddmem, namespace: $NS2}
spec:
  nodeName: $N1
  containers:
  - name: app
    image: registry.invalid/app:1
    resources: {requests: {cpu: "1", memory: "1e30"}}
---
apiVersion: v1
kind: Pod
metadata: {name: oddlim, namespace: $NS2}
spec:
  nodeName: $N1
  containers:
  - name: app
    image: registry.invalid/app:1
    resources: {requests: {cpu: 500m}, limits: {cpu: "1e16"}}
POD
stored=$(k -n "$NS2" get pods oddmem oddlim -o jsonpath='{.items[*].spec.containers[0].resources}' 2>&1)
WHY="stored: $stored"
check "the API server admits requests.memory: 1e30 and limits.cpu: 1e16" \
  eval 'wait_until 20 running "$NS2" oddmem && wait_until 20 running "$NS2" oddlim'
WHY="limit of a: '$(cpu_limit "$NS" a)'"
check "their CPU requests are booked (a: 8 -> 6500m)" wait_until 20 limit_is "$NS" a 6500m
errs=$(metric 'headroom_decode_errors_total{resource="pods"}')
WHY="headroom_decode_errors_total{resource=\"pods\"} = $errs"
check "neither is a decode error (the count stays 1)" test "$errs" = 1
# oddmem goes: R = 1.5, S = 6.5, a -> 7500m, an increase, written.
k -n "$NS2" delete pod oddmem --wait=false >/dev/null
WHY="limit of a: '$(cpu_limit "$NS" a)', booking-unknown skips $(metric 'headroom_capacity_skip_total{reason="booking-unknown"}')"
check "an increase beside limits.cpu: 1e16 is written (a: 6500m -> 7500m)" \
  wait_until 20 limit_is "$NS" a 7500m
stop_controller TERM

echo
finish
