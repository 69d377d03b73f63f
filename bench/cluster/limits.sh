#!/usr/bin/env bash
# limits.sh — from a cold start, how long until every managed pod has its
# target limit (design §5 "Limits first"), for two builds of `headroom run`
# one after the other on the same cluster, read from the API server's audit
# record (tests/lib/common.sh audit_mark/audit_since).
#
#   bench/cluster/limits.sh --old BIN [--new BIN] [--nodes 20] [--pods-per-node 30]
#
# --new defaults to build/release/headroom ($HEADROOM_BIN). For each binary:
# fresh kwok nodes (8 CPU) and Burstable pods (Deployments of 10, limits
# twice the requests: every one has a target elsewhere) in a managed
# namespace, all Running before the daemon starts; the daemon runs live
# (HeadroomConfig dryRun false, the default rates: clientQPS 50) as a
# least-privilege user until it has not written for 15 s; then the audit
# record of that user's requests gives, per kind (resize = PATCH
# pods/resize, annotation = PATCH pods, event = POST events), the count and
# the time of the last one, measured from the daemon's start and from its
# first write. "limits right" is the last resize: the controller wrote no
# other resize after it. Prints one line per binary, side by side.
#
# Needs a cluster (tests/cluster/cluster.sh up; $HEADROOM_CLUSTER_DIR and the
# ports pick which), jq. Metrics port $HEADROOM_LIMITS_PORT (default: a free one).
# tests/lib/common.sh is written for scripts without -e (its helpers test and fail softly),
# as bench/cluster/soak.sh is: every step that must hold says so with || exit.
set -uo pipefail
# shellcheck source=../../tests/lib/common.sh
. "$(dirname "${BASH_SOURCE[0]}")/../../tests/lib/common.sh"
# shellcheck source=../../tests/lib/bench.sh
. "$(dirname "${BASH_SOURCE[0]}")/../../tests/lib/bench.sh"

old="" new=$HEADROOM nodes=20 per_node=30
usage() { sed -n '/^#   bench\/limits.sh/p' "$0" | sed 's/^# \{0,1\}//'; exit 2; }
while [ $# -gt 0 ]; do
  case $1 in
    --old) old=$2; shift ;;
    --new) new=$2; shift ;;
    --nodes) nodes=$2; shift ;;
    --pods-per-node) per_node=$2; shift ;;
    -h | --help) usage ;;
    *) echo "limits: unknown option $1" >&2; usage ;;
  esac
  shift
done
[ -n "$old" ] || { echo "limits: --old BIN is required (e.g. a build of main)" >&2; exit 2; }
for b in "$old" "$new"; do [ -x "$b" ] || { echo "limits: no executable at $b" >&2; exit 2; }; done
command -v jq >/dev/null || { echo "limits: needs jq" >&2; exit 2; }

MPORT=${HEADROOM_LIMITS_PORT:-$(free_port)}
WORK=$(mktemp -d /tmp/headroom-limits.XXXXXX)
USER_NAME=headroom-limits-$S
CTL_PID=""
PREFIX=""
cleanup() {
  stop_controller TERM
  [ -z "$PREFIX" ] || bench_unload "$PREFIX"
  bench_unconfig
  remove_identity "$USER_NAME"
  rm -rf "$WORK"
}
trap cleanup EXIT
trap 'exit 130' INT TERM
require_cluster

install_identity "$USER_NAME"
[ -n "${USER_KC:-}" ] || { echo "limits: no identity for the controller" >&2; exit 1; }
bench_config || { echo "limits: cannot make the HeadroomConfig" >&2; exit 1; }
pods=$((nodes * per_node))

measure() { # name binary
  local name=$1 bin=$2 t_start mark last now quiet
  PREFIX=lim-$S-$name
  bench_load "$PREFIX" "$nodes" "$pods" >/dev/null || { echo "limits: the load did not come up" >&2; exit 1; }
  mark=$(audit_mark)
  t_start=$(date +%s.%N)
  HEADROOM=$bin start_controller >/dev/null ||
    { echo "limits: the $name daemon did not start (log: $WORK/controller.log)" >&2; exit 1; }
  quiet_for 15 900 "$MPORT" >/dev/null || { echo "limits: the $name daemon still writes after 15 minutes" >&2; exit 1; }
  stop_controller TERM
  audit_since "$mark" "select(.user.username == \"$USER_NAME\" and .verb != \"get\" and .verb != \"list\" and .verb != \"watch\")" >"$WORK/$name.audit"
  jq -rs --argjson t0 "$t_start" "$JQ_T$JQ_KIND"'
    (map(.stageTimestamp | t) | min) as $first
    | (map(select(kind == "resize") | .stageTimestamp | t) | max) as $lr
    | (map(select(kind != "resize" and kind != "other") | .stageTimestamp | t) | max) as $ln
    | [ "'"$name"'",
        (map(select(kind == "resize")) | length),
        (map(select(kind == "annotation")) | length),
        (map(select(kind == "event")) | length),
        (($lr - $t0) * 10 | round / 10), (($lr - $first) * 10 | round / 10),
        (($ln - $t0) * 10 | round / 10) ] | @tsv' "$WORK/$name.audit" >>"$WORK/rows"
  bench_unload "$PREFIX"
  PREFIX=""
}

echo "limits: ${nodes} nodes x ${per_node} pods (${pods} managed), clientQPS 50 (default), one binary after the other"
: >"$WORK/rows"
measure old "$old"
measure new "$new"
printf 'limits: %-4s %8s %11s %7s %22s %18s %20s\n' binary resizes annotations events \
  "limits right (start)" "(from 1st write)" "last note (start)"
while IFS=$'\t' read -r n r a e ls lf ln; do
  printf 'limits: %-4s %8s %11s %7s %21ss %17ss %19ss\n' "$n" "$r" "$a" "$e" "$ls" "$lf" "$ln"
done <"$WORK/rows"
echo "limits: load average $(cut -d' ' -f1-3 /proc/loadavg); writes from the API server's audit record"
