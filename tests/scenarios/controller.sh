#!/usr/bin/env bash
# controller.sh — the shell half of run.py: the cluster's preconditions and the controller exactly
# as every end-to-end script has them (tests/lib/common.sh), so the scenarios run `headroom run`
# as the chart's least-privilege identity and refuse a cluster the scripts would refuse.
#   controller.sh check               require_cluster: the API server ready, the audit record there,
#                                     the shipped CRD installs, no other controller on the cluster
#                                     (its FAIL lines on stdout; exit 1); then install_crd
#   controller.sh start ID PORT WORK  install_identity ID (the CRD, the chart's RBAC, a user bound to
#                                     its roles), then start_controller: `headroom run` as ID, plain
#                                     metrics on 127.0.0.1:PORT, -v, logging to WORK/controller.log;
#                                     prints its PID once /readyz answers (exit 1, and why, if not)
#   controller.sh stop ID PID         the controller (started by `start`, by its PID) killed, and
#                                     ID's bindings removed
# The HeadroomConfig is run.py's: it applies one per batch before `start`.
set -uo pipefail
# shellcheck source=../lib/common.sh
. "$(dirname "${BASH_SOURCE[0]}")/../lib/common.sh"

case ${1:-} in
  check)
    require_cluster
    install_crd ;;
  start)
    [ $# -eq 4 ] || { echo "usage: controller.sh start ID PORT WORK" >&2; exit 2; }
    ID=$2 MPORT=$3 WORK=$4
    install_identity "$ID"
    if ! start_controller; then
      echo "$START_WHY; log: $(tail -n 5 "$WORK/controller.log" | tr '\n' ' ')" >&2
      stop_controller KILL
      exit 1
    fi
    echo "$CTL_PID" ;;
  stop)
    [ $# -eq 3 ] || { echo "usage: controller.sh stop ID PID" >&2; exit 2; }
    kill -KILL "$3" 2>/dev/null
    # Not our child (start's shell has gone): gone, or a zombie until init reaps it.
    for _ in $(seq 1 50); do
      case $(awk '{print $3}' "/proc/$3/stat" 2>/dev/null) in "" | Z) break ;; esac
      sleep 0.1
    done
    remove_identity "$2" ;;
  *)
    echo "usage: controller.sh check | start ID PORT WORK | stop ID PID" >&2
    exit 2 ;;
esac
