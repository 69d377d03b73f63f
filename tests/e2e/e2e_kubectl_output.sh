#!/usr/bin/env bash
# e2e_kubectl_output.sh — the recording of kubectl's -o jsonpath and -o custom-columns output
# that the unit and golden tiers compare headroom with (tests/golden/kubectl/: test_jsonpath,
# golden_kubectl_output) is what the cluster's real kubectl prints now. record.py runs every
# case again: jsonpath by `kubectl label --local` (no server), custom-columns by `kubectl get`
# of the rows stored as objects of a CRD that keeps every field, in a namespace of its own on
# the real API server; each recorded file must come out byte for byte the same. When kubectl
# (versions.env) or a case changes, regenerate them as record.py's header says.
set -uo pipefail
# shellcheck source=../lib/common.sh
. "$(dirname "${BASH_SOURCE[0]}")/../lib/common.sh"
require_cluster
G=$ROOT/tests/golden/kubectl
WORK=$(mktemp -d /tmp/headroom-e2e-kout.XXXXXX)
NS=kout-$S
cleanup() {
  k delete namespace "$NS" --wait=false >/dev/null 2>&1
  k delete crd outputprobes.test.kube-headroom.dev --wait=false >/dev/null 2>&1
  rm -rf "$WORK"
}
trap cleanup EXIT
k create namespace "$NS" >/dev/null

t0=$(now_ms)
python3 "$G/record.py" --kubectl "$KUBECTL" --headroom "$HEADROOM" --out "$WORK" \
  --kubeconfig "$KUBECONFIG" --namespace "$NS" >"$WORK/log" 2>&1
rc=$?
WHY="exit $rc: $(tail -3 "$WORK/log")"
check "record.py against the real kubectl and API server ($(($(now_ms) - t0)) ms)" [ "$rc" -eq 0 ]
for f in jsonpath.recorded.json columns.recorded.json plan.recorded.json; do
  WHY=$(diff "$G/$f" "$WORK/$f" 2>&1 | head -6)
  check "$f is what kubectl prints now" cmp -s "$G/$f" "$WORK/$f"
done
# The same paths on the live cluster's plan: headroom's jsonpath and kubectl's on its JSON. A pod
# bound to a node that does not exist is enough for a row (planned as node-unknown). Both plans
# read this test's namespace only: the two reads are moments apart, and other tests' pods come
# and go on the shared cluster.
k apply -f - >/dev/null <<POD
{"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "row", "namespace": "$NS"},
 "spec": {"nodeName": "kout-node-$S", "containers": [{"name": "c", "image": "none",
   "resources": {"requests": {"cpu": "250m"}, "limits": {"cpu": "500m"}}}]}}
POD
"$HEADROOM" plan -n "$NS" -o json >"$WORK/plan.json" 2>"$WORK/err"
python3 -c 'import json,sys; p=json.load(open(sys.argv[1])); json.dump({"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"p","labels":{"x":"y"}},"plan":p}, open(sys.argv[2],"w"))' \
  "$WORK/plan.json" "$WORK/wrapped.json"
T='{range .items[*]}{.node} {.namespace}/{.name} {.target}{"\n"}{end}'
ours=$("$HEADROOM" plan -n "$NS" -o "jsonpath=$T" 2>"$WORK/err")
theirs=$(KUBECONFIG=/dev/null k label --local -f "$WORK/wrapped.json" x=y --overwrite \
  -o "jsonpath=${T//.items/.plan.items}" 2>&1)
same_text() { [ -n "$ours" ] && [ "$ours" = "$theirs" ]; }
WHY="ours [$(head -3 <<<"$ours")] kubectl [$(head -3 <<<"$theirs")]"
check "live plan: -o jsonpath over items prints what kubectl prints" same_text
# preflight -o json: one item per text line, the same verdicts, the counts of the last line.
"$HEADROOM" preflight >"$WORK/pf.txt" 2>/dev/null
"$HEADROOM" preflight -o json >"$WORK/pf.json" 2>/dev/null
pf_same() {
  [ "$(jq -r '.items[] | "\(.verdict)  \(.message)"' "$WORK/pf.json")" = "$(sed '1d;$d' "$WORK/pf.txt")" ] &&
    [ "$(jq -r '"\(.failed) failed, \(.warnings) warning"' "$WORK/pf.json")" = "$(tail -1 "$WORK/pf.txt" | sed 's/warnings$/warning/')" ] &&
    [ "$(jq -r '[.items[].name] | unique | length' "$WORK/pf.json")" -ge 5 ]
}
WHY="json [$(head -c 300 "$WORK/pf.json")] text [$(head -3 "$WORK/pf.txt")]"
check "preflight -o json: the text's lines as items {name, verdict, message}, the same counts" pf_same
pf_yaml() { "$HEADROOM" preflight -o yaml 2>/dev/null | matches '^kind: "Preflight"$'; }
check "preflight -o yaml" pf_yaml
finish
