#!/usr/bin/env bash
# e2e_resize_invalid.sh — the 422 outcome on the real API server (design §7): a write
# the API server rejects as invalid, because the controller's view was stale.
#
#   The controller's pods watch is stalled by the fault proxy (tests/tools/faultproxy.c; the
#   stream stays open, nothing comes). Meanwhile another writer — as a VPA in RequestsOnly
#   would — raises the pod's request from 200m to 2 cores through pods/resize (its limit, 2, left
#   to us: a writer of the request is not a writer of the limit, design §4 rule 20), and the
#   HeadroomConfig's maxMultiplier drops from 10 to 5. From its stale view (request 200m) the
#   controller lowers the limit to 1 core, below the new request: the API server answers 422.
#
#   V1. audit: the controller's resize got 422;
#   V2. one Warning ResizeSkipped event on the pod carries the API server's own message;
#   V3. headroom_resizes_total{result="invalid"} counts it;
#   V4. back-off: while the node keeps changing (a label every second, 15 s: each change is a
#       reconcile), no second write to the pod — no retry loop (audit);
#   V5. the stall ends: the view catches up (request 2, limit 2), and once the back-off is over
#       the pod gets the right limit, 8 (alone on 8 cores: 2 + 6 of slack, under 5 × 2), by the
#       controller's next write — not by a loop; V6 the 422 stayed the only refused write.
#
# Prints PASS/FAIL per check, figures, and "N passed, N failed".
set -uo pipefail
# shellcheck source=../lib/common.sh
. "$(dirname "${BASH_SOURCE[0]}")/../lib/common.sh"
MPORT=${HEADROOM_E2E_INVALID_METRICS_PORT:-$(free_port)}
PROXY_PORT=${HEADROOM_E2E_INVALID_PROXY_PORT:-$(free_port "$MPORT")}
WORK=$(mktemp -d /tmp/headroom-invalid.XXXXXX)
ID=headroom-invalid
NS=e2e-v-$S NODE=e2e-v-n-$S
TICKS=15

trap 'cleanup_common 30' EXIT
require_cluster

RESIZE_P='.objectRef.name == "p" and .objectRef.subresource == "resize" and .verb == "patch"'
# requestReceivedTimestamp as seconds since the epoch, with the fraction.
TS='(.requestReceivedTimestamp | capture("^(?<s>[^.]+)[.](?<f>[0-9]+)Z$")) as $c | (($c.s + "Z") | fromdate) + ("0." + $c.f | tonumber)'
request_is() { # ns pod cpu: the pod's request as the API server has it
  [ "$(k -n "$1" get pod "$2" -o jsonpath='{.spec.containers[0].resources.requests.cpu}')" = "$3" ]
}
refused() { mine "$M" "$RESIZE_P and .responseStatus.code == 422" | matches .; }

mknode "$NODE" 8
start_controller --manage e2e-invalid --proxy || { fail "controller start" "$START_WHY"; finish; exit; }
mkpod "$NS" p "$NODE" 200m
check "before: a 200m pod alone on 8 cores gets 2" wait_until 30 limit_is "$NS" p 2
sleep 3 # the notes that follow the resize

# ---------------------------------------------------- the stale view, the other writer
pl=$(wc -l <"$WORK/proxy.log")
proxy_rules 'GET /api/v1/pods?*watch=1* silent'
WHY="the proxy did not stall the open pods watch: $(tail -n +$((pl + 1)) "$WORK/proxy.log" | tail -n 2)"
check "the pods watch is stalled (open, silent)" \
  sh -c "tail -n +$((pl + 1)) '$WORK/proxy.log' | grep -q 'rebound to rule 1: silent after 0$'"
k -n "$NS" patch pod p --subresource resize --type strategic \
  -p '{"spec":{"containers":[{"name":"app","resources":{"requests":{"cpu":"2"}}}]}}' >/dev/null
WHY="request '$(k -n "$NS" get pod p -o jsonpath='{.spec.containers[0].resources.requests.cpu}')'"
check "another writer raised the request to 2 (not the limit) through pods/resize" request_is "$NS" p 2
M=$(audit_mark)
ev0=$(metric 'headroom_resizes_total{result="invalid"}')
k patch headroomconfig cluster --type merge -p '{"spec":{"maxMultiplier":"5"}}' >/dev/null

# ---------------------------------------------------- V. the 422 and the back-off
WHY="no resize of p by $ID answered 422; its resizes: $(mine "$M" "$RESIZE_P" | jq -r '.responseStatus.code' | tr '\n' ' ')"
check "V1. audit: from its stale view the controller lowered the limit below the request: 422" \
  wait_until 30 refused
t422=$(mine "$M" "$RESIZE_P and .responseStatus.code == 422" | head -n 1 | jq -r "$TS")
warning() {
  k -n "$NS" get events.events.k8s.io -o json | jq -r --arg p p \
    '.items[] | select(.regarding.name == $p and .type == "Warning" and .reason == "ResizeSkipped") | .note' >"$WORK/warn.txt"
  [ "$(wc -l <"$WORK/warn.txt")" = 1 ] && grep -q 'must be less than or equal to cpu limit' "$WORK/warn.txt"
}
WHY="Warning ResizeSkipped notes: '$(cat "$WORK/warn.txt" 2>/dev/null)'"
check "V2. one Warning ResizeSkipped event with the API server's message" wait_until 15 warning
echo "figure: the event says: $(head -c 300 "$WORK/warn.txt")"
WHY="headroom_resizes_total{result=\"invalid\"} $(metric 'headroom_resizes_total{result="invalid"}') (before $ev0)"
check "V3. headroom_resizes_total{result=\"invalid\"} counts it" \
  [ "$(metric 'headroom_resizes_total{result="invalid"}')" -gt "$ev0" ]
# A busy node: every label change is a reconcile of the node, with the stale view.
for i in $(seq 1 "$TICKS"); do
  k label node "$NODE" "e2e-tick=$i" --overwrite >/dev/null
  sleep 1
done
n=$(mine "$M" "$RESIZE_P" | wc -l)
recs=$(grep -c "msg=decision node=$NODE pod=$NS/p " "$WORK/controller.log")
echo "figure: $TICKS node changes in $TICKS s after the 422: $n resize(s) of p; the log has $recs decisions for p"
WHY="$n resizes of p by $ID since the stall: $(mine "$M" "$RESIZE_P" | jq -r '.responseStatus.code' | tr '\n' ' ')"
check "V4. back-off: $TICKS node changes, still the one refused write (no retry loop)" [ "$n" = 1 ]

# ---------------------------------------------------- the view catches up
proxy_rules ''
WHY="limit '$(cpu_limit "$NS" p)'"
check "V5. un-stalled: once the back-off is over the pod gets the right limit, 8" \
  wait_until 75 limit_is "$NS" p 8
mine "$M" "$RESIZE_P" | jq -r "[.responseStatus.code, ($TS)] | @tsv" >"$WORK/resizes.tsv"
after=$(awk -v t="$t422" '$1 == 200 {printf "%.1f", $2 - t; exit}' "$WORK/resizes.tsv")
codes=$(awk '{print $1}' "$WORK/resizes.tsv" | tr '\n' ' ')
echo "figure: resizes of p since the stall (code): $codes; the right one $after s after the 422"
WHY="resize codes: $codes; the accepted one $after s after the 422 (back-off 60 s)"
check "V6. audit: the 422, then one accepted resize after the back-off (>= 55 s), nothing else" \
  sh -c "[ '$codes' = '422 200 ' ] && awk -v a='${after:-0}' 'BEGIN {exit !(a >= 55)}'"
WHY="process gone"
check "no crash" kill -0 "$CTL_PID"
stop_controller TERM

echo
finish
