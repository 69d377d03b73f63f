#!/usr/bin/env bash
# synccost.sh — what the daemon's initial sync costs the API server and etcd,
# per list path (the goal: protobuf + streaming list at most half of JSON +
# paginated LIST's API server CPU during the sync; design §5 "Wire format").
#
#   bench/cluster/synccost.sh [--nodes 100] [--pods-per-node 30] [--rounds 10]
#                     [--idle-seconds 3] [--variant NAME=FLAGS]... [--keep DIR]
#
# bench/cluster/scale.sh samples the API server once a second around one sync of
# 1-2 s: too coarse to judge. Here the sync is repeated: --rounds rounds,
# each starting the daemon once per variant (the order rotated every round,
# A B / B A, so the machine's load hits every variant alike), on one load of
# --nodes kwok nodes and nodes x --pods-per-node pods in plain (unmanaged)
# namespaces, the daemon --dry-run: it lists everything and has nothing to
# write (its writes are counted and must stay 0). For each start the API
# server's and etcd's utime+stime (/proc/PID/stat, clock ticks of 10 ms)
# are read right before `headroom run` is started and right when its
# /readyz answers (every informer listed; polled every 10 ms); the daemon
# is then stopped and, 1 s later, an idle window of --idle-seconds with no
# daemon measures what the API server burns anyway (kwok's heartbeats),
# as a rate: each sync's figure is its ticks minus that rate (over every
# idle window of the run) times its duration. The API server's VmRSS is
# read on every poll of /readyz (10 ms): peak during the syncs (VmHWM
# cannot be reset; the peak is what it reached within this run).
#
# Prints per variant: the sync's duration, the API server's and etcd's
# CPU-s net of idle (median and total over the rounds), the API server's
# peak RSS; then the ratio of the API server's medians and totals to the
# first variant. Default variants: proto (the default: protobuf + streaming
# lists) and json ('--protobuf=false --streaming-lists=false'). Also, from
# the API server's /metrics (read outside the measured windows), the bytes
# it sent per variant: the LIST responses and the watch events; and its
# write system calls during the sync (/proc/PID/io syscw: sockets, the
# audit log), which tell many small writes from few large ones.
#
# PASS/FAIL judges only what must hold anywhere: every start got ready and
# the daemon wrote nothing; the ratio is printed against its goal, not
# judged (on a shared machine it measures the neighbours too).
#
# Needs a cluster (tests/cluster/cluster.sh up), jq, and build/release/headroom
# ($HEADROOM_BIN). Metrics port $HEADROOM_SYNCCOST_PORT (default: a free one).
# Deletes what it made; keeps its work directory only with --keep DIR.
set -uo pipefail
# shellcheck source=../../tests/lib/common.sh
. "$(dirname "${BASH_SOURCE[0]}")/../../tests/lib/common.sh"
# shellcheck source=../../tests/lib/bench.sh
. "$(dirname "${BASH_SOURCE[0]}")/../../tests/lib/bench.sh"

nodes=100 per_node=30 rounds=10 idle_s=3 variants=() keep=""
usage() { sed -n '/^#   bench\/synccost.sh/,/^#  *\[--idle-seconds/p' "$0" | sed 's/^# \{0,1\}//'; exit 2; }
while [ $# -gt 0 ]; do
  case $1 in
    --nodes) nodes=$2; shift ;;
    --pods-per-node) per_node=$2; shift ;;
    --rounds) rounds=$2; shift ;;
    --idle-seconds) idle_s=$2; shift ;;
    --variant) variants+=("$2"); shift ;;
    --keep) keep=$2; shift ;;
    -h | --help) usage ;;
    *) echo "synccost: unknown option $1" >&2; usage ;;
  esac
  shift
done
[ ${#variants[@]} -gt 0 ] || variants=("proto=" "json=--protobuf=false --streaming-lists=false")
for v in "${variants[@]}"; do
  case $v in *=*) ;; *) echo "synccost: --variant NAME=FLAGS (FLAGS may be empty): $v" >&2; exit 2 ;; esac
done
command -v jq >/dev/null || { echo "synccost: needs jq" >&2; exit 2; }
pods=$((nodes * per_node))

MPORT=${HEADROOM_SYNCCOST_PORT:-$(free_port)}
WORK=$(mktemp -d /tmp/headroom-synccost.XXXXXX)
USER_NAME=headroom-synccost-$S
PREFIX=sy-$S
APISERVER_PID=$(cat "$STATE/pids/kube-apiserver" 2>/dev/null)
ETCD_PID=$(cat "$STATE/pids/etcd" 2>/dev/null)
cleanup() {
  [ ! -s "$WORK/ctl.pid" ] || { kill "$(cat "$WORK/ctl.pid")" 2>/dev/null; rm -f "$WORK/ctl.pid"; }
  bench_unload "$PREFIX"
  remove_identity "$USER_NAME"
  if [ -n "$keep" ]; then mkdir -p "$keep" && cp -r "$WORK"/. "$keep"/ && echo "synccost: work kept in $keep"; fi
  rm -rf "$WORK"
}
trap cleanup EXIT
trap 'exit 130' INT TERM
require_cluster
for p in "$APISERVER_PID" "$ETCD_PID"; do
  [ -n "$p" ] && [ -r "/proc/$p/stat" ] ||
    { echo "synccost: no kube-apiserver or etcd PID in $STATE/pids (is this cluster up?)" >&2; exit 1; }
done
install_identity "$USER_NAME"
[ -n "${USER_KC:-}" ] || { echo "synccost: no identity for the daemon" >&2; exit 1; }

echo "synccost: $(nproc) cores, $(awk '/MemTotal/ {printf "%.0f GB", $2 / 1048576}' /proc/meminfo);" \
  "kube-apiserver PID $APISERVER_PID, etcd PID $ETCD_PID; load average $(loadavg); $(date -u +%FT%TZ)"
echo "synccost: load: $nodes nodes, $pods pods in plain namespaces"
t_load=$(now_ms)
bench_load "$PREFIX" "$nodes" "$pods" 0 600 >/dev/null || { echo "synccost: the load did not come up" >&2; exit 1; }
echo "synccost: $(k get pods -A --no-headers --field-selector status.phase=Running 2>/dev/null | grep -c "^$PREFIX-u-")" \
  "pods Running after $((($(now_ms) - t_load) / 1000)) s"

# ------------------------------------------------------------- one start
# rss_kb PID: VmRSS without a fork (read on every poll).
rss_kb() {
  local k v _
  while read -r k v _; do [ "$k" = VmRSS: ] && { echo "$v"; return; }; done <"/proc/$1/status"
}
# sync_once FLAGS...: starts the daemon, waits for /readyz, stops it; prints
# "seconds api_ticks etcd_ticks api_peak_rss_kb writes api_write_calls" (exit 1: not ready in 120 s).
sync_once() {
  local t0 t1 a0 a1 e0 e1 s0 s1 peak=0 r end w
  s0=$(io_count "$APISERVER_PID" syscw)
  a0=$(cpu_ticks "$APISERVER_PID") e0=$(cpu_ticks "$ETCD_PID") t0=$EPOCHREALTIME
  "$HEADROOM" run --kubeconfig "$USER_KC" --namespace kube-headroom --dry-run "$@" \
    --metrics-addr "127.0.0.1:$MPORT" "${PLAIN_METRICS[@]}" --webhook-addr "" >>"$WORK/daemon.log" 2>&1 &
  CTL_PID=$!
  echo "$CTL_PID" >"$WORK/ctl.pid" # (this runs in $(...): the EXIT trap reads it from there)
  end=$(($(date +%s) + 120))
  until curl -sf -o /dev/null --max-time 1 "http://127.0.0.1:$MPORT/readyz"; do
    r=$(rss_kb "$APISERVER_PID") && [ "${r:-0}" -le "$peak" ] || peak=$r
    [ "$(date +%s)" -lt "$end" ] || { stop_controller TERM; rm -f "$WORK/ctl.pid"; return 1; }
    sleep 0.01
  done
  a1=$(cpu_ticks "$APISERVER_PID") e1=$(cpu_ticks "$ETCD_PID") t1=$EPOCHREALTIME
  s1=$(io_count "$APISERVER_PID" syscw)
  r=$(rss_kb "$APISERVER_PID") && [ "${r:-0}" -le "$peak" ] || peak=$r
  w=$(writes)
  stop_controller TERM
  rm -f "$WORK/ctl.pid"
  echo "$(awk -v a="$t0" -v b="$t1" 'BEGIN {printf "%.3f", b - a}') $((a1 - a0)) $((e1 - e0)) $peak $w $((s1 - s0))"
}
# idle_once: ticks of the API server and etcd over --idle-seconds with no daemon: "seconds api etcd"
idle_once() {
  local t0 t1 a0 a1 e0 e1
  a0=$(cpu_ticks "$APISERVER_PID") e0=$(cpu_ticks "$ETCD_PID") t0=$EPOCHREALTIME
  sleep "$idle_s"
  a1=$(cpu_ticks "$APISERVER_PID") e1=$(cpu_ticks "$ETCD_PID") t1=$EPOCHREALTIME
  echo "$(awk -v a="$t0" -v b="$t1" 'BEGIN {printf "%.3f", b - a}') $((a1 - a0)) $((e1 - e0))"
}
# sent_bytes: "LIST-response-bytes watch-event-bytes" the API server has sent so far (all clients)
sent_bytes() {
  k get --raw /metrics 2>/dev/null | awk '
    /^apiserver_response_sizes_sum[{]/ && /verb="LIST"/ {l += $2}
    /^apiserver_watch_events_sizes_sum[{]/ {w += $2}
    END {printf "%.0f %.0f\n", l, w}'
}

# A first start, not measured: the client's and the API server's caches warm, and
# whatever a first dry run records is recorded.
echo "synccost: warm-up start (not measured): $(sync_once || echo "not ready")"
sleep 1
nv=${#variants[@]}
for r in $(seq 1 "$rounds"); do
  for i in $(seq 0 $((nv - 1))); do
    v=${variants[$(((i + r) % nv))]} name=${v%%=*}
    # shellcheck disable=SC2206 # FLAGS are words, as on a command line
    flags=(${v#*=})
    read -r lb0 wb0 <<<"$(sent_bytes)"
    out=$(sync_once "${flags[@]}") || {
      fail "[$name] round $r: the daemon got ready" "not within 120 s; the log's tail:"
      tail -5 "$WORK/daemon.log" >&2
      finish
      exit 1
    }
    read -r lb1 wb1 <<<"$(sent_bytes)"
    read -r sd sa se sp sw sc <<<"$out"
    echo "$name $sd $sa $se $sp $sw $((lb1 - lb0)) $((wb1 - wb0)) $sc" >>"$WORK/syncs"
    sleep 1
    idle_once >>"$WORK/idle"
  done
  echo "synccost: round $r/$rounds done; load average $(loadavg)"
done

# ------------------------------------------------------------- figures
read -r idle_t idle_a idle_e <<<"$(awk '{t += $1; a += $2; e += $3} END {printf "%.3f %d %d", t, a, e}' "$WORK/idle")"
echo "synccost: idle: $(awk -v t="$idle_t" -v a="$idle_a" -v e="$idle_e" -v hz="$BENCH_HZ" 'BEGIN {
  printf "API server %.3f CPU-s/s, etcd %.3f CPU-s/s (over %.0f s without a daemon)", a / hz / t, e / hz / t, t}')"
# net FIELD NAME: per start of variant NAME, ticks of FIELD (3 API server, 4 etcd) minus the idle rate x duration, in CPU-s
net() {
  local c=$idle_e
  [ "$1" != 3 ] || c=$idle_a
  awk -v f="$1" -v n="$2" -v t="$idle_t" -v c="$c" -v hz="$BENCH_HZ" \
    '$1 == n {printf "%.3f\n", ($f - c / t * $2) / hz}' "$WORK/syncs"
}
med() { sort -g | awk '{v[NR] = $1} END {if (!NR) {print "-"; exit} printf "%.3f", NR % 2 ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2}'; }
sum() { awk '{s += $1} END {printf "%.2f", s}'; }
first="" fmed="" fsum=""
bad=0
for v in "${variants[@]}"; do
  name=${v%%=*}
  n=$(awk -v n="$name" '$1 == n' "$WORK/syncs" | wc -l)
  dmed=$(awk -v n="$name" '$1 == n {print $2}' "$WORK/syncs" | med)
  amed=$(net 3 "$name" | med) asum=$(net 3 "$name" | sum)
  emed=$(net 4 "$name" | med) esum=$(net 4 "$name" | sum)
  peak=$(awk -v n="$name" '$1 == n && $5 > p {p = $5} END {printf "%.0f", p / 1024}' "$WORK/syncs")
  wr=$(awk -v n="$name" '$1 == n {s += $6} END {print s + 0}' "$WORK/syncs")
  bytes=$(awk -v n="$name" '$1 == n {l += $7; w += $8; c++} END {if (c) printf "%.1f MB in LIST responses, %.1f MB in watch events", l / c / 1e6, w / c / 1e6}' "$WORK/syncs")
  calls=$(awk -v n="$name" '$1 == n {print $9}' "$WORK/syncs" | med | awk '{printf "%.0f", $1}')
  echo "synccost: [$name] $n syncs of $pods pods: sync median ${dmed} s; API server ${amed} CPU-s median, ${asum} in all" \
    "(net of idle); etcd ${emed} median, ${esum} in all; API server peak RSS ${peak} MB; writes ${wr}"
  echo "synccost: [$name] the API server sent per sync: $bytes (all its clients); write calls (syscw) median ${calls}"
  [ "$wr" = 0 ] || bad=1
  if [ -z "$first" ]; then
    first=$name fmed=$amed fsum=$asum
  else
    echo "synccost: API server CPU during the sync, $first / $name: $(awk -v a="$fmed" -v b="$amed" -v c="$fsum" -v d="$asum" 'BEGIN {
      printf "%.2f of the median, %.2f of the total", (b > 0 ? a / b : 0), (d > 0 ? c / d : 0)}')"
  fi
done
echo "synccost: (the goal, design §5: protobuf + streaming lists at most 0.5 of JSON + paginated LIST)"
WHY="the dry-run daemon wrote (see the writes above)"
check "every start got ready and wrote nothing" [ "$bad" = 0 ]
echo "synccost: load average at the end $(loadavg)"
finish
