#!/usr/bin/env bash
# e2e_faults.sh — the controller when the API server is not there (design §15).
#
#   A. kube-apiserver SIGKILLed and kept down 5 s, then started again: the
#      daemon stays up and live (/healthz 200 throughout), its watches come
#      back, a change made after the restart is applied, and the writes
#      around it are those the change needs — no storm.
#   B. kube-apiserver frozen (SIGSTOP) for 15 s with a change pending: every
#      request hangs instead of failing. The daemon stays up and, once the
#      server answers again, converges: every managed pod at the target the
#      planner computes from the live cluster, nothing left to write.
#
# Runs as the least-privilege identity of charts/kube-headroom/templates/rbac.yaml. Prints PASS/FAIL
# per check, figures, and "N passed, N failed".
set -uo pipefail
# shellcheck source=lib.sh
. "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
MPORT=${HEADROOM_E2E_FAULTS_PORT:-28121}
WORK=$(mktemp -d /tmp/headroom-faults.XXXXXX)
NS=e2e-f-$S NODE=e2e-f-n-$S
APISERVER_PID() { cat "$STATE/pids/kube-apiserver"; }

cleanup() {
  kill -CONT "$(APISERVER_PID)" 2>/dev/null
  [ -n "${SAMPLER:-}" ] && kill "$SAMPLER" 2>/dev/null
  stop_controller KILL
  delete_objects
  k delete headroomconfig cluster --ignore-not-found >/dev/null 2>&1
  remove_identity headroom-faults
  if [ "$failed" -gt 0 ]; then echo "--- controller log (tail)"; tail -n 40 "$WORK/controller.log"; fi
  [ -n "${KEEP_WORK:-}" ] || rm -rf "$WORK"
}
trap cleanup EXIT
require_cluster

# /healthz every half second into a file, until killed: "200" lines or not.
sample_health() {
  while :; do
    curl -s -o /dev/null -m 2 -w '%{http_code}\n' "http://127.0.0.1:$MPORT/healthz" >>"$WORK/health"
    sleep 0.5
  done
}
# Converged: the planner, reading the live cluster, has nothing left to write
# on the node, and every managed pod has a limit.
converged() {
  "$HEADROOM" node "$NODE" -o json >"$WORK/plan.json" 2>/dev/null &&
    jq -e '[.nodes[0].pods[] | select(.managed)] | length > 0 and all(.write == false and .limitMilli > 0)' \
      "$WORK/plan.json" >/dev/null
}

install_identity headroom-faults
mkns "$NS" managed
k label namespace "$NS" "e2e-faults=$S" >/dev/null
mknode "$NODE" 8
# Only this run's namespace is managed: pods other tests leave behind (their
# namespaces still terminating) would otherwise be written too, and blur the
# write count that tells a storm from the work the change needs.
k apply -f - >/dev/null <<YAML
apiVersion: kube-headroom.dev/v1alpha1
kind: HeadroomConfig
metadata: {name: cluster}
spec:
  dryRun: false
  namespaceSelector: {matchLabels: {e2e-faults: "$S"}}
YAML
start_controller || { fail "controller start" "not ready within 60 s"; finish; exit; }
mkpod "$NS" a "$NODE" 200m
check "before: a 200m pod alone on 8 cores gets 2" wait_until 20 limit_is "$NS" a 2

# ---------------------------------------------------- A. killed and restarted
sleep 3 # let the config status and the first writes settle
w0=$(writes)
rl0=$(metric 'headroom_relists_total{resource="pods"}')
sample_health & SAMPLER=$!
t0=$(now_ms)
"$CLUSTER" restart-apiserver 5 2>"$WORK/restart.log"
rs=$?
echo "figure: API server down and back in $(( $(now_ms) - t0 )) ms"
WHY="restart-apiserver exited $rs: $(tail -n 2 "$WORK/restart.log")"
check "A0. the API server was killed and came back" [ "$rs" = 0 ]
sleep 2
kill "$SAMPLER" 2>/dev/null; wait "$SAMPLER" 2>/dev/null; SAMPLER=""
bad=$(grep -cv '^200$' "$WORK/health")
WHY="process gone"
check "A1. the daemon stays up through an API server restart" kill -0 "$CTL_PID"
WHY="$bad of $(wc -l <"$WORK/health") probes were not 200"
check "A2. /healthz answered 200 all through the outage ($(wc -l <"$WORK/health") probes)" [ "$bad" = 0 ]
t1=$(now_ms)
mkpod "$NS" b "$NODE" 1800m
both() { limit_is "$NS" a 1200m && limit_is "$NS" b 7200m; }
if wait_until 60 both; then  # watches resume on their back-off (up to 30 s)
  check "A3. a neighbour created after the restart is seen: a -> 1200m, b -> 7200m ($(( $(now_ms) - t1 )) ms)" true
else
  fail "A3. after the restart" "a '$(cpu_limit "$NS" a)', b '$(cpu_limit "$NS" b)'"
fi
sleep 12 # past the config status's count-only pace, so its write is counted too
dw=$(( $(writes) - w0 ))
by_kind=$(curl -sf "http://127.0.0.1:$MPORT/metrics" | awk '$1 ~ /^headroom_writes_total[{]/ {printf "%s%s=%s", sep, $1, $2; sep=" "}' | sed 's/headroom_writes_total{kind="\([a-z]*\)"}/\1/g')
echo "figure: writes from the restart to convergence: $dw (since start: $by_kind); pods relists $(( $(metric 'headroom_relists_total{resource="pods"}') - rl0 ))"
reasons=$(k -n "$NS" get events.events.k8s.io -o json | jq -r '[.items[] | select(.reportingController == "kube-headroom.dev/headroom") | .reason] | group_by(.) | map("\(.[0])=\(length)") | join(" ")')
echo "figure: events in the namespace by reason: ${reasons:-none}"
# Two pods changed: a resize, an annotation and an event each, a count-only
# status write or two, and perhaps one ResizeSkipped for a Node read that
# hit the outage. A storm is dozens.
WHY="$dw writes"
check "A4. no write storm: at most 12 writes for two pods that changed" [ "$dw" -le 12 ]

# ---------------------------------------------------- B. frozen with a change pending
mkpod "$NS" c "$NODE" 2000m
sleep 0.5
kill -STOP "$(APISERVER_PID)"
t0=$(now_ms)
sleep 15
kill -CONT "$(APISERVER_PID)"
echo "figure: API server frozen for $(( $(now_ms) - t0 )) ms"
WHY="process gone"
check "B1. the daemon stays up while every request hangs" kill -0 "$CTL_PID"
t1=$(now_ms)
if wait_until 60 converged; then
  check "B2. thawed: converges, every managed pod at its target ($(( $(now_ms) - t1 )) ms)" true
else
  fail "B2. convergence after the freeze" "$(jq -c '[.nodes[0].pods[] | {name, limitMilli, targetMilli, write}]' "$WORK/plan.json" 2>/dev/null)"
fi
WHY="restarts $(restarts "$NS")"
check "B3. no pod restarted" [ "$(restarts "$NS")" = 0 ]
stop_controller TERM

echo
finish
