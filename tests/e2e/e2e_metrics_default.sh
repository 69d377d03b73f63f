#!/usr/bin/env bash
# e2e_metrics_default.sh — /metrics answers in the default install, with no Secret made by hand:
# the chart with its default values (no cert-manager, no webhook.certSecretName), then
# deploy/install.yaml, each installed on the suite's cluster as the controller's pods on the real
# node. For each: within 60 s of the install a scrape of https://127.0.0.1:<metrics port>/metrics
# with the token of a ServiceAccount bound to <fullname>-metrics-reader answers 200 with headroom_
# series (curl -k: until the controller has filled its Secret a replica serves the self-signed
# certificate it made at start); without a token 401, with an unbound ServiceAccount's token 403;
# the Secret <fullname>-webhook-tls (rendered empty) was filled by the controller alone (its
# ServiceAccount's patch in the audit log: no certificate made by hand), /metrics serves the
# certificate it holds (issued by its ca.crt, for the metrics Service's name), and both replicas
# are Ready and each serves that Secret's pair (its log names its serial: design §8, self-managed).
#
# What this machine forces, and nothing else is changed from the defaults
# (tests/cluster/README.md, e2e_realnode_incluster.sh): the image is the project's, imported into
# the real node's containerd (image repository and tag, pullPolicy Never: no registry); pods with
# their own network namespace reach nothing, so the controller runs hostNetwork on 127.0.0.1 on
# the real node (hostNetwork, listenAddress, nodeSelector and toleration of the real node); the
# two default replicas share that node's ports (hostNetworkReusePort: metrics through SO_REUSEPORT,
# each replica's probe listener on a port of its own, exec probes); the metrics port is a free
# one of the host's (metrics.port); the kubernetes Service has no kube-proxy behind it
# (KUBERNETES_SERVICE_HOST/PORT in extraEnv); the HeadroomConfig CRD is the suite's, shared by
# every test, so no release owns it (crds.install=false; install.yaml's copy without the CRD).
# deploy/install.yaml gets the same overrides by sed on a copy (no kustomize), and its namespace's
# Pod Security level privileged instead of restricted (hostNetwork is refused below it): the image and its
# pull policy, hostNetwork and the node's selector and toleration after serviceAccountName, the
# listen addresses and --reuse-port/--probe-addr-file in the args, the two env vars after the
# chart's, the container ports dropped and the probes made exec probes, the run emptyDir added,
# and the CRD document left out (awk).
# Needs `cluster.sh up` and `cluster.sh real-node up` (the CTest fixtures).
set -uo pipefail
# shellcheck source=../lib/common.sh
. "$(dirname "${BASH_SOURCE[0]}")/../lib/common.sh"
# shellcheck source=../lib/realnode.sh
. "$(dirname "${BASH_SOURCE[0]}")/../lib/realnode.sh"
WORK=$(mktemp -d /tmp/headroom-e2e-md.XXXXXX)
REL=hr-md
CNS=hr-md-$S
API_PORT=$(k config view --minify -o jsonpath='{.clusters[0].cluster.server}' | sed 's#.*:##')
P_METRICS=${HEADROOM_E2E_MD_METRICS_PORT:-$(free_port)}
PROBE_FILE=/run/kube-headroom/probe-addr
YAML_NS=kube-headroom # deploy/install.yaml's

uninstall_helm() {
  "$HELM" uninstall "$REL" -n "$CNS" --wait --timeout 60s >/dev/null 2>&1
  k -n "$CNS" wait --for=delete pod -l app.kubernetes.io/instance=$REL --timeout=60s >/dev/null 2>&1
  k delete namespace "$CNS" --ignore-not-found --wait=false >/dev/null 2>&1
  k delete clusterrolebinding "$REL-scraper-$S" --ignore-not-found >/dev/null 2>&1
}
# The suite's other tests keep their Leases in the namespace kube-headroom (common.sh makes it when
# missing). When it was there before, it stays, with its labels as they were: everything else of
# install.yaml is deleted. When this test made it, it goes, and the next test starts only once it
# is gone (a namespace still terminating refuses new objects).
ns_existed=0 ns_labels='{}'
uninstall_yaml() {
  [ -f "$WORK/install.yaml" ] || return 0
  if [ "$ns_existed" = 1 ]; then
    awk 'function out() { if (doc !~ /\nkind: Namespace\n/) printf "%s", doc }
      /^---$/ { out(); doc = $0 "\n"; next } { doc = doc $0 "\n" } END { out() }' \
      "$WORK/install.yaml" >"$WORK/install-nons.yaml"
    k delete -f "$WORK/install-nons.yaml" --ignore-not-found --wait=false >/dev/null 2>&1
    k get namespace "$YAML_NS" -o json | jq --argjson l "$ns_labels" '.metadata.labels = $l' |
      k replace -f - >/dev/null 2>&1
  else
    k delete -f "$WORK/install.yaml" --ignore-not-found --wait=false >/dev/null 2>&1
  fi
  # The next test must not see this controller still connected (common.sh require_cluster).
  k -n "$YAML_NS" wait --for=delete pod -l app.kubernetes.io/instance=kube-headroom --timeout=60s >/dev/null 2>&1
  [ "$ns_existed" = 1 ] || k wait --for=delete "namespace/$YAML_NS" --timeout=120s >/dev/null 2>&1
  k delete clusterrolebinding "kube-headroom-scraper-$S" --ignore-not-found >/dev/null 2>&1
}
cleanup() {
  uninstall_helm
  uninstall_yaml
  delete_objects
  rm -rf "$WORK"
}
trap cleanup EXIT
require_real_node
# install.yaml's namespace: another test's may be there (its Leases), or still terminating. Only a
# terminating one is waited for: waiting for an Active one to go took the whole 120 s.
ns_phase() { k get namespace "$YAML_NS" -o jsonpath='{.status.phase}' 2>/dev/null; }
[ "$(ns_phase)" != Terminating ] || k wait --for=delete "namespace/$YAML_NS" --timeout=120s >/dev/null 2>&1
case $(ns_phase) in
  "" | Active) ;;
  *)
    echo "FAIL  namespace $YAML_NS neither gone nor active"
    echo "0 passed, 1 failed"
    exit 1
    ;;
esac
if k get namespace "$YAML_NS" >/dev/null 2>&1; then
  ns_existed=1
  ns_labels=$(k get namespace "$YAML_NS" -o json | jq -c '.metadata.labels // {}')
  # A serving certificate another test left there would be mounted: the check below is that
  # nothing but the controller makes one, so such a leftover goes first.
  for sec in $(k -n "$YAML_NS" get secrets --field-selector type=kubernetes.io/tls -o name 2>/dev/null) \
    $(k -n "$YAML_NS" get secret kube-headroom-webhook-tls -o name 2>/dev/null); do
    echo "note: removing $sec, left in $YAML_NS by an earlier test"
    k -n "$YAML_NS" delete "$sec" --ignore-not-found >/dev/null 2>&1
  done
fi

# ------------------------------------------------------------------ the image on the node
import_image "$WORK"
install_crd

scrape() { # token -> the HTTP status; the body in $WORK/scrape
  curl -sk --max-time 5 -o "$WORK/scrape" -w '%{http_code}' \
    ${1:+-H "Authorization: Bearer $1"} "https://127.0.0.1:$P_METRICS/metrics"
}
answers() { [ "$(scrape "$TOK")" = 200 ] && grep -q '^headroom_' "$WORK/scrape"; }
pods_json() { k -n "$1" get pods -l app.kubernetes.io/instance="$2" -o json 2>/dev/null; }
n_ready() { # ns instance
  pods_json "$1" "$2" | jq --arg n "$REAL_NODE" '[.items[] | select(.metadata.deletionTimestamp == null and
    .spec.nodeName == $n and any(.status.conditions[]?; .type == "Ready" and .status == "True"))] | length'
}
logf() { ls "$REAL_STATE/pod-logs/${1}_${2}"_*/headroom/*.log 2>/dev/null | sort -V | tail -1; }

# verify NS INSTANCE FULLNAME T0 WHAT: the checks both installs share.
verify() {
  local ns=$1 inst=$2 full=$3 t0=$4 what=$5
  k -n "$ns" create serviceaccount scraper >/dev/null
  k -n "$ns" create serviceaccount stranger >/dev/null
  k create clusterrolebinding "$inst-scraper-$S" --clusterrole="$full-metrics-reader" \
    --serviceaccount="$ns:scraper" >/dev/null
  TOK=$(k -n "$ns" create token scraper --duration=10m)
  local left=$((60 - ($(now_ms) - t0) / 1000))
  wait_until "$((left > 0 ? left : 1))" answers
  local took=$((($(now_ms) - t0) / 1000)) st
  st=$(scrape "$TOK")
  WHY="status $st after ${took}s: $(head -c 200 "$WORK/scrape"); pods: $(pods_json "$ns" "$inst" |
    jq -c '[.items[] | {n: .metadata.name, p: .status.phase, node: .spec.nodeName}]')"
  check "$what: a token-authenticated scrape of /metrics answers 200 with headroom_ series within 60 s of the install (${took}s)" \
    eval '[ "$st" = 200 ] && grep -q "^headroom_" "$WORK/scrape" && [ "$took" -le 60 ]'
  local st_none st_other
  st_none=$(scrape "")
  st_other=$(scrape "$(k -n "$ns" create token stranger --duration=10m)")
  WHY="without a token $st_none, with an unbound ServiceAccount's token $st_other"
  check "$what: without a token it is refused (401), an unbound ServiceAccount's token is forbidden (403)" \
    eval '[ "$st_none" = 401 ] && [ "$st_other" = 403 ]'
  # The Secret the chart renders empty, filled by the controller: its ServiceAccount's patch and
  # nobody else's write (design §8, self-managed).
  local secret=$full-webhook-tls sa writers
  sa=system:serviceaccount:$ns:$(pods_json "$ns" "$inst" | jq -r '.items[0].spec.serviceAccountName')
  filled() { [ -n "$(k -n "$ns" get secret "$secret" -o jsonpath='{.data.tls\.crt}' 2>/dev/null)" ]; }
  wait_until 30 filled
  k -n "$ns" get secret "$secret" -o json 2>/dev/null | jq -r '.data["ca.crt"] // ""' | base64 -d >"$WORK/ca.crt"
  k -n "$ns" get secret "$secret" -o json 2>/dev/null | jq -r '.data["tls.crt"] // ""' | base64 -d >"$WORK/tls.crt"
  writers=$(audit_since "$MARK" "select(.objectRef.resource == \"secrets\" and .objectRef.namespace == \"$ns\" and
    .objectRef.name == \"$secret\" and (.verb == \"patch\" or .verb == \"update\") and .stage == \"ResponseComplete\" and
    .responseStatus.code < 300) | .user.username" | tr -d '"' | sort -u | tr '\n' ' ')
  WHY="writers '$writers' (the controller is $sa); tls.crt $(wc -c <"$WORK/tls.crt") bytes"
  check "$what: the Secret $secret was filled by the controller, not by hand (only $sa wrote its data)" \
    eval 'filled && [ "$writers" = "$sa " ]'
  # /metrics serves it once loaded: issued by the Secret's CA, for the metrics Service's names.
  local served="" serial
  serial=$(openssl x509 -in "$WORK/tls.crt" -noout -serial 2>/dev/null | sed 's/^serial=//')
  # Each handshake lands on either replica (SO_REUSEPORT): four in a row must all be the Secret's.
  serves_it() {
    local n
    for n in 1 2 3 4; do
      openssl s_client -connect "127.0.0.1:$P_METRICS" </dev/null 2>/dev/null | openssl x509 >"$WORK/served" 2>/dev/null
      served=$(openssl x509 -in "$WORK/served" -noout -serial 2>/dev/null | sed 's/^serial=//')
      [ -n "$serial" ] && [ "$served" = "$serial" ] || return 1
    done
  }
  wait_until 30 serves_it
  local all4=0
  serves_it && all4=1
  local verify sans
  verify=$(openssl verify -CAfile "$WORK/ca.crt" "$WORK/served" 2>&1)
  sans=$(openssl x509 -in "$WORK/served" -noout -ext subjectAltName 2>&1 | tr -d '\n')
  WHY="served $served, Secret's $serial; verify: $verify; SANs: $sans"
  check "$what: /metrics serves the Secret's certificate, issued by its ca.crt, for $full-metrics.$ns.svc" \
    eval '[ "$all4" = 1 ] && [ "$verify" = "$WORK/served: OK" ] && grep -q "DNS:$full-metrics.$ns.svc," <<<"$sans"'
  wait_until 30 eval '[ "$(n_ready "$ns" "$inst")" = 2 ]'
  local pods logs=0 logged=""
  mapfile -t pods < <(pods_json "$ns" "$inst" | jq -r '.items[] | select(.metadata.deletionTimestamp == null) | .metadata.name')
  for p in "${pods[@]}"; do
    grep -q "self-managed certificate serving.*serial=$serial" "$(logf "$ns" "$p")" 2>/dev/null && logs=$((logs + 1))
    logged+="$(grep -o 'certificate serving.*serial=[0-9A-F]*' "$(logf "$ns" "$p")" 2>/dev/null | tail -1 | sed 's/.*serial=//') "
  done
  WHY="ready $(n_ready "$ns" "$inst") of ${#pods[@]}; serving the Secret's $serial: $logs; logged $logged"
  check "$what: both replicas are Ready and each serves the Secret's certificate" \
    eval '[ "$(n_ready "$ns" "$inst")" = 2 ] && [ "$logs" = 2 ]'
}

# ------------------------------------------------------------------ helm install, default values
cat >"$WORK/values.yaml" <<YAML
# Only what this machine forces (the header says why); everything else is the chart's default.
image: {repository: "$repo", tag: "$tag", pullPolicy: Never}
crds: {install: false}
hostNetwork: true
hostNetworkReusePort: true
listenAddress: 127.0.0.1
nodeSelector: {$REAL_TAINT: "true"}
tolerations: [{key: $REAL_TAINT, operator: Exists, effect: NoSchedule}]
metrics: {port: $P_METRICS}
extraEnv:
- {name: KUBERNETES_SERVICE_HOST, value: 127.0.0.1}
- {name: KUBERNETES_SERVICE_PORT, value: "$API_PORT"}
YAML
k create namespace "$CNS" >/dev/null
MARK=$(audit_mark)
t0=$(now_ms)
out=$("$HELM" install "$REL" "$CHART" -n "$CNS" -f "$WORK/values.yaml" 2>&1)
rc=$?
WHY="$out"
check "helm install of the chart with its defaults (and only the machine's overrides)" [ "$rc" -eq 0 ]
verify "$CNS" "$REL" "$REL-kube-headroom" "$t0" "helm"
uninstall_helm

# ------------------------------------------------------------------ kubectl apply -f deploy/install.yaml
# The copy: the CRD document left out, then the machine's overrides by sed.
awk 'function out() { if (doc !~ /\nkind: CustomResourceDefinition\n/) printf "%s", doc }
  /^---$/ { out(); doc = $0 "\n"; next } { doc = doc $0 "\n" } END { out() }' \
  "$ROOT/deploy/install.yaml" >"$WORK/nocrd.yaml"
sed -e 's#^\( *pod-security.kubernetes.io/enforce:\) restricted$#\1 privileged#' \
  -e "s#^\( *image:\) ghcr.io/kube-headroom/headroom:.*#\1 $repo:$tag#" \
  -e 's#^\( *imagePullPolicy:\) IfNotPresent#\1 Never#' \
  -e "s#^\(      \)serviceAccountName: kube-headroom\$#&\n\1hostNetwork: true\n\1dnsPolicy: ClusterFirstWithHostNet\n\1nodeSelector: {$REAL_TAINT: \"true\"}\n\1tolerations: [{key: $REAL_TAINT, operator: Exists, effect: NoSchedule}]#" \
  -e "s#^\( *- \)--metrics-addr=:8443\$#\1--metrics-addr=127.0.0.1:$P_METRICS\n\1--reuse-port#" \
  -e "s#^\( *- \)--probe-addr=:8081\$#\1--probe-addr=127.0.0.1:0\n\1--probe-addr-file=$PROBE_FILE#" \
  -e "s#^\( *\)  value: kube-headroom-metrics\$#&\n\1- {name: KUBERNETES_SERVICE_HOST, value: 127.0.0.1}\n\1- {name: KUBERNETES_SERVICE_PORT, value: \"$API_PORT\"}#" \
  -e '/^          ports:$/d' -e '/^            - {name: \(metrics\|probes\), containerPort: /d' \
  -e "s#^\( *\)httpGet: {path: \(/[a-z]*\), port: probes}#\1exec: {command: [/usr/bin/headroom, probe, --addr-file=$PROBE_FILE, \2]}#" \
  -e 's#^\( *\)- {name: tls, mountPath: /etc/kube-headroom/tls, readOnly: true}$#&\n\1- {name: run, mountPath: /run/kube-headroom}#' \
  -e 's#^\(        \)- name: tls$#\1- name: run\n\1  emptyDir: {medium: Memory, sizeLimit: 1Mi}\n&#' \
  "$WORK/nocrd.yaml" >"$WORK/install.yaml"
# Every override took (a change of install.yaml's shape must fail here, not half-apply).
n_edits=$(diff "$WORK/nocrd.yaml" "$WORK/install.yaml" | grep -c '^[<>]')
crds_left=$(grep -c '^kind: CustomResourceDefinition$' "$WORK/install.yaml")
WHY="$n_edits changed lines, $crds_left CRDs left: $(diff "$WORK/nocrd.yaml" "$WORK/install.yaml" | head -40)"
check "deploy/install.yaml's copy carries the machine's overrides (sed) and no CRD (awk)" \
  eval '[ "$n_edits" = 28 ] && [ "$crds_left" = 0 ] && grep -q "^kind: Deployment$" "$WORK/install.yaml"'
MARK=$(audit_mark)
t0=$(now_ms)
out=$(k apply -f "$WORK/install.yaml" 2>&1)
rc=$?
WHY="$out"
check "kubectl apply -f deploy/install.yaml (the copy)" [ "$rc" -eq 0 ]
verify "$YAML_NS" kube-headroom kube-headroom "$t0" "install.yaml"
uninstall_yaml

finish
