#!/usr/bin/env bash
# e2e_monitoring_chart.sh — the chart's monitoring templates, rendered with
# `helm template` (helm is built with the test control plane, tests/cluster):
#  - the ServiceMonitor scrapes with honorLabels: true, carries
#    prometheus.additionalLabels, and authenticates: https, the token of the
#    Secret the chart makes (authorization, Bearer; a ServiceAccount bound to
#    <fullname>-metrics-reader), or prometheus.bearerTokenFile (the old way);
#    it verifies the certificate with its Secret's ca.crt and the metrics
#    Service's name for every known certificate source (cert-manager, an own
#    Secret, self-managed) and skips verifying only for none (ephemeral,
#    with a NOTES.txt line, which e2e_helm.sh checks); prometheus.tlsConfig replaces it; relabelings
#    and metricRelabelings land on the endpoint; with metrics.secure=false it
#    is plain http;
#  - prometheus.podMonitor.enable: a PodMonitor with the same endpoint;
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
# No certificate source at all (the self-managed one is the default): the case the ServiceMonitor
# cannot verify, and the token's Secret the only Secret.
render "$WORK/on.yaml" "${ON[@]}" --set prometheus.additionalLabels.release=kps --set webhook.selfManaged.enable=false
WHY=$(cat "$WORK/on.yaml.err")
check "helm template renders the monitoring objects" [ -s "$WORK/on.yaml" ]
render "$WORK/plain.yaml" "${ON[@]}" --set metrics.secure=false
render "$WORK/cm.yaml" "${ON[@]}" --set certmanager.enable=true --set metrics.certManagerTLS=true
render "$WORK/noelect.yaml" "${ON[@]}" --set replicas=1 --set leaderElection.enable=false
render "$WORK/default.yaml"
render "$WORK/secret.yaml" "${ON[@]}" --set webhook.certSecretName=my-tls
render "$WORK/selfm.yaml" "${ON[@]}" --set webhook.selfManaged.enable=true
render "$WORK/cmonly.yaml" "${ON[@]}" --set certmanager.enable=true
render "$WORK/own.yaml" "${ON[@]}" --set webhook.certSecretName=my-tls --set-json 'prometheus.tlsConfig={"serverName":"m.example","ca":{"configMap":{"name":"ca","key":"ca.crt"}}}'
render "$WORK/file.yaml" "${ON[@]}" --set prometheus.bearerTokenFile=/var/run/secrets/kubernetes.io/serviceaccount/token
render "$WORK/byo.yaml" "${ON[@]}" --set prometheus.authorization.create=false --set prometheus.authorization.secretName=scrape --set prometheus.authorization.key=tok
render "$WORK/relabel.yaml" "${ON[@]}" --set-json 'prometheus.relabelings=[{"targetLabel":"cluster","replacement":"c1"}]' \
  --set-json 'prometheus.metricRelabelings=[{"sourceLabels":["__name__"],"regex":"go_.*","action":"drop"}]'
render "$WORK/pm.yaml" "${ON[@]}" --set prometheus.podMonitor.enable=true --set certmanager.enable=true \
  --set prometheus.bearerTokenFile=/ignored

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
    assert "bearerTokenFile" not in ep, ep
    assert ep["authorization"] == {"type": "Bearer", "credentials": {"name": "kube-headroom-metrics-token", "key": "token"}}, ep
    assert ep["tlsConfig"] == {"insecureSkipVerify": True}, ep["tlsConfig"]
    assert sm["spec"]["selector"]["matchLabels"].get("app.kubernetes.io/component") == "metrics"
elif what == "scraper":
    sa = [o for o in objs("on") if o["kind"] == "ServiceAccount" and o["metadata"]["name"] == "kube-headroom-metrics-scraper"]
    assert len(sa) == 1, "no scraper ServiceAccount"
    sec = one("on", "Secret")
    assert sec["type"] == "kubernetes.io/service-account-token" and sec["metadata"]["name"] == "kube-headroom-metrics-token", sec
    assert sec["metadata"]["annotations"]["kubernetes.io/service-account.name"] == "kube-headroom-metrics-scraper", sec
    crb = [o for o in objs("on") if o["kind"] == "ClusterRoleBinding" and o["metadata"]["name"] == "kube-headroom-metrics-scraper"]
    assert len(crb) == 1 and crb[0]["roleRef"]["name"] == "kube-headroom-metrics-reader", crb
    assert crb[0]["subjects"] == [{"kind": "ServiceAccount", "name": "kube-headroom-metrics-scraper", "namespace": "kube-headroom"}], crb
    for f in ("file", "byo", "plain"):
        assert not [o for o in objs(f) if o["kind"] == "Secret" and o.get("type") == "kubernetes.io/service-account-token"], f"{f}: a token Secret"
elif what == "verify":
    for f in ("cm", "cmonly", "secret", "selfm"):
        t = one(f, "ServiceMonitor")["spec"]["endpoints"][0]["tlsConfig"]
        sec = "my-tls" if f == "secret" else "kube-headroom-webhook-tls"
        assert t == {"serverName": "kube-headroom-metrics.kube-headroom.svc", "ca": {"secret": {"name": sec, "key": "ca.crt"}}}, (f, t)
elif what == "own":
    t = one("own", "ServiceMonitor")["spec"]["endpoints"][0]["tlsConfig"]
    assert t == {"serverName": "m.example", "ca": {"configMap": {"name": "ca", "key": "ca.crt"}}}, t
elif what == "file":
    ep = one("file", "ServiceMonitor")["spec"]["endpoints"][0]
    assert ep["bearerTokenFile"] == "/var/run/secrets/kubernetes.io/serviceaccount/token" and "authorization" not in ep, ep
    ep = one("byo", "ServiceMonitor")["spec"]["endpoints"][0]
    assert ep["authorization"]["credentials"] == {"name": "scrape", "key": "tok"}, ep
elif what == "relabel":
    ep = one("relabel", "ServiceMonitor")["spec"]["endpoints"][0]
    assert ep["relabelings"] == [{"targetLabel": "cluster", "replacement": "c1"}], ep
    assert ep["metricRelabelings"] == [{"sourceLabels": ["__name__"], "regex": "go_.*", "action": "drop"}], ep
elif what == "podmonitor":
    kinds = [o["kind"] for o in objs("pm")]
    assert "ServiceMonitor" not in kinds, kinds
    pm = one("pm", "PodMonitor"); ep = pm["spec"]["podMetricsEndpoints"]
    assert len(ep) == 1, ep
    sm = one("cmonly", "ServiceMonitor")["spec"]["endpoints"][0]
    assert ep[0] == sm, (ep[0], sm)
    assert "app.kubernetes.io/component" not in pm["spec"]["selector"]["matchLabels"], pm["spec"]["selector"]
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
check "ServiceMonitor: honorLabels, prometheus.additionalLabels, https with authorization (Bearer, the token Secret); no certificate provided: insecureSkipVerify" ok sm
WHY=$(py scraper 2>&1 | tail -1)
check "the token Secret: a ServiceAccount's token, bound to <fullname>-metrics-reader; none with bearerTokenFile, an own Secret or plain http" ok scraper
WHY=$(py verify 2>&1 | tail -1)
check "ServiceMonitor verifies the certificate (ca.crt of its Secret, the metrics Service's name) for cert-manager, an own Secret and self-managed" ok verify
WHY=$(py own 2>&1 | tail -1)
check "ServiceMonitor: prometheus.tlsConfig replaces the chart's" ok own
WHY=$(py file 2>&1 | tail -1)
check "ServiceMonitor: prometheus.bearerTokenFile keeps the old way; authorization.secretName/key for an own Secret" ok file
WHY=$(py relabel 2>&1 | tail -1)
check "ServiceMonitor: relabelings and metricRelabelings on the endpoint" ok relabel
WHY=$(py podmonitor 2>&1 | tail -1)
check "PodMonitor (prometheus.podMonitor.enable): instead of the ServiceMonitor, the same endpoint (never bearerTokenFile)" ok podmonitor

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
