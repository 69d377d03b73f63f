#!/usr/bin/env bash
# e2e_gang.sh — one ceiling for a gang on the real control plane (issue 17,
# third part; design §2.10).
#
# Four simulated 16-core kwok nodes; namespace OTHER (not managed) books 0,
# 2, 4 and 6 cores of them with filler pods. Four 2000m pods of namespace ML,
# one per node (nodeName), carry kube-headroom.dev/group-uniform: "true" and
# kube-headroom.dev/group: train. Alone they would get 16000, 14000, 12000 and
# 10000m; the gang gets one ratio, 5: 10000m each (the member on the fullest
# node binds). Then an 8000m neighbour lands on the first member's node: its
# own target drops to 8000m (ratio 4), and all four go to 8000m — the last of
# the four resizes must reach the API server within debouncePeriod + 2 s of
# the neighbour's creation (both read from the audit record). `headroom plan
# -f` of a dump reproduces the limits and `explain -f` names the binding
# member. Deleting the gang leaves no group state: headroom_groups goes from
# 1 back to 0. Prints PASS/FAIL per check and "N passed, N failed"; exits
# non-zero on a failure. Needs `tests/cluster/cluster.sh up`. About 40 s.
set -uo pipefail
# shellcheck source=../lib/common.sh
. "$(dirname "${BASH_SOURCE[0]}")/../lib/common.sh"
MPORT=${HEADROOM_E2E_GANG_PORT:-$(free_port)}
WORK=$(mktemp -d /tmp/headroom-e2e.XXXXXX)
ID=headroom-e2e-gang # the controller's user: what the audit record names
NS=e2e-gang-$S OTHER=e2e-gang-o-$S
ML=$NS # the gang's namespace, managed (manage_stage)
N=(e2e-gang-0-$S e2e-gang-1-$S e2e-gang-2-$S e2e-gang-3-$S)
DEBOUNCE_MS=2000
GANG='labels: {"kube-headroom.dev/group-uniform": "true", "kube-headroom.dev/group": "train"}'

trap cleanup_common EXIT

limits() { # -> the four members' limits in millicores, "train-0=… train-1=…"
  local i out=""
  for i in 0 1 2 3; do out+="train-$i=$(milli "$(cpu_limit "$ML" "train-$i")") "; done
  echo "${out% }"
}
milli() { # a CPU quantity as kubectl prints it ("10", "8500m") -> millicores
  case $1 in *m) echo "${1%m}" ;; "") echo none ;; *) echo $(($1 * 1000)) ;; esac
}
all_at() { [ "$(limits)" = "train-0=$1 train-1=$1 train-2=$1 train-3=$1" ]; }
planned() { # -> the planner's targets of the four, in limits' format (from dump_cluster's dump)
  planned_targets ".namespace == \"$ML\"" | sed "s#^$ML/##" | paste -sd' '
}
groups_is() { [ "$(metric headroom_groups)" = "$1" ]; }
ms_of() { # RFC 3339 with microseconds -> ms since the epoch
  date -d "$1" +%s%3N
}

require_cluster
# The members exist before the controller starts: its first plan sees the whole gang.
manage_stage e2e-gang "debouncePeriod: 2s" || { fail "setup" "$START_WHY"; finish; exit; }
mkns "$OTHER" plain
for i in 0 1 2 3; do mknode "${N[$i]}" 16; done
for i in 1 2 3; do mkpod "$OTHER" "filler-$i" "${N[$i]}" "$((2 * i))"; done
for i in 0 1 2 3; do mkpod "$ML" "train-$i" "${N[$i]}" 2 "" "$GANG"; done
members_running() {
  [ "$(k -n "$ML" get pods --field-selector status.phase=Running -o name 2>/dev/null | wc -l)" = 4 ]
}
wait_until 60 members_running
start_controller || { fail "controller start" "$START_WHY"; finish; exit; }

# One ceiling: ratio 5 (train-3's node: S = 16000 − 6000 − 2000 = 8000, t = 10000).
wait_until 60 all_at 10000
L=$(limits)
WHY="limits: $L"
check "the gang gets one ceiling: 10000m each (alone 16000/14000/12000/10000m; ratio 5)" \
  [ "$L" = "train-0=10000 train-1=10000 train-2=10000 train-3=10000" ]
WHY="headroom_groups $(metric headroom_groups)"
check "headroom_groups is 1 (one gang in the index)" groups_is 1
dump_cluster
P=$(planned)
WHY="limits: $L; planner: $P"
check "plan -f of a dump gives the same targets" [ "$P" = "$L" ]
E=$("$HEADROOM" explain "$ML/train-0" -f "$WORK/dump.json" 2>&1)
WHY=$(grep -A3 'gang ' <<<"$E")
check "explain names the gang and the member whose node binds (train-3)" \
  grep -q "ratio = min target/request      5.000: $ML/train-3 on node ${N[3]} binds" <<<"$E"
quiet_for 3 30 "$MPORT" >/dev/null

# A neighbour on train-0's node: t = 2000 + 16000 − 10000 = 8000 (ratio 4).
m=$(audit_mark)
mkpod "$OTHER" neighbour "${N[0]}" 8
wait_until 30 all_at 8000
sleep 1 # the audit record is written once a request completes
L=$(limits)
WHY="limits: $L"
check "a neighbour on one member's node lowers all four to 8000m (ratio 4)" \
  [ "$L" = "train-0=8000 train-1=8000 train-2=8000 train-3=8000" ]
born=$(audit_since "$m" 'select(.verb == "create" and .objectRef.resource == "pods" and .objectRef.name == "neighbour" and .objectRef.subresource == null) | .requestReceivedTimestamp' | jq -r . | head -1)
audit_writes "$m" "$ID" '.objectRef.subresource == "resize" and .objectRef.namespace == "'"$ML"'"' >"$WORK/resizes"
last=$(tail -1 "$WORK/resizes" | cut -d' ' -f1)
n_resizes=$(wc -l <"$WORK/resizes")
took=$(($(ms_of "$last") - $(ms_of "$born")))
echo "      neighbour created $born; $n_resizes resizes, the last $last: ${took} ms"
WHY="$(cat "$WORK/resizes")"
check "four resizes, one per member" [ "$n_resizes" = 4 ]
WHY="${took} ms"
check "the last member follows within debouncePeriod + 2 s (${took} ms ≤ $((DEBOUNCE_MS + 2000)) ms)" \
  [ "$took" -le $((DEBOUNCE_MS + 2000)) ]
dump_cluster
P=$(planned)
WHY="limits: $L; planner: $P"
check "plan -f of a dump gives the same targets after the neighbour" [ "$P" = "$L" ]
E=$("$HEADROOM" explain "$ML/train-2" -f "$WORK/dump.json" 2>&1)
WHY=$(grep -A3 'gang ' <<<"$E")
check "explain names the new binding member (train-0)" \
  grep -q "4.000: $ML/train-0 on node ${N[0]} binds" <<<"$E"

# The gang goes: nothing of it is left.
k -n "$ML" delete pod train-0 train-1 train-2 train-3 --wait=true --grace-period=0 --force >/dev/null 2>&1
wait_until 30 groups_is 0
WHY="headroom_groups $(metric headroom_groups)"
check "deleting the gang leaves no group state (headroom_groups back to 0)" groups_is 0
finish
