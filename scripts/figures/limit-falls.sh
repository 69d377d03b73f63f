#!/usr/bin/env bash
# limit-falls.sh — docs/img/limit-falls.svg from a real run: a pod's CPU limit falling as
# neighbours land (the README's and the tenant guide's picture; the demo's story, scripts/demo.sh).
#
#   HEADROOM_CLUSTER_DIR=DIR tests/cluster/cluster.sh up
#   HEADROOM_CLUSTER_DIR=DIR HEADROOM_BIN=build/release/headroom scripts/figures/limit-falls.sh [OUT.svg]
#
# On the test cluster of HEADROOM_CLUSTER_DIR (tests/lib/common.sh: the cluster helpers, the
# controller as the chart's least-privilege user): a simulated 16-core kwok node, a HeadroomConfig
# with dryRun: false and the defaults (minBurstFloor 1, maxMultiplier 10, quantum 10m) managing
# one namespace, `headroom run` over it. Pod "solo" requesting 2 cores lands alone; neighbours
# requesting 2, 4 and 8 cores land one at a time. After each, it waits until the controller has
# converged (`headroom node` has nothing left to write and every pod has a limit) and reads solo's
# CPU limit from the API server. The figures go to OUT.svg's data file (OUT.svg.txt, kept with
# KEEP_DATA=1) and scripts/figures/stepchart.py draws them: the same figures give the same bytes,
# so tests/e2e/e2e_figures.sh runs this again and compares with the committed file.
# Default OUT: docs/img/limit-falls.svg. Everything it made is removed at the end. About 30 s.
set -uo pipefail
# shellcheck source=../../tests/lib/common.sh
. "$(dirname "${BASH_SOURCE[0]}")/../../tests/lib/common.sh"
OUT=${1:-$ROOT/docs/img/limit-falls.svg}
MPORT=$(free_port)
WORK=$(mktemp -d /tmp/headroom-figures.XXXXXX)
NS=fig-$S NODE=fig-node-$S ID=headroom-figures
trap cleanup_common EXIT

die() { echo "limit-falls: $*" >&2; failed=1; exit 1; }
milli() { # a CPU quantity -> millicores
  case $1 in "") echo "" ;; *m) echo "${1%m}" ;; *) awk -v c="$1" 'BEGIN { printf "%d", c * 1000 }' ;; esac
}
# Converged with N managed pods on the node: the planner, reading the live cluster, has nothing
# left to write there and every one of them has a limit.
converged() { # n
  "$HEADROOM" node "$NODE" -o json >"$WORK/plan.json" 2>/dev/null &&
    jq -e --argjson n "$1" '[.nodes[0].pods[] | select(.managed)] as $p
      | ($p | length) == $n and all($p[]; .write == false and .limitMilli != null)' "$WORK/plan.json" >/dev/null
}

require_cluster
manage_stage figures || die "setup: $START_WHY"
mknode "$NODE" 16
start_controller || die "controller: $START_WHY"

{
  echo "# scripts/figures/limit-falls.sh: solo's CPU limit as the controller wrote it (millicores)"
  echo "title A pod's CPU limit falls as neighbours land"
  echo "pod solo 2000"
  echo "node $NODE 16000"
} >"$WORK/data"
n=0
for spec in "solo 2 alone" "web-1 2 + web-1 (2)" "web-2 4 + web-2 (4)" "batch-3 8 + batch-3 (8)"; do
  read -r name cpu label <<<"$spec"
  mkpod "$NS" "$name" "$NODE" "$cpu" || die "pod $name not made"
  wait_until 60 converged "$((n + 1))" ||
    die "not converged within 60 s after $name landed: $(jq -c '[.nodes[0].pods[] | {name, limitMilli, targetMilli, write}]' "$WORK/plan.json" 2>/dev/null)"
  l=$(milli "$(cpu_limit "$NS" solo)")
  [ -n "$l" ] || die "solo has no CPU limit after $name landed"
  echo "step $n $l $label" >>"$WORK/data"
  echo "limit-falls: $n neighbour(s): solo's limit ${l}m"
  n=$((n + 1))
done
# The node name carries the run's suffix; the picture names the node as the demo does.
sed -i "s/^node $NODE /node demo-node /" "$WORK/data"
python3 "$ROOT/scripts/figures/stepchart.py" "$WORK/data" "$OUT" || die "stepchart.py failed"
[ -z "${KEEP_DATA:-}" ] || cp "$WORK/data" "$OUT.txt"
echo "limit-falls: wrote $OUT"
