#!/usr/bin/env bash
# e2e_deploy.sh — the one-file install (deploy/install.yaml, design §13) on
# the real API server, as the README says it: exactly
# `kubectl apply -f deploy/install.yaml`, on a cluster with none of its
# objects (every object the file names is deleted first, including what
# other tests left: the CRD, the namespace, the cluster roles), no
# cert-manager and no Prometheus Operator. Then: no error and nothing on
# stderr, the Deployment Available on two simulated nodes (the namespace
# enforces Pod Security "restricted", so both replicas becoming available
# proves the pod's security settings pass it), the PDB selects them, the pods
# run as the least-privilege ServiceAccount, and `kubectl apply -R -f deploy/`
# (everything in deploy/) applies too. kwok runs no containers: the image is
# never pulled. Everything the file made is deleted at the end.
set -uo pipefail
# shellcheck source=../lib/common.sh
. "$(dirname "${BASH_SOURCE[0]}")/../lib/common.sh"
WORK=$(mktemp -d /tmp/headroom-deploy.XXXXXX)
F=$ROOT/deploy/install.yaml

cleanup() {
  # Waited for: a namespace still terminating refuses the next test's objects (its Leases).
  k delete -f "$F" --ignore-not-found --wait=true --timeout=120s >/dev/null 2>&1
  delete_objects
  [ "$failed" -gt 0 ] && cat "$WORK"/*.err 2>/dev/null | tail -n 20
  rm -rf "$WORK"
}
trap cleanup EXIT
require_cluster

# An empty cluster as far as the file is concerned: none of its objects exists.
k delete -f "$F" --ignore-not-found --wait=true --timeout=90s >/dev/null 2>"$WORK/pre.err"
none_left() { ! k get -f "$F" -o name 2>/dev/null | matches .; }
WHY="still there: $(k get -f "$F" -o name 2>/dev/null | paste -sd' ' -)"
check "before: no object of deploy/install.yaml exists (namespace, CRD, RBAC, Deployment)" wait_until 90 none_left

mknode e2e-dep-a-$S 4
mknode e2e-dep-b-$S 4
if (cd "$ROOT" && k apply -f deploy/install.yaml) >"$WORK/apply.out" 2>"$WORK/apply.err"; then
  pass "kubectl apply -f deploy/install.yaml ($(grep -c . "$WORK/apply.out") objects)"
else
  fail "kubectl apply -f deploy/install.yaml" "$(head -n 3 "$WORK/apply.err" | tr '\n' ' ')"
fi
# Its CRD must be what installed; nothing after this means anything otherwise.
k wait --for condition=established crd/headroomconfigs.kube-headroom.dev --timeout=30s >/dev/null 2>&1 ||
  crd_failed "$F" "$(grep -i -m 3 customresourcedefinition "$WORK/apply.err")"
WHY="stderr: $(head -c 300 "$WORK/apply.err")"
check "it printed no error or warning" [ ! -s "$WORK/apply.err" ]
WHY="first object created: $(head -n 1 "$WORK/apply.out")"
check "the namespace is the first object applied" grep -q '^namespace/kube-headroom ' <<<"$(head -n 1 "$WORK/apply.out")"

available() { [ "$(k -n kube-headroom get deployment kube-headroom -o jsonpath='{.status.availableReplicas}')" = 2 ]; }
WHY="$(k -n kube-headroom get deployment kube-headroom -o jsonpath='{.status.conditions[*].message}' 2>&1)"
check "the Deployment is Available: both replicas admitted under Pod Security 'restricted'" wait_until 90 available
cond=$(k -n kube-headroom get deployment kube-headroom -o jsonpath='{.status.conditions[?(@.type=="Available")].status}')
WHY="Available condition '$cond'"
check "the Deployment's Available condition is True" [ "$cond" = True ]
spread() { [ "$(k -n kube-headroom get pods -l app.kubernetes.io/name=kube-headroom -o jsonpath='{.items[*].spec.nodeName}' | tr ' ' '\n' | sort -u | wc -l)" -ge 2 ]; }
check "the replicas are spread over two nodes" spread
pdb_ok() { [ "$(k -n kube-headroom get pdb kube-headroom -o jsonpath='{.status.expectedPods}/{.status.disruptionsAllowed}/{.spec.unhealthyPodEvictionPolicy}')" = 2/1/AlwaysAllow ]; }
WHY="expectedPods/disruptionsAllowed/policy $(k -n kube-headroom get pdb kube-headroom -o jsonpath='{.status.expectedPods}/{.status.disruptionsAllowed}/{.spec.unhealthyPodEvictionPolicy}')"
check "the PDB covers both replicas, allows one disruption, and lets unready pods go (AlwaysAllow)" wait_until 30 pdb_ok
sa=$(k -n kube-headroom get pods -l app.kubernetes.io/name=kube-headroom -o jsonpath='{.items[0].spec.serviceAccountName}')
WHY="serviceAccountName '$sa'"
check "the pods run as the least-privilege service account" [ "$sa" = kube-headroom ]
pc=$(k -n kube-headroom get pods -l app.kubernetes.io/name=kube-headroom -o jsonpath='{.items[0].spec.priorityClassName}')
WHY="priorityClassName '$pc'"
check "the pods ask for no priority class" [ -z "$pc" ]
can=$(k auth can-i patch pods --subresource=resize -A --as=system:serviceaccount:kube-headroom:kube-headroom)/$(k auth can-i update pods -A --as=system:serviceaccount:kube-headroom:kube-headroom)
WHY="can-i patch pods/resize / update pods = $can"
check "that service account may resize pods and may not update them" [ "$can" = yes/no ]
WHY="$(k get mutatingwebhookconfiguration kube-headroom 2>&1 | head -n 1)"
check "no webhook is registered (the one-file install has no certificate for it)" \
  sh -c "! '$KUBECTL' get mutatingwebhookconfiguration kube-headroom >/dev/null 2>&1"
if (cd "$ROOT" && k apply -R -f deploy/) >"$WORK/all.out" 2>"$WORK/all.err"; then
  pass "kubectl apply -R -f deploy/ (everything in deploy/) applies too"
else
  fail "kubectl apply -R -f deploy/" "$(head -n 3 "$WORK/all.err" | tr '\n' ' ')"
fi

echo
finish
