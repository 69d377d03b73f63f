#!/usr/bin/env bash
# e2e_design.sh — the rest of the design, end to end: what only the real API server (its
# LimitRanger, its events) can show, with `headroom run` (controller
# and webhook) as the chart's least-privilege identity. The limits of design §2.7's examples, of
# a pod capped by its node's allocatable (design §2.3, with `explain` naming the cap) and of a
# neighbour of a terminating pod (design §3.1) are policy scenarios: tests/scenarios/design-*.yaml.
# Each check here is named by its item:
#   1. LimitRange in a managed namespace, through the real LimitRanger admission plugin
#      (design §3.4): a Container max.cpu, a Container maxLimitRequestRatio.cpu and a Pod
#      max.cpu each clamp the limits the controller writes, and the API server accepts them
#      (audit record: every pods/resize of ours answered 200; no ResizeForbidden/ResizeSkipped,
#      a CPULimitAdjusted each). The webhook's birth limit is clamped too (design §8): under the
#      ratio and the Pod max, a limit of request × initialMultiplier would be refused by
#      LimitRanger, so the pod would not exist. (Under a Container max the webhook never acts:
#      LimitRanger runs first and defaults a missing limit to the max.)
#   4. The success path (design §7, §9.1): on design §2.7's node (16 cores; 500m, 1500m, 6000m;
#      its limits are tests/scenarios/design-floor.yaml's, here a precondition) the 1500m pod's
#      CPULimitAdjusted reads "1500m → 3000m (factor 2.00, slack 8/16 cores)", with the Go
#      version's action "Resizing" (design §9.2), and
#      its live kube-headroom.dev/status annotation says what `headroom plan -o json` and
#      `headroom explain` say of its node.
# (Items 2, the allocatable as the cap, and 3, a terminating pod still booking its node, are
# tests/scenarios/design-allocatable-cap.yaml and design-terminating.yaml.)
# Every pod of 1 and 4 exists before the controller starts, so each node is computed once with
# all its pods (no intermediate limit in an event). ~15 s.
set -uo pipefail
# shellcheck source=../lib/common.sh
. "$(dirname "${BASH_SOURCE[0]}")/../lib/common.sh"
MPORT=${HEADROOM_E2E_DESIGN_METRICS_PORT:-$(free_port)}
WHPORT=${HEADROOM_E2E_DESIGN_WEBHOOK_PORT:-$(free_port "$MPORT")}
WORK=$(mktemp -d /tmp/headroom-e2e-design.XXXXXX)
ID=headroom-e2e-design
RUN=e2edesign$S
WH_NAME=kube-headroom-e2e-design-$S
NC=e2e-dc-$S NR=e2e-dr-$S NP=e2e-dp-$S NA=e2e-da-$S

cleanup() {
  stop_controller KILL
  k delete mutatingwebhookconfiguration "$WH_NAME" --ignore-not-found >/dev/null 2>&1
  delete_objects
  k delete headroomconfig cluster --ignore-not-found >/dev/null 2>&1
  remove_identity "$ID"
  if [ "$failed" -gt 0 ]; then echo "--- controller log (tail)"; tail -n 40 "$WORK/controller.log"; fi
  rm -rf "$WORK"
}
trap cleanup EXIT

events_of() { # ns pod reason -> the notes of its events of that reason, one a line, oldest first
  k -n "$1" get events.events.k8s.io -o json 2>/dev/null |
    jq -r --arg p "$2" --arg r "$3" '[.items[] | select(.regarding.name == $p and .reason == $r)]
      | sort_by(.metadata.creationTimestamp) | .[].note'
}
lim() { # ns pod want [container]: limit_is, saying what it saw
  local got
  got=$(cpu_limit "$1" "$2" "${4:-app}")
  WHY="$1/$2 limit '$got', want $3"
  [ "$got" = "$3" ]
}
status_of() { k -n "$1" get pod "$2" -o jsonpath='{.metadata.annotations.kube-headroom\.dev/status}' 2>/dev/null; }
limits_of() { # ns pod -> "a/b" of its two containers' CPU limits
  k -n "$1" get pod "$2" -o jsonpath='{.spec.containers[0].resources.limits.cpu}/{.spec.containers[1].resources.limits.cpu}' 2>/dev/null
}
two_pod() { # ns name node req-a req-b [lim-a lim-b]: the manifest of a pod of two containers, a and b
  local la="" lb=""
  [ -n "${6:-}" ] && la="limits: {cpu: \"$6\"}" && lb="limits: {cpu: \"$7\"}"
  cat <<POD
apiVersion: v1
kind: Pod
metadata: {name: $2, namespace: $1}
spec:
  nodeName: $3
  containers:
  - name: a
    image: registry.invalid/app:1
    resources:
      requests: {cpu: "$4", memory: 32Mi}
      $la
  - name: b
    image: registry.invalid/app:1
    resources:
      requests: {cpu: "$5", memory: 32Mi}
      $lb
POD
}

require_cluster
install_identity "$ID"
k apply -f - >/dev/null <<EOF
apiVersion: kube-headroom.dev/v1alpha1
kind: HeadroomConfig
metadata: {name: cluster}
spec:
  dryRun: false
  webhook: {enabled: true, initialMultiplier: "3"}
EOF
# Few calls, each one apply of many objects: on a loaded machine each kubectl costs seconds.
for ns in "$NC" "$NR" "$NP" "$NA"; do mkns_nowait "$ns" managed kube-headroom.dev/e2e-run="$RUN"; done
lr() { # ns type key value
  printf -- '---\napiVersion: v1\nkind: LimitRange\nmetadata: {name: cpu, namespace: %s}\nspec:\n  limits: [{type: %s, %s: {cpu: "%s"}}]\n' "$@"
}
{
  lr "$NC" Container max 1500m
  lr "$NR" Container maxLimitRequestRatio 2
  lr "$NP" Pod max 1200m
} | k apply -f - >/dev/null
for n in dc:8 dr:8 dp:8 dex:16 dborn:8; do
  NODES+=("e2e-${n%%:*}-$S")
  printf -- '---\n'
  node_manifest "e2e-${n%%:*}-$S" "${n#*:}"
done | k apply -f - >/dev/null
for ns in "$NC" "$NR" "$NP" "$NA"; do wait_until 30 k -n "$ns" get serviceaccount default; done

# ------------------------------------------------------------ the pods, before the controller
{
  # 1. Each alone on an 8-core node, so unclamped each would get min(10 × r, 8 cores):
  pod_manifest "$NC" c e2e-dc-$S 200m 400m             # 2000m unclamped; Container max 1500m
  echo ---; pod_manifest "$NR" r e2e-dr-$S 200m 250m   # 2000m unclamped; 2 × 200m = 400m
  echo ---; two_pod "$NP" p e2e-dp-$S 200m 300m 220m 330m # 5000m unclamped; Pod max 1200m, 2:3 = 480m/720m
  # 4. Design §2.7: 16 cores, 500m + 1500m + 6000m, S = M = 8000m, F = 2 (the 500m pod: floor).
  echo ---; pod_manifest "$NA" small e2e-dex-$S 500m
  echo ---; pod_manifest "$NA" web e2e-dex-$S 1500m 1500m
  echo ---; pod_manifest "$NA" large e2e-dex-$S 6000m
} | k apply -f - >/dev/null

# ------------------------------------------------------------ the controller and the webhook
webhook_ca "$WORK"
webhook_cert "$WORK/certs" "$WORK" >/dev/null
MARK=$(audit_mark)
start_controller --webhook-addr "127.0.0.1:$WHPORT" --webhook-cert-dir "$WORK/certs" ||
  { fail "the controller and webhook are ready" "no /readyz on 127.0.0.1:$MPORT"; finish; exit 1; }
webhook_register "$WH_NAME" "$WHPORT" "$WORK" "$RUN" 2>"$WORK/wh.err" ||
  { fail "the webhook registration" "$(cat "$WORK/wh.err")"; finish; exit 1; }

# ---------------------------------------------------- 1. LimitRange, the controller's writes
check "1a. LimitRange Container max.cpu 1500m: the 200m pod's limit is clamped to 1500m (not 2000m)" \
  wait_until 20 lim "$NC" c 1500m
check "1b. LimitRange maxLimitRequestRatio.cpu 2: the 200m pod's limit is clamped to 400m" \
  wait_until 20 lim "$NR" r 400m
p_ok() { local got; got=$(limits_of "$NP" p); WHY="limits '$got'"; [ "$got" = 480m/720m ]; }
check "1c. LimitRange Pod max.cpu 1200m: the 200m+300m pod's limits are clamped to 480m/720m" wait_until 20 p_ok
accepted() { # ns pod: every pods/resize of ours answered 200, a CPULimitAdjusted, no refusal reported
  local codes ok refused
  codes=$(audit_since "$MARK" "select(.user.username == \"$ID\" and .objectRef.subresource == \"resize\"
    and .objectRef.namespace == \"$1\" and .objectRef.name == \"$2\") | .responseStatus.code" | sort | uniq -c | tr -s ' ')
  k -n "$1" get events.events.k8s.io -o json >"$WORK/ev.json" 2>/dev/null
  ok=$(jq -r --arg p "$2" '.items[] | select(.regarding.name == $p and .reason == "CPULimitAdjusted") | .note' "$WORK/ev.json")
  refused=$(jq -r --arg p "$2" '.items[] | select(.regarding.name == $p and (.reason == "ResizeForbidden" or .reason == "ResizeSkipped"))
    | "\(.reason): \(.note)"' "$WORK/ev.json")
  WHY="$1/$2: resize answers (count code):${codes:- none}; CPULimitAdjusted: '${ok//$'\n'/;}'; refusals: '${refused//$'\n'/;}'"
  [ -n "$codes" ] && ! grep -qv ' 200$' <<<"$codes" && [ -n "$ok" ] && [ -z "$refused" ]
}
for pod in "$NC c" "$NR r" "$NP p"; do
  # shellcheck disable=SC2086 # "ns pod"
  check "1d. LimitRanger accepted the clamped resize of ${pod#* } (audit: 200 only; CPULimitAdjusted, no ResizeForbidden)" \
    accepted $pod
done
denied=$(metric 'headroom_resizes_total{result="quota-denied"}')/$(metric 'headroom_resizes_total{result="invalid"}')
WHY="quota-denied/invalid = $denied"
check "1e. no resize refused by the API server (headroom_resizes_total quota-denied 0, invalid 0)" [ "$denied" = 0/0 ]

# ---------------------------------------------------- 1. LimitRange, the webhook's birth limits
# The registration takes effect within a moment: wait until a dry-run create comes back mutated.
born() { # ns name node req [req-b]: create it; prints its CPU limits as created ("a" or "a/b")
  if [ $# -eq 5 ]; then two_pod "$@"; else pod_manifest "$@"; fi | k apply -f - >/dev/null 2>"$WORK/born.err" || return 1
  k -n "$1" get pod "$2" -o jsonpath='{range .spec.containers[*]}{.resources.limits.cpu}{"/"}{end}' | sed 's#/$##'
}
probe() { [ "$(k -n "$NA" create --dry-run=server -o jsonpath='{.spec.containers[0].resources.limits.cpu}' -f - 2>/dev/null <<EOF
{"apiVersion":"v1","kind":"Pod","metadata":{"name":"probe"},"spec":{"containers":[{"name":"a","image":"x","resources":{"requests":{"cpu":"100m"}}}]}}
EOF
)" = 300m ]; }
WHY="a 100m pod in $NA is not born with 300m"
check "1f. the webhook answers for this run's namespaces (100m born with 3 × 100m = 300m)" wait_until 30 probe
got=$(born "$NR" rb e2e-dborn-$S 200m)
WHY="created: '${got}' $(head -c 300 "$WORK/born.err")"
check "1g. webhook, maxLimitRequestRatio 2: a 200m pod is born with 400m (not 3 × 200m), and LimitRanger admits it" \
  [ "$got" = 400m ]
got=$(born "$NP" pb e2e-dborn-$S 200m 300m)
WHY="created: '${got}' $(head -c 300 "$WORK/born.err")"
check "1h. webhook, Pod max 1200m: a 200m+300m pod is born with 480m/720m (pro-rata, not 600m/900m), and LimitRanger admits it" \
  [ "$got" = 480m/720m ]

# ---------------------------------------------------- 4. the success path: event and annotation
# The limits themselves are tests/scenarios/design-floor.yaml's check; here they are the precondition.
ex_ok() { lim "$NA" small 1500m && lim "$NA" web 3 && lim "$NA" large 12; }
wait_until 20 ex_ok || fail "4. precondition: design §2.7's node at 1500m, 3, 12 (design-floor.yaml)" "$WHY"
want="1500m → 3000m (factor 2.00, slack 8/16 cores)"
ev_ok() { local got; got=$(events_of "$NA" web CPULimitAdjusted); WHY="CPULimitAdjusted of web: '${got//$'\n'/;}'"; [ "$got" = "$want" ]; }
check "4b. web's CPULimitAdjusted: \"$want\" (design §7), once" wait_until 15 ev_ok
got=$(events_of "$NA" small CPULimitAdjusted)
WHY="CPULimitAdjusted of small: '${got//$'\n'/;}'"
check "4c. a first limit reads none: \"none → 1500m (factor 2.00, slack 8/16 cores)\"" \
  [ "$got" = "none → 1500m (factor 2.00, slack 8/16 cores)" ]
ann=$(status_of "$NA" web)
"$HEADROOM" plan -o json --kubeconfig "$USER_KC" >"$WORK/plan.json" 2>"$WORK/plan.err"
plan_ann=$(jq -c --arg n "e2e-dex-$S" '.nodes[] | select(.name == $n) |
  {factor: (.factor * 100 | round | tostring | .[:-2] + "." + .[-2:]), slack: "\(.slackMilli)m",
   managedRequests: "\(.managedRequestsMilli)m", nodePods: (.pods | length)}' "$WORK/plan.json")
live_ann=$(jq -c '{factor, slack, managedRequests, nodePods}' <<<"$ann" 2>/dev/null)
WHY="annotation $ann; plan says $plan_ann"
same_ann() {
  [ -n "$plan_ann" ] && [ "$live_ann" = "$plan_ann" ] &&
    [ "$plan_ann" = '{"factor":"2.00","slack":"8000m","managedRequests":"8000m","nodePods":3}' ]
}
check "4d. web's status annotation is the plan's node: factor 2.00, slack 8000m, managedRequests 8000m, 3 pods" same_ann
ann_ok() { jq -e '.policy == "proportional-v1" and .dryRun == false and (.computedAt | test("^[0-9-]+T[0-9:]+Z$"))' <<<"$ann" >/dev/null; }
WHY="annotation $ann"
check "4e. the annotation's fixed shape: policy proportional-v1, dryRun false, computedAt in UTC" ann_ok
web_plan=$(jq -c --arg ns "$NA" '.nodes[].pods[] | select(.namespace == $ns and .name == "web") | {targetMilli, limitMilli, write}' "$WORK/plan.json")
WHY="plan: $web_plan"
check "4f. plan: web's target is its limit (3000m) and nothing is left to write" \
  [ "$web_plan" = '{"targetMilli":3000,"limitMilli":3000,"write":false}' ]
"$HEADROOM" explain web -n "$NA" --kubeconfig "$USER_KC" >"$WORK/explain.web" 2>&1
explain_ok() {
  grep -Eq '^ +F +factor = 1 \+ S/M +2\.00$' "$WORK/explain.web" &&
    grep -Eq '^ +S +slack = A − R +8$' "$WORK/explain.web" &&
    grep -Eq '^ +M +managed requests over N = 3 +8$' "$WORK/explain.web" &&
    grep -Eq '^current limit 3 → target 3: ' "$WORK/explain.web" &&
    grep -qF "last status annotation: $ann" "$WORK/explain.web"
}
WHY="explain: $(grep -E 'factor =|slack =|managed requests|current limit|last status' "$WORK/explain.web" | tr -s ' ' | tr '\n' ';')"
check "4g. explain: factor 2.00, slack 8, M 8 over 3 pods, limit = target 3, and the same annotation" explain_ok
got=$(k -n "$NA" get events.events.k8s.io -o json 2>/dev/null |
  jq -r '[.items[] | select(.reason == "CPULimitAdjusted") | .action] | unique | join(",")')
WHY="actions of the CPULimitAdjusted events: '$got'"
check "4h. the events' action is the Go version's \"Resizing\" (design §9.2)" [ "$got" = Resizing ]

stop_controller TERM
echo
finish
