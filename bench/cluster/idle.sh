#!/usr/bin/env bash
# idle.sh — what a quiet steady state costs (design §5 "Idle means idle"):
# two builds of `headroom run` side by side on the same converged cluster,
# their CPU-seconds (utime + stime of /proc/PID/stat) and wakeups
# (voluntary_ctxt_switches summed over /proc/PID/task/*/status) over the
# same window, without and with --leader-elect.
#
#   bench/cluster/idle.sh --old BIN [--new BIN] [--nodes 20] [--pods 300] [--minutes 5]
#                 [--election off|on|both]
#
# --new defaults to build/release/headroom ($HEADROOM_BIN). Both daemons run
# at once (live, not dry-run: the same decisions, so the same writes, then
# none), as the cluster's admin; with --leader-elect each holds its own Lease
# (--namespace idle-old-PID / idle-new-PID), so both are leaders and both
# renew. The script creates --nodes kwok nodes with --pods managed pods
# (Deployments of 10), a HeadroomConfig (dryRun false) when none exists,
# starts the daemons, waits until neither has written for 20 s (converged),
# then measures --minutes and prints one line per daemon and a ratio. It
# deletes what it created. The machine's load average is printed with the
# figures: on a loaded machine a wakeup costs more.
#
# Needs a cluster (tests/cluster/cluster.sh up; $HEADROOM_CLUSTER_DIR and the
# ports pick which). Metrics ports $HEADROOM_IDLE_PORT and the next one
# (default: two free ones, free_port).
# tests/lib/common.sh is written for scripts without -e (its helpers test and fail softly),
# as bench/cluster/soak.sh is: every step that must hold says so with || exit.
set -uo pipefail
# shellcheck source=../../tests/lib/common.sh
. "$(dirname "${BASH_SOURCE[0]}")/../../tests/lib/common.sh"
# shellcheck source=../../tests/lib/bench.sh
. "$(dirname "${BASH_SOURCE[0]}")/../../tests/lib/bench.sh"

old="" new=$HEADROOM nodes=20 pods=300 minutes=5 election=both
usage() { sed -n '/^#   bench\/idle.sh/,/^#  *\[--election/p' "$0" | sed 's/^# \{0,1\}//'; exit 2; }
while [ $# -gt 0 ]; do
  case $1 in
    --old) old=$2; shift ;;
    --new) new=$2; shift ;;
    --nodes) nodes=$2; shift ;;
    --pods) pods=$2; shift ;;
    --minutes) minutes=$2; shift ;;
    --election) election=$2; shift ;;
    -h | --help) usage ;;
    *) echo "idle: unknown option $1" >&2; usage ;;
  esac
  shift
done
[ -n "$old" ] || { echo "idle: --old BIN is required (e.g. a build of main)" >&2; exit 2; }
for b in "$old" "$new"; do [ -x "$b" ] || { echo "idle: no executable at $b" >&2; exit 2; }; done
case $election in off | on | both) ;; *) echo "idle: --election off|on|both" >&2; exit 2 ;; esac

PORT=${HEADROOM_IDLE_PORT:-$(free_port)}
if [ -n "${HEADROOM_IDLE_PORT:-}" ]; then PORT2=$((PORT + 1)); else PORT2=$(free_port "$PORT"); fi
WORK=$(mktemp -d /tmp/headroom-idle.XXXXXX)
PREFIX=idle-$S
PIDS=()
stop_all() {
  local p
  for p in "${PIDS[@]}"; do kill -TERM "$p" 2>/dev/null || true; done
  for p in "${PIDS[@]}"; do wait "$p" 2>/dev/null || true; done
  PIDS=()
}
cleanup() {
  stop_all
  bench_unload "$PREFIX"
  k delete namespace "idle-old-$S" "idle-new-$S" --ignore-not-found --wait=false >/dev/null 2>&1 || true
  bench_unconfig
  rm -rf "$WORK"
}
trap cleanup EXIT
trap 'exit 130' INT TERM
require_cluster

bench_config || { echo "idle: cannot make the HeadroomConfig" >&2; exit 1; }
k create namespace "idle-old-$S" >/dev/null || exit 1
k create namespace "idle-new-$S" >/dev/null || exit 1
echo "idle: creating ${nodes} nodes and ${pods} managed pods"
bench_load "$PREFIX" "$nodes" "$pods" || { echo "idle: the load did not come up" >&2; exit 1; }


run_pair() { # election on|off
  local flags=() i bin name port pid last_w now_w quiet t0 t1
  local -a cpu0 wk0 names ports
  names=(old new) ports=("$PORT" "$PORT2")
  for i in 0 1; do
    name=${names[$i]} port=${ports[$i]}
    bin=$old; [ "$name" = new ] && bin=$new
    flags=()
    [ "$1" = on ] && flags=(--leader-elect)
    nice "$bin" run --kubeconfig "$KUBECONFIG" --namespace "idle-$name-$S" "${flags[@]}" \
      --metrics-addr "127.0.0.1:$port" "${PLAIN_METRICS[@]}" --webhook-addr "" \
      >"$WORK/$name-$1.log" 2>&1 &
    PIDS+=($!)
  done
  for i in 0 1; do
    wait_until 60 curl -sf "http://127.0.0.1:${ports[$i]}/readyz" ||
      { echo "idle: the ${names[$i]} daemon is not ready (log: $WORK/${names[$i]}-$1.log)" >&2; tail -5 "$WORK/${names[$i]}-$1.log" >&2; exit 1; }
  done
  # Converged: neither daemon wrote for 20 s (and at least 30 s since start).
  t0=$(date +%s) quiet=0 last_w=-1
  while [ "$quiet" -lt 20 ]; do
    sleep 5
    now_w=$(($(writes "${ports[0]}") + $(writes "${ports[1]}")))
    if [ "$now_w" = "$last_w" ] && [ $(($(date +%s) - t0)) -ge 30 ]; then quiet=$((quiet + 5)); else quiet=0; fi
    last_w=$now_w
    [ $(($(date +%s) - t0)) -lt 600 ] || { echo "idle: no quiet 20 s within 10 minutes" >&2; exit 1; }
  done
  echo "idle: election $1: converged after $(($(date +%s) - t0)) s ($last_w writes by both); measuring ${minutes} min"
  for i in 0 1; do cpu0[$i]=$(cpu_ticks "${PIDS[$i]}") wk0[$i]=$(wakeups "${PIDS[$i]}"); done
  local w0=$last_w
  sleep $((minutes * 60))
  local load
  load=$(cut -d' ' -f1-3 /proc/loadavg)
  now_w=$(($(writes "${ports[0]}") + $(writes "${ports[1]}")))
  local cpu=() wk=()
  for i in 0 1; do
    cpu[$i]=$(($(cpu_ticks "${PIDS[$i]}") - cpu0[i]))
    wk[$i]=$(($(wakeups "${PIDS[$i]}") - wk0[i]))
  done
  printf 'idle: %-4s %-9s %8s %14s %12s\n' binary election CPU-s "wakeups" "wakeups/s"
  for i in 0 1; do
    printf 'idle: %-4s %-9s %8s %14s %12s\n' "${names[$i]}" "$1" \
      "$(ticks_s "${cpu[$i]}")" "${wk[$i]}" \
      "$(awk -v w="${wk[$i]}" -v s=$((minutes * 60)) 'BEGIN {printf "%.1f", w / s}')"
  done
  echo "idle: election $1: ${minutes} quiet minutes, writes during the window: $((now_w - w0)); load average ${load}" \
    "(CPU-s resolution 1/${BENCH_HZ} s)"
  stop_all
}

[ "$election" = on ] || run_pair off
[ "$election" = off ] || run_pair on
