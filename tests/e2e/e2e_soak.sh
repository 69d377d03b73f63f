#!/usr/bin/env bash
# e2e_soak.sh — the churn soak's 5-minute version (issue 11, design §16):
# bench/soak.sh with a 2-minute warm-up, so every CI run prints the
# controller's RSS growth under Job and rollout churn beside its budget.
#
# It fails on a crash, on no resize written, on too little churn (the run
# would prove nothing), and on a leak: growth after warm-up beyond the budget
# (2 MB) that rises at every sample of the measured window. Growth beyond the
# budget that levels off is printed OVER BUDGET and left to the 30-minute run
# (bench/soak.sh --minutes 30, ≥ 20,000 pods), which is where the budget is
# judged: in 3 measured minutes an allocator step can look like growth.
# About 5.5 minutes; metrics port $HEADROOM_SOAK_METRICS_PORT (default: a free one).
exec "$(dirname "${BASH_SOURCE[0]}")/../../bench/soak.sh" \
  --minutes "${HEADROOM_SOAK_MINUTES:-5}" --warmup "${HEADROOM_SOAK_WARMUP:-2}" "$@"
