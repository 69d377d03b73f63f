#!/usr/bin/env bash
# e2e_monitoring_chart.sh — the chart's monitoring templates, rendered with
# `helm template` (helm is built with the test control plane, tests/cluster):
#  - the ServiceMonitor scrapes with honorLabels: true, carries
#    prometheus.additionalLabels, and authenticates (https, the pod's
#    service-account token file, a tlsConfig; cert-manager's CA with
#    metrics.certManagerTLS); with metrics.secure=false it is plain http;
#  - the PrometheusRule holds exactly the groups of
#    files/prometheus-rules.yaml — the file promtool checks and unit-tests
#    (tests/monitoring/rules.sh) — and leaves out HeadroomNoLeader without
#    leader election;
#  - the dashboard ConfigMap carries files/dashboard.json with the Grafana
#    sidecar's label and the data source filled in, nothing else changed;
#  - none of them renders by default.
set -uo pipefail
# shellcheck source=../lib/common.sh
. "$(dirname "${BASH_SOURCE[0]}")/../lib/common.sh"
HELM=${HELM:-$("$CLUSTER" bin helm)}
CHART=$ROOT/charts/kube-headroom
WORK=$(mktemp -d /tmp/headroom-monchart.XXXXXX)
trap 'rm -rf "$WORK"' EXIT
[ -x "$HELM" ] || { echo "FAIL  no helm at $HELM (tests/cluster/cluster.sh build)"; echo "0 passed, 1 failed"; exit 1; }

render() { # out-file, helm flags...
  local out=$1; shift
  "$HELM" template kube-headroom "$CHART" -n kube-headroom "$@" >"$out" 2>"$out.err"
}
ON=(--set prometheus.enable=true --set prometheus.rules.enable=true --set prometheus.dashboard.enable=true)
render "$WORK/on.yaml" "${ON[@]}" --set prometheus.additionalLabels.release=kps
WHY=$(cat "$WORK/on.yaml.err")
check "helm template renders the monitoring objects" [ -s "$WORK/on.yaml" ]
render "$WORK/plain.yaml" "${ON[@]}" --set metrics.secure=false
render "$WORK/cm.yaml" "${ON[@]}" --set certmanager.enable=true --set metrics.certManagerTLS=true
render "$WORK/noelect.yaml" "${ON[@]}" --set replicas=1 --set leaderElection.enable=false
render "$WORK/default.yaml"

py() { python3 - "$ROOT" "$WORK" "$@" <<'PY'
import json, sys, yaml
root, work, what = sys.argv[1:4]
def objs(f):
    return [o for o in yaml.safe_load_all(open(f"{work}/{f}.yaml")) if o]
def one(f, kind):
    o = [x for x in objs(f) if x["kind"] == kind]
    assert len(o) == 1, f"{f}: {len(o)} {kind}"
    return o[0]
rules = yaml.safe_load(open(f"{root}/charts/kube-headroom/files/prometheus-rules.yaml"))["groups"]
dash = json.load(open(f"{root}/charts/kube-headroom/files/dashboard.json"))
if what == "sm":
    sm = one("on", "ServiceMonitor"); ep = sm["spec"]["endpoints"]
    assert len(ep) == 1, ep
    ep = ep[0]
    assert ep.get("honorLabels") is True, f"honorLabels {ep.get('honorLabels')}"
    assert sm["metadata"]["labels"].get("release") == "kps", sm["metadata"]["labels"]
    assert ep["scheme"] == "https" and ep["port"] == "metrics" and ep["path"] == "/metrics", ep
    assert ep["bearerTokenFile"] == "/var/run/secrets/kubernetes.io/serviceaccount/token", ep
    assert "tlsConfig" in ep, ep
    assert sm["spec"]["selector"]["matchLabels"].get("app.kubernetes.io/component") == "metrics"
elif what == "sm-plain":
    ep = one("plain", "ServiceMonitor")["spec"]["endpoints"][0]
    assert ep["scheme"] == "http" and "bearerTokenFile" not in ep and ep["honorLabels"] is True, ep
elif what == "sm-cm":
    t = one("cm", "ServiceMonitor")["spec"]["endpoints"][0]["tlsConfig"]
    assert t.get("ca", {}).get("secret", {}).get("key") == "ca.crt" and "insecureSkipVerify" not in t, t
    assert t["serverName"] == "kube-headroom-metrics.kube-headroom.svc", t
elif what == "rules":
    got = one("on", "PrometheusRule")["spec"]["groups"]
    assert got == rules, "the PrometheusRule's groups differ from files/prometheus-rules.yaml"
elif what == "noelect":
    got = one("noelect", "PrometheusRule")["spec"]["groups"]
    want = [dict(g, rules=[r for r in g["rules"] if r.get("alert") != "HeadroomNoLeader"]) for g in rules]
    assert got == want, [r.get("alert") for g in got for r in g["rules"]]
elif what == "dashboard":
    cm = [o for o in objs("on") if o["kind"] == "ConfigMap" and o["metadata"]["name"].endswith("-dashboard")]
    assert len(cm) == 1, len(cm)
    cm = cm[0]
    assert cm["metadata"]["labels"].get("grafana_dashboard") == "1", cm["metadata"]["labels"]
    got = json.loads(cm["data"]["kube-headroom.json"])
    want = json.loads(json.dumps(dash).replace("${DS_PROMETHEUS}", "prometheus"))
    assert got == want, "the ConfigMap's dashboard differs from files/dashboard.json"
    assert "${DS_PROMETHEUS}" not in cm["data"]["kube-headroom.json"]
elif what == "default":
    kinds = [o["kind"] for o in objs("default")]
    assert "ServiceMonitor" not in kinds and "PrometheusRule" not in kinds, kinds
    assert not [o for o in objs("default") if o["metadata"]["name"].endswith("-dashboard")], "dashboard by default"
PY
}
ok() { py "$@" >/dev/null 2>&1; }
WHY=$(py sm 2>&1 | tail -1)
check "ServiceMonitor: honorLabels, prometheus.additionalLabels, https with the token file and a tlsConfig" ok sm
WHY=$(py sm-plain 2>&1 | tail -1)
check "ServiceMonitor with metrics.secure=false: plain http, no token, still honorLabels" ok sm-plain
WHY=$(py sm-cm 2>&1 | tail -1)
check "ServiceMonitor with metrics.certManagerTLS: verifies with cert-manager's ca.crt and the Service's name" ok sm-cm
WHY=$(py rules 2>&1 | tail -1)
check "PrometheusRule: exactly the groups of files/prometheus-rules.yaml (the file promtool tests)" ok rules
WHY=$(py noelect 2>&1 | tail -1)
check "PrometheusRule without leader election: the same, less HeadroomNoLeader" ok noelect
WHY=$(py dashboard 2>&1 | tail -1)
check "dashboard ConfigMap: files/dashboard.json for the Grafana sidecar, the data source filled in" ok dashboard
WHY=$(py default 2>&1 | tail -1)
check "by default none of them renders" ok default
finish
