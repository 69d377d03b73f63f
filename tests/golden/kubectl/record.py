#!/usr/bin/env python3
"""record.py — what the real kubectl prints for our -o jsonpath and -o custom-columns cases.

    record.py --kubectl KUBECTL --headroom HEADROOM --out DIR [--kubeconfig KC --namespace NS]

Writes into DIR, one JSON object a line ({"case", "rc", "out", "err"}):
  jsonpath.recorded.json  each template of jsonpath.cases ("!" first: with
                          --allow-missing-template-keys=false) on object.json, by
                          `kubectl label --local -f object.json x=y --overwrite -o jsonpath=T`
                          (no server needed)
  plan.recorded.json      each case of plan.cases on `headroom plan -f ../cluster.json -o json`:
                          jsonpath by the same `label --local` on the plan wrapped as a
                          ConfigMap's field "plan" (ROOT is .plan for kubectl, nothing for us);
                          custom-columns by `kubectl get -f` of the plan's items stored as objects
                          of a CRD that keeps every field (needs --kubeconfig)
  columns.recorded.json   each spec of columns.cases on the items of columns.json, the same way
                          (needs --kubeconfig)
The unit test tests/unit/test_jsonpath.c and tests/golden/kubectl/check.py compare ours with these
files; tests/e2e/e2e_kubectl_output.sh runs this script against a real API server and fails when
the committed files are not what kubectl prints now. To regenerate them:

    HEADROOM_CLUSTER_DIR=... tests/cluster/cluster.sh up
    tests/golden/kubectl/record.py --kubectl "$(tests/cluster/cluster.sh bin kubectl)" \\
        --headroom build/release/headroom --out tests/golden/kubectl \\
        --kubeconfig "$HEADROOM_CLUSTER_DIR/admin.kubeconfig" --namespace default
"""
import argparse
import json
import os
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
GROUP = "outputprobes.test.kube-headroom.dev"


def run(cmd, env=None):
    p = subprocess.run(cmd, capture_output=True, env=env)
    return p.returncode, p.stdout.decode("utf-8", "replace"), p.stderr.decode("utf-8", "replace")


def first_error(err):
    """kubectl's message without 'error: ' and its debugging dump."""
    line = err.strip().splitlines()[0] if err.strip() else ""
    line = line[len("error: "):] if line.startswith("error: ") else line
    return line.split(". Printing more information")[0]


def cases(name):
    with open(os.path.join(HERE, name), encoding="utf-8") as f:
        return [l.rstrip("\n") for l in f if l.rstrip("\n")]


def offline_env():
    env = dict(os.environ)
    env["KUBECONFIG"] = "/dev/null"
    return env


def label_jsonpath(kubectl, path, template, allow_missing=True):
    cmd = [kubectl, "label", "--local", "-f", path, "x=y", "--overwrite", "-o", "jsonpath=" + template]
    if not allow_missing:
        cmd.append("--allow-missing-template-keys=false")
    rc, out, err = run(cmd, offline_env())
    return {"rc": rc, "out": out if rc == 0 else "", "err": first_error(err) if rc else ""}


CRD = {
    "apiVersion": "apiextensions.k8s.io/v1", "kind": "CustomResourceDefinition",
    "metadata": {"name": GROUP},
    "spec": {"group": "test.kube-headroom.dev", "scope": "Namespaced",
             "names": {"plural": "outputprobes", "singular": "outputprobe", "kind": "OutputProbe"},
             "versions": [{"name": "v1", "served": True, "storage": True,
                           "schema": {"openAPIV3Schema": {"type": "object",
                                                          "x-kubernetes-preserve-unknown-fields": True}}}]},
}


class Server:
    """Rows as objects of a CRD that keeps every field, for `kubectl get -o custom-columns`."""

    def __init__(self, kubectl, kubeconfig, ns):
        self.k = [kubectl, "--kubeconfig", kubeconfig]
        self.ns = ns
        with tempfile.NamedTemporaryFile("w", suffix=".json", delete=False) as f:
            json.dump(CRD, f)
        rc, _, err = run(self.k + ["apply", "-f", f.name])
        os.unlink(f.name)
        if rc:
            sys.exit("record.py: the CRD: " + err)
        for _ in range(100):
            if run(self.k + ["get", "outputprobes", "-n", ns])[0] == 0:
                break
            time.sleep(0.1)
        self.n = 0

    def store(self, items):
        """The items as objects; the List of them (the file kubectl get -f reads)."""
        self.n += 1
        objs = []
        for i, it in enumerate(items):
            o = {"apiVersion": "test.kube-headroom.dev/v1", "kind": "OutputProbe",
                 "metadata": {"name": "r%d-%d-%03d" % (os.getpid(), self.n, i), "namespace": self.ns}}
            o.update(it)
            objs.append(o)
        lst = {"apiVersion": "v1", "kind": "List", "items": objs}
        f = tempfile.NamedTemporaryFile("w", suffix=".json", delete=False)
        json.dump(lst, f)
        f.close()
        rc, _, err = run(self.k + ["create", "--validate=false", "-f", f.name])
        if rc:
            sys.exit("record.py: the rows: " + err)
        return f.name

    def columns(self, listfile, spec):
        rc, out, err = run(self.k + ["get", "-f", listfile, "-o", "custom-columns=" + spec])
        return {"rc": rc, "out": out if rc == 0 else "", "err": first_error(err) if rc else ""}

    def close(self, files):
        for f in files:
            run(self.k + ["delete", "-f", f, "--wait=false"])
            os.unlink(f)


def write(path, rows):
    with open(path, "w", encoding="utf-8") as f:
        for r in rows:
            f.write(json.dumps(r, ensure_ascii=False, sort_keys=True) + "\n")


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--kubectl", required=True)
    ap.add_argument("--headroom", required=True)
    ap.add_argument("--out", required=True)
    ap.add_argument("--kubeconfig")
    ap.add_argument("--namespace", default="default")
    a = ap.parse_args()

    rows = []
    for c in cases("jsonpath.cases"):
        allow = not c.startswith("!")
        r = label_jsonpath(a.kubectl, os.path.join(HERE, "object.json"), c if allow else c[1:], allow)
        r["case"] = c
        rows.append(r)
    write(os.path.join(a.out, "jsonpath.recorded.json"), rows)

    rc, plan, err = run([a.headroom, "plan", "-f", os.path.join(HERE, "..", "cluster.json"), "-o", "json"])
    if rc:
        sys.exit("record.py: headroom plan: " + err)
    plan = json.loads(plan)
    wrapped = {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "plan", "labels": {"x": "y"}},
               "plan": plan}
    server = Server(a.kubectl, a.kubeconfig, a.namespace) if a.kubeconfig else None
    files = []
    with tempfile.NamedTemporaryFile("w", suffix=".json", delete=False) as f:
        json.dump(wrapped, f)
        planfile = f.name
    rows = []
    plan_rows = server.store(plan["items"]) if server else None
    if plan_rows:
        files.append(plan_rows)
    for c in cases("plan.cases"):
        kind, arg = c.split("=", 1)
        if kind == "jsonpath":
            r = label_jsonpath(a.kubectl, planfile, arg.replace("ROOT", ".plan"))
        elif server:
            r = server.columns(plan_rows, arg)
        else:
            continue
        r["case"] = c
        rows.append(r)
    os.unlink(planfile)
    write(os.path.join(a.out, "plan.recorded.json"), rows)

    if server:
        try:
            with open(os.path.join(HERE, "columns.json"), encoding="utf-8") as f:
                items = json.load(f)["items"]
            listfile = server.store(items)
            files.append(listfile)
            rows = []
            for c in cases("columns.cases"):
                r = server.columns(listfile, c)
                r["case"] = c
                rows.append(r)
            write(os.path.join(a.out, "columns.recorded.json"), rows)
        finally:
            server.close(files)


if __name__ == "__main__":
    main()
