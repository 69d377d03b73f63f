#!/usr/bin/env bash
# Smoke test of the test control plane (needs `cluster.sh up`): real scheduler binding, kwok
# kubelet behaviour (Running with status resources, resize acknowledgement, PodResizePending on
# annotation, node conditions kept, deletes finalized) and the API server's resize validation.
# Prints PASS/FAIL per check and a closing "N passed, N failed" line; exits non-zero on any failure.
set -uo pipefail
HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
STATE=${HEADROOM_CLUSTER_DIR:-/tmp/kube-headroom-cluster}
export KUBECONFIG=${KUBECONFIG:-$STATE/admin.kubeconfig}
KUBECTL=${KUBECTL:-$("$HERE/../cluster/cluster.sh" bin kubectl)}
TIMEOUT=${SMOKE_TIMEOUT:-30}
k() { "$KUBECTL" "$@"; }

SUF=$$
NS=headroom-smoke-$SUF
NODE=smoke-node-$SUF
NODE_DP=smoke-node-dp-$SUF
passed=0 failed=0
pass() { printf 'PASS  %s\n' "$1"; passed=$((passed + 1)); }
fail() { printf 'FAIL  %s: %s\n' "$1" "$2"; failed=$((failed + 1)); }
# wait_until SECONDS cmd... : poll until cmd succeeds
wait_until() {
  local end=$(($(date +%s) + $1))
  shift
  until "$@" >/dev/null 2>&1; do
    [ "$(date +%s)" -lt "$end" ] || return 1
    sleep 0.2
  done
}
pod_json() { k -n "$NS" get pod "$1" -o json; }
jqpod() { pod_json "$1" | jq -cr "$2"; }

cleanup() {
  k delete namespace "$NS" --ignore-not-found --wait=false >/dev/null 2>&1
  k delete node "$NODE" "$NODE_DP" --ignore-not-found --wait=false >/dev/null 2>&1
}
trap cleanup EXIT

k get --raw /readyz >/dev/null 2>&1 || { echo "FAIL  cluster: API server not ready (KUBECONFIG=$KUBECONFIG); run tests/cluster/cluster.sh up"; echo "0 passed, 1 failed"; exit 1; }

# ---------------------------------------------------------------------------------------- version
# The server: the version cluster.sh up started (the pinned one, or a matrix version); kubectl: the
# pinned one on every cluster (tests/cluster/versions.env).
want_s=$(cat "$STATE/k8s.version" 2>/dev/null || sed -n 's/^K8S_VERSION=//p' "$HERE/../cluster/versions.env")
want_c=$(sed -n 's/^K8S_VERSION=//p' "$HERE/../cluster/versions.env")
sv=$(k version -o json 2>/dev/null | jq -r '.serverVersion.gitVersion + " " + .clientVersion.gitVersion')
[ "$sv" = "$want_s $want_c" ] && pass "kubectl version reports server $want_s and client $want_c" || fail "version" "got '$sv', want '$want_s $want_c'"

# ------------------------------------------------------------------------------------------ nodes
mknode() {
  k create -f - >/dev/null <<EOF
apiVersion: v1
kind: Node
metadata:
  name: $1
  annotations: {kwok.x-k8s.io/node: fake}
  labels: {type: kwok, kubernetes.io/hostname: $1, app.kubernetes.io/managed-by: smoke}
status:
  allocatable: {cpu: "4", memory: 8Gi, pods: "110"}
  capacity: {cpu: "4", memory: 8Gi, pods: "110"}
EOF
}
node_cond() { k get node "$1" -o jsonpath="{.status.conditions[?(@.type==\"$2\")].status}"; }
mknode "$NODE" && mknode "$NODE_DP" || fail "create nodes" "kubectl create failed"
if wait_until "$TIMEOUT" test "$(node_cond "$NODE" Ready)" = True; then
  alloc=$(k get node "$NODE" -o jsonpath='{.status.allocatable.cpu}/{.status.allocatable.memory}/{.status.allocatable.pods}')
  [ "$alloc" = "4/8Gi/110" ] && pass "kwok makes the node Ready and keeps its allocatable ($alloc)" \
    || fail "node allocatable" "expected 4/8Gi/110, got $alloc"
else
  fail "node Ready" "node $NODE not Ready after ${TIMEOUT}s"
fi

# DiskPressure set by a test stays (on a second node, since it taints the node NoSchedule)
wait_until "$TIMEOUT" test "$(node_cond "$NODE_DP" Ready)" = True
k patch node "$NODE_DP" --subresource=status --type=strategic -p \
  '{"status":{"conditions":[{"type":"DiskPressure","status":"True","reason":"KubeletHasDiskPressure","message":"set by smoke test"}]}}' >/dev/null
sleep 3
dp=$(node_cond "$NODE_DP" DiskPressure)/$(node_cond "$NODE_DP" Ready)
[ "$dp" = "True/True" ] && pass "DiskPressure=True patched by a test is kept by kwok (DiskPressure/Ready = $dp)" \
  || fail "DiskPressure kept" "expected True/True 3s after the patch, got $dp"

# ------------------------------------------------------------------------------------------- pods
k create namespace "$NS" >/dev/null
wait_until "$TIMEOUT" k -n "$NS" get serviceaccount default || fail "namespace" "no default ServiceAccount in $NS"

mkpod() { # name qos [annotation-value] [sidecar]
  local res ann="" sc=""
  case $2 in
    burstable) res='{requests: {cpu: 100m, memory: 64Mi}, limits: {cpu: 200m, memory: 128Mi}}' ;;
    besteffort) res='{}' ;;
  esac
  [ -z "${3:-}" ] || ann="annotations: {kwok.x-k8s.io/resize: $3}"
  [ -z "${4:-}" ] || sc="initContainers: [{name: sidecar, image: kwok.invalid/sidecar:1, restartPolicy: Always, resources: {requests: {cpu: 50m, memory: 32Mi}, limits: {cpu: 100m, memory: 64Mi}}}]"
  k -n "$NS" create -f - >/dev/null <<EOF
apiVersion: v1
kind: Pod
metadata:
  name: $1
  $ann
spec:
  nodeSelector: {kubernetes.io/hostname: $NODE}
  terminationGracePeriodSeconds: 30
  $sc
  containers: [{name: app, image: kwok.invalid/app:1, resources: $res}]
EOF
}
running() { [ "$(jqpod "$1" .status.phase)" = Running ]; }
# status resources of every container (and sidecar) equal the spec, observedGeneration caught up,
# no resize condition left
resize_done() {
  pod_json "$1" | jq -e '
    ([.spec.containers[], (.spec.initContainers[]? | select(.restartPolicy == "Always")) | {name, r: (.resources // {})}] | sort_by(.name)) as $want
    | ([.status.containerStatuses[], (.status.initContainerStatuses[]? | select(.resources != null)) | {name, r: (.resources // {})}] | sort_by(.name)) as $have
    | $want == $have
      and .status.observedGeneration == .metadata.generation
      and ([.status.conditions[] | select(.type | startswith("PodResize"))] | length == 0)' >/dev/null
}

# 1. Burstable pod: bound by the real scheduler, Running via kwok, status resources mirrored
mkpod burst burstable || fail "create pod" "kubectl create failed"
if wait_until "$TIMEOUT" test -n "$(jqpod burst '.spec.nodeName // empty')"; then
  bound=$(jqpod burst .spec.nodeName)
  ev=$(k -n "$NS" get events --field-selector involvedObject.name=burst,reason=Scheduled -o name | wc -l)
  [ "$bound" = "$NODE" ] && pass "kube-scheduler bound the Burstable pod to $bound (Scheduled events: $ev)" \
    || fail "scheduling" "bound to '$bound', expected $NODE"
else
  fail "scheduling" "pod not bound after ${TIMEOUT}s"
fi
if wait_until "$TIMEOUT" running burst && wait_until 5 resize_done burst; then
  pass "kwok made it Running with containerStatuses[].resources = spec ($(jqpod burst '.status.containerStatuses[0].resources | tostring')), observedGeneration $(jqpod burst .status.observedGeneration), QoS $(jqpod burst .status.qosClass)"
else
  fail "Running with status resources" "$(pod_json burst | jq -c '{phase: .status.phase, cs: .status.containerStatuses, og: .status.observedGeneration}')"
fi

# 2. resize raising the CPU limit: accepted and acknowledged
gen0=$(jqpod burst .metadata.generation)
if out=$(k -n "$NS" patch pod burst --subresource resize -p \
  '{"spec":{"containers":[{"name":"app","resources":{"limits":{"cpu":"300m"}}}]}}' 2>&1); then
  gen1=$(jqpod burst .metadata.generation)
  if wait_until "$TIMEOUT" resize_done burst && [ "$(jqpod burst '.status.containerStatuses[0].resources.limits.cpu')" = 300m ]; then
    pass "resize cpu limit 200m->300m accepted (generation $gen0->$gen1) and acknowledged: status limits.cpu=300m, observedGeneration=$(jqpod burst .status.observedGeneration)"
  else
    fail "resize acknowledged" "$(pod_json burst | jq -c '{gen: .metadata.generation, og: .status.observedGeneration, res: .status.containerStatuses[0].resources, cond: [.status.conditions[].type]}')"
  fi
else
  fail "resize accepted" "$out"
fi

# 3. a resize that would make the pod Guaranteed is rejected
if out=$(k -n "$NS" patch pod burst --subresource resize -p \
  '{"spec":{"containers":[{"name":"app","resources":{"requests":{"cpu":"300m","memory":"128Mi"},"limits":{"cpu":"300m","memory":"128Mi"}}}]}}' 2>&1); then
  fail "Guaranteed resize rejected" "the API server accepted it"
else
  grep -qi "QOS" <<<"$out" && pass "resize to Guaranteed rejected: $(echo "$out" | grep -io 'Pod QOS Class may not change[^"]*' | head -1)" \
    || fail "Guaranteed resize rejected" "rejected, but not for QoS: $out"
fi

# 4. BestEffort pod: resize adding resources is rejected
mkpod be besteffort
if wait_until "$TIMEOUT" running be; then
  if out=$(k -n "$NS" patch pod be --subresource resize -p \
    '{"spec":{"containers":[{"name":"app","resources":{"requests":{"cpu":"100m"}}}]}}' 2>&1); then
    fail "BestEffort resize rejected" "the API server accepted it"
  else
    pass "BestEffort pod resize adding requests rejected: $(echo "$out" | grep -io 'Pod QOS Class may not change[^"]*\|Forbidden[^"]*' | head -1)"
  fi
else
  fail "BestEffort Running" "pod be not Running after ${TIMEOUT}s"
fi

# 5. Infeasible / Deferred annotation -> PodResizePending with that reason, no resource update;
#    removing the annotation lets the resize complete
for reason in Infeasible Deferred; do
  p=$(echo "$reason" | tr 'A-Z' 'a-z')
  mkpod "$p" burstable "$reason"
  if ! wait_until "$TIMEOUT" running "$p"; then fail "$reason pod Running" "not Running"; continue; fi
  k -n "$NS" patch pod "$p" --subresource resize -p \
    '{"spec":{"containers":[{"name":"app","resources":{"limits":{"cpu":"400m"}}}]}}' >/dev/null 2>&1 || { fail "$reason resize" "patch rejected"; continue; }
  pending() {
    pod_json "$1" | jq -e --arg r "$2" '
      .metadata.generation as $g
      | ([.status.conditions[] | select(.type == "PodResizePending" and .reason == $r and .observedGeneration == $g)] | length == 1)
        and .status.observedGeneration == $g
        and .status.containerStatuses[0].resources.limits.cpu == "200m"' >/dev/null
  }
  if wait_until "$TIMEOUT" pending "$p" "$reason"; then
    pass "annotation kwok.x-k8s.io/resize=$reason -> PodResizePending/$reason (observedGeneration $(jqpod "$p" .metadata.generation)), status limits.cpu still 200m"
  else
    fail "PodResizePending/$reason" "$(pod_json "$p" | jq -c '{gen: .metadata.generation, og: .status.observedGeneration, cond: .status.conditions, res: .status.containerStatuses[0].resources}')"
  fi
  k -n "$NS" annotate pod "$p" kwok.x-k8s.io/resize- >/dev/null
  if wait_until "$TIMEOUT" resize_done "$p" && [ "$(jqpod "$p" '.status.containerStatuses[0].resources.limits.cpu')" = 400m ]; then
    pass "annotation removed -> pending resize completes (limits.cpu=400m, PodResizePending cleared)"
  else
    fail "resize after annotation removal" "$(pod_json "$p" | jq -c '{cond: [.status.conditions[].type], res: .status.containerStatuses[0].resources}')"
  fi
done

# 6. sidecar (restartable init container): gets status with resources, and its resize is acknowledged
mkpod side burstable "" sidecar
if wait_until "$TIMEOUT" running side && wait_until 5 resize_done side \
  && [ "$(jqpod side '.status.initContainerStatuses[0].started')" = true ]; then
  pass "sidecar gets a running initContainerStatus with resources $(jqpod side '.status.initContainerStatuses[0].resources | tostring')"
  if k -n "$NS" patch pod side --subresource resize -p \
    '{"spec":{"initContainers":[{"name":"sidecar","resources":{"limits":{"cpu":"150m"}}}]}}' >/dev/null 2>&1 \
    && wait_until "$TIMEOUT" resize_done side && [ "$(jqpod side '.status.initContainerStatuses[0].resources.limits.cpu')" = 150m ]; then
    pass "sidecar resize acknowledged (limits.cpu=150m)"
  else
    fail "sidecar resize" "$(pod_json side | jq -c '{og: .status.observedGeneration, ics: .status.initContainerStatuses}')"
  fi
else
  fail "sidecar status" "$(pod_json side | jq -c '{phase: .status.phase, ics: .status.initContainerStatuses}')"
fi

# 7. controller-manager: a Deployment's pods are created and Running; ResourceQuota status is computed
k -n "$NS" create deployment web --image=kwok.invalid/web:1 --replicas=2 >/dev/null
k -n "$NS" patch deployment web --type=json -p '[{"op":"add","path":"/spec/template/spec/nodeSelector","value":{"kubernetes.io/hostname":"'"$NODE"'"}}]' >/dev/null
dep_ok() { [ "$(k -n "$NS" get deployment web -o jsonpath='{.status.readyReplicas}')" = 2 ]; }
wait_until "$TIMEOUT" dep_ok && pass "Deployment web: 2/2 replicas Running (replicaset controller + scheduler + kwok)" \
  || fail "Deployment" "$(k -n "$NS" get deployment web -o jsonpath='{.status}')"
k -n "$NS" create quota q --hard=pods=100,requests.cpu=10 >/dev/null
quota_ok() { [ -n "$(k -n "$NS" get quota q -o jsonpath='{.status.used.pods}')" ]; }
wait_until "$TIMEOUT" quota_ok && pass "ResourceQuota status computed by the controller-manager (used pods: $(k -n "$NS" get quota q -o jsonpath='{.status.used.pods}'))" \
  || fail "ResourceQuota status" "no status.used after ${TIMEOUT}s"

# 8. deletes are finalized by kwok (graceful delete -> object gone)
k -n "$NS" delete pod be --wait=false >/dev/null
gone() { ! k -n "$NS" get pod be >/dev/null 2>&1; }
wait_until "$TIMEOUT" gone && pass "graceful pod delete finalized by kwok" || fail "pod delete" "pod be still present after ${TIMEOUT}s"

echo "smoke: $passed passed, $failed failed"
echo "$passed passed, $failed failed"
[ "$failed" -eq 0 ]
