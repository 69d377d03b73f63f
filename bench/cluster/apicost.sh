#!/usr/bin/env bash
# apicost.sh — what one write of each kind the controller makes costs the API server (design §16):
# a server-side apply to pods/resize (the controller's resize), the same change as a strategic merge
# patch (for comparison), a merge patch of the status annotation, and an Event. The API server's
# CPU, not ours: the figure the side-by-side (sidebyside.sh) compares between controllers, split by
# kind so a change of write can be weighed before it is made.
#
#   bench/cluster/apicost.sh [--pods 300] [--rate 50] [--kinds apply,merge,annot,event] [--rounds 2]
#                            [--ours BIN [--ours-writes 2000] [--ours-threads 16] [--ours-qps Q]]
#
# On the test cluster ($HEADROOM_CLUSTER_DIR; tests/cluster/cluster.sh up first): one fresh kwok
# node and --pods bare Burstable pods on it, Running; then bench/cluster/apicost.py, --rounds times
# over --kinds (a round writes each pod once per kind, each write a real change), as the cluster's
# admin on one keep-alive connection at --rate writes a second. Prints, per kind and round, the API
# server's CPU-s net of its idle rate and per write. With --ours, then the other side of a write:
# BIN (build/release/bench/cluster/bench_writecost) makes --ours-writes annotation merge patches
# over the same pods through our client and a bare reference, --ours-threads at once, paced at
# --ours-qps writes a second (0: as fast as the server takes them), and prints the CPU per write
# of each (JSON and protobuf answers). Deletes what it made. No PASS/FAIL: figures.
set -uo pipefail
# shellcheck source=../../tests/lib/common.sh
. "$(dirname "${BASH_SOURCE[0]}")/../../tests/lib/common.sh"
# shellcheck source=../../tests/lib/bench.sh
. "$(dirname "${BASH_SOURCE[0]}")/../../tests/lib/bench.sh"
pods=300 rate=50 kinds=apply,merge,annot,event rounds=2 ours="" ours_writes=2000 ours_threads=16 ours_qps=0
while [ $# -gt 0 ]; do
  case $1 in
    --pods) pods=$2; shift ;;
    --rate) rate=$2; shift ;;
    --kinds) kinds=$2; shift ;;
    --rounds) rounds=$2; shift ;;
    --ours) ours=$2; shift ;;
    --ours-writes) ours_writes=$2; shift ;;
    --ours-threads) ours_threads=$2; shift ;;
    --ours-qps) ours_qps=$2; shift ;;
    *) sed -n '/^#   bench/p' "$0" >&2; exit 2 ;;
  esac
  shift
done
STATE=${HEADROOM_CLUSTER_DIR:-/tmp/kube-headroom-cluster}
APISERVER_PID=$(cat "$STATE/pids/kube-apiserver" 2>/dev/null)
[ -n "$APISERVER_PID" ] || { echo "apicost: no kube-apiserver PID in $STATE/pids (is this cluster up?)" >&2; exit 1; }
WORK=$(mktemp -d /tmp/headroom-apicost.XXXXXX)
PREFIX=ac-$S
cleanup() { "$ROOT/tests/cluster/mkload.sh" --delete --node-prefix "$PREFIX" --ns-prefix "$PREFIX" >/dev/null 2>&1; rm -rf "$WORK"; }
trap cleanup EXIT
echo "apicost: $(nproc) cores; load average $(loadavg); $(date -u +%FT%TZ)"
"$ROOT/tests/cluster/mkload.sh" --nodes 1 --node-prefix "$PREFIX" --cpu 64 --pods $((pods + 10)) \
  --workloads "$pods" --kind pod --namespaces 1 --ns-prefix "$PREFIX" --mix 1:0:0 --sidecar-every 0 \
  --wait 300 | tail -1 || exit 1
k config view --raw --minify -o json >"$WORK/kc.json" || exit 1
for r in $(seq "$rounds"); do
  echo "apicost: round $r"
  python3 "$ROOT/bench/cluster/apicost.py" "$WORK/kc.json" "$PREFIX-0" "$pods" "$rate" "$APISERVER_PID" "$kinds" "$r" || exit 1
done
if [ -n "$ours" ]; then
  k -n "$PREFIX-0" get pods -o jsonpath='{range .items[*]}{.metadata.namespace} {.metadata.name}{"\n"}{end}' >"$WORK/pods" || exit 1
  echo "apicost: our client's CPU per write ($ours), load average $(loadavg)"
  "$ours" --writes "$ours_writes" --threads "$ours_threads" --qps "$ours_qps" <"$WORK/pods" || exit 1
fi
