#!/usr/bin/env bash
# e2e_limits_first.sh — limits first (design §5): a resize's status
# annotation and event follow it through their own queue, so a stop between
# the two leaves at worst a stale annotation and a missing event — the limit
# is right — and the next change of that pod repairs both.
#
# On a simulated kwok node, with the controller as the least-privilege user
# of the chart's RBAC (charts/kube-headroom/templates/rbac.yaml): a pod gets its limit, annotation and event; the
# controller stops and the pod's annotation is set back to what an older
# computation said (what a stop between the resize and its note leaves); a
# restarted controller leaves the pod alone (its limit is right: nothing to
# write); a neighbour arrives and moves the pod's target, and the pod's limit,
# annotation and event are all new. Prints PASS/FAIL per check and "N passed,
# N failed"; exits non-zero on a failure. Needs `tests/cluster/cluster.sh up`.
set -uo pipefail
# shellcheck source=../lib/common.sh
. "$(dirname "${BASH_SOURCE[0]}")/../lib/common.sh"
MPORT=${HEADROOM_E2E_LIMITS_PORT:-$(free_port)}
WORK=$(mktemp -d /tmp/headroom-e2e.XXXXXX)
NS=e2e-lf-$S NODE=e2e-lf-n-$S STALE='{"factor":"9.99","slack":"1m","managedRequests":"1m","nodePods":7,"computedAt":"2000-01-01T00:00:00Z","policy":"proportional-v1","dryRun":false}'

cleanup() {
  stop_controller KILL
  delete_objects
  k delete headroomconfig cluster --ignore-not-found >/dev/null 2>&1
  remove_identity headroom-e2e-lf
  if [ "$failed" -gt 0 ]; then echo "--- controller log (tail)"; tail -n 40 "$WORK/controller.log"; fi
  rm -rf "$WORK"
}
trap cleanup EXIT

annotation() { k -n "$NS" get pod "$1" -o jsonpath='{.metadata.annotations.kube-headroom\.dev/status}' 2>/dev/null; }
adjusted() { # pod -> CPULimitAdjusted events about it
  k -n "$NS" get events.events.k8s.io -o json 2>/dev/null |
    jq --arg p "$1" '[.items[] | select(.regarding.name == $p and .reason == "CPULimitAdjusted")] | length'
}
has_limit() { [ -n "$(cpu_limit "$NS" "$1")" ]; }
limit_moved() { [ -n "$(cpu_limit "$NS" "$1")" ] && [ "$(cpu_limit "$NS" "$1")" != "$2" ]; }
annotated() { [ -n "$(annotation "$1")" ] && [ "$(annotation "$1")" != "$STALE" ]; }
events_above() { [ "$(adjusted "$1")" -gt "$2" ]; }
repaired() { # pod old-limit old-events
  limit_moved "$1" "$2" && annotated "$1" && events_above "$1" "$3" && [[ $(annotation "$1") == *'"nodePods":2'* ]]
}

require_cluster
install_identity headroom-e2e-lf
mkns "$NS" managed
mknode "$NODE" 4
k delete headroomconfig cluster --ignore-not-found >/dev/null 2>&1
printf 'apiVersion: kube-headroom.dev/v1alpha1\nkind: HeadroomConfig\nmetadata: {name: cluster}\nspec: {dryRun: false}\n' |
  k create -f - >/dev/null

mkpod "$NS" p1 "$NODE" 500m
wait_until 60 running "$NS" p1
start_controller || { fail "controller start" "not ready within 60 s"; finish; exit; }
wait_until 30 has_limit p1 && wait_until 30 annotated p1 && wait_until 30 events_above p1 0
l1=$(cpu_limit "$NS" p1) a1=$(annotation p1) e1=$(adjusted p1)
WHY="limit '$l1', annotation '$a1', events $e1"
check "a pod gets its limit, then its annotation and its event" [ -n "$l1" -a -n "$a1" -a "${e1:-0}" -ge 1 ]

# What a stop between the resize and its note leaves: the limit is right,
# the annotation says an older computation (and no event says this change).
stop_controller TERM
k -n "$NS" annotate pod p1 --overwrite "kube-headroom.dev/status=$STALE" >/dev/null
start_controller || { fail "controller restart" "not ready within 60 s"; finish; exit; }
sleep 8 # more than the start-up wave (2 x debouncePeriod) and a reconcile
WHY="limit '$(cpu_limit "$NS" p1)' (was $l1), annotation '$(annotation p1)'"
check "after the stop: the limit is right and nothing is written (at worst a stale annotation)" \
  [ "$(cpu_limit "$NS" p1)" = "$l1" -a "$(annotation p1)" = "$STALE" ]

# The next change of the pod: a neighbour takes slack, p1's target moves.
mkpod "$NS" p2 "$NODE" 1000m
wait_until 60 repaired p1 "$l1" "$e1"
WHY="limit '$(cpu_limit "$NS" p1)' (was $l1), annotation '$(annotation p1)', events $(adjusted p1) (were $e1)"
check "the next change of the pod repairs it: new limit, a fresh annotation (nodePods 2), its event" \
  repaired p1 "$l1" "$e1"
finish
