#!/usr/bin/env bash
# e2e_helm.sh — the Helm chart (charts/kube-headroom, design §13) with the
# pinned helm (tests/cluster/cluster.sh build) on the real API server:
#   1. helm lint --strict, the chart, the CRDs subchart and every value set;
#   2. rendering fails, naming the value to set, for a webhook without a
#      certificate source, replicas without leader election, a budget that
#      would block every drain and an unknown value (the schema);
#   3. helm template with each value set of tests/helm/ (defaults, webhook +
#      cert-manager, webhook + own certificate, the webhook port restricted to
#      given peers (and NOTES.txt on it), HA with a budget, one replica,
#      hostNetwork + webhook URL, the Go implementation's chart's default
#      values file and one with each override its docs name, in its shapes:
#      namespaceSelector {key, value}, image.digest, its manager's flags in
#      extraArgs, which `headroom run` takes), each applied with kubectl apply
#      --dry-run=server, and what each set must change checked in the output;
#      cert-manager's and the Prometheus Operator's kinds come from minimal
#      CRDs (tests/helm/dry-run-crds.yaml, removed after) so that no object
#      is skipped;
#   3b. crds.install=false renders no CRD; the CRDs chart installs and
#      uninstalls on its own (the CRD stays: its keep policy); it and the
#      release of 5. take over the CRD the suite applied with kubectl
#      (--take-ownership);
#   4. deploy/install.yaml is what scripts/release/render-install.sh makes from the
#      chart (the file and the chart agree);
#   5. helm install on two simulated nodes: the Deployment Available;
#      helm upgrade: pods rolled (a new pod-template-hash), the CRD and the
#      HeadroomConfig the same objects (uid); helm uninstall: every object
#      carrying the release's label, namespaced or cluster-scoped, listed
#      before and after: only the HeadroomConfig is left (its keep policy),
#      and the CRD (its keep policy). The upgrade from the previous chart
#      version is tests/e2e/e2e_helm_upgrade.sh.
# kwok runs no containers: the image is never pulled. Prints PASS/FAIL lines.
set -uo pipefail
# shellcheck source=../lib/common.sh
. "$(dirname "${BASH_SOURCE[0]}")/../lib/common.sh"
WORK=$(mktemp -d /tmp/headroom-helm.XXXXXX)
T=$ROOT/tests/helm
REL=hr-helm-$S
NS=hr-helm-$S
TNS=hr-helm-tpl-$S
PSNS=hr-helm-pss-$S
CREATED_CRDS=()
HC_OURS=0
h() { "$HELM" "$@"; }

cleanup() {
  h uninstall "$REL" -n "$NS" --wait --timeout 60s >/dev/null 2>&1
  # Kept by design on uninstall; ours to remove so later tests start without it.
  [ "$HC_OURS" = 1 ] && k delete headroomconfig cluster --ignore-not-found >/dev/null 2>&1
  k delete namespace "$NS" "$TNS" "$PSNS" --ignore-not-found --wait=false >/dev/null 2>&1
  [ ${#CREATED_CRDS[@]} -eq 0 ] || k delete crd "${CREATED_CRDS[@]}" --ignore-not-found >/dev/null 2>&1
  delete_objects
  rm -rf "$WORK"
}
trap cleanup EXIT
require_cluster
[ -x "$HELM" ] || { echo "FAIL  no helm at $HELM (tests/cluster/cluster.sh build)"; echo "0 passed, 1 failed"; exit 1; }
echo "helm $(h version --short)"

# --- 1. lint ---------------------------------------------------------------------------
lint() { # name, helm lint args...
  local name=$1; shift
  if h lint --strict "$@" >"$WORK/lint.out" 2>&1; then pass "helm lint --strict $name"
  else fail "helm lint --strict $name" "$(grep -E 'ERROR|WARNING|Error' "$WORK/lint.out" | head -3 | tr '\n' ' ')"; fi
}
lint "the chart (defaults)" "$CHART"
lint "the CRDs chart alone" "$CHART/charts/crds"
# Every value set of tests/helm (the fixture CRDs are not one); a set that brings its own
# certificate gets a CA (base64 of any text: lint checks no PEM), as section 3 gives it.
for f in "$T"/*.yaml; do
  [ "$f" = "$T/dry-run-crds.yaml" ] && continue
  ca=(); grep -qE '^ *(certSecretName|url): *[^ "]' "$f" && ca=(--set webhook.caBundle=Y2E=)
  lint "with tests/helm/$(basename "$f")" "$CHART" -f "$f" "${ca[@]}"
done
lint "with the OpenShift set (values-openshift.yaml)" "$CHART" -f "$CHART/values-openshift.yaml"

# --- 2. what must not render -------------------------------------------------------------
render_fails() { # name, message substring, helm template args...
  local name=$1 want=$2; shift 2
  if h template x "$CHART" -n "$TNS" "$@" >/dev/null 2>"$WORK/fail.err"; then
    fail "$name" "it rendered"
  elif grep -qF -- "$want" "$WORK/fail.err"; then
    pass "$name"
  else
    fail "$name" "not the expected message ('$want'): $(head -c 300 "$WORK/fail.err")"
  fi
}
# The supported range (design §12): Chart.yaml kubeVersion ">=1.35.0-0"; 1.34 (resize in beta) refused.
render_fails "Kubernetes 1.34 is refused by the chart's kubeVersion (1.35 and newer)" \
  "chart requires kubeVersion: >=1.35.0-0" --kube-version 1.34.2
sm=$(h template x "$CHART" -n "$TNS" --set webhook.enable=true 2>&1)
WHY="$(head -c 300 <<<"$sm")"
check "the webhook without a certificate source renders self-managed: the empty Secret, its Role by name, the daemon's flags" \
  eval 'grep -q -- "- --webhook-cert-self-managed$" <<<"$sm" && grep -q -- "- --webhook-config-name=x-kube-headroom$" <<<"$sm" &&
    grep -q "resourceNames: \[x-kube-headroom-webhook-tls\]" <<<"$sm" && grep -q "^  name: x-kube-headroom-webhook-tls$" <<<"$sm"'
render_fails "the webhook with a Secret but no caBundle fails too" \
  "webhook.caBundle=<base64 PEM of its CA>" --set webhook.enable=true --set webhook.certSecretName=s
render_fails "metrics.certManagerTLS without cert-manager fails" \
  "metrics.certManagerTLS=true needs certmanager.enable=true" --set metrics.certManagerTLS=true
render_fails "two replicas without leader election fail (two writers)" \
  "replicas=2 needs leaderElection.enable=true" --set leaderElection.enable=false
render_fails "minAvailable = replicas fails (it would block every drain)" \
  "would block every node drain" --set podDisruptionBudget.minAvailable=2
render_fails "hostNetworkReusePort without hostNetwork fails (pod networking has ports of its own)" \
  "hostNetworkReusePort=true is for replicas sharing a node's network: set hostNetwork=true" --set hostNetworkReusePort=true
render_fails "a budget with both minAvailable and maxUnavailable fails" \
  "set minAvailable or maxUnavailable, not both" --set podDisruptionBudget.minAvailable=1 --set podDisruptionBudget.maxUnavailable=1
render_fails "a PodMonitor with hostNetworkReusePort fails (no named container port to scrape)" \
  "prometheus.podMonitor.enable=true scrapes each pod's named metrics port" \
  --set hostNetwork=true --set hostNetworkReusePort=true --set prometheus.enable=true --set prometheus.podMonitor.enable=true
render_fails "an unknown value fails (values.schema.json)" \
  "additional properties 'replicaCount' not allowed" --set replicaCount=2

# --- 3. every value set, rendered and dry-run on the server --------------------------------
for crd in $(sed -n 's/^metadata: {name: \(.*\)}$/\1/p' "$T/dry-run-crds.yaml"); do
  k get crd "$crd" >/dev/null 2>&1 || CREATED_CRDS+=("$crd")
done
[ ${#CREATED_CRDS[@]} -eq 0 ] || k apply -f "$T/dry-run-crds.yaml" >/dev/null
k get crd headroomconfigs.kube-headroom.dev >/dev/null 2>&1 || CREATED_CRDS+=(headroomconfigs.kube-headroom.dev)
install_crd
k wait --for condition=established crd --all --timeout=30s >/dev/null
k create namespace "$TNS" >/dev/null
openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:prime256v1 -nodes -days 1 -subj /CN=e2e-helm-ca \
  -keyout "$WORK/ca.key" -out "$WORK/ca.crt" >/dev/null 2>&1
CA_B64=$(base64 -w0 "$WORK/ca.crt")

J="" # the current set's objects as JSON (a List)
render() { # name, helm template args... -> dry-run on the server; sets J
  local name=$1; shift
  J=""
  # --skip-tests: the helm test Pod names its ServiceAccount, which a dry run never makes
  # (tests/e2e/e2e_helm_test.sh runs them for real).
  if ! h template hr-tpl "$CHART" -n "$TNS" --include-crds --skip-tests "$@" >"$WORK/r.yaml" 2>"$WORK/r.err"; then
    fail "$name renders" "$(head -c 300 "$WORK/r.err")"; return
  fi
  if k apply --dry-run=server -f "$WORK/r.yaml" >"$WORK/r.out" 2>"$WORK/r.err"; then
    pass "$name: helm template | kubectl apply --dry-run=server ($(wc -l <"$WORK/r.out") objects)"
  else
    fail "$name: server-side dry-run" "$(head -n 3 "$WORK/r.err" | tr '\n' ' ')"
  fi
  J=$(python3 -c 'import json, sys, yaml; print(json.dumps({"items": [d for d in yaml.safe_load_all(sys.stdin) if d]}))' <"$WORK/r.yaml")
}
q() { jq -r "$1" <<<"$J"; } # a jq query on the current set
kinds() { q '[.items[].kind] | join(",")'; }
has() { q "[.items[] | select(.kind == \"$1\")] | length" | matches -x "${2:-1}"; }
dep() { q ".items[] | select(.kind == \"Deployment\") | $1"; }
args() { dep '.spec.template.spec.containers[0].args | join(" ")'; }
count() { q "[.items[] | select(.kind == \"$1\")] | length"; }
none_of() { local kd; for kd; do [ "$(count "$kd")" = 0 ] || return 1; done; }
all_of() { local kd; for kd; do [ "$(count "$kd")" -gt 0 ] || return 1; done; }
contains() { case " $1 " in *" $2 "*) return 0 ;; esac; return 1; } # a word of $1
webhook_svcs() { q '[.items[] | select(.kind == "Service" and (.metadata.name | endswith("-webhook")))] | length'; }

render "defaults"
J_DEF=$J
WHY="kinds $(kinds)"
check "defaults: no webhook registration, Service or cert-manager object" \
  eval 'none_of MutatingWebhookConfiguration Issuer Certificate && [ "$(webhook_svcs)" = 0 ]'
WHY="args: $(args)"
check "defaults: the webhook listener is off (--webhook-addr=), leader election on" \
  eval 'contains "$(args)" --webhook-addr= && contains "$(args)" --leader-elect'
WHY="priorityClassName '$(dep '.spec.template.spec.priorityClassName // ""')'"
check "defaults: no priority class" [ -z "$(dep '.spec.template.spec.priorityClassName // ""')" ]
WHY="$(q '.items[] | select(.kind == "PodDisruptionBudget") | .spec | tojson')"
check "defaults: the PDB never blocks a drain for a replica that is not ready (AlwaysAllow, minAvailable 1 of 2)" \
  [ "$(q '.items[] | select(.kind == "PodDisruptionBudget") | "\(.spec.unhealthyPodEvictionPolicy)/\(.spec.minAvailable)"')/$(dep .spec.replicas)" = AlwaysAllow/1/2 ]
WHY="kinds $(kinds)"
check "defaults: the CRD, no HeadroomConfig, no Namespace object (helm owns namespaces)" \
  eval '[ "$(count CustomResourceDefinition)" = 1 ] && none_of HeadroomConfig Namespace'

render "webhook + cert-manager" -f "$T/webhook-certmanager.yaml"
sec=$(q '.items[] | select(.kind == "Certificate") | .spec.secretName')
vol=$(dep '.spec.template.spec.volumes[0].secret.secretName')
WHY="Certificate secret '$sec', mounted '$vol'"
check "cert-manager: the Certificate's Secret is the one the pods mount" eval '[ -n "$sec" ] && [ "$sec" = "$vol" ]'
inj=$(q '.items[] | select(.kind == "MutatingWebhookConfiguration") | .metadata.annotations["cert-manager.io/inject-ca-from"]')
WHY="inject-ca-from '$inj'"
check "cert-manager: the CA is injected from that Certificate" [ "$inj" = "$TNS/$(q '.items[] | select(.kind == "Certificate") | .metadata.name')" ]
dns=$(q '.items[] | select(.kind == "Certificate") | .spec.dnsNames | join(" ")')
WHY="dnsNames $dns"
check "cert-manager: the certificate names the webhook and the metrics Services" \
  eval 'contains "$dns" hr-tpl-kube-headroom-webhook.$TNS.svc && contains "$dns" hr-tpl-kube-headroom-metrics.$TNS.svc'
WHY="args: $(args)"
check "cert-manager: the webhook listener is on" grep -q -- '--webhook-addr=:9443' <<<"$(args)"

render "webhook + own certificate (no cert-manager)" -f "$T/webhook-byo.yaml" --set webhook.caBundle="$CA_B64"
WHY="kinds $(kinds)"
check "own certificate: no cert-manager object" none_of Issuer Certificate
WHY="mounted '$(dep '.spec.template.spec.volumes[0].secret.secretName')'"
check "own certificate: the pods mount webhook.certSecretName" [ "$(dep '.spec.template.spec.volumes[0].secret.secretName')" = my-webhook-tls ]
WHY="namespaceSelector $(q '.items[] | select(.kind == "MutatingWebhookConfiguration") | .webhooks[0].namespaceSelector | tojson')"
check "own certificate: by default the webhook sees namespaces labelled kube-headroom.dev/mode=managed" \
  [ "$(q '.items[] | select(.kind == "MutatingWebhookConfiguration") | .webhooks[0].namespaceSelector | tojson')" = '{"matchLabels":{"kube-headroom.dev/mode":"managed"}}' ]
WHY="caBundle differs"
check "own certificate: the registration carries webhook.caBundle and names the Service" \
  [ "$(q '.items[] | select(.kind == "MutatingWebhookConfiguration") | .webhooks[0].clientConfig | "\(.caBundle)/\(.service.name)"')" = "$CA_B64/hr-tpl-kube-headroom-webhook" ]

render "HA with a budget" -f "$T/ha-pdb.yaml"
WHY="$(q '.items[] | select(.kind == "PodDisruptionBudget") | .spec | tojson') replicas $(dep .spec.replicas)"
check "HA: 3 replicas, minAvailable 2, AlwaysAllow" \
  [ "$(dep .spec.replicas)/$(q '.items[] | select(.kind == "PodDisruptionBudget") | "\(.spec.minAvailable)/\(.spec.unhealthyPodEvictionPolicy)"')" = 3/2/AlwaysAllow ]
WHY="priorityClassName '$(dep '.spec.template.spec.priorityClassName // ""')'"
check "HA: the priority class only because it was asked for" [ "$(dep '.spec.template.spec.priorityClassName')" = system-cluster-critical ]

render "one replica" -f "$T/single.yaml"
WHY="kinds $(kinds); args $(args)"
check "one replica: no PodDisruptionBudget (it would block every drain), no --leader-elect, no Lease Role" \
  eval 'none_of PodDisruptionBudget && [ -z "$(q ".items[] | select((.kind == \"Role\" or .kind == \"RoleBinding\") and (.metadata.name | endswith(\"-leader-election\"))) | .metadata.name")" ] &&
    ! contains "$(args)" --leader-elect'

render "hostNetwork + webhook URL" -f "$T/hostnet-url.yaml" --set webhook.caBundle="$CA_B64"
cc=$(q '.items[] | select(.kind == "MutatingWebhookConfiguration") | .webhooks[0].clientConfig | "\(.url)/\(.service // "no-service")"')
WHY="clientConfig $cc"
check "hostNetwork: the webhook is registered by URL, not by Service" [ "$cc" = "https://127.0.0.1:9443/mutate-pods/no-service" ]
WHY="hostNetwork $(dep .spec.template.spec.hostNetwork) args $(args)"
check "hostNetwork: the pods use the node's network and bind 127.0.0.1" \
  eval '[ "$(dep .spec.template.spec.hostNetwork)/$(dep .spec.template.spec.dnsPolicy)" = true/ClusterFirstWithHostNet ] && contains "$(args)" --webhook-addr=127.0.0.1:9443 && contains "$(args)" --metrics-addr=127.0.0.1:8443'

render "hostNetwork, two replicas on one node" -f "$T/hostnet-url.yaml" --set webhook.caBundle="$CA_B64" --set hostNetworkReusePort=true
ctr_='.spec.template.spec.containers[0]'
WHY="ports $(dep "$ctr_.ports | tojson") probes $(dep "[$ctr_.livenessProbe.exec.command, $ctr_.readinessProbe.exec.command] | tojson") args $(args)"
check "hostNetworkReusePort: no container (host) ports, --reuse-port, each replica's probe port its own (exec headroom probe --addr-file)" \
  eval '[ "$(dep "$ctr_.ports // [] | length")" = 0 ] && contains "$(args)" --reuse-port && contains "$(args)" --probe-addr=127.0.0.1:0 \
    && contains "$(args)" --probe-addr-file=/run/kube-headroom/probe-addr \
    && [ "$(dep "$ctr_.readinessProbe.exec.command | join(\" \")")" = "/usr/bin/headroom probe --addr-file=/run/kube-headroom/probe-addr /readyz" ] \
    && [ "$(dep "$ctr_.livenessProbe.exec.command[3]")" = /healthz ] \
    && [ "$(dep "[.spec.template.spec.volumes[] | select(.name == \"run\") | .emptyDir.medium] | join(\"\")")" = Memory ]'
WHY="env $(dep "[$ctr_.env[] | {(.name): (.valueFrom.fieldRef.fieldPath // .value)}] | add | tojson")"
check "the Lease identity comes from the Pod's name (POD_NAME from the downward API)" \
  [ "$(dep "$ctr_.env[] | select(.name == \"POD_NAME\") | .valueFrom.fieldRef.fieldPath")" = metadata.name ]

# The Go implementation's chart: its default values file as it is (go-default-values.yaml), then a
# file with each override its docs name (go-values.yaml), in its shapes: namespaceSelector {key,
# value}, image.digest, its manager's flags in extraArgs. Both must be accepted by the API server
# (the dry-run: a selector rendered verbatim is an unknown field there) and mean what they meant.
render "the Go implementation's chart's default values (tests/helm/go-default-values.yaml)" -f "$T/go-default-values.yaml"
sel() { q '.items[] | select(.kind == "MutatingWebhookConfiguration") | .webhooks[0].namespaceSelector | tojson'; }
WHY="namespaceSelector $(sel)"
check "Go defaults: webhook.namespaceSelector {key, value} is registered as matchLabels {key: value}" \
  [ "$(sel)" = '{"matchLabels":{"kube-headroom.dev/mode":"managed"}}' ]
WHY="kinds $(kinds); issuerRef $(q '.items[] | select(.kind == "Certificate") | .spec.issuerRef | tojson'); args $(args)"
check "Go defaults: the webhook on with cert-manager (the chart's Issuer, the CA injected), the listener on" \
  eval 'has Issuer && has Certificate && has MutatingWebhookConfiguration && contains "$(args)" --webhook-addr=:9443 \
    && [ "$(q '"'"'.items[] | select(.kind == "MutatingWebhookConfiguration") | .metadata.annotations["cert-manager.io/inject-ca-from"]'"'"')" = "$TNS/hr-tpl-kube-headroom-webhook" ]'
WHY="image $(dep '.spec.template.spec.containers[0].image')"
check "Go defaults: image.digest \"\" means the tag (the chart's appVersion)" \
  eval '[[ "$(dep ".spec.template.spec.containers[0].image")" == ghcr.io/karlkfi/kube-headroom:* ]]'
aggregated=$(q '[.items[] | select(.kind == "ClusterRole" and (.metadata.labels["rbac.authorization.k8s.io/aggregate-to-view"] // "") == "true")] | length')
WHY="kinds $(kinds); aggregate-to-view roles $aggregated; PDB $(q '.items[] | select(.kind == "PodDisruptionBudget") | .spec.minAvailable')"
check "Go defaults: the aggregation roles, a PDB of minAvailable 1, the NetworkPolicy; no ServiceMonitor, HeadroomConfig" \
  eval '[ "$aggregated" = 1 ] && [ "$(q ".items[] | select(.kind == \"PodDisruptionBudget\") | .spec.minAvailable")" = 1 ] && has NetworkPolicy && none_of ServiceMonitor HeadroomConfig'
# Its documented way to seed a policy: headroomConfig.create=true with its default spec (policy,
# excludedNamespaces, webhook.initialMultiplier "2"), which our CRD must take as it is.
render "the Go chart's defaults with headroomConfig.create=true" -f "$T/go-default-values.yaml" --set headroomConfig.create=true
WHY="spec $(q '.items[] | select(.kind == "HeadroomConfig") | .spec | tojson')"
check "Go defaults: its HeadroomConfig spec is rendered as it is (the dry-run above: our CRD takes it)" \
  [ "$(q '.items[] | select(.kind == "HeadroomConfig") | .spec | "\(.policy)/\(.excludedNamespaces[0])/\(.webhook.initialMultiplier)/\(.dryRun)"')" = Proportional/kube-system/2/true ]

render "a values file written for the Go implementation's chart" -f "$T/go-values.yaml"
WHY="image $(dep '.spec.template.spec.containers[0].image') pull $(dep '.spec.template.spec.containers[0].imagePullPolicy')"
check "Go values: image.{repository,digest,pullPolicy} and imagePullSecrets carried over (the digest wins over the tag)" \
  [ "$(dep '.spec.template.spec.containers[0].image')/$(dep '.spec.template.spec.containers[0].imagePullPolicy')/$(dep '.spec.template.spec.imagePullSecrets[0].name')" = registry.example.com/kube-headroom/headroom@sha256:0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef/Always/regcred ]
WHY="$(dep '.spec.template.spec | {replicas: 0, nodeSelector, tolerations: (.tolerations|length), affinity: (.affinity|keys), tsc: (.topologySpreadConstraints|length)} | tojson')"
check "Go values: replicas, resources, nodeSelector, tolerations, affinity, topologySpreadConstraints" \
  [ "$(dep '"\(.spec.replicas)/\(.spec.template.spec.containers[0].resources.requests.cpu)/\(.spec.template.spec.nodeSelector["kubernetes.io/os"])/\(.spec.template.spec.tolerations|length)/\(.spec.template.spec.affinity|keys|join(","))/\(.spec.template.spec.topologySpreadConstraints|length)"')" = 3/100m/linux/1/nodeAffinity/1 ]
WHY="args $(args); env $(dep '[.spec.template.spec.containers[0].env[].name] | join(",")')"
check "Go values: extraArgs (ours and its manager's flags, after the chart's) and extraEnv" \
  eval '[[ "$(args)" == *" -v --log-format=json --zap-log-level=debug --zap-encoder=json --enable-http2=false" ]] && [ "$(dep '"'"'[.spec.template.spec.containers[0].env[].name] | index("TZ") != null'"'"')" = true ]'
# Its manager's flags in extraArgs start our daemon: the rendered arguments (`run ...`) are taken,
# names and values (a wrong one is a usage error, exit 2), and the daemon goes on to read its
# kubeconfig (one that is not there: exit 1 there, before anything starts).
ex=$(dep '.spec.template.spec.containers[0].args | map(@sh) | join(" ")')
out=$(eval "timeout 10 \"\$HEADROOM\" $ex --kubeconfig=$WORK/none" 2>&1)
rc=$?
WHY="exit $rc: $(head -c 300 <<<"$out")"
check "Go values: headroom takes the rendered arguments, its manager's flags included (stops only at the missing kubeconfig)" \
  eval '[ "$rc" -eq 1 ] && grep -q "kubeconfig $WORK/none: cannot open" <<<"$out"'
WHY="kinds $(kinds)"
aggregated=$(q '[.items[] | select(.kind == "ClusterRole" and (.metadata.labels["rbac.authorization.k8s.io/aggregate-to-view"] // "") == "true")] | length')
check "Go values: aggregation roles, PDB, webhook, Certificate, ServiceMonitor, NetworkPolicy, CRD, HeadroomConfig" \
  eval 'all_of PodDisruptionBudget MutatingWebhookConfiguration Certificate ServiceMonitor NetworkPolicy CustomResourceDefinition HeadroomConfig && [ "$aggregated" = 1 ]'
WHY="PDB $(q '.items[] | select(.kind == "PodDisruptionBudget") | .spec | tojson'); ServiceMonitor tlsConfig $(q '.items[] | select(.kind == "ServiceMonitor") | .spec.endpoints[0].tlsConfig | tojson')"
check "Go values: podDisruptionBudget.minAvailable 2; metrics.certManagerTLS: the ServiceMonitor verifies with the Certificate's CA" \
  eval '[ "$(q ".items[] | select(.kind == \"PodDisruptionBudget\") | .spec.minAvailable")" = 2 ] \
    && [ "$(q ".items[] | select(.kind == \"ServiceMonitor\") | .spec.endpoints[0].tlsConfig | \"\(.ca.secret.name)/\(.ca.secret.key)/\(.insecureSkipVerify // false)\"")" = "$(q ".items[] | select(.kind == \"Certificate\") | .spec.secretName")/ca.crt/false" ]'
WHY="webhook namespaceSelector $(sel)"
check "Go values: webhook.namespaceSelector {key, value} replaces the default selector (not merged into it)" \
  [ "$(sel)" = '{"matchLabels":{"kube-headroom.dev/mode":"opted-in"}}' ]

# Issue 33's chart conventions, each set to something other than its default.
render "every chart convention set (tests/helm/conventions.yaml)" -f "$T/conventions.yaml"
ctr='.spec.template.spec.containers[0]'
WHY="image $(dep "$ctr.image")"
check "conventions: global.imageRegistry replaces the repository's registry (over image.registry), pulled by digest" \
  [ "$(dep "$ctr.image")" = mirror.example.com/kube-headroom/headroom@sha256:0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef ]
J_CONV=$J
img=$(h template x "$CHART" --set image.registry=reg.local:5000/ | sed -n 's/^ *image: //p' | head -1)
app=$(sed -n 's/^appVersion: "\(.*\)"/\1/p' "$CHART/Chart.yaml")
WHY="image $img"
check "conventions: image.registry alone replaces the registry host, tag from appVersion" [ "$img" = "reg.local:5000/kube-headroom/headroom:$app" ]
# The CRD is the kube-headroom-crds subchart's (its own values): not counted.
unlabelled=$(q '[.items[] | select(.kind != "CustomResourceDefinition") | select(.metadata.labels.team != "platform" or .metadata.labels["cost-center"] != "42") | "\(.kind)/\(.metadata.name)"] | join(" ")')
WHY="without commonLabels: $unlabelled"
check "conventions: commonLabels on every object of the chart ($(q '[.items[] | select(.kind != "CustomResourceDefinition")] | length') objects)" [ -z "$unlabelled" ]
WHY="pod labels $(dep '.spec.template.metadata.labels | tojson')"
check "conventions: commonLabels on the pods too, podLabels winning a shared key, the selector untouched" \
  [ "$(dep '.spec.template.metadata.labels | "\(.team)/\(.["cost-center"])/\(.["kube-headroom.dev/mode"])"')/$(dep '.spec.selector.matchLabels | length')" = headroom/42/unmanaged/2 ]
WHY="deployment annotations $(dep '.metadata.annotations | tojson') pod $(dep '.spec.template.metadata.annotations | tojson')"
check "conventions: deploymentAnnotations on the Deployment, podAnnotations on the pods" \
  [ "$(dep '"\(.metadata.annotations["example.com/owner"])/\(.spec.template.metadata.annotations["example.com/pod"])/\(.spec.template.metadata.annotations["example.com/owner"] // "none")"')" = platform/yes/none ]
WHY="strategy $(dep '.spec.strategy | tojson')"
check "conventions: updateStrategy is the Deployment's strategy" [ "$(dep '.spec.strategy | tojson')" = '{"rollingUpdate":{"maxSurge":1,"maxUnavailable":0},"type":"RollingUpdate"}' ]
WHY="pod $(dep '.spec.template.spec.securityContext | tojson') container $(dep "$ctr.securityContext | tojson")"
check "conventions: podSecurityContext and securityContext as given" \
  eval '[ "$(dep ".spec.template.spec.securityContext | \"\(.runAsUser)/\(.runAsGroup)/\(.fsGroup)/\(.runAsNonRoot)/\(.seccompProfile.type)\"")" = 1001/1001/1001/true/RuntimeDefault ] && [ "$(dep "$ctr.securityContext | tojson")" = "{\"allowPrivilegeEscalation\":false,\"capabilities\":{\"drop\":[\"ALL\"]},\"readOnlyRootFilesystem\":true}" ]'
WHY="liveness $(dep "$ctr.livenessProbe | tojson") readiness $(dep "$ctr.readinessProbe | tojson")"
check "conventions: probes.liveness and probes.readiness timing on the httpGet probes" \
  [ "$(dep "$ctr | \"\(.livenessProbe | [.httpGet.path, .initialDelaySeconds, .periodSeconds, .timeoutSeconds, .failureThreshold] | join(\",\"))/\(.readinessProbe | [.httpGet.path, .initialDelaySeconds // 0, .periodSeconds, .timeoutSeconds, .failureThreshold] | join(\",\"))\"")" = "/healthz,7,21,4,6//readyz,0,3,2,9" ]
J=$(h template x "$CHART" -n "$TNS" -f "$T/conventions.yaml" -f "$T/hostnet-url.yaml" --set webhook.caBundle="$CA_B64" --set hostNetworkReusePort=true \
  --set probes.readiness.timeoutSeconds=0 | python3 -c 'import json, sys, yaml; print(json.dumps({"items": [d for d in yaml.safe_load_all(sys.stdin) if d]}))')
WHY="liveness $(dep "$ctr.livenessProbe | tojson") readiness $(dep "$ctr.readinessProbe | tojson")"
check "conventions: the same timing on the exec probes of hostNetworkReusePort (timeoutSeconds 0: the chart's 5)" \
  [ "$(dep "$ctr | \"\(.livenessProbe | [.exec.command[1], .initialDelaySeconds, .periodSeconds, .timeoutSeconds, .failureThreshold] | join(\",\"))/\(.readinessProbe | [.exec.command[1], .periodSeconds, .timeoutSeconds, .failureThreshold] | join(\",\"))\"")" = "probe,7,21,4,6/probe,3,5,9" ]
J=$J_CONV
WHY="volumes $(dep '.spec.template.spec.volumes | tojson') mounts $(dep "$ctr.volumeMounts | tojson")"
check "conventions: extraVolumes and extraVolumeMounts after the chart's own" \
  [ "$(dep "\"\(.spec.template.spec.volumes | map(.name) | join(\",\"))/\(.spec.template.spec.volumes[-1].configMap.name)/\($ctr.volumeMounts | map(.mountPath) | join(\",\"))\"")" = "tls,proxy-ca/proxy-ca//etc/kube-headroom/tls,/etc/proxy-ca" ]
WHY="$(q '.items[] | select(.kind == "PodDisruptionBudget") | .spec | tojson')"
check "conventions: podDisruptionBudget.maxUnavailable instead of minAvailable" \
  [ "$(q '.items[] | select(.kind == "PodDisruptionBudget") | "\(.spec.maxUnavailable)/\(.spec.minAvailable // "none")"')" = 1/none ]
np='.items[] | select(.kind == "NetworkPolicy") | .spec'
WHY="$(q "$np | tojson")"
check "conventions: NetworkPolicy webhookFrom, metricsFrom, extraIngress and egress (policyTypes Ingress, Egress)" \
  [ "$(q "$np | \"\(.policyTypes | join(\",\"))/\(.ingress[0].ports[0].port):\(.ingress[0].from[0].ipBlock.cidr)/\(.ingress[1].ports[0].port):\(.ingress[1].from[0].namespaceSelector.matchLabels[\"kubernetes.io/metadata.name\"])/\(.ingress[2].from[0].podSelector.matchLabels.app)/\(.egress | map(.ports[].port) | join(\",\"))\"")" = "Ingress,Egress/9443:10.0.0.0/8/8443:monitoring/debugger/6443,53" ]
render "the same as a PodMonitor (prometheus.podMonitor.enable)" -f "$T/conventions.yaml" --set prometheus.podMonitor.enable=true
WHY="kinds $(kinds)"
check "PodMonitor: instead of the ServiceMonitor, its podMetricsEndpoints on the metrics port with the token Secret" \
  eval 'none_of ServiceMonitor && [ "$(q ".items[] | select(.kind == \"PodMonitor\") | .spec.podMetricsEndpoints[0] | \"\(.port)/\(.authorization.credentials.name)/\(.tlsConfig.ca.secret.key)\"")" = metrics/my-scrape-token/ca.crt ]'
# --dry-run=client still looks the kinds up (the dry-run CRDs) and refuses to adopt the CRD.
notes() { h install hr-notes "$CHART" -n "$TNS" --dry-run=client --set crds.install=false "$@" 2>&1 | sed -n '/^NOTES:/,$p'; }
n1=$(notes --set prometheus.enable=true --set webhook.selfManaged.enable=false) # no certificate at all
n2=$(notes --set prometheus.enable=true --set certmanager.enable=true)
WHY=$(tail -n 4 <<<"$n1")
check "NOTES.txt says the scrape skips verifying when no certificate is provided" grep -q "ServiceMonitor scrapes with insecureSkipVerify" <<<"$n1"
WHY=$(grep -i insecure <<<"$n2")
check "NOTES.txt says nothing of it with a certificate (cert-manager)" eval 'grep -q "^NOTES:" <<<"$n2" && ! grep -q insecureSkipVerify <<<"$n2"'
J=$J_DEF
WHY="$(q "$np | tojson")"
check "defaults: NetworkPolicy ingress only, metrics from namespaces labelled kube-headroom.dev/scrape=true, egress open" \
  [ "$(q "$np | \"\(.policyTypes | join(\",\"))/\(.ingress | length)/\(.ingress[0].from[0].namespaceSelector.matchLabels[\"kube-headroom.dev/scrape\"])/\(.egress // \"open\")\"")" = "Ingress/1/true/open" ]
WHY="pod $(dep '.spec.template.spec.securityContext | tojson') container $(dep "$ctr.securityContext | tojson") strategy $(dep '.spec.strategy | tojson')"
check "defaults: the restricted security contexts (65532, RuntimeDefault, read-only root, drop ALL) and one-at-a-time rollout" \
  [ "$(dep "\"\(.spec.template.spec.securityContext | [.runAsNonRoot, .runAsUser, .runAsGroup, .seccompProfile.type] | join(\",\"))/\($ctr.securityContext | [.allowPrivilegeEscalation, .readOnlyRootFilesystem, .capabilities.drop[0]] | join(\",\"))/\(.spec.strategy.rollingUpdate | [.maxUnavailable, .maxSurge] | join(\",\"))\"")" = "true,65532,65532,RuntimeDefault/false,true,ALL/1,0" ]

# The webhook port restricted to the API server's sources (networkPolicy.webhookFrom;
# docs/security.md): open to any source by default; with peers, they alone on the one rule that
# admits the port (no rule without ports, none other naming it), the API server accepting the
# policy (the dry-run validates it) and refusing what the schema leaves to it; NOTES.txt says
# what a wrong restriction does under each failurePolicy.
J=$(h template x "$CHART" -n "$TNS" --set webhook.enable=true --show-only templates/networkpolicy.yaml |
  python3 -c 'import json, sys, yaml; print(json.dumps({"items": [d for d in yaml.safe_load_all(sys.stdin) if d]}))')
webhook_rules() { jq -cS "[$np | .ingress[] | select((.ports // []) | length == 0 or any(.[]; .port == 9443))]" <<<"$J"; }
WHY="rules admitting 9443: $(webhook_rules)"
check "defaults with the webhook on: the webhook port open to any source (its rule has no from)" \
  [ "$(jq -c 'map(.from // "any")' <<<"$(webhook_rules)")" = '["any"]' ]
render "the webhook port restricted (tests/helm/webhook-restricted.yaml)" -f "$T/webhook-restricted.yaml"
want=$(python3 -c 'import json, sys, yaml; print(json.dumps(yaml.safe_load(sys.stdin)["networkPolicy"]["webhookFrom"], sort_keys=True, separators=(",", ":")))' <"$T/webhook-restricted.yaml")
WHY="rules admitting 9443: $(webhook_rules); want from $want"
check "webhookFrom: the only rule admitting the webhook port is 9443/TCP from exactly the given peers" \
  [ "$(jq -c 'map({ports, from})' <<<"$(webhook_rules)")" = "[{\"ports\":[{\"port\":9443,\"protocol\":\"TCP\"}],\"from\":$want}]" ]
WHY="$(q "$np | tojson")"
check "webhookFrom: the metrics port keeps its own peers (namespaces labelled kube-headroom.dev/scrape=true)" \
  [ "$(q "$np | [.ingress[] | select(any(.ports[]?; .port == 8443)) | .from[0].namespaceSelector.matchLabels[\"kube-headroom.dev/scrape\"]] | join(\",\")")" = true ]
printf 'webhook: {enable: true}\nnetworkPolicy:\n  webhookFrom:\n    - {ipBlock: {cidr: 10.0.0.0/8}, namespaceSelector: {}}\n' >"$WORK/np-mixed.yaml"
h template x "$CHART" -n "$TNS" -f "$WORK/np-mixed.yaml" --show-only templates/networkpolicy.yaml >"$WORK/np-mixed.out" 2>&1 &&
  k apply --dry-run=server -f "$WORK/np-mixed.out" >"$WORK/np-mixed.out.apply" 2>&1
cat "$WORK/np-mixed.out.apply" >>"$WORK/np-mixed.out" 2>/dev/null
WHY="$(head -c 300 "$WORK/np-mixed.out")"
check "webhookFrom: a peer with an ipBlock and a selector is refused by the API server (the dry-run validates the policy)" \
  grep -q "may not specify both ipBlock and another peer" "$WORK/np-mixed.out"
render_fails "webhookFrom: a misspelt peer key fails (values.schema.json)" \
  "at '/networkPolicy/webhookFrom/0': additional properties 'ipblock' not allowed" \
  --set webhook.enable=true --set 'networkPolicy.webhookFrom[0].ipblock.cidr=10.0.0.0/8'
n_ign=$(notes -f "$T/webhook-restricted.yaml")
n_fail=$(notes -f "$T/webhook-restricted.yaml" --set webhook.failurePolicy=Fail)
n_open=$(notes --set webhook.enable=true)
WHY="Ignore: $(grep -A4 'webhookFrom' <<<"$n_ign" | tr '\n' ' ') | Fail: $(grep -A4 'webhookFrom' <<<"$n_fail" | tr '\n' ' ')"
check "NOTES.txt with webhookFrom: the API server's source must be allowed; Ignore admits without limits, Fail refuses; nothing when open" \
  eval 'grep -q "reach the webhook port (9443)" <<<"$n_ign" && grep -q "created without a birth limit" <<<"$n_ign" \
    && grep -q "namespaces is refused (failurePolicy Fail" <<<"$n_fail" && ! grep -q "birth limit (failurePolicy" <<<"$n_fail" \
    && grep -q "^NOTES:" <<<"$n_open" && ! grep -q webhookFrom <<<"$n_open"'

# The OpenShift set under Pod Security "restricted": the admission checks a
# Deployment's pod template (warn; enforce refuses only Pods), so the dry-run
# must warn for a template that violates it and be silent for the set.
k create namespace "$PSNS" >/dev/null
k label namespace "$PSNS" pod-security.kubernetes.io/enforce=restricted pod-security.kubernetes.io/warn=restricted >/dev/null
pss() { # helm template args... -> dry-run in $PSNS; the server's warnings in $WORK/pss.err
  h template hr-pss "$CHART" -n "$PSNS" --skip-tests "$@" >"$WORK/pss.yaml" 2>"$WORK/pss.err" &&
    k apply --dry-run=server -f "$WORK/pss.yaml" >"$WORK/pss.out" 2>"$WORK/pss.err"
}
ocp=$(h template x "$CHART" -f "$CHART/values-openshift.yaml" | python3 -c 'import json, sys, yaml; print(json.dumps([d for d in yaml.safe_load_all(sys.stdin) if d and d["kind"] == "Deployment"][0]["spec"]["template"]["spec"]["securityContext"]))')
WHY="pod securityContext $ocp"
check "OpenShift set: no runAsUser or runAsGroup (restricted-v2 assigns them), still runAsNonRoot and RuntimeDefault" \
  [ "$ocp" = '{"runAsNonRoot": true, "seccompProfile": {"type": "RuntimeDefault"}}' ]
pss -f "$CHART/values-openshift.yaml"; rc=$?
WHY="rc $rc: $(head -c 400 "$WORK/pss.err")"
check "OpenShift set: accepted by kubectl apply --dry-run=server in a namespace enforcing restricted, no PodSecurity warning" \
  eval '[ "$rc" = 0 ] && ! grep -q PodSecurity "$WORK/pss.err"'
pss -f "$CHART/values-openshift.yaml" --set podSecurityContext.runAsNonRoot=false --set securityContext.allowPrivilegeEscalation=true
WHY="$(head -c 400 "$WORK/pss.err")"
check "the check sees violations: runAsNonRoot=false and allowPrivilegeEscalation=true are warned as violating restricted" \
  eval 'grep -q "would violate PodSecurity \"restricted:latest\"" "$WORK/pss.err" && grep -q allowPrivilegeEscalation "$WORK/pss.err" && grep -q runAsNonRoot "$WORK/pss.err"'
k delete namespace "$PSNS" --wait=false >/dev/null 2>&1

J=$(h template hr-tpl "$CHART" -n "$TNS" --include-crds --set crds.install=false | python3 -c 'import json, sys, yaml; print(json.dumps({"items": [d for d in yaml.safe_load_all(sys.stdin) if d]}))')
WHY="kinds $(kinds)"
check "crds.install=false: no CRD in the render (the subchart is off)" none_of CustomResourceDefinition
# --take-ownership: the CRD may be there already, applied by kubectl (install_crd), unowned.
if h install "crds-$S" "$CHART/charts/crds" -n "$TNS" --take-ownership >"$WORK/crds.out" 2>&1 &&
  h uninstall "crds-$S" -n "$TNS" >>"$WORK/crds.out" 2>&1; then
  pass "the CRDs chart installs and uninstalls on its own"
else
  fail "the CRDs chart on its own" "$(tail -n 3 "$WORK/crds.out" | tr '\n' ' ')"
fi
WHY="$(k get crd headroomconfigs.kube-headroom.dev -o name 2>&1)"
check "uninstalling the CRDs chart keeps the CRD" k get crd headroomconfigs.kube-headroom.dev

# --- 4. the one-file install is the chart's ---------------------------------------------------
if HELM=$HELM "$ROOT/scripts/release/render-install.sh" --check >"$WORK/sync.out" 2>&1; then
  pass "deploy/install.yaml is what scripts/release/render-install.sh renders from the chart"
else
  fail "deploy/install.yaml and the chart disagree" "$(grep -E '^[-+][^-+]' "$WORK/sync.out" | head -5 | tr '\n' ' ')"
fi

# --- 5. install, upgrade, uninstall ---------------------------------------------------------
mknode e2e-helm-a-$S 4
mknode e2e-helm-b-$S 4
if k get headroomconfig cluster >/dev/null 2>&1; then
  echo "NOTE a HeadroomConfig 'cluster' left by another test is deleted (the release creates its own)"
  k delete headroomconfig cluster >/dev/null
fi
k create namespace "$NS" >/dev/null
k label namespace "$NS" pod-security.kubernetes.io/enforce=restricted >/dev/null
DEP=$REL-kube-headroom
SEL=app.kubernetes.io/instance=$REL
# Every object with the release's label, namespaced or cluster-scoped, of every listable kind.
TYPES=$(k api-resources --verbs=list -o name | grep -vE '^(events|events\.events\.k8s\.io)$' | paste -sd, -)
labelled() { k get "$TYPES" -A -l "$SEL" -o custom-columns=KIND:.kind,NS:.metadata.namespace,NAME:.metadata.name --no-headers 2>/dev/null | sort; }
available() { [ "$(k -n "$NS" get deployment "$DEP" -o jsonpath='{.status.availableReplicas}/{.status.updatedReplicas}/{.status.replicas}')" = 2/2/2 ]; }

t0=$(now_ms)
# --take-ownership: the CRD (a template of the chart) may be there already, owned by no release.
if h install "$REL" "$CHART" -n "$NS" -f "$T/install-values.yaml" --take-ownership --wait --timeout 120s >"$WORK/install.out" 2>&1; then
  pass "helm install ($(($(now_ms) - t0)) ms with --wait)"
  HC_OURS=1
else
  fail "helm install" "$(tail -n 3 "$WORK/install.out" | tr '\n' ' ')"
fi
WHY="$(k -n "$NS" get deployment "$DEP" -o jsonpath='{.status.conditions[*].message}' 2>&1)"
check "the Deployment is Available on the simulated nodes (2 of 2)" wait_until 60 available
WHY="$(grep -c . "$WORK/install.out") lines of output"
check "NOTES.txt is printed (dry-run, webhook off)" eval 'grep -q "is in dry-run" "$WORK/install.out" && grep -q "webhook is off" "$WORK/install.out"'
crd_uid=$(k get crd headroomconfigs.kube-headroom.dev -o jsonpath='{.metadata.uid}')
hc_uid=$(k get headroomconfig cluster -o jsonpath='{.metadata.uid}' 2>/dev/null)
hash0=$(k -n "$NS" get pods -l "$SEL" -o jsonpath='{.items[0].metadata.labels.pod-template-hash}')
WHY="HeadroomConfig uid '$hc_uid', dryRun '$(k get headroomconfig cluster -o jsonpath='{.spec.dryRun}' 2>&1)'"
check "the release made the HeadroomConfig 'cluster' (dryRun true)" \
  eval '[ -n "$hc_uid" ] && [ "$(k get headroomconfig cluster -o jsonpath="{.spec.dryRun}")" = true ]'
labelled >"$WORK/before.txt"
echo "objects with $SEL after install:"; sed 's/^/    /' "$WORK/before.txt"
WHY="$(awk '{print $1}' "$WORK/before.txt" | sort -u | paste -sd, -)"
every_kind() { local kd; for kd in Deployment ServiceAccount ClusterRole ClusterRoleBinding Role RoleBinding Service PodDisruptionBudget NetworkPolicy HeadroomConfig Pod; do grep -q "^$kd " "$WORK/before.txt" || return 1; done; }
check "the labelled objects include every kind the chart makes" every_kind

t0=$(now_ms)
if h upgrade "$REL" "$CHART" -n "$NS" -f "$T/install-values.yaml" --set-json 'podAnnotations={"kube-headroom.dev/e2e-upgrade":"2"}' \
  --wait --timeout 120s >"$WORK/upgrade.out" 2>&1; then
  pass "helm upgrade ($(($(now_ms) - t0)) ms with --wait)"
else
  fail "helm upgrade" "$(tail -n 3 "$WORK/upgrade.out" | tr '\n' ' ')"
fi
rolled() {
  local hashes
  hashes=$(k -n "$NS" get pods -l "$SEL" -o jsonpath='{range .items[*]}{.metadata.labels.pod-template-hash}{"\n"}{end}' | sort -u)
  [ -n "$hashes" ] && [ "$(wc -l <<<"$hashes")" = 1 ] && [ "$hashes" != "$hash0" ] && available
}
WHY="pod-template-hash before '$hash0', now '$(k -n "$NS" get pods -l "$SEL" -o jsonpath='{.items[*].metadata.labels.pod-template-hash}')'"
check "upgrade rolled the pods (every pod has a new pod-template-hash, 2 of 2 available)" wait_until 60 rolled
WHY="CRD uid $crd_uid -> $(k get crd headroomconfigs.kube-headroom.dev -o jsonpath='{.metadata.uid}' 2>&1)"
check "upgrade kept the CRD (same uid)" [ "$(k get crd headroomconfigs.kube-headroom.dev -o jsonpath='{.metadata.uid}')" = "$crd_uid" ]
WHY="HeadroomConfig uid $hc_uid -> $(k get headroomconfig cluster -o jsonpath='{.metadata.uid}' 2>&1)"
check "upgrade kept the HeadroomConfig (same uid)" [ "$(k get headroomconfig cluster -o jsonpath='{.metadata.uid}')" = "$hc_uid" ]

t0=$(now_ms)
if h uninstall "$REL" -n "$NS" --wait --timeout 60s >"$WORK/uninstall.out" 2>&1; then
  pass "helm uninstall ($(($(now_ms) - t0)) ms with --wait)"
else
  fail "helm uninstall" "$(tail -n 3 "$WORK/uninstall.out" | tr '\n' ' ')"
fi
only_kept() { labelled >"$WORK/after.txt"; [ "$(cat "$WORK/after.txt")" = "HeadroomConfig   <none>   cluster" ] || [ "$(awk '{print $1 "/" $3}' "$WORK/after.txt")" = HeadroomConfig/cluster ]; }
wait_until 60 only_kept
echo "objects with $SEL after uninstall:"; sed 's/^/    /' "$WORK/after.txt"
WHY="left: $(paste -sd';' "$WORK/after.txt")"
check "uninstall left nothing with the release's label but the HeadroomConfig (keep policy)" only_kept
WHY="kept: $(grep -c keep "$WORK/uninstall.out") lines naming the keep policy"
check "helm says what it kept" grep -q 'kept due to the resource policy' "$WORK/uninstall.out"
WHY="CRD uid now '$(k get crd headroomconfigs.kube-headroom.dev -o jsonpath='{.metadata.uid}' 2>&1)'"
check "uninstall kept the CRD (same uid)" [ "$(k get crd headroomconfigs.kube-headroom.dev -o jsonpath='{.metadata.uid}' 2>/dev/null)" = "$crd_uid" ]
WHY="HeadroomConfig uid now '$(k get headroomconfig cluster -o jsonpath='{.metadata.uid}' 2>&1)'"
check "uninstall kept the HeadroomConfig (same uid)" [ "$(k get headroomconfig cluster -o jsonpath='{.metadata.uid}' 2>/dev/null)" = "$hc_uid" ]

echo
finish
