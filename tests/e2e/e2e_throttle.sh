#!/usr/bin/env bash
# e2e_throttle.sh — "was my pod throttled, by which ceiling, and what request would have avoided
# it?" (design §9.7): `headroom explain POD --prometheus URL --since W` on the real node, with a
# real Prometheus (Debian's, on loopback, its own data directory, stopped by PID) scraping the
# real node's kubelet cAdvisor (as kube-prometheus does: HTTPS, a token allowed nodes/metrics) and
# the controller's /metrics, every second.
#
# Two burners of one thread each (each wants a whole core), no limit of their own, in a managed
# namespace on the real node, with the controller live (dryRun false, minBurstFloor 0):
#  - low asks 50m: its slack share 50 · (1 + S/M) is far below a core, so it is throttled;
#  - idle asks 600m: its share is above the core it wants, so it is not.
# After a window of burning:
#  1. explain --prometheus says low was THROTTLED (as the kernel's cpu.stat counted over the
#     window), at a ceiling equal to its limit in the API, that the ceiling was its slack share
#     on the real node, and names a request above 50m that would have avoided it; -o json says
#     the same in fields (throttled, ceiling, ceilingSource, requestToAvoid), and that request,
#     by the policy, would give it what it wanted (core/throttle.h, checked again here in shell
#     arithmetic);
#  2. explain --prometheus says idle was not throttled;
#  3. the refusals: --prometheus with -f, --since without --prometheus, an unreachable
#     Prometheus (a clear error, exit 1).
#
# cAdvisor here labels the pods' cgroups, not their containers' (e2e_prometheus.sh says why):
# explain falls back to the pod cgroup's series and says so.
#
# Needs `cluster.sh up` and `cluster.sh real-node up` (CTest: the cluster-realnode fixture).
set -uo pipefail
# shellcheck source=../lib/common.sh
. "$(dirname "${BASH_SOURCE[0]}")/../lib/common.sh"
# shellcheck source=../lib/realnode.sh
. "$(dirname "${BASH_SOURCE[0]}")/../lib/realnode.sh"
WORK=$(mktemp -d /tmp/headroom-e2e-thr.XXXXXX)
NS=e2e-thr-$S
RUN=e2ethr$S
ID=headroom-e2e-thr
MON=e2e-thr-mon-$S
MPORT=$(free_port)
PPORT=$(free_port "$MPORT")
KUBELET_PORT=$(sed -n 's/^KUBELET_PORT=//p' "$STATE/ports.env")
PROM_PID=""
WINDOW=${HEADROOM_E2E_THROTTLE_S:-45}

cleanup() {
  if [ -n "$PROM_PID" ]; then kill "$PROM_PID" 2>/dev/null; wait "$PROM_PID" 2>/dev/null; fi
  stop_controller KILL
  k delete clusterrolebinding "e2e-thr-kubelet-$S" --ignore-not-found >/dev/null 2>&1
  k delete clusterrole "e2e-thr-kubelet-$S" --ignore-not-found >/dev/null 2>&1
  k delete namespace "$MON" --ignore-not-found --wait=false >/dev/null 2>&1
  delete_objects
  k delete headroomconfig cluster --ignore-not-found >/dev/null 2>&1
  remove_identity "$ID"
  if [ "$failed" -gt 0 ]; then
    echo "--- controller log (tail)"; tail -n 30 "$WORK/controller.log"
    echo "--- prometheus log (tail)"; tail -n 10 "$WORK/prometheus.log"
  fi
  rm -rf "$WORK"
}
trap cleanup EXIT
require_real_node
command -v prometheus >/dev/null || { echo "FAIL  prometheus not installed (scripts/setup.sh installs it)"; echo "0 passed, 1 failed"; exit 1; }

install_identity "$ID"
run_config
mkns "$NS" managed
k label namespace "$NS" kube-headroom.dev/e2e-run="$RUN" >/dev/null
start_controller || { fail "the controller is ready" "$START_WHY"; finish; exit 1; }

# Prometheus's token for the kubelet (nodes/metrics, which the kubelet checks with the API server).
k create namespace "$MON" >/dev/null
k -n "$MON" create serviceaccount prometheus >/dev/null
k create clusterrole "e2e-thr-kubelet-$S" --verb=get --resource=nodes/metrics >/dev/null
k create clusterrolebinding "e2e-thr-kubelet-$S" --clusterrole="e2e-thr-kubelet-$S" \
  --serviceaccount="$MON:prometheus" >/dev/null
k -n "$MON" create token prometheus --duration=1h >"$WORK/token"
mkdir -p "$WORK/data"
cat >"$WORK/prometheus.yml" <<YAML
global: {scrape_interval: 1s, evaluation_interval: 1s}
scrape_configs:
- job_name: kube-headroom-metrics
  honor_labels: true
  static_configs: [{targets: ["127.0.0.1:$MPORT"]}]
- job_name: kubelet
  scheme: https
  metrics_path: /metrics/cadvisor
  authorization: {credentials_file: $WORK/token}
  tls_config: {insecure_skip_verify: true}
  static_configs: [{targets: ["127.0.0.1:$KUBELET_PORT"]}]
  metric_relabel_configs: [{source_labels: [__name__], regex: container_cpu_.*, action: keep}]
YAML
prometheus --config.file="$WORK/prometheus.yml" --storage.tsdb.path="$WORK/data" \
  --web.listen-address="127.0.0.1:$PPORT" --log.level=warn >"$WORK/prometheus.log" 2>&1 &
PROM_PID=$!
PROM=http://127.0.0.1:$PPORT

# The burners. The small-pod floor is off (minBurstFloor 0) so low's ceiling is its proportional
# share alone (design §2.2): on the 2-core node S = 2000 − 650 and M = 650, so low gets
# 50 · 3.08 ≈ 154m and idle 600 · 3.08 ≈ 1.8 cores.
k patch headroomconfig cluster --type merge -p '{"spec":{"minBurstFloor":"0"}}' >/dev/null
burner_pod "$NS" low 50m "" 1
burner_pod "$NS" idle 600m "" 1
check "the burners run on the real node" wait_until 90 eval 'running "$NS" low && running "$NS" idle'
settled() { # both limited, low well below a core, idle above one
  local l i
  l=$(milli "$(cpu_limit "$NS" low)" 2>/dev/null) i=$(milli "$(cpu_limit "$NS" idle)" 2>/dev/null)
  [ -n "$l" ] && [ -n "$i" ] && [ "$l" -gt 0 ] && [ "$l" -lt 500 ] && [ "$i" -gt 1100 ]
}
WHY="limits: low '$(cpu_limit "$NS" low)', idle '$(cpu_limit "$NS" idle)'"
check "the controller gives low a ceiling far below the core it wants, idle one above it" wait_until 30 settled
low_m=$(milli "$(cpu_limit "$NS" low)")

# Burn for the window once Prometheus has the pods' CFS series and our limit.
pq() { curl -sf -G "$PROM/api/v1/query" --data-urlencode "query=$1" | jq -r '.data.result | length'; }
series_in() {
  [ "$(pq "container_cpu_cfs_periods_total{namespace=\"$NS\",pod=\"low\"}")" -ge 1 ] &&
    [ "$(pq "headroom_pod_limit_cores{namespace=\"$NS\",pod=\"low\"}")" -ge 1 ]
}
WHY="cAdvisor series of low: $(pq "container_cpu_cfs_periods_total{namespace=\"$NS\",pod=\"low\"}"), ours: $(pq "headroom_pod_limit_cores{namespace=\"$NS\",pod=\"low\"}")"
check "Prometheus holds low's CFS series (the kubelet's cAdvisor) and its limit (ours)" wait_until 60 series_in
p0=$(cg_periods "$NS" low) t0=$(cg_throttled "$NS" low)
sleep "$WINDOW"
p1=$(cg_periods "$NS" low) t1=$(cg_throttled "$NS" low)
# The kernel's own share of low's CFS periods throttled over the window (its cpu.stat). How much low
# is throttled depends on the CPU the machine leaves it (its cgroup weight is its 50m request's: a
# busy machine starves it below its quota), and explain reads cAdvisor's counters through
# Prometheus at its own steps, so the two shares differ; explain's verdict (throttled from 1 % of
# the periods) is judged against the kernel's count, not a fixed share.
kratio=$(awk -v p=$((p1 - p0)) -v t=$((t1 - t0)) 'BEGIN {printf "%.4f", (p > 0 ? t / p : 0)}')
echo "      the kernel: low throttled in $((t1 - t0)) of $((p1 - p0)) CFS periods over ${WINDOW} s ($kratio)"

# 1. low: throttled, at its slack share, and the request that avoids it.
EXPLAIN=("$HEADROOM" explain --kubeconfig "$KUBECONFIG" -n "$NS" --prometheus "$PROM" --since "${WINDOW}s")
"${EXPLAIN[@]}" low >"$WORK/low.txt" 2>&1
rc=$?
sed 's/^/  | /' "$WORK/low.txt"
WHY="exit $rc: $(cat "$WORK/low.txt")"
check "1a. explain --prometheus low: THROTTLED, at its ceiling, its slack share, a request to avoid it" \
  eval 'grep -q "THROTTLED" "$WORK/low.txt" && grep -q "its slack share on $REAL_NODE" "$WORK/low.txt" &&
        grep -q "to avoid it   a request of at least" "$WORK/low.txt" && grep -q "pod cgroup" "$WORK/low.txt"'
"${EXPLAIN[@]}" low -o json >"$WORK/low.json" 2>"$WORK/low.err"
j() { jq -r "$1" "$WORK/low.json"; }
ceil_m=$(milli "$(j .ceiling)")
need_m=$(milli "$(j .requestToAvoid)")
wanted_m=$(milli "$(j .wanted)")
ratio=$(j .throttledRatio)
WHY="$(cat "$WORK/low.json" "$WORK/low.err"); limit ${low_m}m; the kernel's ratio $kratio"
check "1b. -o json: throttled (and the kernel counted it in >= 1 % of the periods), ceiling = its limit, source slack-share" \
  eval '[ "$(j .throttled)" = true ] && awk -v r="$ratio" -v k="$kratio" "BEGIN {exit !(r >= 0.01 && k >= 0.01)}" &&
        [ "$ceil_m" = "$low_m" ] && [ "$(j .ceilingSource)" = slack-share ]'
# By the policy on the node as Prometheus had it (S, M from the json): r' gives at least what it
# wanted, r' − 1 does not; and it is above low's 50m, at most what it wanted.
S_m=$(milli "$(j .nodeSlack)") M_m=$(milli "$(j .nodeManaged)")
ceil_of() { # r' -> c(r') of core/throttle.h: the share with r' booked instead of 50m, within r'·10
  local r=$1 s m c
  s=$((S_m - (r - 50))) m=$((M_m - 50 + r)) c=$r
  [ "$s" -gt 0 ] && c=$((r * (m + s) / m))
  [ "$c" -gt $((r * 10)) ] && c=$((r * 10))
  echo "$c"
}
WHY="request ${need_m}m, wanted ${wanted_m}m, S ${S_m}m, M ${M_m}m: c(r') $(ceil_of "$need_m"), c(r'-1) $(ceil_of $((need_m - 1)))"
check "1c. the request to avoid it is above 50m, at most what it wanted, and the least that gives it that" \
  eval '[ "$need_m" -gt 50 ] && [ "$need_m" -le "$wanted_m" ] && [ "$(ceil_of "$need_m")" -ge "$wanted_m" ] &&
        [ "$(ceil_of $((need_m - 1)))" -lt "$wanted_m" ]'

# 2. idle: not throttled.
"${EXPLAIN[@]}" idle >"$WORK/idle.txt" 2>&1
rc=$?
sed 's/^/  | /' "$WORK/idle.txt"
WHY="exit $rc: $(cat "$WORK/idle.txt")"
check "2. explain --prometheus idle: not throttled" \
  eval '[ "$rc" = 0 ] && grep -q ": not throttled" "$WORK/idle.txt" && ! grep -q THROTTLED "$WORK/idle.txt"'

# 3. Refusals, each with its message.
"$HEADROOM" explain -f /dev/null low --prometheus "$PROM" >"$WORK/r1" 2>&1
r1=$?
"$HEADROOM" explain --kubeconfig "$KUBECONFIG" -n "$NS" low --since 1h >"$WORK/r2" 2>&1
r2=$?
"$HEADROOM" explain --kubeconfig "$KUBECONFIG" -n "$NS" low --prometheus "http://127.0.0.1:$(free_port "$PPORT" "$MPORT")" >"$WORK/r3" 2>&1
r3=$?
WHY="-f: $r1 $(cat "$WORK/r1"); --since alone: $r2 $(cat "$WORK/r2"); unreachable: $r3 $(cat "$WORK/r3")"
check "3. refused: --prometheus with -f, --since alone (usage, exit 2); an unreachable Prometheus (exit 1, named)" \
  eval '[ "$r1" = 2 ] && grep -q "not with -f" "$WORK/r1" && [ "$r2" = 2 ] && grep -q "go with --prometheus" "$WORK/r2" &&
        [ "$r3" = 1 ] && grep -q "Prometheus at http://127.0.0.1" "$WORK/r3"'
finish
