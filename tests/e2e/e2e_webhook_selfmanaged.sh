#!/usr/bin/env bash
# e2e_webhook_selfmanaged.sh — the webhook's self-managed serving certificate (design §8, docs/webhook.md):
# the chart installed with webhook.enable=true and no certificate source at all (no cert-manager,
# no webhook.certSecretName, no caBundle), two replicas on the real node, the project's image.
#   - the chart's empty Secret <fullname>-webhook-tls (Opaque: no data in the manifest) is filled by the controller (its
#     ServiceAccount's patch in the audit log, nobody else's): tls.crt issued by the CA of ca.crt
#     for the webhook's IP (webhook.url on 127.0.0.1), and the registration's caBundle is ca.crt;
#   - a pod created in a managed namespace is born with its CPU limit, with failurePolicy=Fail (a
#     webhook call that fails refuses the pod, so every pod created is an admission that worked);
#   - with a forced short validity (45 s, renewed 30 s before its end) the serving certificate
#     rotates while a pod is created every 2 s: the serial in the Secret changes, the certificate
#     the webhook serves changes, the CA and the caBundle stay, every pod is created and mutated;
#   - helm upgrade leaves the data the controller wrote (the chart renders the Secret empty);
#   - the controller's ServiceAccount may get and patch exactly that Secret and that registration,
#     not another Secret, not another registration, and may create no Secret.
# What this machine forces (hostNetwork on 127.0.0.1 on the real node, shared ports, the API
# server's address, the suite's CRD): tests/lib/realnode.sh chart_machine_values.
# Needs `cluster.sh up` and `cluster.sh real-node up` (the CTest fixtures).
set -uo pipefail
# shellcheck source=../lib/common.sh
. "$(dirname "${BASH_SOURCE[0]}")/../lib/common.sh"
# shellcheck source=../lib/realnode.sh
. "$(dirname "${BASH_SOURCE[0]}")/../lib/realnode.sh"
WORK=$(mktemp -d /tmp/headroom-e2e-sm.XXXXXX)
REL=hr-sm
FULL=$REL-kube-headroom
CNS=hr-sm-$S
NS=e2e-sm-$S
RUN=e2esm$S
SECRET=$FULL-webhook-tls
SA=system:serviceaccount:$CNS:$FULL
P_METRICS=${HEADROOM_E2E_SM_METRICS_PORT:-$(free_port)}
P_WEBHOOK=${HEADROOM_E2E_SM_WEBHOOK_PORT:-$(free_port "$P_METRICS")}

cleanup() {
  "$HELM" uninstall "$REL" -n "$CNS" --wait --timeout 60s >/dev/null 2>&1
  # The next test must not see this controller still connected (common.sh require_cluster).
  k -n "$CNS" wait --for=delete pod -l app.kubernetes.io/instance=$REL --timeout=60s >/dev/null 2>&1
  k delete namespace "$CNS" --ignore-not-found --wait=false >/dev/null 2>&1
  k delete headroomconfig cluster --ignore-not-found >/dev/null 2>&1
  delete_objects
  rm -rf "$WORK"
}
trap cleanup EXIT
require_real_node
import_image "$WORK"
install_crd

# ------------------------------------------------------------------ helm install, no certificate source
run_config
{
  chart_machine_values "$P_METRICS"
  cat <<YAML
networkPolicy: {enable: false}
webhook:
  enable: true
  port: $P_WEBHOOK
  url: https://127.0.0.1:$P_WEBHOOK/mutate-pods
  failurePolicy: Fail
  namespaceSelector:
    matchLabels: {kube-headroom.dev/mode: managed, kube-headroom.dev/e2e-run: "$RUN"}
  selfManaged: {validity: 45s, renewBefore: 30s}
YAML
} >"$WORK/values.yaml"
k create namespace "$CNS" >/dev/null
mark=$(audit_mark)
t0=$(now_ms)
out=$("$HELM" install "$REL" "$CHART" -n "$CNS" -f "$WORK/values.yaml" 2>&1)
rc=$?
WHY="$out"
check "helm install with webhook.enable=true and no certificate source renders and installs" [ "$rc" -eq 0 ]

ctl_pods() { k -n "$CNS" get pods -l app.kubernetes.io/instance=$REL -o json 2>/dev/null; }
n_ready() {
  ctl_pods | jq --arg n "$REAL_NODE" '[.items[] | select(.metadata.deletionTimestamp == null and .spec.nodeName == $n
    and any(.status.conditions[]?; .type == "Ready" and .status == "True"))] | length'
}
wait_until 120 eval '[ "$(n_ready)" = 2 ]'
WHY="$(ctl_pods | jq -c '[.items[] | {name: .metadata.name, phase: .status.phase}]')"
check "both replicas are Ready (readiness waits for the Secret's pair) in $((($(now_ms) - t0) / 1000)) s" \
  eval '[ "$(n_ready)" = 2 ]'

field() { k -n "$CNS" get secret "$SECRET" -o json | jq -r --arg f "$1" '.data[$f] // ""' | base64 -d; }
secret_serial() { field tls.crt | openssl x509 -noout -serial 2>/dev/null | sed 's/^serial=//'; }
served_serial() {
  openssl s_client -connect "127.0.0.1:$P_WEBHOOK" </dev/null 2>/dev/null | openssl x509 -noout -serial 2>/dev/null |
    sed 's/^serial=//'
}
mwc_bundle() { k get mutatingwebhookconfiguration "$FULL" -o jsonpath='{.webhooks[0].clientConfig.caBundle}' | base64 -d; }

field tls.crt >"$WORK/tls.crt"
field ca.crt >"$WORK/ca.crt"
typ=$(k -n "$CNS" get secret "$SECRET" -o jsonpath='{.type}')
verify=$(openssl verify -CAfile "$WORK/ca.crt" "$WORK/tls.crt" 2>&1)
sans=$(openssl x509 -in "$WORK/tls.crt" -noout -ext subjectAltName 2>&1 | tr -d '\n')
WHY="type $typ; verify: $verify; SANs: $sans"
check "the Secret $SECRET ($typ) holds a CA and a serving certificate it issued, for 127.0.0.1 and the webhook Service" \
  eval '[ "$typ" = Opaque ] && [ "$verify" = "$WORK/tls.crt: OK" ] && grep -q "IP Address:127.0.0.1" <<<"$sans" &&
    grep -q "DNS:$FULL-webhook.$CNS.svc" <<<"$sans" && [ -n "$(field tls.key)" ] && [ -n "$(field ca.key)" ]'
writers=$(audit_since "$mark" "select(.objectRef.resource == \"secrets\" and .objectRef.name == \"$SECRET\" and
  (.verb == \"patch\" or .verb == \"update\") and .stage == \"ResponseComplete\" and .responseStatus.code < 300) | .user.username" | tr -d '"' | sort -u | tr '\n' ' ')
WHY="writers: '$writers'"
check "the data was written by the controller's ServiceAccount alone (made by the controller, not by hand)" \
  eval '[ "$writers" = "$SA " ]'
wait_until 15 eval '[ "$(mwc_bundle)" = "$(cat "$WORK/ca.crt")" ]'
WHY="caBundle $(mwc_bundle | openssl x509 -noout -subject 2>&1 | head -1)"
check "the registration's caBundle is the Secret's ca.crt" eval '[ "$(mwc_bundle)" = "$(cat "$WORK/ca.crt")" ]'

# ------------------------------------------------------------------ pods every 2 s across rotations
mkns "$NS" managed
k label namespace "$NS" kube-headroom.dev/e2e-run="$RUN" >/dev/null
pod() { # name -> the pod as created (its limit is what the webhook gave it)
  k create -f - -o jsonpath='{.spec.containers[0].resources.limits.cpu}' <<POD
apiVersion: v1
kind: Pod
metadata: {name: $1, namespace: $NS}
spec:
  nodeSelector: {kube-headroom.dev/e2e-nowhere: "true"}
  containers:
  - {name: app, image: $REAL_BURNER, resources: {requests: {cpu: 200m, memory: 32Mi}}}
POD
}
first=$(pod p0 2>&1)
WHY="limit '$first'"
check "a pod created in the managed namespace is born with its CPU limit (200m x 2 = 400m)" [ "$first" = 400m ]
ca0=$(field ca.crt)
declare -A secret_serials=() served_serials=()
# Until two rotations are seen both in the Secret and on the wire (three serials each; a rotation
# every 15 s), at most 18 pods: all 18 took 52 s, alone on the machine.
created=0 mutated=0 refused="" t1=$(now_ms) n=0
for i in $(seq 1 18); do
  s=$(secret_serial) && [ -n "$s" ] && secret_serials[$s]=1
  s=$(served_serial) && [ -n "$s" ] && served_serials[$s]=1
  n=$i
  if lim=$(pod "p$i" 2>"$WORK/err"); then
    created=$((created + 1))
    [ "$lim" = 400m ] && mutated=$((mutated + 1))
  else
    refused+="p$i: $(head -c 200 "$WORK/err"); "
  fi
  [ "${#secret_serials[@]}" -lt 3 ] || [ "${#served_serials[@]}" -lt 3 ] || break
  sleep 2
done
took=$((($(now_ms) - t1) / 1000))
WHY="Secret serials ${!secret_serials[*]} over ${took}s"
check "the serving certificate rotated in the Secret (${#secret_serials[@]} serials in ${took} s)" \
  [ "${#secret_serials[@]}" -ge 2 ]
WHY="served serials ${!served_serials[*]}"
check "the certificate the webhook serves changed with it (${#served_serials[@]} served)" [ "${#served_serials[@]}" -ge 2 ]
WHY="created $created, mutated $mutated of $n; refused: $refused"
check "every pod created across the rotations was admitted and mutated ($n; failurePolicy Fail: no failed call)" \
  eval '[ "$created" = "$n" ] && [ "$mutated" = "$n" ]'
WHY="ca.crt changed: $([ "$(field ca.crt)" = "$ca0" ] && echo no || echo yes)"
check "the CA and the caBundle stayed through the rotations" \
  eval '[ "$(field ca.crt)" = "$ca0" ] && [ "$(mwc_bundle)" = "$ca0" ]'

# ------------------------------------------------------------------ helm upgrade keeps the data
out=$("$HELM" upgrade "$REL" "$CHART" -n "$CNS" --reset-then-reuse-values 2>&1)
rc=$?
WHY="$out; tls.crt $(field tls.crt | head -c 40)"
check "helm upgrade leaves the data the controller wrote" \
  eval '[ "$rc" -eq 0 ] && [ "$(field ca.crt)" = "$ca0" ] && [ -n "$(field tls.crt)" ]'

# ------------------------------------------------------------------ RBAC: exactly those objects
can() { k auth can-i "$@" --as="$SA" 2>/dev/null; }
res="own-secret:$(can get "secret/$SECRET" -n "$CNS") patch-own:$(can patch "secret/$SECRET" -n "$CNS")"
res+=" other-secret:$(can get secret/other -n "$CNS") list-secrets-other-ns:$(can get secret/"$SECRET" -n default)"
res+=" create-secret:$(can create secrets -n "$CNS")"
res+=" own-mwc:$(can patch "mutatingwebhookconfiguration/$FULL") other-mwc:$(can patch mutatingwebhookconfiguration/other)"
WHY="$res"
check "its ServiceAccount gets and patches its Secret and its registration, and no other Secret or registration, and creates no Secret" \
  eval '[ "$res" = "own-secret:yes patch-own:yes other-secret:no list-secrets-other-ns:no create-secret:no own-mwc:yes other-mwc:no" ]'
finish
