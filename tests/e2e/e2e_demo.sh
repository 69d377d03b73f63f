#!/usr/bin/env bash
# e2e_demo.sh — the README's two commands compose, and the demo shows the idea
# (README.md "Two commands on a new machine").
#
#   1. scripts/demo.sh --local --no-pause starts its own cluster (its own state
#      directory, here a fresh one so a demo the user left running is never
#      touched, and the ports cluster.sh chose free for it) and prints, step
#      by step, one pod's CPU limit as neighbours land. Every figure it
#      prints is checked against the policy (design §2.2-§2.4) computed here
#      from the demo node's allocatable and the requests read back from the
#      demo's cluster; the ceiling strictly shrinks;
#      `headroom explain` agrees; the stop command is printed; the demo's cluster
#      keeps no audit record (HEADROOM_AUDIT=off).
#   2. With the demo's controller still running, tests/e2e/e2e_design.sh (a controller
#      and its webhook as the chart's identity, ~10 s; e2e_controller.sh took 150 s here, all
#      of it on the suite's critical path) runs against the suite's cluster and passes, and
#      so does the real node: it comes up beside the demo's kwok (their ports once
#      collided), tests/e2e/e2e_realnode_smoke.sh passes on it, and it goes down leaving
#      nothing (check-clean) — or, when the suite's real node is already up (its CTest
#      fixture), the smoke test passes on that one.
#   3. A `headroom run` pointed at the suite's cluster makes the suite refuse
#      (common.sh require_cluster), at once and saying which process; so does a
#      kube-headroom Lease that keeps being renewed, and not one left behind.
#   4. The undo the demo prints: after it a neighbour leaving moves no limit.
#   5. The printed stop command leaves nothing of the demo: no process, no
#      listening port, no state directory.
# The demo's state directory and ports are checked to differ from the suite's.
set -uo pipefail
# shellcheck source=../lib/common.sh
. "$(dirname "${BASH_SOURCE[0]}")/../lib/common.sh"
WORK=$(mktemp -d /tmp/headroom-e2e.XXXXXX)
DEMO=$ROOT/scripts/demo.sh
# The demo runs with its own directory; a developer's override is kept. Its ports are the ones
# cluster.sh up picks and records in its ports.env (tests/cluster/README.md "Ports").
export HEADROOM_DEMO_DIR=${HEADROOM_DEMO_DIR:-/tmp/headroom-e2e-demo.$S}
DKC=$HEADROOM_DEMO_DIR/admin.kubeconfig
dk() { KUBECONFIG=$DKC "$KUBECTL" "$@"; }
STRAY="" RENEW=""
cleanup() {
  [ -z "$STRAY" ] || { kill "$STRAY" 2>/dev/null; wait "$STRAY" 2>/dev/null; }
  [ -z "$RENEW" ] || { rm -f "$WORK/renew"; wait "$RENEW" 2>/dev/null; }
  [ ! -d "$HEADROOM_DEMO_DIR" ] || "$DEMO" --down >/dev/null 2>&1
  delete_objects
  if [ "$failed" -gt 0 ]; then
    echo "--- demo output"; cat "$WORK/demo.out" 2>/dev/null
    echo "--- e2e_design: what failed"; grep -E "^FAIL|passed," "$WORK/ctl.out" 2>/dev/null
    echo "--- e2e_design output (tail)"; tail -20 "$WORK/ctl.out" 2>/dev/null
    echo "--- the real node beside the demo (tail)"; tail -10 "$WORK/realnode.out" "$WORK/rn.out" 2>/dev/null
    echo "--- refused run"; head -5 "$WORK/refused.out" 2>/dev/null
    echo "--- the stray controller's log (tail)"; tail -5 "$WORK/stray.log" 2>/dev/null
  fi
  rm -rf "$WORK"
}
trap cleanup EXIT

require_cluster
# The stray controller of step 3 is ready only once its HeadroomConfig watch syncs, which needs
# the CRD: on a fresh cluster (scripts/test.sh --only e2e_demo) no earlier test installed it.
install_crd

# ------------------------------------------------------------ the defaults
check "the demo's default state directory is not the suite's" \
  grep -q 'DEMO_DIR=${HEADROOM_DEMO_DIR:-/tmp/kube-headroom-demo}' "$DEMO"

# ------------------------------------------------------------ 1. the demo
t0=$(date +%s)
env -u KUBECONFIG HEADROOM_BIN="$HEADROOM" "$DEMO" --local --no-pause >"$WORK/demo.out" 2>&1 </dev/null
rc=$?
secs=$(($(date +%s) - t0))
WHY="exit $rc after ${secs}s"
check "scripts/demo.sh --local --no-pause runs to the end (${secs}s)" [ "$rc" -eq 0 ]
WHY="audit.mode '$(cat "$HEADROOM_DEMO_DIR/audit.mode" 2>/dev/null)', $(ls "$HEADROOM_DEMO_DIR"/audit* 2>/dev/null | tr '\n' ' ')"
no_audit() { [ "$(cat "$HEADROOM_DEMO_DIR/audit.mode" 2>/dev/null)" = off ] && [ ! -e "$HEADROOM_DEMO_DIR/audit.log" ]; }
check "the demo's cluster keeps no audit record (HEADROOM_AUDIT=off; the suite's does)" no_audit
# Its ports: a base of its own, claimed, apart from the suite's cluster's.
dbase=$(sed -n 's/^PORT_BASE=//p' "$HEADROOM_DEMO_DIR/ports.env" 2>/dev/null)
sbase=$(sed -n 's/^PORT_BASE=//p' "$STATE/ports.env" 2>/dev/null)
HEADROOM_DEMO_METRICS_PORT=$(sed -n 's/^DEMO_METRICS_PORT=//p' "$HEADROOM_DEMO_DIR/demo.env" 2>/dev/null)
WHY="demo base '$dbase' (claim '$(cat "/tmp/kube-headroom-ports/$dbase" 2>/dev/null)'), suite base '$sbase', metrics '$HEADROOM_DEMO_METRICS_PORT'"
ok=0
[ -n "$dbase" ] && [ "$dbase" != "$sbase" ] && [ "$(cat "/tmp/kube-headroom-ports/$dbase" 2>/dev/null)" = "$HEADROOM_DEMO_DIR" ] &&
  [ "$HEADROOM_DEMO_METRICS_PORT" -ge "$dbase" ] && [ "$HEADROOM_DEMO_METRICS_PORT" -le $((dbase + 99)) ] && ok=1
check "the demo's ports are its cluster's own base, claimed, not the suite's (its metrics inside it)" [ "$ok" -eq 1 ]
DEMO_PORTS="$(grep -E '^[A-Z_]*_PORT=' "$HEADROOM_DEMO_DIR/ports.env" 2>/dev/null | grep -v USER_PORT | cut -d= -f2) $HEADROOM_DEMO_METRICS_PORT"
stop=$(sed -n 's/.*stop it all with: //p' "$WORK/demo.out" | head -1)
WHY="printed: '$stop'"
check "when started, the demo prints the exact command that stops it" \
  [ "$stop" = "HEADROOM_DEMO_DIR=$HEADROOM_DEMO_DIR $DEMO --down" ]

# The policy for one node, all pods managed, one container each (design §2.2-§2.4, defaults:
# minBurstFloor 1000m, maxMultiplier 10, quantum 10m). target ALLOC R_I REQUESTS...
target() {
  local a=$1 r=$2 sum=0 n=0 q
  shift 2
  for q in "$@"; do sum=$((sum + q)); n=$((n + 1)); done
  local s=$((a - sum)) burst=0 floor cap t
  if [ "$s" -gt 0 ]; then
    burst=$((s * r / sum))
    floor=$((s / n < 1000 ? s / n : 1000))
    [ "$floor" -gt "$burst" ] && burst=$floor
  fi
  cap=$((r * 10 < (a > r ? a : r) ? r * 10 : (a > r ? a : r)))
  t=$((r + burst < cap ? r + burst : cap))
  echo $(((t + 5) / 10 * 10 > cap ? (t + 5) / 10 * 10 - 10 : (t + 5) / 10 * 10))
}
milli() { awk -v c="$1" 'BEGIN { printf "%d", c * 1000 + 0.5 }'; }
alloc=$(milli "$(dk get node demo-node -o jsonpath='{.status.allocatable.cpu}')")
req() { milli "$(dk -n headroom-demo get pod "$1" -o jsonpath='{.spec.containers[0].resources.requests.cpu}')"; }
# Rows: "STEP what... ALLOCATABLE BOOKED SLACK FACTOR before -> after" (step 0: just the limit).
rows=$(grep -E '^[0-9]+ +(solo|\+ )' "$WORK/demo.out")
WHY="rows: $(echo "$rows" | wc -l)"
check "the demo prints 4 steps (solo alone, then 3 neighbours)" [ "$(grep -c . <<<"$rows")" -eq 4 ]
pods=(solo web-1 web-2 batch-3)
reqs=()
for p in "${pods[@]}"; do reqs+=("$(req "$p")"); done
# By hand, from allocatable 16 cores and requests solo 2, web-1 2, web-2 4, batch-3 8 (cores):
#   step 0  R=2   S=14  M=2   F=8.00  solo: 2 + 14·2/2 = 16, caps 2×10=20 and A=16 → 16 (the node)
#   step 1  R=4   S=12  M=4   F=4.00  solo: 2 + 12·2/4 = 8 (floor min(1, 12/2) = 1 is below 6)
#   step 2  R=8   S=8   M=8   F=2.00  solo: 2 + 8·2/8  = 4 (floor min(1, 8/3) = 1 is below 2)
#   step 3  R=16  S=0   M=16  F=1.00  solo: no slack, burst 0 → 2, its request
prev="" shrinks=1
for i in 0 1 2 3; do
  line=$(sed -n "$((i + 1))p" <<<"$rows")
  on=("${reqs[@]:0:$((i + 1))}")
  booked=0
  for q in "${on[@]}"; do booked=$((booked + q)); done
  slack=$((alloc - booked))
  want_t=$(target "$alloc" "${reqs[0]}" "${on[@]}")
  want_f=$(awk -v s=$slack -v m=$booked 'BEGIN { printf "%.2f", (s > 0 ? 1 + s / m : 1) }')
  read -r -a f <<<"$(awk '{ n = NF; if ($(n-1) == "->") n -= 2; print $(n-4), $(n-3), $(n-2), $(n-1), $NF }' <<<"$line")"
  WHY="row '$line': allocatable/booked/slack/factor/limit ${f[*]}, wanted $alloc/$booked/$slack/$want_f/$want_t (millicores)"
  check "step $i: allocatable, booked, slack, factor and solo's limit are the policy's" \
    [ "$(milli "${f[0]}")/$(milli "${f[1]}")/$(milli "${f[2]}")/${f[3]}/$(milli "${f[4]}")" = "$alloc/$booked/$slack/$want_f/$want_t" ]
  if [ -n "$prev" ]; then
    before=$(awk '{ print $(NF-2) }' <<<"$line")
    [ "$(milli "$before")" = "$prev" ] || { fail "step $i shows the limit before" "$before, not the step before's $prev"; }
    [ "$(milli "${f[4]}")" -lt "$prev" ] || shrinks=0
  fi
  prev=$(milli "${f[4]}")
done
check "solo's ceiling strictly shrinks as each neighbour lands" [ "$shrinks" -eq 1 ]
final=$prev
WHY="live limit $(dk -n headroom-demo get pod solo -o jsonpath='{.spec.containers[0].resources.limits.cpu}')"
check "the last row is the limit the API server holds" [ "$(milli "$(dk -n headroom-demo get pod solo -o jsonpath='{.spec.containers[0].resources.limits.cpu}')")" = "$final" ]
# explain's figures (its A, R, S, M, F lines and its target) against the same arithmetic.
ex=$(sed -n '/^==> why solo/,/^==> to undo/p' "$WORK/demo.out")
exv() { awk -v k="$1" '$1 == k { print $NF; exit }' <<<"$ex"; }
booked=0
for q in "${reqs[@]}"; do booked=$((booked + q)); done
ex_t=$(awk '/^  target \(quantum/ { print $NF; exit }' <<<"$ex")
WHY="explain A=$(exv A) R=$(exv R) S=$(exv S) M=$(exv M) F=$(exv F) target=$ex_t"
check "headroom explain agrees: A, R, S, M, F and the target" \
  [ "$(milli "$(exv A)")/$(milli "$(exv R)")/$(milli "$(exv S)")/$(milli "$(exv M)")/$(exv F)/$(milli "$ex_t")" = "$alloc/$booked/$((alloc - booked))/$booked/1.00/$final" ]
check "the demo prints the command that undoes it and what it does to written limits" \
  grep -q 'to undo it: kubectl label namespace headroom-demo kube-headroom.dev/mode-' "$WORK/demo.out"

# ------------------------------------------------ 3. a stray controller is refused
STRAY_M=$(free_port) # 20000-31999: never one of the demo's (its cluster's base is below 20000)
"$HEADROOM" run --metrics-addr "127.0.0.1:$STRAY_M" "${PLAIN_METRICS[@]}" --webhook-addr "" >"$WORK/stray.log" 2>&1 &
STRAY=$!
WHY="not ready on 127.0.0.1:$STRAY_M"
check "a stray headroom run on the suite's cluster is up" wait_until 60 curl -sf "http://127.0.0.1:$STRAY_M/readyz"
t0=$(date +%s)
HEADROOM_BIN=$HEADROOM "$HERE/e2e_controller.sh" >"$WORK/refused.out" 2>&1
rc=$? secs=$(($(date +%s) - t0))
WHY="exit $rc in ${secs}s: $(head -1 "$WORK/refused.out")"
ok=0
[ "$rc" -ne 0 ] && [ "$secs" -lt 20 ] && grep -q "another kube-headroom controller acts on this cluster: pid $STRAY " "$WORK/refused.out" && ok=1
check "with another headroom run on the suite's cluster, the suite refuses at once, naming it" [ "$ok" -eq 1 ]
kill "$STRAY"; wait "$STRAY" 2>/dev/null; STRAY=""

# The Lease sign, alone: a replica elsewhere (not on this machine, no socket to see) keeps
# renewing a kube-headroom Lease — here kubectl renews it every second. Refused, named. A
# Lease whose holder stopped renewing is waited out (a killed test controller), one long
# expired passes at once.
LNS=e2e-lease-$S
mkns "$LNS" plain
micro_now() { date -u +%Y-%m-%dT%H:%M:%S.%6NZ; }
mklease() { # holder renewTime duration
  k -n "$LNS" apply -f - >/dev/null <<LEASE
apiVersion: coordination.k8s.io/v1
kind: Lease
metadata: {name: kube-headroom}
spec: {holderIdentity: "$1", renewTime: "$2", leaseDurationSeconds: $3}
LEASE
}
# As a real one: 10 s lease, renewed every second or two (kubectl's own start-up included).
mklease remote-replica "$(micro_now)" 10
touch "$WORK/renew"
(while [ -e "$WORK/renew" ]; do
  k -n "$LNS" patch lease kube-headroom --type merge -p "{\"spec\":{\"renewTime\":\"$(micro_now)\"}}" >/dev/null 2>&1
  sleep 1
done) &
RENEW=$!
t0=$(date +%s)
who=$(other_controller)
rc=$? secs=$(($(date +%s) - t0))
rm -f "$WORK/renew"; wait "$RENEW"; RENEW="" # its last patch is done: nothing renews after this
WHY="exit $rc in ${secs}s: $who"
ok=0
[ "$rc" -eq 0 ] && [ "$who" = "Lease $LNS/kube-headroom is held and renewed by remote-replica" ] && ok=1
check "a kube-headroom Lease someone keeps renewing is another controller, named" [ "$ok" -eq 1 ]
mklease killed-replica "$(micro_now)" 3
t0=$(date +%s)
who=$(other_controller)
rc=$? secs=$(($(date +%s) - t0))
WHY="exit $rc in ${secs}s: $who"
ok=0
[ "$rc" -eq 1 ] && [ "$secs" -ge 3 ] && [ "$secs" -le 20 ] && ok=1
check "a Lease its holder stopped renewing is waited out (its 3 s), then not a controller" [ "$ok" -eq 1 ]
mklease gone-replica "$(date -u -d '-60 sec' +%Y-%m-%dT%H:%M:%S.%6NZ)" 15
# No wait: waiting would cost its 15 s (the bound leaves room for a loaded machine's kubectl).
t0=$(date +%s)
other_controller >/dev/null
rc=$? secs=$(($(date +%s) - t0))
WHY="exit $rc in ${secs}s"
ok=0
[ "$rc" -eq 1 ] && [ "$secs" -lt 12 ] && ok=1
check "a Lease expired long ago is not a controller, and costs no wait" [ "$ok" -eq 1 ]
k delete namespace "$LNS" --wait=false >/dev/null 2>&1

# ------------------------------------------------ 2. the suite beside the running demo
demo_pid=$(cat "$HEADROOM_DEMO_DIR/headroom.pid")
check "the demo's controller is still running" kill -0 "$demo_pid"
HEADROOM_BIN=$HEADROOM "$HERE/e2e_design.sh" >"$WORK/ctl.out" 2>&1
rc=$?
WHY="exit $rc, $(tail -1 "$WORK/ctl.out")"
ok=0
[ "$rc" -eq 0 ] && grep -qE '^[0-9]+ passed, 0 failed$' "$WORK/ctl.out" && ok=1
check "e2e_design.sh passes on the suite's cluster while the demo's controller runs" [ "$ok" -eq 1 ]
# The real node beside the demo: up (unless the suite's fixture has it up already), the smoke
# test on it, down with nothing left.
rn_ours=0 rn_ok=1
if ! "$CLUSTER" real-node status >/dev/null 2>&1; then
  "$CLUSTER" real-node up >"$WORK/realnode.out" 2>&1 && rn_ours=1 || rn_ok=0
  WHY="$(tail -3 "$WORK/realnode.out" | tr '\n' ' ')"
  check "the real node comes up on the suite's cluster while the demo runs" [ "$rn_ok" -eq 1 ]
fi
if [ "$rn_ok" -eq 1 ]; then
  HEADROOM_BIN=$HEADROOM "$HERE/e2e_realnode_smoke.sh" >"$WORK/rn.out" 2>&1
  rc=$?
  WHY="exit $rc, $(tail -1 "$WORK/rn.out")"
  ok=0
  [ "$rc" -eq 0 ] && grep -qE '^[0-9]+ passed, 0 failed$' "$WORK/rn.out" && ok=1
  check "e2e_realnode_smoke.sh passes on the real node while the demo runs" [ "$ok" -eq 1 ]
fi
if [ "$rn_ours" -eq 1 ]; then
  WHY="$("$CLUSTER" real-node down 2>&1 | tail -2 | tr '\n' ' ')"
  check "the real node goes down and leaves nothing" "$CLUSTER" real-node check-clean
fi
check "the demo's controller ran throughout" kill -0 "$demo_pid"

# ------------------------------------------------ 4. the undo
dmetric() { curl -sf "http://127.0.0.1:$HEADROOM_DEMO_METRICS_PORT/metrics" | awk -v m="$1" '$1 == m {print $2; f=1} END {if (!f) print 0}'; }
reconciled_after() { [ "$(dmetric headroom_reconcile_duration_seconds_count)" -gt "$1" ]; }
# Each change queues the node: wait for the reconcile of the label change, then of the delete.
runs=$(dmetric headroom_reconcile_duration_seconds_count)
dk label namespace headroom-demo kube-headroom.dev/mode- >/dev/null
WHY="no reconcile after the label change"
check "the undo (the namespace unlabelled) reaches the demo's controller" wait_until 30 reconciled_after "$runs"
runs=$(dmetric headroom_reconcile_duration_seconds_count)
w0=$(dmetric 'headroom_writes_total{kind="resize"}')
dk -n headroom-demo delete pod batch-3 --grace-period=0 --force >/dev/null 2>&1
WHY="no reconcile of the node after the delete"
check "after the undo, a neighbour leaving is still seen by the controller" wait_until 30 reconciled_after "$runs"
WHY="limit $(dk -n headroom-demo get pod solo -o jsonpath='{.spec.containers[0].resources.limits.cpu}'), resizes $w0 -> $(dmetric 'headroom_writes_total{kind="resize"}')"
ok=0
[ "$(milli "$(dk -n headroom-demo get pod solo -o jsonpath='{.spec.containers[0].resources.limits.cpu}')")" = "$final" ] &&
  [ "$(dmetric 'headroom_writes_total{kind="resize"}')" = "$w0" ] && ok=1
check "... and moves no limit: what was written stays (solo keeps ${final}m)" [ "$ok" -eq 1 ]

# ------------------------------------------------ 5. stop: nothing left
pids=$(cat "$HEADROOM_DEMO_DIR"/pids/* 2>/dev/null | grep -E '^[0-9]+$'; echo "$demo_pid")
bash -c "$stop" >"$WORK/down.out" 2>&1
rc=$?
WHY="exit $rc: $(tail -2 "$WORK/down.out" | tr '\n' ' ')"
check "the printed stop command works" [ "$rc" -eq 0 ]
alive=""
for p in $pids; do kill -0 "$p" 2>/dev/null && alive+=" $p"; done
WHY="still running:$alive"
ok=0
[ -z "$alive" ] && [ "$(wc -w <<<"$pids")" -eq 6 ] && ok=1
check "no process of the demo is left (controller and the 5 cluster processes)" [ "$ok" -eq 1 ]
busy=""
for p in $DEMO_PORTS; do ss -Htln "sport = :$p" | matches . && busy+=" $p"; done
WHY="listening:$busy (of $DEMO_PORTS)"
check "none of the demo's ports is listening" [ -z "$busy" ]
WHY="$(cat "/tmp/kube-headroom-ports/$dbase" 2>/dev/null)"
check "the demo's port base is released" [ "$(cat "/tmp/kube-headroom-ports/$dbase" 2>/dev/null)" != "$HEADROOM_DEMO_DIR" ]
WHY="$(ls -A "$HEADROOM_DEMO_DIR" 2>&1 | head -3)"
check "the demo's state directory is gone" [ ! -e "$HEADROOM_DEMO_DIR" ]
finish
