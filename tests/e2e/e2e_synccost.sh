#!/usr/bin/env bash
# e2e_synccost.sh — the sync-cost benchmark's small version (issue 18 done-means 3):
# bench/synccost.sh on 10 nodes x 30 pods, 3 rounds of one start per list path
# (protobuf + streaming lists, JSON + paginated LIST), so every CI run prints the
# API server's and etcd's CPU-seconds during the daemon's initial sync per path and
# their ratio, and checks what must hold anywhere: every start gets ready on both
# paths and a dry-run daemon with nothing to do writes nothing. The run at 3,000
# pods and more is a benchmark run by hand (bench/RESULTS.md). About 40 s; metrics
# port $HEADROOM_SYNCCOST_PORT (default: a free one).
exec "$(dirname "${BASH_SOURCE[0]}")/../../bench/synccost.sh" --nodes 10 --pods-per-node 30 \
  --rounds "${HEADROOM_SYNCCOST_ROUNDS:-3}" --idle-seconds 2 "$@"
