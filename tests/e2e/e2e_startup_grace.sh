#!/usr/bin/env bash
# e2e_startup_grace.sh — the startup grace (design §2.12): a pod that opts in keeps its birth
# limit until it is Ready, or for spec.startupGrace.seconds from its start, then converges.
#
# On a simulated kwok node (4 CPUs), with the controller as the chart's least-privilege user,
# spec.startupGrace.seconds 30 and debouncePeriod 1s, three pods of one shape (request 500m, born
# at limit 1000m): `plain` is not opted in; `late` opts in (annotation
# kube-headroom.dev/startup-grace: "true") and turns Ready at a time T the test sets once the
# checks below are done (kwok's pod-ready-after Stage, annotation kwok.x-k8s.io/ready-after: its
# readiness probe passes then); `never` opts in and never turns Ready. The controller raises plain at once (it plans the
# node); until T the audit record shows no resize of late or never, both keep 1000m, `explain` and
# `plan` show the grace and its end, and headroom_pod_startup_grace_until_seconds is set for them.
# After T, late's resize (from the audit record) lands within debounce (1 s, +50% jitter) + 1 s of
# T and its limit is plain's; never's grace ends at its startTime + 30 s and its resize lands within
# the same margin of that (the controller's timer: nothing else happens then). Requests never move. Prints PASS/FAIL per check and
# "N passed, N failed"; exits non-zero on a failure. Needs `tests/cluster/cluster.sh up`.
set -uo pipefail
# shellcheck source=../lib/common.sh
. "$(dirname "${BASH_SOURCE[0]}")/../lib/common.sh"
MPORT=${HEADROOM_E2E_GRACE_PORT:-$(free_port)}
WORK=$(mktemp -d /tmp/headroom-e2e.XXXXXX)
ID=headroom-e2e-grace
NS=e2e-grace-$S NODE=e2e-grace-n-$S
MARGIN_MS=2500 # debouncePeriod 1 s with its +50% jitter, and 1 s

cleanup() { cleanup_common; }
trap cleanup EXIT

ready() { [ "$(k -n "$NS" get pod "$1" -o jsonpath='{.status.conditions[?(@.type=="Ready")].status}')" = True ]; }
# The API server writes 1000m as "1".
limit_moved() { [ -n "$(cpu_limit "$NS" "$1")" ] && [ "$(cpu_limit "$NS" "$1")" != 1 ]; }
request_of() { k -n "$NS" get pod "$1" -o jsonpath='{.spec.containers[0].resources.requests.cpu}'; }
resizes() { # mark pod -> our resizes of the pod after the mark, "time ... code" lines
  audit_writes "$1" "$ID" ".objectRef.resource == \"pods\" and .objectRef.name == \"$2\" and .objectRef.subresource == \"resize\""
}
first_resize_ms() { # mark pod -> the API server's receipt of our first resize of the pod, ms
  local t
  t=$(resizes "$1" "$2" | head -1 | cut -d' ' -f1)
  [ -n "$t" ] && echo $(($(date -d "$t" +%s%N) / 1000000))
}
series() { metric "headroom_pod_startup_grace_until_seconds{namespace=\"$NS\",pod=\"$1\",node=\"$NODE\"}"; }
grace_pod() { # name ready-after: the pod, opted into the grace, Ready at that time
  pod_manifest "$NS" "$1" "$NODE" 500m 1000m \
    "annotations: {kube-headroom.dev/startup-grace: \"true\", kwok.x-k8s.io/ready-after: \"$2\"}" |
    k apply -f - >/dev/null
}

require_cluster
mknode "$NODE" 4
mark=$(audit_mark)
start_controller --manage kube-headroom.dev/e2e-grace --spec "startupGrace: {seconds: 30}" \
  --spec "debouncePeriod: 1s" || { fail "controller start" "$START_WHY"; finish; exit; }
LATER=$(date -u -d "+10 minutes" +%Y-%m-%dT%H:%M:%SZ)
grace_pod late "$LATER"
grace_pod never "$LATER"
mkpod "$NS" plain "$NODE" 500m 1000m
wait_until 30 running "$NS" late && wait_until 30 running "$NS" never && wait_until 30 running "$NS" plain
wait_until 20 limit_moved plain
WHY="plain $(cpu_limit "$NS" plain), late $(cpu_limit "$NS" late) (Ready: $(ready late && echo yes || echo no)), never $(cpu_limit "$NS" never)"
# (each read retried for 5 s: the machine may be loaded)
kept() { limit_moved plain && ! ready late && limit_is "$NS" late 1 && limit_is "$NS" never 1; }
check "the controller plans the node: plain (not opted in) gets its ceiling, late and never keep 1000m" \
  wait_until 5 kept

explained() {
  out=$("$HEADROOM" explain late -n "$NS" --kubeconfig "$USER_KC" 2>&1)
  echo "$out" | matches "startup grace (kube-headroom.dev/startup-grace): until Ready or 20" &&
    echo "$out" | matches "its current limit 1 is kept"
}
out=""
explained || explained || explained
WHY="explain said: $(echo "$out" | grep -A1 "startup grace" || echo "$out")"
check "explain shows the grace, until Ready or when it ends" explained
pj=$("$HEADROOM" plan --kubeconfig "$USER_KC" -n "$NS" -o json 2>&1)
WHY="plan said: $(echo "$pj" | jq -c '[.. | objects | select(.name? == "late" or .name? == "never") | .startupGraceUntil?]' 2>&1 | head -c 300)"
check "plan -o json gives late and never the end of their grace" \
  eval '[ "$(echo "$pj" | jq "[.. | objects | select((.name? == \"late\" or .name? == \"never\") and .startupGraceUntil? != null)] | length")" -ge 2 ]'
never_start=$(k -n "$NS" get pod never -o jsonpath='{.status.startTime}')
NEVER_END=$(($(date -d "$never_start" +%s) + 30))
WHY="series late $(series late), never $(series never); never started $never_start"
check "headroom_pod_startup_grace_until_seconds: the end of each grace (start + 30 s)" \
  eval '[ "$(series never)" = "$NEVER_END" ] && [ "$(series late)" -gt 0 ]'

# Ready at T, set now (kwok's Stage waits until then): late converges within the margin; until
# then nothing of it was written.
T=$(date -u -d "+3 seconds" +%Y-%m-%dT%H:%M:%SZ)
T_MS=$(($(date -d "$T" +%s) * 1000))
k -n "$NS" annotate pod late --overwrite "kwok.x-k8s.io/ready-after=$T" >/dev/null
wait_until 30 ready late
wait_until 10 limit_moved late
late_ms=$(first_resize_ms "$mark" late)
WHY="T $T; its resizes: $(resizes "$mark" late | tr '\n' ';'); first $((${late_ms:-0} - T_MS)) ms after T"
echo "figure: late's resize $((${late_ms:-0} - T_MS)) ms after T (its Ready time)"
check "late kept its birth limit until Ready (no resize before T), then converged within 2.5 s" \
  eval '[ -n "$late_ms" ] && [ "$late_ms" -ge "$T_MS" ] && [ $((late_ms - T_MS)) -le $MARGIN_MS ]'
WHY="late $(cpu_limit "$NS" late), plain $(cpu_limit "$NS" plain)"
check "after the grace late's limit is its slack ceiling (plain's)" \
  eval '[ "$(cpu_limit "$NS" late)" = "$(cpu_limit "$NS" plain)" ]'

# never turns Ready: its grace ends at its start + 30 s, on the controller's timer.
wait_until 30 limit_moved never
never_ms=$(first_resize_ms "$mark" never)
WHY="its grace ended $(date -u -d "@$NEVER_END" +%H:%M:%S); resizes: $(resizes "$mark" never | tr '\n' ';'); first $((${never_ms:-0} - NEVER_END * 1000)) ms after"
echo "figure: never's resize $((${never_ms:-0} - NEVER_END * 1000)) ms after its grace ended; $SECONDS s so far"
check "never (not Ready) kept 1000m for the 30 s, then converged within 2.5 s of the end" \
  eval '[ -n "$never_ms" ] && [ "$never_ms" -ge $((NEVER_END * 1000)) ] && [ $((never_ms - NEVER_END * 1000)) -le $MARGIN_MS ]'
WHY="requests: $(request_of late) $(request_of never) $(request_of plain); series $(series late) $(series never)"
check "requests never move; the grace series are gone" \
  eval '[ "$(request_of late)$(request_of never)$(request_of plain)" = 500m500m500m ] && wait_until 5 eval "[ \"\$(series late)\$(series never)\" = 00 ]"'
n=$(grep -c "msg=decision" "$WORK/controller.log")
WHY="$n decisions logged for 3 pods over the run"
check "no busy loop: the grace's timer runs the node once per end, not continuously" [ "$n" -lt 200 ]
finish
