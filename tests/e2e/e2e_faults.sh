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
#   C. 410 Gone: the controller frozen (SIGSTOP) while a pod is created on a
#      node of its own, etcd compacted to its current revision and the API
#      server restarted (its watch cache gone): thawed, the watches resume
#      from a compacted resourceVersion, are told 410, relist (a streaming
#      list: a watch with sendInitialEvents, no LIST), and the new pod
#      converges — and nothing else is written.
#
# Writes are counted from the API server's audit record (tests/cluster/README.md):
# which pods the controller's user wrote, not only how many writes it counted.
#
# Runs as the least-privilege identity of charts/kube-headroom/templates/rbac.yaml. Prints PASS/FAIL
# per check, figures, and "N passed, N failed".
set -uo pipefail
# shellcheck source=../lib/common.sh
. "$(dirname "${BASH_SOURCE[0]}")/../lib/common.sh"
MPORT=${HEADROOM_E2E_FAULTS_PORT:-$(free_port)}
WORK=$(mktemp -d /tmp/headroom-faults.XXXXXX)
NS=e2e-f-$S NODE=e2e-f-n-$S NODE2=e2e-f-m-$S
ID=headroom-faults # the controller's user, as the audit record names it
APISERVER_PID() { cat "$STATE/pids/kube-apiserver"; }

cleanup() {
  kill -CONT "$(APISERVER_PID)" 2>/dev/null
  [ -n "$CTL_PID" ] && kill -CONT "$CTL_PID" 2>/dev/null
  [ -n "${SAMPLER:-}" ] && kill "$SAMPLER" 2>/dev/null
  cleanup_common
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

mknode "$NODE" 8
# Only this run's namespace is managed: pods other tests leave behind (their
# namespaces still terminating) would otherwise be written too, and blur the
# write count that tells a storm from the work the change needs.
start_controller --manage e2e-faults || { fail "controller start" "$START_WHY"; finish; exit; }
mkpod "$NS" a "$NODE" 200m
check "before: a 200m pod alone on 8 cores gets 2" wait_until 20 limit_is "$NS" a 2

# ---------------------------------------------------- A. killed and restarted
sleep 3 # let the config status and the first writes settle
w0=$(writes)
m_a=$(audit_mark)
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
audit_writes "$m_a" "$ID" >"$WORK/a.writes"
aw=$(wc -l <"$WORK/a.writes")
others=$(grep ' pods' "$WORK/a.writes" | grep -v " pods[/a-z]* $NS/[ab] ")
echo "figure: writes from the restart to convergence by the audit record: $aw ($(awk '{print $2 " " $3}' "$WORK/a.writes" | sort | uniq -c | awk '{printf "%s%s %s=%s", sep, $2, $3, $1; sep=", "}'))"
WHY="$aw writes by the audit record: $(tr '\n' ';' <"$WORK/a.writes")"
check "A4. audit: no write storm: at most 12 writes for two pods that changed" [ "$aw" -le 12 ]
WHY="pod writes not to a or b: $others"
check "A5. audit: only the pods that changed (a, b) were written" [ -z "$others" ]
WHY="$dw writes counted by the controller, $aw in the audit record"
check "A6. the controller's own count agrees: at most 12 writes" [ "$dw" -le 12 ]

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
if wait_until 60 node_converged "$NODE"; then
  check "B2. thawed: converges, every managed pod at its target ($(( $(now_ms) - t1 )) ms)" true
else
  fail "B2. convergence after the freeze" "$(jq -c '[.nodes[0].pods[] | {name, limitMilli, targetMilli, write}]' "$WORK/plan.json" 2>/dev/null)"
fi
WHY="restarts $(restarts "$NS")"
check "B3. no pod restarted" [ "$(restarts "$NS")" = 0 ]

# ---------------------------------------------------- C. 410 Gone after compaction
ETCD=http://127.0.0.1:$(sed -n 's/^ETCD_PORT=//p' "$STATE/ports.env") # the cluster's (cluster.sh up)
etcd_compact() { # to the current revision, through etcd's JSON gateway
  local rev
  rev=$(curl -sf -m 10 -X POST "$ETCD/v3/kv/range" -d '{"key":"AA=="}' | jq -r '.header.revision') &&
    [ -n "$rev" ] && [ "$rev" != null ] &&
    curl -sf -m 30 -X POST "$ETCD/v3/kv/compaction" -d "{\"revision\":\"$rev\",\"physical\":true}" >/dev/null &&
    echo "$rev"
}
mknode "$NODE2" 8
wait_until 20 node_converged "$NODE" # B's writes are done: what follows is C's alone
sleep 3
rl0=$(metric 'headroom_relists_total{resource="pods"}')
kill -STOP "$CTL_PID"
m_c=$(audit_mark)
# The API server restarts first: a frozen process's sockets still take what the server sends, so
# events written before the restart would reach the controller on thaw and carry it up to the
# compacted revision (a resume there is valid: no 410). After the restart its streams are closed:
# d and its churn are written where the controller cannot see them, and etcd is compacted past
# them. Then the API server restarts again: its watch caches are filled anew from etcd at a
# revision past the compaction, so the resume point the controller holds (at most a bookmark of
# the first server, older than d) is older than anything the server has, and the watch is told
# 410. Without the second restart the first one's pods cache still held d's history: CI twice
# saw the controller resume its pods watch there (valid, no 410) while the other kinds relisted.
"$CLUSTER" restart-apiserver 1 2>"$WORK/restart2.log"
mkpod "$NS" d "$NODE2" 400m
for i in 1 2 3; do k -n "$NS" annotate pod d "e2e-churn=$i" --overwrite >/dev/null; done
rev=$(etcd_compact)
WHY="etcd compaction failed"
check "C0. etcd compacted to its current revision (${rev:-none}) while the controller is frozen" [ -n "$rev" ]
"$CLUSTER" restart-apiserver 1 2>"$WORK/restart3.log"
log_at_thaw=$(wc -l <"$WORK/controller.log") # frozen: nothing is logged meanwhile
kill -CONT "$CTL_PID"
t1=$(now_ms)
relisted() { [ "$(metric 'headroom_relists_total{resource="pods"}')" -gt "$rl0" ]; }
relisted_ok=0
wait_until 60 relisted && relisted_ok=1
# What the pods watch said since the thaw, looked at now (not before the wait).
WHY="headroom_relists_total{resource=\"pods\"} $(metric 'headroom_relists_total{resource="pods"}') (was $rl0); the pods watch since the thaw: $(tail -n +"$((log_at_thaw + 1))" "$WORK/controller.log" | grep 'resource=pods' | tail -6)"
check "C1. thawed: the pods watch is told 410 and relists" [ "$relisted_ok" = 1 ]
# The controller's lists and watches since the freeze (audit): watches at their start, LISTs.
reads_since() {
  audit_since "$m_c" "select(.user.username == \"$ID\" and
    (.verb == \"list\" or (.verb == \"watch\" and .stage == \"ResponseStarted\"))) | {verb, resource: .objectRef.resource, uri: .requestURI}"
}
streamed() { reads_since | jq -c 'select(.verb == "watch" and (.uri | test("[?&]sendInitialEvents=true(&|$)")))'; }
lists() { reads_since | jq -c 'select(.verb == "list")'; }
streamed_relist() { [ -n "$(streamed)" ] && [ -z "$(lists)" ]; }
wait_until 10 streamed_relist
WHY="streaming lists: $(streamed | jq -r .resource | tr '\n' ' '); LISTs: $(lists | jq -r .resource | tr '\n' ' ')"
check "C1b. audit: the relists after the compaction are streaming lists ($(streamed | jq -r .resource | sort -u | tr '\n' ' ')), no LIST" \
  streamed_relist
WHY="d: limit '$(cpu_limit "$NS" d)'"
check "C2. the pod created meanwhile converges (400m alone on 8 cores: 4) ($(( $(now_ms) - t1 )) ms)" \
  wait_until 60 limit_is "$NS" d 4
sleep 5 # the notes of d, and any rewrite a relist by difference would cause, land
audit_writes "$m_c" "$ID" ".objectRef.resource == \"pods\"" >"$WORK/c.writes"
others=$(grep -v " pods[/a-z]* $NS/d " "$WORK/c.writes")
WHY="pod writes after the relist not to d: $others"
only_d() { [ -z "$others" ] && grep -q " patch pods/resize $NS/d 200" "$WORK/c.writes"; }
check "C3. audit: after the relist only the new pod was written (a, b, c untouched)" only_d
WHY="process gone"
check "C4. the daemon stays up" kill -0 "$CTL_PID"
stop_controller TERM

echo
finish
