#!/usr/bin/env bash
# e2e_leader.sh — two replicas of `headroom run --leader-elect` on the real
# control plane (design §10): exactly one writes; SIGTERM releases the Lease
# and the other takes over; a leader frozen past its lease (SIGSTOP) wakes up
# not leading, before its election thread runs, and the two never write at
# the same time. Each replica runs as a user of its own, bound to the chart's
# roles, so the API server's audit record says who wrote what: "the follower
# wrote nothing" and "no write after the lease was lost" are asserted from it,
# the replicas' own counters a second opinion. Prints PASS/FAIL per check and
# "N passed, N failed".
set -uo pipefail
# shellcheck source=../lib/common.sh
. "$(dirname "${BASH_SOURCE[0]}")/../lib/common.sh"
P1=${HEADROOM_E2E_LEADER_PORT1:-$(free_port)}
P2=${HEADROOM_E2E_LEADER_PORT2:-$(free_port "$P1")}
P3=${HEADROOM_E2E_LEADER_PORT3:-$(free_port "$P1" "$P2")}
WORK=$(mktemp -d /tmp/headroom-le.XXXXXX)
NS=e2e-le-$S NODE=e2e-le-n-$S
leader() { curl -sf "http://127.0.0.1:$1/metrics" | awk '$1 == "headroom_leader" {print $2}'; }
is_leader() { [ "$(leader "$1")" = 1 ]; }
declare -A PID KC
user_of() { echo "headroom-le-$1"; } # port -> the replica's user
start() { # port
  "$HEADROOM" run --kubeconfig "${KC[$1]}" --namespace kube-headroom --leader-elect --metrics-addr "127.0.0.1:$1" "${PLAIN_METRICS[@]}" \
    --webhook-addr "" >>"$WORK/r$1.log" 2>&1 &
  PID[$1]=$!
  wait_until 60 curl -sf "http://127.0.0.1:$1/readyz"
}
cleanup() {
  for p in "${PID[@]}"; do kill -CONT "$p" 2>/dev/null; kill -KILL "$p" 2>/dev/null; done
  k delete namespace "$NS" --wait=false >/dev/null 2>&1
  k delete node "$NODE" --wait=false >/dev/null 2>&1
  k delete headroomconfig cluster --ignore-not-found >/dev/null 2>&1
  k -n kube-headroom delete lease kube-headroom --ignore-not-found >/dev/null 2>&1
  for p in "$P1" "$P2" "$P3"; do remove_identity "$(user_of "$p")"; done
  [ "$failed" -gt 0 ] && tail -n 20 "$WORK"/r*.log
  rm -rf "$WORK"
}
trap cleanup EXIT
require_cluster

install_crd
k create namespace kube-headroom >/dev/null 2>&1
k -n kube-headroom delete lease kube-headroom --ignore-not-found >/dev/null 2>&1
k apply -f - >/dev/null <<EOF
apiVersion: kube-headroom.dev/v1alpha1
kind: HeadroomConfig
metadata: {name: cluster}
spec: {dryRun: false}
---
apiVersion: v1
kind: Node
metadata: {name: $NODE, annotations: {kwok.x-k8s.io/node: fake}}
status: {allocatable: {cpu: "8", memory: 8Gi, pods: "110"}, capacity: {cpu: "8", memory: 8Gi, pods: "110"}}
---
apiVersion: v1
kind: Namespace
metadata: {name: $NS, labels: {kube-headroom.dev/mode: managed}}
EOF
mkpod() { # name cpu
  k apply -f - >/dev/null <<EOF
apiVersion: v1
kind: Pod
metadata: {name: $1, namespace: $NS}
spec:
  nodeName: $NODE
  containers: [{name: app, image: registry.invalid/app:1, resources: {requests: {cpu: "$2", memory: 32Mi}}}]
EOF
}
limit() { k -n "$NS" get pod "$1" -o jsonpath='{.spec.containers[0].resources.limits.cpu}'; }
limit_is() { [ "$(limit "$1")" = "$2" ]; }
for p in "$P1" "$P2" "$P3"; do
  install_identity "$(user_of "$p")"
  KC[$p]=$USER_KC
done
# The replica's writes since a mark, from the audit record (anything: pods, events, the Lease).
wrote() { audit_writes "$2" "$(user_of "$1")"; } # port mark

m0=$(audit_mark)
start "$P1" && start "$P2" || fail "start" "replicas not ready"
some_leader() { is_leader "$P1" || is_leader "$P2"; }
wait_until 30 some_leader
l1=$(leader "$P1") l2=$(leader "$P2")
[ "$l1$l2" = 10 ] || [ "$l1$l2" = 01 ] && pass "exactly one of two replicas leads ($l1/$l2)" || fail "one leader" "leader metrics $l1/$l2"
if [ "$l1" = 1 ]; then LEAD=$P1 FOLLOW=$P2; else LEAD=$P2 FOLLOW=$P1; fi

mkpod a 200m
wait_until 15 limit_is a 2 && pass "the leader writes (a: 2 cores)" || fail "leader writes" "limit '$(limit a)'"
wf=$(writes "$FOLLOW")
[ "$wf" = 0 ] && pass "the follower wrote nothing (its counters)" || fail "follower writes" "$wf writes"
# Its only writes, by the audit record: trying for the Lease (a create or update that loses), never
# a pod, an event or the HeadroomConfig.
wrote "$FOLLOW" "$m0" | grep -v ' leases kube-headroom/' >"$WORK/follower.writes"
[ ! -s "$WORK/follower.writes" ] && pass "audit: the follower wrote nothing but Lease attempts" ||
  fail "follower writes (audit)" "$(tr '\n' ';' <"$WORK/follower.writes")"
mgrs=$(k -n "$NS" get pod a --show-managed-fields -o json | jq -r '[.metadata.managedFields[] | select(.manager == "headroom")] | length')
[ "$mgrs" -ge 1 ] && pass "managedFields show the headroom manager" || fail "managedFields" "$mgrs entries"

# SIGTERM: the leader releases the Lease; the follower takes over at once.
t0=$(date +%s%N)
kill -TERM "${PID[$LEAD]}"; wait "${PID[$LEAD]}" 2>/dev/null; unset "PID[$LEAD]"
if wait_until 15 is_leader "$FOLLOW"; then
  dt=$(( ($(date +%s%N) - t0) / 1000000 ))
  [ "$dt" -le 5000 ] && pass "SIGTERM releases the Lease: the other leads after ${dt} ms" || fail "takeover time" "${dt} ms"
else
  fail "takeover" "the follower never led"
fi
mkpod b 400m
wait_until 15 limit_is b 4 && pass "the new leader writes (b: 4 cores)" || fail "new leader writes" "limit '$(limit b)'"

# SIGSTOP past the lease: a third replica takes over; the frozen one wakes
# up not leading and writes nothing until it has re-acquired the Lease.
OLD=$FOLLOW
start "$P3" || fail "start replica 3" "not ready"
kill -STOP "${PID[$OLD]}"
t0=$(date +%s)
wait_until 40 is_leader "$P3" && pass "a replica frozen past its lease is replaced ($(( $(date +%s) - t0 )) s)" || fail "takeover after SIGSTOP" "replica 3 never led"
m_wake=$(audit_mark)
kill -CONT "${PID[$OLD]}"
sleep 0.3
lo=$(leader "$OLD")
[ "$lo" = 0 ] && pass "the frozen replica wakes up not leading" || fail "woken replica" "headroom_leader $lo"
w_before=$(writes "$OLD")
mkpod c 800m
# R 1400, S 6600, M 1400: c = 800 + 6600*800/1400 = 4571 -> 4570m
wait_until 15 limit_is c 4570m && pass "only the new leader writes after the wake-up (c: 4570m)" || fail "writes after wake-up" "limit '$(limit c)'"
sleep 3
w_after=$(writes "$OLD")
[ "$w_before" = "$w_after" ] && pass "the woken replica made no write (its counters: $w_after before and after)" || fail "woken replica wrote" "$w_before -> $w_after"
# By the audit record: after its lease was lost, nothing of the woken replica reached the API server
# but Lease attempts (refused: another holds it) — no pod, event or HeadroomConfig write.
wrote "$OLD" "$m_wake" | grep -v ' leases kube-headroom/' >"$WORK/woken.writes"
[ ! -s "$WORK/woken.writes" ] && pass "audit: no write of the woken replica after its lease was lost (Lease attempts aside)" ||
  fail "woken replica wrote (audit)" "$(tr '\n' ';' <"$WORK/woken.writes")"
both=$(( $(leader "$OLD") + $(leader "$P3") ))
[ "$both" = 1 ] && pass "still exactly one leader" || fail "leaders" "$both"

echo
finish
