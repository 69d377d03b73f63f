#!/usr/bin/env bash
# e2e_helm_test.sh — `helm test` proves a release works: the chart installed on the
# real node, with the webhook on and a bring-your-own certificate (a CA this test makes; its
# Secret carries ca.crt) and a HeadroomConfig the release makes (live, for one managed namespace
# of this test's), then `helm test`: its Pod (templates/tests/verify.yaml) runs `headroom verify`
# in the project's image and must find the HeadroomConfig Ready, /metrics answering 200 with
# headroom_build_info to the test Pod's own ServiceAccount token (the certificate verified with
# the CA) and the webhook answering an AdmissionReview for a Burstable pod of that namespace,
# allowed with limits.cpu set (verified with the CA). A second `helm test` passes too (the hooks
# are deleted before they are made again). Then it is broken twice and must FAIL each time:
#   - the chart's ClusterRole <fullname>-metrics-reader deleted: the scrape is forbidden (403);
#   - helmTest.webhookURL pointed at a closed port (helm upgrade; the controller is untouched).
# The machine's overrides are tests/lib/realnode.sh chart_machine_values (the controller
# hostNetwork on 127.0.0.1 on the real node, KUBERNETES_SERVICE_HOST/PORT), which the test Pod
# inherits from the controller's values. One replica. Needs `cluster.sh up` and
# `cluster.sh real-node up` (the CTest fixtures).
set -uo pipefail
# shellcheck source=../lib/common.sh
. "$(dirname "${BASH_SOURCE[0]}")/../lib/common.sh"
# shellcheck source=../lib/realnode.sh
. "$(dirname "${BASH_SOURCE[0]}")/../lib/realnode.sh"
WORK=$(mktemp -d /tmp/headroom-e2e-ht.XXXXXX)
REL=hr-ht
FULL=$REL-kube-headroom
CNS=hr-ht-$S
WNS=e2e-ht-$S
RUN=e2eht$S
P_METRICS=${HEADROOM_E2E_HT_METRICS_PORT:-$(free_port)}
P_WEBHOOK=${HEADROOM_E2E_HT_WEBHOOK_PORT:-$(free_port "$P_METRICS")}
P_CLOSED=$(free_port "$P_METRICS" "$P_WEBHOOK")

cleanup() {
  "$HELM" uninstall "$REL" -n "$CNS" --wait --timeout 60s >/dev/null 2>&1
  # The next test must not see this controller still connected (common.sh require_cluster). Its
  # pods only: the last helm test Pod stays (before-hook-creation) until the namespace goes, and
  # waiting for it too took the whole timeout.
  k -n "$CNS" wait --for=delete pod -l "app.kubernetes.io/instance=$REL,app.kubernetes.io/component!=test" \
    --timeout=60s >/dev/null 2>&1
  # The test hooks are not the release's objects: uninstall leaves the last run's.
  k delete clusterrole,clusterrolebinding -l app.kubernetes.io/instance=$REL --ignore-not-found >/dev/null 2>&1
  k delete namespace "$CNS" "$WNS" --ignore-not-found --wait=false >/dev/null 2>&1
  k delete headroomconfig cluster --ignore-not-found >/dev/null 2>&1
  delete_objects
  rm -rf "$WORK"
}
trap cleanup EXIT
require_real_node
import_image "$WORK"
install_crd
k delete headroomconfig cluster --ignore-not-found >/dev/null 2>&1 # the release makes its own

# ------------------------------------------------------------------ the serving certificate
# Bring your own: a kubernetes.io/tls Secret with the CA's ca.crt beside the pair (the test Pod
# verifies with it), for 127.0.0.1, the name every client here dials.
webhook_ca "$WORK/ca"
webhook_cert "$WORK/tls" "$WORK/ca" >/dev/null
k create namespace "$CNS" >/dev/null
k -n "$CNS" create secret generic "$REL-tls" --type=kubernetes.io/tls --from-file=tls.crt="$WORK/tls/tls.crt" \
  --from-file=tls.key="$WORK/tls/tls.key" --from-file=ca.crt="$WORK/ca/ca.crt" >/dev/null
k create namespace "$WNS" >/dev/null
k label namespace "$WNS" kube-headroom.dev/mode=managed kube-headroom.dev/e2e-run="$RUN" >/dev/null

# ------------------------------------------------------------------ helm install
{
  chart_machine_values "$P_METRICS"
  cat <<YAML
replicas: 1
networkPolicy: {enable: false}
webhook:
  enable: true
  port: $P_WEBHOOK
  url: https://127.0.0.1:$P_WEBHOOK/mutate-pods
  certSecretName: $REL-tls
  caBundle: $(base64 -w0 "$WORK/ca/ca.crt")
  namespaceSelector:
    matchLabels: {kube-headroom.dev/mode: managed, kube-headroom.dev/e2e-run: "$RUN"}
headroomConfig:
  create: true
  spec:
    dryRun: false
    namespaceSelector:
      matchLabels: {kube-headroom.dev/mode: managed, kube-headroom.dev/e2e-run: "$RUN"}
    webhook: {enabled: true}
helmTest:
  metricsURL: https://127.0.0.1:$P_METRICS/metrics
  webhookNamespace: $WNS
  verifyMetricsCertificate: true
  timeout: 8s
YAML
} >"$WORK/values.yaml"
t0=$(now_ms)
out=$("$HELM" install "$REL" "$CHART" -n "$CNS" -f "$WORK/values.yaml" --wait --timeout 120s 2>&1)
rc=$?
WHY="$out"
check "helm install on the real node (webhook with its own certificate, a live HeadroomConfig; $(($(now_ms) - t0)) ms with --wait)" [ "$rc" -eq 0 ]

# name -> 0 when helm test passed; its output, then the test Pod's log, in $WORK/NAME.out. The log
# is read from the real node's files (the API server cannot reach this kubelet for `helm test
# --logs`), CRI's prefix (time, stream, tag) cut.
helm_test() {
  local rc f
  "$HELM" test "$REL" -n "$CNS" --timeout 120s >"$WORK/$1.out" 2>&1
  rc=$?
  f=$(ls -t "$REAL_STATE/pod-logs/${CNS}_$FULL-test_"*/verify/*.log 2>/dev/null | head -1)
  [ -z "$f" ] || sed 's/^[^ ]* [^ ]* [^ ]* //' "$f" >>"$WORK/$1.out"
  return "$rc"
}
t0=$(now_ms)
helm_test ok
rc=$?
took=$(($(now_ms) - t0))
WHY="rc $rc: $(tail -n 12 "$WORK/ok.out" | tr '\n' ' ')"
check "helm test passes ($took ms)" [ "$rc" -eq 0 ]
echo "--- helm test's Pod log:"; grep -E '^(PASS|FAIL|SKIP)  ' "$WORK/ok.out" | sed 's/^/    /'
WHY="$(grep -E '^(PASS|FAIL|SKIP)  ' "$WORK/ok.out" | tr '\n' ' ')"
check "its Pod found the HeadroomConfig Ready, live" grep -q '^PASS  config: HeadroomConfig "cluster" Ready=True .*live' "$WORK/ok.out"
check "its Pod scraped /metrics with its own token, the certificate verified with the CA" \
  grep -q '^PASS  metrics: GET .*: 200 with headroom_build_info; certificate verified' "$WORK/ok.out"
check "its Pod had the webhook set limits.cpu on a Burstable pod of $WNS, the certificate verified with the CA" \
  grep -q "^PASS  webhook: allowed a Burstable pod in $WNS with limits.cpu set (1 container); certificate verified" "$WORK/ok.out"
helm_test again
rc=$?
WHY="rc $rc: $(tail -n 5 "$WORK/again.out" | tr '\n' ' ')"
check "helm test passes again (its hooks are replaced, not in the way)" [ "$rc" -eq 0 ]
left=$(k get clusterrole,clusterrolebinding -l app.kubernetes.io/instance=$REL -o name | grep -e '-test' | paste -sd' ' -)
WHY="left: $left"
check "after the run, no cluster-scoped object of the test is left (hook-succeeded)" [ -z "$left" ]

# ------------------------------------------------------------------ broken: it must fail
k delete clusterrole "$FULL-metrics-reader" >/dev/null
t0=$(now_ms)
helm_test no-reader
rc=$?
WHY="rc $rc: $(grep -E '^(PASS|FAIL|SKIP)  ' "$WORK/no-reader.out" | tr '\n' ' ')"
check "with the ClusterRole $FULL-metrics-reader deleted, helm test FAILS on /metrics (403; $(($(now_ms) - t0)) ms)" \
  eval '[ "$rc" -ne 0 ] && grep -q "^FAIL  metrics: .*HTTP 403" "$WORK/no-reader.out"'

out=$("$HELM" upgrade "$REL" "$CHART" -n "$CNS" -f "$WORK/values.yaml" \
  --set helmTest.webhookURL="https://127.0.0.1:$P_CLOSED/mutate-pods" --wait --timeout 120s 2>&1)
rc=$?
WHY="$out"
check "helm upgrade: the ClusterRole back, helmTest.webhookURL at a closed port ($P_CLOSED)" [ "$rc" -eq 0 ]
t0=$(now_ms)
helm_test closed
rc=$?
WHY="rc $rc: $(grep -E '^(PASS|FAIL|SKIP)  ' "$WORK/closed.out" | tr '\n' ' ')"
check "with the webhook URL at a closed port, helm test FAILS on the webhook alone ($(($(now_ms) - t0)) ms)" \
  eval '[ "$rc" -ne 0 ] && grep -q "^PASS  metrics: " "$WORK/closed.out" && grep -q "^FAIL  webhook: POST https://127.0.0.1:$P_CLOSED/" "$WORK/closed.out"'

echo
finish
