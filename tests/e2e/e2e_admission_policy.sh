#!/usr/bin/env bash
# e2e_admission_policy.sh — the API server confines the controller's own identity (design §13,
# docs/security.md): the chart's ValidatingAdmissionPolicy (templates/admissionpolicy.yaml), as
# Helm renders it where the API server serves admissionregistration.k8s.io/v1 policies, on the
# real API server.
#   1. Rendering: present with the API (and in deploy/install.yaml), absent without it or with
#      rbac.admissionPolicy=false; the API server type-checks every expression against the Pod
#      and Event schemas without a warning.
#   2. As the chart's ServiceAccount (kubectl --as=system:serviceaccount:kube-headroom:kube-
#      headroom, which the chart's RBAC lets patch and resize every pod): changing a pod's image,
#      a label, another annotation (patches), a CPU request or a memory limit (resizes), or an
#      Event about a pod of another namespace, is refused by the policy — the refusal names it —
#      and the pod is as it was; the status annotation (patch) and a containers' limits.cpu
#      (resize) pass. The same requests as the admin pass (the policy confines one identity).
#   3. The controller as that ServiceAccount (its token; --leader-elect, so the Lease the Role
#      names is what it takes), the policy installed: it converges as usual — every pod of the
#      managed namespace gets its limit (a sidecar's too) and status annotation, and the audit record holds no
#      write of that identity the API server refused.
set -uo pipefail
# shellcheck source=../lib/common.sh
. "$(dirname "${BASH_SOURCE[0]}")/../lib/common.sh"
MPORT=${HEADROOM_E2E_METRICS_PORT:-$(free_port)}
WORK=$(mktemp -d /tmp/headroom-vap.XXXXXX)
ID=headroom-e2e-vap # the chart's RBAC bound to a user too (install_identity); the test acts as the SA
SA=system:serviceaccount:kube-headroom:kube-headroom
POLICY=kube-headroom-controller-writes
NS=hr-vap-$S    # managed: the controller's
UNS=hr-vap-u-$S # unmanaged: the impersonated requests'
NODE=hr-vap-n-$S

cleanup() {
  k delete validatingadmissionpolicybinding "$POLICY" --ignore-not-found >/dev/null 2>&1
  k delete validatingadmissionpolicy "$POLICY" --ignore-not-found >/dev/null 2>&1
  cleanup_common 60
}
trap cleanup EXIT
require_cluster

# ------------------------------------------------------------------ 1. rendering
policy_render() { chart_objects --show-only templates/admissionpolicy.yaml "$@" 2>/dev/null; }
kinds() { grep '^kind:' | awk '{print $2}' | paste -sd' ' -; }
got=$(policy_render --api-versions "$VAP_API" | kinds)
WHY="kinds '$got'"
check "rendered where the API server serves $VAP_API: the policy and its binding" \
  [ "$got" = "ValidatingAdmissionPolicy ValidatingAdmissionPolicyBinding" ]
got=$(policy_render | kinds)
WHY="kinds '$got'"
check "not rendered where the API server does not serve it (helm template's default capabilities)" [ -z "$got" ]
got=$(policy_render --api-versions "$VAP_API" --set rbac.admissionPolicy=false | kinds)
WHY="kinds '$got'"
check "not rendered with rbac.admissionPolicy=false" [ -z "$got" ]
got=$(grep -c "^  name: $POLICY\$" "$ROOT/deploy/install.yaml")
WHY="$got objects named $POLICY in deploy/install.yaml"
check "deploy/install.yaml carries the policy and its binding" [ "$got" = 2 ]

install_identity "$ID"
k -n kube-headroom get serviceaccount kube-headroom >/dev/null 2>&1 ||
  { fail "the chart's ServiceAccount kube-headroom/kube-headroom exists"; finish; exit 1; }
policy_render --api-versions "$VAP_API" >"$WORK/policy.yaml"
if k apply -f "$WORK/policy.yaml" >/dev/null 2>"$WORK/apply.err"; then
  pass "the API server accepts the policy and its binding"
else
  fail "the API server accepts the policy and its binding" "$(head -c 300 "$WORK/apply.err")"
fi
typed() { [ -n "$(k get validatingadmissionpolicy "$POLICY" -o jsonpath='{.status.observedGeneration}')" ]; }
wait_until 30 typed
warn=$(k get validatingadmissionpolicy "$POLICY" -o json | jq -c '.status.typeChecking.expressionWarnings // []')
WHY="warnings $warn"
check "the API server type-checks every validation against the Pod and Event schemas without a warning" [ "$warn" = "[]" ]

# ------------------------------------------------------------------ 2. the ServiceAccount, impersonated
# Its token too, in a kubeconfig of the cluster's (what the chart's pods present): `kubectl patch
# --subresource=resize` first GETs pods/resize, which the ServiceAccount may not (the controller
# never does), so a resize is sent as the controller sends it, one PATCH, with the token.
token=$(k -n kube-headroom create token kube-headroom --duration=1h)
server=$(k config view --raw --minify -o jsonpath='{.clusters[0].cluster.server}')
k config view --raw --minify -o jsonpath='{.clusters[0].cluster.certificate-authority-data}' | base64 -d >"$WORK/ca.crt"
cat >"$WORK/sa.kubeconfig" <<KC
apiVersion: v1
kind: Config
clusters: [{name: c, cluster: {server: "$server", certificate-authority: "$WORK/ca.crt"}}]
users: [{name: sa, user: {token: "$token"}}]
contexts: [{name: c, context: {cluster: c, user: sa}}]
current-context: c
KC
mknode "$NODE" 8
mkns "$UNS" plain
k apply -f - >/dev/null <<YAML
apiVersion: v1
kind: Pod
metadata:
  name: p
  namespace: $UNS
  labels: {app: p}
  annotations: {example.com/note: "1"}
spec:
  nodeName: $NODE
  containers:
  - name: app
    image: registry.invalid/app:1
    resources:
      requests: {cpu: 100m, memory: 64Mi}
      limits: {cpu: 500m, memory: 128Mi}
YAML
wait_until 30 running "$UNS" p
pod_state() { k -n "$UNS" get pod p -o json | jq -c '[.spec.containers[0].image, .spec.containers[0].resources, .metadata.labels, (.metadata.annotations | del(."kube-headroom.dev/status"))]'; }
before=$(pod_state)
# The API server takes a policy up within a second or two of its creation: a dry run (admission
# runs, nothing is stored) tells when it is in force.
in_force() {
  local out
  out=$(k --as="$SA" -n "$UNS" patch pod p --dry-run=server -p '{"metadata":{"labels":{"evil":"1"}}}' 2>&1)
  grep -q "ValidatingAdmissionPolicy '$POLICY'" <<<"$out"
}
WHY="a dry-run label patch as the ServiceAccount still passes after 30 s"
check "the policy is in force" wait_until 30 in_force

# As the ServiceAccount: refused by the policy, naming it, the pod unchanged; then as the admin
# the same request passes (what refused it was the identity's confinement, not the request).
refused() { # what, kubectl patch args...
  local what=$1 out
  shift
  out=$(k --as="$SA" -n "$UNS" patch pod p "$@" 2>&1 >/dev/null)
  WHY="answer: $(head -c 400 <<<"$out")"
  check "as the controller's ServiceAccount, $what is refused by the admission policy (the refusal names $POLICY)" \
    grep -q "ValidatingAdmissionPolicy '$POLICY' with binding '$POLICY' denied request: $POLICY: " <<<"$out"
}
sa_resize() { # strategic merge patch -> the API server's answer (a Pod, or a Status)
  curl -s --cacert "$WORK/ca.crt" -H "Authorization: Bearer $token" -X PATCH \
    -H 'Content-Type: application/strategic-merge-patch+json' \
    "$server/api/v1/namespaces/$UNS/pods/p/resize" -d "$1"
}
resize_refused() { # what, patch
  local out
  out=$(sa_resize "$2" | jq -r '"\(.kind) \(.code) \(.message)"')
  WHY="answer: $(head -c 400 <<<"$out")"
  check "as the controller's ServiceAccount, $1 is refused by the admission policy (the refusal names $POLICY)" \
    grep -q "^Status 403 .*ValidatingAdmissionPolicy '$POLICY' with binding '$POLICY' denied request: $POLICY: " <<<"$out"
}
passes() { # what, kubectl patch args...
  local what=$1 out
  shift
  out=$(k --as="$SA" -n "$UNS" patch pod p "$@" 2>&1)
  WHY="answer: $(head -c 400 <<<"$out")"
  check "as the controller's ServiceAccount, $what passes" grep -q "pod/p patched" <<<"$out"
}
refused "changing the image (patch)" -p '{"spec":{"containers":[{"name":"app","image":"registry.invalid/app:2"}]}}'
refused "adding a label (patch)" -p '{"metadata":{"labels":{"evil":"1"}}}'
refused "changing a label (patch)" -p '{"metadata":{"labels":{"app":"q"}}}'
refused "changing another annotation (patch)" -p '{"metadata":{"annotations":{"example.com/note":"2"}}}'
refused "adding another annotation beside the status one (patch)" \
  -p '{"metadata":{"annotations":{"kube-headroom.dev/status":"{}","example.com/other":"1"}}}'
resize_refused "changing a CPU request (resize)" \
  '{"spec":{"containers":[{"name":"app","resources":{"requests":{"cpu":"200m"}}}]}}'
resize_refused "changing a memory limit (resize)" \
  '{"spec":{"containers":[{"name":"app","resources":{"limits":{"memory":"256Mi"}}}]}}'
resize_refused "changing the CPU limit and a memory request together (resize)" \
  '{"spec":{"containers":[{"name":"app","resources":{"limits":{"cpu":"600m"},"requests":{"memory":"96Mi"}}}]}}'
after=$(pod_state)
WHY="before $before, after $after"
check "after the refusals the pod is as it was (image, resources, labels, annotations)" [ "$before" = "$after" ]

passes "writing the kube-headroom.dev/status annotation (patch)" \
  -p '{"metadata":{"annotations":{"kube-headroom.dev/status":"{\"e2e\":true}"}}}'
got=$(sa_resize '{"spec":{"containers":[{"name":"app","resources":{"limits":{"cpu":"600m"}}}]}}' |
  jq -r '"\(.kind) \(.code // "") \(.message // "")"')
WHY="answer: $(head -c 400 <<<"$got")"
check "as the controller's ServiceAccount, changing containers' limits.cpu (resize) passes" grep -q "^Pod " <<<"$got"
WHY="limits.cpu '$(cpu_limit "$UNS" p)'"
check "the resize took: limits.cpu is 600m" limit_is "$UNS" p 600m
out=$(k -n "$UNS" patch pod p -p '{"metadata":{"labels":{"evil":"1"}}}' 2>&1)
WHY="answer: $out"
check "as the admin, the same label patch passes (the policy confines one identity)" grep -q "pod/p patched" <<<"$out"

# Events: only about a pod, in that pod's namespace, reported as kube-headroom.dev/headroom.
event() { # event-namespace regarding-namespace controller -> the manifest
  cat <<YAML
apiVersion: events.k8s.io/v1
kind: Event
metadata: {generateName: vap-, namespace: $1}
eventTime: "$(date -u +%Y-%m-%dT%H:%M:%S.000000Z)"
regarding: {apiVersion: v1, kind: Pod, name: p, namespace: $2}
reason: CPULimitAdjusted
action: Resizing
type: Normal
note: e2e
reportingController: $3
reportingInstance: e2e
YAML
}
out=$(event default "$UNS" kube-headroom.dev/headroom | k --as="$SA" create -f - 2>&1)
WHY="answer: $(head -c 400 <<<"$out")"
check "as the controller's ServiceAccount, an Event about a pod of another namespace is refused by the policy" \
  grep -q "ValidatingAdmissionPolicy '$POLICY'" <<<"$out"
out=$(event "$UNS" "$UNS" someone.else/controller | k --as="$SA" create -f - 2>&1)
WHY="answer: $(head -c 400 <<<"$out")"
check "as the controller's ServiceAccount, an Event with another reportingController is refused by the policy" \
  grep -q "ValidatingAdmissionPolicy '$POLICY'" <<<"$out"
out=$(event "$UNS" "$UNS" kube-headroom.dev/headroom | k --as="$SA" create -f - 2>&1)
WHY="answer: $(head -c 400 <<<"$out")"
check "as the controller's ServiceAccount, an Event about a pod in its namespace passes" grep -q "created" <<<"$out"

# ------------------------------------------------------------------ 3. the controller as the ServiceAccount
manage_stage "kube-headroom.dev/e2e-vap" || fail "the managed namespace and HeadroomConfig" "$START_WHY"
mkpod "$NS" w1 "$NODE" 500m
mkpod "$NS" w2 "$NODE" 500m
k apply -f - >/dev/null <<YAML
apiVersion: v1
kind: Pod
metadata: {name: w3, namespace: $NS}
spec:
  nodeName: $NODE
  initContainers:
  - name: proxy
    image: registry.invalid/proxy:1
    restartPolicy: Always
    resources: {requests: {cpu: 100m, memory: 32Mi}}
  containers:
  - name: app
    image: registry.invalid/app:1
    resources: {requests: {cpu: 400m, memory: 64Mi}}
YAML
mark=$(audit_mark)
USER_KC=$WORK/sa.kubeconfig
if start_controller --leader-elect; then
  pass "the controller runs as $SA (its token), with --leader-elect"
else
  fail "the controller runs as $SA" "$START_WHY"
fi
converged() {
  local i
  for i in 1 2 3; do
    [ -n "$(cpu_limit "$NS" "w$i")" ] || return 1
    [ -n "$(k -n "$NS" get pod "w$i" -o jsonpath='{.metadata.annotations.kube-headroom\.dev/status}')" ] || return 1
  done
  [ -n "$(k -n "$NS" get pod w3 -o jsonpath='{.spec.initContainers[0].resources.limits.cpu}')" ] || return 1
  node_converged "$NODE"
}
WHY="limits: $(for i in 1 2 3; do printf '%s ' "$(cpu_limit "$NS" "w$i")"; done)"
check "with the policy installed the controller converges: every managed pod (and w3's sidecar) has its limit and status annotation" \
  wait_until 60 converged
WHY="limits: $(for i in 1 2 3; do printf '%s ' "$(cpu_limit "$NS" "w$i")"; done)"
check "the limits are what the planner computes for the node" node_converged "$NODE"
audit_writes "$mark" "$SA" >"$WORK/writes.txt"
grep -E ' pods/resize ' "$WORK/writes.txt" >"$WORK/resizes.txt"
grep -E ' pods ' "$WORK/writes.txt" >"$WORK/annotations.txt"
WHY="$(wc -l <"$WORK/resizes.txt") resizes, $(wc -l <"$WORK/annotations.txt") pod patches"
check "its resizes and status annotations went through the policy (the audit record holds both)" \
  test -s "$WORK/resizes.txt" -a -s "$WORK/annotations.txt"
bad=$(awk '$NF >= 400' "$WORK/writes.txt")
WHY="refused: $(head -n 5 <<<"$bad" | tr '\n' ';')"
check "no write of the controller's ServiceAccount was refused ($(wc -l <"$WORK/writes.txt") writes: pods, resizes, events, the Lease)" [ -z "$bad" ]

echo
finish
