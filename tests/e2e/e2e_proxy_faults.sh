#!/usr/bin/env bash
# e2e_proxy_faults.sh — the controller behind the fault proxy (tests/tools/faultproxy.c) on the
# real API server: faults of the connection itself, not of the server (design §15; issue 16).
# The controller's kubeconfig points at the proxy, which terminates TLS, matches each request
# line, and speaks to the API server as the controller's own user, so the audit log still
# names it.
#
#   C. A pods watch cut mid-object: the rule binds to the pods watch already open, and the
#      first event after it — pod b's ADDED — is cut 300 bytes into its line. The controller
#      drops the partial line (its log says so), does not crash, resumes the watch from its
#      last resourceVersion (no relist, no decode error) and converges: the event was not lost.
#   S. A silent pods watch: the stream stays open and delivers nothing. A pod created meanwhile
#      is not seen, until the watch idle timeout (90 s, design §5) drops the stream; the next
#      watch passes and the pod converges.
#   T. Every response throttled to 8 KiB/s (watches, reads, writes): a wave of pods lands on a
#      fresh node whose label changes every second (each change a reconcile, from a view of the
#      pods that lags behind the controller's own writes). It converges, and every resize the
#      audit log shows moved a limit — none was sent from a view older than the controller's own
#      last write (design §5) — with one status annotation and one event per resize at most: no
#      write storm.
#
# HEADROOM_E2E_PROXY_SECTIONS (default CST) runs only some of them. Prints PASS/FAIL per check,
# figures, and "N passed, N failed".
set -uo pipefail
# shellcheck source=lib.sh
. "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
MPORT=${HEADROOM_E2E_PROXY_METRICS_PORT:-$(free_port)}
PROXY_PORT=${HEADROOM_E2E_PROXY_PORT:-$(free_port "$MPORT")}
WORK=$(mktemp -d /tmp/headroom-proxy.XXXXXX)
ID=headroom-proxy
NS=e2e-p-$S NODE=e2e-p-n-$S TNODE=e2e-p-t-$S
WATCHES='GET /api/v1/pods?*watch=1*'
THROTTLE=8192
SECTIONS=${HEADROOM_E2E_PROXY_SECTIONS:-CST}

cleanup() {
  [ -n "${WATCHER:-}" ] && kill "$WATCHER" 2>/dev/null
  stop_controller KILL
  proxy_stop
  delete_objects
  k delete headroomconfig cluster --ignore-not-found >/dev/null 2>&1
  remove_identity "$ID"
  if [ "$failed" -gt 0 ]; then
    echo "--- controller log (tail)"; tail -n 30 "$WORK/controller.log"
    echo "--- proxy log (tail)"; tail -n 30 "$WORK/proxy.log"
  fi
  [ -n "${KEEP_WORK:-}" ] || rm -rf "$WORK"
}
trap cleanup EXIT
require_cluster

mine() { # mark [extra jq condition]: the controller user's requests after the mark
  audit_since "$1" "select(.user.username == \"$ID\" and (${2:-true}))"
}
log_since() { # file line: what the file got after line LINE
  tail -n +"$(($2 + 1))" "$1"
}
lines() { wc -l <"$1"; }
logged_since() { # file line pattern: a line after LINE matches (grep -E)
  tail -n +"$(($2 + 1))" "$1" | grep -qE "$3"
}

install_identity "$ID"
mkns "$NS" managed
k label namespace "$NS" "e2e-proxy=$S" >/dev/null
mknode "$NODE" 8
k apply -f - >/dev/null <<YAML
apiVersion: kube-headroom.dev/v1alpha1
kind: HeadroomConfig
metadata: {name: cluster}
spec:
  dryRun: false
  namespaceSelector: {matchLabels: {e2e-proxy: "$S"}}
YAML
proxy_start "$ID" || { fail "proxy start" "see above"; finish; exit; }
USER_KC=$PROXY_KC start_controller || { fail "controller start" "not ready within 60 s"; finish; exit; }
mkpod "$NS" a "$NODE" 200m
check "before: through the proxy, a 200m pod alone on 8 cores gets 2" wait_until 30 limit_is "$NS" a 2
WHY="no request of the controller's reached the proxy"
check "before: the controller's requests go through the proxy (its pods watch among them)" \
  grep -q "GET /api/v1/pods?.*watch=1.*: rule 0: pass" "$WORK/proxy.log"
sleep 3 # the notes that follow the first resize

# ---------------------------------------------------- C. pods watch cut mid-object
if [[ $SECTIONS == *C* ]]; then
  rl0=$(metric 'headroom_relists_total{resource="pods"}')
  de0=$(metric 'headroom_decode_errors_total{resource="pods"}')
  pl=$(lines "$WORK/proxy.log") cl=$(lines "$WORK/controller.log")
  proxy_rules "$WATCHES cut 300 once"
  WHY="the open pods watch was not matched again: $(log_since "$WORK/proxy.log" "$pl" | tail -n 3)"
  check "C0. the rule binds to the pods watch already open" \
    logged_since "$WORK/proxy.log" "$pl" 'rebound to rule 1: cut 300$'

  t0=$(now_ms)
  mkpod "$NS" b "$NODE" 1800m
  both() { limit_is "$NS" a 1200m && limit_is "$NS" b 7200m; }
  converged_c=false
  wait_until 30 both && converged_c=true
  dt=$(( $(now_ms) - t0 ))
  cut=$(log_since "$WORK/proxy.log" "$pl" | grep -m1 ': cut after ')
  echo "figure: ${cut#*faultproxy: }" | cut -c1-260
  into=$(sed -nE 's/.*body bytes, ([0-9]+) bytes into a line.*/\1/p' <<<"$cut")
  cut_in_b() {
    [ "${into:-0}" -gt 0 ] && grep -q '"type":"ADDED"' <<<"$cut" && grep -q '"name":"b"' <<<"$cut"
  }
  WHY="proxy: '${cut:-no cut}'"
  check "C1. the cut fell inside an event's line, pod b's ADDED (${into:-?} bytes in)" cut_in_b
  WHY="controller log: $(log_since "$WORK/controller.log" "$cl" | grep -m2 'pods' | cut -c1-200)"
  check "C2. the controller dropped the partial line (\"stream cut inside a line\")" \
    logged_since "$WORK/controller.log" "$cl" 'stream cut inside a line' 
  WHY="process gone"
  check "C3. no crash" kill -0 "$CTL_PID"
  if $converged_c; then
    check "C4. no lost event: b is seen, a -> 1200m, b -> 7200m ($dt ms)" true
  else
    fail "C4. after the cut" "a '$(cpu_limit "$NS" a)', b '$(cpu_limit "$NS" b)'"
  fi
  rl1=$(metric 'headroom_relists_total{resource="pods"}')
  de1=$(metric 'headroom_decode_errors_total{resource="pods"}')
  WHY="pods relists $rl0 -> $rl1, decode errors $de0 -> $de1"
  check "C5. resumed from the last resourceVersion: no relist, no decode error" [ "$rl1" = "$rl0" -a "$de1" = "$de0" ]
fi

# ---------------------------------------------------- S. a silent pods watch
if [[ $SECTIONS == *S* ]]; then
  sleep 2
  pl=$(lines "$WORK/proxy.log") cl=$(lines "$WORK/controller.log")
  proxy_rules "$WATCHES silent once"
  ts=$(now_ms)
  WHY="the open pods watch was not matched again: $(log_since "$WORK/proxy.log" "$pl" | tail -n 3)"
  check "S0. the rule binds to the pods watch already open: silent, the stream kept open" \
    logged_since "$WORK/proxy.log" "$pl" 'rebound to rule 1: silent after 0$' 
  mkpod "$NS" c "$NODE" 2000m
  sleep 10
  WHY="c got limit '$(cpu_limit "$NS" c)' while its watch was silent"
  check "S1. while the watch is silent the controller does not see c (no limit after 10 s)" \
    [ -z "$(cpu_limit "$NS" c)" ]
  if wait_until 120 node_converged "$NODE"; then
    dt=$(( $(now_ms) - ts ))
    check "S2. converged $((dt / 1000)) s after the silence began (a, b, c at their targets)" true
  else
    fail "S2. convergence after the silence" "$(jq -c '[.nodes[0].pods[] | {name, limitMilli, targetMilli, write}]' "$WORK/plan.json" 2>/dev/null)"
  fi
  drop=$(log_since "$WORK/controller.log" "$cl" | grep -m1 'watch silent for')
  echo "figure: ${drop:-no idle drop in the log}" | cut -c1-240
  WHY="controller log: no 'watch silent for 90000 ms, dropped' for pods"
  check "S3. the idle timeout (90 s) dropped the silent pods watch" \
    grep -q 'watch silent for 90000 ms, dropped' <<<"$drop"
  WHY="proxy: $(log_since "$WORK/proxy.log" "$pl" | grep 'pods?' | tail -n 2)"
  check "S4. the next pods watch passed the proxy" \
    logged_since "$WORK/proxy.log" "$pl" 'GET /api/v1/pods[?].*watch=1.*: rule 0: pass' 
  WHY="process gone"
  check "S5. no crash" kill -0 "$CTL_PID"
fi

# ---------------------------------------------------- T. every response throttled
if [[ $SECTIONS == *T* ]]; then
  # An independent record of each pod's limit: the admin's own watch, straight to the API server.
  mknode "$TNODE" 16
  "$KUBECTL" -n "$NS" get pods -w --output-watch-events -o json >"$WORK/limits.json" 2>/dev/null &
  WATCHER=$!
  sleep 1
  proxy_rules "* * throttle $THROTTLE"
  m_t=$(audit_mark)
  t0=$(now_ms)
  for i in 1 2 3 4; do mkpod "$NS" "t$i" "$TNODE" "$((i * 250))m"; done
  # A busy node: a label changes every second. Each change is a reconcile, and the node's small
  # event outruns the pods' large ones: the controller plans from a view of the pods older than
  # its own last writes, which it must not act on (design §5).
  for i in $(seq 1 15); do
    k label node "$TNODE" "e2e-tick=$i" --overwrite >/dev/null
    sleep 1
  done
  if wait_until 150 node_converged "$TNODE"; then
    check "T1. under $THROTTLE bytes/s four pods converge ($(( $(now_ms) - t0 )) ms)" true
  else
    fail "T1. convergence under the throttle" "$(jq -c '[.nodes[0].pods[] | {name, limitMilli, targetMilli, write}]' "$WORK/plan.json" 2>/dev/null)"
  fi
  sleep 8 # the notes that follow the last resizes, at the throttled pace
  kill "$WATCHER" 2>/dev/null; wait "$WATCHER" 2>/dev/null; WATCHER=""
  jq -c --arg n "$TNODE" 'select(.object.spec.nodeName == $n) | [.object.metadata.name, (.object.spec.containers[0].resources.limits.cpu // "")]' \
    "$WORK/limits.json" >"$WORK/limits.jsonl"
  slowed=$(grep -c ": rule 1: throttle $THROTTLE" "$WORK/proxy.log")
  viol="" total_r=0 total_n=0 total_e=0 total_moves=0
  for i in 1 2 3 4; do
    p=t$i
    r=$(mine "$m_t" ".objectRef.name == \"$p\" and .objectRef.subresource == \"resize\" and .verb == \"patch\"" | wc -l)
    n=$(mine "$m_t" ".objectRef.name == \"$p\" and .objectRef.resource == \"pods\" and (.objectRef.subresource // \"\") == \"\" and .verb == \"patch\"" | wc -l)
    e=$(mine "$m_t" ".objectRef.resource == \"events\" and .verb == \"create\"" | wc -l)
    # The limit's moves: how often it differed from the one before, as the admin's watch saw it.
    moves=$(jq -r --arg p "$p" 'select(.[0] == $p) | .[1]' "$WORK/limits.jsonl" | uniq | awk 'NR > 1' | wc -l)
    total_r=$((total_r + r)) total_n=$((total_n + n)) total_moves=$((total_moves + moves))
    total_e=$e
    [ "$r" -eq "$moves" ] || viol="$viol $p:resizes=$r,moves=$moves"
    [ "$n" -le "$r" ] || viol="$viol $p:annotations=$n>resizes=$r"
  done
  echo "figure: $slowed requests throttled; audit: $total_r resizes, $total_n annotation patches, $total_e events for $total_moves limit moves"
  WHY="$slowed requests got the throttle rule"
  check "T2. the proxy throttled the controller's requests (watches, reads and writes)" [ "$slowed" -ge 4 ]
  WHY="$viol"
  check "T3. audit: every resize moved a limit, at most one status annotation per resize" [ -z "$viol" ]
  WHY="$total_e events for $total_r resizes"
  check "T4. audit: at most one event per resize" [ "$total_e" -le "$total_r" ]
  WHY="process gone"
  check "T5. no crash" kill -0 "$CTL_PID"
fi

stop_controller TERM

echo
finish
