#!/usr/bin/env bash
# e2e_deploy.sh — the install manifests of deploy/ on the real API server
# (design §13). Server-side dry-run of every manifest whose kinds the test
# cluster knows, then the Deployment for real on two simulated nodes: the
# namespace enforces Pod Security "restricted", so both replicas becoming
# available proves the pod's security settings pass it, and the PDB and
# Services select them. (kwok runs no containers: the image is never pulled.
# cert-manager.yaml and servicemonitor.yaml need CRDs this cluster does not
# have and are not checked here.)
set -uo pipefail
# shellcheck source=lib.sh
. "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
WORK=$(mktemp -d /tmp/headroom-deploy.XXXXXX)
D=$ROOT/deploy

cleanup() {
  k -n kube-headroom delete deployment/kube-headroom service/kube-headroom-webhook \
    service/kube-headroom-metrics pdb/kube-headroom networkpolicy/kube-headroom \
    --ignore-not-found --wait=false >/dev/null 2>&1
  delete_objects
  [ "$failed" -gt 0 ] && cat "$WORK"/*.err 2>/dev/null | tail -n 20
  rm -rf "$WORK"
}
trap cleanup EXIT
require_cluster

# The CRD first, for real: the others' dry-runs need the namespace and kinds.
k apply -f "$D/crd-headroomconfig.yaml" >/dev/null
k wait --for condition=established crd/headroomconfigs.kube-headroom.dev --timeout=30s >/dev/null
k create namespace kube-headroom >/dev/null 2>&1
for f in rbac.yaml controller.yaml webhook.yaml; do
  if k apply --dry-run=server -f "$D/$f" >"$WORK/$f.out" 2>"$WORK/$f.err"; then
    pass "deploy/$f is accepted by the API server (server-side dry-run, $(wc -l <"$WORK/$f.out") objects)"
  else
    fail "deploy/$f server-side dry-run" "$(head -n 3 "$WORK/$f.err" | tr '\n' ' ')"
  fi
done

mknode e2e-dep-a-$S 4
mknode e2e-dep-b-$S 4
k apply -f "$D/rbac.yaml" >/dev/null
if k apply -f "$D/controller.yaml" >/dev/null 2>"$WORK/apply.err"; then
  pass "deploy/controller.yaml applies"
else
  fail "deploy/controller.yaml applies" "$(head -n 3 "$WORK/apply.err" | tr '\n' ' ')"
fi
available() { [ "$(k -n kube-headroom get deployment kube-headroom -o jsonpath='{.status.availableReplicas}')" = 2 ]; }
WHY="$(k -n kube-headroom get deployment kube-headroom -o jsonpath='{.status.conditions[*].message}' 2>&1)"
check "both replicas admitted under Pod Security 'restricted' and available" wait_until 90 available
spread() { [ "$(k -n kube-headroom get pods -l app.kubernetes.io/name=kube-headroom -o jsonpath='{.items[*].spec.nodeName}' | tr ' ' '\n' | sort -u | wc -l)" -ge 2 ]; }
check "the replicas are spread over two nodes" spread
pdb_ok() { [ "$(k -n kube-headroom get pdb kube-headroom -o jsonpath='{.status.expectedPods}/{.status.disruptionsAllowed}')" = 2/1 ]; }
WHY="expectedPods/disruptionsAllowed $(k -n kube-headroom get pdb kube-headroom -o jsonpath='{.status.expectedPods}/{.status.disruptionsAllowed}')"
check "the PDB covers both replicas and allows one disruption" wait_until 30 pdb_ok
sa=$(k -n kube-headroom get pods -l app.kubernetes.io/name=kube-headroom -o jsonpath='{.items[0].spec.serviceAccountName}')
WHY="serviceAccountName '$sa'"
check "the pods run as the least-privilege service account" [ "$sa" = kube-headroom ]
can=$(k auth can-i patch pods --subresource=resize -A --as=system:serviceaccount:kube-headroom:kube-headroom)/$(k auth can-i update pods -A --as=system:serviceaccount:kube-headroom:kube-headroom)
WHY="can-i patch pods/resize / update pods = $can"
check "that service account may resize pods and may not update them" [ "$can" = yes/no ]

echo
finish
