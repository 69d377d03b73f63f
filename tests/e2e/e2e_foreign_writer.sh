#!/usr/bin/env bash
# e2e_foreign_writer.sh — never a write war over limits.cpu (design §4, rule 20): a pod whose
# container CPU limit another field manager resized is left to it.
#
# On a simulated kwok node, with the controller as the chart's least-privilege user: two pods
# created with a CPU limit (their creator owns limits.cpu through the main resource: not another
# writer) both get their limits from the controller. A second field manager (`other-resizer`)
# then resizes p1's limit through the resize subresource; a neighbour arrives and moves every
# target on the node: p2's limit moves, while the audit record shows no write of ours to p1 after
# the other resize, p1 keeps the other manager's limit, `explain` and `plan` say
# `foreign-writer` with the manager's name, one Warning event ForeignWriter names it, and
# headroom_pod_foreign_writer{manager} is 1. Removing the other manager's managedFields entry
# hands the limit back: p1 is managed again.
#
# VerticalPodAutoscalers (design §4): the controller starts with the VPA CRD not installed (it is
# ready, and says the kind is not served); the CRD of the pinned module (`cluster.sh tool vpa-crd`)
# is installed while it runs, with no restart: a Deployment of 2 replicas under a VPA in
# RequestsAndLimits/Auto (its defaults) is foreign-writer naming "VerticalPodAutoscaler NS/NAME"
# with no write of ours (audit), while one under a RequestsOnly VPA is managed; deleting the first
# VPA hands its pods back; made again, it holds them again, and removing the CRD itself hands them
# back. Prints PASS/FAIL per check and "N passed, N failed"; exits non-zero on a failure. Needs
# `tests/cluster/cluster.sh up`.
set -uo pipefail
# shellcheck source=../lib/common.sh
. "$(dirname "${BASH_SOURCE[0]}")/../lib/common.sh"
MPORT=${HEADROOM_E2E_FOREIGN_PORT:-$(free_port)}
WORK=$(mktemp -d /tmp/headroom-e2e.XXXXXX)
ID=headroom-e2e-fw
NS=e2e-fw-$S NODE=e2e-fw-n-$S OTHER=other-resizer

VPA_CRD=verticalpodautoscalers.autoscaling.k8s.io
cleanup() {
  k delete crd "$VPA_CRD" --ignore-not-found --wait=false >/dev/null 2>&1
  cleanup_common
}
trap cleanup EXIT

has_limit() { [ -n "$(cpu_limit "$NS" "$1")" ] && [ "$(cpu_limit "$NS" "$1")" != "$2" ]; }
limit_moved() { [ "$(cpu_limit "$NS" "$1")" != "$2" ]; }
foreign_events() { # pod -> ForeignWriter events about it
  k -n "$NS" get events.events.k8s.io -o json 2>/dev/null |
    jq --arg p "$1" '[.items[] | select(.regarding.name == $p and .reason == "ForeignWriter")] | length'
}
has_event() { [ "$(foreign_events "$1")" -ge 1 ]; }
series() { metric "headroom_pod_foreign_writer{namespace=\"$NS\",pod=\"$1\",node=\"$NODE\",manager=\"$OTHER\"}"; }
has_series() { [ "$(series "$1")" = 1 ]; }
no_series() { [ "$(series "$1")" = 0 ]; }
ours_to() { # mark pod -> our writes to the pod's resize subresource after the mark
  audit_write_count "$1" "$ID" ".objectRef.resource == \"pods\" and .objectRef.name == \"$2\" and .objectRef.subresource == \"resize\""
}

require_cluster
crd_dir=$("$ROOT/tests/cluster/cluster.sh" tool vpa-crd) || { fail "the VPA CRD (cluster.sh tool vpa-crd)"; finish; exit; }
k delete crd "$VPA_CRD" --ignore-not-found >/dev/null 2>&1
mknode "$NODE" 8
start_controller --manage kube-headroom.dev/e2e-fw || { fail "controller start" "$START_WHY"; finish; exit; }
WHY="controller log: $(grep -F 'resource=verticalpodautoscalers' "$WORK/controller.log" | head -2)"
check "without the VPA CRD the controller is ready and says the kind is not served" \
  wait_until 10 grep -qF 'resource=verticalpodautoscalers msg="not served (404)' "$WORK/controller.log"
mkpod "$NS" p1 "$NODE" 500m 600m
mkpod "$NS" p2 "$NODE" 500m 600m
wait_until 60 running "$NS" p1 && wait_until 60 running "$NS" p2
wait_until 30 has_limit p1 600m && wait_until 30 has_limit p2 600m
l1=$(cpu_limit "$NS" p1) l2=$(cpu_limit "$NS" p2)
WHY="p1 $l1, p2 $l2 (both created at 600m, their creator owns limits.cpu)"
check "the creator's ownership is not another writer: both pods get their limits" \
  [ "$l1" != 600m -a "$l2" != 600m -a -n "$l1" -a -n "$l2" ]

# Another manager resizes p1 (an update through the resize subresource takes the field from us).
k -n "$NS" patch pod p1 --subresource resize --field-manager "$OTHER" \
  -p '{"spec":{"containers":[{"name":"app","resources":{"limits":{"cpu":"1234m"}}}]}}' >/dev/null
mark=$(audit_mark)
wait_until 30 has_event p1
# A neighbour moves every target on the node: p2's moves, p1's would.
mkpod "$NS" p3 "$NODE" 3
wait_until 60 running "$NS" p3
wait_until 30 limit_moved p2 "$l2"
sleep 3 # a debounce and a reconcile more, for a write to p1 to show up if it were sent
WHY="p2 $l2 -> $(cpu_limit "$NS" p2)"
check "the controller still writes the others: p2's limit moved" limit_moved p2 "$l2"
n=$(ours_to "$mark" p1)
WHY="$n writes of ours to p1's resize after the other manager's; p1's limit $(cpu_limit "$NS" p1)"
check "no write war: nothing more written to p1, its limit is the other manager's" \
  [ "$n" -eq 0 -a "$(cpu_limit "$NS" p1)" = 1234m ]

out=$("$HEADROOM" explain p1 -n "$NS" --kubeconfig "$USER_KC" 2>&1)
WHY="explain said: $(echo "$out" | head -1; echo "$out" | grep -F "$OTHER")"
check "explain says foreign-writer with the manager's name" \
  eval 'head -1 <<<"$out" | matches "foreign-writer" && echo "$out" | matches -F "field manager \"$OTHER\""'
pj=$("$HEADROOM" plan --kubeconfig "$USER_KC" -n "$NS" -o json 2>&1)
WHY="plan said: $(echo "$pj" | jq -c '[.. | objects | select(.name? == "p1") | .reason?]' 2>&1 | head -c 300)"
check "plan -o json gives p1 the reason foreign-writer" \
  eval 'echo "$pj" | jq -e "[.. | objects | select(.name? == \"p1\") | .reason?] | index(\"foreign-writer\")" >/dev/null'
WHY="$(foreign_events p1) ForeignWriter events; series $(series p1)"
check "one Warning event ForeignWriter (not one per reconcile) and headroom_pod_foreign_writer{manager}" \
  [ "$(foreign_events p1)" -eq 1 -a "$(series p1)" = 1 ]

# Handing the field back: remove the other manager's managedFields entry.
idx=$(k -n "$NS" get pod p1 -o json --show-managed-fields | jq --arg m "$OTHER" '[.metadata.managedFields[].manager] | index($m)')
k -n "$NS" patch pod p1 --type=json -p "[{\"op\":\"remove\",\"path\":\"/metadata/managedFields/$idx\"}]" >/dev/null
wait_until 30 limit_moved p1 1234m
WHY="p1's limit $(cpu_limit "$NS" p1) after removing entry $idx; series $(series p1)"
check "removing the other manager's entry hands the limit back: p1 is written again" \
  eval 'limit_moved p1 1234m && wait_until 10 no_series p1'

# ---------------------------------------------------------- VerticalPodAutoscalers
vpa() { # name values: a VPA on Deployment name (updateMode Auto by default)
  cat <<YAML
apiVersion: autoscaling.k8s.io/v1
kind: VerticalPodAutoscaler
metadata: {name: $1, namespace: $NS}
spec:
  targetRef: {apiVersion: apps/v1, kind: Deployment, name: $1}
  resourcePolicy:
    containerPolicies: [{containerName: "*", controlledValues: $2}]
YAML
}
deploy() { # name: 2 replicas on $NODE, created at 200m/300m
  cat <<YAML
apiVersion: apps/v1
kind: Deployment
metadata: {name: $1, namespace: $NS}
spec:
  replicas: 2
  selector: {matchLabels: {app: $1}}
  template:
    metadata: {labels: {app: $1}}
    spec:
      nodeSelector: {kubernetes.io/hostname: $NODE}
      containers:
      - name: app
        image: registry.invalid/app:1
        resources: {requests: {cpu: 200m, memory: 64Mi}, limits: {cpu: 300m}}
YAML
}
pods_of() { k -n "$NS" get pods -l "app=$1" -o jsonpath='{range .items[*]}{.metadata.name}{"\n"}{end}'; }
# The manager label holds a space: metric() splits on it, so the line is matched whole.
vpa_series() { # pod -> 1 while headroom_pod_foreign_writer names the VPA vw for it, else 0 ("none": no scrape)
  local page
  page=$(curl -sf "http://127.0.0.1:$MPORT/metrics") || { echo none; return; }
  grep -cxF "headroom_pod_foreign_writer{namespace=\"$NS\",pod=\"$1\",node=\"$NODE\",manager=\"VerticalPodAutoscaler $NS/vw\"} 1" <<<"$page"
}
held() { [ "$(vpa_series "$1")" = 1 ]; }
not_held() { [ "$(vpa_series "$1")" = 0 ]; }
# The CRD installed while the controller runs: its watch asks again every 30 s, and lists it
# before any VPA or pod of this part exists (else vw's pods could be written meanwhile).
k apply -f "$crd_dir/crd.yaml" >/dev/null && k wait --for condition=established "crd/$VPA_CRD" --timeout=30s >/dev/null ||
  { fail "the VPA CRD installs"; finish; exit; }
vpa_listed() { grep -qF 'resource=verticalpodautoscalers msg="listed at resourceVersion' "$WORK/controller.log"; }
t0=$(date +%s)
wait_until 45 vpa_listed
WHY="not listed $(( $(date +%s) - t0 )) s after the install; log: $(grep -F 'resource=verticalpodautoscalers' "$WORK/controller.log" | tail -2)"
check "the VPA CRD installed while the controller runs is listed within 30 s, no restart" vpa_listed
all_running() { [ "$(k -n "$NS" get pods -l "app=$1" -o jsonpath='{range .items[*]}{.status.phase}{"\n"}{end}' | grep -c '^Running$')" = 2 ]; }
all_moved() { local p; for p in $(pods_of "$1"); do limit_moved "$p" 300m || return 1; done; }
vmark=$(audit_mark)
{ vpa vw RequestsAndLimits; echo ---; vpa vr RequestsOnly; echo ---; deploy vw; echo ---; deploy vr; } | k apply -f - >/dev/null
wait_until 60 all_running vw && wait_until 60 all_running vr
wait_until 30 all_moved vr
WHY="vr's limits: $(for p in $(pods_of vr); do printf '%s ' "$(cpu_limit "$NS" "$p")"; done)"
check "a RequestsOnly VPA's pods are managed: their limits are raised" all_moved vr
w1=$(pods_of vw | head -1)
wait_until 45 has_event "$w1"
sleep 2 # a debounce and a reconcile more, for a write to show up if it were sent
n=0
for p in $(pods_of vw); do n=$((n + $(ours_to "$vmark" "$p"))); done
WHY="$n writes of ours to vw's pods; limits $(for p in $(pods_of vw); do printf '%s ' "$(cpu_limit "$NS" "$p")"; done)"
check "a RequestsAndLimits VPA's pods get no write of ours (audit) and keep 300m" \
  eval '[ "$n" -eq 0 ] && ! all_moved vw && [ "$(cpu_limit "$NS" "$w1")" = 300m ]'
out=$("$HEADROOM" explain "$w1" -n "$NS" --kubeconfig "$USER_KC" 2>&1)
WHY="explain said: $(echo "$out" | head -1; echo "$out" | grep -F VerticalPodAutoscaler)"
check "explain says foreign-writer naming the VPA" \
  eval 'head -1 <<<"$out" | matches "foreign-writer" && echo "$out" | matches -F "VerticalPodAutoscaler $NS/vw writes"'
vs=$(vpa_series "$w1")
WHY="$(foreign_events "$w1") ForeignWriter events; series $vs"
check "one Warning event ForeignWriter and headroom_pod_foreign_writer name the VPA" \
  [ "$(foreign_events "$w1")" -eq 1 -a "$vs" = 1 ]
k -n "$NS" delete verticalpodautoscaler vw >/dev/null
wait_until 30 all_moved vw
WHY="vw's limits after the delete: $(for p in $(pods_of vw); do printf '%s ' "$(cpu_limit "$NS" "$p")"; done)"
check "deleting the VPA hands its pods back: their limits are written" all_moved vw
vpa vw RequestsAndLimits | k apply -f - >/dev/null
wait_until 30 held "$w1"
WHY="series $(vpa_series "$w1") for $w1 after the VPA was made again"
check "the VPA made again holds its pods again" held "$w1"
# Removing the CRD deletes its VPAs (their DELETED events hand the pods back), then ends the
# watch: the controller finds the kind absent again, after asking once more 30 s later (a kind
# that was served is not taken as gone on one 404).
absences() { grep -cF 'resource=verticalpodautoscalers msg="not served (404)' "$WORK/controller.log"; }
crd_gone_seen() { not_held "$w1" && [ "$(absences)" -ge 2 ]; }
t0=$(date +%s)
k delete crd "$VPA_CRD" --wait=true --timeout=60s >/dev/null 2>&1
wait_until 90 crd_gone_seen
WHY="series $(vpa_series "$w1") for $w1, $(absences) absences $(( $(date +%s) - t0 )) s after the CRD's removal; log: $(grep -F 'resource=verticalpodautoscalers' "$WORK/controller.log" | tail -3)"
check "removing the VPA CRD hands its pods back and is seen as absent, with no restart" crd_gone_seen
finish
