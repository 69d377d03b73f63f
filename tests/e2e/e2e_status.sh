#!/usr/bin/env bash
# e2e_status.sh — the kube-headroom.dev/status annotation (design §9.1) on the real API server.
#
#   a. Live (dryRun: false), once converged: each managed pod's annotation says the limit written
#      (targetLimit = Σ its containers' limits.cpu, "limits" = each container's) and the cap; a
#      pod with a max-cpu annotation below its r + burst says "cap":"max-cpu".
#   b. A write a gate holds: a pod whose increase DiskPressure holds carries "reason":"pressure".
#   d. Steady state: two minutes in which the audit record shows no write at all by the
#      controller, though a Node label re-plans both nodes inside them — the held pod's
#      annotation is computed again, and not sent again (compared by its hash).
#   c. Dry-run: a new pod's annotation says the limit `headroom plan -o json` would write.
#   e. Dry-run writes an annotation when a live run would write a limit: a neighbour that moves the
#      would-be limits within the deadband rewrites no annotation (audit); past it, they follow.
#
# Runs as the least-privilege identity of charts/kube-headroom/templates/rbac.yaml. Prints
# PASS/FAIL per check, figures, and "N passed, N failed". About 160 s (the 120 s window).
set -uo pipefail
# shellcheck source=../lib/common.sh
. "$(dirname "${BASH_SOURCE[0]}")/../lib/common.sh"
MPORT=${HEADROOM_E2E_STATUS_PORT:-$(free_port)}
WORK=$(mktemp -d /tmp/headroom-status.XXXXXX)
ID=headroom-status
NS=e2e-st-$S
N0=e2e-st-n0-$S N1=e2e-st-n1-$S N2=e2e-st-n2-$S
STEADY_S=${HEADROOM_E2E_STEADY_S:-120}

trap cleanup_common EXIT
require_cluster

annotation() { k -n "$NS" get pod "$1" -o jsonpath='{.metadata.annotations.kube-headroom\.dev/status}' 2>/dev/null; }
# A pod's CPU limits in millicores, {"container": milli} over containers and sidecars.
limits_of() { # pod
  k -n "$NS" get pod "$1" -o json | jq -c '
    def milli: if . == null then null elif endswith("m") then (.[:-1] | tonumber)
      else (tonumber * 1000 | round) end;
    [(.spec.containers + (.spec.initContainers // []))[] | select(.resources.limits.cpu != null)
      | {(.name): (.resources.limits.cpu | milli)}] | add // {}'
}
# The annotation agrees with the pod: targetLimit is the sum of the limits written, "limits"
# each of them, and a cap is named. WHY says what was seen.
says_written() { # pod
  local ann lim
  ann=$(annotation "$1")
  lim=$(limits_of "$1")
  WHY="$1: annotation $ann; limits $lim"
  [ -n "$ann" ] && jq -e -n --argjson a "$ann" --argjson l "$lim" '
    ($a.limits | with_entries(.value |= (.[:-1] | tonumber))) as $al
    | ($l | length) > 0 and $al == $l
    and ($a.targetLimit[:-1] | tonumber) == ($l | [.[]] | add)
    and ($a.cap | type) == "string" and ($a | has("reason") | not) and $a.dryRun == false' >/dev/null
}

start_controller --manage e2e-status || { fail "controller start" "$START_WHY"; finish; exit; }

# ------------------------------------------------------------- the pods
mknode "$N0" 8
mknode "$N1" 8
node_ready() { [ "$(k get node "$1" -o jsonpath='{.status.conditions[?(@.type=="Ready")].status}')" = True ]; }
wait_until 30 node_ready "$N1"
k patch node "$N1" --subresource=status --type=strategic -p \
  '{"status":{"conditions":[{"type":"DiskPressure","status":"True","reason":"e2e","message":"set by e2e"}]}}' >/dev/null
# N0: A 8000, R 1600, S 6400, M 1600. "plain" 500m, "capped" 200m with max-cpu 1 (its r + burst
# is above 1 core), "side" an app (300m) and a sidecar (100m): two limits, one target.
mkpod "$NS" plain "$N0" 500m
mkpod "$NS" capped "$N0" 200m "" "annotations: {kube-headroom.dev/max-cpu: \"1\"}"
k apply -f - >/dev/null <<EOF
apiVersion: v1
kind: Pod
metadata: {name: side, namespace: $NS}
spec:
  nodeName: $N0
  initContainers:
  - name: proxy
    image: registry.invalid/proxy:1
    restartPolicy: Always
    resources: {requests: {cpu: 100m, memory: 32Mi}}
  containers:
  - name: app
    image: registry.invalid/app:1
    resources: {requests: {cpu: 300m, memory: 64Mi}}
  - name: extra
    image: registry.invalid/app:1
    resources: {requests: {cpu: 500m, memory: 64Mi}}
EOF
# N1 (DiskPressure): 1000m limited to 1500m, alone: its target 10 cores is an increase, held.
mkpod "$NS" held "$N1" 1000m 1500m

# ------------------------------------------------ a. live: the limit written
wait_until 30 node_converged "$N0" || echo "note: $N0 not converged after 30 s: $(jq -c '[.nodes[0].pods[] | {name, write, limitMilli, targetMilli}]' "$WORK/plan.json" 2>/dev/null)"
all_say_written() { says_written plain && says_written capped && says_written side; }
wait_until 15 all_say_written
for p in plain capped side; do
  check "a. $p: targetLimit = Σ its limits.cpu, \"limits\" = each container's, a cap, no reason" says_written "$p"
done
capped_cap() { jq -e '.cap == "max-cpu" and .capLimit == "1000m" and .targetLimit == "1000m" and .caps["max-cpu"] == "1000m"' <<<"$(annotation capped)" >/dev/null; }
WHY="capped: $(annotation capped)"
check "a. the max-cpu pod's annotation says cap max-cpu, capLimit 1000m" capped_cap

# ------------------------------------------------ b. a held write says why
held_says() {
  jq -e '.reason == "pressure" and .request == "1000m" and (.targetLimit[:-1] | tonumber) > 1500' \
    <<<"$(annotation held)" >/dev/null
}
wait_until 15 held_says
WHY="held: $(annotation held); limit $(cpu_limit "$NS" held)"
held_ok() { held_says && limit_is "$NS" held 1500m; }
check "b. DiskPressure holds the increase: the annotation says \"reason\":\"pressure\", the limit stays 1500m" \
  held_ok

# ------------------------------------------------ d. steady state: no write
# Nothing re-plans a quiet node by itself; a Node label does (design §1.1's pools), and moves no
# figure: both nodes are touched inside the window, so the held pod's annotation is computed
# again and must not be sent again.
quiet_for 10 60 "$MPORT" >/dev/null || echo "note: the controller still wrote 60 s after the pods settled"
decisions() { grep -c "msg=decision node=$N1 pod=$NS/held " "$WORK/controller.log"; }
d0=$(decisions)
m_s=$(audit_mark)
t0=$(now_ms)
sleep 5
k label node "$N0" "$N1" "e2e-status-touch=$S" >/dev/null
sleep $((STEADY_S - 5))
audit_writes "$m_s" "$ID" >"$WORK/steady.writes"
WHY="$(wc -l <"$WORK/steady.writes") writes by $ID: $(head -5 "$WORK/steady.writes" | tr '\n' ';')"
check "d. steady state: zero writes by the controller in $(( ($(now_ms) - t0) / 1000 )) s (audit), the held pod included" \
  [ ! -s "$WORK/steady.writes" ]
WHY="decisions for the held pod: $d0 before the label, $(decisions) after"
check "d. the label re-planned the held pod's node inside the window (decision log)" [ "$(decisions)" -gt "$d0" ]

# ------------------------------------------------ c. dry-run: the would-be limit
k patch headroomconfig cluster --type merge -p '{"spec":{"dryRun":true}}' >/dev/null
mknode "$N2" 4
mkpod "$NS" dry1 "$N2" 300m
mkpod "$NS" dry2 "$N2" 700m
dry_annotated() { annotation dry1 | matches '"dryRun":true' && annotation dry2 | matches '"dryRun":true'; }
wait_until 30 dry_annotated
plan_target() { # pod -> the plan's targetMilli
  "$HEADROOM" plan -n "$NS" -o json 2>/dev/null |
    jq -r --arg p "$1" '[.nodes[].pods[] | select(.name == $p)][0] | "\(.targetMilli)m"'
}
dry_ok() { # pod
  local got want
  got=$(annotation "$1" | jq -r .targetLimit 2>/dev/null)
  want=$(plan_target "$1")
  WHY="annotation targetLimit '$got', plan '$want', limit '$(cpu_limit "$NS" "$1")'"
  [ -n "$got" ] && [ "$got" = "$want" ] && [ -z "$(cpu_limit "$NS" "$1")" ]
}
for p in dry1 dry2; do
  check "c. dry-run: $p's targetLimit is what \`headroom plan -o json\` would write, and nothing is" dry_ok "$p"
done

# ---------------------------------- e. dry-run writes an annotation when a live run would write
# dry3 (20m) lands beside dry1 (300m, 1200m) and dry2 (700m, 2800m) on 4 cores: their would-be
# limits fall by about 2 %, within the deadband (shrink 5 %), so a live run would write no limit
# and dry-run rewrites neither annotation, although their figures (slack, factor) changed. dry4
# (400m) then moves them by 28 %: both follow the plan again.
m_e=$(audit_mark)
mkpod "$NS" dry3 "$N2" 20m
wait_until 30 eval 'annotation dry3 | matches "\"dryRun\":true"'
quiet_for 5 30 "$MPORT" >/dev/null
wn() { audit_writes "$m_e" "$ID" ".objectRef.name == \"$1\"" | wc -l; }
WHY="annotation writes: dry1 $(wn dry1), dry2 $(wn dry2), dry3 $(wn dry3); plan: dry1 $(plan_target dry1), dry2 $(plan_target dry2)"
check "e. dry-run: a neighbour moving dry1's and dry2's would-be limits within the deadband rewrites neither (audit)" \
  eval '[ "$(wn dry1)" = 0 ] && [ "$(wn dry2)" = 0 ] && [ "$(wn dry3)" -ge 1 ]'
mkpod "$NS" dry4 "$N2" 400m
for p in dry1 dry2; do
  check "e. dry-run: a neighbour moving $p's would-be limit past the deadband: its annotation follows the plan" \
    wait_until 30 dry_ok "$p"
done

finish
