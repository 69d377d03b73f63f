#!/usr/bin/env python3
"""run.py [--only NAME...] [--list] — the policy scenarios on a test cluster.

Each tests/scenarios/*.yaml is one scenario (README.md there has the format): simulated nodes,
namespaces, pods, the HeadroomConfig settings it needs, then steps of changes and expectations
(limits per pod and container, resizes counted from the API server's audit record, `headroom plan
-f` agreeing, metrics, `headroom explain`/`node` output). Adding a scenario is adding a file.
Prints `PASS  <scenario>: <check>` / `FAIL  <scenario>: <check>: <why>` and closes with exactly
`N passed, N failed`; exits 1 on any failure. Needs a running test cluster
(tests/cluster/cluster.sh up; HEADROOM_CLUSTER_DIR, default /tmp/kube-headroom-cluster) and the
binary HEADROOM_BIN (default build/release/headroom).

Batching. The HeadroomConfig is a cluster-wide singleton ("cluster", design §1), so scenarios run
in batches, one controller and one HeadroomConfig per batch, batches one after another:
- Every object of a scenario has a name of its own (sc-<scenario>-<name>-<run>), so the scenarios
  of a batch run concurrently (a thread each) on one cluster.
- A scenario's settings are split: what a node pool can set (minBurstFloor, maxMultiplier,
  quantum, deadband; design §2.11) becomes pools of the batch's spec.nodePools, selecting the
  scenario's nodes by the label e2e.kube-headroom.dev/scenario the runner puts on them — its own
  pools first (their selectors with that label added, their overrides over the scenario's
  top-level ones), then one pool for the rest of its nodes. Everything else (policy,
  debouncePeriod, rates, ...) is cluster-wide: scenarios whose cluster-wide settings agree share a
  batch (at most 32 pools each). The batch's namespaceSelector matches the label
  e2e.kube-headroom.dev/batch the runner puts on each managed namespace of the batch.
- A scenario runs in a batch of its own when a step changes a cluster-wide setting (TenantFair
  switched on live), when it expects a metric that is not about its own objects (headroom_groups
  counts every gang the controller holds), when it expects a node not to be planned again
  (`not_replanned`: another scenario's step may make every node dirty — a LimitRange, a cluster-
  wide setting — and so plan this one again too), or when it says `alone: true`.
- A batch: the HeadroomConfig applied, every scenario's objects made and its pods Running, then
  the controller started (tests/scenarios/controller.sh: tests/lib/common.sh's identity and
  start_controller), so its first plan sees every pod; then the scenarios' steps, concurrently;
  then the controller stopped and the batch's pods deleted at once (the next controller caches
  none of them), its namespaces and nodes after them.
"""
import argparse
import copy
import fnmatch
import json
import os
import re
import shlex
import socket
import subprocess
import sys
import tempfile
import threading
import time
import traceback
from datetime import datetime, timezone
from pathlib import Path

import yaml

HERE = Path(__file__).resolve().parent
ROOT = HERE.parents[1]
CLUSTER_SH = os.environ.get("HR_CLUSTER_SH") or str(ROOT / "tests/cluster/cluster.sh")
STATE = os.environ.get("HEADROOM_CLUSTER_DIR") or "/tmp/kube-headroom-cluster"
ENV = dict(os.environ, HEADROOM_CLUSTER_DIR=STATE,
           KUBECONFIG=os.environ.get("KUBECONFIG") or f"{STATE}/admin.kubeconfig")
HEADROOM = os.environ.get("HEADROOM_BIN") or str(ROOT / "build/release/headroom")
ENV["HEADROOM_BIN"] = HEADROOM
RUN = str(os.getpid())
SC_LABEL, BATCH_LABEL = "e2e.kube-headroom.dev/scenario", "e2e.kube-headroom.dev/batch"
POOLABLE = {"minBurstFloor", "maxMultiplier", "quantum", "deadband"}
RUNNERS = {"dryRun", "namespaceSelector"}  # the runner's own: a scenario may not set them
DEFAULTS = {"policy": "Proportional", "debouncePeriod": "2s"}
WRITE_VERBS = {"create", "update", "patch", "delete", "deletecollection"}
TEMPLATE = re.compile(r"\{(node|ns|pool):([A-Za-z0-9._-]+)\}")
SCENARIO_KEYS = {"name", "about", "alone", "config", "nodes", "namespaces", "pods", "steps"}
STEP_KEYS = {"name", "do", "timeout", "expect", "writes", "untouched", "within_ms", "plan", "cli",
             "metric", "pools", "annotation", "replanned", "not_replanned", "terminating", "decided"}
LOCK = threading.Lock()  # the output and the counts
CONFIG_LOCK = threading.Lock()  # the HeadroomConfig's writes
counts = {"passed": 0, "failed": 0}


def say(line):
    with LOCK:
        print(line, flush=True)


def result(sc, check, ok, why=""):
    with LOCK:
        counts["passed" if ok else "failed"] += 1
        print(f"PASS  {sc}: {check}" if ok else f"FAIL  {sc}: {check}: {why}", flush=True)
    return ok


def sh(args, inp=None, check=True):
    p = subprocess.run(args, input=inp, capture_output=True, text=True, env=ENV)
    if check and p.returncode != 0:
        raise RuntimeError(f"{' '.join(map(str, args[:4]))}...: {(p.stderr or p.stdout).strip()[:400]}")
    return p.stdout


KUBECTL = sh([CLUSTER_SH, "bin", "kubectl"]).strip() if os.access(CLUSTER_SH, os.X_OK) else "kubectl"


def k(*args, inp=None, check=True):
    return sh([KUBECTL, *args], inp=inp, check=check)


def apply(objs):
    k("apply", "-f", "-", inp=json.dumps({"apiVersion": "v1", "kind": "List", "items": objs}))


def milli(q):
    """A CPU quantity as the API server prints it ("10", "8500m", "1.5") -> millicores; None -> None."""
    if q is None or q == "":
        return None
    q = str(q)
    return int(q[:-1]) if q.endswith("m") else round(float(q) * 1000)


def wait_until(seconds, fn, every=0.5):
    end = time.time() + seconds
    while True:
        v = fn()
        if v or time.time() >= end:
            return v
        time.sleep(every)


def free_port():
    for port in range(20000 + os.getpid() % 9000, 32000):
        with socket.socket() as s:
            try:
                s.bind(("127.0.0.1", port))
                return port
            except OSError:
                continue
    raise RuntimeError("no free port")


def audit_path():
    return os.environ.get("HEADROOM_AUDIT_LOG") or sh([CLUSTER_SH, "audit"]).strip()


def audit_events(offset, user=None, namespaces=None):
    """The audit events after byte offset (optionally of user, or naming one of namespaces),
    parsed."""
    out = []
    needles = [n.encode() for n in namespaces or ()]
    with open(AUDIT, "rb") as f:
        f.seek(offset)
        for line in f:
            if user and user.encode() not in line:
                continue
            if needles and not any(n in line for n in needles):
                continue
            try:
                ev = json.loads(line)
            except ValueError:
                continue  # a line still being written
            if user is None or ev.get("user", {}).get("username") == user:
                out.append(ev)
    return out


def ts(s):
    """An audit record's RFC 3339 time (UTC, microseconds) -> seconds since the epoch."""
    return datetime.fromisoformat(s.rstrip("Z")).replace(tzinfo=timezone.utc).timestamp()


class Scenario:
    def __init__(self, path):
        self.path = path
        d = yaml.safe_load(path.read_text()) or {}
        bad = set(d) - SCENARIO_KEYS
        if bad:
            raise ValueError(f"unknown key(s) {sorted(bad)}; known: {sorted(SCENARIO_KEYS)}")
        self.name = d.get("name", path.stem)
        if not re.fullmatch(r"[a-z0-9]([a-z0-9-]*[a-z0-9])?", self.name):
            raise ValueError(f"name {self.name!r} is not a DNS label")
        self.about = d.get("about", "")
        self.config = d.get("config") or {}
        if set(self.config) & RUNNERS:
            raise ValueError(f"config sets {sorted(set(self.config) & RUNNERS)}: the runner sets those")
        self.id = f"{self.name}-{RUN}"
        self.nodes = {n["name"]: n for n in d.get("nodes", [])}
        self.nss = {n["name"]: n for n in d.get("namespaces", [])}
        self.node_name = {n: self.real(f"sc-{self.name}-{n}-{RUN}") for n in self.nodes}
        self.ns_name = {n: self.real(f"sc-{self.name}-{n}-{RUN}") for n in self.nss}
        self.pods = [p for spec in d.get("pods", []) for p in self.expand(spec)]
        self.steps = d.get("steps") or []
        for i, st in enumerate(self.steps):
            if set(st) - STEP_KEYS:
                raise ValueError(f"step {i + 1}: unknown key(s) {sorted(set(st) - STEP_KEYS)}")
        self.alone = self.why_alone(d.get("alone", False))
        self.batch = None

    @staticmethod
    def real(name):
        if len(name) > 63:
            raise ValueError(f"{name}: longer than 63 characters (shorten the scenario's names)")
        return name

    def expand(self, spec):
        n = spec.get("replicas")
        if n is None:
            return [spec]
        return [dict(spec, name=f"{spec['name']}-{i}", replicas=None) for i in range(n)]

    def wide(self):
        """The cluster-wide settings: the batch key."""
        return {**DEFAULTS, **{k: v for k, v in self.config.items() if k not in POOLABLE | {"nodePools"}}}

    def why_alone(self, said):
        if said:
            return "it says alone: true"
        for st in self.steps:
            for ch in st.get("do", []):
                cfg = ch.get("config") or {}
                if set(cfg) - POOLABLE - {"nodePools"}:
                    return f"it changes {sorted(set(cfg) - POOLABLE - {'nodePools'})} mid-way"
            for m in st.get("metric") or {}:
                if not TEMPLATE.search(m):
                    return f"it expects {m}, a metric of the whole controller"
            if st.get("not_replanned"):
                return "it expects a node not planned again, which another scenario's step may cause"
        return None

    # ---------------------------------------------------------------- names
    def pool_name(self, pool=None):
        return self.real(f"{self.name}--{pool}" if pool else self.name)

    def fill(self, s):
        """{node:X}, {ns:X}, {pool:X} -> the real names."""
        table = {"node": self.node_name, "ns": self.ns_name}
        return TEMPLATE.sub(lambda m: self.pool_name(m.group(2)) if m.group(1) == "pool"
                            else table[m.group(1)][m.group(2)], str(s))

    def ref(self, local):
        """"ns/pod" (pod may be a glob) -> (real ns, pod pattern)."""
        ns, pod = local.split("/", 1)
        return self.ns_name[ns], pod

    def match(self, local, have):
        """The (ns, pod) of have that local names; a name that matches nothing is kept, to fail."""
        ns, pat = self.ref(local)
        got = sorted(p for p in have if p[0] == ns and fnmatch.fnmatchcase(p[1], pat))
        return got or [(ns, pat)]

    # ---------------------------------------------------------------- objects
    def pools(self):
        """This scenario's part of the batch's spec.nodePools."""
        top = {k: v for k, v in self.config.items() if k in POOLABLE}
        out = []
        for p in self.config.get("nodePools") or []:
            sel = copy.deepcopy(p.get("nodeSelector") or {})
            sel.setdefault("matchLabels", {})[SC_LABEL] = self.id
            over = {**copy.deepcopy(top), **copy.deepcopy(p.get("overrides") or {})}
            if "deadband" in top and "deadband" in (p.get("overrides") or {}):
                over["deadband"] = {**top["deadband"], **p["overrides"]["deadband"]}
            out.append({"name": self.pool_name(p["name"]), "nodeSelector": sel, "overrides": over})
        # Always this pool, even with no settings (the top level's, the defaults): a step that sets
        # one changes the pool's overrides, never the list's shape (other scenarios' nodes stay put).
        rest = {"name": self.pool_name(), "nodeSelector": {"matchLabels": {SC_LABEL: self.id}}}
        if top:
            rest["overrides"] = copy.deepcopy(top)
        return out + [rest]

    def node_obj(self, local, labels):
        name = self.node_name[local]
        return {"apiVersion": "v1", "kind": "Node",
                "metadata": {"name": name, "annotations": {"kwok.x-k8s.io/node": "fake"},
                             "labels": {"type": "kwok", "kubernetes.io/hostname": name, SC_LABEL: self.id,
                                        **{k: str(v) for k, v in (labels or {}).items()}}},
                "status": {"allocatable": {"cpu": str(self.nodes[local]["cpu"]), "memory": "64Gi", "pods": "110"},
                           "capacity": {"cpu": str(self.nodes[local]["cpu"]), "memory": "64Gi", "pods": "110"}}}

    def ns_obj(self, ns):
        labels = {k: str(v) for k, v in (ns.get("labels") or {}).items()}
        if ns.get("managed", True):
            labels.update({"kube-headroom.dev/mode": "managed", BATCH_LABEL: self.batch.id})
        return {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": self.ns_name[ns["name"]], "labels": labels}}

    def pod_obj(self, p):
        conts = p.get("containers") or [{"name": "app", "cpu": p["cpu"], "limit": p.get("limit")}]
        cs = []
        for c in conts:
            res = {"requests": {"cpu": str(c["cpu"]), "memory": "64Mi"}}
            if c.get("limit") is not None:
                res["limits"] = {"cpu": str(c["limit"])}
            cs.append({"name": c["name"], "image": "registry.invalid/app:1", "resources": res})
        meta = {"name": p["name"], "namespace": self.ns_name[p["ns"]],
                "labels": {SC_LABEL: self.id, **{k: str(v) for k, v in (p.get("labels") or {}).items()}}}
        if p.get("annotations"):
            meta["annotations"] = {k: str(v) for k, v in p["annotations"].items()}
        if p.get("finalizers"):
            meta["finalizers"] = list(p["finalizers"])
        return {"apiVersion": "v1", "kind": "Pod", "metadata": meta,
                "spec": {"nodeName": self.node_name[p["node"]], "containers": cs}}

    def live_pods(self):
        """(ns, name) -> the pod as the API server has it, for every pod of the scenario."""
        items = json.loads(k("get", "pods", "-A", "-l", f"{SC_LABEL}={self.id}", "-o", "json"))["items"]
        return {(p["metadata"]["namespace"], p["metadata"]["name"]): p for p in items}

    def setup(self):
        apply([self.ns_obj(n) for n in self.nss.values()] +
              [self.node_obj(n, v.get("labels")) for n, v in self.nodes.items()])
        for ns in self.ns_name.values():  # pods need the default ServiceAccount (90 s: see common.sh mkns)
            if not wait_until(90, lambda: k("-n", ns, "get", "serviceaccount", "default", check=False)):
                raise RuntimeError(f"namespace {ns}: no default ServiceAccount within 90 s")
        if self.pods:
            apply([self.pod_obj(p) for p in self.pods])
        running = lambda: all(p.get("status", {}).get("phase") == "Running" for p in self.live_pods().values())
        if not wait_until(60, running):
            raise RuntimeError("the pods are not all Running within 60 s")

    def cleanup(self):
        for p in self.pods:  # a finalizer of the scenario's would hold its namespace forever
            if p.get("finalizers"):
                k("-n", self.ns_name[p["ns"]], "patch", "pod", p["name"], "--type", "json",
                  "-p", '[{"op":"remove","path":"/metadata/finalizers"}]', check=False)
        # The pods first, at once: the next batch's controller must cache none of them (its
        # headroom_groups counts every group with a cached member, managed or not).
        k("delete", "pods", "-A", "-l", f"{SC_LABEL}={self.id}", "--grace-period=0", "--force", check=False)
        k("delete", "namespace", *self.ns_name.values(), "--ignore-not-found", "--wait=false", check=False)
        k("delete", "node", *self.node_name.values(), "--ignore-not-found", "--wait=false", check=False)

    # ---------------------------------------------------------------- changes
    def change(self, ch):
        """One change of a step's `do`; returns (resource, namespace, name) of the object it writes."""
        (kind, arg), = ch.items()
        if kind == "add_pod":
            for p in self.expand(arg):
                self.pods.append(p)
                apply([self.pod_obj(p)])
            return ("pods", self.ns_name[arg["ns"]], self.expand(arg)[0]["name"])
        if kind in ("delete_pod", "remove_finalizers"):
            # delete_pod: a name, a glob or a list, deleted at once (forced); {pods: ..., wait: false}:
            # a plain delete, not waited for (a pod with a finalizer stays, terminating)
            wait = not isinstance(arg, dict) or arg.get("wait", True)
            refs = arg["pods"] if isinstance(arg, dict) else arg
            refs = [refs] if isinstance(refs, str) else refs
            have, first = self.live_pods(), None
            for ref in refs:
                for ns, pod in self.match(ref, have):
                    first = first or ("pods", ns, pod)
                    if kind == "remove_finalizers":
                        k("-n", ns, "patch", "pod", pod, "--type", "json",
                          "-p", '[{"op":"remove","path":"/metadata/finalizers"}]')
                    elif wait:
                        k("-n", ns, "delete", "pod", pod, "--wait=true", "--grace-period=0", "--force")
                    else:
                        k("-n", ns, "delete", "pod", pod, "--wait=false")
            return first
        if kind == "label_node":
            for node, labels in arg.items():
                k("label", "node", self.node_name[node], "--overwrite", *(f"{a}={b}" for a, b in labels.items()))
            return ("nodes", None, self.node_name[next(iter(arg))])
        if kind == "config":
            for key, val in arg.items():
                if val is None:
                    self.config.pop(key, None)
                else:
                    self.config[key] = copy.deepcopy(val)
            self.batch.apply_config()
            return ("headroomconfigs", None, "cluster")
        raise ValueError(f"unknown change {kind!r} (add_pod, delete_pod, remove_finalizers, label_node, config)")

    # ---------------------------------------------------------------- a run
    def run(self):
        try:
            for i, st in enumerate(self.steps):
                self.step(i, st)
        except Exception as e:  # a broken file or a refused change: one failure, the rest goes on
            result(self.name, "runs to the end", False, f"{type(e).__name__}: {e}")
            if os.environ.get("HR_SCENARIO_DEBUG"):
                traceback.print_exc()

    def settle(self, offset, quiet=1.5, limit=20):
        """Until neither the controller nor the kubelets (kwok: a pod's status, the resize's
        outcome) have written to this scenario's pods for `quiet` seconds: a status that lands
        after the next step's change would make its node planned again in that step."""
        nss = set(self.ns_name.values())
        def ours(e):
            ref = e.get("objectRef", {})
            return (ref.get("namespace") in nss and e["verb"] in WRITE_VERBS
                    and (e.get("user", {}).get("username") == self.batch.user
                         or (ref.get("resource") == "pods" and ref.get("subresource") == "status")))
        def calm():
            last = [ts(e["requestReceivedTimestamp"]) for e in audit_events(offset, namespaces=nss)
                    if ours(e)]
            return time.time() - max(last, default=0) >= quiet
        wait_until(limit, calm, every=0.3)
        time.sleep(0.5)  # the audit record is written once a request completes

    def step(self, i, st):
        """One step: its changes, then its checks, each waiting for its condition."""
        label = f"step {i + 1}" + (f" ({st['name']})" if st.get("name") else "")
        self.named = lambda what: f"{label}: {what}"
        first = i == 0
        if not first and st.get("do"):
            self.settle(self.batch.audit_mark)
        self.amark = self.batch.audit_mark if first else os.path.getsize(AUDIT)
        self.lmark = self.batch.log_mark if first else os.path.getsize(self.batch.log)
        self.changed = None
        for ch in st.get("do", []):
            obj = self.change(ch)
            self.changed = self.changed or obj  # within_ms counts from the first
        timeout = st.get("timeout", 60)
        # First what the controller must have done since the change (planned a node again, decided
        # about a pod), so that a limit expected unchanged is read after the controller looked.
        self.check_log(st, timeout)
        self.check_limits(st.get("expect"), timeout)
        self.check_audit(st)
        self.check_plan(st)
        self.check_state(st)
        for node in st.get("not_replanned") or []:
            n = self.decisions(node)
            self.ok(f"node {node} not re-planned (no decision logged)", n == 0, f"{n} decision(s) logged")

    def ok(self, what, cond, why):
        return result(self.name, self.named(what), cond, why)

    def log(self):
        """The controller's log since the step began."""
        with open(self.batch.log, "rb") as f:
            f.seek(self.lmark)
            return f.read().decode(errors="replace")

    def decisions(self, node):
        return self.log().count(f"msg=decision node={self.node_name[node]} ")

    def check_log(self, st, timeout):
        for node in st.get("replanned") or []:
            done = wait_until(timeout, lambda: self.decisions(node) > 0)
            self.ok(f"node {node} re-planned (decisions logged)", done, "no decision logged")
        for ref, want in (st.get("decided") or {}).items():  # the controller's own decision about a pod
            ns, pod = self.ref(ref)
            last = lambda: ([l for l in self.log().splitlines()
                             if "msg=decision " in l and f" pod={ns}/{pod} " in l] or [""])[-1]
            wait_until(timeout, last)
            self.ok(f"the controller's decision about {ns}/{pod} after the change says {want!r}",
                    want in last(), f"last decision: {last() or 'none logged'}")
        for ref in st.get("terminating") or []:
            for ns, pod in self.match(ref, self.live_pods()):
                meta = lambda: self.live_pods().get((ns, pod), {"metadata": {}, "spec": {}})
                bound = lambda: bool(meta()["metadata"].get("deletionTimestamp") and meta()["spec"].get("nodeName"))
                self.ok(f"{ns}/{pod} is terminating (deletionTimestamp) and still bound", wait_until(10, bound),
                        f"deletionTimestamp {meta()['metadata'].get('deletionTimestamp')}")

    def check_limits(self, want, timeout):
        if want is None:
            return
        def wrong():
            have, out = self.live_pods(), []
            for ref, val in want.items():
                for key in self.match(ref, have):
                    if key not in have:
                        out.append(f"{key[0]}/{key[1]}: no such pod")
                        continue
                    lims = {c["name"]: milli(c.get("resources", {}).get("limits", {}).get("cpu"))
                            for c in have[key]["spec"]["containers"]}
                    exp = val if isinstance(val, dict) else {next(iter(lims)) if len(lims) == 1 else "app": val}
                    for cont, e in exp.items():
                        if lims.get(cont) != e:
                            show = lambda m: "no limit" if m is None else f"{m}m"
                            out.append(f"{key[0]}/{key[1]} container {cont}: expected {show(e)}, "
                                       f"actual {show(lims.get(cont))}")
            return out
        wait_until(timeout, lambda: not wrong())
        bad, have = wrong(), self.live_pods()
        n = len({key for ref in want for key in self.match(ref, have)})
        self.ok(f"limits of {n} pod(s)", not bad, "; ".join(bad))

    def check_audit(self, st):
        """Resizes per pod, pods left alone, and the time to the last resize: the audit record."""
        if not any(x in st for x in ("writes", "untouched", "within_ms")):
            return
        self.settle(self.amark)
        evs = [e for e in audit_events(self.amark, self.batch.user)
               if e["verb"] in WRITE_VERBS and e.get("objectRef", {}).get("resource") == "pods"]
        of = lambda e: (e["objectRef"]["namespace"], e["objectRef"]["name"])
        resizes = [e for e in evs if e["objectRef"].get("subresource") == "resize"]
        have = {of(e) for e in evs} | set(self.live_pods())
        for ref, n in (st.get("writes") or {}).items():
            for key in self.match(ref, have):
                got = sum(1 for e in resizes if of(e) == key)
                self.ok(f"{key[0]}/{key[1]}: {n} resize(s) (audit)", got == n, f"{got} resize(s)")
        for ref in st.get("untouched") or []:
            for key in self.match(ref, have):
                got = [f"{e['verb']} {e['objectRef'].get('subresource') or ''}".strip() for e in evs if of(e) == key]
                self.ok(f"{key[0]}/{key[1]}: no write of any kind (audit)", not got, ", ".join(got))
        if "within_ms" in st:
            limit = st["within_ms"]
            res, ns, name = self.changed or (None, None, None)
            born = [ts(e["requestReceivedTimestamp"]) for e in audit_events(self.amark)
                    if e["verb"] in WRITE_VERBS and e.get("objectRef", {}).get("resource") == res
                    and e["objectRef"].get("namespace") == ns and e["objectRef"].get("name") == name
                    and e.get("user", {}).get("username") != self.batch.user]
            mine = [ts(e["requestReceivedTimestamp"]) for e in resizes if of(e)[0] in self.ns_name.values()]
            if not born or not mine:
                self.ok(f"the last resize within {limit} ms of the change", False,
                        f"in the audit record: the change {len(born)}, resizes {len(mine)}")
            else:
                took = round((max(mine) - min(born)) * 1000)
                self.ok(f"the last of {len(mine)} resize(s) within {limit} ms of the change ({took} ms, audit)",
                        took <= limit, f"{took} ms")

    def check_plan(self, st):
        """`headroom plan -f` and other commands on a dump of the cluster taken now."""
        if not (st.get("plan") or st.get("cli")):
            return
        fd, dump = tempfile.mkstemp(prefix="dump-", suffix=".json", dir=self.batch.work)
        with os.fdopen(fd, "w") as f:
            f.write(k("get", "nodes,pods,namespaces,limitranges,resourcequotas,headroomconfigs", "-A", "-o", "json"))
        if st.get("plan"):
            plan = json.loads(sh([HEADROOM, "plan", "-f", dump, "-o", "json"]))
            have, diff, n = self.live_pods(), [], 0
            for p in (p for node in plan["nodes"] for p in node["pods"]):
                key = (p["namespace"], p["name"])
                if key not in have or not p.get("managed"):
                    continue
                n += 1
                lim = sum(milli(c.get("resources", {}).get("limits", {}).get("cpu")) or 0
                          for c in have[key]["spec"]["containers"])
                if p["targetMilli"] != lim or p.get("write"):
                    diff.append(f"{key[0]}/{key[1]}: limit {lim}m, planned {p['targetMilli']}m"
                                f"{' (would write)' if p.get('write') else ''}")
            self.ok(f"`headroom plan -f` of a dump plans the {n} managed pods' limits", n > 0 and not diff,
                    "; ".join(diff) or "no managed pod in the plan")
        for cl in st.get("cli") or []:
            p = subprocess.run([HEADROOM, *shlex.split(self.fill(cl["run"])), "-f", dump],
                               capture_output=True, text=True, env=ENV)
            out = p.stdout + p.stderr
            want = self.fill(cl["contains"] if "contains" in cl else cl["matches"])
            found = want in out if "contains" in cl else re.search(want, out, re.M) is not None
            self.ok(cl.get("name") or f"`headroom {cl['run']}` says {want!r}", found, f"output: {out.strip()[:600]!r}")

    def check_state(self, st):
        """The controller's metrics, the HeadroomConfig's status, the pods' status annotations."""
        for m, want in (st.get("metric") or {}).items():
            m = self.fill(m)
            wait_until(30, lambda: self.batch.metric(m) == float(want))
            got = self.batch.metric(m)
            self.ok(f"{m} is {want}", got == float(want), f"{got}")
        if "pools" in st:
            want = {self.pool_name(p): n for p, n in st["pools"].items()}
            def counts_now():
                cfg = json.loads(k("get", "headroomconfig", "cluster", "-o", "json"))
                return {p["name"]: p["nodes"] for p in cfg.get("status", {}).get("nodePools", []) if p["name"] in want}
            wait_until(30, lambda: counts_now() == want)
            got = counts_now()
            self.ok(f"status.nodePools counts {want}", got == want, f"status: {got}")
        if "annotation" in st:
            want = st["annotation"]
            managed = {self.ns_name[n] for n, v in self.nss.items() if v.get("managed", True)}
            def off():
                out = []
                for (ns, pod), p in self.live_pods().items():
                    raw = p["metadata"].get("annotations", {}).get("kube-headroom.dev/status", "{}")
                    if ns in managed and any(json.loads(raw).get(a) != b for a, b in want.items()):
                        out.append(f"{ns}/{pod}: {raw}")
                return out
            wait_until(30, lambda: not off())
            bad = off()
            self.ok(f"every managed pod's status annotation says {want}", not bad, "; ".join(bad)[:600])


class Batch:
    def __init__(self, idx, scens):
        self.idx, self.scens = idx, scens
        self.id = f"{RUN}-{idx}"
        self.user = f"headroom-scenarios-{self.id}"
        self.work = tempfile.mkdtemp(prefix="headroom-scenarios.")
        self.log = os.path.join(self.work, "controller.log")
        self.port = free_port()
        self.pid = None
        for s in scens:
            s.batch = self

    def spec(self):
        wide = self.scens[0].wide()
        pools = [p for s in self.scens for p in s.pools()]
        spec = {**wide, "dryRun": False, "namespaceSelector": {"matchLabels": {BATCH_LABEL: self.id}}}
        if pools:
            spec["nodePools"] = pools
        return spec

    def apply_config(self):
        obj = {"apiVersion": "kube-headroom.dev/v1alpha1", "kind": "HeadroomConfig",
               "metadata": {"name": "cluster"}, "spec": self.spec()}
        with CONFIG_LOCK:
            k("apply", "--server-side", "--force-conflicts", "--field-manager=headroom-scenarios", "-f", "-",
              inp=json.dumps(obj))

    def metric(self, name):
        try:
            out = subprocess.run(["curl", "-sf", f"http://127.0.0.1:{self.port}/metrics"],
                                 capture_output=True, text=True).stdout
        except OSError:
            return None
        for line in out.splitlines():
            parts = line.rsplit(" ", 1)
            if len(parts) == 2 and parts[0] == name:
                return float(parts[1])
        return 0.0

    def describe(self):
        wide = self.scens[0].wide()
        why = f" (alone: {self.scens[0].alone})" if len(self.scens) == 1 and self.scens[0].alone else ""
        return (f"batch {self.idx}: " + ", ".join(f"{a} {b}" for a, b in wide.items()) + why + ": "
                + " ".join(s.name for s in self.scens))

    def run(self):
        say(f"# {self.describe()}")
        t0 = time.time()
        failed_before = counts["failed"]
        ready = []
        try:
            self.start(ready)
        except Exception as e:  # the batch could not be set up: each of its scenarios fails
            for s in self.scens:
                result(s.name, "the batch is set up", False, f"{type(e).__name__}: {e}")
        finally:
            self.stop(failed_before)
            say(f"# batch {self.idx}: {time.time() - t0:.1f} s")

    def start(self, ready):
        k("delete", "headroomconfig", "cluster", "--ignore-not-found")
        self.apply_config()

        def setup(s):
            try:
                s.setup()
                ready.append(s)
            except Exception as e:
                result(s.name, "setup (nodes, namespaces, pods Running)", False, str(e))
        threads = [threading.Thread(target=setup, args=(s,)) for s in self.scens]
        [t.start() for t in threads]
        [t.join() for t in threads]
        self.audit_mark = os.path.getsize(AUDIT)
        self.log_mark = 0
        p = subprocess.run([str(HERE / "controller.sh"), "start", self.user, str(self.port), self.work],
                           capture_output=True, text=True, env=ENV)
        if p.returncode != 0:
            for s in ready:
                result(s.name, "the controller starts", False, (p.stderr or p.stdout).strip()[-600:])
            return
        self.pid = p.stdout.strip().splitlines()[-1]
        threads = [threading.Thread(target=s.run) for s in ready]
        [t.start() for t in threads]
        [t.join() for t in threads]

    def stop(self, failed_before):
        if self.pid:
            subprocess.run([str(HERE / "controller.sh"), "stop", self.user, self.pid], env=ENV,
                           capture_output=True)
        for s in self.scens:
            s.cleanup()
        k("delete", "headroomconfig", "cluster", "--ignore-not-found", check=False)
        if counts["failed"] > failed_before and os.path.exists(self.log):
            say("--- controller log (tail)\n" + "".join(open(self.log, errors="replace").readlines()[-30:]).rstrip())
        if not os.environ.get("KEEP_WORK"):
            subprocess.run(["rm", "-rf", self.work])


def plan_batches(scens):
    """Scenarios whose cluster-wide settings agree share a batch (≤ 32 pools); some run alone."""
    groups, out = {}, []
    for s in scens:
        if s.alone:
            continue
        groups.setdefault(json.dumps(s.wide(), sort_keys=True), []).append(s)
    for members in groups.values():
        cur, pools = [], 0
        for s in members:
            n = len(s.pools())
            if cur and pools + n > 32:
                out.append(cur)
                cur, pools = [], 0
            cur.append(s)
            pools += n
        out.append(cur)
    out += [[s] for s in scens if s.alone]
    return [Batch(i + 1, b) for i, b in enumerate(out)]


def main():
    global AUDIT
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--only", nargs="+", metavar="NAME", help="run only these scenarios")
    ap.add_argument("--list", action="store_true", help="list the scenarios and their batches, run nothing")
    a = ap.parse_args()
    scens, broken = [], []
    for path in sorted(HERE.glob("*.yaml")):
        try:
            scens.append(Scenario(path))
        except Exception as e:
            broken.append((path, e))
    if a.only:
        unknown = set(a.only) - {s.name for s in scens} - {p.stem for p, _ in broken}
        if unknown:
            print(f"run.py: no scenario {', '.join(sorted(unknown))}", file=sys.stderr)
            return 2
        scens = [s for s in scens if s.name in a.only]
        broken = [(p, e) for p, e in broken if p.stem in a.only]
    batches = plan_batches(scens)
    if a.list:
        for b in batches:
            print(b.describe())
            for s in b.scens:
                print(f"  {s.name:24} {s.about.strip().splitlines()[0] if s.about.strip() else ''}")
        for p, e in broken:
            print(f"  {p.name}: broken: {e}")
        return 0
    for p, e in broken:
        result(p.stem, f"{p.name} loads", False, str(e))
    t0 = time.time()
    chk = subprocess.run([str(HERE / "controller.sh"), "check"], capture_output=True, text=True, env=ENV)
    if chk.returncode != 0:
        for line in chk.stdout.splitlines():
            if line.startswith(("FAIL", "      ")):
                say(line)
        counts["failed"] += 1
    else:
        AUDIT = audit_path()
        for b in batches:
            b.run()
    say(f"# {len(scens)} scenario(s) in {len(batches)} batch(es), {time.time() - t0:.1f} s")
    print(f"{counts['passed']} passed, {counts['failed']} failed")
    return 1 if counts["failed"] else 0


if __name__ == "__main__":
    sys.exit(main())
