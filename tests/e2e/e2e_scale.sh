#!/usr/bin/env bash
# e2e_scale.sh — the scale benchmark's small version (issue 18): bench/scale.sh
# on 10 nodes x 10 pods (60 managed), 30 quiet seconds and 30 s of churn, so
# every CI run prints its figures — limits right from a cold start, the
# sync's and the churn's API server cost, reaction from bind to resize, the
# writes against the planner's minimum, the stale ceilings (design §11.3) —
# and checks what must hold anywhere: every managed pod reaches its target,
# the quiet window writes nothing, the daemon resizes under churn, the
# replay runs. The scale run itself (100 and more nodes) is a benchmark run
# by hand (bench/RESULTS.md). About 3 minutes; metrics port
# $HEADROOM_SCALE_PORT (default: a free one).
exec "$(dirname "${BASH_SOURCE[0]}")/../../bench/scale.sh" --nodes 10 --pods-per-node 10 \
  --quiet-minutes "${HEADROOM_SCALE_QUIET_MINUTES:-0.5}" --churn-minutes "${HEADROOM_SCALE_CHURN_MINUTES:-0.5}" \
  --churn-rate 2 "$@"
