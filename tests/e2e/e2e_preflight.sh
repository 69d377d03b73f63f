#!/usr/bin/env bash
# e2e_preflight.sh — `headroom preflight` on the real control plane
# (design §12): each line it must print, for the cluster it looks at.
#
# The cluster is shared with the other tests, so checks look for the lines
# about this run's own objects (suffix $S) rather than for a clean bill of
# health, and the exit code is checked against the lines: 1 exactly when a
# line says FAIL.
set -uo pipefail
# shellcheck source=../lib/common.sh
. "$(dirname "${BASH_SOURCE[0]}")/../lib/common.sh"
WORK=$(mktemp -d /tmp/headroom-pf.XXXXXX)
NS=e2e-pf-$S QNS=e2e-pf-q-$S

cleanup() {
  delete_objects
  k delete crd verticalpodautoscalers.autoscaling.k8s.io --ignore-not-found --wait=false >/dev/null 2>&1
  remove_identity headroom-pf
  [ "$failed" -gt 0 ] && cat "$WORK"/*.out 2>/dev/null | tail -n 30
  rm -rf "$WORK"
}
trap cleanup EXIT
require_cluster

preflight() { # name [flags...]: output in $WORK/name.out, exit code in $WORK/name.rc
  local name=$1; shift
  "$HEADROOM" preflight "$@" >"$WORK/$name.out" 2>&1
  echo $? >"$WORK/$name.rc"
}
has() { grep -q -- "$2" "$WORK/$1.out"; } # name, regex
consistent() { # exit code 1 exactly when a line failed
  local want=0
  grep -q '^FAIL' "$WORK/$1.out" && want=1
  [ "$(cat "$WORK/$1.rc")" = "$want" ]
}

# ---------------------------------------------------------- the basics
preflight admin
# The verdict on the version this cluster runs (each cluster of the version matrix runs this
# test): read from the API server itself, every tested version (1.35 and newer) passes by name.
sv=$(k get --raw /version | jq -r .gitVersion)
WHY="/version says '$sv'; preflight: $(grep 'server version' "$WORK/admin.out")"
check "the server version line is PASS for the version the API server reports ($sv)" \
  has admin "^PASS  server version ${sv//./\\.}: supported (kube-headroom supports Kubernetes 1\.35 and newer)\$"
if [ -f "$STATE/k8s.version" ]; then
  WHY="cluster.sh up recorded '$(cat "$STATE/k8s.version")'"
  check "the API server is the version its cluster was brought up with" [ "$(cat "$STATE/k8s.version")" = "$sv" ]
fi
check "the pods/resize subresource is found with patch" has admin '^PASS  the pods/resize subresource'
check "the admin may do everything the controller does" has admin '^PASS  RBAC:'
WHY="rc $(cat "$WORK/admin.rc")"
check "exit code 1 exactly when a line says FAIL" consistent admin

# ---------------------------------------------------------- RBAC
install_identity headroom-pf
preflight user --kubeconfig "$USER_KC"
check "charts/kube-headroom/templates/rbac.yaml's roles grant every permission preflight checks" has user '^PASS  RBAC:'
NOBODY_KC=$("$CLUSTER" user-kubeconfig headroom-pf-nobody)
preflight nobody --kubeconfig "$NOBODY_KC"
WHY="$(grep RBAC "$WORK/nobody.out")"
check "an identity with no roles fails RBAC, naming what it lacks" has nobody '^FAIL  RBAC: this identity may not list pods'
WHY="rc $(cat "$WORK/nobody.rc")"
check "... and preflight exits 1" [ "$(cat "$WORK/nobody.rc")" = 1 ]

# ---------------------------------------------------------- namespaces
mkns "$NS" managed
mkns "$QNS" managed
k -n "$QNS" create quota cpu --hard=limits.cpu=4 >/dev/null
k -n "$NS" create quota pods-only --hard=pods=10 >/dev/null
k apply -f - >/dev/null <<YAML
apiVersion: v1
kind: LimitRange
metadata: {name: cap, namespace: $NS}
spec:
  limits:
  - type: Container
    max: {cpu: "2"}
YAML
mknode "e2e-pf-win-$S" 4
k label node "e2e-pf-win-$S" kubernetes.io/os=windows --overwrite >/dev/null
preflight ns
WHY="$(grep -i quota "$WORK/ns.out")"
check "a managed namespace with a limits.cpu quota passes, named: raises there fit the quota" has ns "^PASS  a ResourceQuota bounds limits.cpu in .*$QNS.*raises there fit the quota"
quota_only_q() { ! grep '^PASS  a ResourceQuota' "$WORK/ns.out" | matches -- "$NS[,: ]\|$NS\$"; }
check "a quota without limits.cpu is not named" quota_only_q
WHY="$(grep -i limitrange "$WORK/ns.out")"
check "a LimitRange capping CPU limits warns, naming the namespace" has ns "^WARN  LimitRanges cap CPU limits in .*$NS"
WHY="$(grep -i windows "$WORK/ns.out")"
check "a Windows node warns, named" has ns "^WARN  .*Windows node.*e2e-pf-win-$S"
ns_rc_fits() { # 1 exactly when a line says FAIL (a limits.cpu quota is no longer one)
  if grep -q '^FAIL' "$WORK/ns.out"; then [ "$(cat "$WORK/ns.rc")" = 1 ]; else [ "$(cat "$WORK/ns.rc")" = 0 ]; fi
}
WHY="rc $(cat "$WORK/ns.rc"), FAIL lines: $(grep -c '^FAIL' "$WORK/ns.out")"
check "exit code 1 exactly with a failing line" ns_rc_fits

# ---------------------------------------------------------- VerticalPodAutoscalers
# A stand-in CRD with the VPA's group and name (the schema is not ours to
# check): enough for preflight's list.
k apply -f - >/dev/null <<'YAML'
apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata:
  name: verticalpodautoscalers.autoscaling.k8s.io
  annotations: {api-approved.kubernetes.io: "unapproved, test stand-in"}
spec:
  group: autoscaling.k8s.io
  scope: Namespaced
  names: {plural: verticalpodautoscalers, singular: verticalpodautoscaler, kind: VerticalPodAutoscaler}
  versions:
  - name: v1
    served: true
    storage: true
    schema:
      openAPIV3Schema: {type: object, x-kubernetes-preserve-unknown-fields: true}
YAML
k wait --for condition=established crd/verticalpodautoscalers.autoscaling.k8s.io --timeout=30s >/dev/null
k apply -f - >/dev/null <<YAML
apiVersion: autoscaling.k8s.io/v1
kind: VerticalPodAutoscaler
metadata: {name: limits, namespace: $NS}
spec:
  targetRef: {apiVersion: apps/v1, kind: Deployment, name: web}
---
apiVersion: autoscaling.k8s.io/v1
kind: VerticalPodAutoscaler
metadata: {name: requests-only, namespace: $NS}
spec:
  targetRef: {apiVersion: apps/v1, kind: Deployment, name: api}
  resourcePolicy:
    containerPolicies: [{containerName: "*", controlledValues: RequestsOnly}]
---
apiVersion: autoscaling.k8s.io/v1
kind: VerticalPodAutoscaler
metadata: {name: "off", namespace: $NS}
spec:
  targetRef: {apiVersion: apps/v1, kind: Deployment, name: batch}
  updatePolicy: {updateMode: "Off"}
YAML
preflight vpa
vpas=$(k -n "$NS" get verticalpodautoscalers -o name | wc -l)
WHY="$vpas VPAs created"
check "three stand-in VPAs exist" [ "$vpas" = 3 ]
sed 's/^/    | /' "$WORK/vpa.out" # what a user sees, for the log
WHY="$(grep -i vertical "$WORK/vpa.out")"
check "a VPA that sets limits in a managed namespace warns, named" has vpa "^WARN  VerticalPodAutoscalers set limits .*$NS/limits.*foreign-writer"
only_limits() { ! grep '^WARN  VerticalPodAutoscalers' "$WORK/vpa.out" | matches "$NS/requests-only\|$NS/off"; }
check "RequestsOnly and updateMode Off VPAs are not named" only_limits

echo
finish
