#!/usr/bin/env bash
# sidebyside.sh — our controller and any second one through the same load, each alone on a fresh
# cluster, and the side-by-side table from the API server's audit record and /proc.
#
#   bench/cluster/sidebyside.sh --other-cmd 'COMMAND' [--other-crd FILE] [--other-name NAME]
#                  [--nodes 100] [--pods-per-node 30] [--managed-percent 60] [--quiet-minutes 5]
#                  [--idle-seconds 20] [--ours-flags 'FLAGS'] [--max-wait 900] [--no-fresh] [--keep DIR]
#
# COMMAND runs the second controller (a shell command line, run with `exec`: its PID is the
# controller's); $KUBECONFIG in it is a kubeconfig of its own user (system:masters: whatever RBAC
# it needs), $HR_OTHER_PORT a free port it may use. FILE is its HeadroomConfig CRD (default ours;
# a HeadroomConfig "cluster" with spec.dryRun false is made for each). Ours is $HEADROOM_BIN run
# with the chart's least-privilege identity, --webhook-addr "" and FLAGS. Neither webhook is
# registered: every limit is a resize.
#
# Per controller, on a cluster made afresh (tests/cluster/cluster.sh down and up, with
# $HEADROOM_CLUSTER_DIR; --no-fresh: the one that runs, loaded afresh): the load (bench_load:
# --nodes kwok nodes, nodes x --pods-per-node pods, --managed-percent of them managed), the API
# server's idle rate over --idle-seconds, then the controller starts; it has converged when its
# user has not written for 15 s (the audit record). Figures, a sampler reading /proc once a
# second: RSS after convergence; CPU-s from the start until the last resize ("limits right") and
# until the last write (resizes, status annotations, events); those two times; the API server's
# CPU-s from the start to the last write, and net of its idle rate; the quiet window's CPU-s; the
# reaction to a neighbour (20 pods bound after the quiet window: the median from each bind to its
# pod's first resize sent); the writes to converge by kind; CPU per write; and how far apart a
# status annotation and its resize were (annotation_lag, tests/lib/bench.sh).
#
# A cluster is taken down and up here: the CI never runs it (bench/RESULTS.md says how). Needs a
# cluster up first, jq. Keeps its work directory (samples, audit extracts, logs) with --keep DIR.
set -uo pipefail
# shellcheck source=../../tests/lib/common.sh
. "$(dirname "${BASH_SOURCE[0]}")/../../tests/lib/common.sh"
# shellcheck source=../../tests/lib/bench.sh
. "$(dirname "${BASH_SOURCE[0]}")/../../tests/lib/bench.sh"

nodes=100 per_node=30 managed_pct=60 quiet_min=5 idle_s=20 max_wait=900 fresh=1 keep=""
other_cmd="" other_crd=$CRD_FILE other_name=other ours_flags=""
usage() { sed -n '/^#   bench\/cluster\/sidebyside.sh/,/^#  *\[--idle-seconds/p' "$0" | sed 's/^# \{0,1\}//'; exit 2; }
while [ $# -gt 0 ]; do
  case $1 in
    --other-cmd) other_cmd=$2; shift ;;
    --other-crd) other_crd=$2; shift ;;
    --other-name) other_name=$2; shift ;;
    --ours-flags) ours_flags=$2; shift ;;
    --nodes) nodes=$2; shift ;;
    --pods-per-node) per_node=$2; shift ;;
    --managed-percent) managed_pct=$2; shift ;;
    --quiet-minutes) quiet_min=$2; shift ;;
    --idle-seconds) idle_s=$2; shift ;;
    --max-wait) max_wait=$2; shift ;;
    --no-fresh) fresh=0 ;;
    --keep) keep=$2; shift ;;
    -h | --help) usage ;;
    *) echo "sidebyside: unknown option $1" >&2; usage ;;
  esac
  shift
done
[ -n "$other_cmd" ] || { echo "sidebyside: --other-cmd is needed" >&2; usage; }
[ -f "$other_crd" ] || { echo "sidebyside: no CRD file $other_crd" >&2; exit 2; }
command -v jq >/dev/null || { echo "sidebyside: needs jq" >&2; exit 2; }
quiet_s=$(awk -v m="$quiet_min" 'BEGIN {printf "%d", m * 60}')
pods=$((nodes * per_node))
managed=$((pods * managed_pct / 100 / 10 * 10))
WORK=$(mktemp -d /tmp/headroom-sidebyside.XXXXXX)
PREFIX=sbs-$S SAMPLER=""
cleanup() {
  [ -z "$SAMPLER" ] || { kill "$SAMPLER" 2>/dev/null; wait "$SAMPLER" 2>/dev/null; }
  stop_controller TERM
  if [ -n "$keep" ]; then mkdir -p "$keep" && cp -r "$WORK"/. "$keep"/ && echo "sidebyside: work kept in $keep"; fi
  rm -rf "$WORK"
}
trap cleanup EXIT
trap 'exit 130' INT TERM

# One line a second: epoch, API server ticks, controller ticks and VmRSS kB.
sampler() { # apiserver-pid controller-pid
  while :; do
    echo "$(date +%s.%N) $(cpu_ticks "$1") $(cpu_ticks "$2") $(proc_kb "$2" VmRSS)"
    sleep 1
  done
}
# at T FIELD: FIELD (2 API server ticks, 3 controller ticks) of the first sample at or after T
at() { awk -v t="$1" -v f="$2" '$1 >= t {print $f; found = 1; exit} {last = $f} END {if (!found) print last}' "$WORK/$NAME.samples"; }
# The writes (patch, create, update) of USER after MARK, as the audit record has them so far.
user_writes() { # mark user
  tail -n +"$(($1 + 1))" "$AUDIT" | grep -F "\"username\":\"$2\"" | grep -cE '"verb":"(patch|create|update)"'
}
# Until USER has not written for SECONDS (and wrote), at most LIMIT s; exit 1 on the limit.
audit_quiet_for() { # seconds limit mark user
  local last=-1 now quiet=0 end=$(($(date +%s) + $2))
  while [ "$quiet" -lt "$1" ]; do
    sleep 1
    now=$(user_writes "$3" "$4")
    if [ "$now" = "$last" ] && [ "$now" -gt 0 ]; then quiet=$((quiet + 1)); else quiet=0; fi
    last=$now
    [ "$(date +%s)" -lt "$end" ] || return 1
  done
}

run_one() { # name kind(ours|other) crd
  NAME=$1
  local kind=$2 crd=$3 user kc api t0 mark i0 i1 a0 a1 t_idle
  if [ "$fresh" = 1 ]; then
    "$CLUSTER" down >/dev/null 2>&1
    "$CLUSTER" up >"$WORK/$NAME.cluster.log" 2>&1 || { echo "sidebyside: [$NAME] cluster up failed" >&2; tail -5 "$WORK/$NAME.cluster.log" >&2; exit 1; }
  fi
  require_cluster
  api=$(cat "$STATE/pids/kube-apiserver")
  install_crd "$crd"
  user=headroom-sbs-$NAME-$S
  if [ "$kind" = ours ]; then
    install_identity "$user"
    kc=$USER_KC
  else
    kc=$("$CLUSTER" user-kubeconfig "$user" system:masters)
  fi
  install_crd "$crd" # (install_identity applied ours)
  k delete headroomconfig cluster --ignore-not-found >/dev/null 2>&1
  printf 'apiVersion: kube-headroom.dev/v1alpha1\nkind: HeadroomConfig\nmetadata: {name: cluster}\nspec: {dryRun: false}\n' |
    k create -f - >/dev/null || { echo "sidebyside: [$NAME] no HeadroomConfig" >&2; exit 1; }
  echo "sidebyside: [$NAME] load: $nodes nodes, $pods pods ($managed managed); load average $(loadavg)"
  bench_load "$PREFIX" "$nodes" "$pods" "$managed" "$max_wait" | sed "s/^/sidebyside: [$NAME] /"
  [ "${PIPESTATUS[0]}" = 0 ] || { echo "sidebyside: [$NAME] the load did not come up" >&2; exit 1; }
  sleep 5
  i0=$(cpu_ticks "$api") t_idle=$EPOCHREALTIME
  sleep "$idle_s"
  i1=$(cpu_ticks "$api")
  local idle_rate
  idle_rate=$(awk -v a="$i0" -v b="$i1" -v t0="$t_idle" -v t1="$EPOCHREALTIME" -v hz="$BENCH_HZ" 'BEGIN {printf "%.4f", (b - a) / hz / (t1 - t0)}')

  mark=$(audit_mark)
  t0=$EPOCHREALTIME
  a0=$(cpu_ticks "$api")
  if [ "$kind" = ours ]; then
    local port
    port=$(free_port)
    # shellcheck disable=SC2086 # FLAGS are words, as on a command line
    "$HEADROOM" run --kubeconfig "$kc" --namespace kube-headroom --metrics-addr "127.0.0.1:$port" \
      "${PLAIN_METRICS[@]}" --webhook-addr "" $ours_flags >"$WORK/$NAME.log" 2>&1 &
  else
    KUBECONFIG=$kc HR_OTHER_PORT=$(free_port) bash -c "exec $other_cmd" >"$WORK/$NAME.log" 2>&1 &
  fi
  CTL_PID=$!
  sampler "$api" "$CTL_PID" >"$WORK/$NAME.samples" &
  SAMPLER=$!
  audit_quiet_for 15 "$max_wait" "$mark" "$user" || { echo "sidebyside: [$NAME] still writing (or never wrote) after $max_wait s" >&2; tail -5 "$WORK/$NAME.log" >&2; exit 1; }
  local rss q0 q1 mark_r
  rss=$(proc_kb "$CTL_PID" VmRSS)
  audit_since "$mark" "select(.user.username == \"$user\" and (.verb | test(\"^(patch|create|update)$\")))" >"$WORK/$NAME.start.audit"
  # quiet
  q0=$(cpu_ticks "$CTL_PID")
  sleep "$quiet_s"
  q1=$(cpu_ticks "$CTL_PID")
  # reaction: 20 pods bound next to the managed ones
  mark_r=$(audit_mark)
  "$ROOT/tests/cluster/mkload.sh" --nodes 0 --node-prefix "$PREFIX" --cpu 8 --replicas 10 --mix 1:0:0 \
    --sidecar-every 0 --workloads 2 --namespaces 1 --managed --ns-prefix "$PREFIX-r" --wait 120 >/dev/null ||
    echo "sidebyside: [$NAME] the reaction pods did not all run" >&2
  audit_quiet_for 10 120 "$mark_r" "$user" || echo "sidebyside: [$NAME] still writing after the reaction pods" >&2
  audit_since "$mark_r" "select((.user.username == \"$user\" and .objectRef.subresource == \"resize\")
    or (.user.username == \"system:kube-scheduler\" and .objectRef.subresource == \"binding\"))" >"$WORK/$NAME.react.audit"
  kill "$SAMPLER" 2>/dev/null; wait "$SAMPLER" 2>/dev/null; SAMPLER=""
  stop_controller TERM
  "$ROOT/tests/cluster/mkload.sh" --delete --ns-prefix "$PREFIX-r" --node-prefix "$PREFIX-none" >/dev/null 2>&1
  bench_unload "$PREFIX"
  k delete headroomconfig cluster --ignore-not-found >/dev/null 2>&1
  [ "$kind" != ours ] || remove_identity "$user"

  local n_res n_ann n_ev n_all t_lim t_all
  read -r n_res n_ann n_ev n_all t_lim t_all <<<"$(jq -rs --argjson t0 "$t0" "$JQ_T$JQ_KIND"'
    (map(select(kind == "resize") | .stageTimestamp | t) | max // $t0) as $lr
    | (map(.stageTimestamp | t) | max // $t0) as $la
    | [ (map(select(kind == "resize")) | length), (map(select(kind == "annotation")) | length),
        (map(select(kind == "event")) | length), length, $lr, $la ] | @tsv' "$WORK/$NAME.start.audit")"
  local react
  react=$(jq -rs --arg p "$PREFIX-r-" "$JQ_T"'
    (map(select(.objectRef.subresource == "binding" and (.objectRef.namespace | startswith($p))))
      | map({key: (.objectRef.namespace + "/" + .objectRef.name), value: (.stageTimestamp | t)}) | from_entries) as $b
    | [ map(select(.objectRef.subresource == "resize")) | group_by(.objectRef.namespace + "/" + .objectRef.name)[]
        | (.[0].objectRef.namespace + "/" + .[0].objectRef.name) as $k | select($b[$k] != null)
        | map(.requestReceivedTimestamp | t) | map(select(. > $b[$k])) | select(length > 0) | min - $b[$k] ]
    | sort | if length == 0 then "-" else (.[(length - 1) / 2 | floor] + .[length / 2 | floor]) / 2 * 100 | round / 100 end' \
    "$WORK/$NAME.react.audit")
  local lag_p99 lag_max lag_none
  read -r lag_p99 lag_max lag_none <<<"$(annotation_lag "$WORK/$NAME.start.audit")"
  local c0 cl ca al
  c0=$(at "$t0" 3) cl=$(at "$t_lim" 3) ca=$(at "$t_all" 3) al=$(at "$t_all" 2)
  a1=${al:-$a0}
  awk -v n="$NAME" -v rss="$rss" -v cl=$((cl - c0)) -v ca=$((ca - c0)) -v tl="$t_lim" -v ta="$t_all" -v t0="$t0" \
    -v api=$((a1 - a0)) -v idle="$idle_rate" -v q=$((q1 - q0)) -v r="$react" -v w="$n_all" -v wr="$n_res" \
    -v wa="$n_ann" -v we="$n_ev" -v hz="$BENCH_HZ" -v lp="$lag_p99" -v lm="$lag_max" -v ln="$lag_none" 'BEGIN {
      printf "%s %.1f %.2f %.2f %.1f %.1f %.1f %.1f %.2f %s %d %d %d %d %.3f %s %s %d\n", n, rss / 1024, cl / hz, ca / hz,
        tl - t0, ta - t0, api / hz, api / hz - idle * (ta - t0), q / hz, r, w, wr, wa, we, (w ? ca / hz / w * 1000 : 0),
        lp, lm, ln
    }' >>"$WORK/figures"
  echo "sidebyside: [$NAME] $(tail -1 "$WORK/figures")"
}

echo "sidebyside: $(nproc) cores; load average $(loadavg); $(date -u +%FT%TZ)"
run_one ours ours "$CRD_FILE"
run_one "$other_name" other "$other_crd"

# The table: one row a figure, a column each, and other/ours.
awk -v qm="$quiet_min" '{for (i = 1; i <= NF; i++) v[NR, i] = $i} END {
  split("resident memory after convergence (MB)|CPU-s until every limit is right|CPU-s until every write is done|" \
    "time until every limit is right (s)|time until every write is done (s)|API server CPU-s, start to the last write|" \
    "the same, net of its idle rate|quiet " qm " minutes, CPU-s|reaction to a neighbour, median first resize (s)|" \
    "writes to converge|of them resizes|status annotations|events|CPU per write (ms)|" \
    "status annotation apart from its resize, p99 (s)|the same, max (s)|resizes without an annotation", row, "|")
  printf "| figure | %s | %s | %s/%s |\n|---|---|---|---|\n", v[1, 1], v[2, 1], v[2, 1], v[1, 1]
  for (i = 1; i <= 17; i++) {
    a = v[1, i + 1]; b = v[2, i + 1]
    printf "| %s | %s | %s | %s |\n", row[i], a, b, (a + 0 > 0 && b != "-" ? sprintf("%.2f", b / a) : "-")
  }
}' "$WORK/figures"
echo "sidebyside: load average at the end $(loadavg)"
