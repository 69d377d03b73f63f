#!/usr/bin/env bash
# rules.sh — the shipped monitoring files, checked with Debian's promtool
# (scripts/setup.sh installs it; a CTest of the unit tier):
#  - charts/kube-headroom/files/prometheus-rules.yaml passes `promtool check
#    rules`, and every alert's unit tests in rules_test.yaml pass (`promtool
#    test rules`: each alert fires and stays silent when it should);
#  - every alert has a severity, a summary, a description, and a runbook_url
#    naming its own section of docs/runbook.md (the lower-cased alert name);
#  - the dashboard (charts/kube-headroom/files/dashboard.json) is JSON with
#    __inputs and __requires for Grafana's import, and every PromQL
#    expression in it parses (each becomes a recording rule, Grafana's
#    variables filled in, and promtool checks the lot), and every selector
#    of a panel is scoped by the $cluster (and, for our own series, $job)
#    variable; the cluster, job and node variables exist.
# Exits non-zero on the first failure, with promtool's message.
set -euo pipefail
ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
RULES=$ROOT/charts/kube-headroom/files/prometheus-rules.yaml
DASHBOARD=$ROOT/charts/kube-headroom/files/dashboard.json
command -v promtool >/dev/null || { echo "rules.sh: promtool not found (scripts/setup.sh installs Debian's prometheus)" >&2; exit 1; }
WORK=$(mktemp -d /tmp/headroom-rules.XXXXXX)
trap 'rm -rf "$WORK"' EXIT

promtool check rules "$RULES"
(cd "$ROOT/tests/monitoring" && promtool test rules rules_test.yaml)

python3 - "$RULES" "$DASHBOARD" "$WORK/dashboard-rules.yaml" <<'PY'
import json, sys, yaml
rules, dashboard, out = sys.argv[1:]
base = "https://github.com/kube-headroom/kube-headroom/blob/main/docs/runbook.md#"
bad = []
alerts = [r for g in yaml.safe_load(open(rules))["groups"] for r in g["rules"] if "alert" in r]
for r in alerts:
    a = r.get("annotations", {})
    if r.get("labels", {}).get("severity") not in ("critical", "warning", "info"):
        bad.append(f"{r['alert']}: no severity label")
    for k in ("summary", "description"):
        if not a.get(k):
            bad.append(f"{r['alert']}: no {k}")
    if a.get("runbook_url") != base + r["alert"].lower():
        bad.append(f"{r['alert']}: runbook_url {a.get('runbook_url')!r}, want {base + r['alert'].lower()!r}")
names = sorted(r["alert"] for r in alerts)
want = sorted(["HeadroomNoLeader", "HeadroomResizeDeferred", "HeadroomQuotaDenied",
               "HeadroomConfigInvalid", "HeadroomReconcileSlow", "HeadroomWebhookErrors",
               "HeadroomAPIErrors", "HeadroomPodUndecodable"])
if names != want:
    bad.append(f"alerts {names}, want {want}")
d = json.load(open(dashboard))
for k in ("__inputs", "__requires"):
    if not d.get(k):
        bad.append(f"dashboard: no {k}")
if not any(i.get("pluginId") == "prometheus" for i in d.get("__inputs", [])):
    bad.append("dashboard: __inputs has no Prometheus data source")
exprs = [(p["id"], t["refId"], t["expr"]) for p in d["panels"] for t in p.get("targets", [])]
exprs += [("templating", v["name"], v["query"].replace("label_values(", "group by (x) (", 1)
           .rsplit(",", 1)[0] + ")") for v in d["templating"]["list"] if v["type"] == "query"]
rec = [{"record": f"dashboard:panel_{p}_{r}".replace("-", "_"),
        "expr": e.replace("$namespace", "ns").replace("$pod", ".*").replace("$pool", ".*")
                 .replace("$cluster", "").replace("$job", "j").replace("$node", ".*")} for p, r, e in exprs]
# Scoped by the cluster and job variables (design §9.6): every selector of a
# panel matches cluster=~"$cluster" (series without a cluster label match the
# empty value of a one-cluster Prometheus), and kube-headroom's own series
# job=~"$job" too (the kubelet's and kube-state-metrics' have other jobs).
import re
for p, r, e in exprs:
    if p == "templating":
        continue
    for m in re.finditer(r'\b((?:headroom|container|kube)_\w+)(\{[^}]*\})?', e):
        sel = m.group(2) or ""
        if 'cluster=~"$cluster"' not in sel:
            bad.append(f"panel {p}/{r}: {m.group(1)} without cluster=~\"$cluster\"")
        if m.group(1).startswith("headroom_") and 'job=~"$job"' not in sel:
            bad.append(f"panel {p}/{r}: {m.group(1)} without job=~\"$job\"")
vars_ = {v["name"] for v in d["templating"]["list"]}
for v in ("cluster", "job", "node"):
    if v not in vars_:
        bad.append(f"dashboard: no ${v} variable")
yaml.safe_dump({"groups": [{"name": "dashboard", "rules": rec}]}, open(out, "w"))
if bad:
    sys.exit("rules.sh: " + "; ".join(bad))
print(f"rules.sh: {len(alerts)} alerts with runbook links; {len(exprs)} dashboard expressions")
PY
promtool check rules "$WORK/dashboard-rules.yaml"
echo "rules.sh: ok"
