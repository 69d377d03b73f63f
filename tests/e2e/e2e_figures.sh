#!/usr/bin/env bash
# e2e_figures.sh — the README's picture is current: scripts/figures/limit-falls.sh, run on this
# cluster with the real controller (a pod, then neighbours landing one at a time, its CPU limit
# read from the API server once the controller converged), draws docs/img/limit-falls.svg byte
# for byte.
#  F1  the script runs: every step converged, the SVG written
#  F2  the SVG equals the committed one (on a difference: the diff; regenerate with the command
#      the FAIL line names, after checking the new figures)
# Prints PASS/FAIL per check and "N passed, N failed"; exits non-zero on a failure. Needs
# `tests/cluster/cluster.sh up`. About 45 s.
set -uo pipefail
# shellcheck source=../lib/common.sh
. "$(dirname "${BASH_SOURCE[0]}")/../lib/common.sh"
WORK=$(mktemp -d /tmp/headroom-e2e.XXXXXX)
trap 'rm -rf "$WORK"' EXIT
SVG=docs/img/limit-falls.svg

require_cluster
if HEADROOM_BIN=$HEADROOM "$ROOT/scripts/figures/limit-falls.sh" "$WORK/limit-falls.svg" >"$WORK/run.log" 2>&1; then
  pass "F1 limit-falls.sh ran: $(grep -c 'neighbour(s)' "$WORK/run.log") steps converged, the SVG written"
else
  fail "F1 limit-falls.sh ran" "its output: $(tail -n 30 "$WORK/run.log")"
  finish
  exit
fi
if diff -u "$ROOT/$SVG" "$WORK/limit-falls.svg" >"$WORK/diff"; then
  pass "F2 $SVG is what the run draws ($(grep 'neighbour(s)' "$WORK/run.log" | sed 's/.*solo.s limit //' | tr '\n' ' '))"
else
  fail "F2 $SVG is what the run draws" "it differs (regenerate: HEADROOM_CLUSTER_DIR=DIR scripts/figures/limit-falls.sh)"
  cat "$WORK/diff"
fi
finish
