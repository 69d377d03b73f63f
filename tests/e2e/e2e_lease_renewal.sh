#!/usr/bin/env bash
# e2e_lease_renewal.sh — what a leader's Lease renewal costs the API server
# (design §5 "Idle means idle", §10): one request, a PUT carrying the
# resourceVersion of its last write, not a GET and a PUT. One `headroom run
# --leader-elect` as the chart's least-privilege identity; once it leads,
# the audit record of that identity over 10 s must show at least 3 lease
# updates and no lease read. A conflict (someone else wrote the Lease) still
# takes the long way: a Lease rewritten behind the leader's back is read
# and judged, and the leader steps down for another holder.
# About 30 s; metrics port $HEADROOM_E2E_LEASE_PORT (default: a free one).
set -uo pipefail
# shellcheck source=../lib/common.sh
. "$(dirname "${BASH_SOURCE[0]}")/../lib/common.sh"
MPORT=${HEADROOM_E2E_LEASE_PORT:-$(free_port)}
WORK=$(mktemp -d /tmp/headroom-lease.XXXXXX)
USER_NAME=headroom-lease-$S
cleanup() {
  stop_controller KILL
  k -n kube-headroom delete lease kube-headroom --ignore-not-found >/dev/null 2>&1
  remove_identity "$USER_NAME"
  [ "$failed" = 0 ] || tail -n 20 "$WORK/controller.log"
  rm -rf "$WORK"
}
trap cleanup EXIT
require_cluster
install_identity "$USER_NAME"
k -n kube-headroom delete lease kube-headroom --ignore-not-found >/dev/null 2>&1
leading() { [ "$(metric headroom_leader)" = 1 ]; }
lease_requests() { # mark verb -> count of that identity's requests of the Lease
  audit_since "$1" "select(.user.username == \"$USER_NAME\" and .objectRef.resource == \"leases\" and .verb == \"$2\")" | wc -l
}

start_controller --leader-elect || { fail "start" "not ready (log: $WORK/controller.log)"; finish; exit; }
wait_until 30 leading || { fail "leading" "the only replica did not lead within 30 s"; finish; exit; }
mark=$(audit_mark)
sleep 10
gets=$(lease_requests "$mark" get) puts=$(lease_requests "$mark" update)
WHY="${puts} updates in 10 s (one every 2 s expected)"
check "the leader renews (${puts} lease updates in 10 s)" [ "$puts" -ge 3 ]
WHY="${gets} lease reads beside ${puts} updates: a GET before each PUT"
check "a renewal is one PUT, no GET (${gets} reads, ${puts} updates)" [ "$gets" = 0 ]

# Someone else takes the Lease behind the leader's back: its next PUT is
# refused (409), it reads the Lease, sees another holder and stops leading.
mark=$(audit_mark)
k -n kube-headroom patch lease kube-headroom --type merge \
  -p "{\"spec\":{\"holderIdentity\":\"intruder-$S\",\"renewTime\":\"$(date -u +%Y-%m-%dT%H:%M:%S.000000Z)\",\"leaseDurationSeconds\":60}}" >/dev/null
wait_until 20 sh -c "curl -sf http://127.0.0.1:$MPORT/metrics | grep -qx 'headroom_leader 0'"
WHY="headroom_leader $(metric headroom_leader) 20 s after another holder took the Lease"
check "a Lease taken by another holder ends the leadership" [ "$(metric headroom_leader)" = 0 ]
gets=$(lease_requests "$mark" get)
WHY="no lease read after the refused renewal"
check "a refused renewal reads the Lease (${gets} reads)" [ "$gets" -ge 1 ]
finish
