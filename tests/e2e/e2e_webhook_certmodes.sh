#!/usr/bin/env bash
# e2e_webhook_certmodes.sh — the webhook's serving certificate, each way the chart gets one, on the
# suite's cluster with the controller's pods on the real node (design §8, §13). For
# each mode, one after the other: helm install of the chart with the project's image, the serving
# certificate in place and the registration's caBundle its CA, the webhook serving on
# https://127.0.0.1:PORT/mutate-pods a certificate that verifies against that CA for IP 127.0.0.1,
# then a pod created in a managed namespace is born with its CPU limit (200m x 2 = 400m; the
# registration's failurePolicy is Ignore, so the limit is checked, not the creation) and the audit
# record says which registration mutated it; helm uninstall.
#
#   (a) real cert-manager (tests/lib/certmanager.sh) with the chart's own self-signed Issuer;
#   (b) real cert-manager with an existing ClusterIssuer (certmanager.issuerRef): a CA ClusterIssuer
#       the test makes; the chart makes no Issuer and the certificate is that CA's;
#   (c) an existing Secret and caBundle (webhook.certSecretName, webhook.caBundle), no cert-manager
#       object;
#   (d) the Go implementation's chart's default values file (tests/helm/go-default-values.yaml:
#       cert-manager, webhook on, namespaceSelector {key, value}, image.digest "", ...) with only
#       what this machine forces added, and real cert-manager;
#   (e) (d) with the overrides its docs name that can run here: its manager's flags in extraArgs
#       (the daemon starts, Ready, logging JSON) and metrics.certManagerTLS (/metrics serves
#       cert-manager's certificate).
#
# The certificate's IP address comes from webhook.url (the chart puts an IP host in ipAddresses).
# What this machine forces: tests/lib/realnode.sh chart_machine_values, plus the webhook's port and
# URL (the API server reaches a hostNetwork pod on 127.0.0.1 only by URL). Each mode's registration
# selects only this run's namespace (kube-headroom.dev/e2e-run), except (d)'s, which is the Go
# default (every managed namespace): the test runs alone (HR_E2E_ALONE). The HeadroomConfig manages
# only this run's namespace, dryRun false (dry-run returns no patch).
# Needs `cluster.sh up` and `cluster.sh real-node up` (the CTest fixtures).
set -uo pipefail
# shellcheck source=../lib/common.sh
. "$(dirname "${BASH_SOURCE[0]}")/../lib/common.sh"
# shellcheck source=../lib/realnode.sh
. "$(dirname "${BASH_SOURCE[0]}")/../lib/realnode.sh"
# shellcheck source=../lib/certmanager.sh
. "$(dirname "${BASH_SOURCE[0]}")/../lib/certmanager.sh"
WORK=$(mktemp -d /tmp/headroom-e2e-cm.XXXXXX)
REL=hr-cm
FULL=$REL-kube-headroom
NS=e2e-cm-$S
RUN=e2ecm$S
P_METRICS=$(free_port)
P_WEBHOOK=$(free_port "$P_METRICS")
URL=https://127.0.0.1:$P_WEBHOOK/mutate-pods
CI_NAME=hr-cm-ca-$S
CNS=""

uninstall() {
  [ -n "$CNS" ] || return 0
  "$HELM" uninstall "$REL" -n "$CNS" --wait --timeout 60s >/dev/null 2>&1
  # The next mode, and the next test, must not see this controller still connected.
  k -n "$CNS" wait --for=delete pod -l app.kubernetes.io/instance=$REL --timeout=60s >/dev/null 2>&1
  k delete namespace "$CNS" --ignore-not-found --wait=false >/dev/null 2>&1
  CNS=""
}
cleanup() {
  uninstall
  k delete clusterissuer "$CI_NAME" --ignore-not-found >/dev/null 2>&1
  k -n kube-system delete secret "$CI_NAME" --ignore-not-found >/dev/null 2>&1
  certmanager_down "$WORK"
  k delete headroomconfig cluster --ignore-not-found >/dev/null 2>&1
  delete_objects
  [ "$failed" -eq 0 ] || { echo "--- cert-manager controller log (tail)"; tail -n 15 "$WORK/cm-controller.log" 2>/dev/null; }
  rm -rf "$WORK"
}
trap cleanup EXIT
require_real_node
t_all=$(now_ms)

import_image "$WORK"
install_crd
run_config
mkns "$NS" managed kube-headroom.dev/e2e-run="$RUN"
certmanager_up "$WORK"
WHY="$CM_WHY"
check "cert-manager $CERT_MANAGER_VERSION runs: its CRDs Established, its controller and CA injector started" [ -z "$CM_WHY" ]

# The values every mode shares: the machine's, and the webhook by URL on a free port.
chart_machine_values "$P_METRICS" >"$WORK/machine.yaml"
cat >"$WORK/webhook.yaml" <<YAML
webhook:
  port: $P_WEBHOOK
  url: $URL
YAML
# Each mode's own registration sees only this run's namespace; (d) keeps the Go default.
cat >"$WORK/ours.yaml" <<YAML
webhook:
  enable: true
  namespaceSelector:
    matchLabels: {kube-headroom.dev/mode: managed, kube-headroom.dev/e2e-run: "$RUN"}
YAML

reg() { k get mutatingwebhookconfiguration "$FULL" -o json 2>/dev/null; }
ca_b64() { reg | jq -r '.webhooks[0].clientConfig.caBundle // ""'; }
# serves CAFILE: the webhook's port answers TLS with a certificate that verifies against CAFILE
# for the IP address 127.0.0.1, as the API server checks it.
serves() {
  openssl s_client -connect "127.0.0.1:$P_WEBHOOK" -CAfile "$1" -verify_ip 127.0.0.1 \
    -verify_return_error </dev/null >"$WORK/s_client" 2>&1
}
# born MODE: a pod created in the managed namespace carries the webhook's limit, and the audit
# record says the chart's registration mutated it.
born() {
  local mode=$1 pod=born-$1 mark out lim gen ann
  mark=$(audit_mark)
  out=$(cat <<POD | k create -f - -o json 2>&1
apiVersion: v1
kind: Pod
metadata: {name: $pod, namespace: $NS}
spec:
$(burner_spec 200m "" 1)
POD
)
  lim=$(jq -r '.spec.containers[0].resources.limits.cpu // "none"' <<<"$out" 2>/dev/null)
  gen=$(jq -r '.metadata.generation' <<<"$out" 2>/dev/null)
  ann=$(audit_since "$mark" "select(.verb == \"create\" and .objectRef.resource == \"pods\" and .objectRef.name == \"$pod\" and .stage == \"ResponseComplete\") | .annotations | to_entries[] | select(.key | startswith(\"mutation.webhook\")) | .value | fromjson | select(.mutated) | .configuration")
  WHY="limit $lim generation $gen; audit mutated-by: ${ann:-none}; $(head -c 300 <<<"$out")"
  check "($mode) a pod created in the managed namespace is born with the webhook's limit (200m x 2 = 400m), mutated by the chart's registration" \
    eval '[ "$lim" = 400m ] && [ "$gen" = 1 ] && [ "$ann" = "\"$FULL\"" ]'
  k -n "$NS" delete pod "$pod" --grace-period=0 --force --wait=false >/dev/null 2>&1
}
# install MODE WHAT VALUES...: helm install into a namespace of the mode's own; 0 when it worked.
install() {
  local mode=$1 what=$2 out rc
  shift 2
  CNS=hr-cm-$mode-$S
  k create namespace "$CNS" >/dev/null
  T0=$(now_ms)
  out=$("$HELM" install "$REL" "$CHART" -n "$CNS" "$@" 2>&1)
  rc=$?
  WHY="$out"
  check "($mode) helm install: $what" [ "$rc" -eq 0 ]
  return "$rc"
}
# certificate MODE: cert-manager made the Certificate's Secret, the CA injector put its ca.crt in
# the registration, and the webhook serves that certificate; the CA left in $WORK/ca-MODE.crt.
certificate() {
  local mode=$1 sec
  sec=$(k -n "$CNS" get certificate "$FULL-webhook" -o jsonpath='{.spec.secretName}' 2>/dev/null)
  cert_ready() { [ "$(k -n "$CNS" get certificate "$FULL-webhook" -o jsonpath='{.status.conditions[?(@.type=="Ready")].status}')" = True ]; }
  wait_until 60 cert_ready
  WHY="secret '$sec', $(k -n "$CNS" get certificate "$FULL-webhook" -o jsonpath='{.status.conditions}' 2>&1)"
  check "($mode) cert-manager issued the Certificate $FULL-webhook into the Secret the pods mount" cert_ready
  k -n "$CNS" get secret "$sec" -o jsonpath='{.data.ca\.crt}' | base64 -d >"$WORK/ca-$mode.crt" 2>/dev/null
  k -n "$CNS" get secret "$sec" -o jsonpath='{.data.tls\.crt}' | base64 -d >"$WORK/tls-$mode.crt" 2>/dev/null
  injected() { [ -s "$WORK/ca-$mode.crt" ] && [ "$(ca_b64)" = "$(base64 -w0 "$WORK/ca-$mode.crt")" ]; }
  wait_until 30 injected
  WHY="caBundle '$(ca_b64 | head -c 40)…', annotation $(reg | jq -c '.metadata.annotations')"
  check "($mode) the CA injector put the Certificate's CA into the registration's caBundle" injected
  WHY="$(openssl x509 -in "$WORK/tls-$mode.crt" -noout -ext subjectAltName 2>&1 | tr '\n' ' ')"
  check "($mode) the certificate names IP 127.0.0.1 (webhook.url's host)" \
    eval 'openssl x509 -in "$WORK/tls-$mode.crt" -noout -ext subjectAltName 2>/dev/null | matches "IP Address:127.0.0.1"'
}
# serving MODE CAFILE: the webhook serves, within 120 s of the install (the kubelet puts a Secret
# made after the pod started into its volume at its next sync of the pod).
serving() {
  local mode=$1 ca=$2 took
  wait_until 120 serves "$ca"
  took=$((($(now_ms) - T0) / 1000))
  WHY="after ${took}s: $(grep -m3 -i -e 'verif' -e 'error' -e 'subject' "$WORK/s_client" | tr '\n' ' ')"
  check "($mode) the webhook serves on 127.0.0.1:$P_WEBHOOK a certificate that verifies against that CA for IP 127.0.0.1 (${took}s after the install)" serves "$ca"
}
both_ready() {
  [ "$(k -n "$CNS" get pods -l app.kubernetes.io/instance=$REL -o json | jq '[.items[] | select(.metadata.deletionTimestamp == null
    and any(.status.conditions[]?; .type == "Ready" and .status == "True"))] | length')" = 2 ]
}
done_mode() { # mode
  local t0=$(now_ms)
  uninstall
  echo "note: ($1) took $((($(now_ms) - T0) / 1000)) s, its uninstall $((($(now_ms) - t0) / 1000)) s"
}

# ------------------------------------------------------------------ (a) cert-manager, the chart's Issuer
if install a "cert-manager with the chart's own Issuer" -f "$WORK/machine.yaml" -f "$WORK/ours.yaml" \
  -f "$WORK/webhook.yaml" --set certmanager.enable=true; then
  iss=$(k -n "$CNS" get certificate "$FULL-webhook" -o jsonpath='{.spec.issuerRef.kind}/{.spec.issuerRef.name}' 2>/dev/null)
  WHY="issuerRef $iss; issuers $(k -n "$CNS" get issuers -o name 2>&1 | tr '\n' ' ')"
  check "(a) the Certificate names the chart's Issuer, which is there" \
    eval '[ "$iss" = "Issuer/$FULL-selfsigned" ] && k -n "$CNS" get issuer "$FULL-selfsigned" >/dev/null'
  certificate a
  serving a "$WORK/ca-a.crt"
  born a
fi
done_mode a

# ------------------------------------------------------------------ (b) cert-manager, an existing ClusterIssuer
webhook_ca "$WORK/ci"
k -n kube-system create secret tls "$CI_NAME" --cert "$WORK/ci/ca.crt" --key "$WORK/ci/ca.key" >/dev/null
cat <<YAML | k apply -f - >/dev/null
apiVersion: cert-manager.io/v1
kind: ClusterIssuer
metadata: {name: $CI_NAME}
spec:
  ca: {secretName: $CI_NAME}
YAML
ci_ready() { [ "$(k get clusterissuer "$CI_NAME" -o jsonpath='{.status.conditions[?(@.type=="Ready")].status}')" = True ]; }
wait_until 30 ci_ready
WHY="$(k get clusterissuer "$CI_NAME" -o jsonpath='{.status.conditions}' 2>&1)"
check "(b) the test's CA ClusterIssuer is Ready" ci_ready
if install b "cert-manager with an existing ClusterIssuer (certmanager.issuerRef)" -f "$WORK/machine.yaml" \
  -f "$WORK/ours.yaml" -f "$WORK/webhook.yaml" --set certmanager.enable=true \
  --set certmanager.issuerRef.name="$CI_NAME" --set certmanager.issuerRef.kind=ClusterIssuer; then
  iss=$(k -n "$CNS" get certificate "$FULL-webhook" -o jsonpath='{.spec.issuerRef.kind}/{.spec.issuerRef.name}' 2>/dev/null)
  n_iss=$(k -n "$CNS" get issuers -o name 2>/dev/null | wc -l)
  WHY="issuerRef $iss, $n_iss Issuers in $CNS"
  check "(b) the Certificate names the ClusterIssuer and the chart made no Issuer" \
    eval '[ "$iss" = "ClusterIssuer/$CI_NAME" ] && [ "$n_iss" = 0 ]'
  certificate b
  WHY="issuer $(openssl x509 -in "$WORK/tls-b.crt" -noout -issuer 2>&1)"
  check "(b) the serving certificate is signed by the test's CA" \
    eval 'openssl verify -CAfile "$WORK/ci/ca.crt" "$WORK/tls-b.crt" >/dev/null 2>&1'
  serving b "$WORK/ci/ca.crt"
  born b
fi
done_mode b

# ------------------------------------------------------------------ (c) an existing Secret and caBundle
webhook_cert "$WORK/own" "$WORK/ci" >/dev/null
CNS=hr-cm-c-$S # the Secret goes first, in the release namespace
k create namespace "$CNS" >/dev/null
k -n "$CNS" create secret tls own-tls --cert "$WORK/own/tls.crt" --key "$WORK/own/tls.key" >/dev/null
T0=$(now_ms)
out=$("$HELM" install "$REL" "$CHART" -n "$CNS" -f "$WORK/machine.yaml" -f "$WORK/ours.yaml" \
  -f "$WORK/webhook.yaml" --set webhook.certSecretName=own-tls --set webhook.caBundle="$(base64 -w0 "$WORK/ci/ca.crt")" 2>&1)
rc=$?
WHY="$out"
check "(c) helm install: an existing Secret and caBundle" [ "$rc" -eq 0 ]
if [ "$rc" -eq 0 ]; then
  n_cm=$(k -n "$CNS" get issuers,certificates -o name 2>/dev/null | wc -l)
  WHY="caBundle $(ca_b64 | head -c 40)…, $n_cm cert-manager objects, annotations $(reg | jq -c '.metadata.annotations // {}')"
  check "(c) the registration carries webhook.caBundle, no cert-manager object or annotation" \
    eval '[ "$(ca_b64)" = "$(base64 -w0 "$WORK/ci/ca.crt")" ] && [ "$n_cm" = 0 ] && [ "$(reg | jq -r ".metadata.annotations[\"cert-manager.io/inject-ca-from\"] // \"\"")" = "" ]'
  serving c "$WORK/ci/ca.crt"
  WHY="served $(openssl x509 -in "$WORK/s_client" -noout -fingerprint 2>&1), ours $(openssl x509 -in "$WORK/own/tls.crt" -noout -fingerprint)"
  check "(c) the certificate served is the Secret's" \
    eval '[ "$(openssl x509 -in "$WORK/s_client" -noout -fingerprint 2>/dev/null)" = "$(openssl x509 -in "$WORK/own/tls.crt" -noout -fingerprint)" ]'
  born c
fi
done_mode c

# ------------------------------------------------------------------ (d) the Go chart's defaults
# Its file as it is, then only what this machine forces (the webhook's URL and port included).
if install d "the Go chart's default values (tests/helm/go-default-values.yaml) and the machine's" \
  -f "$ROOT/tests/helm/go-default-values.yaml" -f "$WORK/machine.yaml" -f "$WORK/webhook.yaml"; then
  sel=$(reg | jq -c '.webhooks[0].namespaceSelector')
  WHY="namespaceSelector $sel"
  check "(d) its webhook.namespaceSelector {key, value} is registered as matchLabels" \
    [ "$sel" = '{"matchLabels":{"kube-headroom.dev/mode":"managed"}}' ]
  certificate d
  serving d "$WORK/ca-d.crt"
  wait_until 60 both_ready
  WHY="$(k -n "$CNS" get pods -o wide 2>&1 | tail -n 3)"
  check "(d) its two replicas are Ready" both_ready
  born d
fi
done_mode d

# ------------------------------------------------------------------ (e) the Go chart's documented overrides
# (d) with what its docs tell users to set that can run here: its manager's flags in extraArgs
# (docs/cli.md: json logs, debug level, no HTTP/2) and metrics.certManagerTLS (/metrics served with
# cert-manager's certificate). Its image.digest and prometheus.enable are e2e_helm's (no registry,
# no Prometheus Operator here).
cat >"$WORK/go-overrides.yaml" <<YAML
extraArgs: ["--zap-log-level=debug", "--zap-encoder=json", "--enable-http2=false"]
metrics: {certManagerTLS: true}
YAML
if install e "the Go chart's defaults with its documented overrides (extraArgs of its flags, metrics.certManagerTLS)" \
  -f "$ROOT/tests/helm/go-default-values.yaml" -f "$WORK/go-overrides.yaml" -f "$WORK/machine.yaml" -f "$WORK/webhook.yaml"; then
  certificate e
  serving e "$WORK/ca-e.crt"
  wait_until 60 both_ready
  WHY="$(k -n "$CNS" get pods -o wide 2>&1 | tail -n 3)"
  check "(e) its two replicas, started with its manager's flags, are Ready" both_ready
  metrics_tls() {
    openssl s_client -connect "127.0.0.1:$P_METRICS" -CAfile "$WORK/ca-e.crt" -verify_hostname "$FULL-metrics.$CNS.svc" \
      -verify_return_error </dev/null >"$WORK/s_client_m" 2>&1
  }
  wait_until 30 metrics_tls
  WHY="$(grep -m3 -i -e 'verif' -e 'error' "$WORK/s_client_m" | tr '\n' ' ')"
  check "(e) /metrics serves cert-manager's certificate, verified for $FULL-metrics.$CNS.svc" metrics_tls
  pod=$(k -n "$CNS" get pods -l app.kubernetes.io/instance=$REL -o jsonpath='{.items[0].metadata.name}')
  logf=$(ls "$REAL_STATE/pod-logs/${CNS}_${pod}"_*/headroom/*.log 2>/dev/null | sort -V | tail -1)
  # The kubelet's log lines: "<time> stderr F <the daemon's line>".
  n_json=$(sed 's/^[^ ]* [^ ]* [^ ]* //' "$logf" 2>/dev/null | grep -c '^{.*}$')
  n_all=$(wc -l <"$logf" 2>/dev/null || echo 0)
  WHY="log $logf: $n_json of $n_all lines JSON; first: $(head -n 1 "$logf" 2>/dev/null | cut -c1-200)"
  check "(e) --zap-encoder=json took: the daemon logs JSON lines" eval '[ "$n_json" -gt 0 ] && [ "$n_json" = "$n_all" ]'
  born e
fi
done_mode e

echo "note: all modes took $((($(now_ms) - t_all) / 1000)) s"
finish
