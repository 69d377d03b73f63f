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
#  - the dashboard's central query, read from the dashboard JSON (panel 1,
#    refId A), answers exactly one series per managed pod, labelled with the
#    pod's own namespace and name and nothing else;
#  - Prometheus holds exactly one headroom_pod_limit_cores series per managed
#    pod, from the leader; the follower is up and exports its own process and
#    leadership series, but no per-pod or per-node ones (leader-only export);
#  - the alert rules load and evaluate without error on the live data, and
#    HeadroomNoLeader does not fire;
#  - after the leader stops, the other replica leads, and the central query
#    still answers one series per managed pod, now from the new leader.
set -uo pipefail
# shellcheck source=../lib/common.sh
. "$(dirname "${BASH_SOURCE[0]}")/../lib/common.sh"
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
HELM=${HELM:-$("$CLUSTER" bin helm)}
PIDS=() PROM_PID=""

cleanup() {
  for p in "${PIDS[@]}"; do [ -n "$p" ] && kill "$p" 2>/dev/null; done
  for p in "${PIDS[@]}"; do [ -n "$p" ] && wait "$p" 2>/dev/null; done
  if [ -n "$PROM_PID" ]; then kill "$PROM_PID" 2>/dev/null; wait "$PROM_PID" 2>/dev/null; fi
  k delete clusterrolebinding "hr-prom-reader-$S" --ignore-not-found >/dev/null 2>&1
  k delete namespace "$MON" --ignore-not-found --wait=false >/dev/null 2>&1
  delete_objects
  remove_identity "$ID"
  if [ "$failed" -gt 0 ]; then
    for f in "$WORK"/replica-*.log "$WORK/prometheus.log"; do echo "--- $f"; tail -n 20 "$f"; done
  fi
  rm -rf "$WORK"
}
trap cleanup EXIT
require_cluster
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
k -n "$MON" create token prometheus --duration=1h >"$WORK/token"

# Three managed pods on two simulated nodes, one pod of a plain namespace.
mkns "$NS" managed
mkns "$NS-plain" plain
mknode "e2e-prom-a-$S" 8
mknode "e2e-prom-b-$S" 8
mkpod "$NS" web-1 "e2e-prom-a-$S" 500m 1
mkpod "$NS" web-2 "e2e-prom-a-$S" 1 2
mkpod "$NS" batch "e2e-prom-b-$S" 2 3
mkpod "$NS-plain" other "e2e-prom-b-$S" 1 1
MANAGED="batch web-1 web-2"

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
leader_has_pods() { [ "$(scrape "$L" | grep -c "^headroom_pod_limit_cores{namespace=\"$NS\"")" = 3 ]; }
check "the leader exports the three managed pods' limits" wait_until 60 leader_has_pods

for i in 0 1; do
  scrape "$i" >"$WORK/page-$i.txt"
  out=$(promtool check metrics <"$WORK/page-$i.txt" 2>&1)
  rc=$?
  WHY="exit $rc: $out"
  check "promtool check metrics passes on replica $i's live /metrics ($([ "$i" = "$L" ] && echo leader || echo follower))" \
    [ "$rc" = 0 ] && [ -z "$out" ]
done
WHY="follower's page has: $(grep -E '^headroom_(pod|node)_|^headroom_(pods|nodes)_managed|^headroom_resizes_deferred' "$WORK/page-$F.txt" | head -3)"
check "the follower's page has no per-pod, per-node or cluster-total series" \
  sh -c "! grep -qE '^(# [A-Z]+ )?headroom_(pod_limit_cores|node_factor|node_slack_cores|node_booked_ratio|node_managed_pods|pods_managed|nodes_managed|resizes_deferred)' '$WORK/page-$F.txt'"

# The chart's ServiceMonitor (helm template, with cert-manager's CA so the
# server is verified too), turned into a scrape config the way the Prometheus
# Operator does: the endpoint's scheme, path, honorLabels, bearer token file
# (here Prometheus's own token, issued above), TLS CA and server name (here
# our certificate, issued for that name), one target per pod of the metrics
# Service, labelled namespace, pod, service, endpoint, container; the job is
# the Service's name. Only the interval is shortened (1 s) for the test.
"$HELM" template kube-headroom "$ROOT/charts/kube-headroom" -n kube-headroom \
  --set prometheus.enable=true --set certmanager.enable=true --set metrics.certManagerTLS=true \
  --show-only templates/servicemonitor.yaml >"$WORK/servicemonitor.yaml" 2>"$WORK/helm.err"
WHY=$(cat "$WORK/helm.err")
check "helm template renders the chart's ServiceMonitor" [ -s "$WORK/servicemonitor.yaml" ]
python3 - "$WORK" "$RULES" "${MP[0]}" "${MP[1]}" >"$WORK/prometheus.yml" <<'PY' 2>"$WORK/convert.err"
import sys, yaml
work, rules, ports = sys.argv[1], sys.argv[2], [int(p) for p in sys.argv[3:5]]
sm = yaml.safe_load(open(f"{work}/servicemonitor.yaml"))
ep = sm["spec"]["endpoints"][0]
job = {"job_name": "kube-headroom-metrics", "honor_labels": bool(ep.get("honorLabels", False)),
       "scheme": ep.get("scheme", "http"), "metrics_path": ep.get("path", "/metrics")}
if ep.get("bearerTokenFile"):
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
yaml.safe_dump({"global": {"scrape_interval": "1s", "evaluation_interval": "1s"},
                "rule_files": [rules], "scrape_configs": [job]}, sys.stdout)
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

# The dashboard's central query, exactly as the JSON has it, with Grafana's
# variables filled in: the namespace, and every pod ("All").
CENTRAL=$(jq -r '.panels[] | select(.id == 1) | .targets[] | select(.refId == "A") | .expr' "$DASHBOARD")
Q=${CENTRAL//\$namespace/$NS}
Q=${Q//\$pod/.*}
want=$(for p in $MANAGED; do printf '{"namespace":"%s","pod":"%s"}\n' "$NS" "$p"; done | jq -sc .)
central_ok() { [ "$(result "$Q")" = "$want" ]; }
wait_until 30 central_ok
got=$(result "$Q")
WHY="query $Q answered $got, want $want"
check "the dashboard's central query answers one series per managed pod, with the pod's own namespace and pod labels" \
  [ "$got" = "$want" ]

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
rules_ok() {
  curl -sf "http://127.0.0.1:$PPORT/api/v1/rules" |
    jq -e '[.data.groups[].rules[] | select(.health == "ok" and .lastEvaluation != "0001-01-01T00:00:00Z")] | length == 6' >/dev/null
}
WHY="rules: $(curl -sf "http://127.0.0.1:$PPORT/api/v1/rules" | jq -c '[.data.groups[].rules[] | {name, health, lastError}]')"
check "the six alert rules load and evaluate on the live data without error" wait_until 30 rules_ok
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
    [ "$(query "count($raw)" | jq -r '.data.result[0].value[1]')" = 3 ]
}
WHY="$raw: $(query "$raw" | jq -c '[.data.result[] | .metric]')"
check "the new leader's series replace the old one's in Prometheus (still one per pod)" wait_until 60 from_new
got=$(result "$Q")
WHY="answered $got, want $want"
check "the dashboard's central query still answers one series per managed pod" [ "$got" = "$want" ]

finish
