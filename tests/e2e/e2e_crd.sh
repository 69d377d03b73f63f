#!/usr/bin/env bash
# e2e_crd.sh — the shipped HeadroomConfig CRD on the real API server (design §1.1, §11).
#
# The CRD the chart ships (charts/kube-headroom/charts/crds/templates/headroomconfig.yaml, the one
# deploy/install.yaml is rendered from) installs — or this test, like every other, fails at once
# (tests/lib/common.sh install_crd). Then `kubectl apply` of a spec the schema forbids fails, with the
# schema's own message:
#   - a deadband percent of 101 (growPercent, shrinkPercent: 0…100);
#   - a HeadroomConfig named other than "cluster" (the CEL rule on metadata.name);
#   - an unknown policy (the enum: only Proportional).
# Each bad document is the good one with one field changed, and the good one is accepted by the
# same call, so each refusal is that field's. The applies are --dry-run=server: the API server
# runs defaulting and every validation as for a real write but stores nothing, so a HeadroomConfig
# another test keeps is never touched, even if a rule were missing. No controller; ~3 s.
set -uo pipefail
# shellcheck source=../lib/common.sh
. "$(dirname "${BASH_SOURCE[0]}")/../lib/common.sh"
WORK=$(mktemp -d /tmp/headroom-e2e-crd.XXXXXX)
trap 'rm -rf "$WORK"' EXIT

require_cluster
install_crd
pass "the shipped CRD installs and is Established (${CRD_FILE#"$ROOT"/})"

doc() { # name policy growPercent shrinkPercent
  cat <<YAML
apiVersion: kube-headroom.dev/v1alpha1
kind: HeadroomConfig
metadata: {name: $1}
spec:
  policy: $2
  deadband: {growPercent: $3, shrinkPercent: $4}
YAML
}
apply_dry() { doc "$@" | k apply --dry-run=server -f - >"$WORK/out" 2>&1; }

if apply_dry cluster Proportional 100 100; then
  pass "control: name cluster, policy Proportional, both percents 100 are accepted"
else
  fail "control: the good spec is refused" "$(tr '\n' ' ' <"$WORK/out")"
fi

refused() { # check-name expected-message name policy grow shrink
  local name=$1 want=$2; shift 2
  if apply_dry "$@"; then
    fail "$name" "kubectl apply succeeded: $(tr '\n' ' ' <"$WORK/out")"
  elif grep -qF -- "$want" "$WORK/out"; then
    pass "$name"
  else
    fail "$name" "refused, but without '$want': $(tr '\n' ' ' <"$WORK/out")"
  fi
}
refused "growPercent 101 is refused (the schema's maximum 100)" \
  'spec.deadband.growPercent: Invalid value: 101: spec.deadband.growPercent in body should be less than or equal to 100' \
  cluster Proportional 101 5
refused "shrinkPercent 101 is refused (the schema's maximum 100)" \
  'spec.deadband.shrinkPercent: Invalid value: 101: spec.deadband.shrinkPercent in body should be less than or equal to 100' \
  cluster Proportional 10 101
refused "a HeadroomConfig named other than cluster is refused (the CEL rule's message)" \
  'the HeadroomConfig must be named "cluster"' \
  other Proportional 10 5
refused "an unknown policy is refused (the enum)" \
  'spec.policy: Unsupported value: "Fair": supported values: "Proportional"' \
  cluster Fair 10 5

finish
