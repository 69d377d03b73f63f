#!/usr/bin/env bash
# e2e_quota.sh — quota-aware ceilings (design §2.3, the quota cap): in a managed namespace with a
# ResourceQuota on limits.cpu, a wave of raises fits the quota.
#
# Two simulated 8-core nodes, the controller as the chart's least-privilege user, quota
# limits.cpu=6 and spec.quotaReservePercent 20 (1200m kept for new pods). Three pods (500m, 1 and
# 500m requested, limits 600m, 1200m, 600m; two on one node, one on the other) would get 2666m,
# 5333m and 5000m from the slack; the quota leaves T = 6000 − 2400 + 2400 − 1200 = 4800m for
# their 2000m of requests. Checks: every pod raised, each limit equal to `headroom plan -f`'s
# target on a dump of the cluster (the planner reads the quota too); the quota's status.used ≤
# hard − reserve; the audit record shows no write of ours answered 403 (a deadband of 0: the pods
# converge to their targets exactly, step by step as the quota frees). Then a rollout's surge
# pod (limit 1, within the reserve) is admitted by the API server, and the plan that follows
# (every ceiling of the namespace shrinks to share what is left) again fits: no 403, used ≤
# hard, limits = plan. Prints PASS/FAIL per check and "N passed, N failed"; exits non-zero on a
# failure. Needs `tests/cluster/cluster.sh up`.
set -uo pipefail
# shellcheck source=../lib/common.sh
. "$(dirname "${BASH_SOURCE[0]}")/../lib/common.sh"
MPORT=${HEADROOM_E2E_QUOTA_PORT:-$(free_port)}
WORK=$(mktemp -d /tmp/headroom-e2e.XXXXXX)
ID=headroom-e2e-quota
NS=e2e-quota-$S N1=e2e-quota-a-$S N2=e2e-quota-b-$S

cleanup() { cleanup_common; }
trap cleanup EXIT

milli() { # a CPU quantity -> millicores
  awk -v q="$1" 'BEGIN { if (q ~ /m$/) { sub(/m$/, "", q); print q + 0 } else printf "%d\n", q * 1000 }'
}
quota_field() { k -n "$NS" get quota cpu -o jsonpath="{.status.$1.limits\\.cpu}"; }
used_m() { milli "$(quota_field used)"; }
limits() { # "ns/pod=milli" of every pod in the namespace, sorted
  k -n "$NS" get pods -o json |
    jq -r '.items[] | "\(.metadata.namespace)/\(.metadata.name)=\(.spec.containers[0].resources.limits.cpu)"' |
    while IFS== read -r p l; do echo "$p=$(milli "$l")"; done | sort
}
# Converged: the planner, on a dump of the cluster, targets what every pod of the namespace has.
converged() {
  dump_cluster
  planned_targets ".namespace == \"$NS\"" >"$WORK/plan.txt"
  limits >"$WORK/limits.txt"
  [ -s "$WORK/plan.txt" ] && cmp -s "$WORK/plan.txt" "$WORK/limits.txt"
}
denied() { # mark -> our writes to the namespace's pods answered 403
  audit_writes "$1" "$ID" ".objectRef.namespace == \"$NS\" and .objectRef.resource == \"pods\"" | grep -c ' 403$'
}
all_raised() { # each of p1, p2, p3 above the limit it was created with
  limits >"$WORK/raised.txt"
  ! grep -q -e "/p1=600\$" -e "/p2=1200\$" -e "/p3=600\$" "$WORK/raised.txt" && [ "$(wc -l <"$WORK/raised.txt")" -eq 3 ]
}

require_cluster
mknode "$N1" 8
mknode "$N2" 8
# The wave: the quota and its three pods exist before the controller starts, so its first plan
# sees them all. (Made one by one under a running controller, the first pod alone would be raised
# into the reserve, and the third could find the quota full: the reserve is room for one rollout
# step, not for a namespace's whole arrival.)
manage_stage kube-headroom.dev/e2e-quota "quotaReservePercent: 20" \
  "deadband: {growPercent: 0, shrinkPercent: 0}" || { fail "controller start" "$START_WHY"; finish; exit; }
k -n "$NS" create quota cpu --hard=limits.cpu=6 >/dev/null
quota_known() { [ -n "$(quota_field hard)" ]; }
wait_until 20 quota_known
mkpod "$NS" p1 "$N1" 500m 600m
mkpod "$NS" p2 "$N1" 1 1200m
mkpod "$NS" p3 "$N2" 500m 600m
wait_until 60 running "$NS" p1 && wait_until 60 running "$NS" p2 && wait_until 60 running "$NS" p3
mark=$(audit_mark)
start_controller || { fail "controller start" "$START_WHY"; finish; exit; }
wait_until 30 all_raised
wait_until 20 converged
WHY="limits: $(tr '\n' ' ' <"$WORK/limits.txt"); plan -f: $(tr '\n' ' ' <"$WORK/plan.txt")"
check "a wave of raises: every pod raised, each limit equal to plan -f's quota-aware target" \
  eval 'all_raised && converged'
WHY="$WHY (T = 4800m over 2000m of requests: 1200m, 2400m, 1200m)"
check "... the quota cap's figures: 1200m, 2400m, 1200m" \
  [ "$(tr '\n' ' ' <"$WORK/limits.txt")" = "$NS/p1=1200 $NS/p2=2400 $NS/p3=1200 " ]
u=$(used_m) h=$(milli "$(quota_field hard)")
WHY="status.used $u, hard $h, reserve 1200m"
check "the quota is never exceeded and the reserve is kept: used ≤ hard − reserve" [ "$u" -le $((h - 1200)) ]
WHY="$(audit_writes "$mark" "$ID" ".objectRef.namespace == \"$NS\"" | tr '\n' ';' | head -c 600)"
check "the audit record: no write of ours answered 403" [ "$(denied "$mark")" -eq 0 ]

# A rollout's surge pod: a new pod with a limit of 1 core fits in the reserve, and the next plan
# shares what is left among all four (no 403 on the way down either).
mark2=$(audit_mark)
if mkpod "$NS" surge "$N2" 500m 1; then pass "a surge pod (limit 1) is admitted: the reserve kept room for it"; else
  fail "a surge pod (limit 1) is admitted: the reserve kept room for it" "the API server refused it"; fi
wait_until 60 running "$NS" surge
sleep 3 # a debounce and a reconcile, for the namespace's new plan to be written
wait_until 30 converged
u=$(used_m)
WHY="limits: $(tr '\n' ' ' <"$WORK/limits.txt"); plan -f: $(tr '\n' ' ' <"$WORK/plan.txt"); used $u"
check "after the surge pod: limits equal the plan again, and used ≤ hard" eval 'converged && [ "$u" -le "$h" ]'
WHY="$(audit_writes "$mark2" "$ID" ".objectRef.namespace == \"$NS\"" | tr '\n' ';' | head -c 600)"
check "... and no write of ours answered 403" [ "$(denied "$mark2")" -eq 0 ]

out=$("$HEADROOM" explain p1 -n "$NS" --kubeconfig "$USER_KC" 2>&1)
WHY="$(echo "$out" | grep -E 'ResourceQuota|cap = ' | tr '\n' ';')"
check "explain names the quota cap" eval 'echo "$out" | matches "cap = max(least bound, r) .*(ResourceQuota share)"'
ann=$(k -n "$NS" get pod p1 -o jsonpath='{.metadata.annotations.kube-headroom\.dev/status}')
WHY="status annotation: $ann"
check "the status annotation names it: cap quota" eval 'echo "$ann" | jq -e ".cap == \"quota\"" >/dev/null'
finish
