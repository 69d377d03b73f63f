#!/usr/bin/env bash
# e2e_proxy_faults.sh — the controller behind the fault proxy (tests/tools/faultproxy.c) on the
# real API server: faults of the connection itself, not of the server (design §15).
# The controller's kubeconfig points at the proxy, which terminates TLS, matches each request
# line, and speaks to the API server as the controller's own user, so the audit log still
# names it.
#
#   C. A pods watch cut mid-object: the rule binds to the pods watch already open, and the
#      first event after it — pod b's ADDED — is cut 300 bytes into its line (its protobuf
#      frame, the watch's default encoding; the JSON of kubectl's last-applied annotation in it
#      names b). The controller drops the partial event (its log says so), does not crash,
#      resumes the watch from its last resourceVersion (no relist, no decode error) and
#      converges: the event was not lost.
#   R. Writes refused by the proxy itself (a `respond` rule: the request never reaches the API
#      server, the answer is a Kubernetes Status): the rows of design §7 the real API server
#      will not give on demand. Each time pod r1 shares a node with r2 (r1 at 1200m), a rule
#      refuses r1's next resize, and r2 is deleted at once (--force: one event, then a quiet
#      node), so r1's target becomes 2 and only the controller's own requeue can bring the retry:
#      R1 409 Conflict once (the resize is a forced apply, which the API server never refuses
#      with a conflict): counted `conflict`, the node requeued, r1 reaches 2 by the next write.
#      R2 500 then 503: counted `error` twice, retried after a growing back-off, then applied.
#      R3 429 with Retry-After: 3: counted `error`, the retry waits the 3 s, then applied.
#      The proxy's log shows each refusal, the API server's audit record the one accepted
#      write after it, and nothing else: no write storm.
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
# HEADROOM_E2E_PROXY_SECTIONS (default CRST) runs only some of them. Prints PASS/FAIL per check,
# figures, and "N passed, N failed".
set -uo pipefail
# shellcheck source=../lib/common.sh
. "$(dirname "${BASH_SOURCE[0]}")/../lib/common.sh"
MPORT=${HEADROOM_E2E_PROXY_METRICS_PORT:-$(free_port)}
PROXY_PORT=${HEADROOM_E2E_PROXY_PORT:-$(free_port "$MPORT")}
WORK=$(mktemp -d /tmp/headroom-proxy.XXXXXX)
ID=headroom-proxy
NS=e2e-p-$S NODE=e2e-p-n-$S TNODE=e2e-p-t-$S RNODE=e2e-p-r-$S
WATCHES='GET /api/v1/pods?*watch=1*'
THROTTLE=8192
SECTIONS=${HEADROOM_E2E_PROXY_SECTIONS:-CRST}

cleanup() {
  [ -n "${WATCHER:-}" ] && kill "$WATCHER" 2>/dev/null
  cleanup_common 30
}
trap cleanup EXIT
require_cluster

log_since() { # file line: what the file got after line LINE
  tail -n +"$(($2 + 1))" "$1"
}
lines() { wc -l <"$1"; }
logged_since() { # file line pattern: a line after LINE matches (grep -E)
  tail -n +"$(($2 + 1))" "$1" | matches -E "$3"
}

mknode "$NODE" 8
start_controller --manage e2e-proxy --proxy || { fail "controller start" "$START_WHY"; finish; exit; }
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
    [ "${into:-0}" -gt 0 ] && grep -q '"name":"b"' <<<"$cut"
  }
  WHY="proxy: '${cut:-no cut}'"
  check "C1. the cut fell inside an event's line, pod b's ADDED (${into:-?} bytes in)" cut_in_b
  WHY="controller log: $(log_since "$WORK/controller.log" "$cl" | grep -m2 'pods' | cut -c1-200)"
  check "C2. the controller dropped the partial event (\"stream cut inside a line\" or \"a frame\")" \
    logged_since "$WORK/controller.log" "$cl" 'stream cut inside a (line|frame)' 
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

# ---------------------------------------------------- R. writes refused by the proxy itself
if [[ $SECTIONS == *R* ]]; then
  mknode "$RNODE" 8
  R1_RESIZE="/api/v1/namespaces/$NS/pods/r1/resize"
  epoch_of() { date -d "$1" +%s.%N; } # an RFC 3339 UTC time -> seconds since the epoch
  # The proxy's refusals of r1's resize since log line L: "epoch code" each.
  refusals() { # line
    log_since "$WORK/proxy.log" "$1" | grep -F " PATCH $R1_RESIZE" | grep ': answered ' |
      while read -r t _ _ _ _ _ _ _ _ code _; do echo "$(epoch_of "$t") $code"; done
  }
  # r1's resizes the API server received since mark M: "epoch code" each.
  r1_resizes() { # mark
    mine "$1" '.objectRef.name == "r1" and .objectRef.subresource == "resize" and .verb == "patch"' |
      jq -r '"\(.requestReceivedTimestamp) \(.responseStatus.code)"' |
      while read -r t code; do echo "$(epoch_of "$t") $code"; done
  }
  mkpod "$NS" r1 "$RNODE" 200m
  # One case: r2 beside r1, both converged; the rules; r2 gone; r1 must reach 2.
  # Leaves the proxy's refusals in $WORK/refused, the API server's resizes of r1 in $WORK/accepted.
  refuse_case() { # name rules
    local pl m
    mkpod "$NS" r2 "$RNODE" 1800m
    wait_until 30 both_r || { fail "$1: before" "r1 '$(cpu_limit "$NS" r1)', r2 '$(cpu_limit "$NS" r2)'"; return 1; }
    quiet_for 2 20 "$MPORT" >/dev/null # the notes that follow r2's resizes
    pl=$(lines "$WORK/proxy.log") m=$(audit_mark)
    ok0=$(metric 'headroom_resizes_total{result="conflict"}') er0=$(metric 'headroom_resizes_total{result="error"}')
    proxy_rules "$2" || return 1
    k -n "$NS" delete pod r2 --grace-period=0 --force >/dev/null 2>&1
    t0=$(now_ms)
    converged_r=false
    wait_until 20 limit_is "$NS" r1 2 && converged_r=true
    dt=$(( $(now_ms) - t0 ))
    sleep 2 # a storm would show here
    refusals "$pl" >"$WORK/refused"
    r1_resizes "$m" >"$WORK/accepted"
    dc=$(( $(metric 'headroom_resizes_total{result="conflict"}') - ok0 ))
    de=$(( $(metric 'headroom_resizes_total{result="error"}') - er0 ))
    echo "figure: $1: r1 at '$(cpu_limit "$NS" r1)' after $dt ms; proxy refused: $(awk '{print $2}' "$WORK/refused" | tr '\n' ' ')- API server: $(awk '{print $2}' "$WORK/accepted" | tr '\n' ' ')- conflict +$dc, error +$de"
  }
  both_r() { limit_is "$NS" r1 1200m && limit_is "$NS" r2 7200m; }
  # The accepted write is the only one the API server saw, and it came after the last refusal.
  accepted_after() { # min-gap-s max-gap-s: the gap from the last refusal to it
    local last acc
    last=$(tail -n 1 "$WORK/refused" | awk '{print $1}') acc=$(awk '{print $1 " " $2}' "$WORK/accepted")
    gap=$(awk -v a="${acc%% *}" -v l="${last:-0}" 'BEGIN {printf "%.2f", a - l}')
    echo "figure: from the last refusal to the accepted write: $gap s"
    WHY="API server: '$(tr '\n' ' ' <"$WORK/accepted")', last refusal at ${last:-none}, gap $gap s"
    [ "$(wc -l <"$WORK/accepted")" -eq 1 ] && [ "${acc#* }" = 200 ] && [ -n "$last" ] &&
      awk -v g="$gap" -v lo="$1" -v hi="$2" 'BEGIN {exit !(g >= lo && g <= hi)}'
  }
  refusal_codes() { awk '{print $2}' "$WORK/refused" | tr '\n' ' ' | sed 's/ $//'; }
  # Each retry's wait after a refusal (s): "gap1 gap2 ..." between successive refusals.
  refusal_gaps() { awk 'NR > 1 {printf "%s%.2f", sep, $1 - p; sep = " "} {p = $1}' "$WORK/refused"; }

  # What every case checks: the proxy's refusals, the counter, r1 at 2 in the end.
  refused_as() { # id codes result count what-brought-the-retry
    local d=$de
    [ "$3" = conflict ] && d=$dc
    WHY="proxy refused '$(refusal_codes)'"
    check "$1a. the proxy answered r1's resize $2 itself" [ "$(refusal_codes)" = "$2" ]
    WHY="$3 +$d"
    check "$1b. counted $4 time(s) as headroom_resizes_total{result=\"$3\"}" [ "$d" -eq "$4" ]
    if $converged_r; then pass "$1c. $5: r1 reaches 2 ($dt ms after r2 went, no event meanwhile)"
    else fail "$1c. $5" "r1 at '$(cpu_limit "$NS" r1)' after 20 s"; fi
  }
  if refuse_case "R1. 409" "PATCH $R1_RESIZE* respond 409 once"; then
    refused_as R1 409 conflict 1 "requeued after the conflict"
    check "R1d. audit: one resize of r1 reached the API server, accepted (200), within 3 s of the 409" accepted_after 0 3
  fi
  if refuse_case "R2. 5xx" "PATCH $R1_RESIZE* respond 500 once
PATCH $R1_RESIZE* respond 503 once"; then
    refused_as R2 "500 503" error 2 "retried after the back-off"
    # The back-off (design §7): nominally 1 s after the first refusal, 2 s after the second,
    # times [0.5, 1.5).
    g1=$(refusal_gaps)
    WHY="the retry came $g1 s after the 500"
    check "R2d. the retry after the 500 waited the back-off (0.5-1.5 s): $g1 s" \
      awk -v g="${g1:-0}" 'BEGIN {exit !(g >= 0.45 && g <= 1.8)}'
    check "R2e. audit: one resize of r1 reached the API server, accepted, 1-3 s after the 503" accepted_after 0.95 3.6
  fi
  if refuse_case "R3. 429" "PATCH $R1_RESIZE* respond 429 retry-after 3 once"; then
    refused_as R3 429 error 1 "retried after Retry-After"
    check "R3d. audit: one resize of r1, accepted, no sooner than the 3 s Retry-After asked (longer than the 0.5-1.5 s back-off)" accepted_after 2.95 4.5
  fi
  WHY="process gone"
  check "R4. no crash" kill -0 "$CTL_PID"
  proxy_rules "" # the rest passes
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
