#!/usr/bin/env bash
# e2e_helm_upgrade.sh — `helm upgrade` from the previous chart version upgrades the CRD
# (docs/install.md, "Upgrade"), with the pinned helm on the real API server:
#   1. the previous chart — charts/kube-headroom as of commit $PREV, from git history (a
#      shallow clone without it FAILS, it never skips) — installs with a HeadroomConfig; its
#      CRD, from the subchart's crds/, belongs to no release and lacks the rules added since:
#      it accepts maxMultiplier "0.5" and has no Policy printer column;
#   2. helm upgrade to the working tree's chart without --take-ownership is refused, naming the
#      CRD's ownership (what the upgrade guide says happens);
#   3. with --take-ownership it passes: the CRD is the same object (uid) with the new schema —
#      the Policy column, maxMultiplier "0.5" refused with the rule's message, the keep policy —
#      and the HeadroomConfig is the same object (uid); a second upgrade needs no flag;
#   4. helm uninstall keeps the CRD and the HeadroomConfig (same uids).
# The CRD already on the cluster is deleted first (with every HeadroomConfig: the test holds the
# cluster's lock) so that the old chart installs its own; the shipped CRD is applied back at the
# end. Simulated nodes only, nothing waits for the pods; ~15 s. Prints PASS/FAIL lines.
set -uo pipefail
# shellcheck source=../lib/common.sh
. "$(dirname "${BASH_SOURCE[0]}")/../lib/common.sh"
WORK=$(mktemp -d /tmp/headroom-helm-upgrade.XXXXXX)
PREV=184e460 # the last commit whose chart shipped the CRD in crds/ (the previous chart version)
REL=hr-upg-$S
NS=hr-upg-$S
CRD=headroomconfigs.kube-headroom.dev
h() { "$HELM" "$@"; }

cleanup() {
  h uninstall "$REL" -n "$NS" --timeout 60s >/dev/null 2>&1
  k delete headroomconfig cluster --ignore-not-found >/dev/null 2>&1
  k delete namespace "$NS" --ignore-not-found --wait=false >/dev/null 2>&1
  # The suite's CRD as every other test expects it: the shipped one.
  k apply -f "$CRD_FILE" >/dev/null 2>&1
  rm -rf "$WORK"
}
trap cleanup EXIT
require_cluster
[ -x "$HELM" ] || { echo "FAIL  no helm at $HELM (tests/cluster/cluster.sh build)"; echo "0 passed, 1 failed"; exit 1; }

# --- 1. the previous chart ----------------------------------------------------------------------
if ! git -C "$ROOT" cat-file -e "$PREV^{commit}" 2>/dev/null; then
  fail "the previous chart: commit $PREV is not in this clone's history" \
    "a shallow clone? fetch the history (git fetch --unshallow) and run again"
  finish
  exit 1
fi
git -C "$ROOT" archive "$PREV" charts/kube-headroom | tar -x -C "$WORK"
OLD=$WORK/charts/kube-headroom
WHY="$(ls "$OLD/charts/crds" 2>&1 | paste -sd' ' -)"
check "the previous chart ($PREV) ships the CRD in the subchart's crds/" [ -f "$OLD/charts/crds/crds/headroomconfig.yaml" ]

if k get crd "$CRD" >/dev/null 2>&1; then
  echo "NOTE the CRD on the cluster (and every HeadroomConfig) is deleted: the previous chart installs its own"
  k delete headroomconfig cluster --ignore-not-found >/dev/null 2>&1
  k delete crd "$CRD" --wait --timeout 60s >/dev/null
fi
k create namespace "$NS" >/dev/null
values=(--set headroomConfig.create=true --set replicas=1 --set leaderElection.enable=false
  --set podDisruptionBudget.enable=false)
if h install "$REL" "$OLD" -n "$NS" "${values[@]}" >"$WORK/install.out" 2>&1; then
  pass "helm install of the previous chart ($PREV) with a HeadroomConfig"
else
  fail "helm install of the previous chart" "$(tail -n 3 "$WORK/install.out" | tr '\n' ' ')"
fi
crd_uid=$(k get crd "$CRD" -o jsonpath='{.metadata.uid}' 2>/dev/null)
hc_uid=$(k get headroomconfig cluster -o jsonpath='{.metadata.uid}' 2>/dev/null)
columns() { k get crd "$CRD" -o jsonpath='{.spec.versions[0].additionalPrinterColumns[*].name}'; }
half() { # the spec the CEL rule added since $PREV refuses; dry-run: nothing is stored
  printf 'apiVersion: kube-headroom.dev/v1alpha1\nkind: HeadroomConfig\nmetadata: {name: cluster}\nspec: {maxMultiplier: "0.5"}\n' |
    k apply --dry-run=server -f - >"$WORK/half.out" 2>&1
}
WHY="CRD uid '$crd_uid', HeadroomConfig uid '$hc_uid'"
check "the old CRD and the HeadroomConfig exist" eval '[ -n "$crd_uid" ] && [ -n "$hc_uid" ]'
WHY="columns: $(columns)"
check "the old CRD has no Policy printer column" eval '! grep -qw Policy <<<"$(columns)"'
half
rc=$?
WHY="$(cat "$WORK/half.out")"
check "the old CRD accepts maxMultiplier \"0.5\" (the difference is observable)" [ "$rc" = 0 ]

# --- 2. the upgrade without --take-ownership ---------------------------------------------------
if h upgrade "$REL" "$CHART" -n "$NS" "${values[@]}" >"$WORK/refused.out" 2>&1; then
  fail "helm upgrade without --take-ownership passed: the old CRD was not unowned?"
else
  WHY="$(tail -n 2 "$WORK/refused.out" | tr '\n' ' ')"
  check "helm upgrade without --take-ownership is refused for the CRD's ownership (the guide's case)" \
    eval 'grep -q "CustomResourceDefinition \"$CRD\".*invalid ownership metadata" "$WORK/refused.out"'
fi

# --- 3. the upgrade with --take-ownership ------------------------------------------------------
t0=$(now_ms)
if h upgrade "$REL" "$CHART" -n "$NS" "${values[@]}" --take-ownership >"$WORK/upgrade.out" 2>&1; then
  pass "helm upgrade --take-ownership to the working tree's chart ($(($(now_ms) - t0)) ms)"
else
  fail "helm upgrade --take-ownership" "$(tail -n 3 "$WORK/upgrade.out" | tr '\n' ' ')"
fi
WHY="CRD uid $crd_uid -> $(k get crd "$CRD" -o jsonpath='{.metadata.uid}' 2>&1)"
check "the CRD is the same object (uid)" [ "$(k get crd "$CRD" -o jsonpath='{.metadata.uid}')" = "$crd_uid" ]
WHY="columns: $(columns)"
check "the CRD has the new schema: the Policy printer column" eval 'grep -qw Policy <<<"$(columns)"'
half
rc=$?
WHY="$(cat "$WORK/half.out")"
check "the CRD has the new schema: maxMultiplier \"0.5\" is refused with the rule's message" \
  eval '[ "$rc" != 0 ] && grep -q "spec.maxMultiplier must be 0 (no cap) or a number from 1 to 100" "$WORK/half.out"'
meta() { k get crd "$CRD" -o jsonpath='{.metadata.annotations.helm\.sh/resource-policy}/{.metadata.annotations.meta\.helm\.sh/release-name}'; }
WHY="resource-policy/release-name: $(meta)"
check "the CRD is the release's now, with the keep policy" [ "$(meta)" = "keep/$REL" ]
WHY="HeadroomConfig uid $hc_uid -> $(k get headroomconfig cluster -o jsonpath='{.metadata.uid}' 2>&1)"
check "the HeadroomConfig is the same object (uid)" [ "$(k get headroomconfig cluster -o jsonpath='{.metadata.uid}')" = "$hc_uid" ]
if h upgrade "$REL" "$CHART" -n "$NS" "${values[@]}" >"$WORK/again.out" 2>&1; then
  pass "a second helm upgrade needs no flag"
else
  fail "a second helm upgrade" "$(tail -n 3 "$WORK/again.out" | tr '\n' ' ')"
fi

# --- 4. uninstall keeps both -------------------------------------------------------------------
if h uninstall "$REL" -n "$NS" --timeout 60s >"$WORK/uninstall.out" 2>&1; then
  pass "helm uninstall"
else
  fail "helm uninstall" "$(tail -n 3 "$WORK/uninstall.out" | tr '\n' ' ')"
fi
WHY="CRD uid now '$(k get crd "$CRD" -o jsonpath='{.metadata.uid}' 2>&1)', $(grep -c 'kept due to the resource policy' "$WORK/uninstall.out") kept"
check "uninstall kept the CRD (same uid: its keep policy)" [ "$(k get crd "$CRD" -o jsonpath='{.metadata.uid}' 2>/dev/null)" = "$crd_uid" ]
WHY="HeadroomConfig uid now '$(k get headroomconfig cluster -o jsonpath='{.metadata.uid}' 2>&1)'"
check "uninstall kept the HeadroomConfig (same uid)" [ "$(k get headroomconfig cluster -o jsonpath='{.metadata.uid}' 2>/dev/null)" = "$hc_uid" ]

echo
finish
