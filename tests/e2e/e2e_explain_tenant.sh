#!/usr/bin/env bash
# e2e_explain_tenant.sh — `headroom explain POD` as a tenant, on the real API
# server: a ServiceAccount bound (a RoleBinding in its namespace) only to the
# chart's ClusterRole kube-headroom-tenant (rbac.tenantRole) reads its pod's
# figures and no other namespace's pod name.
#
#   The controller (dryRun: false) manages two namespaces, A and B, with pods
#   on one kwok node: A's web-0 (500m) and B's two pods (2000m, 1000m), whose
#   names carry a marker no A object has. Once web-0's limit is written:
#   1. the tenant (its token from `kubectl create token`, a kubeconfig of its
#      own) runs `headroom explain web-0`: exit 0, the "tenant view" line
#      (nodes are forbidden to it: the fallback, no flag), A's pod named, the
#      rest of R as "(other namespaces)" with B's 3 cores over 2 pods, the
#      target equal to the limit written (v2 annotation: targetLimit, the
#      per-container limit), and not one B pod name (grep), in text and in
#      `-o json`;
#   2. the tenant cannot explain B's pod (403 on the pod: exit 1, no figure);
#   3. the admin's explain of the same pod is the cluster-wide view as
#      before: every pod on the node named (B's too), the caps block of
#      design §2.3, no "tenant view" line; --from-annotation gives the
#      tenant view to the admin too.
#
# Prints PASS/FAIL per check and "N passed, N failed"; exits non-zero on a
# failure. Needs `tests/cluster/cluster.sh up`.
set -uo pipefail
# shellcheck source=../lib/common.sh
. "$(dirname "${BASH_SOURCE[0]}")/../lib/common.sh"
MPORT=${HEADROOM_E2E_TENANT_PORT:-$(free_port)}
WORK=$(mktemp -d /tmp/headroom-e2e.XXXXXX)
ID=headroom-e2e-tenant
NS=e2e-et-a-$S
NSB=e2e-et-b-$S
NODE=e2e-et-n1-$S
MARK=zq$S # in every B pod's name, in no A object's
SA=tenant

cleanup() {
  k delete clusterrole kube-headroom-tenant --ignore-not-found >/dev/null 2>&1
  cleanup_common
}
trap cleanup EXIT
require_cluster
if curl -s -o /dev/null -m 2 "http://127.0.0.1:$MPORT/"; then
  fail "metrics port" "127.0.0.1:$MPORT is already in use (set HEADROOM_E2E_TENANT_PORT)"; finish; exit
fi

LABEL=kube-headroom.dev/e2e-tenant
mknode "$NODE" 16
if ! start_controller --manage "$LABEL"; then fail "controller" "$START_WHY"; finish; exit; fi
mkns "$NSB" managed "$LABEL=$S" || { fail "namespace $NSB"; finish; exit; }
mkpod "$NS" web-0 "$NODE" 500m 1
mkpod "$NSB" "db-$MARK" "$NODE" 2 4
mkpod "$NSB" "cache-$MARK" "$NODE" 1 2

# web-0's limit written and its annotation naming the node's three pods.
annotation() { k -n "$NS" get pod web-0 -o jsonpath='{.metadata.annotations.kube-headroom\.dev/status}' 2>/dev/null; }
settled() { annotation | jq -e '.nodePods == 3 and .dryRun == false' >/dev/null 2>&1 && [ "$(cpu_limit "$NS" web-0)" != 1 ]; }
check "web-0's limit written, its status annotation over the node's 3 pods" wait_until 60 settled

# The tenant: a ServiceAccount in A, bound there to the chart's tenant ClusterRole only.
chart_objects --show-only templates/rbac-tenant.yaml | k apply -f - >/dev/null
k -n "$NS" create serviceaccount "$SA" >/dev/null
k -n "$NS" create rolebinding "$SA" --clusterrole=kube-headroom-tenant --serviceaccount="$NS:$SA" >/dev/null
TOKEN=$(k -n "$NS" create token "$SA" --duration=10m)
TKC=$WORK/tenant.kubeconfig
SERVER=$(k config view --raw --minify -o jsonpath='{.clusters[0].cluster.server}')
CADATA=$(k config view --raw --minify -o jsonpath='{.clusters[0].cluster.certificate-authority-data}')
cat >"$TKC" <<KC
apiVersion: v1
kind: Config
clusters:
- name: c
  cluster: {server: "$SERVER", certificate-authority-data: "$CADATA"}
users:
- name: $SA
  user: {token: "$TOKEN"}
contexts:
- name: tenant
  context: {cluster: c, user: $SA, namespace: $NS}
current-context: tenant
KC
check "the tenant may not list nodes" \
  sh -c "! KUBECONFIG='$TKC' '$KUBECTL' get nodes >/dev/null 2>&1"
check "the tenant may not list B's pods" \
  sh -c "! KUBECONFIG='$TKC' '$KUBECTL' -n '$NSB' get pods >/dev/null 2>&1"

# 1. The tenant's explain: the context's namespace, no flag.
t0=$(now_ms)
"$HEADROOM" explain web-0 --kubeconfig "$TKC" >"$WORK/tenant.txt" 2>"$WORK/tenant.err"
rc=$?
echo "(the tenant's explain took $(($(now_ms) - t0)) ms)"
check "tenant: explain exits 0" test "$rc" -eq 0
check "tenant: says it is the tenant view, and why" \
  grep -q "^tenant view: figures from the pod's status annotation, computed at .*forbidden" "$WORK/tenant.txt"
check "tenant: names its own pod" grep -q "web-0 .* namespace $NS" "$WORK/tenant.txt"
check "tenant: the other namespaces' 3 cores over 2 pods, as one line" \
  grep -Eq '^ +\(other namespaces\) +3  2 pods$' "$WORK/tenant.txt"
check "tenant: no pod name of namespace B in the text" sh -c "! grep -q '$MARK' '$WORK/tenant.txt' '$WORK/tenant.err'"
"$HEADROOM" explain web-0 --kubeconfig "$TKC" -o json >"$WORK/tenant.json" 2>/dev/null
check "tenant -o json: no pod name of namespace B" sh -c "! grep -q '$MARK' '$WORK/tenant.json'"
check "tenant -o json: bookedBy holds namespace A's pods only" \
  jq -e --arg ns "$NS" '.view == "tenant" and ([.bookedBy[].namespace] | unique) == [$ns] and .bookedByOtherNamespaces == "3000m"' "$WORK/tenant.json"
# v2 of the status annotation: the target, equal to the limit written (live mode).
check "tenant: a v2 annotation (the pod's own figures recorded)" \
  jq -e '.annotationVersion == 2' "$WORK/tenant.json"
LIM=$(k -n "$NS" get pod web-0 -o json | jq -r '.spec.containers[0].resources.limits.cpu')
check "tenant: the target ($(jq -r .target "$WORK/tenant.json")) is the limit written ($LIM)" \
  jq -e '.target != null and .target == .currentLimit and ([.containers[] | .target == .limit] | all)' "$WORK/tenant.json"
check "tenant: the text's target line is the written limit" \
  grep -Eq "^current limit ([0-9.]+m?) → target \1: written$" "$WORK/tenant.txt"

# 2. Another namespace's pod: refused by the API server, nothing of it printed.
"$HEADROOM" explain "$NSB/db-$MARK" --kubeconfig "$TKC" >"$WORK/other.txt" 2>"$WORK/other.err"
rc=$?
check "tenant: explain of B's pod fails (exit $rc)" test "$rc" -eq 1
check "tenant: and prints no figure of it" test ! -s "$WORK/other.txt"

# 3. The admin: the cluster-wide view, unchanged in shape.
"$HEADROOM" explain "$NS/web-0" >"$WORK/admin.txt" 2>"$WORK/admin.err"
rc=$?
check "admin: explain exits 0" test "$rc" -eq 0
check "admin: the cluster-wide view (no tenant line)" sh -c "! grep -q '^tenant view' '$WORK/admin.txt'"
check "admin: its first line, the node line and the cap line" \
  sh -c "head -1 '$WORK/admin.txt' | grep -qx 'pod $NS/web-0 on node $NODE: managed' &&
         grep -qx 'node $NODE' '$WORK/admin.txt' && grep -q '^  cap = max(least bound, r) ' '$WORK/admin.txt' &&
         grep -q '^  caps (design §2.3):$' '$WORK/admin.txt' && grep -q '^last status annotation: {' '$WORK/admin.txt'"
check "admin: every pod on the node named, B's too" \
  sh -c "grep -q ' db-$MARK ' '$WORK/admin.txt' && grep -q ' cache-$MARK ' '$WORK/admin.txt' && grep -q ' web-0 ' '$WORK/admin.txt'"
"$HEADROOM" explain "$NS/web-0" -o json >"$WORK/admin.json" 2>/dev/null
check "admin -o json: the cluster view, the same target as the tenant's" \
  jq -e --slurpfile t "$WORK/tenant.json" '.view == "cluster" and .target == $t[0].target' "$WORK/admin.json"
"$HEADROOM" explain "$NS/web-0" --from-annotation >"$WORK/admin-ann.txt" 2>&1
check "admin --from-annotation: the tenant view" grep -q "^tenant view: .*(--from-annotation)$" "$WORK/admin-ann.txt"
check "admin --from-annotation: no pod name of namespace B" sh -c "! grep -q '$MARK' '$WORK/admin-ann.txt'"

if [ "$failed" -gt 0 ]; then
  for f in tenant.txt tenant.err tenant.json other.err admin.txt; do echo "--- $f"; cat "$WORK/$f"; done
fi
finish
