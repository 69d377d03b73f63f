#!/usr/bin/env bash
# e2e_dryrun_default.sh — a HeadroomConfig that leaves dryRun out is in
# dry-run (design §1.2), on the real API server.
#
#   0. The CRD as shipped: `kubectl explain` describes every spec field (the
#      recursive listing names each field of the schema, no field reads
#      <empty>), dryRun's default is true, and docs/examples/headroomconfig.yaml
#      passes `kubectl apply --dry-run=server`.
#   A. The CRD's schema default: a HeadroomConfig with only a namespaceSelector
#      reads back with dryRun: true; `headroom run` (no --dry-run flag) then
#      writes no pods/resize — counted from the API server's audit log — the
#      pod's kube-headroom.dev/status says "dryRun":true and the config's
#      Ready condition says DryRun (printer column DRYRUN true).
#   B. The controller's own decoding: the CRD reinstalled without the dryRun
#      default (a CRD as some installers strip it), the config recreated
#      without dryRun (stored and served without the field), the controller
#      restarted so that it lists and watches through that schema: still no
#      resize, Ready DryRun, a new pod annotated "dryRun":true.
#   C. `kubectl patch … dryRun: false` (the shipped CRD back): the resizes
#      happen (audit), the annotation says "dryRun":false, Ready Applied.
#
# A reverted CRD default fails A; a reverted decoder default fails B.
# Prints PASS/FAIL per check and "N passed, N failed"; exits non-zero on a
# failure. Needs `tests/cluster/cluster.sh up`.
set -uo pipefail
# shellcheck source=../lib/common.sh
. "$(dirname "${BASH_SOURCE[0]}")/../lib/common.sh"
MPORT=${HEADROOM_E2E_DRYRUN_PORT:-$(free_port)}
WORK=$(mktemp -d /tmp/headroom-e2e.XXXXXX)
ID=headroom-e2e-dryrun
NS=e2e-dd-$S
NODE=e2e-dd-n1-$S
CRD=$CRD_FILE
SAMPLE=$ROOT/docs/examples/headroomconfig.yaml

cleanup() {
  stop_controller KILL
  delete_objects
  k delete headroomconfig cluster --ignore-not-found >/dev/null 2>&1
  k apply -f "$CRD" >/dev/null 2>&1 # phase B replaced it: put the shipped one back
  remove_identity "$ID"
  if [ "$failed" -gt 0 ]; then echo "--- controller log (tail)"; tail -n 40 "$WORK/controller.log"; fi
  [ -n "${KEEP_WORK:-}" ] || rm -rf "$WORK"
}
trap cleanup EXIT
require_cluster
if curl -s -o /dev/null -m 2 "http://127.0.0.1:$MPORT/"; then
  fail "metrics port" "127.0.0.1:$MPORT is already in use (set HEADROOM_E2E_DRYRUN_PORT)"; finish; exit
fi

annotation() { k -n "$NS" get pod "$1" -o jsonpath='{.metadata.annotations.kube-headroom\.dev/status}' 2>/dev/null; }
annotated() { annotation "$1" | matches "\"dryRun\":$2"; }
# Resize writes by the controller's user since a mark, from the audit log.
resizes_since() {
  audit_since "$1" "select(.user.username == \"$ID\" and .verb == \"patch\" and .objectRef.subresource == \"resize\")" | wc -l
}
ready() { # -> "status/reason/observedGeneration=generation?"
  k get headroomconfig cluster -o json | jq -r \
    '((.status.conditions // [])[] | select(.type == "Ready") | "\(.status)/\(.reason)/\(.observedGeneration == $g)")' \
    --argjson g "$(k get headroomconfig cluster -o jsonpath='{.metadata.generation}')"
}
ready_is() { [ "$(ready)" = "$1/true" ]; }
spec_dry_run() { k get headroomconfig cluster -o json 2>/dev/null | jq -c '.spec.dryRun'; }
mkconfig() { # a HeadroomConfig that says nothing about dryRun
  k apply -f - >/dev/null <<YAML
apiVersion: kube-headroom.dev/v1alpha1
kind: HeadroomConfig
metadata: {name: cluster}
spec:
  namespaceSelector: {matchLabels: {e2e-dryrun-default: "$S"}}
YAML
}

# ------------------------------------------------------- 0. the CRD as shipped
install_identity "$ID"
k delete headroomconfig cluster --ignore-not-found >/dev/null 2>&1
fields=$(python3 - "$CRD" <<'PY'
import sys, yaml
doc = yaml.safe_load(open(sys.argv[1]))
spec = doc["spec"]["versions"][0]["schema"]["openAPIV3Schema"]["properties"]["spec"]
def walk(s):
    for name, sub in (s.get("properties") or {}).items():
        yield name
        yield from walk(sub)
        yield from walk(sub.get("items") or {})
print(" ".join(sorted(set(walk(spec)))))
PY
)
k explain headroomconfig.spec --recursive >"$WORK/explain-recursive.txt" 2>&1
missing=""
for f in $fields; do grep -Eq "^ +$f"$'\t' "$WORK/explain-recursive.txt" || missing="$missing $f"; done
WHY="not listed:${missing:- (none)}; fields: $(echo "$fields" | wc -w); output: $(head -c 300 "$WORK/explain-recursive.txt")"
check "0a. kubectl explain headroomconfig.spec --recursive lists every field of the schema" \
  [ -z "$missing" -a -n "$fields" ]
k explain headroomconfig.spec >"$WORK/explain-spec.txt" 2>&1
n_empty=$(grep -c '<empty>' "$WORK/explain-spec.txt")
WHY="$n_empty <empty> descriptions: $(grep -B1 '<empty>' "$WORK/explain-spec.txt" | head -4)"
check "0b. kubectl explain headroomconfig.spec: every field described" \
  [ "$n_empty" = 0 -a "$(grep -c 'Default' "$WORK/explain-spec.txt")" -ge 10 ]
k explain headroomconfig.spec.dryRun >"$WORK/explain-dryrun.txt" 2>&1
WHY="$(tr '\n' ' ' <"$WORK/explain-dryrun.txt" | head -c 400)"
check "0c. kubectl explain headroomconfig.spec.dryRun says the default is true" \
  grep -q 'Default true' "$WORK/explain-dryrun.txt"
crd_default=$(k get crd headroomconfigs.kube-headroom.dev -o json |
  jq -c '.spec.versions[0].schema.openAPIV3Schema.properties.spec.properties.dryRun.default')
WHY="the served CRD's dryRun default is $crd_default"
check "0d. the CRD defaults dryRun to true" [ "$crd_default" = true ]
sample_ok() { k apply --dry-run=server -f "$SAMPLE" >"$WORK/sample.out" 2>&1; }
sample_ok
WHY="$(head -c 400 "$WORK/sample.out")"
check "0e. docs/examples/headroomconfig.yaml: kubectl apply --dry-run=server accepts it" sample_ok

# --------------------------------- A. the schema default: dryRun left out
mkns "$NS" plain
k label namespace "$NS" "e2e-dryrun-default=$S" >/dev/null
mknode "$NODE" 8
mkconfig
WHY="spec.dryRun read back as $(spec_dry_run)"
check "A1. a HeadroomConfig without dryRun reads back with dryRun: true (the CRD's default)" \
  [ "$(spec_dry_run)" = true ]
MARK=$(audit_mark)
start_controller || { fail "controller start" "not ready within 60 s"; finish; exit; }
# 200m alone on 8 cores would get min(200m x 10, 8) = 2 cores.
mkpod "$NS" a "$NODE" 200m
WHY="annotation '$(annotation a)'"
check "A2. the pod's status annotation says \"dryRun\":true" wait_until 30 annotated a true
WHY="Ready is $(ready)"
check "A3. the config's Ready condition says DryRun at its generation" wait_until 20 ready_is True/DryRun
sleep 3 # two debounce periods for a write that should not come
WHY="$(resizes_since "$MARK") resize patches in the audit log, limit '$(cpu_limit "$NS" a)'"
check "A4. no pods/resize write (audit log), no limit set" \
  [ "$(resizes_since "$MARK")" = 0 -a -z "$(cpu_limit "$NS" a)" ]
col=$(k get hcfg cluster --no-headers -o custom-columns=X:.spec.dryRun 2>&1)
hdr=$(k get hcfg cluster 2>&1 | head -1)
WHY="header '$hdr', dryRun '$col'"
check "A5. kubectl get hcfg keeps its columns (POLICY DRYRUN PODS NODES READY AGE) and shows dry-run" \
  [ "$(echo "$hdr" | tr -s ' ')" = "NAME POLICY DRYRUN PODS NODES READY AGE" -a "$col" = true ]

# ------------------------- B. no schema default: the controller's own reading
# The controller is restarted around the CRD swap: a watch opened before it
# is still served by the old schema, which would default dryRun itself.
stop_controller TERM
k delete headroomconfig cluster >/dev/null
python3 - "$CRD" >"$WORK/crd-nodefault.yaml" <<'PY'
import sys, yaml
doc = yaml.safe_load(open(sys.argv[1]))
spec = doc["spec"]["versions"][0]["schema"]["openAPIV3Schema"]["properties"]["spec"]
del spec["properties"]["dryRun"]["default"]
print(yaml.safe_dump(doc))
PY
install_crd "$WORK/crd-nodefault.yaml"
nodefault() { [ "$(k get crd headroomconfigs.kube-headroom.dev -o json | jq -c '.spec.versions[0].schema.openAPIV3Schema.properties.spec.properties.dryRun | has("default")')" = false ]; }
wait_until 10 nodefault
mkconfig_stored_bare() { k delete headroomconfig cluster --ignore-not-found >/dev/null 2>&1; mkconfig; [ "$(spec_dry_run)" = null ]; }
# The API server may serve the old schema for a moment after the update.
WHY="spec.dryRun read back as $(spec_dry_run)"
check "B1. with the dryRun default stripped from the CRD, the object is stored without dryRun" \
  wait_until 20 mkconfig_stored_bare
MARK=$(audit_mark)
start_controller || { fail "controller restart" "not ready within 60 s"; finish; exit; }
mkpod "$NS" b "$NODE" 200m
WHY="Ready is $(ready)"
check "B2. the controller reads the config without dryRun as dry-run (Ready DryRun)" \
  wait_until 20 ready_is True/DryRun
WHY="annotation of b '$(annotation b)'"
check "B3. a new pod's status annotation says \"dryRun\":true" wait_until 30 annotated b true
sleep 3
WHY="$(resizes_since "$MARK") resize patches, limits a '$(cpu_limit "$NS" a)' b '$(cpu_limit "$NS" b)'"
check "B4. still no pods/resize write (audit log), no limit set" \
  [ "$(resizes_since "$MARK")" = 0 -a -z "$(cpu_limit "$NS" a)$(cpu_limit "$NS" b)" ]

# ------------------------------------------------- C. dryRun: false writes
install_crd "$CRD"
MARK=$(audit_mark)
k patch headroomconfig cluster --type merge -p '{"spec":{"dryRun":false}}' >/dev/null
# a and b, 200m each on 8 cores: 200 + 3800 capped at 200m x 10 = 2 cores each.
live() { limit_is "$NS" a 2 && limit_is "$NS" b 2; }
WHY="limits a '$(cpu_limit "$NS" a)' b '$(cpu_limit "$NS" b)'"
check "C1. patched to dryRun: false, both pods get their limit (2 cores)" wait_until 20 live
WHY="$(resizes_since "$MARK") resize patches by $ID"
check "C2. the resizes are in the audit log (2 pods/resize patches or more)" [ "$(resizes_since "$MARK")" -ge 2 ]
WHY="annotation '$(annotation a)'"
check "C3. the status annotation says \"dryRun\":false" wait_until 15 annotated a false
WHY="Ready is $(ready)"
check "C4. Ready says Applied" wait_until 20 ready_is True/Applied

finish
