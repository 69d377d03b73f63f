#!/usr/bin/env bash
# e2e_leader_freeze.sh — one writer, also when the API server stalls (design
# §10). Two replicas of `headroom run --leader-elect`, each as its own user
# (so the API server's audit log tells them apart), start on 24 managed pods
# that all need a limit; clientQPS 4 stretches the wave. A few seconds into
# it the API server is frozen (SIGSTOP) for 18 s, past the 15 s lease. Then,
# from the audit log (the API server's record and timestamps, not our
# counters): every successful mutating request a replica made on pods,
# events or the HeadroomConfig was received within the lease duration after
# one of that replica's own successful Lease create/update requests was
# received — no write arrives after its lease expired, including writes that
# were in flight when the server froze; every mutating request, accepted or
# refused, was received within the renew deadline (10 s) after that
# replica's last Lease renewal — a replica stops *sending* when it can no
# longer prove its lease, not when the lease runs out. The requests the
# server reads at the thaw (received within 2 s of it) were sent at some
# moment of the freeze the audit log cannot tell, so they are held to the
# first rule only, and counted. And once the server is back every pod's
# limit is what `headroom plan` says (no update lost). Prints the writes per
# replica and the smallest margins to the renew deadline and lease expiry.
set -uo pipefail
# shellcheck source=../lib/common.sh
. "$(dirname "${BASH_SOURCE[0]}")/../lib/common.sh"
P1=${HEADROOM_E2E_LF_PORT1:-$(free_port)} P2=${HEADROOM_E2E_LF_PORT2:-$(free_port "$P1")}
LEASE_S=15 RENEW_S=10 FREEZE_S=${HEADROOM_E2E_LF_FREEZE:-18}
WORK=$(mktemp -d /tmp/headroom-lf.XXXXXX)
NS=e2e-lf-$S
UA=hr-lf-a-$S UB=hr-lf-b-$S
declare -A PID
leader() { curl -sf "http://127.0.0.1:$1/metrics" | awk '$1 == "headroom_leader" {print $2}'; }
start() { # port kubeconfig
  "$HEADROOM" run --kubeconfig "$2" --namespace kube-headroom --leader-elect \
    --metrics-addr "127.0.0.1:$1" "${PLAIN_METRICS[@]}" --webhook-addr "" -v >>"$WORK/r$1.log" 2>&1 &
  PID[$1]=$!
}
cleanup() {
  for p in "${PID[@]}"; do kill -CONT "$p" 2>/dev/null; kill -TERM "$p" 2>/dev/null; done
  for p in "${PID[@]}"; do wait "$p" 2>/dev/null; done
  delete_objects
  k delete headroomconfig cluster --ignore-not-found >/dev/null 2>&1
  k -n kube-headroom delete lease kube-headroom --ignore-not-found >/dev/null 2>&1
  remove_identity "$UA"
  remove_identity "$UB"
  [ "$failed" -gt 0 ] && tail -n 15 "$WORK"/r*.log
  rm -rf "$WORK"
}
trap cleanup EXIT
require_cluster

install_identity "$UA"; KC_A=$USER_KC
install_identity "$UB"; KC_B=$USER_KC
k -n kube-headroom delete lease kube-headroom --ignore-not-found >/dev/null 2>&1
k apply -f - >/dev/null <<EOF
apiVersion: kube-headroom.dev/v1alpha1
kind: HeadroomConfig
metadata: {name: cluster}
spec: {dryRun: false, rateLimits: {clientQPS: 4, clientBurst: 1}}
EOF
mkns "$NS" managed
for n in 1 2 3; do mknode "e2e-lf-n$n-$S" 8; done
{
  for n in 1 2 3; do for i in 1 2 3 4 5 6 7 8; do
    cat <<POD
---
apiVersion: v1
kind: Pod
metadata: {name: p$n-$i, namespace: $NS}
spec:
  nodeName: e2e-lf-n$n-$S
  containers: [{name: app, image: registry.invalid/app:1, resources: {requests: {cpu: "${i}00m", memory: 32Mi}}}]
POD
  done; done
} >"$WORK/pods.yaml"
k apply -f "$WORK/pods.yaml" >/dev/null
all_running() { [ "$(k -n "$NS" get pods -o json | jq '[.items[] | select(.status.phase == "Running")] | length')" = 24 ]; }
wait_until 60 all_running || fail "pods" "not all 24 Running"

MARK=$(audit_mark)
start "$P1" "$KC_A"
start "$P2" "$KC_B"
resizes() { audit_since "$MARK" 'select(.objectRef.subresource == "resize" and .verb == "patch")' | wc -l; }
wave_started() { [ "$(resizes)" -ge 4 ]; }
if wait_until 60 wave_started; then
  pass "the write wave started ($(resizes) resizes in the audit log)"
else
  fail "wave" "no resize in 60 s"
fi
before=$(resizes)
"$CLUSTER" freeze-apiserver "$FREEZE_S" >/dev/null 2>&1
THAW_MS=$(now_ms)
echo "      froze the API server for ${FREEZE_S} s after $before resizes of 24"

# Converged: every pod's limit is what the planner computes now.
converged() {
  "$HEADROOM" plan -o json 2>/dev/null | jq -e --arg ns "$NS" \
    '[.nodes[].pods[] | select(.namespace == $ns)] | length == 24 and all(.limitMilli == .targetMilli)' >/dev/null
}
t0=$(now_ms)
if wait_until 90 converged; then
  pass "every pod converged to its planned limit $(( ($(now_ms) - t0) / 1000 )) s after the thaw"
else
  fail "convergence" "$("$HEADROOM" plan -o json | jq -c --arg ns "$NS" '[.nodes[].pods[] | select(.namespace == $ns and .limitMilli != .targetMilli) | [.name, .limitMilli, .targetMilli]]')"
fi

# Limits first (design §5): the annotations and events that describe the
# resizes follow in their own budget, so they may still be on their way when
# the limits have converged. Wait until they are in (24 resizes and at least
# 24 more notes), so their leases are checked too.
writes_in() {
  [ "$(audit_since "$MARK" 'select((.user.username == "'"$UA"'" or .user.username == "'"$UB"'")
      and (.objectRef.resource | IN("pods", "events")) and (.verb | IN("create", "patch"))
      and (.responseStatus.code // 0) < 300)' | wc -l)" -ge 48 ]
}
wait_until 60 writes_in || true

# The audit log: leases and writes by user, timestamps as the API server saw them.
audit_since "$MARK" 'select(.user.username == "'"$UA"'" or .user.username == "'"$UB"'")' >"$WORK/audit.jsonl"
jq -rs --argjson lease "$LEASE_S" --argjson renew "$RENEW_S" --argjson thaw "$THAW_MS" \
  --arg a "$UA" --arg b "$UB" '
  def ts: (.[0:19] + "Z" | fromdateiso8601) + ("0" + .[19:-1] | tonumber);
  def ok: (.responseStatus.code // 0) >= 200 and (.responseStatus.code // 0) < 300;
  . as $all
  | [$a, $b] | map(. as $u
    | ([$all[] | select(.user.username == $u and .objectRef.resource == "leases"
                        and .objectRef.name == "kube-headroom"
                        and (.verb == "create" or .verb == "update") and ok)
        | .requestReceivedTimestamp | ts] | sort) as $leases
    | [$all[] | select(.user.username == $u
                       and (.objectRef.resource | IN("pods", "events", "headroomconfigs"))
                       and (.verb | IN("create", "update", "patch", "delete")))] as $muts
    | [$muts[] | select(ok) | .requestReceivedTimestamp | ts] as $writes
    | [$writes[] | . as $w | ([$leases[] | select(. <= $w)] | max) as $l
        | {w: $w, margin: (if $l == null then -1e9 else $l + $lease - $w end)}] as $m
    | [$muts[] | .requestReceivedTimestamp | ts] as $sent
    | [$sent[] | select(. >= $thaw / 1000 - 0.5 and . <= $thaw / 1000 + 2)] as $burst
    | [$sent[] | select(. < $thaw / 1000 - 0.5 or . > $thaw / 1000 + 2)
        | . as $w | ([$leases[] | select(. <= $w)] | max) as $l
        | (if $l == null then -1e9 else $l + $renew - $w end)] as $rm
    | {user: $u, leases: ($leases | length), writes: ($writes | length),
       refused: ([$muts[] | select(ok | not)] | length),
       canceled: ([$muts[] | select(.responseStatus.code == 504)] | length),
       violations: ([$m[] | select(.margin < 0)] | length),
       min_margin: ([$m[].margin] | min),
       last: ($m | max_by(.w)),
       late_sent: ([$rm[] | select(. < 0)] | length), sent: ($rm | length),
       burst: ($burst | length), min_renew: ($rm | min)})
  | .[] | "\(.user) \(.leases) \(.writes) \(.refused) \(.violations) \(.min_margin // "none") \(.last.margin // "none") \(.canceled) \(.late_sent) \(.sent) \(.burst) \(.min_renew // "none")"
' "$WORK/audit.jsonl" >"$WORK/figures" || fail "audit" "jq failed"
total=0
while read -r u nl nw nr nv mm lm nc nls ns nb mr; do
  printf '      %s: %s Lease acquisitions/renewals, %s successful writes, %s answered non-2xx (%s of them 504: abandoned, received at the thaw, not run), smallest margin to lease expiry %s s (latest write: %s s); %s requests outside the thaw, smallest margin to the renew deadline %s s; %s read at the thaw\n' \
    "$u" "$nl" "$nw" "$nr" "$nc" "$mm" "$lm" "$ns" "$mr" "$nb"
  if [ "$nls" = 0 ]; then
    pass "$u: every write request, accepted or refused, was sent within the renew deadline"
  else
    fail "$u: requests after the renew deadline" "$nls of $ns mutating requests received more than ${RENEW_S} s after the replica's last Lease renewal (outside the thaw)"
  fi
  total=$((total + nw))
  if [ "$nv" = 0 ]; then
    pass "$u: every write was received while its lease was valid"
  else
    fail "$u: writes after lease expiry" "$nv of $nw received more than ${LEASE_S} s after the replica's last Lease renewal"
  fi
done <"$WORK/figures"
[ "$total" -ge 48 ] && pass "the replicas made $total writes between them" || fail "writes" "only $total writes"
l1=$(leader "$P1") l2=$(leader "$P2")
[ "$(( ${l1:-0} + ${l2:-0} ))" = 1 ] && pass "exactly one leader at the end ($l1/$l2)" || fail "leaders" "$l1/$l2"

echo
finish
