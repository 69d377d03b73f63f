#!/usr/bin/env bash
# scale.sh — the controller at scale on the real control plane (design §16):
# from a cold start, how long until every managed pod has its target limit;
# what a quiet steady state costs; and under churn (rollouts and Jobs, a
# steady rate of binds and deletes) the reaction time from bind to resize,
# the writes per scheduling event against the minimum the deadband allows,
# how long a newly bound pod's neighbours keep their stale, too generous
# ceilings (design §11.3), and what the API server spent on us.
#
#   bench/cluster/scale.sh [--nodes 100] [--pods-per-node 30] [--managed-percent 60]
#                  [--quiet-minutes 5] [--churn-minutes 0] [--churn-rate 10]
#                  [--variant NAME=FLAGS]... [--leader-elect] [--max-wait 900] [--keep DIR]
#
# Defaults are the CI-sized goal (100 nodes, 3,000 pods, 1,800
# managed): it prints "limits right" (goal <= 45 s) and the quiet window's
# CPU-seconds (goal <= 0.05). The scale run is e.g. --nodes 1000
# --churn-minutes 4 --quiet-minutes 2.
#
# --variant NAME=FLAGS (repeatable) runs the whole measurement once per
# variant, one after the other in the same run, each on a fresh load, the
# daemon started with FLAGS added (the wire format or list path to compare,
# e.g. --variant proto= --variant json='--protobuf=false --streaming-lists=false');
# the default is one variant, "default" with no flags (the daemon's defaults:
# protobuf and streaming lists).
#
# Per variant:
#  1. load: --nodes fresh kwok nodes (8 CPU) and nodes x --pods-per-node
#     Burstable pods (Deployments of 10, limits twice the requests), of
#     which --managed-percent in managed namespaces; all Running first.
#  2. cold start: `headroom run` (live, clientQPS 50, as the chart's
#     least-privilege identity, FLAGS added) starts; "sync" is the time to
#     /readyz (every informer listed); "limits right" the last resize the
#     API server's audit record shows before the daemon went quiet (no
#     write for 15 s), from the daemon's start. `headroom plan` against the
#     live API then counts the managed pods still outside their deadband
#     (must be 0).
#  3. quiet: --quiet-minutes with no change: the daemon's CPU-seconds,
#     wakeups and writes (must be 0).
#  4. churn (--churn-minutes > 0): every 2 s a Job (pods that kwok
#     completes after 10-30 s, deleted by the TTL controller) and as many
#     rollouts of 10-pod Deployments as the rest of the rate owes:
#     --churn-rate new pods per second in all, in managed namespaces. A
#     watch of every pod (bench/cluster/scale_watch.py, each event stamped on
#     arrival) and a snapshot before it feed bench/cluster/scale_replay.py,
#     which replays the churn through the planner (`headroom node -f`) as a
#     controller that acts after every single scheduling event would: the
#     minimum resizes; and the windows in which a bound pod's neighbours
#     still held ceilings the planner had already shrunk. From the audit
#     record: each newly bound pod's own first resize after its bind
#     (scheduler's create pods/binding): "sent" (its requestReceived) and
#     "spec updated" (its stageTimestamp), p50/p99/max.
# Figures are printed against their goals, not judged (on a shared machine
# they measure the neighbours too); PASS/FAIL lines judge only what must
# hold anywhere: every managed pod reached its target, the quiet window
# wrote nothing, the daemon resized under churn, the replay ran.
# Throughout, a sampler reads the API server's (this cluster's PID, from
# $STATE/pids) and the daemon's CPU ticks and RSS every second: CPU-seconds
# and peak RSS per phase.
#
# Needs a cluster (tests/cluster/cluster.sh up; $HEADROOM_CLUSTER_DIR and
# the ports pick which; its audit policy records the scheduler's binds),
# jq, python3, and build/release/headroom ($HEADROOM_BIN). Metrics port
# $HEADROOM_SCALE_PORT (default: a free one). Deletes what it made; keeps
# its work directory (figures, audit extracts) only with --keep DIR.
# tests/lib/common.sh is written for scripts without -e (its helpers test and fail
# softly): every step that must hold says so with || exit.
set -uo pipefail
# shellcheck source=../../tests/lib/common.sh
. "$(dirname "${BASH_SOURCE[0]}")/../../tests/lib/common.sh"
# shellcheck source=../../tests/lib/bench.sh
. "$(dirname "${BASH_SOURCE[0]}")/../../tests/lib/bench.sh"

nodes=100 per_node=30 managed_pct=60 quiet_min=5 churn_min=0 churn_rate=10 max_wait=900
variants=() elect=() keep=""
usage() { sed -n '/^#   bench\/scale.sh/,/^#  *\[--variant/p' "$0" | sed 's/^# \{0,1\}//'; exit 2; }
while [ $# -gt 0 ]; do
  case $1 in
    --nodes) nodes=$2; shift ;;
    --pods-per-node) per_node=$2; shift ;;
    --managed-percent) managed_pct=$2; shift ;;
    --quiet-minutes) quiet_min=$2; shift ;;
    --churn-minutes) churn_min=$2; shift ;;
    --churn-rate) churn_rate=$2; shift ;;
    --variant) variants+=("$2"); shift ;;
    --leader-elect) elect=(--leader-elect) ;;
    --max-wait) max_wait=$2; shift ;;
    --keep) keep=$2; shift ;;
    -h | --help) usage ;;
    *) echo "scale: unknown option $1" >&2; usage ;;
  esac
  shift
done
[ ${#variants[@]} -gt 0 ] || variants=("default=")
# minutes may be fractions (the CI's small run: --quiet-minutes 0.5)
quiet_s=$(awk -v m="$quiet_min" 'BEGIN {printf "%d", m * 60}') churn_s=$(awk -v m="$churn_min" 'BEGIN {printf "%d", m * 60}')
for v in "${variants[@]}"; do
  case $v in *=*) ;; *) echo "scale: --variant NAME=FLAGS (FLAGS may be empty): $v" >&2; exit 2 ;; esac
done
for t in jq python3; do command -v "$t" >/dev/null || { echo "scale: needs $t" >&2; exit 2; }; done
pods=$((nodes * per_node))
managed=$((pods * managed_pct / 100 / 10 * 10))

MPORT=${HEADROOM_SCALE_PORT:-$(free_port)}
WORK=$(mktemp -d /tmp/headroom-scale.XXXXXX)
USER_NAME=headroom-scale-$S
APISERVER_PID=$(cat "$STATE/pids/kube-apiserver" 2>/dev/null)
PREFIX="" SAMPLER="" WATCHER="" CHURN_NS=()
cleanup() {
  [ -z "$WATCHER" ] || { kill "$WATCHER" 2>/dev/null; wait "$WATCHER" 2>/dev/null; }
  [ -z "$SAMPLER" ] || { kill "$SAMPLER" 2>/dev/null; wait "$SAMPLER" 2>/dev/null; }
  stop_controller TERM
  [ -z "$PREFIX" ] || bench_unload "$PREFIX"
  bench_unconfig
  remove_identity "$USER_NAME"
  if [ -n "$keep" ]; then mkdir -p "$keep" && cp -r "$WORK"/. "$keep"/ && echo "scale: work kept in $keep"; fi
  rm -rf "$WORK"
}
trap cleanup EXIT
trap 'exit 130' INT TERM
require_cluster
[ -n "$APISERVER_PID" ] && [ -r "/proc/$APISERVER_PID/stat" ] ||
  { echo "scale: no kube-apiserver PID in $STATE/pids (is this cluster up?)" >&2; exit 1; }
SCRIPTS=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)

install_identity "$USER_NAME"
[ -n "${USER_KC:-}" ] || { echo "scale: no identity for the controller" >&2; exit 1; }
bench_config --fresh || { echo "scale: cannot make the HeadroomConfig" >&2; exit 1; }
BENCH_MADE_CONFIG=1

# ------------------------------------------------------------- the sampler
# One line a second: epoch, API server ticks and VmRSS kB, daemon ticks and
# VmRSS kB (0 without a daemon). phase NAME marks a phase's start.
sampler() {
  local c
  while :; do
    c=""
    [ -f "$WORK/ctl.pid" ] && c=$(cat "$WORK/ctl.pid")
    echo "$(date +%s.%N) $(cpu_ticks "$APISERVER_PID") $(proc_kb "$APISERVER_PID" VmRSS)" \
      "$( [ -n "$c" ] && cpu_ticks "$c" || echo 0) $( [ -n "$c" ] && proc_kb "$c" VmRSS || echo 0)"
    sleep 1
  done
}
phase() { echo "$(date +%s.%N) $1" >>"$WORK/$VNAME.phases"; }
# phase_cost FROM TO: "apiserver CPU-s, peak RSS MB; daemon CPU-s, peak RSS MB" between two phase marks
phase_cost() { # from-phase to-phase
  awk -v a="$1" -v b="$2" -v hz="$BENCH_HZ" 'FNR == NR { t[$2] = $1; next }
    { if (!(a in t) || !(b in t) || $1 < t[a] || $1 > t[b]) next
      if (n++ == 0) { a0 = $2; c0 = $4 }
      a1 = $2; c1 = $4; if ($3 > ar) ar = $3; if ($5 > cr) cr = $5 }
    END { printf "%.1f %.0f %.2f %.1f\n", (a1 - a0) / hz, ar / 1024, (c1 - c0) / hz, cr / 1024 }' \
    "$WORK/$VNAME.phases" "$WORK/samples"
}
sampler >"$WORK/samples" &
SAMPLER=$!

# ------------------------------------------------------------- churn
TICK=2
per_tick=$((churn_rate * TICK))
job_size=$(((per_tick + 2) / 3))
# The rest of each tick's pods come from rollouts of 10: a rollout is owed
# whenever 10 pods' worth has accumulated, so a rate below 5 pods/s is
# honoured too (before 2026-12-03 every tick rolled at least one
# Deployment, which made --churn-rate 5 about 7 pods/s and 10 about 8.5).
roll_share=$((per_tick - job_size))
mkjob() { # namespace number
  local cpu=$((50 + ($2 % 4) * 50))
  cat <<EOF
apiVersion: batch/v1
kind: Job
metadata: {name: churn-$2, namespace: $1}
spec:
  parallelism: $job_size
  completions: $job_size
  ttlSecondsAfterFinished: 0
  template:
    metadata:
      labels: {app.kubernetes.io/managed-by: mkload, qos: burstable}
      annotations: {kwok.x-k8s.io/complete-after: 10s, kwok.x-k8s.io/complete-jitter: 20s}
    spec:
      restartPolicy: Never
      terminationGracePeriodSeconds: 5
      containers:
      - name: app
        image: kwok.invalid/app:1
        resources:
          requests: {cpu: ${cpu}m, memory: 64Mi}
          limits: {cpu: $((cpu * 2))m, memory: 128Mi}
EOF
}
churn() { # seconds -> prints "jobs rollouts failed"
  local end=$(($(date +%s) + $1)) tick=0 job=0 next=0 failed=0 owed=0 rolls=0 t0 deps ns n_deps
  local -a all
  mapfile -t all < <(k get deployments -A --no-headers -o custom-columns=NS:.metadata.namespace,N:.metadata.name |
    awk -v p="$PREFIX-m-" 'index($1, p) == 1 {print $1 "/" $2}')
  n_deps=${#all[@]}
  [ "$n_deps" -gt 0 ] || { echo "0 0 1"; return; }
  t0=$(date +%s)
  while [ "$(date +%s)" -lt "$end" ]; do
    ns=${all[$((job % n_deps))]%%/*}
    mkjob "$ns" "$job" | k create -f - >/dev/null 2>&1 || failed=$((failed + 1))
    job=$((job + 1))
    owed=$((owed + roll_share))
    while [ "$owed" -ge 10 ]; do
      deps=${all[$next]}
      k -n "${deps%%/*}" rollout restart "deployment/${deps#*/}" >/dev/null 2>&1 || failed=$((failed + 1))
      next=$(((next + 1) % n_deps))
      owed=$((owed - 10)) rolls=$((rolls + 1))
    done
    tick=$((tick + 1))
    local s=$((t0 + tick * TICK - $(date +%s)))
    [ "$s" -le 0 ] || sleep "$s"
  done
  echo "$job $rolls $failed"
}

# ------------------------------------------------------------- one variant
run_variant() { # name flags
  VNAME=$1
  local flags=() t_start t_ready mark mark_churn left
  # shellcheck disable=SC2206 # FLAGS are words, as on a command line
  flags=($2)
  PREFIX=sc-$S-$VNAME
  : >"$WORK/$VNAME.phases"
  echo "scale: [$VNAME] load: $nodes nodes, $pods pods ($managed managed) $(loadavg | sed 's/^/(load average /;s/$/)/')"
  phase load
  bench_load "$PREFIX" "$nodes" "$pods" "$managed" "$max_wait" | sed "s/^/scale: [$VNAME] /"
  [ "${PIPESTATUS[0]}" = 0 ] || { echo "scale: [$VNAME] the load did not come up" >&2; exit 1; }

  # 2. cold start
  mark=$(audit_mark)
  phase start
  t_start=$(date +%s.%N)
  "$HEADROOM" run --kubeconfig "$USER_KC" --namespace kube-headroom "${elect[@]}" "${flags[@]}" \
    --metrics-addr "127.0.0.1:$MPORT" "${PLAIN_METRICS[@]}" --webhook-addr "" >>"$WORK/$VNAME.log" 2>&1 &
  CTL_PID=$!
  echo "$CTL_PID" >"$WORK/ctl.pid"
  wait_until "$max_wait" curl -sf "http://127.0.0.1:$MPORT/readyz" ||
    { echo "scale: [$VNAME] not ready within $max_wait s (log: $WORK/$VNAME.log)" >&2; tail -5 "$WORK/$VNAME.log" >&2; exit 1; }
  t_ready=$(date +%s.%N)
  phase ready
  local ctl_rss_ready
  ctl_rss_ready=$(proc_kb "$CTL_PID" VmRSS)
  quiet_for 15 "$max_wait" "$MPORT" >/dev/null || { echo "scale: [$VNAME] still writing after $max_wait s" >&2; exit 1; }
  phase converged
  audit_since "$mark" "select(.user.username == \"$USER_NAME\" and (.verb == \"patch\" or .verb == \"create\"))" >"$WORK/$VNAME.start.audit"
  local conv
  conv=$(jq -rs --argjson t0 "$t_start" "$JQ_T$JQ_KIND"'
    (map(select(kind == "resize") | .stageTimestamp | t) | max // $t0) as $lr
    | (map(.stageTimestamp | t) | max // $t0) as $la
    | [ (map(select(kind == "resize")) | length), (map(select(kind == "annotation")) | length),
        (map(select(kind == "event")) | length), (($lr - $t0) * 10 | round / 10),
        (($la - $t0) * 10 | round / 10) ] | @tsv' "$WORK/$VNAME.start.audit")
  local n_res n_ann n_ev t_lim t_all
  read -r n_res n_ann n_ev t_lim t_all <<<"$conv"
  left=$("$HEADROOM" plan --kubeconfig "$KUBECONFIG" -A -o name 2>/dev/null | grep -c . || true)
  local sync_s
  sync_s=$(awk -v a="$t_start" -v b="$t_ready" 'BEGIN {printf "%.1f", b - a}')
  read -r api_cpu_sync api_rss_sync _ _ <<<"$(phase_cost start ready)"
  read -r api_cpu_conv api_rss_conv ctl_cpu_conv ctl_rss_conv <<<"$(phase_cost start converged)"
  echo "scale: [$VNAME] sync (start to /readyz): ${sync_s} s; limits right ${t_lim} s after start" \
    "(${n_res} resizes, ${n_ann} annotations, ${n_ev} events); managed pods still outside their deadband: ${left}"
  echo "scale: [$VNAME] daemon: RSS ${ctl_rss_ready} kB at ready, peak ${ctl_rss_conv} MB to converge, ${ctl_cpu_conv} CPU-s to converge"
  echo "scale: [$VNAME] daemon CPU-s by thread, start to converged: $(thread_cpu "$CTL_PID")"
  local lag_p99 lag_max lag_none
  read -r lag_p99 lag_max lag_none <<<"$(annotation_lag "$WORK/$VNAME.start.audit")"
  echo "scale: [$VNAME] every write done ${t_all} s after start; a status annotation apart from its resize:" \
    "p99 ${lag_p99} s, max ${lag_max} s, ${lag_none} resizes without one"
  echo "scale: [$VNAME] API server: ${api_cpu_sync} CPU-s and peak ${api_rss_sync} MB RSS during the sync," \
    "${api_cpu_conv} CPU-s and peak ${api_rss_conv} MB from start to converged"
  WHY="${left} managed pods outside their deadband after the daemon went quiet"
  check "[$VNAME] every managed pod has its target limit (limits right after ${t_lim} s)" [ "$left" = 0 ]

  # 3. quiet
  local q0 w0 k0 q1 w1 k1
  if [ "$quiet_s" -gt 0 ]; then
    # The HeadroomConfig status is the last to settle: a change of its counts waits up to
    # HR_CFGSTATUS_COUNTS_EVERY_S (10 s) and a body not yet echoed by the watch up to 30 s
    # (src/controller/cfgstatus.c), so the window opens after 45 s without any write.
    quiet_for 45 "$max_wait" "$MPORT" >/dev/null || { echo "scale: [$VNAME] still writing after $max_wait s" >&2; exit 1; }
    q0=$(cpu_ticks "$CTL_PID") k0=$(wakeups "$CTL_PID") w0=$(writes)
    phase quiet
    sleep "$quiet_s"
    q1=$(cpu_ticks "$CTL_PID") k1=$(wakeups "$CTL_PID") w1=$(writes)
    phase quiet_end
    read -r api_cpu_q _ _ _ <<<"$(phase_cost quiet quiet_end)"
    echo "scale: [$VNAME] quiet ${quiet_min} min${elect:+ (leader election on)}: $(ticks_s $((q1 - q0))) CPU-s," \
      "$((k1 - k0)) wakeups, $((w1 - w0)) writes; the API server ${api_cpu_q} CPU-s; load average $(loadavg)"
    WHY="$((w1 - w0)) writes with nothing changing"
    check "[$VNAME] a quiet steady state writes nothing" [ $((w1 - w0)) = 0 ]
  fi

  # 4. churn
  if [ "$churn_s" -gt 0 ]; then
    # the snapshot, then every change after it
    {
      k get --raw /api/v1/pods || exit 1
      echo
      k get --raw /api/v1/nodes || exit 1
      echo
      k get --raw /api/v1/namespaces || exit 1
      echo
      k get --raw /api/v1/limitranges || exit 1
      echo
      k get headroomconfig cluster -o json || exit 1
    } >"$WORK/$VNAME.snapshot" || { echo "scale: [$VNAME] no snapshot" >&2; exit 1; }
    local rv
    rv=$(head -c 4096 "$WORK/$VNAME.snapshot" | grep -o '"resourceVersion":"[0-9]*"' | head -1 | grep -o '[0-9]*')
    [ -n "$rv" ] || { echo "scale: [$VNAME] no resourceVersion in the pod list" >&2; exit 1; }
    python3 "$SCRIPTS/scale_watch.py" --kubectl "$KUBECTL" --rv "$rv" --out "$WORK/$VNAME.watch" &
    WATCHER=$!
    wait_until 30 test -s "$WORK/$VNAME.watch.started" || { echo "scale: [$VNAME] the watch did not start" >&2; exit 1; }
    mark_churn=$(audit_mark)
    phase churn
    local churned
    churned=$(churn "$churn_s")
    phase churn_end
    quiet_for 15 "$max_wait" "$MPORT" >/dev/null || echo "scale: [$VNAME] still writing $max_wait s after the churn" >&2
    phase settled
    kill "$WATCHER" 2>/dev/null; wait "$WATCHER" 2>/dev/null; WATCHER=""
    audit_since "$mark_churn" "select((.user.username == \"$USER_NAME\" and (.verb == \"patch\" or .verb == \"create\"))
      or (.user.username == \"system:kube-scheduler\" and .objectRef.subresource == \"binding\"))" >"$WORK/$VNAME.churn.audit"
    local jobs rolls failed
    read -r jobs rolls failed <<<"$churned"
    read -r api_cpu_ch api_rss_ch ctl_cpu_ch ctl_rss_ch <<<"$(phase_cost churn settled)"
    # each newly bound pod's own first resize after its bind
    jq -rs --arg p "$PREFIX-m-" "$JQ_T$JQ_KIND"'
      (map(select(.objectRef.subresource == "binding" and (.objectRef.namespace | startswith($p))))
        | map({key: (.objectRef.namespace + "/" + .objectRef.name), value: (.stageTimestamp | t)}) | from_entries) as $bound
      | map(select(kind == "resize")) | group_by(.objectRef.namespace + "/" + .objectRef.name)[]
      | (.[0].objectRef.namespace + "/" + .[0].objectRef.name) as $k
      | select($bound[$k] != null)
      | map(select((.stageTimestamp | t) > $bound[$k])) | select(length > 0) | min_by(.requestReceivedTimestamp | t)
      | [ (.requestReceivedTimestamp | t) - $bound[$k], (.stageTimestamp | t) - $bound[$k] ] | @tsv' \
      "$WORK/$VNAME.churn.audit" >"$WORK/$VNAME.react"
    cut -f1 "$WORK/$VNAME.react" >"$WORK/$VNAME.sent"
    cut -f2 "$WORK/$VNAME.react" >"$WORK/$VNAME.upd"
    local binds resizes writes_total
    binds=$(jq -s --arg p "$PREFIX-m-" 'map(select(.objectRef.subresource == "binding" and (.objectRef.namespace | startswith($p)))) | length' "$WORK/$VNAME.churn.audit")
    resizes=$(jq -s "$JQ_KIND"'map(select(kind == "resize")) | length' "$WORK/$VNAME.churn.audit")
    writes_total=$(jq -s --arg u "$USER_NAME" 'map(select(.user.username == $u)) | length' "$WORK/$VNAME.churn.audit")
    echo "scale: [$VNAME] churn ${churn_min} min at ${churn_rate} pods/s: ${jobs} Jobs of ${job_size}, ${rolls} rollouts," \
      "${failed} churn requests failed; ${binds} binds in managed namespaces; ${resizes} resizes, ${writes_total} writes in all"
    echo "scale: [$VNAME] bind -> resize sent: p50 $(pct 50 "$WORK/$VNAME.sent") s, p99 $(pct 99 "$WORK/$VNAME.sent") s," \
      "max $(pct 100 "$WORK/$VNAME.sent") s; -> spec updated: p50 $(pct 50 "$WORK/$VNAME.upd") s," \
      "p99 $(pct 99 "$WORK/$VNAME.upd") s, max $(pct 100 "$WORK/$VNAME.upd") s ($(wc -l <"$WORK/$VNAME.react") bound pods resized)"
    echo "scale: [$VNAME] during churn: daemon ${ctl_cpu_ch} CPU-s, peak RSS ${ctl_rss_ch} MB; API server ${api_cpu_ch} CPU-s, peak RSS ${api_rss_ch} MB"
    WHY="no resize during the churn"
    check "[$VNAME] the daemon resized under churn (${resizes})" [ "$resizes" -gt 0 ]
    python3 "$SCRIPTS/scale_replay.py" --headroom "$HEADROOM" --snapshot "$WORK/$VNAME.snapshot" \
      --watch "$WORK/$VNAME.watch" --resizes "$resizes" --work "$WORK/replay-$VNAME" >"$WORK/$VNAME.replay"
    local rrc=$?
    sed "s/^/scale: [$VNAME] /" "$WORK/$VNAME.replay"
    WHY="scale_replay.py exit $rrc"
    check "[$VNAME] the churn replays through the planner" [ "$rrc" = 0 ]
  fi

  local ctl_hwm
  ctl_hwm=$(proc_kb "$CTL_PID" VmHWM)
  phase stop
  read -r _ _ ctl_cpu_all _ <<<"$(phase_cost start stop)"
  echo "scale: [$VNAME] daemon over the whole run: ${ctl_cpu_all} CPU-s, peak RSS (VmHWM) ${ctl_hwm} kB"
  stop_controller TERM
  rm -f "$WORK/ctl.pid"
  bench_unload "$PREFIX"
  PREFIX=""
}

echo "scale: $(nproc) cores, $(awk '/MemTotal/ {printf "%.0f GB", $2 / 1048576}' /proc/meminfo); kube-apiserver PID $APISERVER_PID;" \
  "load average $(loadavg); $(date -u +%FT%TZ)"
for v in "${variants[@]}"; do run_variant "${v%%=*}" "${v#*=}"; done
echo "scale: load average at the end $(loadavg)"
# The cleanup (the HeadroomConfig too) ends before the last line, so whatever starts once
# "N passed, N failed" is printed finds the cluster as it was.
trap - EXIT
cleanup
finish
