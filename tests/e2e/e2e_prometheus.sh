#!/usr/bin/env bash
# e2e_prometheus.sh — monitoring end to end (design §9.3, §9.6): a real
# Prometheus (Debian's `prometheus`, on loopback, its own data directory and
# port, stopped by PID) scrapes two leader-electing replicas of `headroom
# run` the way the chart's ServiceMonitor says (rendered with helm template and
# converted as the Prometheus Operator does) — HTTPS with the serving
# certificate, the bearer token of a ServiceAccount bound to the ClusterRole
# kube-headroom-metrics-reader (`kubectl create token`), honor_labels, and
# the target labels the Prometheus Operator gives a pod (namespace, pod,
# service, endpoint, container) — and then:
#  - `promtool check metrics` passes on a live /metrics page of each replica;
#    the leader's has the per-pod target, held, info and per-node allocatable
#    and booked families, every replica's the API client's requests and
#    latency; a scrape asking for gzip gets gzip that decodes to a valid page;
#  - the dashboard's central query, read from the dashboard JSON (panel 1,
#    refId A), answers exactly one series per managed pod, labelled with the
#    pod's own namespace and name and nothing else;
#  - the dashboard's per-node row, its queries read from the JSON ($cluster
#    empty as on a one-cluster Prometheus, $job the scrape job, $node one
#    node): the pod panels answer exactly one series per managed pod of that
#    node, the node panel one series, that node — for a simulated node from
#    our series alone, for the real node with the kubelet's cAdvisor too;
#  - every panel query of the Go implementation's dashboard
#    (tests/monitoring/go-dashboard-queries.txt) answers at least one series;
#    its throttling panels read cAdvisor, scraped here from the real node's
#    kubelet (/metrics/cadvisor, a token allowed nodes/metrics), where one
#    managed pod runs, and must answer for that pod;
#  cAdvisor here: the kubelet's cAdvisor looks for containerd only at
#  /run/containerd/containerd.sock, and the real node's is in its state
#  directory, so it labels the pod's cgroup (namespace, pod, container "")
#  but not its containers'. The cAdvisor queries are run with container=""
#  (the pod's cgroup: its containers' sum) for container!="" — see POD_CG.
#  - Prometheus holds exactly one headroom_pod_limit_cores series per managed
#    pod, from the leader; the follower is up and exports its own process and
#    leadership series, but no per-pod or per-node ones (leader-only export);
#  - the alert rules (all of files/prometheus-rules.yaml) load and evaluate
#    without error on the live data, and
#    HeadroomNoLeader does not fire;
#  - after the leader stops, the other replica leads, and the central query
#    still answers one series per managed pod, now from the new leader.
#
# Needs `cluster.sh up` and `cluster.sh real-node up` (the CTest fixtures do
# both: HR_E2E_REALNODE).
set -uo pipefail
# shellcheck source=../lib/common.sh
. "$(dirname "${BASH_SOURCE[0]}")/../lib/common.sh"
# shellcheck source=../lib/realnode.sh
. "$(dirname "${BASH_SOURCE[0]}")/../lib/realnode.sh"
# Replica i: metrics ${MP[i]}, probes ${PRP[i]}; Prometheus on $PPORT (all free_port, or
# HEADROOM_E2E_PROMETHEUS_PORT=BASE: metrics BASE+2i, probes BASE+2i+1, Prometheus BASE+9).
if [ -n "${HEADROOM_E2E_PROMETHEUS_PORT:-}" ]; then
  b=$HEADROOM_E2E_PROMETHEUS_PORT
  MP=("$b" $((b + 2))) PRP=($((b + 1)) $((b + 3))) PPORT=$((b + 9))
else
  MP=() PRP=()
  MP[0]=$(free_port)
  MP[1]=$(free_port "${MP[0]}")
  PRP[0]=$(free_port "${MP[@]}")
  PRP[1]=$(free_port "${MP[@]}" "${PRP[0]}")
  PPORT=$(free_port "${MP[@]}" "${PRP[@]}")
fi
WORK=$(mktemp -d /tmp/headroom-prometheus.XXXXXX)
ID=headroom-e2e-prom
NS=hr-prom-$S
MON=hr-prom-mon-$S
DASHBOARD=$ROOT/charts/kube-headroom/files/dashboard.json
RULES=$ROOT/charts/kube-headroom/files/prometheus-rules.yaml
GOQ=$ROOT/tests/monitoring/go-dashboard-queries.txt
KUBELET_PORT=$(sed -n 's/^KUBELET_PORT=//p' "$STATE/ports.env")
HELM=${HELM:-$("$CLUSTER" bin helm)}
PIDS=() PROM_PID=""

cleanup() {
  for p in "${PIDS[@]}"; do [ -n "$p" ] && kill "$p" 2>/dev/null; done
  for p in "${PIDS[@]}"; do [ -n "$p" ] && wait "$p" 2>/dev/null; done
  if [ -n "$PROM_PID" ]; then kill "$PROM_PID" 2>/dev/null; wait "$PROM_PID" 2>/dev/null; fi
  k delete clusterrolebinding "hr-prom-reader-$S" "hr-prom-kubelet-$S" --ignore-not-found >/dev/null 2>&1
  k delete clusterrole "hr-prom-kubelet-$S" --ignore-not-found >/dev/null 2>&1
  k delete namespace "$MON" --ignore-not-found --wait=false >/dev/null 2>&1
  delete_objects
  remove_identity "$ID"
  if [ "$failed" -gt 0 ]; then
    for f in "$WORK"/replica-*.log "$WORK/prometheus.log"; do echo "--- $f"; tail -n 20 "$f"; done
  fi
  rm -rf "$WORK"
}
trap cleanup EXIT
require_real_node
for tool in prometheus promtool jq "$HELM"; do
  command -v "$tool" >/dev/null || { echo "FAIL  $tool not installed (scripts/setup.sh installs it)"; echo "0 passed, 1 failed"; exit 1; }
done

install_identity "$ID"
mkdir -p "$WORK/certs" "$WORK/data"
# For 127.0.0.1 (the replicas' address here) and the metrics Service's name
# (what the ServiceMonitor verifies).
openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:prime256v1 -nodes -days 1 \
  -subj /CN=127.0.0.1 -addext subjectAltName=IP:127.0.0.1,DNS:kube-headroom-metrics.kube-headroom.svc \
  -keyout "$WORK/certs/tls.key" -out "$WORK/certs/tls.crt" >/dev/null 2>&1

# Prometheus's identity: a ServiceAccount bound to the metrics-reader role.
k create namespace "$MON" >/dev/null
k -n "$MON" create serviceaccount prometheus >/dev/null
k create clusterrolebinding "hr-prom-reader-$S" --clusterrole=kube-headroom-metrics-reader \
  --serviceaccount="$MON:prometheus" >/dev/null
# And to read the real node's kubelet: nodes/metrics (the kubelet asks the
# API server with a SubjectAccessReview).
k create clusterrole "hr-prom-kubelet-$S" --verb=get --resource=nodes/metrics >/dev/null
k create clusterrolebinding "hr-prom-kubelet-$S" --clusterrole="hr-prom-kubelet-$S" \
  --serviceaccount="$MON:prometheus" >/dev/null
k -n "$MON" create token prometheus --duration=1h >"$WORK/token"

# Three managed pods on two simulated nodes, one pod of a plain namespace,
# and one managed pod (a pause container, no load) on the real node.
mkns "$NS" managed
mkns "$NS-plain" plain
mknode "e2e-prom-a-$S" 8
mknode "e2e-prom-b-$S" 8
mkpod "$NS" web-1 "e2e-prom-a-$S" 500m 1
mkpod "$NS" web-2 "e2e-prom-a-$S" 1 2
mkpod "$NS" batch "e2e-prom-b-$S" 2 3
mkpod "$NS-plain" other "e2e-prom-b-$S" 1 1
k apply -f - >/dev/null <<POD
apiVersion: v1
kind: Pod
metadata: {name: real, namespace: $NS}
spec:
  nodeName: $REAL_NODE
  tolerations: [{key: $REAL_TAINT, operator: Exists, effect: NoSchedule}]
  automountServiceAccountToken: false
  terminationGracePeriodSeconds: 1
  containers:
  - name: app
    image: localhost/kube-headroom/pause:1.0
    imagePullPolicy: Never
    resources:
      requests: {cpu: 100m, memory: 32Mi}
      limits: {cpu: 200m, memory: 32Mi}
POD
MANAGED="batch real web-1 web-2"

start_replica() { # index
  local m=${MP[$1]} p=${PRP[$1]}
  "$HEADROOM" run --kubeconfig "$USER_KC" --namespace kube-headroom --leader-elect \
    --webhook-addr "" --metrics-addr "127.0.0.1:$m" --probe-addr "127.0.0.1:$p" \
    --webhook-cert-dir "$WORK/certs" -v >>"$WORK/replica-$1.log" 2>&1 &
  PIDS[$1]=$!
}
scrape() { # index -> the page
  curl -sf --cacert "$WORK/certs/tls.crt" -H "Authorization: Bearer $(cat "$WORK/token")" \
    "https://127.0.0.1:${MP[$1]}/metrics"
}
leader_of() { scrape "$1" | awk '$1 == "headroom_leader" {print $2}'; }
one_leader() { [ "$(leader_of 0)$(leader_of 1)" = 10 ] || [ "$(leader_of 0)$(leader_of 1)" = 01 ]; }
start_replica 0
start_replica 1
WHY="headroom_leader of the replicas: $(leader_of 0)/$(leader_of 1) after 60 s"
check "two replicas with --leader-elect: exactly one leads" wait_until 60 one_leader
if [ "$(leader_of 0)" = 1 ]; then L=0 F=1; else L=1 F=0; fi
WHY="no headroom_pod_limit_cores for all of $MANAGED on the leader"
leader_has_pods() { [ "$(scrape "$L" | grep -c "^headroom_pod_limit_cores{namespace=\"$NS\"")" = 4 ]; }
check "the leader exports the four managed pods' limits" wait_until 60 leader_has_pods

for i in 0 1; do
  scrape "$i" >"$WORK/page-$i.txt"
  out=$(promtool check metrics <"$WORK/page-$i.txt" 2>&1)
  rc=$?
  WHY="exit $rc: $out"
  check "promtool check metrics passes on replica $i's live /metrics ($([ "$i" = "$L" ] && echo leader || echo follower))" \
    [ "$rc" = 0 ] && [ -z "$out" ]
done
# The families added for the dashboard's node view and the API client
# (design §9.3): TYPE lines on the leader's page, the client's on both.
for fam in headroom_pod_target_cores headroom_pod_held headroom_pod_info headroom_node_allocatable_cores \
  headroom_node_booked_cores headroom_api_requests_total headroom_api_request_duration_seconds; do
  WHY="no '# TYPE $fam' on the leader's page"
  check "the leader's live page has $fam" grep -q "^# TYPE $fam " "$WORK/page-$L.txt"
done
pod_info_ok() {
  local lines
  lines=$(grep '^headroom_pod_info{' "$WORK/page-$L.txt" | grep "namespace=\"$NS\"")
  [ "$(echo "$lines" | grep -c .)" = 4 ] &&
    echo "$lines" | grep 'pod="web-1"' | grep "node=\"e2e-prom-a-$S\"" | matches '} 1$' &&
    echo "$lines" | grep 'pod="real"' | matches "node=\"$REAL_NODE\""
}
WHY="$(grep '^headroom_pod_info{' "$WORK/page-$L.txt" | head -5)"
check "headroom_pod_info: one series per managed pod, naming its node" pod_info_ok
WHY="no '# TYPE headroom_api_requests_total' on the follower's page"
check "the follower's page has the API client's requests too" grep -q '^# TYPE headroom_api_requests_total ' "$WORK/page-$F.txt"
# gzip when asked (as Prometheus asks): the body is gzip and decodes to a valid page.
curl -sf --cacert "$WORK/certs/tls.crt" -H "Authorization: Bearer $(cat "$WORK/token")" \
  -H 'Accept-Encoding: gzip' -D "$WORK/gz.hdr" -o "$WORK/page.gz" "https://127.0.0.1:${MP[$L]}/metrics"
gunzip_ok() {
  grep -qi '^content-encoding: gzip' "$WORK/gz.hdr" && gzip -t "$WORK/page.gz" 2>/dev/null &&
    gzip -dc "$WORK/page.gz" >"$WORK/page-gz.txt" && grep -q '^headroom_leader 1' "$WORK/page-gz.txt" &&
    [ -z "$(promtool check metrics <"$WORK/page-gz.txt" 2>&1)" ]
}
WHY="headers: $(tr -d '\r' <"$WORK/gz.hdr" | tr '\n' ' '); body: $(head -c 40 "$WORK/page.gz" | od -An -c | head -1)"
check "a scrape with Accept-Encoding: gzip answers gzip, which decodes to a page promtool accepts" gunzip_ok
WHY="follower's page has: $(grep -E '^headroom_(pod|node)_|^headroom_(pods|nodes)_managed|^headroom_resizes_deferred' "$WORK/page-$F.txt" | head -3)"
check "the follower's page has no per-pod, per-node or cluster-total series" \
  sh -c "! grep -qE '^(# [A-Z]+ )?headroom_(pod_limit_cores|node_factor|node_slack_cores|node_booked_ratio|node_managed_pods|pods_managed|nodes_managed|resizes_deferred)' '$WORK/page-$F.txt'"

# The chart's ServiceMonitor (helm template, with cert-manager's CA so the
# server is verified too), turned into a scrape config the way the Prometheus
# Operator does: the endpoint's scheme, path, honorLabels, bearer token (its
# authorization credentials or bearerTokenFile; here Prometheus's own token,
# issued above; the template's other documents are skipped), TLS CA and server name (here
# our certificate, issued for that name), one target per pod of the metrics
# Service, labelled namespace, pod, service, endpoint, container; the job is
# the Service's name. Only the interval is shortened (1 s) for the test.
"$HELM" template kube-headroom "$ROOT/charts/kube-headroom" -n kube-headroom \
  --set prometheus.enable=true --set certmanager.enable=true --set metrics.certManagerTLS=true \
  --show-only templates/servicemonitor.yaml >"$WORK/servicemonitor.yaml" 2>"$WORK/helm.err"
WHY=$(cat "$WORK/helm.err")
check "helm template renders the chart's ServiceMonitor" [ -s "$WORK/servicemonitor.yaml" ]
python3 - "$WORK" "$RULES" "${MP[0]}" "${MP[1]}" "$KUBELET_PORT" >"$WORK/prometheus.yml" <<'PY' 2>"$WORK/convert.err"
import sys, yaml
work, rules, ports = sys.argv[1], sys.argv[2], [int(p) for p in sys.argv[3:5]]
kubelet = int(sys.argv[5])
sm = [d for d in yaml.safe_load_all(open(f"{work}/servicemonitor.yaml")) if d and d["kind"] == "ServiceMonitor"][0]
ep = sm["spec"]["endpoints"][0]
job = {"job_name": "kube-headroom-metrics", "honor_labels": bool(ep.get("honorLabels", False)),
       "scheme": ep.get("scheme", "http"), "metrics_path": ep.get("path", "/metrics")}
if ep.get("bearerTokenFile") or ep.get("authorization", {}).get("credentials"):
    job["authorization"] = {"credentials_file": f"{work}/token"}
t = ep.get("tlsConfig")
if t is not None:
    tc = {}
    if t.get("insecureSkipVerify"):
        tc["insecure_skip_verify"] = True
    if t.get("ca"):
        tc["ca_file"] = f"{work}/certs/tls.crt"
    if t.get("serverName"):
        tc["server_name"] = t["serverName"]
    job["tls_config"] = tc
job["static_configs"] = [
    {"targets": [f"127.0.0.1:{ports[i]}"],
     "labels": {"namespace": sm["metadata"]["namespace"], "pod": f"kube-headroom-{i}",
                "service": "kube-headroom-metrics", "endpoint": ep["port"], "container": "headroom"}}
    for i in (0, 1)]
# The real node's kubelet, as kube-prometheus scrapes cAdvisor: HTTPS (its
# serving certificate is self-signed: not verified), the token, the CPU
# families only.
cadvisor = {"job_name": "kubelet", "scheme": "https", "metrics_path": "/metrics/cadvisor",
            "authorization": {"credentials_file": f"{work}/token"},
            "tls_config": {"insecure_skip_verify": True},
            "static_configs": [{"targets": [f"127.0.0.1:{kubelet}"]}],
            "metric_relabel_configs": [{"source_labels": ["__name__"], "regex": "container_cpu_.*",
                                        "action": "keep"}]}
yaml.safe_dump({"global": {"scrape_interval": "1s", "evaluation_interval": "1s"},
                "rule_files": [rules], "scrape_configs": [job, cadvisor]}, sys.stdout)
PY
WHY="$(cat "$WORK/convert.err")"
sm_auth() { for w in 'scheme: https' credentials_file ca_file server_name; do grep -q "$w" "$WORK/prometheus.yml" || return 1; done; }
check "the ServiceMonitor's endpoint: HTTPS, a bearer token file, a CA and server name to verify" sm_auth
out=$(promtool check config "$WORK/prometheus.yml" 2>&1)
rc=$?
WHY="$out"
check "promtool check config accepts the scrape configuration (and the rules it loads)" [ "$rc" = 0 ]
prometheus --config.file="$WORK/prometheus.yml" --storage.tsdb.path="$WORK/data" \
  --web.listen-address="127.0.0.1:$PPORT" --log.level=warn >"$WORK/prometheus.log" 2>&1 &
PROM_PID=$!

query() { # PromQL -> the API's JSON
  curl -sf -G "http://127.0.0.1:$PPORT/api/v1/query" --data-urlencode "query=$1"
}
result() { query "$1" | jq -c '[.data.result[] | .metric] | sort_by(.pod)'; }
both_up() { [ "$(query 'sum(up{job="kube-headroom-metrics"})' | jq -r '.data.result[0].value[1]')" = 2 ]; }
WHY="up: $(query 'up' | jq -c '.data.result' 2>/dev/null)"
check "Prometheus scrapes both replicas with the token over HTTPS (up == 1 twice)" wait_until 60 both_up
kubelet_up() { [ "$(query 'up{job="kubelet"}' | jq -r '.data.result[0].value[1]')" = 1 ]; }
WHY="up: $(query 'up{job="kubelet"}' | jq -c '.data.result' 2>/dev/null)"
check "Prometheus scrapes the real node's cAdvisor with the token (nodes/metrics)" wait_until 30 kubelet_up

# The dashboard's central query, exactly as the JSON has it, with Grafana's
# variables filled in: the namespace, and every pod ("All").
CENTRAL=$(jq -r '.panels[] | select(.id == 1) | .targets[] | select(.refId == "A") | .expr' "$DASHBOARD")
fill() { # an expression of the dashboard -> Grafana's variables filled in: a one-cluster
  # Prometheus ($cluster empty, series without the label), our scrape job, namespace, all pods,
  # all pools, the node $2
  local e=${1//\$cluster/} n=${2:-.*}
  e=${e//\$job/kube-headroom-metrics}
  e=${e//\$namespace/$NS}
  e=${e//\$pod/.*}
  e=${e//\$pool/.*}
  echo "${e//\$node/$n}"
}
Q=$(fill "$CENTRAL")
want=$(for p in $MANAGED; do printf '{"namespace":"%s","pod":"%s"}\n' "$NS" "$p"; done | jq -sc .)
central_ok() { [ "$(result "$Q")" = "$want" ]; }
wait_until 30 central_ok
got=$(result "$Q")
WHY="query $Q answered $got, want $want"
check "the dashboard's central query answers one series per managed pod, with the pod's own namespace and pod labels" \
  [ "$got" = "$want" ]

# The per-node row: every target whose expression names $node, as the JSON
# has it. A pod panel (joined with headroom_pod_info) must answer exactly one
# series per managed pod of the node, labelled with it; the node panel one
# series, the node. On a simulated node (no kubelet, so no cAdvisor) the
# panels of our own series; on the real node all of them. Pods of other
# namespaces (another test's, still terminating on the real node) are not
# counted.
jq -r '.panels[] | .id as $id | .targets[]? | select(.expr | contains("$node")) |
  "\($id)\t\(.refId)\t\(.expr)"' "$DASHBOARD" >"$WORK/nodeview.tsv"
WHY="$(cat "$WORK/nodeview.tsv")"
check "the dashboard has a per-node row: node panels and pod panels joined with headroom_pod_info" \
  sh -c "grep -q headroom_node_allocatable_cores '$WORK/nodeview.tsv' && grep -q container_cpu_cfs_throttled '$WORK/nodeview.tsv' &&
    [ \$(grep -c headroom_pod_info '$WORK/nodeview.tsv') -ge 4 ]"
# POD_CG: a query of cAdvisor's container series, read instead from the pod's
# own cgroup (see the header); everything else as the JSON has it.
POD_CG() { echo "${1//container!=\"\"/container=\"\"}"; }
node_view() { # node pods...: every query of the node row answers as it should, or the reason on stdout
  local node=$1 id ref expr q got want
  shift
  want=$(for p in "$@"; do echo "$NS/$p $node"; done | jq -Rsc 'split("\n") | map(select(. != ""))')
  while IFS=$'\t' read -r id ref expr; do
    case $node/$expr in e2e-*container_*) continue ;; esac
    q=$(fill "$expr" "$node")
    [[ $expr != *container_* ]] || q=$(POD_CG "$q")
    if [[ $expr == *headroom_pod_info* ]]; then
      got=$(query "$q" | jq -c --arg ns "$NS" '[.data.result[] | select(.metric.namespace == $ns) |
        "\(.metric.namespace)/\(.metric.pod) \(.metric.node)"] | sort')
      [ "$got" = "$want" ] || { echo "panel $id/$ref answered $got, want $want"; return 1; }
    else
      got=$(query "$q" | jq -c '[.data.result[] | .metric.node]')
      [ "$got" = "[\"$node\"]" ] || { echo "panel $id/$ref answered $got, want [\"$node\"]"; return 1; }
    fi
  done <"$WORK/nodeview.tsv"
}
view_a() { node_view "e2e-prom-a-$S" web-1 web-2 >"$WORK/view.why"; }
wait_until 30 view_a
WHY="$(cat "$WORK/view.why")"
check "the node row for a simulated node: one series per managed pod of it (web-1, web-2), the node panel that node" view_a
view_real() { node_view "$REAL_NODE" real >"$WORK/view.why"; }
wait_until 60 view_real
WHY="$(cat "$WORK/view.why")"
check "the node row for the real node, usage and throttling from cAdvisor included: its one managed pod" view_real

# The Go implementation's dashboard: each of its panel queries answers.
go_queries() { # the queries that answer nothing (cAdvisor's: nothing for the real node's pod), on stdout
  local title expr n
  while IFS=$'\t' read -r title expr; do
    case $title in '#'* | '') continue ;; esac
    if [[ $expr == *container_* ]]; then
      n=$(query "$(POD_CG "$expr")" | jq --arg ns "$NS" '[.data.result[] | select(.metric.namespace == $ns and .metric.pod == "real")] | length')
    else
      n=$(query "$expr" | jq '.data.result | length')
    fi
    [ "${n:-0}" -ge 1 ] || echo "'$title': $expr;"
  done <"$GOQ"
}
ngo=$(grep -vc '^#' "$GOQ")
go_ok() { [ "$ngo" = 13 ] && [ -z "$(go_queries)" ]; }
wait_until 30 go_ok
WHY="$ngo queries; answering nothing: $(go_queries)"
check "every panel query of the Go implementation's dashboard ($ngo) answers at least one series" go_ok

raw="headroom_pod_limit_cores{namespace=\"$NS\"}"
got=$(query "$raw" | jq -c '[.data.result[] | {pod: .metric.pod, from: .metric.instance}] | sort_by(.pod)')
want_raw=$(for p in $MANAGED; do printf '{"pod":"%s","from":"127.0.0.1:%s"}\n' "$p" "${MP[$L]}"; done | jq -sc .)
WHY="$raw in Prometheus: $got, want $want_raw"
check "Prometheus holds one headroom_pod_limit_cores series per managed pod, scraped from the leader only" \
  [ "$got" = "$want_raw" ]
fi_=127.0.0.1:${MP[$F]}
got=$(query "count by (__name__) ({instance=\"$fi_\", __name__=~\"process_start_time_seconds|headroom_leader|headroom_watch_events_total|headroom_node_factor|headroom_pod_limit_cores\"})" |
  jq -c '[.data.result[] | .metric.__name__] | sort')
WHY="families of the follower in Prometheus: $got"
check "the follower is scraped too: its process, leadership and watch series, none per pod or node" \
  [ "$got" = '["headroom_leader","headroom_watch_events_total","process_start_time_seconds"]' ]
NRULES=$(grep -c '^ *- alert: ' "$RULES")
rules_ok() {
  curl -sf "http://127.0.0.1:$PPORT/api/v1/rules" |
    jq -e --argjson n "$NRULES" '[.data.groups[].rules[] | select(.health == "ok" and .lastEvaluation != "0001-01-01T00:00:00Z")] | length == $n' >/dev/null
}
WHY="rules: $(curl -sf "http://127.0.0.1:$PPORT/api/v1/rules" | jq -c '[.data.groups[].rules[] | {name, health, lastError}]')"
check "the $NRULES alert rules load and evaluate on the live data without error" wait_until 30 rules_ok
# A rule evaluated before the first scrape sees no headroom_leader at all
# (pending); the next evaluation on the scraped data must clear it.
no_leader_alert() { [ "$(query 'ALERTS{alertname="HeadroomNoLeader"}' | jq '.data.result | length')" = 0 ]; }
wait_until 30 no_leader_alert
WHY="ALERTS: $(query 'ALERTS' | jq -c '.data.result')"
check "HeadroomNoLeader is neither pending nor firing while one replica leads" no_leader_alert

# The leader goes (SIGTERM releases the Lease): the other one takes over,
# and the panel keeps one line per pod.
kill "${PIDS[$L]}"
wait "${PIDS[$L]}" 2>/dev/null
PIDS[$L]=""
new_leads() { [ "$(leader_of "$F")" = 1 ]; }
WHY="headroom_leader of replica $F: $(leader_of "$F")"
check "after the leader stops, the other replica leads" wait_until 60 new_leads
from_new() {
  [ "$(query "$raw" | jq -c '[.data.result[] | .metric.instance] | unique')" = "[\"$fi_\"]" ] &&
    [ "$(query "count($raw)" | jq -r '.data.result[0].value[1]')" = 4 ]
}
WHY="$raw: $(query "$raw" | jq -c '[.data.result[] | .metric]')"
check "the new leader's series replace the old one's in Prometheus (still one per pod)" wait_until 60 from_new
got=$(result "$Q")
WHY="answered $got, want $want"
check "the dashboard's central query still answers one series per managed pod" [ "$got" = "$want" ]

finish
