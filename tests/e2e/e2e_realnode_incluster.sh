#!/usr/bin/env bash
# e2e_realnode_incluster.sh — the controller installed as users install it (issue 14, third
# bullet), as far as a loopback-only node allows: the chart (charts/kube-headroom) with the
# project's image (scripts/image.sh, imported into the real node's containerd), running as a Pod
# on the real node with its ServiceAccount's projected token (in-cluster configuration), holding
# the leader Lease, and resizing a managed burner on that node — the limit it writes is the
# container's CFS quota.
#
# What this machine forces (test/cluster/README.md): pods with their own network namespace reach
# nothing (the CNI keeps them alone), so the controller runs hostNetwork on 127.0.0.1, and the
# in-cluster address of the API server (the kubernetes Service) has no kube-proxy behind it, so
# KUBERNETES_SERVICE_HOST/PORT name 127.0.0.1 and the API server's port (chart value extraEnv).
# One replica: a second hostNetwork replica on the one real node is refused by the scheduler
# ("didn't have free ports for the requested pod ports"), printed as a NOTE.
# Needs `cluster.sh up` and `cluster.sh real-node up` (the CTest fixtures).
set -uo pipefail
# shellcheck source=lib.sh
. "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
# shellcheck source=realnode_lib.sh
. "$(dirname "${BASH_SOURCE[0]}")/realnode_lib.sh"
WORK=$(mktemp -d /tmp/headroom-e2e-rnic.XXXXXX)
REL=hr-ic
CNS=hr-ic-$S
NS=e2e-rn-ic-$S
RUN=e2eric$S
API_PORT=$(k config view --minify -o jsonpath='{.clusters[0].cluster.server}' | sed 's#.*:##')
free_port() {
  local p
  for _ in $(seq 1 50); do
    p=$((20000 + RANDOM % 12000))
    ss -Htln "sport = :$p" | grep -q . || { echo "$p"; return; }
  done
  echo 28491
}
P_PROBE=$(free_port) P_METRICS=$(free_port) P_WEBHOOK=$(free_port)

cleanup() {
  "$HELM" uninstall "$REL" -n "$CNS" --wait --timeout 60s >/dev/null 2>&1
  # The next test must not see this controller still connected (lib.sh require_cluster).
  k -n "$CNS" wait --for=delete pod -l app.kubernetes.io/instance=$REL --timeout=60s >/dev/null 2>&1
  k delete namespace "$CNS" --ignore-not-found --wait=false >/dev/null 2>&1
  k delete headroomconfig cluster --ignore-not-found >/dev/null 2>&1
  delete_objects
  rm -rf "$WORK"
}
trap cleanup EXIT
require_real_node

# ------------------------------------------------------------------ the image on the node
archive=$("$ROOT/scripts/image.sh" --print --bin "$HEADROOM" 2>"$WORK/image.err")
ref=$(ctr --address "$REAL_SOCK" -n k8s.io images import "$archive" 2>&1 | sed -n 's/^unpacking \([^ ]*\) .*/\1/p' | head -1)
WHY="archive '$archive', ref '$ref': $(tail -n 2 "$WORK/image.err")"
check "the project's image is imported into the real node's containerd ($ref)" [ -n "$ref" ]
repo=${ref%:*}
tag=${ref##*:}

# ------------------------------------------------------------------ helm install
install_crd
cat <<YAML | k apply -f - >/dev/null
apiVersion: kube-headroom.dev/v1alpha1
kind: HeadroomConfig
metadata: {name: cluster}
spec:
  dryRun: false
  namespaceSelector:
    matchLabels: {kube-headroom.dev/mode: managed, kube-headroom.dev/e2e-run: "$RUN"}
YAML
cat >"$WORK/values.yaml" <<YAML
replicas: 1
image: {repository: "$repo", tag: "$tag", pullPolicy: Never}
crds: {install: false}
hostNetwork: true
listenAddress: 127.0.0.1
nodeSelector: {$REAL_TAINT: "true"}
tolerations: [{key: $REAL_TAINT, operator: Exists, effect: NoSchedule}]
probes: {port: $P_PROBE}
metrics: {port: $P_METRICS}
webhook: {port: $P_WEBHOOK}
podDisruptionBudget: {enable: false}
networkPolicy: {enable: false}
extraEnv:
- {name: KUBERNETES_SERVICE_HOST, value: 127.0.0.1}
- {name: KUBERNETES_SERVICE_PORT, value: "$API_PORT"}
YAML
out=$("$HELM" install "$REL" "$CHART" -n "$CNS" --create-namespace -f "$WORK/values.yaml" 2>&1)
rc=$?
WHY="$out"
check "helm install of the chart (hostNetwork, one replica, on the real node)" [ "$rc" -eq 0 ]
ctl_ready() {
  [ "$(k -n "$CNS" get pods -l app.kubernetes.io/instance=$REL -o jsonpath='{.items[0].status.conditions[?(@.type=="Ready")].status}' 2>/dev/null)" = True ]
}
wait_until 90 ctl_ready
CP=$(k -n "$CNS" get pods -l app.kubernetes.io/instance=$REL -o jsonpath='{.items[0].metadata.name}')
node=$(k -n "$CNS" get pod "$CP" -o jsonpath='{.spec.nodeName}')
sa=$(k -n "$CNS" get pod "$CP" -o jsonpath='{.spec.serviceAccountName}')
tokvol=$(k -n "$CNS" get pod "$CP" -o json | jq -r '[.spec.volumes[]? | select(.projected.sources[]?.serviceAccountToken)] | length')
WHY="pod '$CP' on '$node', serviceAccount '$sa', projected token volumes $tokvol"
check "the controller's Pod is Ready on the real node, with its ServiceAccount's projected token" \
  eval '[ "$node" = "$REAL_NODE" ] && [ -n "$sa" ] && [ "$tokvol" -ge 1 ] && ctl_ready'
holder() { k -n "$CNS" get lease -o jsonpath='{.items[0].spec.holderIdentity}' 2>/dev/null; }
WHY="lease holder '$(holder)'"
check "it holds the leader Lease in its namespace" wait_until 30 eval '[ -n "$(holder)" ]'
logf=$(ls "$REAL_STATE"/pod-logs/"${CNS}_${CP}"_*/headroom/0.log 2>/dev/null | head -1)
WHY="log $logf: $(grep -m1 'kubernetes client ready' "$logf" 2>/dev/null | cut -c1-160)"
check "it uses the in-cluster configuration (its log: client ready for https://127.0.0.1:$API_PORT)" \
  grep -q "kubernetes client ready.*server=https://127.0.0.1:$API_PORT" "$logf"

# ------------------------------------------------------------------ it resizes a real pod
mkns "$NS" managed
k label namespace "$NS" kube-headroom.dev/e2e-run="$RUN" >/dev/null
burner_pod "$NS" a 300m "" 1
wait_until 90 running "$NS" a
grown() {
  local l
  l=$(cpu_limit "$NS" a)
  [ -n "$l" ] && [ "$(milli "$l")" -gt 300 ] && quota_is "$NS" a "$(quota_of_milli "$(milli "$l")")"
}
wait_until 30 grown
lim=$(cpu_limit "$NS" a)
WHY="limit '$lim', quota '$(cg_quota "$NS" a 2>/dev/null)'"
check "the in-cluster controller gives a managed burner a limit ($lim) and its cgroup quota follows" grown
writer=$(k -n "$NS" get pod a --show-managed-fields -o json | jq -r '[.metadata.managedFields[]? | select(.subresource == "resize") | .manager] | join(",")')
WHY="resize field managers '$writer'"
check "the resize came from the controller's field manager (headroom)" grep -q headroom <<<"$writer"

# ------------------------------------------------------------------ two replicas
"$HELM" upgrade "$REL" "$CHART" -n "$CNS" -f "$WORK/values.yaml" --set replicas=2 >/dev/null 2>&1
sleep 10
why=$(k -n "$CNS" get events --field-selector reason=FailedScheduling -o jsonpath='{.items[-1:].message}' 2>/dev/null)
echo "NOTE  two replicas on the one real node: the second stays Pending: ${why:-(no scheduling event yet)}"

finish
